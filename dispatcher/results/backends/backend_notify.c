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
 * once across restarts of labd.  The body is built when it is sent, from
 * the store and the job's logs (lava_notify.h), so it is the job's final
 * state even for a callback sent hours later.
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

static int spool_callback(struct notify_backend *nb, int64_t id, const struct job_callback *cb)
{
	json_t *rec = json_pack("{s:I, s:s, s:s, s:s?, s:s, s:s, s:b}", "job", (json_int_t)id,
				"url", cb->url, "method", cb->post ? "POST" : "GET", "token",
				cb->token, "header", cb->header ? cb->header : "Authorization",
				"dataset", dataset_name(cb->dataset), "json", cb->json);
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
};

static void due_free(void *userdata)
{
	struct notify_due *d = userdata;

	free(d->health);
	free(d);
}

/* Spool the job's callbacks due now; nothing in a run whose read went to the database. */
static void spool_due(void *userdata)
{
	struct notify_due *d = userdata;
	struct backend *b = &d->nb->b;
	struct job_record rec = { 0 };
	struct job *job = NULL;
	size_t i, n = 0;
	int err;

	if (store_job_get(b->deps->store, d->job_id, &rec) == 0)
		job = report_parse_job(&rec);
	for (i = 0; job && job->has_notify && i < job->notify.n_callbacks; i++) {
		if (!wanted(job->notify.status, d->kind, d->health ? d->health : ""))
			continue;
		err = spool_callback(d->nb, d->job_id, &job->notify.callbacks[i]);
		if (err < 0)
			backend_report(b, d->job_id, "cannot spool the callback to '%s': %s",
				       job->notify.callbacks[i].url, strerror(-err));
		else
			n++;
	}
	if (n)
		upload_kick(d->nb->up);
	job_free(job);
	job_record_release(&rec);
}

/* The job is read without waiting in the loop: its callbacks are spooled once it is in. */
static void notify_event(struct backend *b, const struct event *ev)
{
	const char *health = json_string_value(json_object_get(ev->data, "health"));
	struct notify_due *d;

	if (strcmp(ev->kind, "started") && strcmp(ev->kind, "finished"))
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

/* The data the callback's dataset asks for. */
static json_t *callback_data(struct notify_backend *nb, int64_t id, const char *dataset)
{
	bool logs = !strcmp(dataset, "logs") || !strcmp(dataset, "all");
	bool results = !strcmp(dataset, "results") || !strcmp(dataset, "all");
	struct job_record rec = { 0 };
	struct lava_results *lr = NULL;
	struct report *rep = NULL;
	struct job *job = NULL;
	char *dir = NULL;
	json_t *data;

	if (store_job_get(nb->b.deps->store, id, &rec) < 0)
		return json_pack("{s:I}", "id", (json_int_t)id);	/* the job is gone */
	job = report_parse_job(&rec);
	dir = backend_job_dir(&nb->b, id);
	if (results && dir && report_load(nb->b.deps->store, backend_config(&nb->b), id, NULL,
					  &rep) == 0)
		lava_results_build(rep, dir, &lr);
	data = lava_notify_data(&rec, job ? job->metadata : NULL, logs ? dir : NULL, lr);
	lava_results_free(lr);
	report_free(rep);
	free(dir);
	job_free(job);
	job_record_release(&rec);
	return data;
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

	body = rec ? callback_data(nb, json_integer_value(json_object_get(rec, "job")),
				   json_string_value(json_object_get(rec, "dataset"))) : NULL;
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
	if (!nb->url || (!strcmp(nb->method, "POST") && !text))
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
	int r = upload_take(u, 0, compose_one, &cp);

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

	if (b->deps)	/* NULL when only checked (labd check-config) */
		store_read_later_forget(b->deps->store, nb);
	upload_free(nb->up);
	spool_close(nb->sp);
	json_decref(nb->tokens);
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
	if (!nb->b.name || !nb->b.file || !nb->tokens) {
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
