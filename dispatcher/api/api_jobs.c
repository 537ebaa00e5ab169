// SPDX-License-Identifier: GPL-2.0-or-later
/* api_jobs.c -- the job endpoints: submit, list, show, cancel, events and results */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_internal.h"
#include "core/diag.h"
#include "core/strv.h"
#include "run/run.h"
#include "sched/sched.h"
#include "store/store.h"

#define API_MAX_FILENAME 255

/* JSON text stored by labd (tags, extra, event data); kept as a string if it is not JSON. */
static json_t *json_from_text(const char *text)
{
	json_t *v;

	if (!text)
		return json_null();
	v = json_loads(text, JSON_DECODE_ANY, NULL);
	return v ? v : api_json_str(text);
}

static json_t *results_counts(int pass, int fail, int skip, int unknown)
{
	return json_pack("{s:i, s:i, s:i, s:i}", "pass", pass, "fail", fail, "skip", skip,
			 "unknown", unknown);
}

/* What the job list shows of a job. */
static json_t *job_summary(const struct job_record *rec)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(rec->id));
	json_object_set_new(o, "name", api_json_str(rec->name));
	json_object_set_new(o, "device_type", api_json_str(rec->device_type));
	json_object_set_new(o, "tags", json_from_text(rec->tags));
	json_object_set_new(o, "priority", json_integer(rec->priority));
	json_object_set_new(o, "state", json_string(job_state_name(rec->state)));
	json_object_set_new(o, "health", json_string(job_health_name(rec->health)));
	json_object_set_new(o, "error_type", json_string(error_type_name(rec->error_type)));
	json_object_set_new(o, "error_msg", api_json_str(rec->error_msg));
	json_object_set_new(o, "device", api_json_str(rec->device));
	json_object_set_new(o, "submitter", api_json_str(rec->submitter));
	json_object_set_new(o, "submitted", api_time_json(rec->submitted));
	json_object_set_new(o, "started", api_time_json(rec->started));
	json_object_set_new(o, "ended", api_time_json(rec->ended));
	json_object_set_new(o, "attempt", json_integer(rec->attempt));
	json_object_set_new(o, "results", results_counts(rec->results_pass, rec->results_fail,
							 rec->results_skip, rec->results_unknown));
	/* retention (journal/retention.h): when its log, results and events went, or null */
	json_object_set_new(o, "log_removed", api_time_json(rec->log_removed));
	json_object_set_new(o, "history_removed", api_time_json(rec->history_removed));
	return o;
}

/* Read job @id of the request's first path parameter; answers 400/404/500 itself. */
static int get_job(struct api_request *r, struct job_record *rec, enum MHD_Result *ret)
{
	int64_t id;
	int err;

	if (api_param_id(r, 0, &id) < 0) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid job id '%s'",
				       r->params[0]);
		return -EINVAL;
	}
	err = store_job_get(api_deps_of(r)->store, id, rec);
	if (err == -ENOENT)
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "no job %lld", (long long)id);
	else if (err < 0)
		*ret = api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read job %lld: %s", (long long)id, strerror(-err));
	return err;
}

/* ---- POST /jobs ---- */

static enum job_format body_format(const struct api_request *r)
{
	static const char *const yaml[] = { "application/yaml", "application/x-yaml", "text/yaml",
					    "text/x-yaml" };
	const char *type = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_TYPE);
	size_t len, i;

	if (!type)
		return JOB_FORMAT_AUTO;
	len = strcspn(type, "; \t");
	if (len == strlen("application/json") && !strncasecmp(type, "application/json", len))
		return JOB_FORMAT_JSON;
	for (i = 0; i < sizeof(yaml) / sizeof(yaml[0]); i++)
		if (len == strlen(yaml[i]) && !strncasecmp(type, yaml[i], len))
			return JOB_FORMAT_YAML;
	return JOB_FORMAT_AUTO;
}

