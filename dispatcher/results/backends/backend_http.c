// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * backend_http.c -- stream job events and console logs as JSON to an HTTP receiver
 *
 * Everything goes through the backend's spool, in one order: a job's events
 * as they are emitted and its console log in chunks cut by a capture tick
 * (HTTP_CAPTURE_USEC), the log bytes written before an event spooled before
 * it.  The upload (upload.h) posts the spool in batches of at most
 * batch_bytes, up to max_in_flight requests at once; a job's items always go
 * through the same one of them, one request at a time, so the receiver gets
 * every job's items in order.  Wire format: doc/backends.md.
 *
 * Cursors: for each job still streaming, what was spooled (event sequence
 * number, log offset and chunk number).  When the spool is full, nothing new
 * is spooled: the job is marked lagging, and once the receiver freed room its
 * events are read back from the store and its log from console.log, from the
 * cursor on, so the data is late but neither lost nor repeated.  Those reads
 * go through store_read_later() (catch_up()): on PostgreSQL the job's stream
 * waits for the answer, not labd's loop.
 *
 * Several hosts (one PostgreSQL lab): each batch the receiver takes writes,
 * per job, the last event it held into the store (store_delivered_set()),
 * and a catch-up skips the events up to there.  So the host that reaped
 * another, or runs a job requeued from it, goes on where the other host's
 * deliveries stopped, not from the job's first event; an event is sent
 * twice only when its acknowledgement did not reach the store (an answer
 * lost, a host killed before its write committed).  The cursors
 * survive restarts in <spool>/cursors.json, written before a segment is
 * deleted, and the records still on disk, scanned at start.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "config/config.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "results/backends/backend.h"
#include "results/backends/spool.h"
#include "results/backends/upload.h"
#include "results/utf8.h"
#include "store/store.h"

#define HTTP_DEFAULT_BATCH_BYTES (64 * 1024)
#define HTTP_DEFAULT_BATCH_MS 500
#define HTTP_DEFAULT_SPOOL_MAX (256ULL << 20)
#define HTTP_DEFAULT_IN_FLIGHT 4
#define HTTP_MAX_BATCH_BYTES (4 << 20)
#define HTTP_LOG_CHUNK_MAX (16 * 1024)	/* console bytes in one log item */
#define HTTP_LOG_CHUNK_MIN 256
#define HTTP_LOG_ITEM_GROWTH 8	/* spool bytes per console byte, at worst (see chunk_limit) */
#define HTTP_LOG_ITEM_OVERHEAD 512	/* spool bytes of a log item besides its text and base64 */
#define HTTP_CAPTURE_USEC (50 * 1000ULL)	/* console bytes are cut into items this often */
#define HTTP_CURSORS "cursors.json"
#define HTTP_WIRE_VERSION 1
#define HTTP_REFUSAL_QUIET (10 * 1000000ULL)	/* one refusal event per job this often */
#define HTTP_REFUSAL_MEMORY 16
#define HTTP_DONE_MEMORY 64	/* jobs whose stream ended, remembered to ignore late growth */

enum { REC_EVENT = 1, REC_LOG = 2 };
enum { REC_FINISHED = 1, REC_OWN_ERROR = 2 };	/* flags */

/* Binary prefix of every spool record, before the item's JSON text. */
struct rec_head {
	uint64_t job;
	uint64_t seq;
	uint64_t log_end;	/* log records: offset after the chunk */
	uint32_t type;
	uint32_t flags;
};

struct cursor {
	int64_t job;
	uint64_t log_off;	/* console.log bytes spooled */
	int64_t log_seq;	/* log items spooled */
	int64_t ev_seq;		/* last event spooled (or skipped) */
	int64_t heard;		/* last event announced here, 0: not known (see spool_caught_up) */
	bool dirty;		/* the log grew since the last capture */
	bool lagging;		/* data waits in the store and console.log */
	bool held;		/* the last capture held an incomplete character back */
	bool finished;		/* the "finished" event is spooled: drop the cursor */
	bool revived;		/* an ended stream that got more: drop it again */
	bool reading;		/* catching up: the store's events are being read */
	bool missed;		/* an event came meanwhile: catch up again */
	char *dir;
};

struct http_backend {
	struct backend b;
	char *url;
	char *token;
	size_t batch_bytes;
	uint64_t batch_ms;
	uint64_t retry_max_ms;
	uint64_t spool_max;
	unsigned max_in_flight;
	size_t chunk_max;
	struct spool *sp;
	struct upload *up;
	char *prefix;		/* '{"version":1,"lab":...,"backend":...,"items":[' */
	char *state_path;
	struct cursor **cursors;	/* sorted by job id */
	size_t n_cursors;
	struct loop_source *capture;
	bool full;		/* nothing is spooled until deliveries freed room */
	unsigned fills;		/* times the spool filled since every job was caught up */
	struct {
		int64_t job;
		uint64_t at;
	} refusals[HTTP_REFUSAL_MEMORY];	/* jobs last told about a refusal */
	unsigned next_refusal;
	struct cursor done[HTTP_DONE_MEMORY];	/* streams ended lately, as they ended */
	unsigned next_done;
	bool catching_up;	/* in catch_up(): a catch-up done at once is the caller's */
	json_t *unknown;	/* "<job>": jobs whose log grew with no cursor, being read */
};

