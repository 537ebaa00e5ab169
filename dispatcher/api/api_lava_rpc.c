// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_lava_rpc.c -- LAVA's XML-RPC API at /RPC2, as lavacli, Mesa's CI and squad call it
 *
 * xmlrpc-c parses each call and serializes each answer; labd's own HTTP
 * server and loop carry them: no thread, no XML written here.  labd calls
 * its methods itself (xmlrpc-c's registry answers the others:
 * system.listMethods ...), and runs the calls of a system.multicall one at
 * a time (struct rpc_multi).  Every method passes
 * the API's role check (api_check()) first; a refusal, like every error,
 * is a fault whose code is LAVA's: 400 bad data, 401 authentication
 * needed, 403 not allowed, 404 no such job.  Job ids come as strings from
 * lavacli and as integers from others: both are taken.
 *
 * Times are XML-RPC dateTime (whole seconds, UTC), logs base64 of LAVA's
 * YAML log (lava_log.h).  scheduler.jobs.logs answers at most
 * LAVA_RPC_LOG_MAX bytes of YAML per call and says `finished` only with
 * the last record of a finished job's log, so lavacli's loop reads a log
 * of any size in bounded pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xmlrpc-c/base.h>
#include <xmlrpc-c/server.h>

#include "api/api_lava_rpc.h"
#include "board/board.h"
#include "config/config.h"
#include "core/http_client.h"
#include "core/strv.h"
#include "results/lava_log.h"
#include "results/lava_results.h"
#include "results/utf8.h"

#define XML_TYPE "application/xml; charset=utf-8"

struct api_rpc {
	xmlrpc_registry *registry;
};

/* ---- values ---- */

/* A string as XML 1.0 allows it (what is not becomes U+FFFD); NULL is nil. */
xmlrpc_value *rpc_str(xmlrpc_env *env, const char *s)
{
	struct strbuf clean = STRBUF_INIT;
	xmlrpc_value *v;

	if (!s)
		return xmlrpc_nil_new(env);
	if (utf8_sanitize(s, strlen(s), UTF8_XML | UTF8_DROP_NUL, 0, &clean) < 0) {
		xmlrpc_faultf(env, "out of memory");
		return NULL;
	}
	v = xmlrpc_string_new_lp(env, clean.len, clean.buf);
	strbuf_release(&clean);
	return v;
}

xmlrpc_value *rpc_time(xmlrpc_env *env, uint64_t usec)
{
	return usec ? xmlrpc_datetime_new_sec(env, (time_t)(usec / 1000000)) : xmlrpc_nil_new(env);
}

/* @st[@key] = @v, the reference to @v given up. */
void rpc_put(xmlrpc_env *env, xmlrpc_value *st, const char *key, xmlrpc_value *v)
{
	if (!env->fault_occurred && v)
		xmlrpc_struct_set_value(env, st, key, v);
	if (v)
		xmlrpc_DECREF(v);
}

/* The value, or NULL and no fault-less leak: what methods return. */
xmlrpc_value *rpc_done(xmlrpc_env *env, xmlrpc_value *v)
{
	if (env->fault_occurred && v) {
		xmlrpc_DECREF(v);
		return NULL;
	}
	return v;
}

/* ---- parameters ---- */

/* Parameter @i: a new reference, or NULL when absent or nil. */
xmlrpc_value *rpc_param(xmlrpc_env *env, xmlrpc_value *params, int i)
{
	xmlrpc_value *v = NULL;

	if (xmlrpc_array_size(env, params) <= i)
		return NULL;
	xmlrpc_array_read_item(env, params, i, &v);
	if (v && xmlrpc_value_type(v) == XMLRPC_TYPE_NIL) {
		xmlrpc_DECREF(v);
		v = NULL;
	}
	return v;
}

/* Parameter @i as an integer (sent as one, or as its text): 1, 0 when absent, or -EINVAL. */
int rpc_param_int(xmlrpc_env *env, xmlrpc_value *params, int i, int64_t *ret)
{
	xmlrpc_value *v = rpc_param(env, params, i);
	const char *text = NULL;
	int n = 0, err = -EINVAL;

	if (!v)
		return 0;
	if (xmlrpc_value_type(v) == XMLRPC_TYPE_INT) {
		xmlrpc_read_int(env, v, &n);
		*ret = n;
		err = n >= 0 ? 1 : -EINVAL;
	} else if (xmlrpc_value_type(v) == XMLRPC_TYPE_STRING) {
		xmlrpc_read_string(env, v, &text);
		err = text && api_lava_job_id(text, ret) == 0 ? 1 : -EINVAL;
		if (text && !strcmp(text, "0")) {
			*ret = 0;
			err = 1;
		}
		free((char *)text);
	}
	xmlrpc_DECREF(v);
	return env->fault_occurred ? -EINVAL : err;
}

/* Parameter @i as a string (caller frees): 0, or a fault 400. */
int rpc_param_str(xmlrpc_env *env, xmlrpc_value *params, int i, const char *name,
		     char **ret, size_t *ret_len)
{
	xmlrpc_value *v = rpc_param(env, params, i);
	const char *s = NULL;
	size_t len = 0;

	if (v && xmlrpc_value_type(v) == XMLRPC_TYPE_STRING)
		xmlrpc_read_string_lp(env, v, &len, &s);
	if (v)
		xmlrpc_DECREF(v);
	if (!s) {
		if (!env->fault_occurred)
			xmlrpc_env_set_fault_formatted(env, 400, "'%s' must be a string", name);
		return -EINVAL;
	}
	*ret = (char *)s;
	if (ret_len)
		*ret_len = len;
	return 0;
}

int rpc_param_opt_str(xmlrpc_env *env, xmlrpc_value *params, int i, const char *name,
		      char **ret)
{
	xmlrpc_value *v = rpc_param(env, params, i);

	*ret = NULL;
	if (!v)
		return env->fault_occurred ? -EINVAL : 0;
	xmlrpc_DECREF(v);
	return rpc_param_str(env, params, i, name, ret, NULL);
}