static enum MHD_Result reply_submit_error(struct api_request *r, int err, const struct diag *diag)
{
	if (err == -EINVAL && diag->n)
		return api_reply_diag(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "invalid job", diag);
	if (err == -EINVAL)
		return api_reply_error(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "invalid job");
	if (err == -ENOTCONN)
		return api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
				       "the store is not reachable: try again");
	if (err == -E2BIG)
		return api_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "job larger than %d bytes",
				       JOB_MAX_SIZE);
	return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot queue the job: %s",
			       strerror(-err));
}

/* dry_run: the checks of a submission and the job's warnings and notes; strict: warnings refuse. */
static enum MHD_Result check_only(struct api_request *r, const char *filename, enum job_format fmt)
{
	struct diag diag = DIAG_INIT;
	enum MHD_Result ret;
	char **notices = NULL;
	json_t *list;
	int err;

	err = sched_check_job(api_deps_of(r)->sched, r->body.buf, r->body.len, filename, fmt,
			      api_query_bool(r, "strict"), &diag, &notices);
	if (err) {
		ret = reply_submit_error(r, err, &diag);
	} else {
		list = json_array();
		STRV_FOREACH(n, notices)
			json_array_append_new(list, json_string(*n));
		ret = api_reply_json(r, MHD_HTTP_OK,
				     json_pack("{s:b, s:o*}", "valid", 1, "notices", list));
	}
	strv_free(notices);
	diag_release(&diag);
	return ret;
}

enum MHD_Result api_jobs_submit(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	enum job_format fmt = body_format(r);
	const char *filename = api_query(r, "filename");
	struct diag diag = DIAG_INIT;
	enum MHD_Result ret;
	char location[64];
	int64_t id = 0;
	int err;

	if (!filename || !*filename)
		filename = fmt == JOB_FORMAT_JSON ? "job.json" : "job.yaml";
	if (strlen(filename) > API_MAX_FILENAME || strpbrk(filename, "\r\n"))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid 'filename'");
	if (!r->body.len)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "empty request body: send the job as YAML or JSON");
	if (api_query_bool(r, "dry_run"))
		return check_only(r, filename, fmt);
	err = sched_submit(d->sched, r->body.buf, r->body.len, filename, fmt, r->who.name, &id,
			   &diag);
	if (err) {
		ret = reply_submit_error(r, err, &diag);
		diag_release(&diag);
		return ret;
	}
	snprintf(location, sizeof(location), API_PREFIX "/jobs/%lld", (long long)id);
	return api_reply_json(r, MHD_HTTP_CREATED,
			      json_pack("{s:I, s:s}", "id", (json_int_t)id, "url", location));
}

/* ---- GET /jobs ---- */

static int add_summary(const struct job_record *rec, void *ud)
{
	return json_array_append_new(ud, job_summary(rec)) ? -ENOMEM : 0;
}

enum MHD_Result api_jobs_list(struct api_request *r)
{
	struct job_filter f = { .state = -1 };
	const char *state = api_query(r, "state"), *health = api_query(r, "health");
	int64_t limit = API_DEFAULT_LIST, before = 0, after = 0;
	enum job_health h = JOB_HEALTH_UNKNOWN;
	enum job_state s;
	json_t *list;
	int err;

	if (state && job_state_from_name(state, &s) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "unknown state '%s' (queued, running, canceling, finished)",
				       state);
	if (health && (job_health_from_name(health, &h) < 0 || h == JOB_HEALTH_UNKNOWN))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "unknown health '%s' (complete, incomplete, canceled)", health);
	if (api_query_int(r, "limit", 1, API_MAX_LIST, &limit) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'limit' must be 1 to %d",
				       API_MAX_LIST);
	if (api_query_int(r, "before", 1, INT64_MAX, &before) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'before' must be a job id");
	if (api_query_int(r, "after", 1, INT64_MAX, &after) < 0 || (after && before))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'after' must be a job id, and not given with 'before'");
	if (state)
		f.state = (int)s;
	f.device = api_query(r, "device");
	f.device_type = api_query(r, "device_type");
	f.submitter = api_query(r, "submitter");
	f.healths = health ? 1u << h : 0;
	f.limit = (unsigned)limit;
	f.before_id = before;
	f.after_id = after;
	list = json_array();
	err = store_job_list(api_deps_of(r)->store, &f, add_summary, list);
	if (err < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot list jobs: %s",
				       strerror(-err));
	}
	return api_reply_json(r, MHD_HTTP_OK, list);
}

