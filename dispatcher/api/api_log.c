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
#include "journal/events.h"
#include "journal/joblog.h"
#include "store/store.h"

#define LOG_CONTENT_TYPE "text/plain; charset=utf-8"
#define LOG_SIZE_HEADER "X-Log-Size"
#define FOLLOW_BLOCK (32 * 1024)	/* libmicrohttpd's buffer for a followed log */
#define FOLLOW_CHUNK (16 * 1024)	/* console bytes read per refill */
#define FOLLOW_LABD_CHUNK (64 * 1024)	/* labd.log read ahead; holds any complete line */
#define LABD_PREFIX "# labd: "

/*
 * A follower streams a job's log as it grows.  It reads the files by offset
 * (nothing is buffered for it elsewhere, so a slow client costs nothing) and
 * holds at most one refill not yet taken by libmicrohttpd.  With nothing to
 * send it suspends its connection; log growth and the job's end resume it.
 *
 * With labd's lines, a labd line logged while console line L was the last
 * one started ("L<n>" in labd.log) is sent before any byte of line L+1, so
 * the two logs interleave in the order they were written.
 */
struct follower {
	struct api_logs *logs;
	struct api_listener *listener;
	struct MHD_Connection *conn;
	struct follower *prev, *next;
	int64_t job_id;
	char *dir;
	bool with_labd;
	bool finished;		/* the job ended: stop once everything was sent */
	bool suspended;
	bool closed;		/* labd stops: end the stream now */
	uint64_t console_off;
	uint64_t labd_off;
	int64_t lines_sent;	/* console lines started in the bytes sent */
	bool console_bol;	/* the next console byte starts a line */
	bool out_bol;		/* the last byte sent ended a line */
	struct strbuf out;	/* prepared, from out_pos on not yet sent */
	size_t out_pos;
	struct strbuf labd;	/* complete labd.log lines read ahead, from labd_pos */
	size_t labd_pos;
};

struct api_logs {
	const struct api_deps *d;
	struct events_listener *log_listener;
	struct events_listener *events_listener;
	struct follower *followers;
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

	for (f = logs->followers; f; f = f->next)
		if (f->job_id == job_id)
			follower_wake(f);
}

static void on_event(const struct event *ev, void *ud)
{
	struct api_logs *logs = ud;
	struct follower *f;

	if (strcmp(ev->kind, "finished"))
		return;
	for (f = logs->followers; f; f = f->next) {
		if (f->job_id != ev->job_id)
			continue;
		f->finished = true;
		follower_wake(f);
	}
}

/* ---- producing the stream ---- */

/* Console line number a labd.log line was written at ("<time> <kind> L<n> <text>"). */
static int64_t labd_line_mark(const char *line, size_t len)
{
	const char *end = line + len, *p = memchr(line, ' ', len);

	if (p)
		p = memchr(p + 1, ' ', (size_t)(end - p - 1));
	if (!p || end - p < 3 || p[1] != 'L')
		return 0;
	return strtoll(p + 2, NULL, 10);
}

/* Keep complete labd.log lines read ahead; returns the mark of the next, or -1. */
static int64_t labd_next(struct follower *f, const char **ret_line, size_t *ret_len)
{
	const char *line, *nl;
	size_t before, keep;

	if (f->labd_pos == f->labd.len) {
		strbuf_reset(&f->labd);
		f->labd_pos = 0;
		if (joblog_read(f->dir, JOBLOG_LABD, f->labd_off, FOLLOW_LABD_CHUNK, &f->labd) < 0)
			return -1;
		before = f->labd.len;
		nl = memrchr(f->labd.buf, '\n', f->labd.len);
		keep = nl ? (size_t)(nl - f->labd.buf) + 1 : 0;
		strbuf_remove(&f->labd, keep, before - keep);
		f->labd_off += keep;
	}
	if (f->labd_pos == f->labd.len)
		return -1;
	line = f->labd.buf + f->labd_pos;
	nl = memchr(line, '\n', f->labd.len - f->labd_pos);
	*ret_line = line;
	*ret_len = (size_t)(nl - line);
	return labd_line_mark(line, *ret_len);
}

/* Console bytes from console_off, stopping before the first byte of line @stop. */
static int add_console(struct follower *f, int64_t stop, bool *ret_eof)
{
	size_t start = f->out.len, i;
	int err;

	err = joblog_read(f->dir, JOBLOG_CONSOLE, f->console_off, FOLLOW_CHUNK, &f->out);
	if (err < 0)
		return err;
	*ret_eof = f->out.len == start;
	for (i = start; i < f->out.len; i++) {
		if (f->console_bol) {
			if (f->lines_sent + 1 == stop)
				break;
			f->lines_sent++;
		}
		f->console_bol = f->out.buf[i] == '\n';
	}
	strbuf_remove(&f->out, i, f->out.len - i);
	f->console_off += i - start;
	if (i > start)
		f->out_bol = f->out.buf[i - 1] == '\n';
	return 0;
}

static void add_labd_line(struct follower *f, const char *line, size_t len)
{
	if (!f->out_bol)
		strbuf_addch(&f->out, '\n');
	strbuf_addstr(&f->out, LABD_PREFIX);
	strbuf_add(&f->out, line, len);
	strbuf_addch(&f->out, '\n');
	f->out_bol = true;
	f->labd_pos += len + 1;
}

