/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * joblog.h -- append-only console logs with a timestamp for every line
 *
 * A log lives in a directory (one per job: <state_dir>/jobs/<id>/, and one
 * per board for the output printed between jobs) and holds three files:
 *
 *   console.log  every byte the board sent, as it sent it (byte-exact: no
 *                escaping, no re-encoding, invalid UTF-8 kept)
 *   console.idx  one 16-byte record per console line: the line's start
 *                offset in console.log and the realtime (usec) its first byte
 *                arrived, both little-endian uint64
 *   labd.log     labd's own lines about the job, one per line:
 *                "<iso-8601 time> <kind> L<console line> <text>"
 *                kinds: info, warning, error, input (sent to the board),
 *                phase, result
 *
 * Lines are numbered from 1 in console.log ('\n' ends a line).  Results point
 * at line ranges.  Files are appended with write(2) only, never rewritten, so
 * a labd killed at any time loses nothing that was written, and readers (the
 * HTTP API, labctl) can follow a log while it grows by remembering offsets.
 */
#ifndef LABD_JOBLOG_H
#define LABD_JOBLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct joblog;

#define JOBLOG_CONSOLE "console.log"
#define JOBLOG_INDEX "console.idx"
#define JOBLOG_LABD "labd.log"
#define JOBLOG_MAX_MSG 4096	/* longest labd.log line */

/** Called after each append, so followers can read the new bytes. */
typedef void (*joblog_notify_fn)(struct joblog *jl, void *userdata);

/**
 * joblog_open() - open (creating if needed) the log in directory @dir
 *
 * An existing log is continued: line numbers carry on from its index.
 */
int joblog_open(const char *dir, struct joblog **ret);

/** joblog_close() - close the files; accepts NULL; returns NULL. */
struct joblog *joblog_close(struct joblog *jl);

/** joblog_console() - append console bytes received at realtime @ts. */
int joblog_console(struct joblog *jl, uint64_t ts, const void *data, size_t len);

/** joblog_msg() - append one labd line of @kind (newlines in the text are escaped). */
int joblog_msg(struct joblog *jl, uint64_t ts, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** joblog_line() - number of the console line being written (1-based). */
int64_t joblog_line(const struct joblog *jl);

/** joblog_console_size() - bytes in console.log. */
uint64_t joblog_console_size(const struct joblog *jl);

/** joblog_job_dir() - <@state_dir>/jobs/<@id>: where job @id's log lives (caller frees). */
char *joblog_job_dir(const char *state_dir, int64_t id);

/** joblog_dir() - the directory (borrowed). */
const char *joblog_dir(const struct joblog *jl);

/** joblog_set_notify() - one follower hook (the daemon fans out); NULL removes it. */
void joblog_set_notify(struct joblog *jl, joblog_notify_fn fn, void *userdata);

/**
 * joblog_rotate() - start over when console.log exceeds @max bytes: the three
 * files are renamed with a ".1" suffix (replacing older ones).  For board logs.
 */
int joblog_rotate_if_larger(struct joblog *jl, uint64_t max);

/* ---- readers: work on the files, with or without a writer ---- */

/** joblog_read() - up to @max bytes of file @name of @dir from @offset, appended to @out. */
int joblog_read(const char *dir, const char *name, uint64_t offset, size_t max,
		struct strbuf *out);

/** joblog_file_size() - current size of a log file, 0 when absent. */
uint64_t joblog_file_size(const char *dir, const char *name);

enum joblog_render_flags {
	JOBLOG_RENDER_TIMESTAMPS = 1 << 0,	/* prefix console lines with their time */
	JOBLOG_RENDER_LABD = 1 << 1,		/* interleave labd's lines ("# labd: ...") */
};

/**
 * joblog_render() - a readable text of the log from console offset @offset
 *
 * Without flags the result is console.log itself.  With flags each console
 * line is prefixed with "[<iso time>] " and/or labd's lines are interleaved
 * by time; console bytes are still copied as they are.
 */
int joblog_render(const char *dir, unsigned flags, struct strbuf *out);

/** joblog_line_range() - console bytes of lines @first..@last (1-based, inclusive). */
int joblog_line_range(const char *dir, int64_t first, int64_t last, struct strbuf *out);

/** One line of labd.log, parsed. */
struct joblog_labd_line {
	uint64_t ts;		/* realtime usec */
	char kind[16];		/* "info", "input", "result" ... */
	int64_t line;		/* console lines started when it was written ("L<n>") */
};

/**
 * joblog_parse_labd() - one line of labd.log (@len bytes, without its '\n')
 * @text: gets the message appended, its escapes undone (the text given to
 *	joblog_msg(), cut at JOBLOG_MAX_MSG bytes)
 *
 * Returns 0, -EINVAL for a line not in labd.log's format, or -ENOMEM.
 */
int joblog_parse_labd(const char *line, size_t len, struct joblog_labd_line *ret,
		      struct strbuf *text);

/** joblog_format_time() - "2026-12-03T10:00:00.123456Z" into @buf (>= 32 bytes). */
void joblog_format_time(uint64_t realtime_usec, char *buf, size_t len);

#endif
