// SPDX-License-Identifier: GPL-2.0-or-later
/* run_io.c -- a running job's console stream, expect, lines, kernel messages, power */
#include "run/run_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "drivers/console.h"
#include "job/job.h"
#include "journal/joblog.h"
#include "results/kmsg.h"
#include "results/ktap.h"
#include "run/match.h"

#define RUN_MAX_LINE 4096
#define RUN_PANIC_GRACE (5 * USEC_PER_SEC)	/* keep reading a panic report this long */

static void try_match(struct run *r);

/* ---- expect ---- */

void run_expect_clear(struct run *r)
{
	matcher_clear(r->matcher);
}

int run_expect_add(struct run *r, const char *regex, int id)
{
	char err[256];
	int e = matcher_add(r->matcher, regex, id, err, sizeof(err));

	if (e == -EINVAL)
		run_log(r, "error", "bad pattern '%s': %s", regex, err);
	return e;
}

int run_expect_add_literal(struct run *r, const char *text, int id)
{
	return matcher_add_literal(r->matcher, text, id);
}

int run_expect_add_strv(struct run *r, char *const *v, int id)
{
	STRV_FOREACH(p, v) {
		int e = run_expect_add(r, *p, id);

		if (e < 0)
			return e;
	}
	return 0;
}

void run_expect(struct run *r, const char *stage, uint64_t timeout)
{
	if (!timeout)
		timeout = job_connection_timeout(r->job, stage);
	run_limit_for_wait(r, stage, timeout);
	snprintf(r->wait_stage, sizeof(r->wait_stage), "%s", stage);
	r->waiting = true;
	loop_timer_set_rel(r->wait_timer, timeout);
	loop_defer_again(r->match_defer);
}

void run_expect_stop(struct run *r)
{
	r->waiting = false;
	loop_timer_set(r->wait_timer, USEC_INFINITY);
}

bool run_match_group(struct run *r, const char *name, const uint8_t **ret, size_t *len)
{
	return matcher_group(r->matcher, name, ret, len);
}

void run_flush_console(struct run *r)
{
	matcher_flush(r->matcher);
}

static void try_match(struct run *r)
{
	struct run_event ev = { .kind = RUN_EVENT_MATCH };
	struct match m;

	if (!r->waiting || !matcher_next(r->matcher, &m))
		return;
	run_expect_stop(r);
	ev.id = m.id;
	ev.match = &m;
	run_deliver(r, &ev);
}

static int on_match_defer(struct loop_source *s, void *ud)
{
	try_match(ud);
	return 0;
}

static int on_wait_timeout(struct loop_source *s, uint64_t now, void *ud)
{
	struct run *r = ud;
	struct run_event ev = { .kind = RUN_EVENT_TIMEOUT };

	if (!r->waiting)
		return 0;
	r->waiting = false;
	run_deliver(r, &ev);
	return 0;
}

int run_send(struct run *r, const char *text, uint64_t char_delay)
{
	int err = console_write(board_console(r->board), text, strlen(text), char_delay);

	if (err < 0) {
		run_log(r, "error", "cannot send '%s' to the console: %s", text, strerror(-err));
		return err;
	}
	run_log(r, "input", "%s", text);
	return 0;
}

/* ---- console lines and kernel messages ---- */

void *run_lines_subscribe(struct run *r, run_line_fn fn, void *userdata)
{
	struct run_line_sub *s = calloc(1, sizeof(*s)), **pp;

	if (!s)
		return NULL;
	s->fn = fn;
	s->userdata = userdata;
	for (pp = &r->line_subs; *pp; pp = &(*pp)->next)
		;
	*pp = s;
	return s;
}

static void reap_line_subs(struct run *r)
{
	struct run_line_sub **pp = &r->line_subs;

	while (*pp) {
		struct run_line_sub *s = *pp;

		if (s->dead) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

void run_lines_unsubscribe(struct run *r, void *handle)
{
	struct run_line_sub *s = handle;

	if (!s)
		return;
	s->dead = true;
	if (!r->line_dispatching)
		reap_line_subs(r);
}

/* Remove '\r' and the cursor-position query busybox ash sends after prompts. */
static size_t clean_line(char *buf, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		if (buf[i] == '\r')
			continue;
		if (buf[i] == '\033' && i + 3 < len + 1 && !strncmp(buf + i, "\033[6n", 4)) {
			i += 3;
			continue;
		}
		buf[o++] = buf[i];
	}
	buf[o] = '\0';
	return o;
}

static void fail_on_panic(struct run *r)
{
	char msg[512];

	if (!r->panic_line)
		return;
	snprintf(msg, sizeof(msg), "kernel panic: %s", r->panic_line);
	loop_timer_set(r->panic_timer, USEC_INFINITY);
	if (r->action_active)
		run_fail(r, ERROR_JOB, "%s", msg);
	else
		run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_JOB, "%s", msg);
}