bool rpc_param_bool(xmlrpc_env *env, xmlrpc_value *params, int i)
{
	xmlrpc_value *v = rpc_param(env, params, i);
	xmlrpc_bool b = 0;

	if (v && xmlrpc_value_type(v) == XMLRPC_TYPE_BOOL)
		xmlrpc_read_bool(env, v, &b);
	else if (v && xmlrpc_value_type(v) == XMLRPC_TYPE_INT) {
		int n = 0;

		xmlrpc_read_int(env, v, &n);
		b = n != 0;
	}
	if (v)
		xmlrpc_DECREF(v);
	return b;
}

void rpc_append(xmlrpc_env *env, xmlrpc_value *a, xmlrpc_value *v)
{
	if (!env->fault_occurred && v)
		xmlrpc_array_append_item(env, a, v);
	if (v)
		xmlrpc_DECREF(v);
}

/* The job named by parameter @i: 0, or a fault (400 not an id, 404 no such job). */
int rpc_param_job(xmlrpc_env *env, xmlrpc_value *params, int i, struct api_request *r,
		     struct job_record *rec)
{
	int64_t id = 0;
	int err = rpc_param_int(env, params, i, &id);

	if (err <= 0 || id < 1) {
		if (!env->fault_occurred)
			xmlrpc_env_set_fault(env, 404, "Job was not found.");
		return -EINVAL;
	}
	err = api_lava_job(r, id, rec);
	if (err == -ENOENT)
		xmlrpc_env_set_fault_formatted(env, 404, "Job '%lld' was not found.",
					       (long long)id);
	else if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot read job %lld: %s", (long long)id,
					       strerror(-err));
	return err;
}

/* ---- system ---- */

static xmlrpc_value *system_version(xmlrpc_env *env, xmlrpc_value *params,
				    struct api_request *r)
{
	return xmlrpc_string_new(env, LAVA_API_VERSION);
}

static xmlrpc_value *system_whoami(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	return r->who.is_user ? rpc_str(env, r->who.name) : xmlrpc_nil_new(env);
}

/* ---- jobs ---- */

static xmlrpc_value *jobs_submit(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	char *def = NULL, *why = NULL;
	int64_t id = 0;
	size_t len;
	int err;

	if (rpc_param_str(env, params, 0, "definition", &def, &len) < 0)
		return NULL;
	err = api_lava_submit(r, def, len, &id, &why);
	free(def);
	if (err == -EINVAL || err == -E2BIG)
		xmlrpc_env_set_fault_formatted(env, 400, "Problem with submitted job data: %s",
					       why ? why : "invalid job");
	else if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "job submission failed: %s",
					       why ? why : strerror(-err));
	free(why);
	return err < 0 ? NULL : xmlrpc_int_new(env, (int)id);
}

/* {} when valid, else {path, msg} (Mesa checks it before submitting). */
static xmlrpc_value *jobs_validate(xmlrpc_env *env, xmlrpc_value *params,
				   struct api_request *r)
{
	char *def = NULL, *why = NULL;
	xmlrpc_value *st;
	size_t len;
	int err;

	if (rpc_param_str(env, params, 0, "definition", &def, &len) < 0)
		return NULL;
	err = api_lava_check(r, def, len, &why);
	free(def);
	st = xmlrpc_struct_new(env);
	if (err) {
		rpc_put(env, st, "path", xmlrpc_string_new(env, ""));
		rpc_put(env, st, "msg", rpc_str(env, why ? why : strerror(-err)));
	}
	free(why);
	return rpc_done(env, st);
}

static xmlrpc_value *tags_value(xmlrpc_env *env, const struct job_record *rec)
{
	json_t *tags = api_lava_tags(rec), *t;
	xmlrpc_value *a = xmlrpc_array_new(env), *v;
	size_t i;

	json_array_foreach(tags, i, t) {
		v = rpc_str(env, json_string_value(t));
		if (v && !env->fault_occurred)
			xmlrpc_array_append_item(env, a, v);
		if (v)
			xmlrpc_DECREF(v);
	}
	json_decref(tags);
	return a;
}

/* What scheduler.jobs.show and scheduler.job_details share. */
static void job_common(xmlrpc_env *env, xmlrpc_value *st, const struct job_record *rec)
{
	const char *type = rec->health == JOB_HEALTH_CANCELED ? "Canceled" :
			   lava_error_type_name(rec->error_type);

	rpc_put(env, st, "id", xmlrpc_int_new(env, (int)rec->id));
	rpc_put(env, st, "description", rpc_str(env, rec->name));
	rpc_put(env, st, "health_check", xmlrpc_bool_new(env, 0));
	rpc_put(env, st, "state", xmlrpc_string_new(env, lava_job_state_name(rec->state)));
	rpc_put(env, st, "health", xmlrpc_string_new(env, lava_job_health_name(rec->health)));
	rpc_put(env, st, "submit_time", rpc_time(env, rec->submitted));
	rpc_put(env, st, "start_time", rpc_time(env, rec->started));
	rpc_put(env, st, "end_time", rpc_time(env, rec->ended));
	rpc_put(env, st, "failure_comment", rpc_str(env, rec->error_msg));
	rpc_put(env, st, "error_msg", rpc_str(env, rec->error_msg));
	rpc_put(env, st, "error_type", rpc_str(env, type));
}

/* Every key lavacli's `jobs show` prints. */
static xmlrpc_value *jobs_show(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_record rec = { 0 };
	xmlrpc_value *st;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	st = xmlrpc_struct_new(env);
	job_common(env, st, &rec);
	rpc_put(env, st, "device", rpc_str(env, rec.device));
	rpc_put(env, st, "device_type", rpc_str(env, rec.device_type));
	rpc_put(env, st, "pipeline", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "submitter", rpc_str(env, rec.submitter));
	rpc_put(env, st, "tags", tags_value(env, &rec));
	rpc_put(env, st, "visibility", xmlrpc_string_new(env, "Public"));
	job_record_release(&rec);
	return rpc_done(env, st);
}