/* ---- GET /jobs/{id} ---- */

struct counts {
	int pass, fail, skip, unknown;
};

static int count_result(const struct result_record *rec, void *ud)
{
	struct counts *c = ud;

	if (!strcmp(rec->result, "pass"))
		c->pass++;
	else if (!strcmp(rec->result, "fail"))
		c->fail++;
	else if (!strcmp(rec->result, "skip"))
		c->skip++;
	else
		c->unknown++;
	return 0;
}

/* Boot phases of the last attempt, from its "phase" events. */
static int add_phase(const struct event_record *ev, void *ud)
{
	if (!strcmp(ev->kind, "started"))
		json_array_clear(ud);
	else if (!strcmp(ev->kind, "phase"))
		json_array_append_new(ud, json_from_text(ev->data));
	return 0;
}

static json_t *job_phases(const struct api_deps *d, const struct job_record *rec)
{
	struct run *run = rec->state == JOB_STATE_FINISHED ? NULL : sched_run_of(d->sched, rec->id);
	json_t *phases = NULL;
	char *text;

	if (run) {
		text = run_phases_json(run);
		phases = text ? json_loads(text, 0, NULL) : NULL;
		free(text);
		if (phases)
			return phases;
	}
	phases = json_array();
	store_event_list(d->store, rec->id, 0, add_phase, phases);
	return phases;
}

/* The action a job running here runs now: {"index", "of", "name"}, or null. */
static json_t *job_action(const struct api_deps *d, const struct job_record *rec)
{
	struct sched_run_info info;

	if (rec->state != JOB_STATE_RUNNING || sched_run_info(d->sched, rec->id, &info) < 0 ||
	    !info.action)
		return json_null();
	return json_pack("{s:I, s:I, s:s}", "index", (json_int_t)info.action_index, "of",
			 (json_int_t)info.n_actions, "name", info.action);
}

enum MHD_Result api_jobs_show(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct job_record rec = { 0 };
	struct counts c = { 0 };
	enum MHD_Result ret;
	char *base;
	json_t *o;

	if (get_job(r, &rec, &ret) < 0)
		return ret;
	store_result_list(d->store, rec.id, count_result, &c);
	o = job_summary(&rec);
	json_object_set_new(o, "results", results_counts(c.pass, c.fail, c.skip, c.unknown));
	json_object_set_new(o, "retries_left", json_integer(rec.retries_left));
	json_object_set_new(o, "last_error", api_json_str(rec.last_error));
	json_object_set_new(o, "recovered", json_boolean(rec.recovered));
	json_object_set_new(o, "filename", api_json_str(rec.filename));
	json_object_set_new(o, "format", api_json_str(rec.format));
	json_object_set_new(o, "phases", job_phases(d, &rec));
	json_object_set_new(o, "waiting", rec.state == JOB_STATE_QUEUED ?
			    api_job_waiting(d, &rec) : json_null());
	json_object_set_new(o, "action", job_action(d, &rec));
	json_object_set_new(o, "definition", api_json_str(rec.definition));
	base = api_base_url(r);
	if (base)
		json_object_set_new(o, "log_url", json_sprintf("%s" API_PREFIX "/jobs/%lld/log",
								 base, (long long)rec.id));
	free(base);
	job_record_release(&rec);
	return api_reply_json(r, MHD_HTTP_OK, o);
}

/* ---- POST /jobs/{id}/cancel ---- */

/*
 * The answer to a cancel: the job of the path as it is now (an
 * api_answer_fn); read queued, it may have been started by another host
 * before the cancel was written, which the store then left alone
 * (store_job_finish()): that host cancels it, and answers.
 */
static enum MHD_Result reply_canceled(struct api_request *r, unsigned status, int64_t unused)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (get_job(r, &rec, &ret) < 0)
		return ret;
	ret = api_reply_canceled(r, &rec, status, job_summary(&rec));
	job_record_release(&rec);
	return ret;
}

