// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_test_definitions.c -- LAVA test definitions typed into the board's shell
 *
 * The steps:
 *  1. load every definition of the action: inline ones from the job, `from:
 *     url` ones fetched with the daemon's HTTP client (file:// only below
 *     the lab's artifact_dir), each checked as a "Lava-Test Test Definition
 *     1.0" document (testdef.h);
 *  2. type the helpers (lava-test-case ...) into /tmp/labd-<job>/bin, one
 *     command per shell prompt;
 *  3. for each definition: type its script, run it, read the LAVA signals
 *     it prints (results/lava_signals.h) until its ENDRUN signal, then wait
 *     for the prompt.  Lines between STARTRUN and ENDRUN also go through the
 *     definition's parse pattern.  Test cases the job `expected` that never
 *     reported are recorded as failed; unexpected ones are kept.
 *
 * Results: suite "<index>_<name>" as LAVA names them, the index counting
 * the job's definitions across all its test actions ("0_smoke-tests",
 * "1_ltp" ...); the test set, a reference URL or labd's error go into the
 * result's extra JSON.  A definition that does not finish before the
 * action's timeout fails the action (error type test) naming the
 * definition and its last output line; lava-test-raise fails it at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "board/board.h"
#include "config/config.h"
#include "core/fileurl.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/testdef.h"
#include "results/lava_signals.h"
#include "run/action.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#define TESTDEFS_DIR_FMT "/tmp/labd-%lld"	/* on the board */
#define TESTDEFS_MARGIN (1 * USEC_PER_SEC)	/* our own timeout fires before the action's */
#define TESTDEFS_MAX_LAST_LINE 200

enum {
	ID_PROMPT = 1,
};

enum defs_wait {
	WAIT_FETCH,		/* a definition is being downloaded */
	WAIT_PROMPT,		/* a typed command: its prompt */
	WAIT_RUN,		/* the script runs: its ENDRUN signal */
	WAIT_DONE_PROMPT,	/* ENDRUN seen: the prompt after it */
};

struct defs_state {
	struct run *run;
	struct testdef **defs;	/* one per definition of the action */
	size_t n, cur;
	unsigned first_index;	/* index of defs[0] among the job's definitions */
	uint64_t deadline;	/* of the action */
	char *dir;
	char **cmds;		/* commands being typed */
	size_t cmd;
	enum defs_wait wait;
	bool setup_done;
	struct http_request *req;
	void *lines;		/* run_lines_subscribe() handle */
	struct lava_signals *signals;
	pcre2_code *pattern;
	pcre2_match_data *md;
	bool started;		/* STARTRUN seen */
	bool ended;		/* ENDRUN seen (acted on after the line) */
	char *raised;		/* lava-test-raise message (acted on after the line) */
	char *set;		/* current test set */
	char *tc;		/* last STARTTC name, and its line */
	int64_t tc_line;
	char **seen;		/* test cases reported by the current definition */
	char last_line[TESTDEFS_MAX_LAST_LINE];
	char uuid[48];
};

static void next_definition(struct run *r, struct defs_state *st);
static void fetch_next(struct run *r, struct defs_state *st);

static const struct testdef *current(const struct defs_state *st)
{
	return st->cur < st->n ? st->defs[st->cur] : NULL;
}

static const struct job_testdef *job_def(struct run *r, size_t i)
{
	return &run_action(r)->test.definitions[i];
}

/* Shell prompts: those of the job's last boot before this action, else the device type's. */
static char *const *prompts(struct run *r)
{
	const struct job *job = run_job(r);
	size_t i;

	for (i = run_action_index(r); i-- > 0;) {
		const struct job_action *a = &job->actions[i];

		if (a->kind == JOB_ACTION_BOOT && strv_length(a->boot.prompts))
			return a->boot.prompts;
	}
	return board_device(run_board(r))->type->kernel.prompts;
}

/* The os of the job's last deploy before this action that names one, or NULL. */
static const char *deploy_os(struct run *r)
{
	const struct job *job = run_job(r);
	size_t i;

	for (i = run_action_index(r); i-- > 0;)
		if (job->actions[i].kind == JOB_ACTION_DEPLOY && job->actions[i].deploy.os)
			return job->actions[i].deploy.os;
	return NULL;
}

