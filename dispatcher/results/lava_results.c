// SPDX-License-Identifier: GPL-2.0-or-later
/* lava_results.c -- a job's results as LAVA's suites and test cases, in YAML and JSON */
#include "results/lava_results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/joblog.h"
#include "results/lava_log.h"
#include "results/report.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "results/yaml_out.h"

#define KMSG_SUITE "kernel-messages"
#define LAVA_SUITE "lava"

const char *lava_error_type_name(enum error_type t)
{
	switch (t) {
	case ERROR_INFRASTRUCTURE:
		return "Infrastructure";
	case ERROR_JOB:
		return "Job";
	case ERROR_TEST:
		return "Test";
	case ERROR_BUG:
		return "Bug";
	case ERROR_NONE:
		break;
	}
	return NULL;
}

const char *lava_job_state_name(enum job_state s)
{
	static const char *const names[] = { "Submitted", "Running", "Canceling", "Finished" };

	return (unsigned)s < 4 ? names[s] : "Submitted";
}

const char *lava_job_health_name(enum job_health h)
{
	static const char *const names[] = { "Unknown", "Complete", "Incomplete", "Canceled" };

	return (unsigned)h < 4 ? names[h] : "Unknown";
}

int lava_job_state_int(enum job_state s)
{
	static const int ints[] = { 0, 3, 4, 5 };

	return (unsigned)s < 4 ? ints[s] : 0;
}

int lava_job_health_int(enum job_health h)
{
	return (unsigned)h < 4 ? (int)h : 0;
}

int lava_job_state_from_name(const char *name, enum job_state *ret)
{
	enum job_state s;

	if (!strcmp(name, "Scheduling") || !strcmp(name, "Scheduled")) {
		*ret = JOB_STATE_QUEUED;
		return 0;
	}
	for (s = JOB_STATE_QUEUED; s <= JOB_STATE_FINISHED; s++) {
		if (!strcmp(name, lava_job_state_name(s))) {
			*ret = s;
			return 0;
		}
	}
	return -EINVAL;
}

int lava_job_health_from_name(const char *name, enum job_health *ret)
{
	enum job_health h;

	for (h = JOB_HEALTH_UNKNOWN; h <= JOB_HEALTH_CANCELED; h++) {
		if (!strcmp(name, lava_job_health_name(h))) {
			*ret = h;
			return 0;
		}
	}
	return -EINVAL;
}

int lava_job_status(enum job_state s, enum job_health h)
{
	switch (s) {
	case JOB_STATE_QUEUED:
		return 0;
	case JOB_STATE_RUNNING:
		return 1;
	case JOB_STATE_CANCELING:
		return 5;
	case JOB_STATE_FINISHED:
		break;
	}
	return h == JOB_HEALTH_COMPLETE ? 2 : h == JOB_HEALTH_CANCELED ? 4 : 3;
}

const char *lava_job_status_name(int status)
{
	static const char *const names[] = { "Submitted", "Running",  "Complete",
					     "Incomplete", "Canceled", "Canceling" };

	return status >= 0 && status < 6 ? names[status] : "Incomplete";
}

const char *lava_device_health_name(enum device_state s)
{
	return s == DEVICE_STATE_MAINTENANCE ? "Maintenance" : s == DEVICE_STATE_BAD ? "Bad" : "Good";
}

const char *lava_device_state_name(enum device_state s)
{
	return s == DEVICE_STATE_RUNNING ? "Running" : s == DEVICE_STATE_RESERVED ? "Reserved" : "Idle";
}

long lava_results_suite(const struct lava_results *lr, const char *name)
{
	size_t i;

	for (i = 0; lr->suites && lr->suites[i]; i++)
		if (!strcmp(lr->suites[i], name))
			return (long)i;
	return -1;
}

/* ---- building ---- */

static long suite_index(struct lava_results *lr, const char *name)
{
	long i = lava_results_suite(lr, name);

	if (i >= 0)
		return i;
	if (strv_push(&lr->suites, name) < 0)
		return -ENOMEM;
	return (long)strv_length(lr->suites) - 1;
}