enum MHD_Result api_jobs_cancel(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct job_record rec = { 0 };
	enum MHD_Result ret;
	char why[API_IDENTITY_MAX + 32], what[64];
	int err;

	if (api_forwarding(r))
		return api_forward_answer(r);	/* the host that runs it answered */
	if (get_job(r, &rec, &ret) < 0)
		return ret;
	/* ci users cancel their own jobs, admins any */
	snprintf(what, sizeof(what), "cancel job %s", r->params[0]);
	if (api_authorize_owner(r, rec.submitter, what) < 0) {
		job_record_release(&rec);
		return MHD_YES;
	}
	snprintf(why, sizeof(why), "canceled by %s", r->who.name);
	err = sched_cancel(d->sched, rec.id, why);
	if (err == -EREMOTE)	/* its run is on another host: that host cancels it */
		ret = api_job_forward(r, rec.id, rec.host);
	job_record_release(&rec);
	if (err == -EREMOTE)
		return ret;
	if (err == -EALREADY)
		return api_reply_error(r, MHD_HTTP_CONFLICT, "job %s already finished",
				       r->params[0]);
	if (err == -ENOENT)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no job %s", r->params[0]);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot cancel job %s: %s", r->params[0], strerror(-err));
	return api_answer_after(r, reply_canceled, MHD_HTTP_OK, 0);
}

/* ---- GET /jobs/{id}/events ---- */

static int add_event(const struct event_record *ev, void *ud)
{
	json_t *o = json_object();

	json_object_set_new(o, "seq", json_integer(ev->seq));
	json_object_set_new(o, "ts", api_time_json(ev->ts));
	json_object_set_new(o, "kind", api_json_str(ev->kind));
	json_object_set_new(o, "data", json_from_text(ev->data));
	return json_array_append_new(ud, o) ? -ENOMEM : 0;
}

enum MHD_Result api_jobs_events(struct api_request *r)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;
	int64_t after = 0;
	json_t *list;
	int err;

	if (api_query_int(r, "after", 0, INT64_MAX, &after) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'after' must be an event number");
	if (get_job(r, &rec, &ret) < 0)
		return ret;
	if (api_reply_gone(r, &rec, API_GONE_HISTORY, &ret)) {
		job_record_release(&rec);
		return ret;
	}
	list = json_array();
	err = store_event_list(api_deps_of(r)->store, rec.id, after, add_event, list);
	job_record_release(&rec);
	if (err < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read events: %s",
				       strerror(-err));
	}
	return api_reply_json(r, MHD_HTTP_OK, list);
}

/* ---- GET /jobs/{id}/results ---- */

static int add_result(const struct result_record *res, void *ud)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(res->id));
	json_object_set_new(o, "suite", api_json_str(res->suite));
	json_object_set_new(o, "name", api_json_str(res->name));
	json_object_set_new(o, "result", api_json_str(res->result));
	json_object_set_new(o, "measurement",
			    res->has_measurement ? json_real(res->measurement) : json_null());
	json_object_set_new(o, "units", api_json_str(res->units));
	json_object_set_new(o, "log_start", json_integer(res->log_start));
	json_object_set_new(o, "log_end", json_integer(res->log_end));
	json_object_set_new(o, "extra", json_from_text(res->extra));
	json_object_set_new(o, "created", api_time_json(res->created));
	return json_array_append_new(ud, o) ? -ENOMEM : 0;
}

enum MHD_Result api_jobs_results(struct api_request *r)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;
	json_t *list;
	int err;

	if (get_job(r, &rec, &ret) < 0)
		return ret;
	if (api_reply_gone(r, &rec, API_GONE_HISTORY, &ret)) {
		job_record_release(&rec);
		return ret;
	}
	list = json_array();
	err = store_result_list(api_deps_of(r)->store, rec.id, add_result, list);
	job_record_release(&rec);
	if (err < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read results: %s",
				       strerror(-err));
	}
	return api_reply_json(r, MHD_HTTP_OK, list);
}
