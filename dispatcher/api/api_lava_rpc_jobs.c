// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_lava_rpc_jobs.c -- LAVA's XML-RPC job lists and resubmissions: what
 * `lavacli jobs list`, `jobs queue`, `jobs resubmit` and `jobs config` call
 *
 * scheduler.jobs.list(state, health, start, limit, since, verbose): newest
 * first, LAVA's state and health names in upper case as filters (SUBMITTED,
 * RUNNING, CANCELING, FINISHED; UNKNOWN, COMPLETE, INCOMPLETE, CANCELED),
 * at most LAVA_RPC_LIST_MAX jobs; `since` keeps the jobs that ended in the
 * last that many minutes.  scheduler.jobs.queue(device_types, start, limit):
 * the queued jobs in the order boards take them (priority, then age).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/api_lava_rpc.h"
#include "core/strv.h"
#include "results/lava_results.h"

#define LAVA_RPC_LIST_MAX 100		/* jobs of one scheduler.jobs.list, as LAVA caps it */
#define LAVA_RPC_QUEUE_MAX 1000		/* queued jobs read for one scheduler.jobs.queue */
#define LAVA_RPC_SINCE_SCAN 10000	/* jobs looked at for one list with `since` */

/* Python's str() of an aware UTC datetime, as LAVA's verbose list gives times; "None". */
static xmlrpc_value *py_time(xmlrpc_env *env, uint64_t usec)
{
	char buf[96];
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;

	if (!usec)
		return xmlrpc_string_new(env, "None");
	gmtime_r(&t, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%06u+00:00",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(usec % 1000000));
	return xmlrpc_string_new(env, buf);
}

/*
 * LAVA's upper-case state name as a job filter: 0, 1 when no job of labd's
 * is in that state (LAVA's multinode Scheduling, Scheduled), or a fault.
 */
static int state_filter(xmlrpc_env *env, const char *name, int *ret)
{
	static const struct { const char *lava; int state; } states[] = {
		{ "SUBMITTED", JOB_STATE_QUEUED }, { "SCHEDULING", -1 }, { "SCHEDULED", -1 },
		{ "RUNNING", JOB_STATE_RUNNING }, { "CANCELING", JOB_STATE_CANCELING },
		{ "FINISHED", JOB_STATE_FINISHED },
	};
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (!strcasecmp(name, states[i].lava)) {
			*ret = states[i].state;
			return states[i].state < 0 ? 1 : 0;
		}
	xmlrpc_env_set_fault_formatted(env, 400, "Invalid state '%s'", name);
	return -EINVAL;
}

static int health_filter(xmlrpc_env *env, const char *name, unsigned *ret)
{
	static const char *const healths[] = { "UNKNOWN", "COMPLETE", "INCOMPLETE", "CANCELED" };
	enum job_health h;

	for (h = JOB_HEALTH_UNKNOWN; h <= JOB_HEALTH_CANCELED; h++)
		if (!strcasecmp(name, healths[h])) {
			*ret = 1u << h;
			return 0;
		}
	xmlrpc_env_set_fault_formatted(env, 400, "Invalid health '%s'", name);
	return -EINVAL;
}

struct job_list {
	xmlrpc_env *env;
	xmlrpc_value *list;
	bool verbose;
	uint64_t ended_after;	/* `since`: realtime usec, or 0 */
	int64_t skip;		/* `start` */
	int64_t left;		/* `limit` */
	int64_t last_id;	/* the cursor of the next read */
	bool none;		/* the filters match no job */
	size_t seen;
};

static int add_job(const struct job_record *rec, void *ud)
{
	struct job_list *l = ud;
	xmlrpc_env *env = l->env;
	xmlrpc_value *st;

	l->last_id = rec->id;
	l->seen++;
	if (l->ended_after && rec->ended <= l->ended_after)
		return 0;
	if (l->skip > 0 || l->left <= 0) {
		l->skip--;
		return 0;
	}
	l->left--;
	st = xmlrpc_struct_new(env);
	rpc_put(env, st, "id", xmlrpc_int_new(env, (int)rec->id));
	rpc_put(env, st, "description", rpc_str(env, rec->name));
	rpc_put(env, st, "device_type", rpc_str(env, rec->device_type));
	rpc_put(env, st, "health", xmlrpc_string_new(env, lava_job_health_name(rec->health)));
	rpc_put(env, st, "state", xmlrpc_string_new(env, lava_job_state_name(rec->state)));
	rpc_put(env, st, "submitter", rpc_str(env, rec->submitter));
	if (l->verbose) {
		rpc_put(env, st, "actual_device", rpc_str(env, rec->device));
		rpc_put(env, st, "start_time", py_time(env, rec->started));
		rpc_put(env, st, "end_time", py_time(env, rec->ended));
		rpc_put(env, st, "error_msg", rpc_str(env, rec->error_msg));
		rpc_put(env, st, "error_type", rpc_str(env, rec->health == JOB_HEALTH_CANCELED ?
							  "Canceled" :
							  lava_error_type_name(rec->error_type)));
	}
	rpc_append(env, l->list, st);
	return 0;
}

/* The filters of scheduler.jobs.list's parameters into @f and @l: 0 or a fault. */
static int list_params(xmlrpc_env *env, xmlrpc_value *params, struct job_filter *f,
		       struct job_list *l, uint64_t now)
{
	char *state = NULL, *health = NULL;
	int64_t limit = 25, since = 0;
	int err;

	err = rpc_param_opt_str(env, params, 0, "state", &state);
	if (!err)
		err = rpc_param_opt_str(env, params, 1, "health", &health);
	if (!err && state && state_filter(env, state, &f->state) > 0)
		l->none = true;
	err = env->fault_occurred ? -EINVAL : err;
	if (!err && health)
		err = health_filter(env, health, &f->healths);
	free(state);
	free(health);
	if (!err && (rpc_param_int(env, params, 2, &l->skip) < 0 ||
		     rpc_param_int(env, params, 3, &limit) < 0 ||
		     rpc_param_int(env, params, 4, &since) < 0)) {
		xmlrpc_env_set_fault(env, 400, "'start', 'limit' and 'since' must be counts");
		err = -EINVAL;
	}
	l->left = limit < LAVA_RPC_LIST_MAX ? limit : LAVA_RPC_LIST_MAX;
	l->ended_after = since ? now - (uint64_t)since * 60 * 1000000 : 0;
	l->verbose = rpc_param_bool(env, params, 5);
	return err;
}

static xmlrpc_value *jobs_list(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_filter f = { .state = -1 };
	struct job_list l = { .env = env };
	int err;

	if (list_params(env, params, &f, &l, api_lava_now(r)) < 0)
		return NULL;
	l.list = xmlrpc_array_new(env);
	if (l.none || l.left <= 0)
		return l.list;
	do {	/* with `since`, past the jobs that ended earlier, a page at a time */
		size_t before = l.seen;

		f.limit = (unsigned)(l.ended_after ? LAVA_RPC_LIST_MAX : l.skip + l.left);
		f.before_id = l.last_id;
		err = store_job_list(api_lava_store(r), &f, add_job, &l);
		if (err < 0 || l.seen - before < f.limit)
			break;
	} while (l.ended_after && l.left > 0 && l.seen < LAVA_RPC_SINCE_SCAN);
	if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot list jobs: %s", strerror(-err));
	return rpc_done(env, l.list);
}

/* ---- the queue ---- */

struct queued {
	struct job_record *recs;
	size_t n, cap;
	char **types;		/* only these device types, or NULL: all */
};

static int keep_queued(const struct job_record *rec, void *ud)
{
	struct queued *q = ud;
	struct job_record *grown;

	if (q->types && !strv_contains(q->types, rec->device_type))
		return 0;
	if (q->n == q->cap) {
		grown = realloc(q->recs, (q->cap ? 2 * q->cap : 64) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		q->recs = grown;
		q->cap = q->cap ? 2 * q->cap : 64;
	}
	q->recs[q->n++] = (struct job_record){
		.id = rec->id, .priority = rec->priority, .submitted = rec->submitted,
		.name = rec->name ? strdup(rec->name) : NULL,
		.device_type = rec->device_type ? strdup(rec->device_type) : NULL,
		.submitter = rec->submitter ? strdup(rec->submitter) : NULL,
	};
	return 0;
}

/* The order boards take queued jobs in: priority, then age. */
static int by_turn(const void *a, const void *b)
{
	const struct job_record *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->submitted != y->submitted)
		return x->submitted < y->submitted ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Parameter 0 of scheduler.jobs.queue: a list of device type names, or nil. */
static int queue_types(xmlrpc_env *env, xmlrpc_value *params, char ***ret)
{
	xmlrpc_value *v = rpc_param(env, params, 0), *item;
	const char *s;
	int i, n;

	if (!v)
		return 0;
	n = xmlrpc_value_type(v) == XMLRPC_TYPE_ARRAY ? xmlrpc_array_size(env, v) : -1;
	for (i = 0; i < n && !env->fault_occurred; i++) {
		xmlrpc_array_read_item(env, v, i, &item);
		if (env->fault_occurred)
			break;
		if (xmlrpc_value_type(item) == XMLRPC_TYPE_STRING) {
			xmlrpc_read_string(env, item, &s);
			strv_push(ret, s);
			free((char *)s);
		} else {
			n = -1;
		}
		xmlrpc_DECREF(item);
	}
	xmlrpc_DECREF(v);
	if (n < 0 && !env->fault_occurred)
		xmlrpc_env_set_fault(env, 400, "'device_types' must be a list of names");
	return env->fault_occurred ? -EINVAL : 0;
}

static xmlrpc_value *queue_value(xmlrpc_env *env, const struct queued *q, int64_t start,
				 int64_t limit)
{
	xmlrpc_value *list = xmlrpc_array_new(env), *st;
	size_t i;

	for (i = (size_t)start; i < q->n && limit-- > 0; i++) {
		st = xmlrpc_struct_new(env);
		rpc_put(env, st, "id", xmlrpc_int_new(env, (int)q->recs[i].id));
		rpc_put(env, st, "description", rpc_str(env, q->recs[i].name));
		rpc_put(env, st, "requested_device_type", rpc_str(env, q->recs[i].device_type));
		rpc_put(env, st, "submitter", rpc_str(env, q->recs[i].submitter));
		rpc_put(env, st, "submit_time", rpc_time(env, q->recs[i].submitted));
		rpc_put(env, st, "priority", xmlrpc_int_new(env, q->recs[i].priority));
		rpc_append(env, list, st);
	}
	return list;
}

static xmlrpc_value *jobs_queue(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct job_filter f = { .state = JOB_STATE_QUEUED, .limit = LAVA_RPC_QUEUE_MAX };
	struct queued q = { 0 };
	xmlrpc_value *v = NULL;
	int64_t start = 0, limit = 100;
	size_t i;
	int err;

	if (queue_types(env, params, &q.types) < 0)
		return NULL;
	if (rpc_param_int(env, params, 1, &start) < 0 || rpc_param_int(env, params, 2, &limit) < 0)
		xmlrpc_env_set_fault(env, 400, "'start' and 'limit' must be counts");
	err = env->fault_occurred ? 0 : store_job_list(api_lava_store(r), &f, keep_queued, &q);
	if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 500, "cannot read the queue: %s",
					       strerror(-err));
	if (!env->fault_occurred) {
		if (q.n)
			qsort(q.recs, q.n, sizeof(*q.recs), by_turn);
		v = queue_value(env, &q, start, limit);
	}
	for (i = 0; i < q.n; i++)
		job_record_release(&q.recs[i]);
	free(q.recs);
	strv_free(q.types);
	return rpc_done(env, v);
}

/* ---- resubmit, config ---- */

/* scheduler.jobs.resubmit(id): the job's definition again, by the caller. */
static xmlrpc_value *jobs_resubmit(xmlrpc_env *env, xmlrpc_value *params,
				   struct api_request *r)
{
	struct job_record rec = { 0 };
	char *why = NULL;
	int64_t id = 0;
	int err;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	err = rec.definition ? api_lava_submit(r, rec.definition, strlen(rec.definition), &id,
					       &why) : -ENOENT;
	if (err == -ENOENT)
		xmlrpc_env_set_fault_formatted(env, 404, "Job '%lld' has no definition.",
					       (long long)rec.id);
	else if (err < 0)
		xmlrpc_env_set_fault_formatted(env, 400, "Problem with submitted job data: %s",
					       why ? why : strerror(-err));
	free(why);
	job_record_release(&rec);
	return err < 0 ? NULL : xmlrpc_int_new(env, (int)id);
}

/*
 * scheduler.jobs.configuration(id): [definition, device, dispatcher, env,
 * env.dut]; labd has no device dictionary, dispatcher or environment files
 * (nil: lavacli writes none of them).
 */
static xmlrpc_value *jobs_configuration(xmlrpc_env *env, xmlrpc_value *params,
					struct api_request *r)
{
	struct job_record rec = { 0 };
	xmlrpc_value *a;
	int i;

	if (rpc_param_job(env, params, 0, r, &rec) < 0)
		return NULL;
	a = xmlrpc_array_new(env);
	rpc_append(env, a, rpc_str(env, rec.definition ? rec.definition : ""));
	for (i = 0; i < 4; i++)
		rpc_append(env, a, xmlrpc_nil_new(env));
	job_record_release(&rec);
	return rpc_done(env, a);
}

const struct rpc_method api_rpc_jobs_methods[] = {
	{ "scheduler.jobs.list", USER_ROLE_READER, "list jobs", jobs_list },
	{ "scheduler.jobs.queue", USER_ROLE_READER, "read the queue", jobs_queue },
	{ "scheduler.jobs.resubmit", USER_ROLE_CI, "submit jobs", jobs_resubmit },
	{ "scheduler.resubmit_job", USER_ROLE_CI, "submit jobs", jobs_resubmit },
	{ "scheduler.jobs.configuration", USER_ROLE_READER, "read jobs", jobs_configuration },
};

const size_t api_rpc_jobs_n_methods = sizeof(api_rpc_jobs_methods) / sizeof(api_rpc_jobs_methods[0]);