/* The legacy TestJob dict squad reads: status, start_time, end_time, definition. */
static xmlrpc_value *job_details(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_record rec = { 0 };
	xmlrpc_value *st;
	char url[64];

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	snprintf(url, sizeof(url), "/scheduler/job/%lld", (long long)rec.id);
	st = xmlrpc_struct_new(env);
	job_common(env, st, &rec);
	rpc_put(env, st, "status", xmlrpc_string_new(env, lava_job_status_name(
							       lava_job_status(rec.state, rec.health))));
	rpc_put(env, st, "submitter_username", rpc_str(env, rec.submitter));
	rpc_put(env, st, "absolute_url", xmlrpc_string_new(env, url));
	rpc_put(env, st, "is_pipeline", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "definition", rpc_str(env, rec.definition));
	rpc_put(env, st, "original_definition", rpc_str(env, rec.definition));
	rpc_put(env, st, "multinode_definition", xmlrpc_string_new(env, ""));
	rpc_put(env, st, "requested_device_type_id", rpc_str(env, rec.device_type));
	rpc_put(env, st, "actual_device_id", rpc_str(env, rec.device));
	rpc_put(env, st, "priority", xmlrpc_int_new(env, rec.priority));
	job_record_release(&rec);
	return rpc_done(env, st);
}

static xmlrpc_value *jobs_definition(xmlrpc_env *env, xmlrpc_value *params,
				     struct api_request *r)
{
	struct job_record rec = { 0 };
	xmlrpc_value *v;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	v = rpc_str(env, rec.definition);
	job_record_release(&rec);
	return v;
}

static xmlrpc_value *job_state(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_record rec = { 0 };
	xmlrpc_value *v;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	v = xmlrpc_build_value(env, "{s:i,s:s}", "job_id", (int)rec.id, "job_state",
			       lava_job_state_name(rec.state));
	job_record_release(&rec);
	return v;
}

static xmlrpc_value *job_health(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_record rec = { 0 };
	xmlrpc_value *v;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	v = xmlrpc_build_value(env, "{s:i,s:s}", "job_id", (int)rec.id, "job_health",
			       lava_job_health_name(rec.health));
	job_record_release(&rec);
	return v;
}

/*
 * What the call of a method did, in r->ctx while it runs: the host a job to
 * cancel runs on, or the job it canceled read queued (another host may have
 * started it meanwhile: read back).  A call of its own is then sent as it
 * is to that host's /RPC2 (api_job_forward()), whose answer is the answer;
 * so is each such call of a system.multicall (struct rpc_multi).
 */
struct rpc_call_state {
	char *elsewhere;	/* the host, or NULL */
	int64_t id;		/* the job it runs */
	int64_t canceled;	/* a job read queued and canceled here, or 0 */
};

/*
 * A system.multicall, run here one call at a time (not by xmlrpc-c, which
 * runs them all in one go), each call in a read context of its own
 * (api_answer_after(), api_answer_afresh()): a call whose reads go to the
 * database, or that waits for a job id (none left ahead), is run again
 * alone once the answers are in, never the calls before it, which acted
 * once.  A cancel of a job another host runs, or started before the
 * cancel's end was written (read back in a step of its own), is sent to
 * that host as a call of its own (api_forward_call()): its answer is the
 * call's.
 */
struct rpc_multi {
	struct rpc_call_state cs;	/* of the call running */
	xmlrpc_value *calls;		/* [{methodName, params}] */
	unsigned n, next;		/* how many, the one to run */
	xmlrpc_value *answers;		/* of the calls before next */
	int64_t canceled;		/* call next canceled this job read queued: read back */
	char *host;			/* call next is sent to this host, which runs its job */
	struct forward *fwd;		/* ... and is there */
	int err;			/* an answer could not be kept (-ENOMEM) */
};

static void rpc_call_state_free(void *ctx)
{
	struct rpc_call_state *cs = ctx;

	free(cs->elsewhere);
	free(cs);
}

static void rpc_multi_free(void *ctx)
{
	struct rpc_multi *m = ctx;

	api_forward_call_cancel(m->fwd);
	if (m->calls)
		xmlrpc_DECREF(m->calls);
	if (m->answers)
		xmlrpc_DECREF(m->answers);
	free(m->cs.elsewhere);
	free(m->host);
	free(m);
}

static struct rpc_call_state *call_state(struct api_request *r)
{
	if (r->ctx_free == rpc_multi_free)
		return &((struct rpc_multi *)r->ctx)->cs;
	return r->ctx_free == rpc_call_state_free ? r->ctx : NULL;
}

/* Job @rec runs on another host: remember it; the fault is the answer unless forwarded. */
static void cancel_elsewhere(xmlrpc_env *env, struct api_request *r, const struct job_record *rec)
{
	struct rpc_call_state *cs = call_state(r);

	if (cs && !api_forwarded(r) && !cs->elsewhere) {
		cs->elsewhere = strdup(rec->host);
		cs->id = rec->id;
	}
	xmlrpc_env_set_fault_formatted(env, 409,
				       "job %lld runs on host '%s' of this lab: cancel it through "
				       "that host, or alone in a call", (long long)rec->id,
				       rec->host);
}

static xmlrpc_value *jobs_cancel(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_record rec = { 0 };
	struct api_denial d;
	int err;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	err = api_lava_cancel(r, &rec, &d);
	if (err == -EREMOTE)
		cancel_elsewhere(env, r, &rec);
	else if (!err && rec.state == JOB_STATE_QUEUED && call_state(r))
		call_state(r)->canceled = rec.id;	/* a host may have started it: read back */
	job_record_release(&rec);
	if (err == -EREMOTE)
		;	/* the fault is set */
	else if (err == -EACCES)
		xmlrpc_env_set_fault(env, (int)d.status, d.msg);
	else if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot cancel: %s", strerror(-err));
	return err < 0 ? NULL : xmlrpc_bool_new(env, 1);
}

