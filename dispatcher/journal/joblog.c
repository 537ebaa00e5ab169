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
#include "journal/journal_internal.h"
#include "journal/logzst.h"

#define IDX_RECORD 16
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
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

/* @dir and its missing parents; a job's directory is the one missing, usually: one call. */
static int mkdir_p(const char *dir)
{
	char buf[4096], *p;

	if (!mkdir(dir, 0755) || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
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

int journal_write_all(int fd, const void *data, size_t len)
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
				r = journal_write_all(jl->idx_fd, recs, n * IDX_RECORD);
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
	return n ? journal_write_all(jl->idx_fd, recs, n * IDX_RECORD) : 0;
}

int joblog_console(struct joblog *jl, uint64_t ts, const void *data, size_t len)
{
	int r;

	if (!len)
		return 0;
	r = index_lines(jl, ts, data, len);
	if (r < 0)
		return r;
	r = journal_write_all(jl->console_fd, data, len);
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
	r = journal_write_all(jl->labd_fd, line.buf, line.len);
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

struct joblog_file {
	int fd;			/* the plain file, or -1 */
	struct logzst *z;	/* else its compressed copy */
};

static int open_plain(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int joblog_fopen(const char *dir, const char *name, struct joblog_file **ret)
{
	struct joblog_file *f = calloc(1, sizeof(*f));
	char path[4096];
	int r = 0;

	if (!f)
		return -ENOMEM;
	/* the plain file first: its compressed copy is complete before it goes */
	f->fd = open_plain(dir, name);
	if (f->fd < 0 && errno != ENOENT)
		r = -errno;
	else if (f->fd < 0) {
		snprintf(path, sizeof(path), "%s/%s" LOGZST_SUFFIX, dir, name);
		r = logzst_open(path, &f->z);
	}
	if (r < 0) {
		free(f);
		return r;
	}
	*ret = f;
	return 0;
}

struct joblog_file *joblog_fclose(struct joblog_file *f)
{
	if (!f)
		return NULL;
	if (f->fd >= 0)
		close(f->fd);
	logzst_close(f->z);
	free(f);
	return NULL;
}

ssize_t joblog_fpread(struct joblog_file *f, void *buf, size_t len, uint64_t offset)
{
	size_t got = 0;
	ssize_t n;

	if (f->z) {
		/* whole, as pread() of a file gives it, not a frame's piece */
		while (got < len) {
			n = logzst_pread(f->z, (char *)buf + got, len - got, offset + got);
			if (n <= 0)
				return n < 0 ? n : (ssize_t)got;
			got += (size_t)n;
		}
		return (ssize_t)got;
	}
	do
		n = pread(f->fd, buf, len, (off_t)offset);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

uint64_t joblog_fsize(struct joblog_file *f)
{
	struct stat st;

	if (f->z)
		return logzst_size(f->z);
	return fstat(f->fd, &st) < 0 ? 0 : (uint64_t)st.st_size;
}

bool joblog_fcompressed(const struct joblog_file *f)
{
	return f->z != NULL;
}

int joblog_fd(const struct joblog_file *f)
{
	return f->fd;
}

/* Up to @max bytes of @f from @offset, appended to @out. */
static int fread_into(struct joblog_file *f, uint64_t offset, size_t max, struct strbuf *out)
{
	ssize_t n;
	int r = 0;

	while (max) {
		size_t chunk = max < 65536 ? max : 65536;

		r = strbuf_grow(out, chunk);
		if (r < 0)
			break;
		n = joblog_fpread(f, out->buf + out->len, chunk, offset);
		if (n < 0) {
			r = (int)n;
			break;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
		offset += (uint64_t)n;
		max -= (size_t)n;
	}
	return r;
}

int joblog_read(const char *dir, const char *name, uint64_t offset, size_t max,
		struct strbuf *out)
{
	struct joblog_file *f;
	int r = joblog_fopen(dir, name, &f);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	r = fread_into(f, offset, max, out);
	joblog_fclose(f);
	return r;
}

uint64_t joblog_file_size(const char *dir, const char *name)
{
	struct joblog_file *f;
	char path[4096];
	struct stat st;
	uint64_t size;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &st) == 0)
		return (uint64_t)st.st_size;
	if (joblog_fopen(dir, name, &f) < 0)
		return 0;
	size = joblog_fsize(f);
	joblog_fclose(f);
	return size;
}

/* ---- rendering, piece by piece ---- */

#define READER_CHUNK (64 * 1024)	/* console bytes read at once */
#define READER_LABD_CHUNK (64 * 1024)	/* labd.log read ahead; holds any complete line */
#define READER_IDX_RECORDS 4096		/* index records read at once (timestamps) */
#define LABD_PREFIX "# labd: "

struct joblog_reader {
	char *dir;
	unsigned flags;
	uint64_t console_off, console_end;	/* read ahead up to; where a snapshot stops */
	uint64_t labd_off, labd_end;
	int64_t lines;		/* console lines started in the bytes rendered */
	bool bol;		/* the next console byte starts a line */
	bool out_bol;		/* the last byte rendered ended a line */
	bool waiting;		/* labd lines wait for the console line in progress */
	struct strbuf console;	/* read ahead, from console_pos on not rendered */
	size_t console_pos;
	struct strbuf labd;	/* complete labd.log lines, from labd_pos on not rendered */
	size_t labd_pos;
	struct strbuf idx;	/* index records of lines idx_first... */
	int64_t idx_first;
	struct joblog_file *files[3];	/* READ_CONSOLE ..., opened when first there */
};

enum { READ_CONSOLE, READ_INDEX, READ_LABD };
static const char *const reader_names[] = { JOBLOG_CONSOLE, JOBLOG_INDEX, JOBLOG_LABD };

/* joblog_read() through the reader's open files: a file not there yet reads as empty. */
static int reader_read(struct joblog_reader *rd, int which, uint64_t offset, size_t max,
		       struct strbuf *out)
{
	int r;

	if (!rd->files[which]) {
		r = joblog_fopen(rd->dir, reader_names[which], &rd->files[which]);
		if (r < 0)
			return r == -ENOENT ? 0 : r;
	}
	return fread_into(rd->files[which], offset, max, out);
}

int joblog_reader_new(const char *dir, unsigned flags, uint64_t offset, bool snapshot,
		      struct joblog_reader **ret)
{
	struct joblog_reader *rd;

	if (offset && flags)
		return -EINVAL;	/* the line number at @offset is unknown */
	rd = calloc(1, sizeof(*rd));
	if (!rd || !(rd->dir = strdup(dir))) {
		free(rd);
		return -ENOMEM;
	}
	rd->flags = flags;
	rd->console_off = offset;
	rd->console_end = rd->labd_end = UINT64_MAX;
	if (snapshot) {
		rd->console_end = joblog_file_size(dir, JOBLOG_CONSOLE);
		rd->labd_end = joblog_file_size(dir, JOBLOG_LABD);
	}
	rd->bol = rd->out_bol = true;
	strbuf_init(&rd->console);
	strbuf_init(&rd->labd);
	strbuf_init(&rd->idx);
	*ret = rd;
	return 0;
}

struct joblog_reader *joblog_reader_free(struct joblog_reader *rd)
{
	if (!rd)
		return NULL;
	strbuf_release(&rd->console);
	strbuf_release(&rd->labd);
	strbuf_release(&rd->idx);
	for (size_t i = 0; i < ARRAY_SIZE(rd->files); i++)
		joblog_fclose(rd->files[i]);
	free(rd->dir);
	free(rd);
	return NULL;
}

uint64_t joblog_reader_console_end(const struct joblog_reader *rd)
{
	return rd->console_end;
}

bool joblog_reader_waiting(const struct joblog_reader *rd)
{
	return rd->waiting;
}

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

static uint64_t room(uint64_t end, uint64_t off, uint64_t chunk)
{
	return off >= end ? 0 : end - off < chunk ? end - off : chunk;
}

/* The next complete labd.log line and its mark; -1 when there is none (yet). */
static int64_t labd_peek(struct joblog_reader *rd, const char **ret, size_t *len)
{
	const char *line, *nl;
	size_t keep;

	if (rd->labd_pos == rd->labd.len) {
		strbuf_reset(&rd->labd);
		rd->labd_pos = 0;
		if (reader_read(rd, READ_LABD, rd->labd_off,
				room(rd->labd_end, rd->labd_off, READER_LABD_CHUNK), &rd->labd) < 0)
			return -1;
		nl = memrchr(rd->labd.buf, '\n', rd->labd.len);
		keep = nl ? (size_t)(nl - rd->labd.buf) + 1 : 0;
		strbuf_remove(&rd->labd, keep, rd->labd.len - keep);
		rd->labd_off += keep;
	}
	if (rd->labd_pos == rd->labd.len)
		return -1;
	line = rd->labd.buf + rd->labd_pos;
	nl = memchr(line, '\n', rd->labd.len - rd->labd_pos);
	*ret = line;
	*len = (size_t)(nl - line);
	return labd_line_mark(line, *len);
}

/* Give the labd lines written while at most @lines console lines had started. */
static void give_labd(struct joblog_reader *rd, struct strbuf *out, int64_t lines)
{
	const char *line;
	size_t len;
	int64_t mark;

	while ((mark = labd_peek(rd, &line, &len)) >= 0 && mark <= lines) {
		if (!rd->out_bol)
			strbuf_addch(out, '\n');
		strbuf_addstr(out, LABD_PREFIX);
		strbuf_add(out, line, len);
		strbuf_addch(out, '\n');
		rd->out_bol = true;
		rd->labd_pos += len + 1;
	}
}

/* "[<time>] " of console line @i (0-based), when the index has it. */
static void give_time(struct joblog_reader *rd, struct strbuf *out, int64_t i)
{
	char when[40];

	if (i < rd->idx_first || i >= rd->idx_first + (int64_t)(rd->idx.len / IDX_RECORD)) {
		strbuf_reset(&rd->idx);
		rd->idx_first = i;
		if (reader_read(rd, READ_INDEX, (uint64_t)i * IDX_RECORD,
				READER_IDX_RECORDS * IDX_RECORD, &rd->idx) < 0)
			strbuf_reset(&rd->idx);
	}
	if (i - rd->idx_first >= (int64_t)(rd->idx.len / IDX_RECORD))
		return;
	joblog_format_time(get_le64((const uint8_t *)rd->idx.buf +
				    (i - rd->idx_first) * IDX_RECORD + 8), when, sizeof(when));
	strbuf_addf(out, "[%s] ", when);
}

/* Console bytes up to the end of their line, at most @max; 0 when there are none (yet). */
static int give_console(struct joblog_reader *rd, struct strbuf *out, size_t max, size_t *given)
{
	const char *p, *nl;
	size_t take;
	int r;

	*given = 0;
	if (rd->console_pos == rd->console.len) {
		strbuf_reset(&rd->console);
		rd->console_pos = 0;
		r = reader_read(rd, READ_CONSOLE, rd->console_off,
				room(rd->console_end, rd->console_off, READER_CHUNK), &rd->console);
		if (r < 0)
			return r;
		rd->console_off += rd->console.len;
		if (!rd->console.len)
			return 0;
	}
	p = rd->console.buf + rd->console_pos;
	take = rd->console.len - rd->console_pos;
	take = take < max ? take : max;
	nl = memchr(p, '\n', take);
	if (nl)
		take = (size_t)(nl - p) + 1;
	if (rd->bol && (rd->flags & JOBLOG_RENDER_TIMESTAMPS))
		give_time(rd, out, rd->lines);
	rd->lines += rd->bol;
	strbuf_add(out, p, take);
	rd->console_pos += take;
	rd->bol = rd->out_bol = nl != NULL;
	*given = take;
	return 0;
}

int joblog_reader_fill(struct joblog_reader *rd, struct strbuf *out, size_t max,
		       enum joblog_fill mode)
{
	bool labd = rd->flags & JOBLOG_RENDER_LABD;
	size_t start = out->len, given = 1, len;
	const char *line;
	int64_t mark;
	int r;

	while (given && out->len - start < max) {
		if (rd->bol && labd)
			give_labd(rd, out, rd->lines);
		r = give_console(rd, out, max - (out->len - start), &given);
		if (r < 0)
			return r;
	}
	rd->waiting = false;
	if (!given && labd) {
		/* the console has nothing more (now): lines of the line in progress */
		if (mode == JOBLOG_FILL_END) {
			give_labd(rd, out, INT64_MAX);
			if (!rd->out_bol)
				strbuf_addch(out, '\n');	/* the text ends with a line */
			rd->out_bol = true;
		}
		else if (mode == JOBLOG_FILL_NOW || rd->bol)
			give_labd(rd, out, rd->lines);
		else
			rd->waiting = (mark = labd_peek(rd, &line, &len)) >= 0 && mark <= rd->lines;
	}
	return (int)(out->len - start);
}

int joblog_render(const char *dir, unsigned flags, struct strbuf *out)
{
	struct joblog_reader *rd;
	int r = joblog_reader_new(dir, flags, 0, true, &rd);

	if (r < 0)
		return r;
	do
		r = joblog_reader_fill(rd, out, READER_CHUNK, JOBLOG_FILL_END);
	while (r > 0 && out->len < JOBLOG_MAX_RENDER);
	joblog_reader_free(rd);
	return r < 0 ? r : 0;
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

int64_t joblog_line_count(const char *dir)
{
	return (int64_t)(joblog_file_size(dir, JOBLOG_INDEX) / IDX_RECORD);
}

int joblog_line_offset(const char *dir, int64_t line, uint64_t *ret)
{
	struct strbuf rec = STRBUF_INIT;
	int r;

	if (line < 1)
		return -EINVAL;
	r = joblog_read(dir, JOBLOG_INDEX, (uint64_t)(line - 1) * IDX_RECORD, IDX_RECORD, &rec);
	if (r >= 0 && rec.len < IDX_RECORD)
		r = -ENOENT;
	if (r >= 0)
		*ret = get_le64((const uint8_t *)rec.buf);
	strbuf_release(&rec);
	return r < 0 ? r : 0;
}
