/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lava_log.h -- a job's log in LAVA's YAML log format, read in bounded chunks
 *
 * LAVA clients (lavacli, KernelCI's callback handler, squad) read a job's
 * log as LAVA's output.yaml: one record per line,
 *
 *   - {"dt": "2026-12-03T10:00:00.123456", "lvl": "target", "msg": "U-Boot 2023.01\r"}
 *
 * built here from labd's log files (joblog.h), which stay as they are:
 *
 *   console.log lines   lvl "target", msg = the line's bytes without its '\n'
 *                       (a '\r' before it stays), dt = when its first byte came
 *   labd.log lines      info, warning, error, input as they are; "phase" as
 *                       info; "result" as lvl "results" with msg a mapping
 *                       {definition: <suite>, case: <name>, result: <result>
 *                       [, measurement: <number>, units: <units>]}; any other
 *                       kind as debug
 *
 * Records are in the order labd wrote them: a labd line follows the console
 * line during which it was written.  Records are numbered from 0 (LAVA's
 * line index: `scheduler.jobs.logs(id, start, end)` and `logs/?start=&end=`
 * take [start, end) of these).  A record never changes or moves once it was
 * read, also while the job runs: a console line is read only once it is
 * complete (its '\n' arrived) unless the log is complete (@complete at open,
 * the job finished).
 *
 * Text is written by libyaml (yaml_out.h), double-quoted and ASCII only
 * (PyYAML's default output, which lavacli's latin-1 decoding of the base64
 * needs).  Console bytes that are not UTF-8 become U+FFFD; a console line
 * longer than LAVA_LOG_MAX_LINE bytes keeps its first LAVA_LOG_MAX_LINE bytes
 * followed by " [labd: N bytes cut]" (LAVA replaces such lines by a stub).
 * So printing every target msg followed by '\n' gives console.log back byte
 * for byte when it is UTF-8 and has no overlong lines.
 *
 * Memory: a reader holds one line of each file and one batch of index
 * records, whatever the size of the log; lava_log_read() stops after the
 * record that takes @out past @max_bytes.  A 50 MB log is served by calling
 * it again and again, each time on an emptied buffer.
 *
 * Usage (the whole log of a finished job, e.g. for a notify callback):
 *
 *	struct lava_log *lg;
 *	err = lava_log_open(job_dir, suites, true, &lg);   // suites may be NULL
 *	while (!err && (n = lava_log_read(lg, 64 * 1024, 0, &buf)) > 0) {
 *		... send or copy buf ..., strbuf_reset(&buf);
 *	}
 *	lava_log_close(lg);
 */
#ifndef LABD_LAVA_LOG_H
#define LABD_LAVA_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct lava_log;

#define LAVA_LOG_MAX_LINE (100 * 1000)	/* console bytes of one record */
#define LAVA_LOG_CHUNK (64 * 1024)	/* a good @max_bytes for streaming */

/**
 * lava_log_open() - a reader of the log in directory @dir, at record 0
 * @suites: strv of the job's suite names, or NULL: splits "suite.name" of
 *	result lines when a suite name holds a '.' (without it the first '.'
 *	splits)
 * @complete: the log will not grow (the job finished): its last console
 *	line is read even without a '\n'
 *
 * A directory without log files is an empty log.  Returns 0, -ENOMEM or
 * another negative errno of open(2).
 */
int lava_log_open(const char *dir, char *const *suites, bool complete, struct lava_log **ret);

/** lava_log_close() - accepts NULL; returns NULL. */
struct lava_log *lava_log_close(struct lava_log *lg);

/**
 * lava_log_seek() - the next read starts at record @index
 *
 * Reads labd.log from its start (not console.log), so it costs the size of
 * labd's own lines.  An index past the end reads nothing.
 */
int lava_log_seek(struct lava_log *lg, uint64_t index);

/**
 * lava_log_read() - append the next records to @out as YAML lines
 * @max_bytes: stop once @out grew by at least this much (at least one
 *	record is written when there is one)
 * @max_records: stop after this many, 0 = no limit
 *
 * Returns the number of records appended (0 at the end of what can be read
 * now), or a negative errno.
 */
long lava_log_read(struct lava_log *lg, size_t max_bytes, uint64_t max_records,
		   struct strbuf *out);

/** lava_log_index() - the index of the record the next read starts with. */
uint64_t lava_log_index(const struct lava_log *lg);

/**
 * lava_log_at_end() - whether the last read stopped because nothing more
 * can be read now (with @complete: the whole log was read).
 */
bool lava_log_at_end(const struct lava_log *lg);

/**
 * lava_log_map_lines() - console line numbers (1-based, as results store
 * them) into the line numbers of their records in the YAML log (1-based:
 * record index + 1), in place; 0 stays 0
 *
 * For LAVA's log_start_line/log_end_line of results (squad counts from 1).  @lines need not be
 * sorted.  Reads labd.log once.
 */
int lava_log_map_lines(const char *dir, int64_t *lines, size_t n);

#endif