/* [start, end) of the YAML log, at most LAVA_RPC_LOG_MAX bytes of it. */
static int read_log(struct api_request *r, const struct job_record *rec, int64_t start,
		    int64_t end, struct strbuf *out, bool *finished)
{
	bool complete = rec->state == JOB_STATE_FINISHED;
	char *dir = api_lava_job_dir(r, rec->id);
	char **suites = api_lava_suites(r, rec->id);
	struct lava_log *lg = NULL;
	long n = 0;
	int err;

	err = dir ? lava_log_open(dir, suites, complete, &lg) : -ENOMEM;
	if (!err)
		err = lava_log_seek(lg, (uint64_t)start);
	if (!err && (!end || end > start))
		n = lava_log_read(lg, LAVA_RPC_LOG_MAX, end ? (uint64_t)(end - start) : 0, out);
	if (n < 0)
		err = (int)n;
	*finished = complete && lg && (lava_log_at_end(lg) || (end && start + n >= end));
	lava_log_close(lg);
	strv_free(suites);
	free(dir);
	return err;
}

/* scheduler.jobs.logs(id, start=0, end=None) -> [finished, base64 YAML] */
static xmlrpc_value *jobs_logs(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_record rec = { 0 };
	struct strbuf yaml = STRBUF_INIT;
	int64_t start = 0, end = 0;
	xmlrpc_value *v = NULL;
	bool finished = false;
	char gone[256];
	int err;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	if (rpc_param_int(env, params, 1, &start) < 0 || rpc_param_int(env, params, 2, &end) < 0) {
		xmlrpc_env_set_fault(env, 400, "'start' and 'end' must be line numbers");
		goto out;
	}
	if (api_gone_text(&rec, API_GONE_LOG, gone, sizeof(gone))) {
		xmlrpc_env_set_fault(env, MHD_HTTP_GONE, gone);
		goto out;
	}
	err = read_log(r, &rec, start, end, &yaml, &finished);
	if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot read the log: %s", strerror(-err));
	else
		v = xmlrpc_build_value(env, "(b6)", (xmlrpc_bool)finished,
				       (const unsigned char *)yaml.buf, yaml.len);
out:
	strbuf_release(&yaml);
	job_record_release(&rec);
	return v;
}

/* ---- results ---- */

/* The results of the job of parameter 0; or a fault. */
static struct lava_results *results_of(xmlrpc_env *env, xmlrpc_value *params,
				       struct api_request *r)
{
	struct job_record rec = { 0 };
	struct lava_results *lr = NULL;
	int err;

	char gone[256];

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	if (api_gone_text(&rec, API_GONE_HISTORY, gone, sizeof(gone))) {
		xmlrpc_env_set_fault(env, MHD_HTTP_GONE, gone);
		job_record_release(&rec);
		return NULL;
	}
	err = api_lava_results(r, rec.id, &lr);
	job_record_release(&rec);
	if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot read results: %s", strerror(-err));
	return lr;
}

static xmlrpc_value *yaml_value(xmlrpc_env *env, int err, struct strbuf *yaml)
{
	xmlrpc_value *v = NULL;

	if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot write results: %s", strerror(-err));
	else
		v = xmlrpc_string_new_lp(env, yaml->len, yaml->buf);	/* ASCII: yaml_out.h */
	strbuf_release(yaml);
	return v;
}

/* The job's cases as export dicts (@suites false), or its suites [{name, job, id}]. */
static xmlrpc_value *testjob_yaml(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r,
				  bool suites)
{
	struct lava_results *lr = results_of(env, params, r);
	struct strbuf yaml = STRBUF_INIT;
	int err;

	if (!lr)
		return NULL;
	err = suites ? lava_results_suites_yaml(lr, &yaml) :
		       lava_results_export_yaml(lr, -1, 0, 0, &yaml);
	lava_results_free(lr);
	return yaml_value(env, err, &yaml);
}

static xmlrpc_value *testjob_results(xmlrpc_env *env, xmlrpc_value *params,
				     struct api_request *r)
{
	return testjob_yaml(env, params, r, false);
}

static xmlrpc_value *testjob_suites(xmlrpc_env *env, xmlrpc_value *params,
				    struct api_request *r)
{
	return testjob_yaml(env, params, r, true);
}

/* get_testsuite_results_yaml(id, suite, limit=None, offset=None); squad pages by 500. */
static xmlrpc_value *testsuite_results(xmlrpc_env *env, xmlrpc_value *params,
				       struct api_request *r)
{
	struct strbuf yaml = STRBUF_INIT;
	struct lava_results *lr;
	int64_t limit = 0, offset = 0;
	char *suite = NULL;
	long s;
	int err;

	if (rpc_param_str(env, params, 1, "suite", &suite, NULL) < 0)
		return NULL;
	if (rpc_param_int(env, params, 2, &limit) < 0 || rpc_param_int(env, params, 3, &offset) < 0) {
		free(suite);
		xmlrpc_env_set_fault(env, 400, "'limit' and 'offset' must be counts");
		return NULL;
	}
	lr = results_of(env, params, r);
	s = lr ? lava_results_suite(lr, suite) : -1;
	if (lr && s < 0)
		xmlrpc_env_set_fault_formatted(env, 404, "Suite '%s' was not found.", suite);
	free(suite);
	if (s < 0) {
		lava_results_free(lr);
		return NULL;
	}
	err = lava_results_export_yaml(lr, s, (size_t)offset, (size_t)limit, &yaml);
	lava_results_free(lr);
	return yaml_value(env, err, &yaml);
}

/* get_testcase_results_yaml(id, suite, case): the cases of that name in the suite. */
static xmlrpc_value *testcase_results(xmlrpc_env *env, xmlrpc_value *params,
				      struct api_request *r)
{
	struct strbuf yaml = STRBUF_INIT;
	struct lava_results *lr = NULL;
	char *suite = NULL, *name = NULL;
	long s = -1;
	int err = 0;

	if (rpc_param_str(env, params, 1, "suite", &suite, NULL) < 0 ||
	    rpc_param_str(env, params, 2, "case", &name, NULL) < 0)
		goto out;
	lr = results_of(env, params, r);
	s = lr ? lava_results_suite(lr, suite) : -1;
	if (lr && s < 0)
		xmlrpc_env_set_fault_formatted(env, 404, "Suite '%s' was not found.", suite);
	if (s < 0)
		goto out;
	err = lava_results_case_yaml(lr, s, name, &yaml);
	if (err == -ENOENT) {
		xmlrpc_env_set_fault_formatted(env, 404, "Test case '%s' was not found in suite '%s'.",
					       name, suite);
		strbuf_release(&yaml);
	}
out:
	free(suite);
	free(name);
	lava_results_free(lr);
	return env->fault_occurred ? NULL : yaml_value(env, err, &yaml);
}

