// SPDX-License-Identifier: GPL-2.0-or-later
/* api_log.c -- job console logs over HTTP: whole, from an offset, or followed live */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "config/config.h"
#include "core/loop.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "store/store.h"

#define LOG_CONTENT_TYPE "text/plain; charset=utf-8"
#define LOG_SIZE_HEADER "X-Log-Size"
#define STREAM_BLOCK (32 * 1024)	/* libmicrohttpd's buffer for a streamed log */
#define STREAM_CHUNK (16 * 1024)	/* bytes rendered per refill */
#define FOLLOW_HOLD (1 * USEC_PER_SEC)	/* labd lines wait this long for a console line's end */
#define FOLLOW_FLUSH (250 * USEC_PER_MSEC)	/* log growth waits this long to go out together */
#define LOG_LINES_HEADER "X-Log-Lines"		/* ?tail= and ?lines=: lines in the log */
#define LOG_FIRST_HEADER "X-Log-First-Line"	/* the number of the first line sent */
#define LOG_MAX_LINES 100000			/* of one ?tail= or ?lines= answer */
#define LOG_MAX_LABD (1024 * 1024)		/* bytes of labd.log in one /labd answer */
#define START_POLL (1 * USEC_PER_SEC)	/* a followed job no host started yet: asked again */
#define RECENT_ENDS 1024		/* jobs whose end a follower may have just missed */

/*
 * A stream sends a rendered log (timestamps, labd's lines) or a followed one
 * piece by piece through a joblog reader: it holds at most one refill not yet
 * taken by libmicrohttpd, whatever the log's size.  A followed log is read as
 * it grows: with nothing to send the connection is suspended, and log growth
 * and the job's end resume it.  labd's lines go between console lines; those
 * written while a console line is in progress wait for its end, at most
 * FOLLOW_HOLD (a prompt may stay without its line end for long).  Growth is
 * sent every FOLLOW_FLUSH, not as each console read lands: a booting board
 * writes its log in hundreds of small pieces a second, each of which would
 * cost labd a resume, a read of the log and a send() per follower.
 */
struct follower {
	struct api_logs *logs;
	struct api_listener *listener;
	struct MHD_Connection *conn;
	struct follower *prev, *next;
	int64_t job_id;
	struct joblog_reader *rd;
	struct loop_source *hold;	/* FOLLOW_HOLD expired: give the waiting lines */
	bool give_held;
	bool finished;		/* the job ended: stop once everything was sent */
	bool suspended;
	bool grew;		/* the log grew since the last flush */
	bool closed;		/* labd stops: end the stream now */
	struct strbuf out;	/* prepared, from out_pos on not yet sent */
	size_t out_pos;
};

/*
 * A GET handler reads the job's record from the store; with PostgreSQL the
 * answer comes later and the handler runs again, so the job's "finished"
 * event may pass between the read and the follower it starts: the ids of
 * the last RECENT_ENDS jobs that ended are kept, and a follower of one of
 * them ends with the log instead of waiting for an event that went by.
 */
struct api_logs {
	const struct api_deps *d;
	struct events_listener *log_listener;
	struct events_listener *events_listener;
	struct follower *followers;
	struct loop_source *flush;	/* FOLLOW_FLUSH after a followed log grew */
	int64_t recent_ends[RECENT_ENDS];	/* a ring, next at n_ends % RECENT_ENDS */
	uint64_t n_ends;
	struct start_wait *waits;	/* requests waiting for a job's start */
	bool stopping;
};

/* ---- waking followers ---- */

static void follower_wake(struct follower *f)
{
	if (!f->suspended || !f->conn)
		return;
	f->suspended = false;
	MHD_resume_connection(f->conn);
	api_listener_poke(f->listener);
}