/* A new case of suite @suite; its metadata holds definition, case and result. */
static struct lava_case *add_case(struct lava_results *lr, const char *suite, const char *name,
				  const char *result, uint64_t logged)
{
	struct lava_case *v, *c;
	long s = suite_index(lr, suite);

	if (s < 0)
		return NULL;
	v = realloc(lr->cases, (lr->n_cases + 1) * sizeof(*v));
	if (!v)
		return NULL;
	lr->cases = v;
	c = &v[lr->n_cases];
	memset(c, 0, sizeof(*c));
	c->id = (int64_t)lr->n_cases + 1;
	c->suite = (size_t)s;
	c->name = strdup(name);
	c->result = strdup(result);
	c->logged = logged;
	c->metadata = json_pack("{s:s, s:s, s:s}", "definition", suite, "case", name, "result",
				result);
	lr->n_cases++;
	return c->name && c->result && c->metadata ? c : NULL;
}

static int add_result(struct lava_results *lr, const struct report_result *res)
{
	struct lava_case *c = add_case(lr, res->suite, res->name, res->result, res->created);
	const char *key;
	json_t *v;

	if (!c)
		return -ENOMEM;
	c->has_measurement = res->has_measurement;
	c->measurement = res->measurement;
	if (res->units && !(c->units = strdup(res->units)))
		return -ENOMEM;
	c->log_start = res->log_start;
	c->log_end = res->log_end;
	if (res->has_measurement)
		json_object_set_new(c->metadata, "measurement", json_real(res->measurement));
	if (res->units)
		json_object_set_new(c->metadata, "units", json_string(res->units));
	json_object_foreach(res->extra, key, v)
		if (!json_object_get(c->metadata, key))
			json_object_set(c->metadata, key, v);
	return 0;
}

static int lava_case(struct lava_results *lr, const char *name, bool pass, uint64_t when,
		     struct lava_case **ret)
{
	struct lava_case *c = add_case(lr, LAVA_SUITE, name, pass ? "pass" : "fail", when);

	if (ret)
		*ret = c;
	return c ? 0 : -ENOMEM;
}

static int job_case(struct lava_results *lr, const struct report *r)
{
	const char *type = lava_error_type_name(r->error_type);
	struct lava_case *c;
	int err;

	if (r->health == JOB_HEALTH_UNKNOWN)
		return 0;
	err = lava_case(lr, "job", r->health == JOB_HEALTH_COMPLETE, r->ended, &c);
	if (err < 0 || r->health == JOB_HEALTH_COMPLETE)
		return err;
	if (r->health == JOB_HEALTH_CANCELED)
		type = "Canceled";
	if (type)
		json_object_set_new(c->metadata, "error_type", json_string(type));
	if (r->error_msg)
		json_object_set_new(c->metadata, "error_msg", json_string(r->error_msg));
	return 0;
}

/* The login cases, as LAVA records them: only once the boot got to waiting for the login. */
static int login_cases(struct lava_results *lr, const struct report *r)
{
	bool shell = report_reached(r, "shell"), ended = r->health != JOB_HEALTH_UNKNOWN;
	int err = 0;

	if (!shell && !(ended && r->health != JOB_HEALTH_COMPLETE &&
			report_stage(r, "auto-login-action")))
		return 0;
	err = lava_case(lr, "auto-login-action", shell, r->ended, NULL);
	if (!err && report_reached(r, "login-prompt"))
		err = lava_case(lr, "login-action", shell, r->ended, NULL);
	return err;
}

static int kmsg_case(struct lava_results *lr, const struct report *r)
{
	json_t *extra = json_array();
	struct lava_case *c;
	size_t i;
	int err;

	if (!extra)
		return -ENOMEM;
	for (i = 0; i < r->n_results; i++) {
		const struct report_result *res = &r->results[i];
		const char *first = json_string_value(json_object_get(res->extra, "first_line"));

		if (strcmp(res->suite, KMSG_SUITE))
			continue;
		json_array_append_new(extra, json_pack("{s:s, s:s?}", "kind", res->name,
						       "message", first));
	}
	if (!report_reached(r, "kernel-start") && !json_array_size(extra)) {
		json_decref(extra);
		return 0;
	}
	err = lava_case(lr, KMSG_SUITE, !json_array_size(extra), r->ended, &c);
	if (!err && json_array_size(extra))
		json_object_set(c->metadata, "extra", extra);
	json_decref(extra);
	return err;
}

/*
 * One case per test definition that started, as LAVA records them: pass when
 * it finished (every one of a complete job), fail when the job ended in it.
 */
static int testdef_cases(struct lava_results *lr, const struct report *r)
{
	bool complete = r->health == JOB_HEALTH_COMPLETE;
	size_t i;
	int err = 0, stage;

	if (r->health == JOB_HEALTH_UNKNOWN)
		return 0;
	for (i = 0; !err && r->testdefs && r->testdefs[i]; i++) {
		stage = report_stage(r, r->testdefs[i]);
		if (complete || stage)
			err = lava_case(lr, r->testdefs[i], complete || stage == 2, r->ended, NULL);
	}
	return err;
}

