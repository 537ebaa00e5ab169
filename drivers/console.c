// SPDX-License-Identifier: GPL-2.0-or-later
/* console.c -- the console core: driver table, open/reopen, reading, paced write queue */
#include "drivers/console.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"

#define CONSOLE_READ_SIZE 4096			/* bytes read per wakeup */
#define CONSOLE_ERROR_MAX 256			/* one-line reasons */
#define CONSOLE_CONNECT_TIMEOUT (10 * USEC_PER_SEC)	/* pending connect() */
#define CONSOLE_LOOKUP_POLL (20 * USEC_PER_MSEC)	/* ->open() said -EAGAIN */

extern const struct console_driver console_pty_driver;
extern const struct console_driver console_tty_driver;
extern const struct console_driver console_tcp_driver;
extern const struct console_driver console_unix_driver;
extern const struct console_driver console_telnet_driver;
extern const struct console_driver console_qemu_driver;

static const struct console_driver *const console_drivers[] = {
	&console_pty_driver,
	&console_tty_driver,
	&console_tcp_driver,
	&console_unix_driver,
	&console_telnet_driver,
	&console_qemu_driver,
};

#define CONSOLE_NR_DRIVERS (sizeof(console_drivers) / sizeof(console_drivers[0]))

enum console_state {
	CONSOLE_IDLE,		/* not started, or freed */
	CONSOLE_OPENING,	/* inside ->open(), or connect() pending */
	CONSOLE_UP,
	CONSOLE_DOWN,		/* closed; the retry timer reopens it */
};

/* A run of queued bytes sharing one per-character delay. */
struct console_chunk {
	size_t len;
	uint64_t delay;
};

struct console {
	const struct console_driver *drv;
	void *priv;
	struct driver_ctx ctx;
	char *name;			/* copy of ctx.device_name */
	const struct console_ops *ops;
	void *userdata;
	enum console_state state;
	bool down_reported;		/* ops->state(false) sent since the last up */
	int fd;
	struct loop_source *io;
	struct loop_source *retry;	/* reopen, name lookup poll, connect timeout */
	struct loop_source *pace;	/* per-character delay */
	struct strbuf queue;		/* bytes for the board, from queue_off on */
	size_t queue_off;
	struct console_chunk *chunks;	/* describes the queue, from chunk_head on */
	size_t chunk_head, nr_chunks, chunk_alloc;
	char error[CONSOLE_ERROR_MAX];
	unsigned busy;			/* inside a callback: console_free() defers */
	bool freed;
};

const struct console_driver *console_find_driver(const char *name)
{
	size_t i;

	for (i = 0; i < CONSOLE_NR_DRIVERS; i++)
		if (!strcmp(console_drivers[i]->name, name))
			return console_drivers[i];
	return NULL;
}

const char *const *console_driver_names(void)
{
	static const char *names[CONSOLE_NR_DRIVERS + 1];
	size_t i;

	for (i = 0; i < CONSOLE_NR_DRIVERS; i++)
		names[i] = console_drivers[i]->name;
	return names;
}

static int console_unknown_driver(const struct driver_config *cfg, struct diag *diag)
{
	struct strbuf known = STRBUF_INIT;
	size_t i;
	int r;

	for (i = 0; i < CONSOLE_NR_DRIVERS; i++)
		strbuf_addf(&known, "%s%s", i ? ", " : "", console_drivers[i]->name);
	r = diag_add(diag, cfg->file, cfg->line, "unknown console driver '%s' (known: %s)",
		     cfg->driver ? cfg->driver : "", known.buf);
	strbuf_release(&known);
	return r;
}

int console_new(const struct driver_config *cfg, const struct driver_ctx *ctx,
		struct console **ret, struct diag *diag)
{
	const struct console_driver *drv = cfg->driver ? console_find_driver(cfg->driver) : NULL;
	struct console *c;
	int r;

