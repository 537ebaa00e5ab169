// SPDX-License-Identifier: GPL-2.0-or-later
/* report.c -- gather a finished job's record, results, phases and log excerpts */
#include "results/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "journal/joblog.h"
#include "store/store.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int add_result(const struct result_record *rec, void *ud)
{
	struct report *r = ud;
	struct report_result *v, *res;

	if (r->n_results >= REPORT_MAX_RESULTS)
		return 0;
	v = realloc(r->results, (r->n_results + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->results = v;
	res = &v[r->n_results++];
	memset(res, 0, sizeof(*res));
	res->suite = strdup(rec->suite ? rec->suite : "");
	res->name = strdup(rec->name ? rec->name : "");
	res->result = strdup(rec->result ? rec->result : "unknown");
	res->has_measurement = rec->has_measurement;
	res->measurement = rec->measurement;
	res->units = dup_or_null(rec->units);
	res->log_start = rec->log_start;
	res->log_end = rec->log_end;
	res->extra = rec->extra ? json_loads(rec->extra, 0, NULL) : NULL;
	res->created = rec->created;
	return res->suite && res->name && res->result ? 0 : -ENOMEM;
}

/* A "stage" event: its name into the stages started or finished. */
static int add_stage(struct report *r, const json_t *data)
{
	const char *name = json_string_value(json_object_get(data, "name"));
	const char *state = json_string_value(json_object_get(data, "state"));

	if (!name || !state)
		return 0;
	return strv_push(strcmp(state, "finished") ? &r->stages : &r->stages_done, name);
}

/* Boot phases and stages of the last attempt: "phase" and "stage" events after the last "started". */
static int add_phase(const struct event_record *ev, void *ud)
{
	struct report *r = ud;
	json_t *data;
	const char *phase;
	int err = 0;

	if (!strcmp(ev->kind, "started")) {
		r->phases = strv_free(r->phases);
		r->stages = strv_free(r->stages);
		r->stages_done = strv_free(r->stages_done);
		return 0;
	}
	if (strcmp(ev->kind, "phase") && strcmp(ev->kind, "stage"))
		return 0;
	data = json_loads(ev->data, 0, NULL);
	phase = json_string_value(json_object_get(data, "phase"));
	if (!strcmp(ev->kind, "stage"))
		err = add_stage(r, data);
	else if (phase)
		err = strv_push(&r->phases, phase);
	json_decref(data);
	return err;
}

/* The suites of the job's test definitions, numbered across its test actions. */
static int load_testdefs(struct report *r, const struct job *job)
{
	unsigned index = 0;
	size_t i, j;
	char *suite;

	for (i = 0; i < job->n_actions; i++) {
		const struct job_action *a = &job->actions[i];

		for (j = 0; a->kind == JOB_ACTION_TEST && j < a->test.n_definitions; j++) {
			if (asprintf(&suite, "%u_%s", index++, a->test.definitions[j].name) < 0)
				return -ENOMEM;
			if (strv_consume(&r->testdefs, suite) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

struct job *report_parse_job(const struct job_record *rec)
{
	struct diag diag = DIAG_INIT;
	struct job *job = NULL;

	if (rec->definition)
		job_parse(rec->definition, strlen(rec->definition),
			  rec->filename ? rec->filename : "job",
			  rec->format && !strcmp(rec->format, "json") ? JOB_FORMAT_JSON :
									JOB_FORMAT_YAML,
			  &job, &diag);
	diag_release(&diag);
	return job;
}

static int load_metadata(struct report *r, const struct job_record *rec)
{
	struct job *job = report_parse_job(rec);
	int err = 0;

	if (job) {
		r->metadata = json_incref(job->metadata);
		err = load_testdefs(r, job);
	}
	job_free(job);
	return err;
}

static int load_record(struct report *r, const struct job_record *rec)
{
	r->name = dup_or_null(rec->name);
	r->device = dup_or_null(rec->device);
	r->device_type = dup_or_null(rec->device_type);
	r->submitter = dup_or_null(rec->submitter);
	r->error_msg = dup_or_null(rec->error_msg);
	r->health = rec->health;
	r->error_type = rec->error_type;
	r->submitted = rec->submitted;
	r->started = rec->started;
	r->ended = rec->ended;
	r->attempt = rec->attempt;
	if (!r->name || !r->device_type)
		return -ENOMEM;
	return load_metadata(r, rec);
}

static int load_log(struct report *r, const char *dir)
{
	struct strbuf buf = STRBUF_INIT;
	uint64_t from;
	size_t i;
	int err;

	r->log_size = joblog_file_size(dir, JOBLOG_CONSOLE);
	from = r->log_size > REPORT_LOG_TAIL ? r->log_size - REPORT_LOG_TAIL : 0;
	err = joblog_read(dir, JOBLOG_CONSOLE, from, REPORT_LOG_TAIL, &buf);
	if (err < 0 && err != -ENOENT)
		return err;
	r->log_tail = strbuf_detach(&buf, &r->log_tail_len);
	for (i = 0; i < r->n_results; i++) {
		struct report_result *res = &r->results[i];

		if (res->log_start <= 0 || res->log_end < res->log_start)
			continue;
		if (joblog_line_range(dir, res->log_start, res->log_end, &buf) < 0) {
			strbuf_reset(&buf);
			continue;
		}
		if (buf.len > REPORT_EXCERPT_MAX)
			strbuf_consume(&buf, buf.len - REPORT_EXCERPT_MAX);
		res->excerpt = strbuf_detach(&buf, &res->excerpt_len);
	}
	return 0;
}

int report_load(struct store *st, const struct lab_config *c, int64_t id,
		const char *log_url_base, struct report **ret)
{
	struct job_record rec = { 0 };
	struct report *r;
	char *dir = NULL;
	int err;

	err = store_job_get(st, id, &rec);
	if (err < 0)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out_release;
	}
	r->job_id = id;
	r->lab = strdup(c->lab_name ? c->lab_name : "labd");
	err = r->lab ? load_record(r, &rec) : -ENOMEM;
	if (!err)
		err = store_result_list(st, id, add_result, r);
	if (!err)
		err = store_event_list(st, id, 0, add_phase, r);
	dir = joblog_job_dir(c->state_dir, id);
	if (!err)
		err = dir ? load_log(r, dir) : -ENOMEM;
	if (!err && log_url_base &&
	    asprintf(&r->log_url, "%s/api/v1/jobs/%lld/log", log_url_base, (long long)id) < 0)
		err = -ENOMEM;
	if (err < 0) {
		report_free(r);
		goto out_release;
	}
	*ret = r;
out_release:
	free(dir);
	job_record_release(&rec);
	return err;
}

struct report *report_free(struct report *r)
{
	size_t i;

	if (!r)
		return NULL;
	for (i = 0; i < r->n_results; i++) {
		struct report_result *res = &r->results[i];

		free(res->suite);
		free(res->name);
		free(res->result);
		free(res->units);
		free(res->excerpt);
		json_decref(res->extra);
	}
	free(r->results);
	free(r->lab);
	free(r->name);
	free(r->device);
	free(r->device_type);
	free(r->submitter);
	free(r->error_msg);
	json_decref(r->metadata);
	strv_free(r->phases);
	strv_free(r->stages);
	strv_free(r->stages_done);
	strv_free(r->testdefs);
	free(r->log_tail);
	free(r->log_url);
	free(r);
	return NULL;
}

int report_stage(const struct report *r, const char *name)
{
	return strv_contains(r->stages_done, name) ? 2 : strv_contains(r->stages, name);
}

bool report_reached(const struct report *r, const char *phase)
{
	return strv_contains(r->phases, phase);
}

void report_time(uint64_t usec, char *buf, size_t len)
{
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06u+00:00", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(usec % 1000000));
}
