// SPDX-License-Identifier: GPL-2.0-or-later
/* joblog.c -- append-only console logs with per-line timestamps */
#include "journal/joblog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/strbuf.h"

#define IDX_RECORD 16
#define JOBLOG_MAX_RENDER (512ULL * 1024 * 1024)

struct joblog {
	char *dir;
	int console_fd;
	int idx_fd;
	int labd_fd;
	uint64_t size;		/* bytes in console.log */
	int64_t lines;		/* lines started (records in console.idx) */
	bool at_line_start;	/* the next console byte starts a new line */
	joblog_notify_fn notify;
	void *notify_ud;
};

static int open_append(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static int mkdir_p(const char *dir)
{
	char buf[4096], *p;

	if (strlen(dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, dir);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Pick up where an existing log stopped. */
static int joblog_resume(struct joblog *jl)
{
	struct stat st;
	char last;

	if (fstat(jl->console_fd, &st) < 0)
		return -errno;
	jl->size = (uint64_t)st.st_size;
	if (fstat(jl->idx_fd, &st) < 0)
		return -errno;
	jl->lines = st.st_size / IDX_RECORD;
	jl->at_line_start = true;
	if (jl->size) {
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", jl->dir, JOBLOG_CONSOLE);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (pread(fd, &last, 1, (off_t)jl->size - 1) == 1)
			jl->at_line_start = last == '\n';
		close(fd);
	}
	return 0;
}

int joblog_open(const char *dir, struct joblog **ret)
{
	struct joblog *jl;
	int r;

	r = mkdir_p(dir);
	if (r < 0)
		return r;
	jl = calloc(1, sizeof(*jl));
	if (!jl)
		return -ENOMEM;
	jl->console_fd = jl->idx_fd = jl->labd_fd = -1;
	jl->dir = strdup(dir);
	if (!jl->dir) {
		r = -ENOMEM;
		goto err_close;
	}
	jl->console_fd = open_append(dir, JOBLOG_CONSOLE);
	jl->idx_fd = open_append(dir, JOBLOG_INDEX);
	jl->labd_fd = open_append(dir, JOBLOG_LABD);
	if (jl->console_fd < 0 || jl->idx_fd < 0 || jl->labd_fd < 0) {
		r = -errno;
		goto err_close;
	}
	r = joblog_resume(jl);
	if (r < 0)
		goto err_close;
	*ret = jl;
	return 0;

err_close:
	joblog_close(jl);
	return r;
}

struct joblog *joblog_close(struct joblog *jl)
{
	if (!jl)
		return NULL;
	if (jl->console_fd >= 0)
		close(jl->console_fd);
	if (jl->idx_fd >= 0)
		close(jl->idx_fd);
	if (jl->labd_fd >= 0)
		close(jl->labd_fd);
	free(jl->dir);
	free(jl);
	return NULL;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* Index records for the lines starting inside @data, which lands at offset jl->size. */
static int index_lines(struct joblog *jl, uint64_t ts, const uint8_t *data, size_t len)
{
	uint8_t recs[64 * IDX_RECORD];
	size_t pos = 0, n = 0;
	int r;

	while (pos < len) {
		const uint8_t *nl;

		if (jl->at_line_start) {
			put_le64(recs + n * IDX_RECORD, jl->size + pos);
			put_le64(recs + n * IDX_RECORD + 8, ts);
			jl->lines++;
			jl->at_line_start = false;
			if (++n == sizeof(recs) / IDX_RECORD) {
				r = write_all(jl->idx_fd, recs, n * IDX_RECORD);
				if (r < 0)
					return r;
				n = 0;
			}
		}
		nl = memchr(data + pos, '\n', len - pos);
		if (!nl)
			break;
		pos = (size_t)(nl - data) + 1;
		jl->at_line_start = true;
	}
	return n ? write_all(jl->idx_fd, recs, n * IDX_RECORD) : 0;
}

int joblog_console(struct joblog *jl, uint64_t ts, const void *data, size_t len)
{
	int r;

	if (!len)
		return 0;
	r = index_lines(jl, ts, data, len);
	if (r < 0)
		return r;
	r = write_all(jl->console_fd, data, len);
	if (r < 0)
		return r;
	jl->size += len;
	if (jl->notify)
		jl->notify(jl, jl->notify_ud);
	return 0;
}

void joblog_format_time(uint64_t usec, char *buf, size_t len)
{
	time_t secs = (time_t)(usec / 1000000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(usec % 1000000));
}

/* Escape what would break the one-line-per-message format. */
static void add_escaped(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			strbuf_addstr(sb, "\\n");
		else if (c == '\r')
			strbuf_addstr(sb, "\\r");
		else if (c == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (c < 0x20 || c == 0x7f)
			strbuf_addf(sb, "\\x%02x", c);
		else
			strbuf_addch(sb, c);
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The inverse of add_escaped(). */
static int add_unescaped(struct strbuf *sb, const char *s, size_t len)
{
	size_t i;
	int err = 0;

	for (i = 0; i < len && !err; i++) {
		char c = s[i];

		if (c != '\\' || i + 1 == len) {
			err = strbuf_addch(sb, c);
			continue;
		}
		c = s[++i];
		if (c == 'n')
			err = strbuf_addch(sb, '\n');
		else if (c == 'r')
			err = strbuf_addch(sb, '\r');
		else if (c == 'x' && i + 2 < len && hex_digit(s[i + 1]) >= 0 &&
			 hex_digit(s[i + 2]) >= 0) {
			err = strbuf_addch(sb, hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
			i += 2;
		} else
			err = strbuf_addch(sb, c);
	}
	return err;
}

int joblog_parse_labd(const char *line, size_t len, struct joblog_labd_line *ret,
		      struct strbuf *text)
{
	unsigned year, mon, day, hour, min, sec, usec;
	char head[96], kind[sizeof(ret->kind)];
	long long num;
	struct tm tm = { 0 };
	int used = 0;

	/* "<iso-8601 time> <kind> L<console line> <text>" */
	memcpy(head, line, len < sizeof(head) - 1 ? len : sizeof(head) - 1);
	head[len < sizeof(head) - 1 ? len : sizeof(head) - 1] = '\0';
	if (sscanf(head, "%4u-%2u-%2uT%2u:%2u:%2u.%6uZ %15s L%lld%n", &year, &mon, &day, &hour,
		   &min, &sec, &usec, kind, &num, &used) != 9 || !used || num < 0 ||
	    (size_t)used >= len || line[used] != ' ')
		return -EINVAL;
	used++;
	tm.tm_year = (int)year - 1900;
	tm.tm_mon = (int)mon - 1;
	tm.tm_mday = (int)day;
	tm.tm_hour = (int)hour;
	tm.tm_min = (int)min;
	tm.tm_sec = (int)sec;
	ret->ts = (uint64_t)timegm(&tm) * 1000000 + usec;
	memcpy(ret->kind, kind, sizeof(kind));
	ret->line = num;
	return add_unescaped(text, line + used, len - (size_t)used);
}

int joblog_msg(struct joblog *jl, uint64_t ts, const char *kind, const char *fmt, ...)
{
	struct strbuf text = STRBUF_INIT, line = STRBUF_INIT;
	char when[40];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strbuf_vaddf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		goto out;
	if (text.len > JOBLOG_MAX_MSG)
		strbuf_remove(&text, JOBLOG_MAX_MSG, text.len - JOBLOG_MAX_MSG);
	joblog_format_time(ts, when, sizeof(when));
	strbuf_addf(&line, "%s %s L%lld ", when, kind, (long long)jl->lines);
	add_escaped(&line, text.buf);
	r = strbuf_addch(&line, '\n');
	if (r < 0)
		goto out;
	r = write_all(jl->labd_fd, line.buf, line.len);
	if (!r && jl->notify)
		jl->notify(jl, jl->notify_ud);
out:
	strbuf_release(&text);
	strbuf_release(&line);
	return r;
}

int64_t joblog_line(const struct joblog *jl)
{
	return jl->at_line_start ? jl->lines + 1 : jl->lines;
}

uint64_t joblog_console_size(const struct joblog *jl)
{
	return jl->size;
}

char *joblog_job_dir(const char *state_dir, int64_t id)
{
	char *dir;

	if (asprintf(&dir, "%s/jobs/%lld", state_dir, (long long)id) < 0)
		return NULL;
	return dir;
}

const char *joblog_dir(const struct joblog *jl)
{
	return jl->dir;
}

void joblog_set_notify(struct joblog *jl, joblog_notify_fn fn, void *userdata)
{
	jl->notify = fn;
	jl->notify_ud = userdata;
}

static int rename_one(const char *dir, const char *name)
{
	char from[4096], to[4100];

	snprintf(from, sizeof(from), "%s/%s", dir, name);
	snprintf(to, sizeof(to), "%s.1", from);
	if (rename(from, to) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int joblog_rotate_if_larger(struct joblog *jl, uint64_t max)
{
	static const char *const names[] = { JOBLOG_CONSOLE, JOBLOG_INDEX, JOBLOG_LABD };
	size_t i;
	int r;

	if (jl->size <= max)
		return 0;
	for (i = 0; i < 3; i++) {
		r = rename_one(jl->dir, names[i]);
		if (r < 0)
			return r;
	}
	close(jl->console_fd);
	close(jl->idx_fd);
	close(jl->labd_fd);
	jl->console_fd = open_append(jl->dir, JOBLOG_CONSOLE);
	jl->idx_fd = open_append(jl->dir, JOBLOG_INDEX);
	jl->labd_fd = open_append(jl->dir, JOBLOG_LABD);
	if (jl->console_fd < 0 || jl->idx_fd < 0 || jl->labd_fd < 0)
		return -errno;
	jl->size = 0;
	jl->lines = 0;
	jl->at_line_start = true;
	return 0;
}

/* ---- readers ---- */

int joblog_read(const char *dir, const char *name, uint64_t offset, size_t max,
		struct strbuf *out)
{
	char path[4096];
	ssize_t n;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	while (max) {
		size_t chunk = max < 65536 ? max : 65536;

		r = strbuf_grow(out, chunk);
		if (r < 0)
			break;
		n = pread(fd, out->buf + out->len, chunk, (off_t)offset);
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
		offset += (uint64_t)n;
		max -= (size_t)n;
	}
	close(fd);
	return r;
}

uint64_t joblog_file_size(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) < 0 ? 0 : (uint64_t)st.st_size;
}

struct render_state {
	struct strbuf console, idx, labd;
	size_t labd_pos;
};

/* Emit labd lines recorded when at most @lines console lines had started. */
static void render_labd_until(struct render_state *rs, int64_t lines, struct strbuf *out)
{
	while (rs->labd_pos < rs->labd.len) {
		const char *l = rs->labd.buf + rs->labd_pos;
		const char *nl = memchr(l, '\n', rs->labd.len - rs->labd_pos);
		const char *mark = strstr(l, " L");
		size_t len = nl ? (size_t)(nl - l) : rs->labd.len - rs->labd_pos;

		if (mark && mark < l + len && strtoll(mark + 2, NULL, 10) > lines)
			return;
		strbuf_addstr(out, "# labd: ");
		strbuf_add(out, l, len);
		strbuf_addch(out, '\n');
		rs->labd_pos += len + (nl ? 1 : 0);
	}
}

int joblog_render(const char *dir, unsigned flags, struct strbuf *out)
{
	struct render_state rs = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, 0 };
	int64_t i, n;
	int r;

	r = joblog_read(dir, JOBLOG_CONSOLE, 0, JOBLOG_MAX_RENDER, &rs.console);
	if (r < 0 || !flags) {
		if (!r)
			r = strbuf_add(out, rs.console.buf, rs.console.len);
		goto out;
	}
	r = joblog_read(dir, JOBLOG_INDEX, 0, JOBLOG_MAX_RENDER, &rs.idx);
	if (!r && (flags & JOBLOG_RENDER_LABD))
		r = joblog_read(dir, JOBLOG_LABD, 0, JOBLOG_MAX_RENDER, &rs.labd);
	if (r < 0)
		goto out;
	n = (int64_t)(rs.idx.len / IDX_RECORD);
	render_labd_until(&rs, 0, out);
	for (i = 0; i < n; i++) {
		const uint8_t *rec = (const uint8_t *)rs.idx.buf + i * IDX_RECORD;
		uint64_t start = get_le64(rec), end = rs.console.len;
		char when[40];

		if (i + 1 < n)
			end = get_le64(rec + IDX_RECORD);
		if (start > rs.console.len || end > rs.console.len || end < start)
			break;	/* index ahead of a truncated console file */
		if (flags & JOBLOG_RENDER_TIMESTAMPS) {
			joblog_format_time(get_le64(rec + 8), when, sizeof(when));
			strbuf_addf(out, "[%s] ", when);
		}
		strbuf_add(out, rs.console.buf + start, end - start);
		if (flags & JOBLOG_RENDER_LABD) {
			if (end == start || rs.console.buf[end - 1] != '\n')
				strbuf_addch(out, '\n');
			render_labd_until(&rs, i + 1, out);
		}
	}
	render_labd_until(&rs, INT64_MAX, out);
out:
	strbuf_release(&rs.console);
	strbuf_release(&rs.idx);
	strbuf_release(&rs.labd);
	return r;
}

int joblog_line_range(const char *dir, int64_t first, int64_t last, struct strbuf *out)
{
	struct strbuf rec = STRBUF_INIT;
	uint64_t start, end;
	int r;

	if (first < 1 || last < first)
		return -EINVAL;
	r = joblog_read(dir, JOBLOG_INDEX, (uint64_t)(first - 1) * IDX_RECORD,
			(size_t)(last - first + 2) * IDX_RECORD, &rec);
	if (r < 0 || rec.len < IDX_RECORD) {
		strbuf_release(&rec);
		return r < 0 ? r : -ENOENT;
	}
	start = get_le64((const uint8_t *)rec.buf);
	if (rec.len >= (size_t)(last - first + 2) * IDX_RECORD)
		end = get_le64((const uint8_t *)rec.buf + (size_t)(last - first + 1) * IDX_RECORD);
	else
		end = joblog_file_size(dir, JOBLOG_CONSOLE);
	strbuf_release(&rec);
	if (end < start)
		return -EIO;
	return joblog_read(dir, JOBLOG_CONSOLE, start, (size_t)(end - start), out);
}
