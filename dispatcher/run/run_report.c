// SPDX-License-Identifier: GPL-2.0-or-later
/* run_report.c -- a running job's log lines, boot phases, results and substitutions */
#include "run/run_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/mask.h"
#include "core/strbuf.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "store/store.h"

void run_log(struct run *r, const char *kind, const char *fmt, ...)
{
	char raw[JOBLOG_MAX_MSG], *msg;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	msg = mask_text(r->mask, raw);	/* typed secrets, messages quoting them */
	if (!msg)
		return;
	if (r->log)
		joblog_msg(r->log, loop_realtime(r->deps.loop), kind, "%s", msg);
	if (strcmp(kind, "input"))
		log_debug("job %lld: %s: %s", (long long)r->id, kind, msg);
	free(msg);
}

static bool phase_seen(const struct run *r, const char *phase)
{
	size_t i;
	json_t *p;

	json_array_foreach(r->phases, i, p)
		if (!strcmp(json_string_value(json_object_get(p, "phase")) ?: "", phase))
			return true;
	return false;
}

/*
 * Times count from the first phase: the first power-on, or the deploy's
 * before it (an NFS root's download); a later power-on (a retried boot,
 * another boot) starts the count again.
 */
void run_phase(struct run *r, const char *phase)
{
	uint64_t now = run_now(r);
	char at[40];
	double t;

	if (!r->phase_origin || (!strcmp(phase, "power-on") && phase_seen(r, "power-on")))
		r->phase_origin = now;
	t = (double)(now - r->phase_origin) / USEC_PER_SEC;
	joblog_format_time(loop_realtime(r->deps.loop), at, sizeof(at));
	json_array_append_new(r->phases, json_pack("{s:s, s:f, s:s, s:I}", "phase", phase, "t", t,
						   "at", at, "line",
						   (json_int_t)run_console_line(r)));
	run_log(r, "phase", "%s at %.3f s", phase, t);
	events_emit(r->deps.events, r->id, loop_realtime(r->deps.loop), "phase",
		    json_pack("{s:s, s:f}", "phase", phase, "t", t));
}

void run_stage(struct run *r, const char *name, const char *state)
{
	events_emit(r->deps.events, r->id, loop_realtime(r->deps.loop), "stage",
		    json_pack("{s:s, s:s}", "name", name, "state", state));
}

char *run_phases_json(const struct run *r)
{
	return json_dumps(r->phases, JSON_COMPACT);
}

static int run_result_store(struct run *r, const struct run_result *res);

/* The result with its texts masked (a test may name a case after a secret). */
static int masked_result(struct run *r, const struct run_result *res, struct run_result *out,
			 char **texts)
{
	*out = *res;
	texts[0] = mask_text(r->mask, res->name);
	texts[1] = res->units ? mask_text(r->mask, res->units) : NULL;
	texts[2] = res->extra ? mask_text(r->mask, res->extra) : NULL;
	if (!texts[0] || (res->units && !texts[1]) || (res->extra && !texts[2]))
		return -ENOMEM;
	out->name = texts[0];
	out->units = texts[1];
	out->extra = texts[2];
	return 0;
}

int run_result(struct run *r, const struct run_result *res)
{
	struct run_result masked;
	char *texts[3] = { NULL, NULL, NULL };
	int err = masked_result(r, res, &masked, texts);

	if (!err)
		err = run_result_store(r, &masked);
	free(texts[0]);
	free(texts[1]);
	free(texts[2]);
	return err;
}

static int run_result_store(struct run *r, const struct run_result *res)
{
	int64_t line = run_console_line(r);
	struct result_record rec = {
		.job_id = r->id,
		.suite = (char *)res->suite,
		.name = (char *)res->name,
		.result = (char *)res->result,
		.has_measurement = res->has_measurement,
		.measurement = res->measurement,
		.units = (char *)res->units,
		.log_start = res->log_start ? res->log_start : line,
		.log_end = res->log_end ? res->log_end : (res->log_start ? res->log_start : line),
		.extra = (char *)res->extra,
		.created = loop_realtime(r->deps.loop),
	};
	int err;

	err = store_result_add(r->deps.store, &rec);
	if (err < 0) {
		run_log(r, "error", "cannot store result %s.%s: %s", res->suite, res->name,
			strerror(-err));
		return err;
	}
	if (!strcmp(res->result, "fail"))
		r->outcome.results_fail++;
	if (res->has_measurement)
		run_log(r, "result", "%s.%s: %s (%g %s)", res->suite, res->name, res->result,
			res->measurement, res->units ? res->units : "");
	else
		run_log(r, "result", "%s.%s: %s", res->suite, res->name, res->result);
	events_emit(r->deps.events, r->id, rec.created, "result",
		    json_pack("{s:s, s:s, s:s, s:I, s:I}", "suite", res->suite, "name", res->name,
			      "result", res->result, "log_start", (json_int_t)rec.log_start,
			      "log_end", (json_int_t)rec.log_end));
	return 0;
}

/* Look a {NAME} up: the run's variables, then the board's parameters. */
static const char *lookup_var(struct run *r, const char *name)
{
	const char *v = kv_get(&r->vars, name);

	return v ? v : device_param(board_device(r->board), name);
}

/* One pass of substitution over @in. */
static int substitute_once(struct run *r, const char *in, char **ret, const char **ret_missing)
{
	static char missing[64];
	struct strbuf out = STRBUF_INIT;
	const char *p = in;

	while (*p) {
		const char *close, *val;
		char name[64];
		size_t n;

		if (*p != '{' || !(close = strchr(p, '}')) || (n = (size_t)(close - p - 1)) == 0 ||
		    n >= sizeof(name) || strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n) {
			strbuf_addch(&out, *p++);
			continue;
		}
		memcpy(name, p + 1, n);
		name[n] = '\0';
		val = lookup_var(r, name);
		if (!val) {
			snprintf(missing, sizeof(missing), "%s", name);
			if (ret_missing)
				*ret_missing = missing;
			strbuf_release(&out);
			return -ENOENT;
		}
		strbuf_addstr(&out, val);
		p = close + 1;
	}
	*ret = strbuf_detach(&out, NULL);
	return *ret ? 0 : -ENOMEM;
}

/* Values may name other variables ({BOOTX} holds {KERNEL_ADDR}): substitute until
 * nothing changes, a few rounds at most. */
int run_substitute(struct run *r, const char *in, char **ret, const char **ret_missing)
{
	char *cur = strdup(in), *next;
	int round, err = 0;

	if (!cur)
		return -ENOMEM;
	for (round = 0; round < 4; round++) {
		err = substitute_once(r, cur, &next, ret_missing);
		if (err < 0)
			break;
		if (!strcmp(next, cur)) {
			free(next);
			break;
		}
		free(cur);
		cur = next;
	}
	if (err < 0) {
		free(cur);
		return err;
	}
	*ret = cur;
	return 0;
}
