// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_test_monitors.c -- results from patterns in the console output
 * (LAVA `monitors`), for boards without a shell: microcontrollers, firmware
 * self-tests, a kernel's built-in tests printed during boot
 *
 * For each monitor: wait for its start pattern, then record a result for
 * every match of its pattern (named groups test_case_id and result, and
 * optionally measurement and units; the fixupdict maps raw result strings)
 * until the end pattern.  A result is read once its console line is complete.
 */
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "run/action.h"
#include "run/match.h"

enum {
	ID_START = 1,
	ID_RESULT,
	ID_END,
};

struct monitors_state {
	size_t monitor;
	bool started;
	unsigned results;
};

static const struct job_monitor *monitor_of(struct run *r, struct monitors_state *st)
{
	const struct job_test *t = &run_action(r)->test;

	return st->monitor < t->n_monitors ? &t->monitors[st->monitor] : NULL;
}

/*
 * The result pattern matches once its line is complete: a console line can
 * arrive in pieces ("PASS - t", then "est_task_sum\n"), and "(?P<test_case_id>\w+)"
 * must not take the first piece for the name.
 */
static void wait_next(struct run *r, struct monitors_state *st)
{
	const struct job_monitor *m = monitor_of(r, st);
	char *whole;

	if (!m) {
		run_done(r);
		return;
	}
	run_expect_clear(r);
	if (!st->started) {
		run_expect_add(r, m->start, ID_START);
	} else if (asprintf(&whole, "(?:%s)(?=[^\n]*\n)", m->pattern) >= 0) {
		run_expect_add(r, whole, ID_RESULT);
		run_expect_add(r, m->end, ID_END);
		free(whole);
	}
	run_expect(r, "test-monitor", 0);
}

static int monitors_start(struct run *r, void *state)
{
	wait_next(r, state);
	return 0;
}

static char *group(struct run *r, const char *name)
{
	const uint8_t *p;
	size_t len;

	/* the matcher of the run keeps the last match's groups */
	if (!run_match_group(r, name, &p, &len))
		return NULL;
	return strndup((const char *)p, len);
}

/* Map a raw result through the fixupdict, else accept LAVA's own words. */
static const char *fixup(const struct job_monitor *m, const char *raw)
{
	static const char *const known[] = { "pass", "fail", "skip", "unknown" };
	const char *v = kv_get(&m->fixupdict, raw);
	size_t i;

	if (v)
		return v;
	for (i = 0; i < 4; i++)
		if (!strcasecmp(raw, known[i]))
			return known[i];
	return "unknown";
}

static void record(struct run *r, struct monitors_state *st)
{
	const struct job_monitor *m = monitor_of(r, st);
	char *id = group(r, "test_case_id"), *raw = group(r, "result");
	char *meas = group(r, "measurement"), *units = group(r, "units");
	struct run_result res = {
		.suite = m->name,
		.name = id ? id : "unnamed",
		.result = fixup(m, raw ? raw : "unknown"),
		.units = units,
	};

	if (meas) {
		char *end;

		res.measurement = strtod(meas, &end);
		res.has_measurement = end != meas;
	}
	run_result(r, &res);
	st->results++;
	free(id);
	free(raw);
	free(meas);
	free(units);
}

static void monitors_event(struct run *r, void *state, const struct run_event *ev)
{
	struct monitors_state *st = state;
	const struct job_monitor *m = monitor_of(r, st);

	if (ev->kind == RUN_EVENT_TIMEOUT) {
		run_fail_timeout(r, ERROR_TEST, "monitor '%s': timed out waiting for '%s'", m->name,
				 st->started ? m->end : m->start);
		return;
	}
	if (ev->kind != RUN_EVENT_MATCH)
		return;
	switch (ev->id) {
	case ID_START:
		st->started = true;
		run_log(r, "info", "monitor '%s' started", m->name);
		break;
	case ID_RESULT:
		record(r, st);
		break;
	case ID_END:
		run_log(r, "info", "monitor '%s' ended with %u results", m->name, st->results);
		st->monitor++;
		st->started = false;
		st->results = 0;
		break;
	}
	wait_next(r, st);
}

const struct action_ops action_test_monitors_ops = {
	.name = "test-monitors",
	.state_size = sizeof(struct monitors_state),
	.start = monitors_start,
	.event = monitors_event,
};