/* ---- the registry ---- */

static const struct rpc_method methods[] = {
	{ "system.version", USER_ROLE_NONE, "ask", system_version },
	{ "system.whoami", USER_ROLE_NONE, "ask", system_whoami },
	{ "scheduler.jobs.submit", USER_ROLE_CI, "submit jobs", jobs_submit },
	{ "scheduler.submit_job", USER_ROLE_CI, "submit jobs", jobs_submit },
	{ "scheduler.jobs.validate", USER_ROLE_READER, "validate jobs", jobs_validate },
	{ "scheduler.jobs.show", USER_ROLE_READER, "read jobs", jobs_show },
	{ "scheduler.job_details", USER_ROLE_READER, "read jobs", job_details },
	{ "scheduler.jobs.definition", USER_ROLE_READER, "read jobs", jobs_definition },
	{ "scheduler.job_state", USER_ROLE_READER, "read jobs", job_state },
	{ "scheduler.job_health", USER_ROLE_READER, "read jobs", job_health },
	{ "scheduler.jobs.logs", USER_ROLE_READER, "read logs", jobs_logs },
	{ "scheduler.jobs.cancel", USER_ROLE_CI, "cancel jobs", jobs_cancel },
	{ "scheduler.cancel_job", USER_ROLE_CI, "cancel jobs", jobs_cancel },
	{ "results.get_testjob_results_yaml", USER_ROLE_READER, "read results",
	  testjob_results },
	{ "results.get_testjob_suites_list_yaml", USER_ROLE_READER, "read results",
	  testjob_suites },
	{ "results.get_testsuite_results_yaml", USER_ROLE_READER, "read results",
	  testsuite_results },
	{ "results.get_testcase_results_yaml", USER_ROLE_READER, "read results",
	  testcase_results },
};

/* Every method: the role check, then the method. */
static xmlrpc_value *dispatch(xmlrpc_env *env, xmlrpc_value *params, void *server_info,
			      void *call_info)
{
	const struct rpc_method *m = server_info;
	struct api_request *r = call_info;
	struct api_denial d;

	if (api_check(r, m->role, m->what, &d) < 0) {
		xmlrpc_env_set_fault(env, (int)d.status, d.msg);
		return NULL;
	}
	return m->fn(env, params, r);
}

/* Add the methods of @table to @registry. */
static void add_methods(xmlrpc_env *env, xmlrpc_registry *registry,
			const struct rpc_method *table, size_t n)
{
	size_t i;

	for (i = 0; !env->fault_occurred && i < n; i++) {
		struct xmlrpc_method_info3 info = {
			.methodName = table[i].name,
			.methodFunction = dispatch,
			.serverInfo = (void *)&table[i],
		};

		xmlrpc_registry_add_method3(env, registry, &info);
	}
}

/* The entry of method @name in the tables, or NULL (xmlrpc-c's own: system.listMethods ...). */
static const struct rpc_method *find_method(const char *name)
{
	static const struct {
		const struct rpc_method *table;
		const size_t *n;
	} tables[] = {
		{ api_rpc_lab_methods, &api_rpc_lab_n_methods },
		{ api_rpc_jobs_methods, &api_rpc_jobs_n_methods },
	};
	size_t i, t;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(methods[i].name, name))
			return &methods[i];
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (i = 0; i < *tables[t].n; i++)
			if (!strcmp(tables[t].table[i].name, name))
				return &tables[t].table[i];
	return NULL;
}

int api_rpc_new(struct api_rpc **ret)
{
	struct api_rpc *rpc = calloc(1, sizeof(*rpc));
	xmlrpc_env env;

	if (!rpc)
		return -ENOMEM;
	xmlrpc_env_init(&env);
	/* the HTTP server already bounds the body: let the parser take all of it */
	xmlrpc_limit_set(XMLRPC_XML_SIZE_LIMIT_ID, API_MAX_BODY);
	rpc->registry = xmlrpc_registry_new(&env);
	add_methods(&env, rpc->registry, methods, sizeof(methods) / sizeof(methods[0]));
	add_methods(&env, rpc->registry, api_rpc_lab_methods, api_rpc_lab_n_methods);
	add_methods(&env, rpc->registry, api_rpc_jobs_methods, api_rpc_jobs_n_methods);
	if (env.fault_occurred) {
		xmlrpc_env_clean(&env);
		api_rpc_free(rpc);
		return -ENOMEM;
	}
	xmlrpc_env_clean(&env);
	*ret = rpc;
	return 0;
}

struct api_rpc *api_rpc_free(struct api_rpc *rpc)
{
	if (!rpc)
		return NULL;
	if (rpc->registry)
		xmlrpc_registry_free(rpc->registry);
	free(rpc);
	return NULL;
}

/* ---- HTTP ---- */

static void free_block(void *cls)
{
	xmlrpc_mem_block_free(cls);
}

static struct MHD_Response *xml_response(xmlrpc_mem_block *out)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer_with_free_callback_cls(
		xmlrpc_mem_block_size(out), xmlrpc_mem_block_contents(out), free_block, out);
	if (!resp) {
		xmlrpc_mem_block_free(out);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, XML_TYPE);
	return resp;
}

struct MHD_Response *api_rpc_fault_response(int code, const char *msg)
{
	xmlrpc_env env, fault;
	xmlrpc_mem_block *out;
	struct strbuf clean = STRBUF_INIT;