static void on_log_grew(int64_t job_id, void *ud)
{
	struct api_logs *logs = ud;
	struct follower *f;

	for (f = logs->followers; f; f = f->next) {
		if (f->job_id != job_id || !f->suspended)
			continue;
		f->grew = true;
		if (!loop_timer_is_armed(logs->flush))
			loop_timer_set_rel(logs->flush, FOLLOW_FLUSH);
	}
}

static int on_flush(struct loop_source *s, uint64_t now, void *ud)
{
	struct api_logs *logs = ud;
	struct follower *f;

	for (f = logs->followers; f; f = f->next) {
		if (f->grew)
			follower_wake(f);
		f->grew = false;
	}
	return 0;
}

static void on_event(const struct event *ev, void *ud)
{
	struct api_logs *logs = ud;
	struct follower *f;

	if (strcmp(ev->kind, "finished"))
		return;
	logs->recent_ends[logs->n_ends++ % RECENT_ENDS] = ev->job_id;
	for (f = logs->followers; f; f = f->next) {
		if (f->job_id != ev->job_id)
			continue;
		f->finished = true;
		follower_wake(f);
	}
}

static int on_hold_expired(struct loop_source *s, uint64_t now, void *ud)
{
	struct follower *f = ud;

	f->give_held = true;
	follower_wake(f);
	return 0;
}

static bool ended_lately(const struct api_logs *logs, int64_t job_id)
{
	size_t i, n = logs->n_ends < RECENT_ENDS ? logs->n_ends : RECENT_ENDS;

	for (i = 0; i < n; i++)
		if (logs->recent_ends[i] == job_id)
			return true;
	return false;
}

/* ---- producing the stream ---- */

static int fill(struct follower *f)
{
	enum joblog_fill mode = f->finished ? JOBLOG_FILL_END :
				f->give_held ? JOBLOG_FILL_NOW : JOBLOG_FILL_WAIT;
	int r = joblog_reader_fill(f->rd, &f->out, STREAM_CHUNK, mode);

	f->give_held = false;
	if (r >= 0 && f->hold && !joblog_reader_waiting(f->rd))
		loop_timer_set(f->hold, USEC_INFINITY);
	else if (r >= 0 && f->hold && !loop_timer_is_armed(f->hold))
		loop_timer_set_rel(f->hold, FOLLOW_HOLD);
	return r;
}

/*
 * libmicrohttpd asks for the next bytes.  Nothing to send yet: suspend the
 * connection (returning 0 alone would have it ask again at once).
 */
static ssize_t follow_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct follower *f = cls;
	size_t n;

	if (f->closed)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (f->out_pos == f->out.len) {
		strbuf_reset(&f->out);
		f->out_pos = 0;
		if (fill(f) < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = f->out.len - f->out_pos;
	if (n) {
		n = n < max ? n : max;
		memcpy(buf, f->out.buf + f->out_pos, n);
		f->out_pos += n;
		return (ssize_t)n;
	}
	if (f->finished)
		return MHD_CONTENT_READER_END_OF_STREAM;
	f->suspended = true;
	MHD_suspend_connection(f->conn);
	return 0;
}

static void follower_unlink(struct follower *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else if (f->logs->followers == f)
		f->logs->followers = f->next;
	if (f->next)
		f->next->prev = f->prev;
	f->prev = f->next = NULL;
}

static struct follower *follower_free(struct follower *f)
{
	if (!f)
		return NULL;
	follower_unlink(f);
	loop_source_free(f->hold);
	joblog_reader_free(f->rd);
	strbuf_release(&f->out);
	free(f);
	return NULL;
}

/*
 * Stream the log of @rec from @dir (@flags: enum joblog_render_flags): all of
 * it as it is now, or (@follow) as it grows until the job ends.
 */
static enum MHD_Result start_stream(struct api_request *r, const struct job_record *rec,
				    const char *dir, uint64_t offset, unsigned flags, bool follow)
{
	struct api_logs *logs = api_logs_of(r);
	struct MHD_Response *resp;
	struct follower *f;
	char size[32];
	int err;

	f = calloc(1, sizeof(*f));
	if (!f)
		return MHD_NO;
	err = joblog_reader_new(dir, flags, offset, !follow, &f->rd);
	if (!err && follow && (flags & JOBLOG_RENDER_LABD))
		err = loop_add_timer(logs->d->loop, &f->hold, USEC_INFINITY,
				     on_hold_expired, f);
	if (err < 0) {
		follower_free(f);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the log: %s",
				       strerror(-err));
	}
	f->logs = logs;
	f->listener = r->listener;
	f->conn = r->conn;
	f->job_id = rec->id;
	f->finished = !follow || rec->state == JOB_STATE_FINISHED || ended_lately(logs, rec->id);
	strbuf_init(&f->out);
	f->next = logs->followers;
	if (f->next)
		f->next->prev = f;
	logs->followers = f;
	r->stream = f;	/* freed by api_log_request_done() */
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, follow_read, f,
						 NULL);
	if (resp) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, LOG_CONTENT_TYPE);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
		if (!follow) {
			snprintf(size, sizeof(size), "%llu",
				 (unsigned long long)joblog_reader_console_end(f->rd));
			MHD_add_response_header(resp, LOG_SIZE_HEADER, size);
		}
		/* not kept alive: a browser leaving the page closes it instead of draining it */
		if (follow)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* ---- whole logs ---- */