static void on_kmsg_report(const struct kmsg_report *rep, void *ud)
{
	struct run *r = ud;
	json_t *extra = json_pack("{s:s, s:s, s:b}", "first_line", rep->first_line, "excerpt",
				  rep->excerpt, "complete", rep->complete);
	char *text = extra ? json_dumps(extra, JSON_COMPACT) : NULL;
	struct run_result res = {
		.suite = "kernel-messages",
		.name = rep->name,
		.result = "fail",
		.log_start = rep->line_start,
		.log_end = rep->line_end,
		.extra = text,
	};

	run_log(r, "warning", "kernel %s at log lines %lld-%lld: %s", kmsg_class_name(rep->cls),
		(long long)rep->line_start, (long long)rep->line_end, rep->first_line);
	run_result(r, &res);
	free(text);
	json_decref(extra);
	if (rep->cls == KMSG_PANIC)
		fail_on_panic(r);
}

/* A KTAP/TAP result (KUnit, kselftest) seen anywhere in the job's console output. */
static void on_ktap_result(const struct ktap_result *res, void *ud)
{
	struct run *r = ud;
	json_t *extra = json_object();
	char *text;
	struct run_result rr = {
		.suite = "ktap",
		.name = res->name,
		.result = res->result,
		.log_start = res->line_start,
		.log_end = res->line_end,
	};

	if (res->directive)
		json_object_set_new(extra, "directive", json_string(res->directive));
	if (res->reason)
		json_object_set_new(extra, "reason", json_string(res->reason));
	if (res->error)
		json_object_set_new(extra, "error", json_string(res->error));
	text = json_object_size(extra) ? json_dumps(extra, JSON_COMPACT) : NULL;
	rr.extra = text;
	run_result(r, &rr);
	free(text);
	json_decref(extra);
}

static void note_panic(struct run *r, const char *line, size_t len)
{
	const char *p = memmem(line, len, "Kernel panic", 12);

	if (r->panic_line || !p)
		return;
	r->panic_line = strndup(p, len - (size_t)(p - line));
	run_log(r, "error", "kernel panic detected; reading the rest of its report");
	loop_timer_set_rel(r->panic_timer, RUN_PANIC_GRACE);
}

static void dispatch_line(struct run *r, char *buf, size_t len)
{
	struct run_line_sub *s;

	len = clean_line(buf, len);
	run_note_line(r, buf, len);
	if (r->watch_kernel) {
		if (kmsg_classify(buf, len) == KMSG_PANIC)
			note_panic(r, buf, len);
		kmsg_feed(r->kmsg, buf, len, r->line_no);
	}
	ktap_feed(r->ktap, buf, len, r->line_no);
	r->line_dispatching++;
	for (s = r->line_subs; s; s = s->next)
		if (!s->dead)
			s->fn(r, buf, len, r->line_no, s->userdata);
	if (--r->line_dispatching == 0)
		reap_line_subs(r);
}

/* Lines of @buf to their readers (kernel messages, results), unless @counted only. */
static void split_lines(struct run *r, const uint8_t *buf, size_t len, bool counted)
{
	size_t i;

	if (counted) {
		for (i = 0; i < len; i++)
			r->line_no += buf[i] == '\n';
		strbuf_reset(&r->line);
		return;
	}
	for (i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			dispatch_line(r, r->line.buf, r->line.len);
			strbuf_reset(&r->line);
			r->line_no++;
			continue;
		}
		strbuf_addch(&r->line, buf[i]);
		if (r->line.len >= RUN_MAX_LINE) {
			/* an endless line: hand it on in pieces, same line number */
			dispatch_line(r, r->line.buf, r->line.len);
			strbuf_reset(&r->line);
		}
	}
}

static void on_board_data(const uint8_t *buf, size_t len, void *ud)
{
	struct run *r = ud;

	joblog_console(r->log, loop_realtime(r->deps.loop), buf, len);
	if (!r->board_off) {
		matcher_feed(r->matcher, buf, len);
		try_match(r);
	}
	if (r->phase != RUN_PHASE_FINISHED)
		split_lines(r, buf, len, r->board_off);
}

static void on_board_console_state(bool up, const char *reason, void *ud)
{
	struct run *r = ud;

	if (up) {
		run_log(r, "info", "console is back");
		return;
	}
	run_log(r, "error", "console lost: %s", reason);
	r->outcome.board_fault = true;
	run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE, "console vanished: %s", reason);
}

static const struct board_job_hooks run_board_hooks = {
	.data = on_board_data,
	.console_state = on_board_console_state,
};

void run_watch_kernel(struct run *r, bool on)
{
	r->watch_kernel = on;
}

int64_t run_console_line(const struct run *r)
{
	return joblog_line(r->log);
}

/* ---- power, wakes, asynchronous helpers ---- */

