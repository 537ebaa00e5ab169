// SPDX-License-Identifier: GPL-2.0-or-later
/* board.c -- a configured board at run time: console always open, power, state */
#include "board/board.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/consolebuf.h"
#include "config/config.h"
#include "config/qemu_cmdline.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/mask.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/console.h"
#include "drivers/power.h"
#include "drivers/sdmux.h"
#include "journal/joblog.h"
#include "store/store.h"

/* A piece of hardware of the board that a driver reported missing. */
struct board_part {
	char *part;		/* "power", "sdmux" */
	char *reason;		/* "USB device at '1-1' (power) is missing" */
};

struct board {
	int refcount;
	struct board_deps deps;
	struct lab_config *cfg;
	const struct device *dev;
	struct console *console;
	struct power *power;
	struct sdmux *sdmux;	/* the SD-mux of its card, or NULL */
	struct consolebuf *cbuf;
	struct joblog *log;	/* everything the board prints, job or not */
	enum device_state admin_state;	/* idle or maintenance */
	char *admin_reason;
	bool console_up;
	bool started;
	bool retired;
	bool powering_off;	/* board_power_off() in progress */
	char *console_error;
	char *power_fault;
	struct board_part missing[BOARD_MAX_PARTS];	/* hardware that vanished */
	size_t n_missing;
	int64_t job_id;
	char *holder;
	uint64_t hold_until;
	const struct board_job_hooks *hooks;
	void *hooks_ud;
	int64_t hooks_job;		/* the job whose hooks they are (the board's log) */
	bool masking;		/* a job's secrets are masked (board_set_mask()) */
	struct mask_stream mask;
	struct loop_source *mask_timer;	/* lets held-back bytes go */
};

static void notify(struct board *b)
{
	board_persist(b);
	if (b->deps.changed)
		b->deps.changed(b, b->deps.userdata);
}

