// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * backend_kcidb.c -- submit a KCIDB v5.3 document per finished job
 *
 * When a job finishes its document (kcidb.h) is built, checked
 * (kcidb_check()), written to <state_dir>/jobs/<id>/kcidb.json (on the host
 * that ran it) and spooled;
 * the upload POSTs one document per request to `url` (kcidb-ng's REST
 * /submit) with the bearer token, retrying 5xx and transport failures with
 * backoff, from the spool across restarts.  A 4xx answer is reported with
 * its body as a "backend-error" event of the job and dropped.
 *
 * Submission status: kcidb-ng answers {"status":"ok","id":"<id>"} and checks
 * the document later; labd then polls `status_url` (default: `url` with its
 * last path segment replaced by "status") with ?id=<id> until the answer is
 * "processed" (logged), "failed" or "notfound" (reported as a job event), or
 * until KCIDB_POLL_MAX passed.  Polls live in memory only: a restart forgets
 * them (the document was accepted already).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "journal/events.h"
#include "results/backends/backend.h"
#include "results/backends/spool.h"
#include "results/backends/upload.h"
#include "results/kcidb.h"
#include "results/report.h"
#include "results/resultfile.h"
#include "results/utf8.h"

#define KCIDB_FILE "kcidb"		/* <job dir>/kcidb.json */
#define KCIDB_DEFAULT_SPOOL_MAX (256ULL << 20)
#define KCIDB_POLL_FIRST (2 * 1000000ULL)	/* usec before the first status poll */
#define KCIDB_POLL_EVERY_MAX (60 * 1000000ULL)
#define KCIDB_POLL_MAX (3600 * 1000000ULL)	/* give up polling after this */
#define KCIDB_MAX_POLLS 1024
#define KCIDB_MAX_QUEUE 4096

struct poll {
	struct kcidb_backend *kb;
	int64_t job;
	char *id;		/* submission id */
	uint64_t started;
	uint64_t every;
	struct loop_source *timer;
	struct http_request *req;
	struct poll *next;
};

struct kcidb_backend {
	struct backend b;
	char *url;
	char *status_url;
	char *token;
	char *origin;
	char *log_url_base;
	bool poll;
	uint64_t spool_max;
	uint64_t retry_max_ms;	/* 0: the upload's default */
	struct spool *sp;
	struct upload *up;
	int64_t *queue;		/* finished jobs waiting for their document */
	size_t n_queue;
	struct loop_source *work;
	struct poll *polls;
	size_t n_polls;
};

static const char *const kcidb_keys[] = { "url", "token", "origin", "log_url_base",
					  "status_url", "poll", "spool_max", "retry_max_ms", NULL };

static struct kcidb_backend *to_kcidb(struct backend *b)
{
	return (struct kcidb_backend *)b;
}

/* ---- building and spooling a document ---- */

/* A copy in the job's directory, when this host has it. */
static int write_local(struct kcidb_backend *kb, int64_t id, const char *text)
{
	char *dir = backend_job_dir_here(&kb->b, id), path[4096];
	int err;

	if (!dir)
		return 0;
	/* "kcidb.json"; a second KCIDB backend writes "kcidb-<name>.json" */
	if (!strcmp(kb->b.name, "kcidb"))
		snprintf(path, sizeof(path), "%s/%s.json", dir, KCIDB_FILE);
	else
		snprintf(path, sizeof(path), "%s/%s-%s.json", dir, KCIDB_FILE, kb->b.name);
	free(dir);
	err = resultfile_write(path, text, strlen(text));
	if (err < 0)
		backend_report(&kb->b, id, "cannot write '%s': %s", path, strerror(-err));
	return err;
}

/* A spool record: the job id (little-endian), then the document. */
static int spool_document(struct kcidb_backend *kb, int64_t id, const char *text)
{
	struct strbuf rec = STRBUF_INIT;
	uint64_t le = htole64((uint64_t)id);
	int err;

	err = strbuf_add(&rec, &le, sizeof(le));
	if (!err)
		err = strbuf_addstr(&rec, text);
	if (!err)
		err = upload_append(kb->up, rec.buf, rec.len);
	strbuf_release(&rec);
	if (err == -ENOSPC)
		backend_report(&kb->b, id, "spool '%s' is full: document not submitted (it is in the job directory)",
			       spool_dir(kb->sp));
	else if (err < 0)
		backend_report(&kb->b, id, "cannot spool the document: %s", strerror(-err));
	return err;
}

