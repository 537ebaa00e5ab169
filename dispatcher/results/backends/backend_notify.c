// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * backend_notify.c -- the jobs' own notify callbacks, delivered like results
 *
 * Always there (named "notify"), whatever the `backends` list says: a job
 * whose definition has a `notify` block (job.h) gets each of its callbacks
 * when it reaches the criteria's status: `running` when it starts,
 * `finished` when it ends, `complete`, `incomplete` or `canceled` when it
 * ends so, `all` at both.  A callback is a record of this backend's spool
 * (<state_dir>/spool/notify), delivered by upload.h: one request per
 * callback, retried with backoff while the receiver is down or answers
 * 5xx, 408 or 429, given up (and reported) on another 4xx, sent exactly
 * once across restarts of labd.  The body (lava_notify.h) is read from the
 * store when the callback is due, without waiting in the loop
 * (store_read_later()), and spooled with it, so sending reads nothing from
 * the store: it is the job as it was when the callback was due, as LAVA
 * sends it.  Only the log, large, goes in when it is sent, read from disk.
 * A callback an older labd spooled without its body has it read when it is
 * sent, also without waiting: the request is composed once the answers are
 * in (old_body()).
 *
 * The request: the callback's method; its URL with LAVA's {FIELD}
 * placeholders filled; the token in the callback's header
 * ("Authorization" by default), with no "Token " prefix, as LAVA sends it.
 * As in LAVA a job's token is a *name*: labd.conf may map names to the
 * secrets sent (then only the name is stored with the job),
 *
 *	notify = { tokens = { kernelci-callback = "s3cr3t"; }; retry_max_ms = 60000; };
 *
 * and a name it does not map is sent as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "job/job.h"
#include "journal/events.h"
#include "results/backends/backend.h"
#include "results/backends/spool.h"
#include "results/backends/upload.h"
#include "results/lava_notify.h"
#include "results/lava_results.h"
#include "results/report.h"
#include "store/store.h"

#define NOTIFY_SPOOL_MAX (256ULL << 20)
#define NOTIFY_HEADER_MAX 1100

struct notify_backend {
	struct backend b;
	json_t *tokens;		/* name -> secret, from labd.conf */
	uint64_t retry_max_ms;
	uint64_t spool_max;
	struct spool *sp;
	struct upload *up;
	/*
	 * The bodies of callbacks an older labd spooled without one, read as
	 * they are sent (old_body()): "<job>/<results>" -> true while their
	 * reads are on their way, the body once in, false when they failed.
	 */
	json_t *old_bodies;
	/*
	 * Jobs started here without callbacks (their parsed job said so):
	 * "<job>" -> true until their "finished", which then reads nothing.
	 */
	json_t *quiet;
	bool composing;		/* in compose() */
	/* the request being composed */
	char *url;
	const char *method;
	char type_header[64];
	char token_header[NOTIFY_HEADER_MAX];
	const char *headers[3];
};

static const char *const notify_keys[] = { "tokens", "retry_max_ms", "spool_max", NULL };

static struct notify_backend *to_notify(struct backend *b)
{
	return (struct notify_backend *)b;
}

/* ---- events: which callbacks a job's status change calls ---- */

static bool wanted(enum notify_status want, const char *kind, const char *health)
{
	if (!strcmp(kind, "started"))
		return want == NOTIFY_RUNNING || want == NOTIFY_ALL;
	if (want == NOTIFY_FINISHED || want == NOTIFY_ALL)
		return true;
	return (want == NOTIFY_COMPLETE && !strcmp(health, "complete")) ||
	       (want == NOTIFY_INCOMPLETE && !strcmp(health, "incomplete")) ||
	       (want == NOTIFY_CANCELED && !strcmp(health, "canceled"));
}

static const char *dataset_name(enum notify_dataset d)
{
	static const char *const names[] = { "minimal", "logs", "results", "all" };

	return names[d];
}

static bool wants_results(const struct job_callback *cb)
{
	return cb->dataset == NOTIFY_DATASET_RESULTS || cb->dataset == NOTIFY_DATASET_ALL;
}

/*
 * What the body of a job's callbacks carries, read from the store when they
 * are spooled: its fields (lava_notify_data()) and, when one wants them, its
 * results.  The log is not there: read from disk when sent (it is large).
 */
struct due_body {
	json_t *data;
	json_t *results;	/* or NULL */
};

/*
 * A callback spooled: where and how it is sent, and its body but the log.
 * The body is kept in the spool so that sending it reads nothing from the
 * store (on PostgreSQL that would wait in the loop), and a restarted labd
 * sends the same.
 */