/* Definitions of the job's test actions before this one. */
static unsigned definitions_before(struct run *r)
{
	const struct job *job = run_job(r);
	unsigned n = 0;
	size_t i;

	for (i = 0; i < run_action_index(r); i++)
		if (job->actions[i].kind == JOB_ACTION_TEST &&
		    job->actions[i].test.kind == TEST_KIND_DEFINITIONS)
			n += (unsigned)job->actions[i].test.n_definitions;
	return n;
}

/* ---- results ---- */

static void record(struct run *r, struct defs_state *st, struct run_result *res, json_t *extra)
{
	char *text;

	if (st->set)
		json_object_set_new(extra, "set", json_string(st->set));
	text = json_object_size(extra) ? json_dumps(extra, JSON_COMPACT) : NULL;
	res->suite = current(st)->suite;
	res->extra = text;
	run_result(r, res);
	if (!strv_contains(st->seen, res->name))
		strv_push(&st->seen, res->name);
	free(text);
	json_decref(extra);
}

static void on_testcase(struct run *r, struct defs_state *st, const struct lava_signal *sig)
{
	struct run_result res = {
		.name = sig->name,
		.result = sig->result,
		.has_measurement = sig->has_measurement,
		.measurement = sig->measurement,
		.units = sig->units,
		.log_start = sig->line_start,
		.log_end = sig->line_end,
	};

	if (st->tc && !strcmp(st->tc, sig->name))
		res.log_start = st->tc_line;
	record(r, st, &res, json_object());
}

static void on_reference(struct run *r, struct defs_state *st, const struct lava_signal *sig)
{
	struct run_result res = {
		.name = sig->name,
		.result = sig->result,
		.log_start = sig->line_start,
		.log_end = sig->line_end,
	};

	record(r, st, &res, json_pack("{s:s}", "reference", sig->reference));
}

/* Replace *@field with a copy of @value (NULL clears it). */
static void set_str(char **field, const char *value)
{
	free(*field);
	*field = value ? strdup(value) : NULL;
}

static void on_signal(const struct lava_signal *sig, void *ud)
{
	struct defs_state *st = ud;
	struct run *r = st->run;

	switch (sig->kind) {
	case LAVA_SIGNAL_STARTRUN:
		st->started = st->started || !strcmp(sig->name, current(st)->suite);
		break;
	case LAVA_SIGNAL_ENDRUN:
		st->ended = st->ended || (!strcmp(sig->name, current(st)->suite) && sig->uuid &&
					  !strcmp(sig->uuid, st->uuid));
		break;
	case LAVA_SIGNAL_STARTTC:
		set_str(&st->tc, sig->name);
		st->tc_line = sig->line_start;
		break;
	case LAVA_SIGNAL_TESTCASE:
		on_testcase(r, st, sig);
		break;
	case LAVA_SIGNAL_TESTSET_START:
		set_str(&st->set, sig->name);
		break;
	case LAVA_SIGNAL_TESTSET_STOP:
		set_str(&st->set, NULL);
		break;
	case LAVA_SIGNAL_TESTREFERENCE:
		on_reference(r, st, sig);
		break;
	case LAVA_SIGNAL_TESTRAISE:
		set_str(&st->raised, sig->message && *sig->message ? sig->message : "no reason");
		break;
	case LAVA_SIGNAL_INVALID:
		run_log(r, "warning", "malformed LAVA signal at log lines %lld-%lld: '%.200s'",
			(long long)sig->line_start, (long long)sig->line_end, sig->raw);
		break;
	default:
		break;
	}
}

static char *group(struct defs_state *st, const char *name)
{
	PCRE2_UCHAR *s;
	PCRE2_SIZE len;
	char *copy;

	if (pcre2_substring_get_byname(st->md, (PCRE2_SPTR)name, &s, &len) < 0)
		return NULL;
	copy = strndup((const char *)s, len);
	pcre2_substring_free(s);
	return copy;
}