	if (!drv)
		return console_unknown_driver(cfg, diag);
	if (!cfg->settings)
		return diag_add(diag, cfg->file, cfg->line, "console '%s' has no settings",
				cfg->driver);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->drv = drv;
	c->fd = -1;
	c->ctx = *ctx;
	strbuf_init(&c->queue);
	c->name = strdup(ctx->device_name ? ctx->device_name : "console");
	c->priv = calloc(1, drv->priv_size ? drv->priv_size : 1);
	if (!c->name || !c->priv) {
		r = -ENOMEM;
		goto free_console;
	}
	c->ctx.device_name = c->name;
	r = drv->parse(c, cfg->settings, diag);
	if (r < 0)
		goto free_console;
	*ret = c;
	return 0;

free_console:
	console_free(c);
	return r;
}

void *console_priv(struct console *c)
{
	return c->priv;
}

const struct driver_ctx *console_ctx(const struct console *c)
{
	return &c->ctx;
}

bool console_is_up(const struct console *c)
{
	return c->state == CONSOLE_UP;
}

const char *console_last_error(const struct console *c)
{
	return c->error;
}

void console_set_error(struct console *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
}

size_t console_queued(const struct console *c)
{
	return c->queue.len - c->queue_off;
}

/* ---- the write queue ---- */

static void console_queue_reset(struct console *c)
{
	strbuf_reset(&c->queue);
	c->queue_off = 0;
	c->chunk_head = c->nr_chunks = 0;
	if (c->pace)
		loop_timer_set(c->pace, USEC_INFINITY);
}

static int console_chunk_add(struct console *c, size_t len, uint64_t delay)
{
	struct console_chunk *last = c->nr_chunks > c->chunk_head ? &c->chunks[c->nr_chunks - 1] :
				     NULL;

	if (last && last->delay == delay) {
		last->len += len;
		return 0;
	}
	if (c->nr_chunks == c->chunk_alloc) {
		size_t alloc = c->chunk_alloc ? c->chunk_alloc * 2 : 8;
		struct console_chunk *n = realloc(c->chunks, alloc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->chunks = n;
		c->chunk_alloc = alloc;
	}
	c->chunks[c->nr_chunks++] = (struct console_chunk){ .len = len, .delay = delay };
	return 0;
}

static int console_enqueue(struct console *c, const void *data, size_t len, uint64_t delay)
{
	int r;

	if (!len)
		return 0;
	if (len > CONSOLE_MAX_QUEUE - console_queued(c))
		return -ENOBUFS;
	/* Compact before growing: the consumed head is dead weight. */
	if (c->queue_off && c->queue_off >= c->queue.len / 2) {
		strbuf_consume(&c->queue, c->queue_off);
		c->queue_off = 0;
	}
	r = strbuf_add(&c->queue, data, len);
	if (r < 0)
		return r;
	r = console_chunk_add(c, len, delay);
	if (r < 0) {
		c->queue.len -= len;
		c->queue.buf[c->queue.len] = '\0';
	}
	return r;
}

/* Drop @n written bytes from the head of the queue. */
static void console_dequeue(struct console *c, size_t n)
{
	struct console_chunk *ch = &c->chunks[c->chunk_head];

	c->queue_off += n;
	ch->len -= n;
	if (!ch->len)
		c->chunk_head++;
	if (c->chunk_head == c->nr_chunks)
		console_queue_reset(c);
}

/* Watch for input always, and for output while unpaced bytes wait. */
static void console_update_events(struct console *c)
{
	uint32_t ev = EPOLLIN;

	if (c->state != CONSOLE_UP || !c->io)
		return;
	if (console_queued(c) && !loop_timer_is_armed(c->pace))
		ev |= EPOLLOUT;
	loop_io_set_events(c->io, ev);
}

/* ---- up and down ---- */

static void console_hold(struct console *c)
{
	c->busy++;
}

static void console_destroy(struct console *c);

static void console_unhold(struct console *c)
{
	if (!--c->busy && c->freed)
		console_destroy(c);
}

static void console_close_fd(struct console *c)
{
	c->io = loop_source_free(c->io);
	if (c->fd >= 0) {
		if (c->drv->close)
			c->drv->close(c, c->fd);
		else
			close(c->fd);
	}
	c->fd = -1;
}

/* The console is gone (or never came): close, drop the queue, report once, retry later. */
static void console_down(struct console *c)
{
	console_close_fd(c);
	console_queue_reset(c);
	c->state = CONSOLE_DOWN;
	loop_timer_set_rel(c->retry, CONSOLE_REOPEN_INTERVAL);
	if (!c->error[0])
		console_set_error(c, "console lost");
	if (c->down_reported) {
		log_debug("console '%s': still down: %s", c->name, c->error);
		return;
	}
	c->down_reported = true;
	if (c->ops && c->ops->state)
		c->ops->state(c, false, c->error, c->userdata);
}

static void console_up(struct console *c)
{
	c->state = CONSOLE_UP;
	c->error[0] = '\0';
	c->down_reported = false;
	loop_timer_set(c->retry, USEC_INFINITY);
	console_update_events(c);
	if (c->ops && c->ops->state)
		c->ops->state(c, true, "", c->userdata);
}

void console_lost(struct console *c, const char *reason)
{
	if (c->state != CONSOLE_UP && c->state != CONSOLE_OPENING)
		return;
	console_set_error(c, "%s", reason);
	console_down(c);
}

/* ---- reading and writing ---- */

/* Write what the fd takes; one byte per pace tick for delayed chunks. */
static void console_flush(struct console *c)
{
	while (console_queued(c) && !loop_timer_is_armed(c->pace)) {
		struct console_chunk *ch = &c->chunks[c->chunk_head];
		uint64_t delay = ch->delay;
		ssize_t n;

		n = write(c->fd, c->queue.buf + c->queue_off, delay ? 1 : ch->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0) {
			console_set_error(c, "cannot write to console: %s", strerror(errno));
			console_down(c);
			return;
		}
		console_dequeue(c, (size_t)n);
		if (delay)
			loop_timer_set_rel(c->pace, delay);
	}
	console_update_events(c);
}

/* One read per wakeup, so a chatty board cannot starve the loop. */
static void console_read(struct console *c, uint32_t revents)
{
	uint8_t buf[CONSOLE_READ_SIZE];
	ssize_t n;
	size_t len;

	n = read(c->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		if (!(revents & (EPOLLHUP | EPOLLERR)))
			return;
		console_set_error(c, "console hung up");
		console_down(c);
		return;
	}
	if (n <= 0) {
		if (n == 0)
			console_set_error(c, "console closed (end of file)");
		else
			console_set_error(c, "cannot read console: %s", strerror(errno));
		console_down(c);
		return;
	}
	len = c->drv->decode ? c->drv->decode(c, buf, (size_t)n) : (size_t)n;
	if (len && c->state == CONSOLE_UP)
		c->ops->data(c, buf, len, c->userdata);
}

static int console_default_connected(int fd)
{
	int err = 0;
	socklen_t sl = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0)
		return -errno;
	return -err;
}