static int spool_callback(struct notify_backend *nb, int64_t id, const struct job_callback *cb,
			  const struct due_body *db)
{
	json_t *rec = json_pack("{s:I, s:s, s:s, s:s?, s:s, s:s, s:b, s:O, s:O?}", "job",
				(json_int_t)id, "url", cb->url, "method", cb->post ? "POST" : "GET",
				"token", cb->token, "header", cb->header ? cb->header : "Authorization",
				"dataset", dataset_name(cb->dataset), "json", cb->json,
				"data", db->data, "results", wants_results(cb) ? db->results : NULL);
	char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
	int err = text ? upload_append(nb->up, text, strlen(text)) : -ENOMEM;

	free(text);
	json_decref(rec);
	return err;
}

/* A job started or ended: what its callbacks want of it (store_read_later()). */
struct notify_due {
	struct notify_backend *nb;
	int64_t job_id;
	char kind[16];		/* "started" or "finished" */
	char *health;		/* "finished": the job's health, or NULL */
	bool spooled;		/* so a run after it (callback_data() read) spools none again */
};

static void due_free(void *userdata)
{
	struct notify_due *d = userdata;

	free(d->health);
	free(d);
}

/* The results of job @id, as a callback carries them; NULL if it has none. */
static json_t *read_results(struct backend *b, int64_t id)
{
	struct lava_results *lr = NULL;
	struct report *rep = NULL;
	char *dir = backend_job_dir(b, id);
	json_t *results = NULL;

	if (dir && report_load(b->deps->store, backend_config(b), id, NULL, &rep) == 0 &&
	    lava_results_build(rep, dir, &lr) == 0)
		results = lava_results_callback(lr);
	lava_results_free(lr);
	report_free(rep);
	free(dir);
	return results;
}

/* The body of @job's callbacks: reads the store, whose answers may be pending. */
static int read_body(struct notify_due *d, const struct job_record *rec, const struct job *job,
		     struct due_body *db)
{
	size_t i;

	db->data = lava_notify_data(rec, job->metadata, NULL, NULL);
	if (!db->data)
		return -ENOMEM;
	for (i = 0; i < job->notify.n_callbacks; i++)
		if (wants_results(&job->notify.callbacks[i]))
			break;
	if (i < job->notify.n_callbacks)
		db->results = read_results(&d->nb->b, d->job_id);
	return 0;
}

/* Spool @job's callbacks with body @db, or report that @err (< 0) kept them from it. */
static void spool_all(struct notify_due *d, const struct job *job, const struct due_body *db,
		      int err)
{
	struct backend *b = &d->nb->b;
	size_t i, n = 0;

	for (i = 0; i < job->notify.n_callbacks; i++) {
		const struct job_callback *cb = &job->notify.callbacks[i];
		int r = err < 0 ? err : spool_callback(d->nb, d->job_id, cb, db);

		if (r < 0)
			backend_report(b, d->job_id, "cannot spool the callback to '%s': %s",
				       cb->url, strerror(-r));
		else
			n++;
	}
	if (n)
		upload_kick(d->nb->up);
}

/* Spool the job's callbacks due now; nothing in a run whose reads went to the database. */
static void spool_due(void *userdata)
{
	struct notify_due *d = userdata;
	struct store *st = d->nb->b.deps->store;
	struct job_record rec = { 0 };
	struct due_body db = { 0 };
	struct job *job = NULL;
	int err;

	if (store_job_get(st, d->job_id, &rec) == 0)
		job = report_parse_job(&rec);
	if (job && job->has_notify && !d->spooled &&
	    wanted(job->notify.status, d->kind, d->health ? d->health : "")) {
		err = read_body(d, &rec, job, &db);
		if (!store_read_pending(st)) {
			d->spooled = true;
			spool_all(d, job, &db, err);
		}
	}
	json_decref(db.data);
	json_decref(db.results);
	job_free(job);
	job_record_release(&rec);
}

/*
 * Whether job @id has no callbacks, known without a read: its run here
 * says so as it starts, and that is remembered until it finishes.  Every
 * job's start and end would otherwise read the job and parse its
 * definition again, callbacks or not.
 */
static bool quiet_job(struct notify_backend *nb, const struct event *ev)
{
	const struct backends_deps *deps = nb->b.deps;
	const struct job *job;
	char key[24];

	snprintf(key, sizeof(key), "%lld", (long long)ev->job_id);
	if (!strcmp(ev->kind, "finished")) {
		if (!json_object_get(nb->quiet, key))
			return false;
		json_object_del(nb->quiet, key);
		return true;
	}
	job = deps->running_job ? deps->running_job(ev->job_id, deps->userdata) : NULL;
	if (!job || job->has_notify)
		return false;
	/* no memory to remember it: its end reads the job, as before */
	json_object_set_new(nb->quiet, key, json_true());
	return true;
}