/* The definition's parse pattern on one line of its output. */
static void parse_line(struct run *r, struct defs_state *st, const char *line, size_t len,
		       int64_t lineno)
{
	char *id, *raw, *meas, *units, *end;
	struct run_result res = { .log_start = lineno, .log_end = lineno };

	if (!st->pattern || memmem(line, len, "<LAVA_SIGNAL_", 13) ||
	    pcre2_match(st->pattern, (PCRE2_SPTR)line, len, 0, 0, st->md, NULL) < 0)
		return;
	id = group(st, "test_case_id");
	raw = group(st, "result");
	meas = group(st, "measurement");
	units = group(st, "units");
	if (id && *id && raw) {
		res.name = id;
		res.result = testdef_result(current(st), raw);
		res.units = units && *units ? units : NULL;
		if (meas) {
			res.measurement = strtod(meas, &end);
			res.has_measurement = end != meas && !*end;
		}
		record(r, st, &res, json_object());
	}
	free(id);
	free(raw);
	free(meas);
	free(units);
}

/* Test cases the job expected that never reported: failed. */
static void record_missing(struct run *r, struct defs_state *st)
{
	const struct testdef *td = current(st);

	STRV_FOREACH(name, td->expected) {
		struct run_result res = { .name = *name, .result = "fail" };

		if (strv_contains(st->seen, *name))
			continue;
		record(r, st, &res, json_pack("{s:s}", "error", "expected test case did not run"));
	}
}

/* ---- typing and waiting ---- */

static void expect_prompt(struct run *r, struct defs_state *st, enum defs_wait wait)
{
	st->wait = wait;
	run_expect_clear(r);
	run_expect_add_strv(r, prompts(r), ID_PROMPT);
	run_expect(r, "test-definitions", 0);
}

static int send_line(struct run *r, const char *cmd)
{
	char *line;
	int err;

	if (asprintf(&line, "%s\n", cmd) < 0)
		return -ENOMEM;
	err = run_send(r, line, board_device(run_board(r))->type->kernel.char_delay);
	free(line);
	return err;
}

/* Type the next command of st->cmds; returns false when there is none left. */
static bool type_next(struct run *r, struct defs_state *st)
{
	if (st->cmd >= strv_length(st->cmds))
		return false;
	if (send_line(r, st->cmds[st->cmd++]) < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot type on the board's console");
		return true;
	}
	expect_prompt(r, st, WAIT_PROMPT);
	return true;
}

static void run_script(struct run *r, struct defs_state *st)
{
	const struct testdef *td = current(st);
	char *script = NULL, *cmd = NULL;
	uint64_t now = run_now(r), left, wait;

	if (asprintf(&script, "%s/%s.sh", st->dir, td->suite) >= 0)
		cmd = testdef_run_command(td, script, st->uuid);
	free(script);
	if (!cmd || send_line(r, cmd) < 0) {
		free(cmd);
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot start test definition '%s'", td->suite);
		return;
	}
	free(cmd);
	run_log(r, "info", "test definition '%s' (%s) running", td->suite, td->name);
	st->wait = WAIT_RUN;
	left = st->deadline > now ? st->deadline - now : 1;
	run_expect_clear(r);	/* nothing to match: the lines bring ENDRUN */
	wait = left > 2 * TESTDEFS_MARGIN ? left - TESTDEFS_MARGIN : left;
	run_expect(r, "test-definitions", wait);
}

static int compile_pattern(struct defs_state *st, const char *pattern)
{
	int errcode;
	PCRE2_SIZE off;

	st->pattern = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &errcode, &off,
				    NULL);
	if (!st->pattern)
		return -EINVAL;
	st->md = pcre2_match_data_create_from_pattern(st->pattern, NULL);
	return st->md ? 0 : -ENOMEM;
}

/* Prepare and type the script of the current definition. */
static void begin_definition(struct run *r, struct defs_state *st)
{
	const struct testdef *td = current(st);

	pcre2_match_data_free(st->md);
	pcre2_code_free(st->pattern);
	st->md = NULL;
	st->pattern = NULL;
	st->started = st->ended = false;
	st->seen = strv_free(st->seen);
	set_str(&st->set, NULL);
	set_str(&st->tc, NULL);
	snprintf(st->uuid, sizeof(st->uuid), "%lld_%u", (long long)run_id(r),
		 st->first_index + (unsigned)st->cur);
	if (td->pattern && compile_pattern(st, td->pattern) < 0) {
		run_fail(r, ERROR_JOB, "test definition '%s': bad parse pattern '%s'", td->suite,
			 td->pattern);
		return;
	}
	st->cmds = strv_free(st->cmds);
	st->cmd = 0;
	if (testdef_script_commands(td, &(struct testdef_script){ .dir = st->dir, .uuid = st->uuid,
								   .os = deploy_os(r) },
				    &st->cmds) < 0) {
		run_fail(r, ERROR_BUG, "out of memory");
		return;
	}
	if (!type_next(r, st))
		run_script(r, st);
}