/* Console line numbers into lines of the YAML log. */
static int map_lines(struct lava_results *lr, const char *dir)
{
	int64_t *lines;
	size_t i;
	int err;

	if (!lr->n_cases)
		return 0;
	lines = calloc(lr->n_cases * 2, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < lr->n_cases; i++) {
		lines[2 * i] = lr->cases[i].log_start;
		lines[2 * i + 1] = lr->cases[i].log_end;
	}
	err = lava_log_map_lines(dir, lines, lr->n_cases * 2);
	for (i = 0; !err && i < lr->n_cases; i++) {
		lr->cases[i].log_start = lines[2 * i];
		lr->cases[i].log_end = lines[2 * i + 1];
	}
	free(lines);
	return err;
}

int lava_results_build(const struct report *r, const char *log_dir, struct lava_results **ret)
{
	struct lava_results *lr = calloc(1, sizeof(*lr));
	size_t i;
	int err = 0;

	if (!lr)
		return -ENOMEM;
	lr->job_id = r->job_id;
	for (i = 0; !err && i < r->n_results; i++)
		if (strcmp(r->results[i].suite, KMSG_SUITE) && strcmp(r->results[i].suite, LAVA_SUITE))
			err = add_result(lr, &r->results[i]);
	if (!err && log_dir)
		err = map_lines(lr, log_dir);
	if (!err)
		err = job_case(lr, r);
	if (!err)
		err = login_cases(lr, r);
	if (!err)
		err = kmsg_case(lr, r);
	if (!err)
		err = testdef_cases(lr, r);
	if (err < 0) {
		lava_results_free(lr);
		return err;
	}
	*ret = lr;
	return 0;
}

struct lava_results *lava_results_free(struct lava_results *lr)
{
	size_t i;

	if (!lr)
		return NULL;
	for (i = 0; i < lr->n_cases; i++) {
		free(lr->cases[i].name);
		free(lr->cases[i].result);
		free(lr->cases[i].units);
		json_decref(lr->cases[i].metadata);
	}
	free(lr->cases);
	strv_free(lr->suites);
	free(lr);
	return NULL;
}

/* ---- writing ---- */

/* Python's str(datetime) of an aware UTC time: "2026-12-03 10:00:00.123456+00:00". */
static void py_time(uint64_t usec, char *buf, size_t len)
{
	report_time(usec, buf, len);
	if (strlen(buf) > 10)
		buf[10] = ' ';
}

/* A decimal as LAVA's DecimalField(decimal_places=10) prints it. */
static void decimal(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.10f", v);
}

static void kv(struct yaml_out *y, const char *key, const char *value)
{
	yaml_out_plain(y, key);
	yaml_out_cstr(y, value);
}

static void kv_int(struct yaml_out *y, const char *key, int64_t v, bool none_if_zero)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	kv(y, key, none_if_zero && !v ? "None" : buf);
}

static void export_case(struct yaml_out *y, const struct lava_results *lr,
			const struct lava_case *c)
{
	const char *suite = lr->suites[c->suite];
	char buf[64], *url = NULL;

	yaml_out_map_begin(y, false);
	kv(y, "name", c->name);
	kv_int(y, "job", lr->job_id, false);
	kv(y, "suite", suite);
	kv(y, "result", c->result);
	decimal(c->measurement, buf, sizeof(buf));
	kv(y, "measurement", c->has_measurement ? buf : "None");
	kv(y, "unit", c->units ? c->units : "");
	kv(y, "level", "");
	if (asprintf(&url, "/results/%lld/%s/%s", (long long)lr->job_id, suite, c->name) < 0)
		url = NULL;
	kv(y, "url", url ? url : "");
	free(url);
	kv_int(y, "id", c->id, false);
	py_time(c->logged, buf, sizeof(buf));
	kv(y, "logged", buf);
	kv_int(y, "log_start_line", c->log_start, true);
	kv_int(y, "log_end_line", c->log_end, true);
	yaml_out_plain(y, "metadata");
	yaml_out_json(y, c->metadata, false);
	yaml_out_map_end(y);
}