/* The job is read without waiting in the loop: its callbacks are spooled once it is in. */
static void notify_event(struct backend *b, const struct event *ev)
{
	const char *health = json_string_value(json_object_get(ev->data, "health"));
	struct notify_due *d;

	if (strcmp(ev->kind, "started") && strcmp(ev->kind, "finished"))
		return;
	if (quiet_job(to_notify(b), ev))
		return;
	d = calloc(1, sizeof(*d));
	if (!d || (health && !(d->health = strdup(health)))) {
		backend_report(b, ev->job_id, "cannot look for the job's callbacks: %s",
			       strerror(ENOMEM));
		free(d);
		return;
	}
	d->nb = to_notify(b);
	d->job_id = ev->job_id;
	snprintf(d->kind, sizeof(d->kind), "%s", ev->kind);
	store_read_later(b->deps->store, d->nb, spool_due, due_free, d);
}

/* ---- sending: one callback per request, its body built now ---- */

struct composing {
	struct notify_backend *nb;
	struct strbuf *body;
	int err;
};

/*
 * A callback an older labd spooled without its body (spool_callback()):
 * its job, and its results when @results, read when it is sent, in a read
 * context (store_read_later()) so that the loop does not wait for them.
 */
struct old_read {
	struct notify_backend *nb;
	int64_t id;
	bool results;
	char key[32];		/* in nb->old_bodies */
};

/* Read the body; once every answer is in, keep it (or false) for compose(). */
static void old_body_run(void *userdata)
{
	struct old_read *o = userdata;
	struct store *st = o->nb->b.deps->store;
	struct job_record rec = { 0 };
	json_t *body = NULL, *results = NULL, *data = NULL;
	struct job *job = NULL;
	int r = store_job_get(st, o->id, &rec);

	if (!r)
		job = report_parse_job(&rec);
	if (!r && o->results)
		results = read_results(&o->nb->b, o->id);
	if (store_read_pending(st))
		goto out;
	if (r == -ENOENT)	/* the job is gone: its id only, as an older labd sent it */
		body = json_pack("{s:{s:I}, s:b}", "data", "id", (json_int_t)o->id, "gone", 1);
	else if (!r && (data = lava_notify_data(&rec, job ? job->metadata : NULL, NULL, NULL)))
		body = json_pack("{s:o, s:O?}", "data", data, "results", results);
	json_object_set_new(o->nb->old_bodies, o->key, body ? body : json_false());
out:
	json_decref(results);
	job_free(job);
	job_record_release(&rec);
}

/* Its reads are done (or dropped): the callback can be composed again. */
static void old_body_done(void *userdata)
{
	struct old_read *o = userdata;
	struct notify_backend *nb = o->nb;

	free(o);
	if (nb->up && !nb->composing)
		upload_kick(nb->up);
}

/*
 * The body of callback record @id (@results: its dataset has them) that an
 * older labd spooled without it: 0 and a reference in *@ret once read,
 * -EAGAIN while its reads are on their way (upload_kick() once they are
 * in), another negative errno when they failed (read again the next time).
 */
static int old_body(struct notify_backend *nb, int64_t id, bool results, json_t **ret)
{
	struct old_read *o;
	json_t *v;
	char key[32];

	snprintf(key, sizeof(key), "%lld/%d", (long long)id, results);
	if (!json_object_get(nb->old_bodies, key)) {
		o = calloc(1, sizeof(*o));
		if (!o || json_object_set_new(nb->old_bodies, key, json_true()) < 0) {
			free(o);
			return -ENOMEM;
		}
		*o = (struct old_read){ nb, id, results, "" };
		snprintf(o->key, sizeof(o->key), "%s", key);
		store_read_later(nb->b.deps->store, nb, old_body_run, old_body_done, o);
	}
	v = json_object_get(nb->old_bodies, key);
	if (json_is_true(v))
		return -EAGAIN;
	*ret = json_is_object(v) ? json_incref(v) : NULL;
	json_object_del(nb->old_bodies, key);	/* read again if sent again */
	return *ret ? 0 : -EIO;
}

/*
 * The body of callback record @rec in *@ret: the one spooled with it
 * (spool_callback()), or read now for a record an older labd spooled
 * (old_body(): may be -EAGAIN), with the job's log read from disk now when
 * the dataset has it.
 */