static void next_definition(struct run *r, struct defs_state *st)
{
	if (!current(st)) {
		run_done(r);
		return;
	}
	begin_definition(r, st);
}

static void start_typing(struct run *r, struct defs_state *st)
{
	if (!strv_length(prompts(r))) {
		run_fail(r, ERROR_JOB, "test definitions need a shell prompt: give 'prompts' in the boot action");
		return;
	}
	if (testdef_setup_commands(st->dir, &st->cmds) < 0) {
		run_fail(r, ERROR_BUG, "out of memory");
		return;
	}
	st->cur = 0;
	if (!type_next(r, st))
		next_definition(r, st);
}

/* ---- console lines ---- */

static void note_last_line(struct defs_state *st, const char *line, size_t len)
{
	size_t n = len < sizeof(st->last_line) - 1 ? len : sizeof(st->last_line) - 1;

	if (!len)
		return;
	memcpy(st->last_line, line, n);
	st->last_line[n] = '\0';
}

static void on_line(struct run *r, const char *line, size_t len, int64_t lineno, void *ud)
{
	struct defs_state *st = ud;
	const struct testdef *td = current(st);

	if (st->wait != WAIT_RUN)
		return;
	note_last_line(st, line, len);
	if (st->started)
		parse_line(r, st, line, len, lineno);
	lava_signals_feed(st->signals, line, len, lineno);
	if (st->raised) {
		record_missing(r, st);
		run_fail(r, ERROR_TEST, "test definition '%s' raised an error: %s", td->suite,
			 st->raised);
		return;	/* st is gone */
	}
	if (!st->ended)
		return;
	run_expect_stop(r);
	record_missing(r, st);
	run_log(r, "info", "test definition '%s' finished: %zu test cases", td->suite,
		strv_length(st->seen));
	st->cur++;
	expect_prompt(r, st, WAIT_DONE_PROMPT);
}

/* ---- fetching ---- */

static int check_file_url(struct run *r, const char *url)
{
	return file_url_check(url, run_config(r)->artifact_dir) < 0 ? -EPERM : 0;
}

static void on_fetched(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct defs_state *st = ud;
	struct run *r = st->run;
	const struct job_testdef *jt = job_def(r, st->cur);
	unsigned index = st->first_index + (unsigned)st->cur;
	char err[512];
	json_t *doc = NULL;
	int e;

	st->req = NULL;
	if (resp->err) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot fetch test definition '%s' from '%s': %s",
			 jt->name, jt->url, resp->error);
		return;
	}
	if (resp->status && resp->status != 200) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot fetch test definition '%s' from '%s': HTTP %ld",
			 jt->name, jt->url, resp->status);
		return;
	}
	e = testdef_parse_yaml(resp->body, resp->body_len, jt->url, &doc, err, sizeof(err));
	if (!e)
		e = testdef_from_json(doc, jt, index, &st->defs[st->cur], err, sizeof(err));
	json_decref(doc);
	if (e < 0) {
		run_fail(r, e == -ENOMEM ? ERROR_BUG : ERROR_JOB, "test definition '%s' from '%s': %s",
			 jt->name, jt->url, e == -ENOMEM ? "out of memory" : err);
		return;
	}
	run_log(r, "info", "fetched test definition '%s' from %s", jt->name, jt->url);
	st->cur++;
	fetch_next(r, st);
}