/* The line headers of ?tail= and ?lines=: the first line sent, of how many. */
static void add_line_headers(struct MHD_Response *resp, int64_t first, int64_t count)
{
	char buf[32];

	if (!first)
		return;
	snprintf(buf, sizeof(buf), "%lld", (long long)first);
	MHD_add_response_header(resp, LOG_FIRST_HEADER, buf);
	snprintf(buf, sizeof(buf), "%lld", (long long)count);
	MHD_add_response_header(resp, LOG_LINES_HEADER, buf);
}

static enum MHD_Result reply_text(struct api_request *r, struct strbuf *text, uint64_t size)
{
	struct MHD_Response *resp;
	char buf[32];
	size_t len;
	char *data;

	data = strbuf_detach(text, &len);
	resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(data);
		return MHD_NO;
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)size);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, LOG_CONTENT_TYPE);
	MHD_add_response_header(resp, LOG_SIZE_HEADER, buf);
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* A compressed console.log sent from @offset on, decompressed as libmicrohttpd asks. */
struct zsend {
	struct joblog_file *f;
	uint64_t offset;
};

static ssize_t zsend_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct zsend *z = cls;
	ssize_t n = joblog_fpread(z->f, buf, max, z->offset + pos);

	return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void zsend_free(void *cls)
{
	struct zsend *z = cls;

	joblog_fclose(z->f);
	free(z);
}

/* @size - @offset bytes of @f from @offset: the plain file straight (nothing copied). */
static struct MHD_Response *raw_response(struct joblog_file *f, uint64_t offset, uint64_t size)
{
	struct MHD_Response *resp;
	struct zsend *z;
	int fd;

	if (!joblog_fcompressed(f)) {
		fd = dup(joblog_fd(f));
		joblog_fclose(f);
		/* libmicrohttpd owns and closes @fd from here */
		resp = fd < 0 ? NULL : MHD_create_response_from_fd_at_offset64(size - offset, fd,
										offset);
		if (!resp && fd >= 0)
			close(fd);
		return resp;
	}
	z = malloc(sizeof(*z));
	if (!z) {
		joblog_fclose(f);
		return NULL;
	}
	z->f = f;
	z->offset = offset;
	resp = MHD_create_response_from_callback(size - offset, STREAM_BLOCK, zsend_read, z,
						 zsend_free);
	if (!resp)
		zsend_free(z);
	return resp;
}

