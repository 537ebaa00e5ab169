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
#include <sys/types.h>

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

/*
 * Once its job has ended, labd compresses a log's files (logzst.h: NAME
 * becomes NAME.zst).  Every reader below, and anything else reading a log
 * file, goes through a struct joblog_file, which reads NAME when it is
 * there and NAME.zst otherwise: the same bytes at the same offsets, in
 * bounded memory.
 */
struct joblog_file;

/**
 * joblog_fopen() - open file @name of @dir (or its compressed copy) for reading
 *
 * Returns 0, -ENOENT when neither is there, or another negative errno.
 */
int joblog_fopen(const char *dir, const char *name, struct joblog_file **ret);

/** joblog_fclose() - accepts NULL; returns NULL. */
struct joblog_file *joblog_fclose(struct joblog_file *f);

/**
 * joblog_fpread() - up to @len bytes at @offset: the count (less only at the
 * end of the file, 0 there; a plain file may also give less, as pread(2))
 * or a negative errno.
 */
ssize_t joblog_fpread(struct joblog_file *f, void *buf, size_t len, uint64_t offset);

/** joblog_fsize() - the file's size now (a plain file may still grow). */
uint64_t joblog_fsize(struct joblog_file *f);

/** joblog_fcompressed() - whether @f reads a compressed copy. */
bool joblog_fcompressed(const struct joblog_file *f);

/** joblog_fd() - the plain file's descriptor (borrowed), or -1 for a compressed one. */
int joblog_fd(const struct joblog_file *f);

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
 * joblog_render() - a readable text of the whole log, in memory (see the
 * reader below, which it uses: callers serving large logs use a reader)
 *
 * Without flags the result is console.log itself.  With flags each console
 * line is prefixed with "[<iso time>] " and/or labd's lines are put between
 * console lines in the order they were written; console bytes are still
 * copied as they are.
 */
int joblog_render(const char *dir, unsigned flags, struct strbuf *out);

/*
 * A reader renders a log piece by piece, in bounded memory, for a log of any
 * size and for a log that still grows.  Its text is joblog_render()'s: each
 * console line, prefixed with "[<iso time>] " (JOBLOG_RENDER_TIMESTAMPS),
 * and labd's lines as "# labd: <line>" (JOBLOG_RENDER_LABD) between console
 * lines: a labd line written while console line L was the last one started
 * comes after line L ends and before line L+1.  While line L is still in
 * progress its labd lines wait (JOBLOG_FILL_WAIT) unless told otherwise.
 */
struct joblog_reader;

enum joblog_fill {
	JOBLOG_FILL_WAIT,	/* labd lines of a console line in progress wait for its end */
	JOBLOG_FILL_NOW,	/* ... are given now, after a line break */
	JOBLOG_FILL_END,	/* the log is complete: everything left is given */
};

/**
 * joblog_reader_new() - a reader of the log in @dir
 * @flags: enum joblog_render_flags
 * @offset: console byte to start at (flags must be 0 then)
 * @snapshot: stop at the files' sizes now (else follow them as they grow)
 *
 * Returns 0, -EINVAL or -ENOMEM.
 */
int joblog_reader_new(const char *dir, unsigned flags, uint64_t offset, bool snapshot,
		      struct joblog_reader **ret);

/** joblog_reader_free() - accepts NULL; returns NULL. */
struct joblog_reader *joblog_reader_free(struct joblog_reader *rd);

/**
 * joblog_reader_fill() - append about @max more bytes of the text to @out
 * (a console line longer than that is given in pieces; a labd line whole).
 * Returns the bytes added (0: nothing more for now, or the end of a
 * snapshot) or a negative errno.
 */
int joblog_reader_fill(struct joblog_reader *rd, struct strbuf *out, size_t max,
		       enum joblog_fill mode);

/** joblog_reader_waiting() - whether the last fill held labd lines back (JOBLOG_FILL_WAIT). */
bool joblog_reader_waiting(const struct joblog_reader *rd);

/** joblog_reader_console_end() - where a snapshot's console stops (its size then). */
uint64_t joblog_reader_console_end(const struct joblog_reader *rd);

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

/** joblog_line_count() - console lines in the index of @dir (a last one may be incomplete). */
int64_t joblog_line_count(const char *dir);

/** joblog_line_offset() - where console line @line (1-based) starts in console.log. */
int joblog_line_offset(const char *dir, int64_t line, uint64_t *ret);

/** joblog_format_time() - "2026-12-03T10:00:00.123456Z" into @buf (>= 32 bytes). */
void joblog_format_time(uint64_t realtime_usec, char *buf, size_t len);

#endif