static const char *const http_keys[] = { "url", "token", "batch_bytes", "batch_ms", "spool_max",
					 "retry_max_ms", "max_in_flight", NULL };

static struct http_backend *to_http(struct backend *b)
{
	return (struct http_backend *)b;
}

/* ---- cursors ---- */

static size_t cursor_index(const struct http_backend *hb, int64_t job, bool *found)
{
	size_t lo = 0, hi = hb->n_cursors;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (hb->cursors[mid]->job < job)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < hb->n_cursors && hb->cursors[lo]->job == job;
	return lo;
}

static struct cursor *cursor_find(struct http_backend *hb, int64_t job)
{
	bool found;
	size_t i = cursor_index(hb, job, &found);

	return found ? hb->cursors[i] : NULL;
}

static void save_state(struct http_backend *hb);

static struct cursor *cursor_get(struct http_backend *hb, int64_t job)
{
	struct cursor **v, *c;
	bool found;
	size_t i = cursor_index(hb, job, &found);

	if (found)
		return hb->cursors[i];
	c = calloc(1, sizeof(*c));
	v = c ? realloc(hb->cursors, (hb->n_cursors + 1) * sizeof(*v)) : NULL;
	if (v)
		hb->cursors = v;
	if (!v || !(c->dir = backend_job_dir(&hb->b, job))) {
		free(c);
		return NULL;
	}
	c->job = job;
	memmove(v + i + 1, v + i, (hb->n_cursors - i) * sizeof(*v));
	v[i] = c;
	hb->n_cursors++;
	if (hb->full) {
		/* a job that only exists in the store for now: remember it across a crash */
		c->lagging = true;
		save_state(hb);
	}
	return c;
}

static struct cursor *find_done(struct http_backend *hb, int64_t job)
{
	unsigned i;

	for (i = 0; i < HTTP_DONE_MEMORY; i++)
		if (hb->done[i].job == job)
			return &hb->done[i];
	return NULL;
}

static void remember_done(struct http_backend *hb, const struct cursor *c)
{
	struct cursor *d = find_done(hb, c->job);

	if (!d)
		d = &hb->done[hb->next_done++ % HTTP_DONE_MEMORY];
	*d = (struct cursor){ .job = c->job, .log_off = c->log_off, .log_seq = c->log_seq,
			      .ev_seq = c->ev_seq };
}

/* A cursor again for a stream that ended lately (a late event or log bytes), or NULL. */
static struct cursor *revive(struct http_backend *hb, int64_t job)
{
	struct cursor *d = find_done(hb, job), *c;

	if (!d || !(c = cursor_get(hb, job)))
		return NULL;
	c->log_off = d->log_off;
	c->log_seq = d->log_seq;
	c->ev_seq = d->ev_seq;
	c->revived = true;
	return c;
}

static void drop_finished(struct http_backend *hb)
{
	size_t i, o = 0;

	for (i = 0; i < hb->n_cursors; i++) {
		struct cursor *c = hb->cursors[i];

		if (c->finished || c->revived) {
			remember_done(hb, c);
			free(c->dir);
			free(c);
		} else {
			hb->cursors[o++] = c;
		}
	}
	hb->n_cursors = o;
}