/* Job @id's report is read (backend_report_later()): its document, spooled. */
static void submit_job(struct backend *b, int64_t id, struct report *r, int err)
{
	struct kcidb_backend *kb = to_kcidb(b);
	struct strbuf why = STRBUF_INIT;
	json_t *doc = NULL;
	char *text = NULL;

	if (!err)
		err = kcidb_build(r, kb->origin, &doc);
	if (!err && !(text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS)))
		err = -ENOMEM;
	if (err < 0) {
		backend_report(&kb->b, id, "cannot build the KCIDB document: %s", strerror(-err));
		goto out;
	}
	write_local(kb, id, text);
	if (kcidb_check(doc, &why) < 0) {
		backend_report(&kb->b, id, "KCIDB document not sent, it breaks the schema: %s",
			       why.buf);
		goto out;
	}
	if (!spool_document(kb, id, text))
		upload_kick(kb->up);
out:
	free(text);
	json_decref(doc);
	report_free(r);
	strbuf_release(&why);
}

static int on_work(struct loop_source *s, void *ud)
{
	struct kcidb_backend *kb = ud;
	size_t i;

	for (i = 0; i < kb->n_queue; i++)
		backend_report_later(&kb->b, kb->queue[i], kb->log_url_base, submit_job);
	kb->n_queue = 0;
	return 0;
}

static void kcidb_event(struct backend *b, const struct event *ev)
{
	struct kcidb_backend *kb = to_kcidb(b);
	int64_t *q;

	if (strcmp(ev->kind, "finished"))
		return;
	if (kb->n_queue >= KCIDB_MAX_QUEUE ||
	    !(q = realloc(kb->queue, (kb->n_queue + 1) * sizeof(*q)))) {
		backend_report(b, ev->job_id, "too many documents waiting: none built for this job");
		return;
	}
	kb->queue = q;
	kb->queue[kb->n_queue++] = ev->job_id;
	loop_defer_again(kb->work);
}

/* ---- status polls ---- */

static struct poll *poll_free(struct poll *p)
{
	struct poll **pp;

	for (pp = &p->kb->polls; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			p->kb->n_polls--;
			break;
		}
	}
	http_request_cancel(p->req);
	loop_source_free(p->timer);
	free(p->id);
	free(p);
	return NULL;
}

static void poll_again(struct poll *p)
{
	if (loop_now(p->kb->b.deps->loop) - p->started > KCIDB_POLL_MAX) {
		log_warning("backend '%s': job %lld: submission '%s' still not processed, no more polls",
			    p->kb->b.name, (long long)p->job, p->id);
		poll_free(p);
		return;
	}
	loop_timer_set_rel(p->timer, p->every);
	p->every = p->every * 2 > KCIDB_POLL_EVERY_MAX ? KCIDB_POLL_EVERY_MAX : p->every * 2;
}

static void on_status(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct poll *p = ud;
	json_t *doc = resp->status == 200 ? json_loads(resp->body, 0, NULL) : NULL;
	const char *st = json_string_value(json_object_get(doc, "status"));

	p->req = NULL;
	if (resp->status == 404)
		st = "notfound";
	if (st && !strcmp(st, "processed")) {
		log_info("backend '%s': job %lld: submission '%s' processed", p->kb->b.name,
			 (long long)p->job, p->id);
		p = poll_free(p);
	} else if (st && (!strcmp(st, "failed") || !strcmp(st, "notfound"))) {
		backend_report(&p->kb->b, p->job, "submission '%s' %s at the receiver", p->id,
			       !strcmp(st, "failed") ? "failed validation" : "is unknown");
		p = poll_free(p);
	} else {
		poll_again(p);
	}
	json_decref(doc);
}