/* console.log (or its compressed copy) from @offset, byte-exact. */
static enum MHD_Result reply_raw(struct api_request *r, const char *dir, uint64_t offset,
				 int64_t first_line, int64_t lines)
{
	struct strbuf empty = STRBUF_INIT;
	struct joblog_file *f = NULL;
	struct MHD_Response *resp;
	uint64_t size = 0;
	char buf[32];

	if (joblog_fopen(dir, JOBLOG_CONSOLE, &f) == 0)
		size = joblog_fsize(f);
	if (size <= offset) {
		joblog_fclose(f);
		return reply_text(r, &empty, size);
	}
	resp = raw_response(f, offset, size);
	if (!resp)
		return MHD_NO;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)size);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, LOG_CONTENT_TYPE);
	MHD_add_response_header(resp, LOG_SIZE_HEADER, buf);
	add_line_headers(resp, first_line, lines);
	return api_reply(r, MHD_HTTP_OK, resp);
}

/*
 * ?tail=N: the last N lines, to the end of the file; ?lines=A-B: lines A to
 * B (to the end without B).  A dashboard shows a 50 MB log this way: the
 * tail first, earlier pages as the reader scrolls back.
 */
static enum MHD_Result reply_lines(struct api_request *r, const char *dir, const char *tail,
				   const char *lines)
{
	int64_t count = joblog_line_count(dir), first, last = INT64_MAX, n;
	struct strbuf text = STRBUF_INIT;
	struct MHD_Response *resp;
	uint64_t offset;
	char *end, *data;
	size_t len;
	int err;

	if (tail) {
		n = strtoll(tail, &end, 10);
		if (*end || n < 1 || n > LOG_MAX_LINES)
			return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
					       "'tail' must be a number of lines from 1 to %d",
					       LOG_MAX_LINES);
		first = count > n ? count - n + 1 : 1;
		if (!count || joblog_line_offset(dir, first, &offset) < 0)
			offset = 0;
		return reply_raw(r, dir, offset, first, count);
	}
	first = strtoll(lines, &end, 10);
	if (*end == '-' && end[1])
		last = strtoll(end + 1, &end, 10);
	else if (*end == '-')
		end++;
	if (*end || first < 1 || last < first)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'lines' must be FIRST-LAST or FIRST- (line numbers from 1)");
	if (first > count)
		return api_reply_error(r, MHD_HTTP_RANGE_NOT_SATISFIABLE,
				       "the log has %lld lines", (long long)count);
	if (last > count || last - first >= LOG_MAX_LINES)
		last = first + LOG_MAX_LINES - 1 < count ? first + LOG_MAX_LINES - 1 : count;
	err = joblog_line_range(dir, first, last, &text);
	if (err < 0) {
		strbuf_release(&text);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the log: %s",
				       strerror(-err));
	}
	data = strbuf_detach(&text, &len);	/* not in the call: its arguments have no order */
	resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, LOG_CONTENT_TYPE);
	add_line_headers(resp, first, count);
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* ---- following a job no host started yet ---- */

/*
 * In a lab of several hosts a queued job's log will be written by whichever
 * host claims it, and only that host sees it grow and end.  So a followed
 * job still queued is not answered yet: the request waits, its connection
 * suspended, and runs again every START_POLL until a host started the job;
 * it is then followed here or forwarded to that host (api_elsewhere()).
 */
struct start_wait {
	struct api_request *r;
	struct loop_source *timer;
	struct start_wait *next, **pprev;	/* api_logs.waits */
};

static int on_start_poll(struct loop_source *s, uint64_t now, void *ud)
{
	struct start_wait *w = ud;

	api_resume(w->r);	/* the handler runs again: api_log_get() */
	return 0;
}

static void start_wait_gone(struct api_request *r)
{
	struct start_wait *w = r->pending;

	r->pending = NULL;
	r->pending_gone = NULL;
	if (w->next)
		w->next->pprev = w->pprev;
	*w->pprev = w->next;
	loop_source_free(w->timer);
	free(w);
}

