// SPDX-License-Identifier: GPL-2.0-or-later
/* viewer.c -- live console viewers: scrollback, bounded output queues, logged input */
#include "session/viewer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "board/board.h"
#include "board/consolebuf.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "drivers/console.h"
#include "drivers/telnet_iac.h"
#include "journal/joblog.h"
#include "run/run.h"
#include "sched/sched.h"
#include "session/reservations.h"
#include "session/viewer_proto.h"

#define VIEWER_READ_CHUNK 4096
#define VIEWER_NOTICE_MAX 512
#define VIEWER_LOG_INPUT_MAX 1024	/* bytes of one input line in the logs, escaped */

struct viewer {
	struct viewers *vs;
	struct board *board;		/* referenced */
	int fd;
	struct loop_source *io;
	struct consolebuf_sub *sub;
	enum viewer_wire wire;
	char *who;
	enum user_role role;
	viewer_close_fn close;
	void *close_userdata;
	const void *owner;
	struct strbuf out;		/* encoded output the socket did not take yet */
	size_t frame_left;		/* framed: bytes of out's first frame still to send */
	struct strbuf in;		/* framed: a frame not complete yet */
	struct telnet_iac iac;		/* telnet: the client's protocol state */
	bool after_cr;			/* telnet: NVT "CR NUL" is a CR */
	uint64_t last_refusal;		/* when keys were last refused with a notice */
	bool dead;
	struct viewer *next;
};

struct viewers {
	struct viewers_deps deps;
	struct viewer *list;
	struct loop_source *reap;	/* defer: free closed viewers */
};