/* Fetch the next definition given by URL, or start typing when all are loaded. */
static void fetch_next(struct run *r, struct defs_state *st)
{
	struct http_request_opts o = { .max_size = TESTDEF_MAX_SIZE, .timeout = 60 * USEC_PER_SEC };
	const struct job_testdef *jt;
	int err;

	while (st->cur < st->n && st->defs[st->cur])
		st->cur++;
	if (st->cur == st->n) {
		start_typing(r, st);
		return;
	}
	jt = job_def(r, st->cur);
	if (check_file_url(r, jt->url) < 0) {
		run_fail(r, ERROR_JOB, "test definition '%s': file URL '%s' is not below the lab's artifact directory",
			 jt->name, jt->url);
		return;
	}
	o.url = jt->url;
	st->wait = WAIT_FETCH;
	err = http_request_start(run_http(r), &o, on_fetched, st, &st->req);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot fetch test definition '%s': %s", jt->name,
			 strerror(-err));
}

/* ---- the action ---- */

static int load_inline(struct run *r, struct defs_state *st)
{
	const struct job_test *t = &run_action(r)->test;
	char err[512];
	size_t i;
	int e;

	for (i = 0; i < t->n_definitions; i++) {
		if (!t->definitions[i].definition)
			continue;
		e = testdef_from_json(t->definitions[i].definition, &t->definitions[i],
				      st->first_index + (unsigned)i, &st->defs[i], err,
				      sizeof(err));
		if (e == -ENOMEM)
			return e;
		if (e < 0) {
			run_fail(r, ERROR_JOB, "test definition '%s': %s", t->definitions[i].name, err);
			return 1;
		}
	}
	return 0;
}

static int defs_start(struct run *r, void *state)
{
	struct defs_state *st = state;
	const struct job_action *a = run_action(r);
	int err;

	st->run = r;
	st->n = a->test.n_definitions;
	st->first_index = definitions_before(r);
	st->deadline = run_now(r) + a->timeout;
	st->defs = calloc(st->n ? st->n : 1, sizeof(*st->defs));
	if (!st->defs || asprintf(&st->dir, TESTDEFS_DIR_FMT, (long long)run_id(r)) < 0)
		return -ENOMEM;
	err = lava_signals_new(on_signal, st, &st->signals);
	if (err < 0)
		return err;
	st->lines = run_lines_subscribe(r, on_line, st);
	if (!st->lines)
		return -ENOMEM;
	err = load_inline(r, st);
	if (err)
		return err < 0 ? err : 0;
	fetch_next(r, st);
	return 0;
}

static void defs_event(struct run *r, void *state, const struct run_event *ev)
{
	struct defs_state *st = state;

	if (ev->kind == RUN_EVENT_TIMEOUT && st->wait == WAIT_RUN) {
		record_missing(r, st);
		run_fail(r, ERROR_TEST, "test definition '%s' did not finish in time; last output: '%s'",
			 current(st)->suite, st->last_line);
		return;
	}
	if (ev->kind == RUN_EVENT_TIMEOUT) {
		run_fail(r, ERROR_TEST, "test definitions: no shell prompt after '%.200s'",
			 st->cmd ? st->cmds[st->cmd - 1] : "the script");
		return;
	}
	if (ev->kind != RUN_EVENT_MATCH || ev->id != ID_PROMPT)
		return;
	if (st->wait == WAIT_DONE_PROMPT) {
		next_definition(r, st);
		return;
	}
	if (type_next(r, st))
		return;
	if (!st->setup_done) {
		st->setup_done = true;
		next_definition(r, st);
		return;
	}
	run_script(r, st);
}

static void defs_stop(struct run *r, void *state)
{
	struct defs_state *st = state;
	size_t i;

	http_request_cancel(st->req);
	run_lines_unsubscribe(r, st->lines);
	lava_signals_free(st->signals);
	for (i = 0; st->defs && i < st->n; i++)
		testdef_free(st->defs[i]);
	free(st->defs);
	free(st->dir);
	strv_free(st->cmds);
	pcre2_match_data_free(st->md);
	pcre2_code_free(st->pattern);
	free(st->raised);
	free(st->set);
	free(st->tc);
	strv_free(st->seen);
}

const struct action_ops action_test_definitions_ops = {
	.name = "test-definitions",
	.state_size = sizeof(struct defs_state),
	.start = defs_start,
	.event = defs_event,
	.stop = defs_stop,
};
