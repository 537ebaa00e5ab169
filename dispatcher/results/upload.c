// SPDX-License-Identifier: GPL-2.0-or-later
/* upload.c -- a spool drained to an HTTP receiver, one ordered request at a time */
#include "upload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "daemon.h"
#include "http_client.h"
#include "log.h"
#include "loop.h"
#include "spool.h"
#include "strbuf.h"

#define UPLOAD_HEADER_MAX 1024
#define UPLOAD_LOG_EVERY 20	/* failures in a row logged as warnings: first, then every Nth */

struct upload {
	struct backend *b;
	struct loop *loop;
	struct http_client *http;
	struct spool *sp;
	char *url;
	char *auth;		/* "Authorization: Bearer ..." or NULL */
	char *ctype;		/* "Content-Type: ..." */
	size_t batch_bytes;
	uint64_t batch_usec;
	uint64_t backoff_max;	/* usec */
	const struct upload_ops *ops;
	void *ud;
	struct http_request *req;	/* in flight */
	uint64_t req_start, req_end;	/* its spool range */
	struct loop_source *timer;	/* batch delay or retry backoff */
	bool backing_off;
	uint64_t waiting_since;	/* monotonic time records began to wait; 0: none */
	unsigned failures;	/* in a row */
	uint64_t rng;
};

static void send_batch(struct upload *u);

static uint64_t next_random(struct upload *u)
{
	/* xorshift64: jitter only, no need for quality */
	u->rng ^= u->rng << 13;
	u->rng ^= u->rng >> 7;
	u->rng ^= u->rng << 17;
	return u->rng;
}

/* The delay before the next attempt: doubling from UPLOAD_BACKOFF_MIN, with jitter. */
static uint64_t backoff(struct upload *u)
{
	uint64_t d = UPLOAD_BACKOFF_MIN;
	unsigned i;

	for (i = 1; i < u->failures && d < u->backoff_max; i++)
		d *= 2;
	if (d > u->backoff_max)
		d = u->backoff_max;
	return d / 2 + next_random(u) % (d / 2 + 1);
}

static int on_timer(struct loop_source *s, uint64_t now, void *ud)
{
	struct upload *u = ud;

	if (u->backing_off) {
		u->backing_off = false;
		send_batch(u);
	} else {
		upload_kick(u);
	}
	return 0;
}

static void retry_later(struct upload *u, const char *why)
{
	uint64_t d;

	u->failures++;
	d = backoff(u);
	if (u->failures == 1 || u->failures % UPLOAD_LOG_EVERY == 0)
		log_warning("backend '%s': delivery to '%s' failed (%u in a row): %s; retrying in %.1f s",
			    u->b->name, u->url, u->failures, why, (double)d / USEC_PER_SEC);
	u->backing_off = true;
	loop_timer_set_rel(u->timer, d);
}

static void acknowledge(struct upload *u)
{
	int err;

	if (u->ops->acking)
		u->ops->acking(u, u->req_end, u->ud);
	err = spool_ack(u->sp, u->req_end);
	if (err < 0)
		log_error("backend '%s': cannot acknowledge in spool '%s': %s", u->b->name,
			  spool_dir(u->sp), strerror(-err));
}

static bool is_refusal(long status)
{
	return status >= 400 && status < 500 && status != 408 && status != 429;
}

static void on_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct upload *u = ud;
	char why[128];

	u->req = NULL;
	if (resp->status >= 200 && resp->status < 300) {
		if (u->failures)
			log_info("backend '%s': delivering again after %u failed attempts",
				 u->b->name, u->failures);
		u->failures = 0;
		if (u->ops->accepted)
			u->ops->accepted(u, resp, u->req_start, u->req_end, u->ud);
		acknowledge(u);
	} else if (is_refusal(resp->status)) {
		u->failures = 0;
		u->ops->rejected(u, resp, u->req_start, u->req_end, u->ud);
		acknowledge(u);
	} else {
		if (resp->status)
			snprintf(why, sizeof(why), "HTTP status %ld", resp->status);
		else
			snprintf(why, sizeof(why), "%s", resp->error ? resp->error : "no answer");
		retry_later(u, why);
		return;
	}
	upload_kick(u);
}