static int fill_interleaved(struct follower *f)
{
	int64_t mark, stop;
	const char *line;
	size_t len;
	bool eof;
	int err;

	mark = labd_next(f, &line, &len);
	stop = mark < 0 ? INT64_MAX : mark + 1;
	err = add_console(f, stop, &eof);
	if (err < 0)
		return err;
	/* labd lines of the lines sent; or of lines the console file lacks (rotated) */
	while (mark >= 0 && (mark <= f->lines_sent || (eof && !f->out.len))) {
		add_labd_line(f, line, len);
		mark = labd_next(f, &line, &len);
	}
	return 0;
}

static int fill(struct follower *f)
{
	size_t before = f->out.len;
	int err;

	if (f->with_labd)
		return fill_interleaved(f);
	err = joblog_read(f->dir, JOBLOG_CONSOLE, f->console_off, FOLLOW_CHUNK, &f->out);
	f->console_off += f->out.len - before;
	return err;
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
	strbuf_release(&f->out);
	strbuf_release(&f->labd);
	free(f->dir);
	free(f);
	return NULL;
}

static enum MHD_Result start_follow(struct api_request *r, const struct job_record *rec,
				    char *dir, uint64_t offset, bool with_labd)
{
	struct api_logs *logs = api_logs_of(r);
	struct MHD_Response *resp;
	struct follower *f;

	f = calloc(1, sizeof(*f));
	if (!f) {
		free(dir);
		return MHD_NO;
	}
	f->logs = logs;
	f->listener = r->listener;
	f->conn = r->conn;
	f->job_id = rec->id;
	f->dir = dir;
	f->with_labd = with_labd;
	f->finished = rec->state == JOB_STATE_FINISHED;
	f->console_off = offset;
	f->console_bol = f->out_bol = true;
	strbuf_init(&f->out);
	strbuf_init(&f->labd);
	f->next = logs->followers;
	if (f->next)
		f->next->prev = f;
	logs->followers = f;
	r->stream = f;	/* freed by api_log_request_done() */
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, FOLLOW_BLOCK, follow_read, f,
						 NULL);
	if (resp) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, LOG_CONTENT_TYPE);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	}
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* ---- whole logs ---- */

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

/* console.log from @offset, straight from the file (byte-exact, nothing copied). */
static enum MHD_Result reply_raw(struct api_request *r, const char *dir, uint64_t offset)
{
	struct strbuf empty = STRBUF_INIT;
	struct MHD_Response *resp;
	uint64_t size = 0;
	struct stat st;
	char path[4096], buf[32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, JOBLOG_CONSOLE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0)
		size = (uint64_t)st.st_size;
	if (size <= offset) {
		if (fd >= 0)
			close(fd);
		return reply_text(r, &empty, size);
	}
	/* libmicrohttpd owns and closes @fd from here */
	resp = MHD_create_response_from_fd_at_offset64(size - offset, fd, offset);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)size);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, LOG_CONTENT_TYPE);
	MHD_add_response_header(resp, LOG_SIZE_HEADER, buf);
	return api_reply(r, MHD_HTTP_OK, resp);
}

static enum MHD_Result reply_rendered(struct api_request *r, const char *dir, unsigned flags)
{
	struct strbuf text = STRBUF_INIT;
	int err;

	err = joblog_render(dir, flags, &text);
	if (err < 0) {
		strbuf_release(&text);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the log: %s",
				       strerror(-err));
	}
	return reply_text(r, &text, joblog_file_size(dir, JOBLOG_CONSOLE));
}

/* GET /jobs/{id}/log[?timestamps=1][&labd=1][&offset=N][&follow=1] */
enum MHD_Result api_log_get(struct api_request *r)
{
	bool follow = api_query_bool(r, "follow");
	struct job_record rec = { 0 };
	unsigned flags = 0;
	enum MHD_Result ret;
	int64_t id, offset = 0;
	int has_offset;
	char *dir;

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
	if (follow && (flags & JOBLOG_RENDER_TIMESTAMPS))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'follow' streams the log without timestamps");
	if (store_job_get(api_deps_of(r)->store, id, &rec) < 0)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no job %lld", (long long)id);
	dir = joblog_job_dir(lab_current_config(api_deps_of(r)->lab)->state_dir, id);
	if (!dir) {
		ret = MHD_NO;
	} else if (follow) {
		ret = start_follow(r, &rec, dir, (uint64_t)offset, flags & JOBLOG_RENDER_LABD);
		dir = NULL;	/* the follower's now */
	} else if (flags) {
		ret = reply_rendered(r, dir, flags);
	} else {
		ret = reply_raw(r, dir, (uint64_t)offset);
	}
	free(dir);
	job_record_release(&rec);
	return ret;
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
	if (err < 0) {
		api_logs_free(logs);
		return err;
	}
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
}

struct api_logs *api_logs_free(struct api_logs *logs)
{
	if (!logs)
		return NULL;
	while (logs->followers)
		follower_free(logs->followers);
	events_unlisten(logs->log_listener);
	events_unlisten(logs->events_listener);
	free(logs);
	return NULL;
}