static int callback_body(struct notify_backend *nb, json_t *rec, json_t **ret)
{
	int64_t id = json_integer_value(json_object_get(rec, "job"));
	const char *dataset = json_string_value(json_object_get(rec, "dataset")) ?: "";
	bool logs = !strcmp(dataset, "logs") || !strcmp(dataset, "all");
	json_t *data = json_object_get(rec, "data"), *results = json_object_get(rec, "results");
	json_t *old = NULL, *body = NULL;
	char *dir;
	int r = 0;

	if (!json_is_object(data)) {
		r = old_body(nb, id, !strcmp(dataset, "results") || !strcmp(dataset, "all"), &old);
		if (r < 0)
			return r;
		data = json_object_get(old, "data");
		results = json_object_get(old, "results");
		logs = logs && !json_is_true(json_object_get(old, "gone"));
	}
	body = json_incref(data);	/* @rec is dropped once composed */
	if (logs) {
		dir = backend_job_dir(&nb->b, id);
		if (!dir || lava_notify_add_log(body, dir) < 0)
			r = -ENOMEM;
		free(dir);
	}
	if (!r && json_is_object(results) && json_object_set(body, "results", results) < 0)
		r = -ENOMEM;
	json_decref(old);
	if (r < 0)
		json_decref(body);
	else
		*ret = body;
	return r;
}

/* The token's secret: the one labd.conf maps its name to, else the name. */
static const char *token_value(struct notify_backend *nb, const char *name)
{
	const char *v = json_string_value(json_object_get(nb->tokens, name));

	return v ? v : name;
}

static int compose_one(const void *data, size_t len, void *ud)
{
	struct composing *cp = ud;
	struct notify_backend *nb = cp->nb;
	json_t *rec = json_loadb(data, len, 0, NULL), *body = NULL;
	const char *token = json_string_value(json_object_get(rec, "token"));
	bool is_json = json_is_true(json_object_get(rec, "json"));
	char *text = NULL;
	int err = rec ? callback_body(nb, rec, &body) : -ENOMEM;

	free(nb->url);
	nb->url = body ? lava_notify_url(json_string_value(json_object_get(rec, "url")), body) : NULL;
	nb->method = !strcmp(json_string_value(json_object_get(rec, "method")) ?: "", "POST") ?
		     "POST" : "GET";
	snprintf(nb->type_header, sizeof(nb->type_header), "Content-Type: %s",
		 is_json ? "application/json" : "application/x-www-form-urlencoded");
	snprintf(nb->token_header, sizeof(nb->token_header), "%s: %s",
		 json_string_value(json_object_get(rec, "header")) ?: "Authorization",
		 token ? token_value(nb, token) : "");
	nb->headers[0] = nb->type_header;
	nb->headers[1] = token ? nb->token_header : NULL;
	nb->headers[2] = NULL;
	if (body && !strcmp(nb->method, "POST"))
		text = is_json ? json_dumps(body, JSON_COMPACT) : lava_notify_urlencoded(body);
	if (err == -EAGAIN || err == -EIO)
		cp->err = err;	/* its body is being read (old_body()), or that failed */
	else if (!nb->url || (!strcmp(nb->method, "POST") && !text))
		cp->err = -ENOMEM;
	else if (text)
		strbuf_addstr(cp->body, text);
	free(text);
	json_decref(body);
	json_decref(rec);
	return 1;	/* one callback per request */
}

static int compose(struct upload *u, struct strbuf *body, void *ud)
{
	struct composing cp = { .nb = ud, .body = body };
	int r;

	cp.nb->composing = true;	/* an old body read at once: no upload_kick() from here */
	r = upload_take(u, 0, compose_one, &cp);
	cp.nb->composing = false;
	return r < 0 ? r : cp.err;
}

static int request(struct upload *u, struct upload_request *req, void *ud)
{
	struct notify_backend *nb = ud;

	req->method = nb->method;
	req->url = nb->url;
	req->headers = nb->headers;
	return 0;
}

static uint64_t record_stream(const void *data, size_t len, void *ud)
{
	json_t *rec = json_loadb(data, len, 0, NULL);
	uint64_t job = (uint64_t)json_integer_value(json_object_get(rec, "job"));

	json_decref(rec);
	return job;
}

struct refusal {
	struct notify_backend *nb;
	long status;
};

static int report_refused(const void *data, size_t len, void *ud)
{
	struct refusal *rf = ud;
	json_t *rec = json_loadb(data, len, 0, NULL);

	backend_report(&rf->nb->b, json_integer_value(json_object_get(rec, "job")),
		       "the callback to '%s' was refused with HTTP %ld: not sent again",
		       json_string_value(json_object_get(rec, "url")) ?: "?", rf->status);
	json_decref(rec);
	return 0;
}