static enum MHD_Result wait_for_start(struct api_request *r)
{
	struct api_logs *logs = api_logs_of(r);
	struct start_wait *w = calloc(1, sizeof(*w));

	if (logs->stopping) {
		free(w);
		return api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "labd is stopping");
	}
	if (!w || loop_add_timer(api_deps_of(r)->loop, &w->timer, USEC_INFINITY, on_start_poll,
				 w) < 0) {
		free(w);
		return MHD_NO;
	}
	loop_source_set_description(w->timer, "api:log-start-poll");
	loop_timer_set_rel(w->timer, START_POLL);
	w->r = r;
	w->next = logs->waits;
	if (w->next)
		w->next->pprev = &w->next;
	w->pprev = &logs->waits;
	logs->waits = w;
	r->pending = w;
	r->pending_gone = start_wait_gone;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

/* A followed job that no host runs yet, in a lab of several hosts. */
static bool start_awaited(struct api_request *r, const struct job_record *rec, bool follow)
{
	return follow && rec->state == JOB_STATE_QUEUED &&
	       store_host_name(api_deps_of(r)->store);
}

/* GET /jobs/{id}/log[?timestamps=1][&labd=1][&offset=N][&follow=1] */
enum MHD_Result api_log_get(struct api_request *r)
{
	bool follow = api_query_bool(r, "follow");
	const char *tail = api_query(r, "tail"), *lines = api_query(r, "lines");
	struct job_record rec = { 0 };
	unsigned flags = 0;
	enum MHD_Result ret;
	int64_t id, offset = 0;
	int has_offset;
	char *dir;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (r->pending)
		start_wait_gone(r);	/* asked again: has a host started it? */
	if (api_param_id(r, 0, &id) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid job id '%s'",
				       r->params[0]);
	has_offset = api_query_int(r, "offset", 0, INT64_MAX, &offset);
	if (has_offset < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'offset' must be a byte offset");
	if (api_query_bool(r, "timestamps"))
		flags |= JOBLOG_RENDER_TIMESTAMPS;
	if (api_query_bool(r, "labd"))
		flags |= JOBLOG_RENDER_LABD;
	if (has_offset && flags)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'offset' works on the raw log only (no timestamps, labd)");
	if ((tail || lines) && (flags || follow || has_offset || (tail && lines)))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'tail' and 'lines' work on the raw log alone");
	if (follow && (flags & JOBLOG_RENDER_TIMESTAMPS))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'follow' streams the log without timestamps");
	if (store_job_get(api_deps_of(r)->store, id, &rec) < 0)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no job %lld", (long long)id);
	if (api_reply_gone(r, &rec, API_GONE_LOG, &ret) || api_elsewhere(r, rec.host, &ret)) {
		job_record_release(&rec);
		return ret;
	}
	if (start_awaited(r, &rec, follow)) {
		job_record_release(&rec);
		return wait_for_start(r);
	}
	dir = joblog_job_dir(lab_current_config(api_deps_of(r)->lab)->state_dir, id);
	if (!dir)
		ret = MHD_NO;
	else if (tail || lines)
		ret = reply_lines(r, dir, tail, lines);
	else if (follow || flags)
		ret = start_stream(r, &rec, dir, (uint64_t)offset, flags, follow);
	else
		ret = reply_raw(r, dir, (uint64_t)offset, 0, 0);
	free(dir);
	job_record_release(&rec);
	return ret;
}

/* ---- labd's own lines, for the dashboard ---- */

/* Complete lines of labd.log in @text (from byte @offset of the file) as JSON into @list. */
static uint64_t labd_lines_json(const struct strbuf *text, uint64_t offset, json_t *list)
{
	struct joblog_labd_line l;
	struct strbuf msg = STRBUF_INIT;
	const char *p = text->buf, *nl;
	char ts[32];

	while (p && (nl = memchr(p, '\n', text->len - (size_t)(p - text->buf)))) {
		strbuf_reset(&msg);
		if (joblog_parse_labd(p, (size_t)(nl - p), &l, &msg) == 0) {
			joblog_format_time(l.ts, ts, sizeof(ts));
			json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:o}", "ts", ts,
				"kind", l.kind, "line", (json_int_t)l.line, "text",
				api_json_str(msg.buf ? msg.buf : "")));
		}
		p = nl + 1;
	}
	strbuf_release(&msg);
	return offset + (uint64_t)(p ? p - text->buf : 0);
}