static void save_state(struct http_backend *hb)
{
	json_t *jobs = json_array(), *doc = json_pack("{s:i, s:o}", "version", 1, "jobs", jobs);
	char tmp[4096];
	size_t i;

	for (i = 0; doc && i < hb->n_cursors; i++) {
		const struct cursor *c = hb->cursors[i];

		json_array_append_new(jobs, json_pack("{s:I, s:I, s:I, s:I, s:b}", "job",
						      (json_int_t)c->job, "log_offset",
						      (json_int_t)c->log_off, "log_seq",
						      (json_int_t)c->log_seq, "event_seq",
						      (json_int_t)c->ev_seq, "lagging", c->lagging));
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", hb->state_path);
	if (!doc || json_dump_file(doc, tmp, JSON_COMPACT) < 0 || rename(tmp, hb->state_path) < 0)
		log_error("backend '%s': cannot write '%s'", hb->b.name, hb->state_path);
	json_decref(doc);
}

/* ---- spooling ---- */

/*
 * Spool nothing more until deliveries freed room (on_capture).  The job
 * concerned hears of it when the spool first fills; filling it again while
 * catching up is expected and only logged for debugging, so that catching up
 * does not make events of its own to catch up with.
 */
static void set_full(struct http_backend *hb, struct cursor *c)
{
	c->lagging = true;
	if (hb->full)
		return;
	hb->full = true;
	save_state(hb);
	if (hb->fills++) {
		log_debug("backend '%s': job %lld: spool '%s' is full again while catching up",
			  hb->b.name, (long long)c->job, spool_dir(hb->sp));
		return;
	}
	backend_report(&hb->b, c->job,
		       "spool '%s' is full (%llu bytes): new data waits in labd's store until the receiver catches up",
		       spool_dir(hb->sp), (unsigned long long)spool_max(hb->sp));
}

static int append(struct http_backend *hb, struct cursor *c, struct rec_head *h, json_t *item)
{
	struct strbuf rec = STRBUF_INIT;
	char *text = item ? json_dumps(item, JSON_COMPACT) : NULL;
	int err = -ENOMEM;

	h->job = htole64((uint64_t)h->job);
	h->seq = htole64(h->seq);
	h->log_end = htole64(h->log_end);
	h->type = htole32(h->type);
	h->flags = htole32(h->flags);
	if (text && !strbuf_add(&rec, h, sizeof(*h)) && !strbuf_addstr(&rec, text))
		err = upload_append(hb->up, rec.buf, rec.len);
	if (err == -ENOSPC)
		set_full(hb, c);
	else if (err < 0)
		log_error("backend '%s': cannot spool for job %lld: %s", hb->b.name,
			  (long long)c->job, strerror(-err));
	strbuf_release(&rec);
	free(text);
	json_decref(item);
	return err;
}

static json_t *time_json(uint64_t usec)
{
	char buf[40];

	joblog_format_time(usec, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *base64_json(const void *data, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1);
	json_t *s;

	if (!out)
		return NULL;
	EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	s = json_string(out);
	free(out);
	return s;
}

/* One log item: the text, and the raw bytes in base64 when they are not UTF-8. */
static json_t *log_item(const struct cursor *c, uint64_t now, const char *data, size_t len)
{
	json_t *text = json_stringn(data, len), *raw = NULL;
	struct strbuf fixed = STRBUF_INIT;

	if (!text) {
		utf8_sanitize(data, len, 0, 0, &fixed);
		text = json_stringn(fixed.buf, fixed.len);
		raw = base64_json(data, len);
		strbuf_release(&fixed);
		if (!raw) {
			json_decref(text);
			return NULL;
		}
	}
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:o*, s:o*}", "type", "log", "job",
			 (json_int_t)c->job, "seq", (json_int_t)c->log_seq + 1, "offset",
			 (json_int_t)c->log_off, "length", (json_int_t)len, "time", time_json(now),
			 "text", text, "base64", raw);
}

/*
 * How many bytes of @buf to send now: never cut a character in two between
 * items, and hold back one still being received at the end of the log once
 * (the next tick sends it, complete or not).
 */
static size_t sendable(struct cursor *c, const struct strbuf *buf, bool at_end, bool final)
{
	size_t tail = final ? 0 : utf8_incomplete_tail(buf->buf, buf->len);

	if (tail && !at_end && tail < buf->len)
		return buf->len - tail;
	if (tail && at_end && !c->held) {
		c->held = true;
		c->dirty = true;	/* look again at the next tick */
		return buf->len - tail;
	}
	c->held = false;
	return buf->len;
}

/* Spool the console bytes of @c's job that are not yet spooled. */
static int capture_log(struct http_backend *hb, struct cursor *c, bool final)
{
	uint64_t size = joblog_file_size(c->dir, JOBLOG_CONSOLE);
	uint64_t now = loop_realtime(hb->b.deps->loop);
	struct strbuf buf = STRBUF_INIT;
	int err = 0;

	c->dirty = false;
	while (!err && c->log_off < size) {
		struct rec_head h = { .type = REC_LOG };
		size_t n;

		strbuf_reset(&buf);
		err = joblog_read(c->dir, JOBLOG_CONSOLE, c->log_off, hb->chunk_max, &buf);
		if (err < 0 || !buf.len)
			break;
		n = sendable(c, &buf, c->log_off + buf.len >= size, final);
		if (!n)
			break;
		h.job = (uint64_t)c->job;
		h.seq = (uint64_t)c->log_seq + 1;
		h.log_end = c->log_off + n;
		err = append(hb, c, &h, log_item(c, now, buf.buf, n));
		if (err < 0)
			break;
		c->log_off += n;
		c->log_seq++;
	}
	strbuf_release(&buf);
	return err;
}

/* Spool event @seq of @c's job; the log written before it goes first. */
static int spool_event(struct http_backend *hb, struct cursor *c, int64_t seq, uint64_t ts,
		       const char *kind, json_t *data)
{
	const char *who = json_string_value(json_object_get(data, "backend"));
	bool finished = !strcmp(kind, "finished");
	struct rec_head h = { .type = REC_EVENT, .job = (uint64_t)c->job, .seq = (uint64_t)seq };
	int err;

	err = capture_log(hb, c, finished);
	if (err < 0)
		return err;
	h.flags = finished ? REC_FINISHED : 0;
	if (!strcmp(kind, "backend-error") && who && !strcmp(who, hb->b.name))
		h.flags |= REC_OWN_ERROR;
	err = append(hb, c, &h,
		     json_pack("{s:s, s:I, s:I, s:o, s:s, s:O}", "type", "event", "job",
			       (json_int_t)c->job, "seq", (json_int_t)seq, "time", time_json(ts),
			       "kind", kind, "data", data));
	if (err < 0)
		return err;
	c->ev_seq = seq;
	c->finished = finished;
	return 0;
}