static void on_power_done(struct power *p, int err, const char *msg, void *ud)
{
	struct run *r = ud;
	struct run_event ev = { .kind = RUN_EVENT_POWER, .err = err, .msg = msg };

	r->board_off = false;	/* a cycle that failed half way */
	if (err < 0) {
		/* the board cannot be controlled: take it out, retry elsewhere */
		r->outcome.board_fault = true;
		board_set_power_fault(r->board, msg);
		run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE, "power control failed: %s",
			   msg);
		return;
	}
	run_deliver(r, &ev);
}

/*
 * A cycle's "on" starts after the board was off: what the console sent
 * until then is from before (a boot still being printed when the job began,
 * a board that labd's restart found running), not this job's boot.  It is
 * logged, not matched or read for kernel messages and results.
 */
static void on_power_step(struct power *p, enum power_op step, void *ud)
{
	struct run *r = ud;

	r->board_off = step == POWER_OFF;
	if (step == POWER_ON)
		run_flush_console(r);
}

int run_power(struct run *r, enum power_op op)
{
	struct power *p = board_power(r->board);
	int err;

	if (!p) {
		run_log(r, "error", "board has no power control");
		return -ENODEV;
	}
	run_log(r, "info", "power %s", power_op_name(op));
	/* drivers that start the board from the job's artifacts (qemu) read them */
	err = power_set_vars(p, run_vars(r));
	if (!err)
		err = power_run_watched(p, op, on_power_done, on_power_step, r);
	if (err < 0)
		run_log(r, "error", "cannot start power %s: %s", power_op_name(op), strerror(-err));
	return err;
}

static int on_wake(struct loop_source *s, uint64_t now, void *ud)
{
	struct run_event ev = { .kind = RUN_EVENT_WAKE };

	run_deliver(ud, &ev);
	return 0;
}

void run_wake_at(struct run *r, uint64_t when)
{
	loop_timer_set(r->wake_timer, when);
}

static int on_async(struct loop_source *s, void *ud)
{
	struct run *r = ud;
	struct run_event ev = { .kind = RUN_EVENT_DONE, .err = r->async_err, .msg = r->async_msg };

	run_deliver(r, &ev);
	return 0;
}

void run_async_done(struct run *r, int err, const char *msg)
{
	free(r->async_msg);
	r->async_msg = msg ? strdup(msg) : NULL;
	r->async_err = err;
	loop_source_set_enabled(r->async_defer, true);
	loop_defer_again(r->async_defer);
}

/* The panic report did not end in time: report what we have and fail. */
static int on_panic_timer(struct loop_source *s, uint64_t now, void *ud)
{
	struct run *r = ud;

	kmsg_flush(r->kmsg);
	fail_on_panic(r);
	return 0;
}

/* ---- setup ---- */

int run_console_init(struct run *r)
{
	struct loop *l = r->deps.loop;
	int err;

	strbuf_init(&r->line);
	err = matcher_new(&r->matcher);
	if (!err)
		err = kmsg_new(on_kmsg_report, r, &r->kmsg);
	if (!err)
		err = ktap_new(on_ktap_result, r, &r->ktap);
	if (!err)
		err = loop_add_timer(l, &r->wait_timer, USEC_INFINITY, on_wait_timeout, r);
	if (!err)
		err = loop_add_defer(l, &r->match_defer, on_match_defer, r);
	if (!err)
		err = loop_add_timer(l, &r->wake_timer, USEC_INFINITY, on_wake, r);
	if (!err)
		err = loop_add_defer(l, &r->async_defer, on_async, r);
	if (!err)
		err = loop_add_timer(l, &r->panic_timer, USEC_INFINITY, on_panic_timer, r);
	if (err)
		return err;
	loop_source_set_enabled(r->async_defer, false);
	r->line_no = joblog_line(r->log);
	return 0;
}

void run_console_attach(struct run *r)
{
	board_set_job_hooks(r->board, &run_board_hooks, r);
	board_set_mask(r->board, r->mask);
}

void run_console_detach(struct run *r)
{
	board_set_mask(r->board, NULL);	/* what it held back goes to this job */
	board_set_job_hooks(r->board, NULL, NULL);
	if (r->line.len) {
		dispatch_line(r, r->line.buf, r->line.len);
		strbuf_reset(&r->line);
	}
	kmsg_flush(r->kmsg);
	ktap_flush(r->ktap);
}

void run_console_release(struct run *r)
{
	struct run_line_sub *s;

	while ((s = r->line_subs)) {
		r->line_subs = s->next;
		free(s);
	}
	r->matcher = matcher_free(r->matcher);
	r->kmsg = kmsg_free(r->kmsg);
	r->ktap = ktap_free(r->ktap);
	strbuf_release(&r->line);
	loop_source_free(r->wait_timer);
	loop_source_free(r->match_defer);
	loop_source_free(r->wake_timer);
	loop_source_free(r->async_defer);
	loop_source_free(r->panic_timer);
	free(r->panic_line);
}
