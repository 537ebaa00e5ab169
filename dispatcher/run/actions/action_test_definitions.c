// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_test_definitions.c -- LAVA test definitions run in the board's shell
 *
 * The steps, when the job has no overlay (overlay/overlay_build.h):
 *  1. load every definition of the action: inline ones from the job, `from:
 *     url` ones fetched with the daemon's HTTP client (file:// only below
 *     the lab's artifact_dir), each checked as a "Lava-Test Test Definition
 *     1.0" document (testdef.h);
 *  2. type the helpers (lava-test-case ...) into /tmp/labd-<job>/bin and
 *     the job's secrets (export NAME='value'), one command per shell prompt;
 *  3. for each definition: type its script, run it, read the LAVA signals
 *     it prints (results/lava_signals.h) until its ENDRUN signal, then wait
 *     for the prompt.  Lines between STARTRUN and ENDRUN also go through the
 *     definition's parse pattern.  Test cases the job `expected` that never
 *     reported are recorded as failed; unexpected ones are kept.
 *
 * With an overlay, the definitions were loaded when it was built (by the
 * deploy, else here first); the first test action puts it on the board
 * (test_prepare.h: it was in the ramdisk, or the board downloads it, or it
 * is typed in base64) and checks /lava-<job>/bin is there; the secrets are
 * typed, and each definition runs from /lava-<job>/tests/<suite>/run.sh.
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
#include "overlay/overlay_build.h"
#include "run/action.h"
#include "run/actions/test_prepare.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#define TESTDEFS_DIR_FMT "/tmp/labd-%lld"	/* on the board */
#define TESTDEFS_MARGIN (1 * USEC_PER_SEC)	/* our own timeout fires before the action's */
#define TESTDEFS_MAX_LAST_LINE 200

enum {
	ID_PROMPT = 1,
	ID_OVERLAY_OK,
};

enum defs_wait {
	WAIT_FETCH,		/* a definition is being downloaded */
	WAIT_BUILD,		/* the overlay is being built */
	WAIT_PROMPT,		/* a typed command: its prompt */
	WAIT_CHECK,		/* the overlay check: TEST_OVERLAY_OK, or a prompt without */
	WAIT_RUN,		/* the script runs: its ENDRUN signal */
	WAIT_DONE_PROMPT,	/* ENDRUN seen: the prompt after it */
};

struct defs_state {
	struct run *run;
	struct testdef **defs;	/* one per definition of the action */
	bool borrowed;		/* defs are the run's overlay's */
	bool overlay;		/* the job has an overlay */
	size_t check_cmd;	/* 1 + index in cmds of the overlay check, or 0 */
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
		if (!st->started && !strcmp(sig->name, current(st)->suite)) {
			st->started = true;
			run_stage(r, current(st)->suite, "started");
		}
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
	expect_prompt(r, st, st->cmd == st->check_cmd ? WAIT_CHECK : WAIT_PROMPT);
	if (st->wait == WAIT_CHECK) {
		st->last_line[0] = '\0';
		run_expect_add_literal(r, TEST_OVERLAY_OK, ID_OVERLAY_OK);
		run_expect(r, "test-definitions", 0);
	}
	return true;
}