static void rejected(struct upload *u, const struct http_response *resp, void *ud)
{
	struct refusal rf = { ud, resp->status };

	upload_batch(u, report_refused, &rf);
}

static const struct upload_ops notify_upload_ops = {
	.compose = compose,
	.stream = record_stream,
	.rejected = rejected,
	.request = request,
};

/* ---- life cycle ---- */

static int notify_start(struct backend *b)
{
	struct notify_backend *nb = to_notify(b);
	/* the URL is each callback's own (ops->request) */
	struct upload_opts o = { .url = "the jobs' callback URLs", .retry_max_ms = nb->retry_max_ms,
				 .max_in_flight = 4 };
	char *dir = backend_state_path(b, "spool");
	int err;

	if (!dir)
		return -ENOMEM;
	err = spool_open(dir, nb->spool_max, &nb->sp);
	free(dir);
	if (!err)
		err = upload_new(b, nb->sp, &o, &notify_upload_ops, nb, &nb->up);
	if (!err)
		upload_kick(nb->up);	/* callbacks a previous labd had not delivered */
	return err;
}

static bool notify_busy(struct backend *b)
{
	return upload_busy(to_notify(b)->up);
}

static void notify_free(struct backend *b)
{
	struct notify_backend *nb = to_notify(b);
	struct upload *up = nb->up;

	nb->up = NULL;	/* the old bodies' reads dropped kick nothing (old_body_done()) */
	if (b->deps)	/* NULL when only checked (labd check-config) */
		store_read_later_forget(b->deps->store, nb);
	upload_free(up);
	spool_close(nb->sp);
	json_decref(nb->tokens);
	json_decref(nb->old_bodies);
	json_decref(nb->quiet);
	free(nb->url);
	backend_release(b);
	free(nb);
}

/* tokens = { NAME = "secret"; ... } */
static int parse_tokens(const config_setting_t *g, json_t *tokens, struct diag *diag)
{
	const config_setting_t *t = g ? config_setting_get_member(g, "tokens") : NULL;
	int i, r = 0;

	for (i = 0; t && i < config_setting_length(t); i++) {
		const config_setting_t *e = config_setting_get_elem(t, (unsigned)i);

		if (!config_setting_name(e) || config_setting_type(e) != CONFIG_TYPE_STRING)
			r = diag_add(diag, cfg_file(e), cfg_line(e),
				     "'tokens' must map token names to strings");
		else
			json_object_set_new(tokens, config_setting_name(e),
					    json_string(config_setting_get_string(e)));
	}
	if (t && !config_setting_is_group(t))
		r = diag_add(diag, cfg_file(t), cfg_line(t), "'tokens' must be a group, not %s",
			     cfg_type_name(t));
	return r;
}

static int notify_parse(const config_setting_t *g, struct backend **ret, struct diag *diag)
{
	struct notify_backend *nb = calloc(1, sizeof(*nb));
	long long spool_max = (long long)NOTIFY_SPOOL_MAX;
	int r = 0;

	if (!nb)
		return -ENOMEM;
	nb->b.ops = &backend_notify_ops;
	nb->b.name = strdup("notify");
	nb->b.file = strdup(g ? cfg_file(g) : "labd.conf");
	nb->b.line = g ? cfg_line(g) : 0;
	nb->tokens = json_object();
	nb->old_bodies = json_object();
	nb->quiet = json_object();
	if (!nb->b.name || !nb->b.file || !nb->tokens || !nb->old_bodies || !nb->quiet) {
		notify_free(&nb->b);
		return -ENOMEM;
	}
	if (g && cfg_check_keys(g, notify_keys, diag) < 0)
		r = -EINVAL;
	if (parse_tokens(g, nb->tokens, diag) < 0 ||
	    (g && backend_get_retry_max(g, &nb->retry_max_ms, diag) < 0) ||
	    (g && cfg_get_int(g, "spool_max", false, (long long)SPOOL_MIN_BYTES, INT64_MAX,
			      &spool_max, diag) == -EINVAL))
		r = -EINVAL;
	nb->spool_max = (uint64_t)spool_max;
	if (r < 0) {
		notify_free(&nb->b);
		return r;
	}
	*ret = &nb->b;
	return 0;
}

const struct backend_ops backend_notify_ops = {
	.type = "notify",
	.keys = notify_keys,
	.parse = notify_parse,
	.start = notify_start,
	.free = notify_free,
	.event = notify_event,
	.busy = notify_busy,
};