static void viewer_close(struct viewer *v, const char *why);
static void notice(struct viewer *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static struct loop *loop_of(const struct viewer *v)
{
	return v->vs->deps.loop;
}

/* ---- output ---- */

/* Account for @n bytes sent from the head of out, frame by frame. */
static void consume(struct viewer *v, size_t n)
{
	while (n) {
		size_t take;

		if (v->wire == VIEWER_WIRE_FRAMED && !v->frame_left)
			v->frame_left = VIEWER_FRAME_HEADER +
					((size_t)(uint8_t)v->out.buf[1] << 8 | (uint8_t)v->out.buf[2]);
		take = v->wire == VIEWER_WIRE_FRAMED && v->frame_left < n ? v->frame_left : n;
		if (v->wire == VIEWER_WIRE_FRAMED)
			v->frame_left -= take;
		strbuf_consume(&v->out, take);
		n -= take;
	}
}

/* Send what the socket takes; watch for EPOLLOUT while something is left. */
static void flush(struct viewer *v)
{
	ssize_t n;

	while (!v->dead && v->out.len) {
		n = send(v->fd, v->out.buf, v->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			consume(v, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		viewer_close(v, "the connection broke");
		return;
	}
	if (!v->dead)
		loop_io_set_events(v->io, v->out.len ? EPOLLIN | EPOLLOUT : EPOLLIN);
}

/*
 * Too far behind: drop the viewer, keep the data flowing to the others.  The
 * queued output goes (but the frame being sent), a notice takes its place
 * and is sent if the socket still takes it.
 */
static void drop(struct viewer *v)
{
	size_t behind = v->out.len, keep = v->wire == VIEWER_WIRE_FRAMED ? v->frame_left : 0;

	log_warning("board '%s': console viewer '%s' dropped: %zu bytes behind",
		    board_name(v->board), v->who, behind);
	if (board_log(v->board))
		joblog_msg(board_log(v->board), loop_realtime(loop_of(v)), "warning",
			   "console viewer '%s' dropped: %zu bytes behind", v->who, behind);
	strbuf_remove(&v->out, keep, v->out.len - keep);
	notice(v, "you are too far behind (%zu bytes): labd dropped this connection", behind);
	flush(v);
	viewer_close(v, NULL);
}

static void queue_data(struct viewer *v, const uint8_t *data, size_t len)
{
	bool idle = !v->out.len;
	int r;

	if (v->wire == VIEWER_WIRE_FRAMED)
		r = viewer_frame_add(&v->out, VIEWER_FRAME_DATA, data, len);
	else
		r = telnet_iac_encode(data, len, &v->out);
	if (r < 0 || v->out.len > VIEWER_MAX_QUEUE) {
		drop(v);
		return;
	}
	if (idle)
		flush(v);
}

static void notice(struct viewer *v, const char *fmt, ...)
{
	char msg[VIEWER_NOTICE_MAX];
	bool idle = !v->out.len;
	va_list ap;

	if (v->dead)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (v->wire == VIEWER_WIRE_FRAMED)
		viewer_frame_add(&v->out, VIEWER_FRAME_NOTICE, msg, strlen(msg));
	else
		strbuf_addf(&v->out, "\r\n[labd] %s\r\n", msg);
	if (idle)
		flush(v);
}

static void on_console(const uint8_t *data, size_t len, void *ud)
{
	struct viewer *v = ud;

	if (!v->dead)
		queue_data(v, data, len);
}

/* ---- input ---- */

/* Whether the viewer's keys go to the board: its holder's and admins' do. */
static bool may_type(const struct viewer *v)
{
	const char *holder = board_holder(v->board);

	return v->role == USER_ROLE_ADMIN || (holder && !strcmp(holder, v->who));
}

static void refuse(struct viewer *v)
{
	uint64_t now = loop_now(loop_of(v));
	const char *holder = board_holder(v->board);

	if (v->last_refusal && now - v->last_refusal < VIEWER_NOTICE_EVERY)
		return;
	v->last_refusal = now;
	if (holder)
		notice(v, "read-only: '%s' holds '%s', your keys are ignored", holder,
		       board_name(v->board));
	else
		notice(v, "read-only: your keys are ignored (reserve '%s' to type on it)",
		       board_name(v->board));
}

/* The text of keys for the logs (joblog_msg() escapes control characters itself). */
static void log_text(const uint8_t *data, size_t len, struct strbuf *out)
{
	size_t i;

	for (i = 0; i < len && out->len < VIEWER_LOG_INPUT_MAX; i++) {
		if (data[i])
			strbuf_addch(out, data[i]);
		else
			strbuf_addstr(out, "<NUL>");
	}
	if (i < len)
		strbuf_addstr(out, "...");
}

/* "alice: ls\r" in the board's log and in the log of the job running on it. */
static void log_input(struct viewer *v, const char *text)
{
	int64_t job = board_job(v->board);
	struct run *run = job ? sched_run_of(v->vs->deps.sched, job) : NULL;

	if (board_log(v->board))
		joblog_msg(board_log(v->board), loop_realtime(loop_of(v)), "input", "%s: %s",
			   v->who, text);
	if (run)
		run_log(run, "input", "%s: %s", v->who, text);
}

static void type_keys(struct viewer *v, const uint8_t *data, size_t len)
{
	struct strbuf text = STRBUF_INIT;
	int r;

	if (!len)
		return;
	if (!may_type(v)) {
		refuse(v);
		return;
	}
	r = console_write(board_console(v->board), data, len, 0);
	if (r == -ENOTCONN) {
		notice(v, "the console of '%s' is down: keys not sent", board_name(v->board));
		return;
	}
	if (r < 0) {
		notice(v, "keys not sent: %s", strerror(-r));
		return;
	}
	log_text(data, len, &text);
	log_input(v, text.buf);
	strbuf_release(&text);
}

static void send_break(struct viewer *v)
{
	int r;

	if (!may_type(v)) {
		refuse(v);
		return;
	}
	r = console_send_break(board_console(v->board));
	if (r < 0) {
		notice(v, "cannot send a break: %s", strerror(-r));
		return;
	}
	log_input(v, "<break>");
	notice(v, "break sent");
}

static void on_power_cycled(int err, const char *msg, void *ud)
{
	struct viewer *v = ud;

	if (err < 0)
		notice(v, "power cycle failed: %s", msg);
	else
		notice(v, "power cycle done");
}

static void power_cycle(struct viewer *v)
{
	char err[RESERVATION_ERR_MAX];

	if (!may_type(v)) {
		notice(v, "only the holder of '%s' may power-cycle it", board_name(v->board));
		return;
	}
	if (v->vs->deps.power_cycle(v->vs->deps.userdata, board_name(v->board), v->who,
				    on_power_cycled, v, err) < 0)
		notice(v, "cannot power-cycle: %s", err);
}

/* Frames from labctl; returns -EPROTO on a frame too large. */
static int read_frames(struct viewer *v, const uint8_t *data, size_t len)
{
	const uint8_t *payload;
	size_t n, plen;
	char type;

	if (strbuf_add(&v->in, data, len) < 0)
		return -ENOMEM;
	while (!v->dead && (n = viewer_frame_next((const uint8_t *)v->in.buf, v->in.len, &type,
						   &payload, &plen))) {
		if (plen > VIEWER_FRAME_MAX)
			return -EPROTO;
		if (type == VIEWER_FRAME_DATA)
			type_keys(v, payload, plen);
		else if (type == VIEWER_FRAME_BREAK)
			send_break(v);
		else if (type == VIEWER_FRAME_POWER_CYCLE)
			power_cycle(v);
		strbuf_consume(&v->in, n);
	}
	return v->in.len > VIEWER_FRAME_HEADER + VIEWER_FRAME_MAX ? -EPROTO : 0;
}

/* Telnet: commands out, "CR NUL" of a client not in binary mode to CR. */
static void read_telnet(struct viewer *v, uint8_t *data, size_t len)
{
	size_t i, n = telnet_iac_decode(&v->iac, data, len), out = 0;

	for (i = 0; i < n; i++) {
		if (data[i] == '\0' && v->after_cr && !v->iac.they[TN_OPT_BINARY]) {
			v->after_cr = false;
			continue;
		}
		v->after_cr = data[i] == '\r';
		data[out++] = data[i];
	}
	type_keys(v, data, out);
	flush(v);	/* negotiation replies */
}

static void take_input(struct viewer *v, uint8_t *data, size_t len)
{
	if (v->wire == VIEWER_WIRE_TELNET)
		read_telnet(v, data, len);
	else if (read_frames(v, data, len) < 0)
		viewer_close(v, "protocol error");
}

static int on_io(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct viewer *v = ud;
	uint8_t buf[VIEWER_READ_CHUNK];
	ssize_t n;

	if (revents & EPOLLOUT)
		flush(v);
	if (v->dead || !(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return 0;
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		viewer_close(v, n ? "the connection broke" : "detached");
		return 0;
	}
	take_input(v, buf, (size_t)n);
	return 0;
}

/* ---- telnet clients ---- */

static void telnet_send(const uint8_t *buf, size_t len, void *ud)
{
	struct viewer *v = ud;

	strbuf_add(&v->out, buf, len);
}

static bool telnet_we_may(uint8_t opt, void *ud)
{
	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA || opt == TN_OPT_ECHO;
}

static bool telnet_they_may(uint8_t opt, void *ud)
{
	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA;
}

static void telnet_command(uint8_t cmd, void *ud)
{
	if (cmd == TN_BREAK)
		send_break(ud);
}

static const struct telnet_iac_ops viewer_telnet_ops = {
	.send = telnet_send,
	.we_may = telnet_we_may,
	.they_may = telnet_they_may,
	.command = telnet_command,
};

/* Like ser2net: we echo (the board does) and go character at a time, 8-bit clean. */
static void telnet_greet(struct viewer *v)
{
	telnet_iac_init(&v->iac, &viewer_telnet_ops, v);
	telnet_iac_offer(&v->iac, TN_WILL, TN_OPT_ECHO);
	telnet_iac_offer(&v->iac, TN_WILL, TN_OPT_SGA);
	telnet_iac_offer(&v->iac, TN_DO, TN_OPT_SGA);
	telnet_iac_offer(&v->iac, TN_WILL, TN_OPT_BINARY);
	telnet_iac_offer(&v->iac, TN_DO, TN_OPT_BINARY);
	flush(v);	/* output queued behind the offers is sent when the socket takes it */
}

/* ---- life cycle ---- */

static void viewer_close(struct viewer *v, const char *why)
{
	if (v->dead)
		return;
	v->dead = true;
	if (why)
		log_info("board '%s': console viewer '%s' left: %s", board_name(v->board), v->who,
			 why);
	v->sub = consolebuf_unsubscribe(v->sub);
	v->io = loop_source_free(v->io);
	v->vs->deps.power_forget(v->vs->deps.userdata, v);
	if (v->close)
		v->close(v->fd, v->close_userdata);
	else
		close(v->fd);
	v->fd = -1;
	loop_defer_again(v->vs->reap);
}

static void viewer_free(struct viewer *v)
{
	strbuf_release(&v->out);
	strbuf_release(&v->in);
	board_unref(v->board);
	free(v->who);
	free(v);
}

static void reap(struct viewers *vs)
{
	struct viewer **pp = &vs->list, *v;

	while ((v = *pp)) {
		if (v->dead) {
			*pp = v->next;
			viewer_free(v);
		} else {
			pp = &v->next;
		}
	}
}

static int on_reap(struct loop_source *s, void *ud)
{
	reap(ud);
	return 0;
}

int viewers_new(const struct viewers_deps *deps, struct viewers **ret)
{
	struct viewers *vs = calloc(1, sizeof(*vs));
	int err;

	if (!vs)
		return -ENOMEM;
	vs->deps = *deps;
	err = loop_add_defer(deps->loop, &vs->reap, on_reap, vs);
	if (err < 0) {
		free(vs);
		return err;
	}
	loop_source_set_description(vs->reap, "viewers:reap");
	*ret = vs;
	return 0;
}

struct viewers *viewers_free(struct viewers *vs)
{
	if (!vs)
		return NULL;
	viewers_close(vs, NULL, NULL);
	reap(vs);
	loop_source_free(vs->reap);
	free(vs);
	return NULL;
}

static void greet(struct viewer *v, size_t replay)
{
	struct strbuf tail = STRBUF_INIT;
	const char *holder = board_holder(v->board);

	if (v->wire == VIEWER_WIRE_TELNET)
		telnet_greet(v);
	if (may_type(v))
		notice(v, "attached to '%s' as '%s': you may type", board_name(v->board), v->who);
	else if (holder)
		notice(v, "attached to '%s' as '%s', read-only: '%s' holds it",
		       board_name(v->board), v->who, holder);
	else
		notice(v, "attached to '%s' as '%s', read-only", board_name(v->board), v->who);
	if (replay > VIEWER_MAX_REPLAY)
		replay = VIEWER_MAX_REPLAY;
	if (replay && consolebuf_tail(board_consolebuf(v->board), replay, &tail) == 0 && tail.len)
		queue_data(v, (const uint8_t *)tail.buf, tail.len);
	strbuf_release(&tail);
}

static int viewer_start(struct viewer *v, const struct viewer_params *p)
{
	int sndbuf = VIEWER_SNDBUF, flags = fcntl(p->fd, F_GETFL);
	int err;

	if (flags < 0 || fcntl(p->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	setsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	err = loop_add_io(loop_of(v), &v->io, p->fd, EPOLLIN, on_io, v);
	if (err < 0)
		return err;
	loop_source_set_description(v->io, "viewer");
	greet(v, p->replay);
	if (!v->dead)
		err = consolebuf_subscribe(board_consolebuf(v->board), on_console, v, &v->sub);
	if (!err && !v->dead && p->extra_in_len) {
		uint8_t *copy = malloc(p->extra_in_len);

		if (!copy)
			return -ENOMEM;
		memcpy(copy, p->extra_in, p->extra_in_len);
		take_input(v, copy, p->extra_in_len);
		free(copy);
	}
	return err;
}

int viewer_attach(struct viewers *vs, const struct viewer_params *p)
{
	struct viewer *v = calloc(1, sizeof(*v));
	int err;

	if (!v || !(v->who = strdup(p->who))) {
		free(v);
		if (p->close)
			p->close(p->fd, p->close_userdata);
		else
			close(p->fd);
		return -ENOMEM;
	}
	v->vs = vs;
	v->board = board_ref(p->board);
	v->fd = p->fd;
	v->wire = p->wire;
	v->role = p->role;
	v->close = p->close;
	v->close_userdata = p->close_userdata;
	v->owner = p->owner;
	strbuf_init(&v->out);
	strbuf_init(&v->in);
	v->next = vs->list;
	vs->list = v;
	log_info("board '%s': console viewer '%s' attached%s", board_name(p->board), p->who,
		 p->wire == VIEWER_WIRE_TELNET ? " (telnet)" : "");
	err = viewer_start(v, p);
	if (err < 0)
		viewer_close(v, "cannot attach");
	return err;
}

void viewers_notice(struct viewers *vs, const char *board, const char *fmt, ...)
{
	char msg[VIEWER_NOTICE_MAX];
	struct viewer *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (v = vs->list; v; v = v->next)
		if (!v->dead && !strcmp(board_name(v->board), board))
			notice(v, "%s", msg);
}

void viewers_close(struct viewers *vs, const void *owner, const char *why)
{
	struct viewer *v;

	for (v = vs->list; v; v = v->next) {
		if (v->dead || (owner && v->owner != owner))
			continue;
		if (why)
			notice(v, "%s", why);
		viewer_close(v, why ? why : "closed");
	}
}

size_t viewers_count(const struct viewers *vs, const char *board)
{
	const struct viewer *v;
	size_t n = 0;

	for (v = vs->list; v; v = v->next)
		if (!v->dead && !strcmp(board_name(v->board), board))
			n++;
	return n;
}

size_t viewers_count_owned(const struct viewers *vs, const void *owner)
{
	const struct viewer *v;
	size_t n = 0;

	for (v = vs->list; v; v = v->next)
		if (!v->dead && v->owner == owner)
			n++;
	return n;
}