	xmlrpc_env_init(&env);
	xmlrpc_env_init(&fault);
	if (utf8_sanitize(msg, strlen(msg), UTF8_XML | UTF8_DROP_NUL, 0, &clean) < 0)
		return NULL;
	xmlrpc_env_set_fault(&fault, code, clean.buf);
	strbuf_release(&clean);
	out = XMLRPC_MEMBLOCK_NEW(char, &env, 0);
	if (!env.fault_occurred)
		xmlrpc_serialize_fault(&env, out, &fault);
	xmlrpc_env_clean(&fault);
	if (env.fault_occurred) {
		if (out)
			xmlrpc_mem_block_free(out);
		xmlrpc_env_clean(&env);
		return NULL;
	}
	return xml_response(out);
}

/* @v (its reference given up), or the fault in @env, as an answer's XML; NULL: out of memory. */
static xmlrpc_mem_block *answer_xml(const xmlrpc_env *env, xmlrpc_value *v)
{
	xmlrpc_mem_block *out;
	xmlrpc_env e;

	xmlrpc_env_init(&e);
	out = XMLRPC_MEMBLOCK_NEW(char, &e, 0);
	if (!e.fault_occurred && env->fault_occurred)
		xmlrpc_serialize_fault(&e, out, env);
	else if (!e.fault_occurred && v)
		xmlrpc_serialize_response(&e, out, v);
	if (v)
		xmlrpc_DECREF(v);
	if (e.fault_occurred && out)
		xmlrpc_mem_block_free(out);
	if (e.fault_occurred)
		out = NULL;
	xmlrpc_env_clean(&e);
	return out;
}

/* The answer of a call that returned true: <boolean>1</boolean>. */
static struct MHD_Response *true_response(void)
{
	xmlrpc_mem_block *out;
	xmlrpc_env env;

	xmlrpc_env_init(&env);
	out = answer_xml(&env, xmlrpc_bool_new(&env, 1));
	xmlrpc_env_clean(&env);
	return out ? xml_response(out) : NULL;
}

/*
 * The answer to a call that canceled job @id, read queued (an
 * api_answer_fn): the job read back after the write; a host that started
 * it meanwhile (the store left it to that host) is sent the call.
 */
static enum MHD_Result canceled_answer(struct api_request *r, unsigned status, int64_t id)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (api_lava_job(r, id, &rec) == 0 && api_lava_runs_elsewhere(r, &rec))
		ret = api_job_forward(r, id, rec.host);
	else
		ret = api_reply(r, status, true_response());
	job_record_release(&rec);
	return ret;
}

static void drop_call_state(struct api_request *r)
{
	r->ctx_free(r->ctx);
	r->ctx = NULL;
	r->ctx_free = NULL;
}

/*
 * The answer made after a call of its own ran (struct rpc_call_state): sent
 * as it is to the host that runs the job it cancels, or, for a job read
 * queued and canceled, once it is read back.  True with @ret the answer
 * (@out freed); false: @out is the answer.
 */
static bool call_answer(struct api_request *r, xmlrpc_mem_block *out, enum MHD_Result *ret)
{
	struct rpc_call_state *cs = call_state(r);
	int64_t id = cs ? cs->id : 0, canceled = cs ? cs->canceled : 0;
	char *host = cs ? cs->elsewhere : NULL;

	if (!cs)
		return false;
	cs->elsewhere = NULL;
	drop_call_state(r);	/* the forward takes r->ctx */
	if (store_read_pending(api_deps_of(r)->store) || (!host && !canceled)) {
		free(host);
		return false;
	}
	if (out)
		xmlrpc_mem_block_free(out);
	*ret = host ? api_job_forward(r, id, host) :
		      api_answer_after(r, canceled_answer, MHD_HTTP_OK, canceled);
	free(host);
	return true;
}

/* ---- calls ---- */

/*
 * The answer @xml: 0 with its value in @ret (a new reference), or with
 * NULL and its fault in @env; -EINVAL when it is no XML-RPC answer (what
 * xmlrpc-c parsed of it, it freed).
 */
static int parse_answer(xmlrpc_env *env, const char *xml, size_t len, xmlrpc_value **ret)
{
	const char *fault = NULL;
	xmlrpc_value *v = NULL;
	int code = 0, err = 0;
	xmlrpc_env e;

	*ret = NULL;
	xmlrpc_env_init(&e);
	xmlrpc_parse_response2(&e, xml, len, &v, &code, &fault);
	if (e.fault_occurred)
		err = -EINVAL;
	else if (fault)
		xmlrpc_env_set_fault(env, code, fault);
	else
		*ret = v;
	if (!err)
		free((char *)fault);
	xmlrpc_env_clean(&e);
	return err;
}

