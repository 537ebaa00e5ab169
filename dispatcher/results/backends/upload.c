// SPDX-License-Identifier: GPL-2.0-or-later
/* upload.c -- a spool drained to an HTTP receiver, each stream in order, several requests at once */
#include "results/backends/upload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "results/backends/backend.h"
#include "results/backends/spool.h"

#define UPLOAD_LOG_EVERY 20	/* failures in a row logged as warnings: first, then every Nth */

/* A record not yet acknowledged: where it is in the spool, its payload size. */
struct upload_rec {
	uint64_t pos;
	uint32_t len;
};

/*
 * A channel: the streams of its spool slots, one request at a time.  Its
 * records not yet acknowledged are recs[first .. n), in spool order; the
 * first n_batch of them are in the request in flight (or being composed).
 */
struct upload_chan {
	struct upload *u;
	struct upload_rec *recs;
	size_t first, n, alloc;
	size_t n_batch;
	size_t n_given;		/* of the batch, records handed to the backend */
	uint64_t bytes;		/* payload bytes of recs[first .. n) */
	uint64_t batch_bytes;	/* of them, in the batch */
	uint64_t since;		/* when the oldest record out of the batch began to wait */
	uint64_t batch_since;	/* the same, for the batch's records */
	struct http_request *req;
};

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
	struct upload_chan *chans;
	unsigned n_chans;
	struct upload_chan *current;	/* being composed or answered */
	struct loop_source *timer;	/* batch delay or retry backoff */
	bool backing_off;
	unsigned failures;	/* in a row */
	uint64_t waiting_since;	/* loop time of the last progress while records wait, or 0 */
	uint64_t rng;
};

static void kick(struct upload *u, bool force);

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
	bool retry = u->backing_off;

	u->backing_off = false;
	kick(u, retry);		/* after a backoff, what failed is due at once */
	return 0;
}

/* A failure: no channel sends a new request until a delay passed. */
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

/* ---- the index of records waiting, per channel ---- */

static unsigned slot_of(struct upload *u, const void *data, size_t len)
{
	uint64_t stream = u->ops->stream ? u->ops->stream(data, len, u->ud) : 0;

	return (unsigned)(stream % SPOOL_SLOTS);
}

