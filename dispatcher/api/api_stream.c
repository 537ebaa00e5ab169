// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_stream.c -- GET /stream: the lab's changes as Server-Sent Events
 *
 * The dashboard keeps one stream open per page and never polls:
 *
 *   event: job      data: {"job": 12, "seq": 7, "kind": "phase", "ts": "...", "data": {...}}
 *                   every job event as events.h broadcasts it (?job=N: of job N only)
 *   event: boards   data: [<board as GET /devices shows it>, ...]
 *                   the boards whose state, job, holder, console or viewers changed,
 *                   checked once a second while someone listens (not with ?job=N)
 *   ": keepalive"   a comment every STREAM_KEEPALIVE, so idle proxies keep the stream
 *
 * Events are rendered once, into one buffer shared by every client of the
 * whole lab, and handed out every STREAM_FLUSH: 256 boards running jobs make
 * hundreds of events a second, and sending each to each page on its own cost
 * labd a resume, a libmicrohttpd pass and a send() per event and page.  Each
 * client has its own bounded buffer: a client STREAM_MAX_BEHIND bytes behind
 * is dropped (EventSource reconnects and the page reloads its data).  With
 * nothing to send the connection is suspended; a flush resumes it.
 * Everything runs on labd's loop, no thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "board/lab.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "core/loop.h"
#include "session/viewer.h"

#define STREAM_BLOCK (16 * 1024)	/* libmicrohttpd's buffer for a stream */
#define STREAM_MAX_BEHIND (1024 * 1024)
#define STREAM_TICK (1000 * 1000ULL)	/* usec between board checks */
#define STREAM_FLUSH (250 * 1000ULL)	/* usec events wait to go out together */
#define STREAM_KEEPALIVE (15 * 1000 * 1000ULL)
#define STREAM_RETRY_MS 2000

struct sse_client {
	struct api_streams *streams;
	struct api_listener *listener;
	struct MHD_Connection *conn;
	struct sse_client *prev, *next;
	int64_t job;		/* only this job's events, or 0: every job and the boards */
	bool suspended;
	bool closed;		/* too far behind, or labd stops */
	bool pending;		/* out has data the client was not woken for */
	struct strbuf out;
	size_t out_pos;
};

/* What a board looked like at the last check, to send only what changed. */
struct board_print {
	char *name;
	uint64_t hash;
	bool known;		/* hash is the board's at the last check */
};

struct api_streams {
	const struct api_deps *d;
	struct events_listener *events;
	struct loop_source *tick;
	struct loop_source *flush;	/* STREAM_FLUSH after the first event not sent */
	struct strbuf shared;		/* rendered events for every client without ?job= */
	struct sse_client *clients;
	size_t n_board_clients;
	struct board_print *prints;	/* in lab_boards() order */
	size_t n_prints;
	uint64_t last_keepalive;
};

/* ---- sending ---- */

static void client_wake(struct sse_client *c)
{
	if (!c->suspended)
		return;
	c->suspended = false;
	MHD_resume_connection(c->conn);
	api_listener_poke(c->listener);
}

/* Queue @len bytes for @c; they go out at the next flush. */
static void client_queue(struct sse_client *c, const char *text, size_t len)
{
	if (c->closed)
		return;
	if (c->out.len - c->out_pos + len > STREAM_MAX_BEHIND || strbuf_add(&c->out, text, len))
		c->closed = true;	/* the client reconnects and reloads */
	c->pending = true;
}

/* Send what was queued for @c now. */
static void client_send(struct sse_client *c, const char *text, size_t len)
{
	client_queue(c, text, len);
	c->pending = false;
	client_wake(c);
}

/* @msg for every client without ?job=, at the next flush. */
static void shared_add(struct api_streams *s, const char *msg, size_t len)
{
	struct sse_client *c;

	if (!s->n_board_clients || strbuf_add(&s->shared, msg, len) == 0)
		return;
	for (c = s->clients; c; c = c->next) {	/* lost: their pages must reload */
		if (!c->job) {
			c->closed = true;
			c->pending = true;
		}
	}
}

static void flush_soon(struct api_streams *s)
{
	if (!loop_timer_is_armed(s->flush))
		loop_timer_set_rel(s->flush, STREAM_FLUSH);
}

/* The shared events to every client of the lab, then every client woken for what it got. */
static int on_flush(struct loop_source *src, uint64_t now, void *ud)
{
	struct api_streams *s = ud;
	struct sse_client *c;

	for (c = s->clients; c; c = c->next) {
		if (!c->job && s->shared.len)
			client_queue(c, s->shared.buf, s->shared.len);
		if (c->pending) {
			c->pending = false;
			client_wake(c);
		}
	}
	strbuf_reset(&s->shared);
	return 0;
}