static int on_poll(struct loop_source *s, uint64_t now, void *ud)
{
	struct poll *p = ud;
	struct kcidb_backend *kb = p->kb;
	char *auth = NULL, *url = NULL, *eid = curl_easy_escape(NULL, p->id, 0);
	const char *headers[2] = { NULL, NULL };
	struct http_request_opts o = { .timeout = UPLOAD_TIMEOUT };
	int err = -ENOMEM;

	if (eid && asprintf(&url, "%s?id=%s", kb->status_url, eid) >= 0 &&
	    (!kb->token || asprintf(&auth, "Authorization: Bearer %s", kb->token) >= 0)) {
		headers[0] = auth;
		o.url = url;
		o.headers = headers;
		err = http_request_start(kb->b.deps->http, &o, on_status, p, &p->req);
	}
	if (err < 0)
		poll_again(p);
	curl_free(eid);
	free(url);
	free(auth);
	return 0;
}

static void start_poll(struct kcidb_backend *kb, int64_t job, const char *id)
{
	struct loop *l = kb->b.deps->loop;
	struct poll *p;

	if (kb->n_polls >= KCIDB_MAX_POLLS || !(p = calloc(1, sizeof(*p))))
		return;
	p->kb = kb;
	p->job = job;
	p->id = strdup(id);
	p->started = loop_now(l);
	p->every = KCIDB_POLL_FIRST;
	p->next = kb->polls;
	kb->polls = p;
	kb->n_polls++;
	if (!p->id || loop_add_timer(l, &p->timer, USEC_INFINITY, on_poll, p) < 0) {
		poll_free(p);
		return;
	}
	loop_source_set_description(p->timer, "backend:kcidb:poll");
	poll_again(p);
}

/* ---- upload ---- */

struct one_doc {
	struct strbuf *body;
	int64_t job;
};

static int take_doc(const void *data, size_t len, void *ud)
{
	struct one_doc *od = ud;
	uint64_t le;

	if (len < sizeof(le))
		return 1;
	memcpy(&le, data, sizeof(le));
	od->job = (int64_t)le64toh(le);
	if (od->body)
		strbuf_add(od->body, (const char *)data + sizeof(le), len - sizeof(le));
	return 1;	/* one document per request */
}

static int compose(struct upload *u, struct strbuf *body, void *ud)
{
	struct one_doc od = { body, 0 };
	int r = upload_take(u, 0, take_doc, &od);

	return r < 0 ? r : 0;
}

/* The job of the document just answered. */
static int64_t job_of(struct upload *u)
{
	struct one_doc od = { NULL, 0 };

	upload_batch(u, take_doc, &od);
	return od.job;
}

static void accepted(struct upload *u, const struct http_response *resp, void *ud)
{
	struct kcidb_backend *kb = ud;
	json_t *doc = json_loads(resp->body, 0, NULL);
	const char *id = json_string_value(json_object_get(doc, "id"));
	int64_t job = job_of(u);

	log_info("backend '%s': job %lld: KCIDB document submitted%s%s", kb->b.name,
		 (long long)job, id ? ", id " : "", id ? id : "");
	if (id && kb->poll)
		start_poll(kb, job, id);
	json_decref(doc);
}

static void rejected(struct upload *u, const struct http_response *resp, void *ud)
{
	struct kcidb_backend *kb = ud;
	struct strbuf why = STRBUF_INIT;
	size_t i;

	utf8_sanitize(resp->body, resp->body_len < UPLOAD_MAX_REPORTED_BODY ? resp->body_len :
			UPLOAD_MAX_REPORTED_BODY, UTF8_XML, 0, &why);
	for (i = 0; i < why.len; i++)
		if (why.buf[i] == '\n' || why.buf[i] == '\r' || why.buf[i] == '\t')
			why.buf[i] = ' ';
	backend_report(&kb->b, job_of(u), "KCIDB refused the document with HTTP %ld: %s",
		       resp->status, why.len ? why.buf : "(no body)");
	strbuf_release(&why);
}

static const struct upload_ops kcidb_upload_ops = {
	.compose = compose,
	.accepted = accepted,
	.rejected = rejected,
};

/* ---- life cycle ---- */

static int kcidb_start(struct backend *b)
{
	struct kcidb_backend *kb = to_kcidb(b);
	struct upload_opts o = { .url = kb->url, .token = kb->token,
				 .retry_max_ms = kb->retry_max_ms };
	char *dir = backend_state_path(b, "spool");
	int err;

	if (!dir)
		return -ENOMEM;
	err = spool_open(dir, kb->spool_max, &kb->sp);
	free(dir);
	if (!err)
		err = upload_new(b, kb->sp, &o, &kcidb_upload_ops, kb, &kb->up);
	if (!err)
		err = loop_add_defer(b->deps->loop, &kb->work, on_work, kb);
	if (err < 0)
		return err;
	loop_source_set_description(kb->work, "backend:kcidb");
	upload_kick(kb->up);	/* documents left by a previous labd */
	return 0;
}