/*
 * Catching up: the events the store holds beyond a cursor, read without
 * waiting in labd's loop (store_read_later()).  While they are read the
 * cursor is lagging: nothing of its job is spooled (new events wait in the
 * store, the log in console.log), so the run with the answer spools the
 * log, then the events, in their order.
 */
struct catch_up {
	struct http_backend *hb;
	int64_t job;
	json_t *events;		/* the answer: [{"seq", "ts", "kind", "data"}] */
};

static int keep_event(const struct event_record *rec, void *ud)
{
	json_t *data = rec->data ? json_loads(rec->data, 0, NULL) : NULL;
	json_t *e = json_pack("{s:I, s:I, s:s, s:o}", "seq", (json_int_t)rec->seq, "ts",
			      (json_int_t)rec->ts, "kind", rec->kind, "data",
			      data ? data : json_object());

	return json_array_append_new(ud, e) < 0 ? -ENOMEM : 0;
}

/*
 * Event @seq of @c's job, which the receiver acknowledged through another
 * host (store_delivered_get()): not spooled again, the cursor moves past it
 * (the log written before it still goes).
 */
static int skip_event(struct http_backend *hb, struct cursor *c, int64_t seq, const char *kind)
{
	bool finished = !strcmp(kind, "finished");
	int err = capture_log(hb, c, finished);

	if (err < 0)
		return err;
	c->ev_seq = seq;
	c->finished = finished;
	return 0;
}

/*
 * Spool what console.log holds beyond @c, then @events but those up to
 * @delivered.  When this host heard of the job's events live, it stops
 * after the last it heard: later ones were announced by another host (the
 * one that runs a job this host reaped), whose backend sends them.
 */
static int spool_caught_up(struct http_backend *hb, struct cursor *c, json_t *events,
			   int64_t delivered)
{
	int err = capture_log(hb, c, false);
	size_t i;
	json_t *e;

	if (delivered > c->ev_seq)
		log_debug("backend '%s': job %lld: events up to %lld were delivered through another host",
			  hb->b.name, (long long)c->job, (long long)delivered);
	json_array_foreach(events, i, e) {
		int64_t seq = json_integer_value(json_object_get(e, "seq"));
		const char *kind = json_string_value(json_object_get(e, "kind"));

		if (err < 0 || (c->heard && seq > c->heard))
			break;
		if (!kind)
			kind = "";
		if (seq <= delivered)
			err = skip_event(hb, c, seq, kind);
		else
			err = spool_event(hb, c, seq,
					  (uint64_t)json_integer_value(json_object_get(e, "ts")),
					  kind, json_object_get(e, "data"));
	}
	return err;
}

static void caught_up(struct http_backend *hb);

static void catch_up_run(void *userdata)
{
	struct catch_up *cu = userdata;
	struct http_backend *hb = cu->hb;
	struct store *st = hb->b.deps->store;
	struct cursor *c = cursor_find(hb, cu->job);
	int64_t delivered = 0;
	int err;

	if (!c)
		c = revive(hb, cu->job);	/* an ended stream's, dropped meanwhile */
	if (!c)
		return;
	json_array_clear(cu->events);
	if (store_delivered_get(st, hb->b.name, hb->url, c->job, &delivered) < 0)
		delivered = 0;	/* not known: everything is sent (at least once) */
	err = store_event_list(st, c->job, c->ev_seq, keep_event, cu->events);
	if (store_read_pending(st))
		return;
	c->reading = false;
	if (!err)
		err = spool_caught_up(hb, c, cu->events, delivered);
	if (err == -ENOENT) {
		c->finished = true;	/* the job is gone */
		err = 0;
	}
	if (!err && !c->missed)
		c->lagging = false;
	c->missed = false;
	if (!hb->catching_up)
		caught_up(hb);	/* answered later, from the loop */
}

static void catch_up_free(void *userdata)
{
	struct catch_up *cu = userdata;

	json_decref(cu->events);
	free(cu);
}

/* Spool what the store and console.log hold beyond @c (now, or once the store answered). */
static void catch_up(struct http_backend *hb, struct cursor *c)
{
	struct catch_up *cu;

	c->lagging = true;
	if (c->reading)
		return;	/* its answer catches up */
	cu = calloc(1, sizeof(*cu));
	if (!cu || !(cu->events = json_array())) {
		free(cu);
		return;	/* still lagging: the next capture tick tries again */
	}
	cu->hb = hb;
	cu->job = c->job;
	c->reading = true;
	hb->catching_up = true;
	store_read_later(hb->b.deps->store, hb, catch_up_run, catch_up_free, cu);
	hb->catching_up = false;
}

/* ---- capture tick ---- */

static void arm_capture(struct http_backend *hb)
{
	if (!loop_timer_is_armed(hb->capture))
		loop_timer_set_rel(hb->capture, HTTP_CAPTURE_USEC);
}

static bool any_lagging(const struct http_backend *hb)
{
	size_t i;

	for (i = 0; i < hb->n_cursors; i++)
		if (hb->cursors[i]->lagging)
			return true;
	return false;
}