/*
 * GET /jobs/{id}/labd[?after=OFFSET]: labd's lines about the job (actions,
 * errors, results), parsed: {"lines": [{"ts", "kind", "line", "text"}...],
 * "next": the offset to ask from next}.  "line" is the number of console
 * lines started when labd wrote it: it goes after that console line.
 */
enum MHD_Result api_log_labd(struct api_request *r)
{
	struct strbuf text = STRBUF_INIT;
	struct job_record rec = { 0 };
	json_t *list;
	int64_t id, after = 0;
	uint64_t next;
	enum MHD_Result ret;
	char *dir;
	int err;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (api_param_id(r, 0, &id) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid job id '%s'",
				       r->params[0]);
	if (api_query_int(r, "after", 0, INT64_MAX, &after) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'after' must be a byte offset");
	if (store_job_get(api_deps_of(r)->store, id, &rec) < 0)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no job %lld", (long long)id);
	if (api_reply_gone(r, &rec, API_GONE_LOG, &ret) || api_elsewhere(r, rec.host, &ret)) {
		job_record_release(&rec);
		return ret;
	}
	job_record_release(&rec);
	dir = joblog_job_dir(lab_current_config(api_deps_of(r)->lab)->state_dir, id);
	err = dir ? joblog_read(dir, JOBLOG_LABD, (uint64_t)after, LOG_MAX_LABD, &text) : -ENOMEM;
	free(dir);
	if (err < 0) {
		strbuf_release(&text);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read labd's lines of job %lld: %s", (long long)id,
				       strerror(-err));
	}
	list = json_array();
	next = labd_lines_json(&text, (uint64_t)after, list);
	strbuf_release(&text);
	return api_reply_json(r, MHD_HTTP_OK, json_pack("{s:o, s:I}", "lines", list, "next",
							(json_int_t)next));
}

/* ---- life cycle ---- */

void api_log_request_done(struct api_request *r)
{
	r->stream = follower_free(r->stream);
}

int api_logs_new(const struct api_deps *d, struct api_logs **ret)
{
	struct api_logs *logs = calloc(1, sizeof(*logs));
	int err;

	if (!logs)
		return -ENOMEM;
	logs->d = d;
	err = events_listen_log(d->events, on_log_grew, logs, &logs->log_listener);
	if (!err)
		err = events_listen(d->events, on_event, logs, &logs->events_listener);
	if (!err)
		err = loop_add_timer(d->loop, &logs->flush, USEC_INFINITY, on_flush, logs);
	if (err < 0) {
		api_logs_free(logs);
		return err;
	}
	loop_source_set_description(logs->flush, "api:log-flush");
	*ret = logs;
	return 0;
}

void api_logs_shutdown(struct api_logs *logs)
{
	struct follower *f;

	if (!logs)
		return;
	logs->stopping = true;
	for (f = logs->followers; f; f = f->next) {
		f->closed = true;
		follower_wake(f);
	}
	/* libmicrohttpd wants its suspended connections back; they answer 503 */
	while (logs->waits) {
		struct api_request *r = logs->waits->r;

		start_wait_gone(r);
		MHD_resume_connection(r->conn);
	}
}

struct api_logs *api_logs_free(struct api_logs *logs)
{
	if (!logs)
		return NULL;
	while (logs->followers)
		follower_free(logs->followers);
	events_unlisten(logs->log_listener);
	events_unlisten(logs->events_listener);
	loop_source_free(logs->flush);
	free(logs);
	return NULL;
}