static int set_string(char **dst, const char *src)
{
	char *n = src ? strdup(src) : NULL;

	if (src && !n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static void load_persisted(struct board *b)
{
	struct device_record rec = { 0 };

	if (!b->deps.store || store_device_get(b->deps.store, b->dev->name, &rec) < 0)
		return;
	if (rec.state == DEVICE_STATE_MAINTENANCE) {
		b->admin_state = DEVICE_STATE_MAINTENANCE;
		set_string(&b->admin_reason, rec.reason);
	}
	if (rec.holder && rec.hold_until) {
		set_string(&b->holder, rec.holder);
		b->hold_until = rec.hold_until;
	}
	device_record_release(&rec);
}

static void on_presence(const char *part, bool present, const char *what, void *userdata)
{
	board_set_part_missing(userdata, part, present ? NULL : what);
}

/* driver_ctx.qemu_argv: the command line of a QEMU board, from its definition. */
static int on_qemu_argv(void *userdata, const struct kv *job_vars, int serial_fd,
			const char *serial_log, char ***ret, char *err, size_t errlen)
{
	struct board *b = userdata;
	struct qemu_cmdline_in in = {
		.config = b->cfg,
		.dev = b->dev,
		.job_vars = job_vars,
		.serial_fd = serial_fd,
		.serial_log = serial_log,
	};

	return qemu_cmdline_build(&in, ret, err, errlen);
}

int board_new(const struct board_deps *deps, struct lab_config *cfg, const struct device *dev,
	      struct board **ret)
{
	struct driver_ctx ctx = {
		.loop = deps->loop, .http = deps->http, .config = cfg, .device_name = dev->name,
		.state_dir = cfg->state_dir, .presence = on_presence, .qemu_argv = on_qemu_argv,
	};
	struct diag diag = DIAG_INIT;
	struct board *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ctx.board_userdata = b;
	b->refcount = 1;
	b->deps = *deps;
	b->cfg = config_ref(cfg);
	b->dev = dev;
	b->admin_state = DEVICE_STATE_IDLE;
	r = consolebuf_new(CONSOLEBUF_DEFAULT_SIZE, &b->cbuf);
	if (r < 0)
		goto err_free;
	r = console_new(&dev->console, &ctx, &b->console, &diag);
	if (r == 0 && dev->has_power) {
		r = power_new(&dev->power, &ctx, &b->power, &diag);
		if (r == 0)
			power_set_cycle_delay(b->power, dev->power_on_delay);
	}
	if (r == 0 && dev->has_sdmux)
		r = sdmux_new(&dev->sdmux, &ctx, &b->sdmux, &diag);
	if (r < 0) {
		char *msg = diag_join(&diag);

		log_error("board '%s': %s", dev->name, msg ? msg : strerror(-r));
		free(msg);
		goto err_free;
	}
	load_persisted(b);
	diag_release(&diag);
	*ret = b;
	return 0;

err_free:
	diag_release(&diag);
	board_unref(b);
	return r;
}

/*
 * Console bytes, masked already, to the board's log (outside jobs: a job's
 * bytes are in the job's own log, doc/console.md), its scrollback and the job.
 */
static void deliver(struct board *b, const uint8_t *buf, size_t len)
{
	if (!len)
		return;
	if (b->log && !b->hooks) {
		joblog_console(b->log, loop_realtime(b->deps.loop), buf, len);
		joblog_rotate_if_larger(b->log, BOARD_LOG_MAX);
	}
	consolebuf_append(b->cbuf, buf, len);
	if (b->hooks && b->hooks->data)
		b->hooks->data(buf, len, b->hooks_ud);
}

static void deliver_masked(struct board *b, const uint8_t *buf, size_t len, bool flush)
{
	struct strbuf out = STRBUF_INIT;

	if (buf)
		mask_stream_feed(&b->mask, buf, len, &out);
	if (flush)
		mask_stream_flush(&b->mask, &out);
	deliver(b, (const uint8_t *)out.buf, out.len);
	strbuf_release(&out);
	if (b->mask_timer)
		loop_timer_set(b->mask_timer, mask_stream_pending(&b->mask) ?
			       loop_now(b->deps.loop) + BOARD_MASK_HOLD : USEC_INFINITY);
}

static void on_console_data(struct console *c, const uint8_t *buf, size_t len, void *ud)
{
	struct board *b = ud;

	if (b->masking)
		deliver_masked(b, buf, len, false);
	else
		deliver(b, buf, len);
}

static int on_mask_hold(struct loop_source *s, uint64_t now, void *ud)
{
	deliver_masked(ud, NULL, 0, true);
	return 0;
}

void board_set_mask(struct board *b, const struct mask *m)
{
	if (b->masking) {
		deliver_masked(b, NULL, 0, true);
		mask_stream_release(&b->mask);
		b->mask_timer = loop_source_free(b->mask_timer);
		b->masking = false;
	}
	if (mask_empty(m) || mask_stream_init(&b->mask, m) < 0)
		return;
	b->masking = true;
	if (loop_add_timer(b->deps.loop, &b->mask_timer, USEC_INFINITY, on_mask_hold, b) == 0)
		loop_source_set_description(b->mask_timer, "board:mask-hold");
}

static void on_console_state(struct console *c, bool up, const char *reason, void *ud)
{
	struct board *b = ud;

	b->console_up = up;
	set_string(&b->console_error, up ? NULL : reason);
	if (up)
		log_info("board '%s': console is up", b->dev->name);
	else
		log_warning("board '%s': console is down: %s", b->dev->name, reason);
	if (b->log && up)
		joblog_msg(b->log, loop_realtime(b->deps.loop), "info", "console up");
	else if (b->log)
		joblog_msg(b->log, loop_realtime(b->deps.loop), "error", "console down: %s", reason);
	if (b->hooks && b->hooks->console_state)
		b->hooks->console_state(up, reason, b->hooks_ud);
	notify(b);
}

static const struct console_ops board_console_ops = {
	.data = on_console_data,
	.state = on_console_state,
};

int board_start(struct board *b)
{
	char dir[4096];
	int r;

	if (b->started)
		return 0;
	snprintf(dir, sizeof(dir), "%s/boards/%s", b->cfg->state_dir, b->dev->name);
	r = joblog_open(dir, &b->log);
	if (r < 0)
		log_warning("board '%s': cannot open log in '%s': %s", b->dev->name, dir,
			    strerror(-r));
	r = console_start(b->console, &board_console_ops, b);
	if (r < 0) {
		log_error("board '%s': cannot start console: %s", b->dev->name, strerror(-r));
		return r;
	}
	b->started = true;
	b->console_up = console_is_up(b->console);
	notify(b);
	return 0;
}

struct board *board_ref(struct board *b)
{
	if (b)
		b->refcount++;
	return b;
}

struct board *board_unref(struct board *b)
{
	if (!b || --b->refcount > 0)
		return NULL;
	board_set_mask(b, NULL);
	console_free(b->console);
	power_free(b->power);
	sdmux_free(b->sdmux);
	consolebuf_free(b->cbuf);
	joblog_close(b->log);
	free(b->admin_reason);
	free(b->console_error);
	free(b->power_fault);
	while (b->n_missing--) {
		free(b->missing[b->n_missing].part);
		free(b->missing[b->n_missing].reason);
	}
	free(b->holder);
	config_unref(b->cfg);
	free(b);
	return NULL;
}

const char *board_name(const struct board *b)
{
	return b->dev->name;
}

const struct device *board_device(const struct board *b)
{
	return b->dev;
}

const struct lab_config *board_config(const struct board *b)
{
	return b->cfg;
}

struct console *board_console(struct board *b)
{
	return b->console;
}

struct power *board_power(struct board *b)
{
	return b->power;
}

struct sdmux *board_sdmux(struct board *b)
{
	return b->sdmux;
}

struct consolebuf *board_consolebuf(struct board *b)
{
	return b->cbuf;
}

struct joblog *board_log(struct board *b)
{
	return b->log;
}

bool board_console_up(const struct board *b)
{
	return b->console_up;
}

enum device_state board_state(const struct board *b)
{
	if (b->admin_state == DEVICE_STATE_MAINTENANCE)
		return DEVICE_STATE_MAINTENANCE;
	if (b->job_id)
		return DEVICE_STATE_RUNNING;
	if (b->holder)
		return DEVICE_STATE_RESERVED;
	if (!b->console_up || b->power_fault || b->n_missing)
		return DEVICE_STATE_BAD;
	return DEVICE_STATE_IDLE;
}

const char *board_state_reason(const struct board *b)
{
	switch (board_state(b)) {
	case DEVICE_STATE_MAINTENANCE:
		return b->admin_reason;
	case DEVICE_STATE_BAD:
		if (b->power_fault)
			return b->power_fault;
		if (b->n_missing)
			return b->missing[0].reason;
		if (!b->started)
			return "console not opened yet";
		return b->console_error ? b->console_error : "console is down";
	default:
		return NULL;
	}
}

bool board_is_available(const struct board *b)
{
	return b->started && !b->retired && !b->powering_off &&
	       board_state(b) == DEVICE_STATE_IDLE;
}

static void on_power_off(struct power *p, int err, const char *msg, void *ud)
{
	struct board *b = ud;

	b->powering_off = false;
	if (err < 0)
		board_set_power_fault(b, msg);
	else
		log_info("board '%s': powered off", b->dev->name);
	notify(b);
	board_unref(b);
}

int board_power_off(struct board *b, const char *why)
{
	int err;

	if (!b->power)
		return -ENODEV;
	if (b->powering_off || power_is_busy(b->power))
		return -EBUSY;
	log_info("board '%s': powering off: %s", b->dev->name, why);
	err = power_run(b->power, POWER_OFF, on_power_off, board_ref(b));
	if (err < 0) {
		board_unref(b);
		return err;
	}
	b->powering_off = true;
	return 0;
}

bool board_has_tags(const struct board *b, char *const *tags)
{
	STRV_FOREACH(t, tags)
		if (!strv_contains(b->dev->tags, *t))
			return false;
	return true;
}

int board_set_admin_state(struct board *b, enum device_state s, const char *reason)
{
	if (s != DEVICE_STATE_IDLE && s != DEVICE_STATE_MAINTENANCE)
		return -EINVAL;
	b->admin_state = s;
	set_string(&b->admin_reason, s == DEVICE_STATE_MAINTENANCE ? reason : NULL);
	if (s == DEVICE_STATE_IDLE)
		set_string(&b->power_fault, NULL);
	notify(b);
	return 0;
}

void board_set_job(struct board *b, int64_t id)
{
	b->job_id = id;
	notify(b);
}

int64_t board_job(const struct board *b)
{
	return b->job_id;
}

void board_set_power_fault(struct board *b, const char *reason)
{
	set_string(&b->power_fault, reason ? reason : "power control failed");
	log_warning("board '%s': marked bad: %s", b->dev->name, b->power_fault);
	notify(b);
}

static struct board_part *find_part(struct board *b, const char *part)
{
	size_t i;

	for (i = 0; i < b->n_missing; i++)
		if (!strcmp(b->missing[i].part, part))
			return &b->missing[i];
	return NULL;
}

void board_set_part_missing(struct board *b, const char *part, const char *what)
{
	struct board_part *m = find_part(b, part);
	char *reason = NULL;

	if (!what && m) {
		/* "<what> (<part>) is missing" -> "<what> (<part>) is back" */
		log_info("board '%s': %.*s is back", b->dev->name,
			 (int)(strlen(m->reason) - strlen(" is missing")), m->reason);
		free(m->part);
		free(m->reason);
		*m = b->missing[--b->n_missing];
	} else if (what && !m && b->n_missing < BOARD_MAX_PARTS) {
		if (asprintf(&reason, "%s (%s) is missing", what, part) < 0)
			return;
		m = &b->missing[b->n_missing];
		m->part = strdup(part);
		if (!m->part) {
			free(reason);
			return;
		}
		m->reason = reason;
		b->n_missing++;
		log_warning("board '%s': marked bad: %s", b->dev->name, reason);
	} else {
		return;
	}
	notify(b);
}

void board_set_reservation(struct board *b, const char *holder, uint64_t until)
{
	set_string(&b->holder, until ? holder : NULL);
	b->hold_until = holder ? until : 0;
	notify(b);
}

const char *board_holder(const struct board *b)
{
	return b->holder;
}

uint64_t board_hold_until(const struct board *b)
{
	return b->hold_until;
}

void board_retire(struct board *b)
{
	b->retired = true;
	if (!b->job_id) {
		b->console = console_free(b->console);
		b->console_up = false;
	}
}

bool board_is_retired(const struct board *b)
{
	return b->retired;
}

void board_persist(struct board *b)
{
	struct device_record rec = {
		.name = (char *)b->dev->name,
		.state = board_state(b),
		.reason = (char *)board_state_reason(b),
		.holder = b->holder,
		.hold_until = b->hold_until,
		.job_id = b->job_id,
		.changed = b->deps.loop ? loop_realtime(b->deps.loop) : 0,
	};

	if (b->deps.store && !b->retired)
		store_device_put(b->deps.store, &rec);
}

void board_set_job_hooks(struct board *b, const struct board_job_hooks *hooks, void *userdata)
{
	/* the board's log says where its console went meanwhile */
	if (b->log && b->deps.loop && !hooks != !b->hooks) {
		if (hooks)
			b->hooks_job = b->job_id;
		joblog_msg(b->log, loop_realtime(b->deps.loop), "info",
			   hooks ? "job %lld: the console goes to the job's log" :
				   "job %lld: the console is logged here again",
			   (long long)b->hooks_job);
	}
	b->hooks = hooks;
	b->hooks_ud = userdata;
}