/*
 * The capture tick: spool the console bytes cut since the last one and, once
 * deliveries freed a quarter of a full spool, what lagging jobs left in the
 * store.  Acknowledgements re-arm it while the spool is full.
 */
static int on_capture(struct loop_source *s, uint64_t now, void *ud)
{
	struct http_backend *hb = ud;
	size_t i;

	if (hb->full && spool_size(hb->sp) <= spool_max(hb->sp) / 4 * 3) {
		hb->full = false;
		if (hb->fills == 1)
			log_info("backend '%s': spool has room again, catching up", hb->b.name);
	}
	for (i = 0; i < hb->n_cursors && !hb->full; i++) {
		struct cursor *c = hb->cursors[i];

		if (c->lagging)
			catch_up(hb, c);
		else if (c->dirty)
			capture_log(hb, c, false);
	}
	caught_up(hb);
	return 0;
}

/* After catching up or capturing: drop the ended streams, look again, send. */
static void caught_up(struct http_backend *hb)
{
	size_t i;

	drop_finished(hb);
	if (hb->fills && !hb->full && !any_lagging(hb)) {
		log_info("backend '%s': caught up, streaming live again", hb->b.name);
		hb->fills = 0;
	}
	for (i = 0; i < hb->n_cursors; i++)
		if ((hb->cursors[i]->dirty || (hb->cursors[i]->lagging &&
					       !hb->cursors[i]->reading)) && !hb->full)
			arm_capture(hb);
	upload_kick(hb->up);
}

/* ---- listeners ---- */

static void http_event(struct backend *b, const struct event *ev)
{
	struct http_backend *hb = to_http(b);
	struct cursor *c = cursor_find(hb, ev->job_id);

	if (!c)
		c = revive(hb, ev->job_id);
	if (!c)
		c = cursor_get(hb, ev->job_id);
	if (!c)
		return;
	if (ev->seq > c->heard)
		c->heard = ev->seq;
	if (hb->full || c->lagging) {
		c->lagging = true;
		c->missed = c->reading;	/* perhaps not in the answer being read */
		return;
	}
	if (ev->seq <= c->ev_seq)
		return;
	if (ev->seq == c->ev_seq + 1)
		spool_event(hb, c, ev->seq, ev->ts, ev->kind, ev->data);
	else
		catch_up(hb, c);	/* something was missed: the store has it */
	if (c->finished || c->revived)
		drop_finished(hb);
	upload_kick(hb->up);
}

/* A job whose log grew with no cursor here, read (store_read_later()). */
struct unknown_job {
	struct http_backend *hb;
	int64_t job;
};

/*
 * Unless it finished before its stream began here (before a restart), the
 * job gets a cursor once the store answered: lagging, its events never
 * seen here are taken from the store.
 */
static void unknown_job_run(void *userdata)
{
	struct unknown_job *u = userdata;
	struct store *st = u->hb->b.deps->store;
	struct job_record rec = { 0 };
	int r = store_job_get(st, u->job, &rec);
	struct cursor *c;

	if (!store_read_pending(st) && !r && rec.state != JOB_STATE_FINISHED) {
		c = cursor_find(u->hb, u->job);	/* (its event came meanwhile) */
		if (!c && (c = cursor_get(u->hb, u->job)))
			c->lagging = true;
		if (c)
			c->dirty = true;
		if (c && !u->hb->full)
			arm_capture(u->hb);
	}
	job_record_release(&rec);
}

static void unknown_job_free(void *userdata)
{
	struct unknown_job *u = userdata;
	char key[24];

	snprintf(key, sizeof(key), "%lld", (long long)u->job);
	json_object_del(u->hb->unknown, key);
	free(u);
}

static void http_log_grew(struct backend *b, int64_t job_id)
{
	struct http_backend *hb = to_http(b);
	struct cursor *c = cursor_find(hb, job_id);
	struct unknown_job *u;
	char key[24];

	if (!c)
		c = revive(hb, job_id);
	if (c) {
		c->dirty = true;
		if (!hb->full)
			arm_capture(hb);
		return;
	}
	snprintf(key, sizeof(key), "%lld", (long long)job_id);
	if (json_object_get(hb->unknown, key))
		return;	/* being read */
	u = malloc(sizeof(*u));
	if (!u || json_object_set_new(hb->unknown, key, json_true()) < 0) {
		free(u);
		return;
	}
	*u = (struct unknown_job){ hb, job_id };
	store_read_later(b->deps->store, hb, unknown_job_run, unknown_job_free, u);
}

/* ---- upload ---- */

struct compose {
	struct strbuf *body;
	size_t items;
};

static int add_item(const void *data, size_t len, void *ud)
{
	struct compose *cp = ud;

	if (len < sizeof(struct rec_head))
		return 0;
	if (cp->items++)
		strbuf_addch(cp->body, ',');
	return strbuf_add(cp->body, (const char *)data + sizeof(struct rec_head),
			  len - sizeof(struct rec_head));
}