/* "event: @name\ndata: <@data compact>\n\n"; NULL on ENOMEM. */
static char *sse_message(const char *name, json_t *data, size_t *ret_len)
{
	char *json = json_dumps(data, JSON_COMPACT), *msg;
	int n;

	if (!json)
		return NULL;
	n = asprintf(&msg, "event: %s\ndata: %s\n\n", name, json);
	free(json);
	if (n < 0)
		return NULL;
	*ret_len = (size_t)n;
	return msg;
}

/* The generic way: the event as a JSON object, dumped. */
static char *job_message_json(const struct event *ev, size_t *ret_len)
{
	json_t *o;
	char *msg;

	o = json_pack("{s:I, s:I, s:s, s:o, s:O?}", "job", (json_int_t)ev->job_id, "seq",
		      (json_int_t)ev->seq, "kind", ev->kind, "ts", api_time_json(ev->ts), "data",
		      ev->data);
	msg = o ? sse_message("job", o, ret_len) : NULL;
	json_decref(o);
	return msg;
}

/*
 * "event: job\ndata: {"job":..., "seq":..., "kind":..., "ts":..., "data":...}\n\n",
 * the same text as job_message_json(), printed around the JSON the event's data was
 * stored as: no object built and dumped for each event.
 */
static char *job_message(const struct event *ev, size_t *ret_len)
{
	char ts[48] = "null", *msg;
	int n;

	if (!ev->data_text || strspn(ev->kind, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
				      strlen(ev->kind))
		return job_message_json(ev, ret_len);
	if (ev->ts) {
		ts[0] = '"';
		joblog_format_time(ev->ts, ts + 1, sizeof(ts) - 2);
		strcat(ts, "\"");
	}
	n = asprintf(&msg, "event: job\ndata: {\"job\":%lld,\"seq\":%lld,\"kind\":\"%s\",\"ts\":%s,"
		     "\"data\":%s}\n\n", (long long)ev->job_id, (long long)ev->seq, ev->kind, ts,
		     ev->data_text);
	if (n < 0)
		return NULL;
	*ret_len = (size_t)n;
	return msg;
}

static void on_event(const struct event *ev, void *ud)
{
	struct api_streams *s = ud;
	struct sse_client *c;
	char *msg;
	size_t len = 0;

	if (!s->clients)
		return;
	msg = job_message(ev, &len);
	if (!msg)
		return;
	shared_add(s, msg, len);
	for (c = s->clients; c; c = c->next)
		if (c->job == ev->job_id)
			client_queue(c, msg, len);
	free(msg);
	flush_soon(s);
}

/* ---- board changes ---- */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static uint64_t board_hash(const struct api_deps *d, const struct board *b)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%d|%d|%lld|%s|%llu|%zu|%s", (int)board_state(b),
		 (int)board_console_up(b), (long long)board_job(b),
		 board_holder(b) ? board_holder(b) : "", (unsigned long long)board_hold_until(b),
		 viewers_count(d->viewers, board_name(b)),
		 board_state_reason(b) ? board_state_reason(b) : "");
	return fnv1a(buf);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct board_print *)a)->name, ((const struct board_print *)b)->name);
}

static void prints_free(struct board_print *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(p[i].name);
	free(p);
}

/* Whether the prints are those of @boards, in their order (the lab did not change). */
static bool prints_match(const struct api_streams *s, struct board **boards, size_t n)
{
	size_t i;

	if (n != s->n_prints)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(s->prints[i].name, board_name(boards[i])))
			return false;
	return true;
}

/* Prints for @boards in their order, each with its last hash if the board had one. */
static int prints_rebuild(struct api_streams *s, struct board **boards, size_t n)
{
	struct board_print *now = calloc(n ? n : 1, sizeof(*now)), *old;
	size_t i;

	if (!now)
		return -ENOMEM;
	if (s->n_prints)	/* qsort() takes no NULL, even for 0 elements */
		qsort(s->prints, s->n_prints, sizeof(*s->prints), by_name);
	for (i = 0; i < n; i++) {
		now[i].name = strdup(board_name(boards[i]));
		if (!now[i].name) {
			prints_free(now, n);
			return -ENOMEM;
		}
		old = s->n_prints ? bsearch(&now[i], s->prints, s->n_prints, sizeof(*old), by_name)
				  : NULL;
		now[i].hash = old ? old->hash : 0;
		now[i].known = old && old->known;
	}
	prints_free(s->prints, s->n_prints);
	s->prints = now;
	s->n_prints = n;
	return 0;
}

/*
 * The boards that changed since the last check, as JSON; NULL when none (or
 * ENOMEM).  Once a second while a page watches: the prints are only rebuilt
 * when the lab's boards changed (a reload).
 */