static void console_check_connect(struct console *c)
{
	int r;

	if (c->drv->connected)
		r = c->drv->connected(c, c->fd);
	else
		r = console_default_connected(c->fd);
	if (r == -EINPROGRESS || r == -EALREADY)
		return;
	if (r < 0) {
		if (!c->error[0])
			console_set_error(c, "cannot connect console: %s", strerror(-r));
		console_down(c);
		return;
	}
	console_up(c);
}

static int console_io_cb(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	struct console *c = userdata;

	console_hold(c);
	if (c->state == CONSOLE_OPENING) {
		console_check_connect(c);
	} else if (c->state == CONSOLE_UP) {
		if (revents & EPOLLOUT)
			console_flush(c);
		if (c->state == CONSOLE_UP && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			console_read(c, revents);
	}
	console_unhold(c);
	return 0;
}

static int console_pace_cb(struct loop_source *s, uint64_t now, void *userdata)
{
	struct console *c = userdata;

	console_hold(c);
	if (c->state == CONSOLE_UP)
		console_flush(c);
	console_unhold(c);
	return 0;
}

/* Open the console; reports up or down (once) through ops->state. */
static void console_open(struct console *c)
{
	int fd = -1, r, q;

	console_queue_reset(c);
	c->error[0] = '\0';
	c->state = CONSOLE_OPENING;
	r = c->drv->open(c, &fd);
	if (r == -EAGAIN) {
		loop_timer_set_rel(c->retry, CONSOLE_LOOKUP_POLL);
		return;
	}
	if (r < 0 && r != -EINPROGRESS) {
		if (!c->error[0])
			console_set_error(c, "cannot open console: %s", strerror(-r));
		console_down(c);
		return;
	}
	c->fd = fd;
	q = loop_add_io(c->ctx.loop, &c->io, fd, r ? EPOLLOUT : EPOLLIN, console_io_cb, c);
	if (q < 0) {
		console_set_error(c, "cannot watch console: %s", strerror(-q));
		console_down(c);
		return;
	}
	loop_source_set_description(c->io, c->name);
	loop_source_set_bulk(c->io, true);
	if (r == -EINPROGRESS)
		loop_timer_set_rel(c->retry, CONSOLE_CONNECT_TIMEOUT);
	else
		console_up(c);
}

static int console_retry_cb(struct loop_source *s, uint64_t now, void *userdata)
{
	struct console *c = userdata;

	console_hold(c);
	if (c->state == CONSOLE_OPENING && c->fd >= 0) {
		console_set_error(c, "cannot connect console: connection timed out");
		console_down(c);
	} else if (c->state == CONSOLE_DOWN || c->state == CONSOLE_OPENING) {
		console_open(c);
	}
	console_unhold(c);
	return 0;
}

int console_start(struct console *c, const struct console_ops *ops, void *userdata)
{
	struct loop *l = c->ctx.loop;
	int r;

	if (c->state != CONSOLE_IDLE || c->freed)
		return -EALREADY;
	r = loop_add_timer(l, &c->retry, USEC_INFINITY, console_retry_cb, c);
	if (r < 0)
		return r;
	r = loop_add_timer(l, &c->pace, USEC_INFINITY, console_pace_cb, c);
	if (r < 0) {
		c->retry = loop_source_free(c->retry);
		return r;
	}
	loop_source_set_description(c->retry, c->name);
	loop_source_set_description(c->pace, c->name);
	c->ops = ops;
	c->userdata = userdata;
	console_hold(c);
	console_open(c);
	console_unhold(c);
	return 0;
}

int console_write(struct console *c, const void *data, size_t len, uint64_t char_delay)
{
	struct strbuf enc = STRBUF_INIT;
	int r;

	if (c->state != CONSOLE_UP)
		return -ENOTCONN;
	if (!c->drv->encode) {
		r = console_enqueue(c, data, len, char_delay);
	} else {
		r = c->drv->encode(c, data, len, &enc);
		if (r >= 0)
			r = console_enqueue(c, enc.buf, enc.len, char_delay);
		strbuf_release(&enc);
	}
	if (r < 0)
		return r;
	console_update_events(c);
	return 0;
}

int console_write_raw(struct console *c, const void *data, size_t len)
{
	int r;

	if (c->state != CONSOLE_UP && c->state != CONSOLE_OPENING)
		return -ENOTCONN;
	r = console_enqueue(c, data, len, 0);
	if (r < 0)
		return r;
	console_update_events(c);
	return 0;
}

int console_send_break(struct console *c)
{
	if (!c->drv->send_break)
		return -EOPNOTSUPP;
	if (c->state != CONSOLE_UP)
		return -ENOTCONN;
	return c->drv->send_break(c, c->fd);
}

/* Release what console_free() left for the end of the current callback. */
static void console_destroy(struct console *c)
{
	if (c->priv && c->drv->release)
		c->drv->release(c);
	free(c->priv);
	free(c->chunks);
	free(c->name);
	free(c);
}

struct console *console_free(struct console *c)
{
	if (!c || c->freed)
		return NULL;
	console_close_fd(c);
	c->retry = loop_source_free(c->retry);
	c->pace = loop_source_free(c->pace);
	strbuf_release(&c->queue);
	c->queue_off = 0;
	c->chunk_head = c->nr_chunks = 0;
	c->state = CONSOLE_IDLE;
	c->ops = NULL;
	c->freed = true;
	if (!c->busy)
		console_destroy(c);
	return NULL;
}