static int compose(struct upload *u, struct strbuf *body, void *ud)
{
	struct http_backend *hb = ud;
	struct compose cp = { body, 0 };
	int r;

	strbuf_addstr(body, hb->prefix);
	r = upload_take(u, hb->batch_bytes, add_item, &cp);
	if (r < 0)
		return r;
	return strbuf_addstr(body, "]}");
}

/* A job's records go out in order, one request at a time: its id is the stream. */
static uint64_t record_stream(const void *data, size_t len, void *ud)
{
	struct rec_head h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	return le64toh(h.job);
}

static void acking(struct upload *u, bool frees, void *ud)
{
	struct http_backend *hb = ud;

	if (frees)
		save_state(hb);	/* the cursors, before the records that tell them go */
	if (hb->full)
		arm_capture(hb);
}

struct refused {
	int64_t jobs[64];
	size_t n;
	size_t items;
};

static int note_job(const void *data, size_t len, void *ud)
{
	struct refused *rf = ud;
	struct rec_head h;
	size_t i;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	rf->items++;
	if (le32toh(h.flags) & REC_OWN_ERROR)
		return 0;	/* reporting its refusal again would loop */
	for (i = 0; i < rf->n; i++)
		if (rf->jobs[i] == (int64_t)le64toh(h.job))
			return 0;
	if (rf->n < sizeof(rf->jobs) / sizeof(rf->jobs[0]))
		rf->jobs[rf->n++] = (int64_t)le64toh(h.job);
	return 0;
}

/* Whether job @job heard of a refusal lately (then only the log says more); notes it. */
static bool recently_told(struct http_backend *hb, int64_t job)
{
	uint64_t now = loop_now(hb->b.deps->loop);
	unsigned i;

	for (i = 0; i < HTTP_REFUSAL_MEMORY; i++)
		if (hb->refusals[i].job == job && now - hb->refusals[i].at < HTTP_REFUSAL_QUIET)
			return true;
	i = hb->next_refusal++ % HTTP_REFUSAL_MEMORY;
	hb->refusals[i].job = job;
	hb->refusals[i].at = now;
	return false;
}

static void rejected(struct upload *u, const struct http_response *resp, void *ud)
{
	struct http_backend *hb = ud;
	struct strbuf why = STRBUF_INIT;
	struct refused rf = { .n = 0 };
	size_t i;

	upload_batch(u, note_job, &rf);
	utf8_sanitize(resp->body, resp->body_len < UPLOAD_MAX_REPORTED_BODY ? resp->body_len :
			UPLOAD_MAX_REPORTED_BODY, UTF8_XML, 0, &why);
	for (i = 0; i < why.len; i++)
		if (why.buf[i] == '\n' || why.buf[i] == '\r' || why.buf[i] == '\t')
			why.buf[i] = ' ';
	for (i = 0; i < rf.n; i++) {
		if (recently_told(hb, rf.jobs[i]))
			log_debug("backend '%s': job %lld: receiver refused %zu items with HTTP %ld",
				  hb->b.name, (long long)rf.jobs[i], rf.items, resp->status);
		else
			backend_report(&hb->b, rf.jobs[i],
				       "receiver refused %zu items with HTTP %ld: %s", rf.items,
				       resp->status, why.len ? why.buf : "(no body)");
	}
	if (!rf.n)
		backend_report(&hb->b, 0, "receiver refused a batch with HTTP %ld: %s", resp->status,
			       why.len ? why.buf : "(no body)");
	strbuf_release(&why);
}

/* What a batch the receiver took held: the last event of each of its jobs. */
struct acked {
	struct acked_job {
		int64_t job;
		int64_t seq;
	} *v;
	size_t n;
	size_t alloc;
};