static json_t *boards_changed(struct api_streams *s)
{
	struct board **boards;
	json_t *changed;
	uint64_t h;
	size_t n, i;

	boards = lab_boards(s->d->lab, &n);
	if (!prints_match(s, boards, n) && prints_rebuild(s, boards, n) < 0)
		return NULL;
	changed = json_array();
	for (i = 0; changed && i < n; i++) {
		h = board_hash(s->d, boards[i]);
		if (s->prints[i].known && s->prints[i].hash == h)
			continue;
		s->prints[i].hash = h;
		s->prints[i].known = true;
		json_array_append_new(changed, api_board_json(s->d, boards[i]));
	}
	if (json_array_size(changed))
		return changed;
	json_decref(changed);
	return NULL;
}

static int on_tick(struct loop_source *src, uint64_t now, void *ud)
{
	struct api_streams *s = ud;
	bool keepalive = now - s->last_keepalive >= STREAM_KEEPALIVE;
	struct sse_client *c;
	json_t *changed = s->n_board_clients ? boards_changed(s) : NULL;
	char *msg = NULL;
	size_t len = 0;

	if (changed)
		msg = sse_message("boards", changed, &len);
	json_decref(changed);
	if (msg)
		shared_add(s, msg, len);
	free(msg);
	if (keepalive) {
		s->last_keepalive = now;
		for (c = s->clients; c; c = c->next)
			client_queue(c, ": keepalive\n\n", 13);
	}
	loop_timer_set(s->flush, USEC_INFINITY);
	on_flush(s->flush, now, s);	/* the boards after the events before them */
	if (s->clients)
		loop_timer_set_rel(src, STREAM_TICK);
	return 0;
}

/* ---- the stream's life cycle ---- */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_client *c = cls;
	size_t n = c->out.len - c->out_pos;

	if (c->closed)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (n) {
		n = n < max ? n : max;
		memcpy(buf, c->out.buf + c->out_pos, n);
		c->out_pos += n;
		if (c->out_pos == c->out.len) {
			strbuf_reset(&c->out);
			c->out_pos = 0;
		}
		return (ssize_t)n;
	}
	c->suspended = true;
	MHD_suspend_connection(c->conn);
	return 0;
}

static void client_free(struct sse_client *c)
{
	struct api_streams *s = c->streams;

	if (c->prev)
		c->prev->next = c->next;
	else if (s->clients == c)
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (!c->job)
		s->n_board_clients--;
	strbuf_release(&c->out);
	free(c);
}

void api_stream_request_done(struct api_request *r)
{
	if (r->sse)
		client_free(r->sse);
	r->sse = NULL;
}

enum MHD_Result api_stream_get(struct api_request *r)
{
	struct api_streams *s = api_streams_of(r);
	struct MHD_Response *resp;
	struct sse_client *c;
	int64_t job = 0;
	char hello[64];

	if (api_query_int(r, "job", 1, INT64_MAX, &job) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'job' must be a job id");
	c = calloc(1, sizeof(*c));
	if (!c)
		return MHD_NO;
	c->streams = s;
	c->listener = r->listener;
	c->conn = r->conn;
	c->job = job;
	strbuf_init(&c->out);
	c->next = s->clients;
	if (s->clients)
		s->clients->prev = c;
	s->clients = c;
	if (!job)
		s->n_board_clients++;
	r->sse = c;
	snprintf(hello, sizeof(hello), "retry: %d\n\n", STREAM_RETRY_MS);
	client_send(c, hello, strlen(hello));
	if (!loop_timer_is_armed(s->tick))
		loop_timer_set_rel(s->tick, STREAM_TICK);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read, c,
						 NULL);
	if (resp) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
		/* a browser leaving the page would otherwise wait to drain the stream
		 * for reuse, holding one of its six connections to labd */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	return api_reply(r, MHD_HTTP_OK, resp);
}

int api_streams_new(const struct api_deps *d, struct api_streams **ret)
{
	struct api_streams *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->d = d;
	strbuf_init(&s->shared);
	err = events_listen(d->events, on_event, s, &s->events);
	if (!err)
		err = loop_add_timer(d->loop, &s->tick, USEC_INFINITY, on_tick, s);
	if (!err)
		err = loop_add_timer(d->loop, &s->flush, USEC_INFINITY, on_flush, s);
	if (err < 0) {
		api_streams_free(s);
		return err;
	}
	loop_source_set_description(s->tick, "api:stream");
	loop_source_set_description(s->flush, "api:stream-flush");
	*ret = s;
	return 0;
}

void api_streams_shutdown(struct api_streams *s)
{
	struct sse_client *c;

	for (c = s ? s->clients : NULL; c; c = c->next) {
		c->closed = true;
		client_wake(c);
	}
}

struct api_streams *api_streams_free(struct api_streams *s)
{
	if (!s)
		return NULL;
	events_unlisten(s->events);
	loop_source_free(s->tick);
	loop_source_free(s->flush);
	strbuf_release(&s->shared);
	prints_free(s->prints, s->n_prints);
	free(s);
	return NULL;
}
