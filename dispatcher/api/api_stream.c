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
 * Each client has its own bounded buffer: a client STREAM_MAX_BEHIND bytes
 * behind is dropped (EventSource reconnects and the page reloads its data).
 * With nothing to send the connection is suspended; new data resumes it.
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
#include "core/loop.h"
#include "session/viewer.h"

#define STREAM_BLOCK (16 * 1024)	/* libmicrohttpd's buffer for a stream */
#define STREAM_MAX_BEHIND (1024 * 1024)
#define STREAM_TICK (1000 * 1000ULL)	/* usec between board checks */
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
	struct strbuf out;
	size_t out_pos;
};

/* What a board looked like at the last check, to send only what changed. */
struct board_print {
	char *name;
	uint64_t hash;
};

struct api_streams {
	const struct api_deps *d;
	struct events_listener *events;
	struct loop_source *tick;
	struct sse_client *clients;
	size_t n_board_clients;
	struct board_print *prints;	/* sorted by name */
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

static void client_send(struct sse_client *c, const char *text, size_t len)
{
	if (c->closed)
		return;
	if (c->out.len - c->out_pos + len > STREAM_MAX_BEHIND || strbuf_add(&c->out, text, len))
		c->closed = true;	/* the client reconnects and reloads */
	client_wake(c);
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

static void on_event(const struct event *ev, void *ud)
{
	struct api_streams *s = ud;
	struct sse_client *c;
	char *msg = NULL;
	size_t len = 0;
	json_t *o;

	for (c = s->clients; c; c = c->next) {
		if (c->job && c->job != ev->job_id)
			continue;
		if (!msg) {
			o = json_pack("{s:I, s:I, s:s, s:o, s:O?}", "job", (json_int_t)ev->job_id,
				      "seq", (json_int_t)ev->seq, "kind", ev->kind, "ts",
				      api_time_json(ev->ts), "data", ev->data);
			msg = o ? sse_message("job", o, &len) : NULL;
			json_decref(o);
			if (!msg)
				return;
		}
		client_send(c, msg, len);
	}
	free(msg);
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

/* The boards that changed since the last check, as JSON; NULL when none (or ENOMEM). */
static json_t *boards_changed(struct api_streams *s)
{
	struct board **boards;
	struct board_print *now, *old;
	json_t *changed = json_array();
	size_t n, i;

	boards = lab_boards(s->d->lab, &n);
	now = calloc(n ? n : 1, sizeof(*now));
	if (!now || !changed)
		goto fail;
	for (i = 0; i < n; i++) {
		now[i].name = strdup(board_name(boards[i]));
		if (!now[i].name)
			goto fail;
		now[i].hash = board_hash(s->d, boards[i]);
		old = s->n_prints ? bsearch(&now[i], s->prints, s->n_prints, sizeof(*old), by_name)
				  : NULL;
		if (!old || old->hash != now[i].hash)
			json_array_append_new(changed, api_board_json(s->d, boards[i]));
	}
	qsort(now, n, sizeof(*now), by_name);
	prints_free(s->prints, s->n_prints);
	s->prints = now;
	s->n_prints = n;
	if (json_array_size(changed))
		return changed;
	json_decref(changed);
	return NULL;
fail:
	prints_free(now, now ? n : 0);
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
	if (keepalive)
		s->last_keepalive = now;
	for (c = s->clients; c; c = c->next) {
		if (msg && !c->job)
			client_send(c, msg, len);
		if (keepalive)
			client_send(c, ": keepalive\n\n", 13);
	}
	free(msg);
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
	err = events_listen(d->events, on_event, s, &s->events);
	if (!err)
		err = loop_add_timer(d->loop, &s->tick, USEC_INFINITY, on_tick, s);
	if (err < 0) {
		api_streams_free(s);
		return err;
	}
	loop_source_set_description(s->tick, "api:stream");
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
	prints_free(s->prints, s->n_prints);
	free(s);
	return NULL;
}