/* Room for one more record in @c's index (so that a spooled record always gets in). */
static int chan_reserve(struct upload_chan *c)
{
	struct upload_rec *n;
	size_t alloc;

	if (c->first && c->first >= c->n / 2) {
		memmove(c->recs, c->recs + c->first, (c->n - c->first) * sizeof(*c->recs));
		c->n -= c->first;
		c->first = 0;
	}
	if (c->n < c->alloc)
		return 0;
	alloc = c->alloc ? c->alloc * 2 : 64;
	n = realloc(c->recs, alloc * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->recs = n;
	c->alloc = alloc;
	return 0;
}

static void chan_push(struct upload_chan *c, uint64_t pos, size_t len)
{
	if (c->first + c->n_batch == c->n)
		c->since = loop_now(c->u->loop);	/* the first record waiting */
	c->recs[c->n++] = (struct upload_rec){ pos, (uint32_t)len };
	c->bytes += len;
}

static size_t chan_waiting(const struct upload_chan *c)
{
	return c->n - c->first - c->n_batch;
}

/* At start: index the records of the spool that no acknowledgement covers. */
struct index_ctx {
	struct upload *u;
	uint64_t pos;
};

static int index_record(const void *data, size_t len, void *ud)
{
	struct index_ctx *ix = ud;
	struct upload *u = ix->u;
	uint64_t start = ix->pos - SPOOL_HEADER - len;
	unsigned slot = slot_of(u, data, len);
	struct upload_chan *c = &u->chans[slot % u->n_chans];
	int err;

	if (start < spool_slot_pos(u->sp, slot))
		return 0;	/* its slot was acknowledged past it */
	err = chan_reserve(c);
	if (err < 0)
		return err;
	chan_push(c, start, len);
	return 0;
}

static int index_spool(struct upload *u)
{
	struct index_ctx ix = { u, spool_head(u->sp) };
	int r = spool_read(u->sp, &ix.pos, SIZE_MAX, index_record, &ix);

	return r < 0 ? r : 0;
}

int upload_append(struct upload *u, const void *data, size_t len)
{
	struct upload_chan *c = &u->chans[slot_of(u, data, len) % u->n_chans];
	uint64_t pos = spool_tail(u->sp);
	int err;

	if (!upload_busy(u))
		u->waiting_since = loop_now(u->loop);
	err = chan_reserve(c);
	if (!err)
		err = spool_append(u->sp, data, len);
	if (err < 0)
		return err;
	chan_push(c, pos, len);
	return 0;
}

/* ---- acknowledging ---- */

/*
 * Store, per slot, where its records not yet acknowledged begin: the first
 * record its channel still holds, or the tail when it holds none.
 */
static void store_positions(struct upload *u)
{
	uint64_t pos[SPOOL_SLOTS], tail = spool_tail(u->sp);
	unsigned i;
	int err;

	for (i = 0; i < SPOOL_SLOTS; i++) {
		const struct upload_chan *c = &u->chans[i % u->n_chans];

		pos[i] = c->first < c->n ? c->recs[c->first].pos : tail;
	}
	if (u->ops->acking)
		u->ops->acking(u, spool_ack_slots_frees(u->sp, pos), u->ud);
	err = spool_ack_slots(u->sp, pos);
	if (err < 0)
		log_error("backend '%s': cannot acknowledge in spool '%s': %s", u->b->name,
			  spool_dir(u->sp), strerror(-err));
	u->waiting_since = loop_now(u->loop);	/* progress; upload_stats() checks for more */
}

/* The batch of @c was answered (accepted or refused): it is done with. */
static void acknowledge(struct upload_chan *c)
{
	c->first += c->n_batch;
	c->bytes -= c->batch_bytes;
	c->n_batch = c->n_given = 0;
	c->batch_bytes = 0;
	if (c->first == c->n)
		c->first = c->n = 0;
	store_positions(c->u);
}

/* The batch of @c goes back to waiting, to be sent again. */
static void unsend(struct upload_chan *c)
{
	c->n_batch = c->n_given = 0;
	c->batch_bytes = 0;
	c->since = c->batch_since;
}

/* ---- requests ---- */

/* Hand record @rec of @c to @fn; a corrupt one is skipped (0), and logged. */
static int give(struct upload_chan *c, const struct upload_rec *rec, spool_record_fn fn,
		void *ud)
{
	struct upload *u = c->u;
	int r = spool_read_at(u->sp, rec->pos, fn, ud);

	if (r == -EBADMSG || r == -EINVAL) {
		log_error("backend '%s': lost a corrupt record of %u bytes in spool '%s'",
			  u->b->name, rec->len, spool_dir(u->sp));
		return 0;
	}
	if (r < 0)
		return r;
	return r ? 2 : 1;	/* given, and whether the backend wants no more */
}

int upload_take(struct upload *u, size_t max_bytes, spool_record_fn fn, void *ud)
{
	struct upload_chan *c = u->current;
	int count = 0, r = 1;

	if (!c || c->req)
		return -EINVAL;
	while (r != 2 && chan_waiting(c)) {
		const struct upload_rec *rec = &c->recs[c->first + c->n_batch];

		if (count && c->batch_bytes + rec->len > max_bytes)
			break;
		r = give(c, rec, fn, ud);
		if (r < 0)
			return r;
		c->n_batch++;
		c->batch_bytes += rec->len;
		count += r > 0;
	}
	c->n_given += (size_t)count;
	return count;
}

int upload_batch(struct upload *u, spool_record_fn fn, void *ud)
{
	struct upload_chan *c = u->current;
	size_t i;
	int count = 0, r;

	if (!c)
		return -EINVAL;
	for (i = c->first; i < c->first + c->n_batch; i++) {
		r = give(c, &c->recs[i], fn, ud);
		if (r < 0)
			return r;
		count += r > 0;
	}
	return count;
}

static bool is_refusal(long status)
{
	return status >= 400 && status < 500 && status != 408 && status != 429;
}

static void on_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct upload_chan *c = ud;
	struct upload *u = c->u;
	char why[128];

	c->req = NULL;
	u->current = c;
	if (resp->status >= 200 && resp->status < 300) {
		if (u->failures)
			log_info("backend '%s': delivering again after %u failed attempts",
				 u->b->name, u->failures);
		u->failures = 0;
		if (u->ops->accepted)
			u->ops->accepted(u, resp, u->ud);
	} else if (is_refusal(resp->status)) {
		u->failures = 0;
		u->ops->rejected(u, resp, u->ud);
	} else {
		u->current = NULL;
		unsend(c);
		if (resp->status)
			snprintf(why, sizeof(why), "HTTP status %ld", resp->status);
		else
			snprintf(why, sizeof(why), "%s", resp->error ? resp->error : "no answer");
		retry_later(u, why);
		return;
	}
	u->current = NULL;
	acknowledge(c);
	kick(u, false);
}

/* Compose @c's next batch into @body; 0 with an empty batch when there is nothing to send. */
static int compose(struct upload_chan *c, struct strbuf *body)
{
	struct upload *u = c->u;
	int err;

	u->current = c;
	err = u->ops->compose(u, body, u->ud);
	u->current = NULL;
	if (err < 0)
		unsend(c);
	else if (c->n_batch && !c->n_given)
		acknowledge(c);		/* only corrupt records, lost: nothing to send */
	return err;
}