static int note_acked(const void *data, size_t len, void *ud)
{
	struct acked *ak = ud;
	struct acked_job *v;
	struct rec_head h;
	size_t i;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (le32toh(h.type) != REC_EVENT)
		return 0;
	for (i = 0; i < ak->n && ak->v[i].job != (int64_t)le64toh(h.job); i++)
		;
	if (i == ak->n && ak->n == ak->alloc) {
		v = realloc(ak->v, (ak->alloc * 2 + 8) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ak->v = v;
		ak->alloc = ak->alloc * 2 + 8;
	}
	if (i == ak->n)
		ak->v[ak->n++] = (struct acked_job){ (int64_t)le64toh(h.job), 0 };
	if ((int64_t)le64toh(h.seq) > ak->v[i].seq)
		ak->v[i].seq = (int64_t)le64toh(h.seq);
	return 0;
}

/*
 * The receiver took a batch: the lab's store learns how far each of its jobs'
 * events went (store_delivered_set(), written behind), so that another host
 * that reports the job's later events (it reaped this one, or runs the job
 * after a requeue) catches up from there (catch_up_run()).  Out of memory,
 * what was noted is written: a lower position only sends more again.
 */
static void accepted(struct upload *u, const struct http_response *resp, void *ud)
{
	struct http_backend *hb = ud;
	struct acked ak = { 0 };
	size_t i;

	(void)resp;
	upload_batch(u, note_acked, &ak);
	for (i = 0; i < ak.n; i++)
		store_delivered_set(hb->b.deps->store, hb->b.name, hb->url, ak.v[i].job,
				    ak.v[i].seq);
	free(ak.v);
}

static const struct upload_ops http_upload_ops = {
	.compose = compose,
	.stream = record_stream,
	.acking = acking,
	.accepted = accepted,
	.rejected = rejected,
};

/* ---- start: cursors from the state file and the records still spooled ---- */

static void load_state(struct http_backend *hb)
{
	json_t *doc = json_load_file(hb->state_path, 0, NULL), *j;
	size_t i;

	json_array_foreach(json_object_get(doc, "jobs"), i, j) {
		struct cursor *c = cursor_get(hb, json_integer_value(json_object_get(j, "job")));

		if (!c)
			continue;
		c->log_off = (uint64_t)json_integer_value(json_object_get(j, "log_offset"));
		c->log_seq = json_integer_value(json_object_get(j, "log_seq"));
		c->ev_seq = json_integer_value(json_object_get(j, "event_seq"));
	}
	json_decref(doc);
}

static int scan_record(const void *data, size_t len, void *ud)
{
	struct http_backend *hb = ud;
	struct rec_head h;
	struct cursor *c;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	c = cursor_get(hb, (int64_t)le64toh(h.job));
	if (!c)
		return -ENOMEM;
	if (le32toh(h.type) == REC_LOG && (int64_t)le64toh(h.seq) > c->log_seq) {
		c->log_seq = (int64_t)le64toh(h.seq);
		c->log_off = le64toh(h.log_end);
	} else if (le32toh(h.type) == REC_EVENT && (int64_t)le64toh(h.seq) > c->ev_seq) {
		c->ev_seq = (int64_t)le64toh(h.seq);
		c->finished = le32toh(h.flags) & REC_FINISHED;
	}
	return 0;
}

static int add_unfinished(const struct job_record *rec, void *ud)
{
	return cursor_get(ud, rec->id) ? 0 : -ENOMEM;
}

static int recover_cursors(struct http_backend *hb)
{
	struct store *st = hb->b.deps->store;
	size_t i;
	int err;

	load_state(hb);
	err = spool_scan(hb->sp, scan_record, hb);
	if (err < 0)
		return err;
	drop_finished(hb);
	err = store_job_queued(st, add_unfinished, hb);
	if (!err)
		err = store_job_running(st, add_unfinished, hb);
	for (i = 0; i < hb->n_cursors; i++)
		hb->cursors[i]->lagging = true;	/* the store may hold more than the spool */
	if (spool_dropped(hb->sp))
		log_warning("backend '%s': dropped %llu bytes of torn records from spool '%s'",
			    hb->b.name, (unsigned long long)spool_dropped(hb->sp),
			    spool_dir(hb->sp));
	return err;
}

static int make_prefix(struct http_backend *hb)
{
	const char *lab = backend_config(&hb->b)->lab_name;
	json_t *head = json_pack("{s:i, s:s, s:s}", "version", HTTP_WIRE_VERSION, "lab",
				 lab ? lab : "labd", "backend", hb->b.name);
	char *text = head ? json_dumps(head, JSON_COMPACT) : NULL;
	int err = -ENOMEM;

	/* '{"version":1,...}' becomes '{"version":1,...,"items":[' */
	if (text && asprintf(&hb->prefix, "%.*s,\"items\":[", (int)strlen(text) - 1, text) >= 0)
		err = 0;
	free(text);
	json_decref(head);
	return err;
}

static int http_start(struct backend *b)
{
	struct http_backend *hb = to_http(b);
	struct upload_opts o = { .url = hb->url, .token = hb->token,
				 .batch_bytes = hb->batch_bytes, .batch_ms = hb->batch_ms,
				 .retry_max_ms = hb->retry_max_ms,
				 .max_in_flight = hb->max_in_flight };
	char *dir = backend_state_path(b, "spool");
	int err;

	if (!dir)
		return -ENOMEM;
	err = spool_open(dir, hb->spool_max, &hb->sp);
	if (!err && asprintf(&hb->state_path, "%s/%s", dir, HTTP_CURSORS) < 0)
		err = -ENOMEM;
	free(dir);
	if (!err)
		err = make_prefix(hb);
	if (!err)
		err = upload_new(b, hb->sp, &o, &http_upload_ops, hb, &hb->up);
	if (!err)
		err = loop_add_timer(b->deps->loop, &hb->capture, USEC_INFINITY, on_capture, hb);
	if (!err)
		err = recover_cursors(hb);
	if (err < 0)
		return err;
	loop_source_set_description(hb->capture, "backend:http:capture");
	on_capture(hb->capture, loop_now(b->deps->loop), hb);
	return 0;
}

/* ---- configuration ---- */

static int get_size(const config_setting_t *g, const char *key, long long min, long long max,
		    long long def, long long *ret, struct diag *diag)
{
	*ret = def;
	return cfg_get_int(g, key, false, min, max, ret, diag) == -EINVAL ? -EINVAL : 0;
}

/*
 * Console bytes in one log item: at most HTTP_LOG_CHUNK_MAX and half a batch.
 * Bytes that are not UTF-8 take up to HTTP_LOG_ITEM_GROWTH times their size
 * in the spool (escaped text, 6 bytes for a control character, plus base64),
 * so an item is also kept small enough to fit in the quarter of the spool
 * that is free when catching up starts.  An item larger than that could
 * never be spooled: the backend would stay full, with nothing left to
 * deliver that would make room, and stop streaming for good.
 */
static size_t chunk_limit(size_t batch_bytes, uint64_t spool_max)
{
	uint64_t n = HTTP_LOG_CHUNK_MAX, fit = (spool_max / 4 - HTTP_LOG_ITEM_OVERHEAD) /
		HTTP_LOG_ITEM_GROWTH;

	if (n > batch_bytes / 2)
		n = batch_bytes / 2;
	if (n > fit)
		n = fit;
	return n < HTTP_LOG_CHUNK_MIN ? HTTP_LOG_CHUNK_MIN : (size_t)n;
}

/* The numbers of group @g into @hb, defaults for those absent; every bad one goes to @diag. */
static int parse_numbers(struct http_backend *hb, const config_setting_t *g, struct diag *diag)
{
	long long bytes, ms, max, in_flight;
	int err = 0;

	if (get_size(g, "batch_bytes", 1024, HTTP_MAX_BATCH_BYTES, HTTP_DEFAULT_BATCH_BYTES,
		     &bytes, diag) < 0)
		err = -EINVAL;
	if (get_size(g, "batch_ms", 0, 60000, HTTP_DEFAULT_BATCH_MS, &ms, diag) < 0)
		err = -EINVAL;
	if (get_size(g, "spool_max", (long long)SPOOL_MIN_BYTES, INT64_MAX,
		     (long long)HTTP_DEFAULT_SPOOL_MAX, &max, diag) < 0)
		err = -EINVAL;
	if (get_size(g, "max_in_flight", 1, UPLOAD_MAX_IN_FLIGHT, HTTP_DEFAULT_IN_FLIGHT,
		     &in_flight, diag) < 0)
		err = -EINVAL;
	if (backend_get_retry_max(g, &hb->retry_max_ms, diag) < 0)
		err = -EINVAL;
	hb->batch_bytes = (size_t)bytes;
	hb->max_in_flight = (unsigned)in_flight;
	hb->batch_ms = (uint64_t)ms;
	hb->spool_max = (uint64_t)max;
	hb->chunk_max = chunk_limit(hb->batch_bytes, hb->spool_max);
	return err;
}

static int http_parse(const config_setting_t *g, struct backend **ret, struct diag *diag)
{
	struct http_backend *hb = calloc(1, sizeof(*hb));
	const char *url = NULL, *token = NULL;
	int err = 0;

	if (!hb)
		return -ENOMEM;
	hb->unknown = json_object();
	if (backend_init(&hb->b, &backend_http_ops, g) < 0 || !hb->unknown) {
		hb->b.ops->free(&hb->b);
		return -ENOMEM;
	}
	if (backend_check_url(g, "url", true, &url, diag) < 0)
		err = -EINVAL;
	if (cfg_get_string(g, "token", false, &token, diag) == -EINVAL)
		err = -EINVAL;
	if (parse_numbers(hb, g, diag) < 0)
		err = -EINVAL;
	hb->url = url ? strdup(url) : NULL;
	hb->token = token ? strdup(token) : NULL;
	if (!err && (!hb->url || (token && !hb->token)))
		err = -ENOMEM;
	if (err < 0) {
		hb->b.ops->free(&hb->b);
		return err;
	}
	*ret = &hb->b;
	return 0;
}

static bool http_busy(struct backend *b)
{
	struct http_backend *hb = to_http(b);

	return hb->up && upload_busy(hb->up) && !upload_failing(hb->up);
}

static void http_stats(struct backend *b, struct backend_stats *ret)
{
	if (to_http(b)->up)
		upload_stats(to_http(b)->up, ret);
}

static void http_free(struct backend *b)
{
	struct http_backend *hb = to_http(b);
	size_t i;

	if (b->deps)	/* NULL when only checked (labd check-config) */
		store_read_later_forget(b->deps->store, hb);	/* catch-ups being read */
	if (hb->sp && hb->state_path)
		save_state(hb);
	upload_free(hb->up);
	loop_source_free(hb->capture);
	spool_close(hb->sp);
	for (i = 0; i < hb->n_cursors; i++) {
		free(hb->cursors[i]->dir);
		free(hb->cursors[i]);
	}
	free(hb->cursors);
	json_decref(hb->unknown);
	free(hb->prefix);
	free(hb->state_path);
	free(hb->url);
	free(hb->token);
	backend_release(b);
	free(hb);
}

const struct backend_ops backend_http_ops = {
	.type = "http",
	.keys = http_keys,
	.parse = http_parse,
	.start = http_start,
	.free = http_free,
	.event = http_event,
	.log_grew = http_log_grew,
	.busy = http_busy,
	.stats = http_stats,
};