int lava_results_export_yaml(const struct lava_results *lr, long suite, size_t offset,
			     size_t limit, struct strbuf *out)
{
	struct yaml_out y;
	size_t i, seen = 0, written = 0;

	yaml_out_begin(&y, out);
	yaml_out_seq_begin(&y, false);
	for (i = 0; i < lr->n_cases && (!limit || written < limit); i++) {
		if (suite >= 0 && lr->cases[i].suite != (size_t)suite)
			continue;
		if (seen++ < offset)
			continue;
		export_case(&y, lr, &lr->cases[i]);
		written++;
	}
	yaml_out_seq_end(&y);
	return yaml_out_end(&y);
}

int lava_results_case_yaml(const struct lava_results *lr, long suite, const char *name,
			   struct strbuf *out)
{
	struct yaml_out y;
	size_t i, written = 0;
	int err;

	yaml_out_begin(&y, out);
	yaml_out_seq_begin(&y, false);
	for (i = 0; i < lr->n_cases; i++) {
		if (lr->cases[i].suite != (size_t)suite || strcmp(lr->cases[i].name, name))
			continue;
		export_case(&y, lr, &lr->cases[i]);
		written++;
	}
	yaml_out_seq_end(&y);
	err = yaml_out_end(&y);
	return err < 0 ? err : written ? 0 : -ENOENT;
}

int lava_results_suites_yaml(const struct lava_results *lr, struct strbuf *out)
{
	struct yaml_out y;
	size_t i;

	yaml_out_begin(&y, out);
	yaml_out_seq_begin(&y, false);
	for (i = 0; lr->suites && lr->suites[i]; i++) {
		yaml_out_map_begin(&y, false);
		kv(&y, "name", lr->suites[i]);
		kv_int(&y, "job", lr->job_id, false);
		kv_int(&y, "id", (int64_t)i + 1, false);
		yaml_out_map_end(&y);
	}
	yaml_out_seq_end(&y);
	return yaml_out_end(&y);
}

json_t *lava_results_callback(const struct lava_results *lr)
{
	struct strbuf text = STRBUF_INIT;
	json_t *o = json_object();
	size_t i;

	for (i = 0; o && lr->suites && lr->suites[i]; i++) {
		strbuf_reset(&text);
		if (lava_results_export_yaml(lr, (long)i, 0, 0, &text) < 0 ||
		    json_object_set_new(o, lr->suites[i], json_stringn(text.buf, text.len)) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	strbuf_release(&text);
	return o;
}

json_t *lava_suite_json(const struct lava_results *lr, size_t suite, const char *base)
{
	char *uri;
	json_t *o;

	if (asprintf(&uri, "%s/api/v0.2/jobs/%lld/suites/%zu/", base, (long long)lr->job_id,
		     suite + 1) < 0)
		return NULL;
	o = json_pack("{s:I, s:s, s:I, s:s}", "id", (json_int_t)suite + 1, "name",
		      lr->suites[suite], "job", (json_int_t)lr->job_id, "resource_uri", uri);
	free(uri);
	return o;
}

/* The metadata mapping as the YAML text LAVA stores it. */
static json_t *metadata_yaml(const json_t *metadata)
{
	struct strbuf text = STRBUF_INIT;
	struct yaml_out y;
	json_t *v = NULL;

	yaml_out_begin(&y, &text);
	yaml_out_json(&y, metadata, false);
	if (!yaml_out_end(&y))
		v = json_stringn(text.buf, text.len);
	strbuf_release(&text);
	return v;
}

static json_t *int_or_null(int64_t v)
{
	return v ? json_integer(v) : json_null();
}

json_t *lava_case_json(const struct lava_results *lr, const struct lava_case *c,
		       const char *base)
{
	char when[40], num[64], *uri = NULL;
	json_t *o;

	joblog_format_time(c->logged, when, sizeof(when));
	decimal(c->measurement, num, sizeof(num));
	if (asprintf(&uri, "%s/api/v0.2/jobs/%lld/tests/%lld/", base, (long long)lr->job_id,
		     (long long)c->id) < 0)
		return NULL;
	o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:I, s:n, s:s}", "id",
		      (json_int_t)c->id, "name", c->name, "result", c->result, "unit",
		      c->units ? c->units : "", "measurement",
		      c->has_measurement ? json_string(num) : json_null(), "metadata",
		      metadata_yaml(c->metadata), "start_log_line", int_or_null(c->log_start),
		      "end_log_line", int_or_null(c->log_end), "logged", when, "suite",
		      (json_int_t)c->suite + 1, "test_set", "resource_uri", uri);
	free(uri);
	return o;
}