static void send_batch(struct upload *u)
{
	const char *headers[3] = { u->ctype, u->auth, NULL };
	struct strbuf body = STRBUF_INIT;
	struct http_request_opts o = { .method = "POST", .url = u->url, .headers = headers,
				       .timeout = UPLOAD_TIMEOUT };
	uint64_t pos = spool_head(u->sp);
	int err;

	u->req_start = pos;
	err = u->ops->compose(u, &pos, &body, u->ud);
	if (!err && pos == u->req_start)
		err = -ENODATA;
	if (!err) {
		u->req_end = pos;
		o.body = body.buf;
		o.body_len = body.len;
		if (pos == spool_tail(u->sp))
			u->waiting_since = 0;
		err = http_request_start(u->http, &o, on_done, u, &u->req);
	}
	strbuf_release(&body);
	if (err == -ENODATA)
		return;
	if (err < 0)
		retry_later(u, strerror(-err));
}

void upload_kick(struct upload *u)
{
	uint64_t now = loop_now(u->loop), sent = u->req ? u->req_end : spool_head(u->sp);
	uint64_t waiting = spool_tail(u->sp) - sent;

	if (waiting && !u->waiting_since)
		u->waiting_since = now;
	if (u->req || u->backing_off)
		return;
	if (!waiting) {
		u->waiting_since = 0;
		loop_timer_set(u->timer, USEC_INFINITY);
		return;
	}
	if (waiting >= u->batch_bytes || now >= u->waiting_since + u->batch_usec) {
		loop_timer_set(u->timer, USEC_INFINITY);
		send_batch(u);
	} else if (!loop_timer_is_armed(u->timer)) {
		loop_timer_set(u->timer, u->waiting_since + u->batch_usec);
	}
}

bool upload_busy(const struct upload *u)
{
	return u->req || spool_tail(u->sp) != spool_head(u->sp);
}

bool upload_failing(const struct upload *u)
{
	return u->failures > 0;
}

int upload_new(struct backend *b, struct spool *sp, const struct upload_opts *o,
	       const struct upload_ops *ops, void *ud, struct upload **ret)
{
	struct upload *u = calloc(1, sizeof(*u));
	int err = -ENOMEM;

	if (!u)
		return -ENOMEM;
	u->b = b;
	u->loop = daemon_loop(b->d);
	u->http = daemon_http(b->d);
	u->sp = sp;
	u->ops = ops;
	u->ud = ud;
	u->batch_bytes = o->batch_bytes;
	u->batch_usec = o->batch_ms * USEC_PER_MSEC;
	u->backoff_max = o->retry_max_ms ? o->retry_max_ms * USEC_PER_MSEC : UPLOAD_BACKOFF_MAX;
	u->rng = now_monotonic() ^ ((uint64_t)(uintptr_t)u << 16) ^ 0x9e3779b97f4a7c15ULL;
	u->url = strdup(o->url);
	if (asprintf(&u->ctype, "Content-Type: %s",
		     o->content_type ? o->content_type : "application/json") < 0)
		u->ctype = NULL;
	if (o->token && asprintf(&u->auth, "Authorization: Bearer %s", o->token) < 0)
		u->auth = NULL;
	if (u->url && u->ctype && (!o->token || u->auth))
		err = loop_add_timer(u->loop, &u->timer, USEC_INFINITY, on_timer, u);
	if (err < 0) {
		upload_free(u);
		return err;
	}
	loop_source_set_description(u->timer, "backend:upload");
	*ret = u;
	return 0;
}

struct upload *upload_free(struct upload *u)
{
	if (!u)
		return NULL;
	http_request_cancel(u->req);
	loop_source_free(u->timer);
	free(u->url);
	free(u->auth);
	free(u->ctype);
	free(u);
	return NULL;
}