/* A method xmlrpc-c answers itself (system.listMethods ...), or none: through its registry. */
static xmlrpc_value *call_registry(xmlrpc_env *env, struct api_request *r, const char *name,
				   xmlrpc_value *params)
{
	xmlrpc_mem_block *call = XMLRPC_MEMBLOCK_NEW(char, env, 0), *out = NULL;
	xmlrpc_value *v = NULL;

	if (!env->fault_occurred)
		xmlrpc_serialize_call2(env, call, name, params, xmlrpc_dialect_i8);
	if (!env->fault_occurred)
		xmlrpc_registry_process_call2(env, api_rpc_of(r)->registry,
					      xmlrpc_mem_block_contents(call),
					      xmlrpc_mem_block_size(call), r, &out);
	if (!env->fault_occurred && parse_answer(env, xmlrpc_mem_block_contents(out),
						 xmlrpc_mem_block_size(out), &v) < 0)
		xmlrpc_env_set_fault(env, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot call it");
	if (out)
		xmlrpc_mem_block_free(out);
	if (call)
		xmlrpc_mem_block_free(call);
	return v;
}

/* Method @name called with @params: its value, or a fault in @env. */
static xmlrpc_value *call_one(xmlrpc_env *env, struct api_request *r, const char *name,
			      xmlrpc_value *params)
{
	const struct rpc_method *m = find_method(name);

	if (m)
		return dispatch(env, params, (void *)m, r);
	return call_registry(env, r, name, params);
}

/* ---- system.multicall (struct rpc_multi) ---- */

static struct rpc_multi *multi_of(struct api_request *r)
{
	return r->ctx_free == rpc_multi_free ? r->ctx : NULL;
}

/* Call next answered @v (its reference given up) or the fault in @env: [v] or the fault struct. */
static void multi_answer(struct rpc_multi *m, const xmlrpc_env *env, xmlrpc_value *v)
{
	xmlrpc_value *entry;
	xmlrpc_env e;

	xmlrpc_env_init(&e);
	if (env->fault_occurred)
		entry = xmlrpc_build_value(&e, "{s:i,s:s}", "faultCode", env->fault_code,
					   "faultString", env->fault_string);
	else
		entry = xmlrpc_build_value(&e, "(V)", v);
	if (!e.fault_occurred)
		xmlrpc_array_append_item(&e, m->answers, entry);
	if (e.fault_occurred)
		m->err = -ENOMEM;
	if (entry)
		xmlrpc_DECREF(entry);
	if (v)
		xmlrpc_DECREF(v);
	xmlrpc_env_clean(&e);
	m->next++;
}

/* Call next's method and parameters (references), or a fault in @env (both left NULL). */
static void multi_call_of(xmlrpc_env *env, struct rpc_multi *m, const char **name,
			  xmlrpc_value **params)
{
	xmlrpc_value *call = NULL, *p = NULL;
	const char *n = NULL;

	xmlrpc_array_read_item(env, m->calls, m->next, &call);
	if (!env->fault_occurred && xmlrpc_value_type(call) != XMLRPC_TYPE_STRUCT)
		xmlrpc_env_set_fault(env, XMLRPC_TYPE_ERROR, "a call of system.multicall must be "
				     "a struct {methodName, params}");
	/* what it decomposed before a fault, it freed: only a whole call is taken */
	if (!env->fault_occurred)
		xmlrpc_decompose_value(env, call, "{s:s,s:A,*}", "methodName", &n, "params", &p);
	if (!env->fault_occurred) {
		*name = n;
		*params = p;
	}
	if (!env->fault_occurred && !strcmp(*name, "system.multicall"))
		xmlrpc_env_set_fault(env, XMLRPC_REQUEST_REFUSED_ERROR,
				     "Recursive system.multicall forbidden");
	if (call)
		xmlrpc_DECREF(call);
}

/* Run call next; a cancel its job's host answers, or read back, is for the next steps. */
static void multi_call(struct api_request *r, struct rpc_multi *m)
{
	xmlrpc_value *params = NULL, *v = NULL;
	const char *name = NULL;
	xmlrpc_env env;

	free(m->cs.elsewhere);
	memset(&m->cs, 0, sizeof(m->cs));
	xmlrpc_env_init(&env);
	multi_call_of(&env, m, &name, &params);
	if (!env.fault_occurred)
		v = call_one(&env, r, name, params);
	if (store_read_pending(api_lava_store(r))) {
		if (v)
			xmlrpc_DECREF(v);	/* acted on nothing: run again with the answers */
	} else if (m->cs.elsewhere) {
		m->host = m->cs.elsewhere;	/* its fault is not the answer: that host's is */
		m->cs.elsewhere = NULL;
		if (v)
			xmlrpc_DECREF(v);
	} else if (m->cs.canceled) {
		m->canceled = m->cs.canceled;
		if (v)
			xmlrpc_DECREF(v);
	} else {
		multi_answer(m, &env, v);
	}
	if (params)
		xmlrpc_DECREF(params);
	free((char *)name);
	xmlrpc_env_clean(&env);
}

/* Job m->canceled, canceled by call next, read back: still this host's, or sent on. */
static void multi_read_back(struct api_request *r, struct rpc_multi *m)
{
	struct job_record rec = { 0 };
	xmlrpc_env env;
	int err;

	xmlrpc_env_init(&env);
	err = api_lava_job(r, m->canceled, &rec);
	if (store_read_pending(api_lava_store(r)))
		goto out;
	if (!err && api_lava_runs_elsewhere(r, &rec) && !api_forwarded(r)) {
		m->host = strdup(rec.host);
		if (!m->host)
			m->err = -ENOMEM;
	} else if (!err && api_lava_runs_elsewhere(r, &rec)) {
		xmlrpc_env_set_fault_formatted(&env, MHD_HTTP_CONFLICT,
					       "job %lld runs on host '%s' of this lab, not on the "
					       "host asked: try again", (long long)rec.id, rec.host);
		multi_answer(m, &env, NULL);
	} else {
		multi_answer(m, &env, xmlrpc_bool_new(&env, 1));
	}
	m->canceled = 0;
out:
	job_record_release(&rec);
	xmlrpc_env_clean(&env);
}

/* The answer of m->host to call next (api_call_done_fn): the call's answer. */
static void multi_forwarded(struct api_request *r, const struct http_response *resp, void *ud)
{
	struct rpc_multi *m = ud;
	xmlrpc_value *v = NULL;
	xmlrpc_env env;

	m->fwd = NULL;
	xmlrpc_env_init(&env);
	if (resp->err)
		xmlrpc_env_set_fault_formatted(&env, MHD_HTTP_BAD_GATEWAY,
					       "host '%s' did not answer: %s", m->host,
					       resp->error ? resp->error : strerror(-resp->err));
	else if (parse_answer(&env, resp->body, resp->body_len, &v) < 0)
		xmlrpc_env_set_fault_formatted(&env, MHD_HTTP_BAD_GATEWAY, "host '%s' answered "
					       "HTTP %ld, not XML-RPC", m->host, resp->status);
	multi_answer(m, &env, v);
	xmlrpc_env_clean(&env);
	free(m->host);
	m->host = NULL;
	api_resume(r);
}

/* Call next could not be sent to m->host (@err): its answer says why. */
static void multi_not_sent(struct rpc_multi *m, int err)
{
	xmlrpc_env env;

	xmlrpc_env_init(&env);
	if (err == -ENOTCONN)
		xmlrpc_env_set_fault(&env, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "the store is not reachable: try again");
	else if (err == -ENOENT)
		xmlrpc_env_set_fault_formatted(&env, MHD_HTTP_BAD_GATEWAY, "host '%s' of this lab "
					       "has no API address (store.url)", m->host);
	else
		xmlrpc_env_set_fault_formatted(&env, MHD_HTTP_INTERNAL_SERVER_ERROR,
					       "cannot ask host '%s': %s", m->host, strerror(-err));
	multi_answer(m, &env, NULL);
	xmlrpc_env_clean(&env);
	free(m->host);
	m->host = NULL;
}

/* Send call next to m->host: 1 (the request waits for its answer), or 0 (answered, or again). */
static int multi_forward(struct api_request *r, struct rpc_multi *m)
{
	xmlrpc_value *params = NULL;
	xmlrpc_mem_block *call;
	const char *name = NULL;
	xmlrpc_env env;
	int err = -ENOMEM;

	xmlrpc_env_init(&env);
	multi_call_of(&env, m, &name, &params);	/* read before: valid */
	call = env.fault_occurred ? NULL : XMLRPC_MEMBLOCK_NEW(char, &env, 0);
	if (call)
		xmlrpc_serialize_call2(&env, call, name, params, xmlrpc_dialect_i8);
	if (call && !env.fault_occurred)
		err = api_forward_call(r, m->host, xmlrpc_mem_block_contents(call),
				       xmlrpc_mem_block_size(call), multi_forwarded, m, &m->fwd);
	if (call)
		xmlrpc_mem_block_free(call);
	if (params)
		xmlrpc_DECREF(params);
	free((char *)name);
	xmlrpc_env_clean(&env);
	if (!err) {
		MHD_suspend_connection(r->conn);
		return 1;
	}
	if (!store_read_pending(api_lava_store(r)))
		multi_not_sent(m, err);
	return 0;
}

/* One step of call next: sent on, read back, or run.  1: the request waits for another host. */
static int multi_step(struct api_request *r, struct rpc_multi *m)
{
	if (m->host)
		return multi_forward(r, m);
	if (m->canceled)
		multi_read_back(r, m);
	else
		multi_call(r, m);
	return 0;
}

/*
 * The multicall's answer (an api_answer_fn): its calls run from m->next on,
 * each step in a read context of its own; a step whose reads went to the
 * database is the one run again once they are in.
 */
static enum MHD_Result multicall_run(struct api_request *r, unsigned status, int64_t id)
{
	struct rpc_multi *m = multi_of(r);
	xmlrpc_mem_block *out;
	int waits = 0;
	xmlrpc_env env;

	if (!m || m->fwd)
		return MHD_YES;	/* resumed for nothing: the other host did not answer yet */
	while (m->next < m->n && !waits && !m->err) {
		waits = multi_step(r, m);
		if (store_read_pending(api_lava_store(r)))
			return MHD_YES;	/* this step again, with its answers */
		api_answer_afresh(r);
	}
	if (waits)
		return MHD_YES;
	if (m->err)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	xmlrpc_env_init(&env);
	xmlrpc_INCREF(m->answers);
	out = answer_xml(&env, m->answers);
	xmlrpc_env_clean(&env);
	if (!out)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return api_reply(r, status, xml_response(out));
}

/* system.multicall(@params): its calls run one at a time (struct rpc_multi). */
static enum MHD_Result multicall_start(struct api_request *r, xmlrpc_value *params)
{
	struct rpc_multi *m = calloc(1, sizeof(*m));
	xmlrpc_value *calls = NULL;
	enum MHD_Result ret;
	xmlrpc_env env;

	if (!m)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	xmlrpc_env_init(&env);
	xmlrpc_decompose_value(&env, params, "(A)", &calls);
	if (!env.fault_occurred)
		m->calls = calls;	/* not before: a failed decomposition freed it */
	if (!env.fault_occurred)
		m->n = (unsigned)xmlrpc_array_size(&env, m->calls);
	if (!env.fault_occurred)
		m->answers = xmlrpc_array_new(&env);
	if (env.fault_occurred) {
		rpc_multi_free(m);
		ret = api_reply(r, MHD_HTTP_OK, xml_response(answer_xml(&env, NULL)));
		xmlrpc_env_clean(&env);
		return ret;
	}
	xmlrpc_env_clean(&env);
	r->ctx = m;
	r->ctx_free = rpc_multi_free;
	return api_answer_after(r, multicall_run, MHD_HTTP_OK, 0);
}

/* ---- HTTP ---- */

/* A call of method @name (or the fault in @env, its XML's): answered, or sent on. */
static enum MHD_Result call_single(struct api_request *r, xmlrpc_env *env, const char *name,
				   xmlrpc_value *params)
{
	xmlrpc_mem_block *out;
	enum MHD_Result ret;
	xmlrpc_value *v = NULL;

	r->ctx = calloc(1, sizeof(struct rpc_call_state));
	r->ctx_free = r->ctx ? rpc_call_state_free : NULL;
	if (!env->fault_occurred)
		v = call_one(env, r, name, params);
	out = answer_xml(env, v);
	if (call_answer(r, out, &ret))
		return ret;
	if (!out)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return api_reply(r, MHD_HTTP_OK, xml_response(out));
}

/* POST /RPC2 (also /RPC2/ and //RPC2): one call, answered with 200 and a result or a fault. */
static enum MHD_Result rpc_call(struct api_request *r)
{
	xmlrpc_value *params = NULL;
	const char *name = NULL;
	enum MHD_Result ret;
	xmlrpc_env env;

	if (api_forwarding(r))
		return api_forward_answer(r);	/* the host that runs the job answered */
	if (!r->body.len)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "empty XML-RPC call");
	xmlrpc_env_init(&env);
	xmlrpc_parse_call(&env, r->body.buf, r->body.len, &name, &params);
	if (!env.fault_occurred && !strcmp(name, "system.multicall"))
		ret = multicall_start(r, params);
	else
		ret = call_single(r, &env, name, params);
	if (params)
		xmlrpc_DECREF(params);
	free((char *)name);
	xmlrpc_env_clean(&env);
	return ret;
}

const struct api_route api_lava_rpc_routes[] = {
	{ "POST", "/RPC2", USER_ROLE_READER, rpc_call, "call XML-RPC methods" },
	{ NULL, NULL, 0, NULL, NULL },
};