static void send_batch(struct upload_chan *c)
{
	struct upload *u = c->u;
	const char *headers[3] = { u->ctype, u->auth, NULL };
	struct upload_request req = { .method = "POST", .url = u->url, .headers = headers };
	struct strbuf body = STRBUF_INIT;
	struct http_request_opts o = { .timeout = UPLOAD_TIMEOUT };
	int err;

	c->batch_since = c->since;
	err = compose(c, &body);
	if (!err && c->n_batch && c->n_given && u->ops->request &&
	    (err = u->ops->request(u, &req, u->ud)) < 0)
		unsend(c);
	if (!err && c->n_batch) {
		o.method = req.method;
		o.url = req.url;
		o.headers = req.headers;
		/* a GET carries no body */
		o.body = strcmp(req.method, "GET") ? body.buf : NULL;
		o.body_len = body.len;
		err = http_request_start(u->http, &o, on_done, c, &c->req);
		if (err < 0)
			unsend(c);
	}
	strbuf_release(&body);
	if (err == -EAGAIN)
		return;	/* not composed yet: the backend kicks once it can */
	if (err < 0)
		retry_later(u, strerror(-err));
}

/* Whether @c has records to send now; if later, lowers *@due to when. */
static bool chan_due(struct upload_chan *c, uint64_t now, bool force, uint64_t *due)
{
	struct upload *u = c->u;

	if (c->req || !chan_waiting(c))
		return false;
	if (force || c->bytes >= u->batch_bytes || now >= c->since + u->batch_usec)
		return true;
	if (c->since + u->batch_usec < *due)
		*due = c->since + u->batch_usec;
	return false;
}

static void kick(struct upload *u, bool force)
{
	uint64_t now = loop_now(u->loop), due = USEC_INFINITY;
	unsigned i;

	if (u->backing_off)
		return;
	if (!upload_busy(u) && spool_head(u->sp) != spool_tail(u->sp))
		store_positions(u);	/* all delivered: let the spool free its segments */
	for (i = 0; i < u->n_chans && !u->backing_off; i++)
		if (chan_due(&u->chans[i], now, force, &due))
			send_batch(&u->chans[i]);
	if (!u->backing_off)
		loop_timer_set(u->timer, due);
}

void upload_kick(struct upload *u)
{
	kick(u, false);
}

bool upload_busy(const struct upload *u)
{
	unsigned i;

	for (i = 0; i < u->n_chans; i++)
		if (u->chans[i].req || u->chans[i].first < u->chans[i].n)
			return true;
	return false;
}

bool upload_failing(const struct upload *u)
{
	return u->failures > 0;
}

void upload_stats(const struct upload *u, struct backend_stats *ret)
{
	uint64_t now = loop_now(u->loop);
	unsigned i;

	ret->spool_bytes = spool_size(u->sp);
	ret->lag_usec = 0;
	for (i = 0; i < u->n_chans; i++)
		if (u->chans[i].first < u->chans[i].n && now > u->waiting_since)
			ret->lag_usec = now - u->waiting_since;
}

/* ---- life cycle ---- */

static int upload_init(struct upload *u, const struct upload_opts *o)
{
	unsigned i;

	u->n_chans = o->max_in_flight ? o->max_in_flight : 1;
	if (u->n_chans > UPLOAD_MAX_IN_FLIGHT)
		return -EINVAL;
	u->chans = calloc(u->n_chans, sizeof(*u->chans));
	if (!u->chans)
		return -ENOMEM;
	for (i = 0; i < u->n_chans; i++)
		u->chans[i].u = u;
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
	if (!u->url || !u->ctype || (o->token && !u->auth))
		return -ENOMEM;
	return loop_add_timer(u->loop, &u->timer, USEC_INFINITY, on_timer, u);
}

int upload_new(struct backend *b, struct spool *sp, const struct upload_opts *o,
	       const struct upload_ops *ops, void *ud, struct upload **ret)
{
	struct upload *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	u->b = b;
	u->loop = b->deps->loop;
	u->http = b->deps->http;
	u->sp = sp;
	u->ops = ops;
	u->ud = ud;
	err = upload_init(u, o);
	if (!err)
		err = index_spool(u);
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
	unsigned i;

	if (!u)
		return NULL;
	for (i = 0; u->chans && i < u->n_chans; i++) {
		http_request_cancel(u->chans[i].req);
		free(u->chans[i].recs);
	}
	free(u->chans);
	loop_source_free(u->timer);
	free(u->url);
	free(u->auth);
	free(u->ctype);
	free(u);
	return NULL;
}