static void kcidb_stats(struct backend *b, struct backend_stats *ret)
{
	if (to_kcidb(b)->up)
		upload_stats(to_kcidb(b)->up, ret);
}

static bool kcidb_busy(struct backend *b)
{
	struct kcidb_backend *kb = to_kcidb(b);

	return kb->n_queue || (kb->up && upload_busy(kb->up) && !upload_failing(kb->up));
}

static void kcidb_free(struct backend *b)
{
	struct kcidb_backend *kb = to_kcidb(b);

	while (kb->polls)
		poll_free(kb->polls);
	backend_forget_reports(b);
	upload_free(kb->up);
	spool_close(kb->sp);
	loop_source_free(kb->work);
	free(kb->queue);
	free(kb->url);
	free(kb->status_url);
	free(kb->token);
	free(kb->origin);
	free(kb->log_url_base);
	backend_release(b);
	free(kb);
}

/* kcidb-ng: https://host/submit -> https://host/status */
static char *default_status_url(const char *url)
{
	const char *slash = strrchr(url, '/');
	char *s;

	if (!slash || slash < url + 8)
		return NULL;
	if (asprintf(&s, "%.*s/status", (int)(slash - url), url) < 0)
		return NULL;
	return s;
}

static int parse_settings(struct kcidb_backend *kb, const config_setting_t *g, struct diag *diag)
{
	const char *url = NULL, *status = NULL, *token = NULL, *origin = NULL, *base = NULL;
	long long max = (long long)KCIDB_DEFAULT_SPOOL_MAX;
	int err = 0;

	kb->poll = true;
	if (backend_check_url(g, "url", true, &url, diag) < 0 ||
	    backend_check_url(g, "status_url", false, &status, diag) == -EINVAL ||
	    backend_check_url(g, "log_url_base", false, &base, diag) == -EINVAL ||
	    cfg_get_string(g, "token", false, &token, diag) == -EINVAL ||
	    cfg_get_bool(g, "poll", false, &kb->poll, diag) == -EINVAL ||
	    cfg_get_int(g, "spool_max", false, (long long)SPOOL_MIN_BYTES, INT64_MAX, &max,
			diag) == -EINVAL)
		err = -EINVAL;
	if (backend_get_retry_max(g, &kb->retry_max_ms, diag) < 0)
		err = -EINVAL;
	if (cfg_get_string(g, "origin", true, &origin, diag) < 0)
		err = -EINVAL;
	else if (!kcidb_origin_valid(origin))
		err = diag_add(diag, cfg_file(g), cfg_line(g),
			       "KCIDB origin '%s' must be lowercase letters, digits and '_'", origin);
	if (err < 0)
		return err;
	kb->spool_max = (uint64_t)max;
	kb->url = strdup(url);
	kb->status_url = status ? strdup(status) : default_status_url(url);
	kb->token = token ? strdup(token) : NULL;
	kb->origin = strdup(origin);
	kb->log_url_base = base ? strdup(base) : NULL;
	if (!kb->url || !kb->status_url || !kb->origin || (token && !kb->token) ||
	    (base && !kb->log_url_base))
		return -ENOMEM;
	return 0;
}

static int kcidb_parse(const config_setting_t *g, struct backend **ret, struct diag *diag)
{
	struct kcidb_backend *kb = calloc(1, sizeof(*kb));
	int err;

	if (!kb)
		return -ENOMEM;
	err = backend_init(&kb->b, &backend_kcidb_ops, g);
	if (!err)
		err = parse_settings(kb, g, diag);
	if (err < 0) {
		kcidb_free(&kb->b);
		return err;
	}
	*ret = &kb->b;
	return 0;
}

const struct backend_ops backend_kcidb_ops = {
	.type = "kcidb",
	.keys = kcidb_keys,
	.parse = kcidb_parse,
	.start = kcidb_start,
	.free = kcidb_free,
	.event = kcidb_event,
	.busy = kcidb_busy,
	.stats = kcidb_stats,
};