static void run_script(struct run *r, struct defs_state *st)
{
	const struct testdef *td = current(st);
	char *script = NULL, *cmd = NULL;
	uint64_t now = run_now(r), left, wait;

	if (st->overlay && asprintf(&script, "%s/tests/%s/run.sh", st->dir, td->suite) < 0)
		script = NULL;
	else if (!st->overlay && asprintf(&script, "%s/%s.sh", st->dir, td->suite) < 0)
		script = NULL;
	if (script)
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
	run_expect_limit_action(r);	/* the definitions run until the action's end */
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

/* The commands writing @td's script on the board (no overlay: typed), into st->cmds. */
static int script_commands(struct run *r, struct defs_state *st, const struct testdef *td)
{
	const struct kv *storage_info = &board_device(run_board(r))->storage_info;
	struct testdef_script sc = { .dir = st->dir, .uuid = st->uuid, .os = deploy_os(r) };
	char *storage = testdef_storage_info(storage_info);
	int err;

	if (storage_info->n && !storage)
		return -ENOMEM;
	sc.storage = storage;
	err = testdef_script_commands(td, &sc, &st->cmds);
	free(storage);
	return err;
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
	st->check_cmd = 0;
	if (!st->overlay && script_commands(r, st, td) < 0) {
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
	if (testdef_setup_commands(st->dir, &st->cmds) < 0 ||
	    test_secrets_commands(&run_job(r)->secrets, &st->cmds) < 0) {
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

	if (st->wait == WAIT_CHECK && len && !memmem(line, len, "labd-overlay-ok-$", 17))
		note_last_line(st, line, len);
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
	run_stage(r, td->suite, "finished");
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

/* ---- with an overlay ---- */

/* The overlay is built: its definitions, its delivery (first test action), the secrets. */
static void overlay_ready(struct run *r, struct defs_state *st)
{
	const struct overlay_plan *p = run_overlay_plan(r);
	struct test_overlay_how how = { .delivery = p->delivery, .job_id = run_id(r),
					.path = run_overlay_path(r) };
	char err[512], *url = NULL;
	size_t i;
	int e = 0;

	for (i = 0; i < st->n; i++)
		st->defs[i] = (struct testdef *)run_overlay_testdef(r, st->first_index + i);
	if (p->delivery == OVERLAY_DELIVERY_TRANSFER)
		how.boot = &run_job(r)->actions[p->boot].boot;
	if (run_action_index(r) == p->first_test && p->delivery == OVERLAY_DELIVERY_TRANSFER &&
	    !(how.url = url = run_overlay_url(r, err, sizeof(err)))) {
		run_fail(r, ERROR_INFRASTRUCTURE, "transfer_overlay: %s", err);
		return;
	}
	if (run_action_index(r) == p->first_test) {
		run_log(r, "info", "overlay delivery: %s", overlay_delivery_name(p->delivery));
		e = test_overlay_commands(&how, &st->cmds, err, sizeof(err));
		st->check_cmd = strv_length(st->cmds);
	}
	free(url);
	if (!e)
		e = test_secrets_commands(&run_job(r)->secrets, &st->cmds) < 0 ? -ENOMEM : 0;
	if (e < 0) {
		run_fail(r, e == -EFBIG ? ERROR_JOB : ERROR_INFRASTRUCTURE, "%s", err);
		return;
	}
	if (!type_next(r, st))
		next_definition(r, st);
}

/* Overlay mode: the definitions come from the overlay, built by a deploy or here. */
static int start_overlay(struct run *r, struct defs_state *st)
{
	char *path = NULL;
	int err;

	st->overlay = true;
	st->borrowed = true;
	if (!strv_length(prompts(r))) {
		run_fail(r, ERROR_JOB, "test definitions need a shell prompt: give 'prompts' in the boot action");
		return 0;
	}
	if (run_overlay_testdef(r, st->first_index)) {
		overlay_ready(r, st);
		return 0;
	}
	if (run_overlay_plan(r)->delivery == OVERLAY_DELIVERY_RAMDISK ||
	    run_overlay_plan(r)->delivery == OVERLAY_DELIVERY_IMAGE ||
	    run_overlay_plan(r)->delivery == OVERLAY_DELIVERY_NFSROOT) {
		run_fail(r, ERROR_BUG, "the %s's overlay was not built",
			 overlay_delivery_name(run_overlay_plan(r)->delivery));
		return 0;
	}
	if (asprintf(&path, "%s/overlay.tar.gz", run_dir(r)) < 0)
		return -ENOMEM;
	st->wait = WAIT_BUILD;
	err = run_overlay_build(r, path, OVERLAY_TAR_GZ, true, NULL);
	free(path);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot build the test overlay: %s", strerror(-err));
	return 0;
}

/* The overlay check's answer: the marker (go on), or the prompt without it. */
static void overlay_checked(struct run *r, struct defs_state *st, int id)
{
	if (id == ID_OVERLAY_OK) {
		expect_prompt(r, st, WAIT_PROMPT);
		return;
	}
	run_fail(r, ERROR_INFRASTRUCTURE, "the overlay (%s) is not on the board: no /" OVERLAY_BASE_FMT "/bin; last line: '%s'",
		 overlay_delivery_name(run_overlay_plan(r)->delivery), (long long)run_id(r),
		 st->last_line);
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
	if (!st->defs ||
	    asprintf(&st->dir, run_overlay_plan(r)->delivery != OVERLAY_DELIVERY_NONE ?
		     "/" OVERLAY_BASE_FMT : TESTDEFS_DIR_FMT, (long long)run_id(r)) < 0)
		return -ENOMEM;
	err = lava_signals_new(on_signal, st, &st->signals);
	if (err < 0)
		return err;
	st->lines = run_lines_subscribe(r, on_line, st);
	if (!st->lines)
		return -ENOMEM;
	if (run_overlay_plan(r)->delivery != OVERLAY_DELIVERY_NONE)
		return start_overlay(r, st);
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
		run_fail_timeout(r, ERROR_TEST, "test definition '%s' did not finish in time",
				 current(st)->suite);
		return;
	}
	if (ev->kind == RUN_EVENT_TIMEOUT) {
		run_fail_timeout(r, ERROR_TEST, "test definitions: no shell prompt after '%.200s'",
				 st->cmd ? st->cmds[st->cmd - 1] : "the script");
		return;
	}
	if (ev->kind == RUN_EVENT_DONE && st->wait == WAIT_BUILD) {
		if (ev->err)
			run_fail(r, run_overlay_error_type(r), "%s", ev->msg);
		else
			overlay_ready(r, st);
		return;
	}
	if (ev->kind == RUN_EVENT_MATCH && st->wait == WAIT_CHECK) {
		overlay_checked(r, st, ev->id);
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
	for (i = 0; st->defs && !st->borrowed && i < st->n; i++)
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
