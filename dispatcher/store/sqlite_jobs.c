// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite_jobs.c -- the jobs table: queue, lifecycle and outcome of every job */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Result columns of JOB_COLUMNS. */
enum {
	COL_ID,
	COL_NAME,
	COL_DEVICE_TYPE,
	COL_TAGS,
	COL_PRIORITY,
	COL_SUBMITTED,
	COL_STARTED,
	COL_ENDED,
	COL_STATE,
	COL_HEALTH,
	COL_ERROR_TYPE,
	COL_ERROR_MSG,
	COL_DEVICE,
	COL_DEFINITION,
	COL_FORMAT,
	COL_FILENAME,
	COL_SUBMITTER,
	COL_ATTEMPT,
	COL_RETRIES_LEFT,
	COL_RECOVERED,
	COL_RESULTS_PASS,
	COL_RESULTS_FAIL,
	COL_RESULTS_SKIP,
	COL_RESULTS_UNKNOWN,
	COL_LAST_ERROR,
	COL_SESSION,
	COL_AVOID,
	COL_LOG_REMOVED,
	COL_HISTORY_REMOVED,
};

#define TEXT(c, field) { c, offsetof(struct job_record, field) }
static const struct sqlite_text job_texts[] = {
	TEXT(COL_NAME, name),
	TEXT(COL_DEVICE_TYPE, device_type),
	TEXT(COL_TAGS, tags),
	TEXT(COL_ERROR_MSG, error_msg),
	TEXT(COL_DEVICE, device),
	TEXT(COL_DEFINITION, definition),
	TEXT(COL_FORMAT, format),
	TEXT(COL_FILENAME, filename),
	TEXT(COL_SUBMITTER, submitter),
	TEXT(COL_LAST_ERROR, last_error),
	TEXT(COL_AVOID, avoid),
};
#undef TEXT

/* Queue order: higher priority first, then first submitted, then id. */
const struct sqlite_sql sqlite_jobs_sql[] = {
	{ STMT_JOB_INSERT,
	  "INSERT INTO jobs (name, device_type, tags, priority, submitted, started, ended, state,"
	  " health, error_type, error_msg, device, definition, format, filename, submitter,"
	  " attempt, retries_left, recovered, last_error, session, avoid)"
	  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
	  " ?18, ?19, ?20, ?21, ?22)" },
	{ STMT_JOB_GET, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1" },
	{ STMT_JOB_QUEUED,
	  "SELECT " JOB_COLUMNS " FROM jobs WHERE state = 'queued' ORDER BY priority DESC,"
	  " submitted, id" },
	{ STMT_JOB_RUNNING,
	  "SELECT " JOB_COLUMNS " FROM jobs WHERE state IN ('running', 'canceling') ORDER BY id" },
	{ STMT_JOB_START,
	  "UPDATE jobs SET state = 'running', device = ?2, started = ?3 WHERE id = ?1" },
	{ STMT_JOB_SET_STATE, "UPDATE jobs SET state = ?2 WHERE id = ?1" },
	{ STMT_JOB_FINISH,
	  "UPDATE jobs SET state = 'finished', health = ?2, error_type = ?3, error_msg = ?4,"
	  " ended = ?5,"
	  " results_pass = (SELECT count(*) FROM results WHERE job_id = ?1 AND result = 'pass'),"
	  " results_fail = (SELECT count(*) FROM results WHERE job_id = ?1 AND result = 'fail'),"
	  " results_skip = (SELECT count(*) FROM results WHERE job_id = ?1 AND result = 'skip'),"
	  " results_unknown = (SELECT count(*) FROM results WHERE job_id = ?1"
	  "  AND result NOT IN ('pass', 'fail', 'skip'))"
	  " WHERE id = ?1" },
	{ STMT_JOB_REQUEUE,
	  "UPDATE jobs SET state = 'queued', attempt = attempt + 1, device = NULL, started = 0,"
	  " ended = 0, health = 'unknown', error_type = 'none',"
	  " last_error = COALESCE(?3, error_msg, last_error), error_msg = NULL,"
	  " retries_left = CASE WHEN ?2 THEN retries_left ELSE MAX(retries_left - 1, 0) END,"
	  " recovered = recovered OR ?2, results_pass = 0, results_fail = 0, results_skip = 0,"
	  " avoid = CASE WHEN ?2 THEN avoid ELSE device END,"
	  " results_unknown = 0"
	  " WHERE id = ?1" },
	/* the first removal of each kind is the one remembered */
	{ STMT_JOB_PRUNE,
	  "UPDATE jobs SET"
	  " log_removed = CASE WHEN ?2 > 0 AND log_removed = 0 THEN ?2 ELSE log_removed END,"
	  " history_removed = CASE WHEN ?3 > 0 AND history_removed = 0 THEN ?3"
	  "  ELSE history_removed END"
	  " WHERE id = ?1" },
	{ 0, NULL },
};

static int job_read_enums(struct sqlite_store *sq, sqlite3_stmt *s, struct job_record *rec)
{
	const char *state = (const char *)sqlite3_column_text(s, COL_STATE);
	const char *health = (const char *)sqlite3_column_text(s, COL_HEALTH);
	const char *type = (const char *)sqlite3_column_text(s, COL_ERROR_TYPE);

	if (job_state_from_name(state, &rec->state) < 0)
		return sqlite_bad_value(sq, "job state", state);
	if (job_health_from_name(health, &rec->health) < 0)
		return sqlite_bad_value(sq, "job health", health);
	if (error_type_from_name(type, &rec->error_type) < 0)
		return sqlite_bad_value(sq, "error type", type);
	return 0;
}

/* Read the current row (JOB_COLUMNS) into the zeroed @p; on failure @p stays releasable. */
int sqlite_job_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	struct job_record *rec = p;

	rec->id = sqlite3_column_int64(s, COL_ID);
	rec->priority = sqlite3_column_int(s, COL_PRIORITY);
	rec->submitted = (uint64_t)sqlite3_column_int64(s, COL_SUBMITTED);
	rec->started = (uint64_t)sqlite3_column_int64(s, COL_STARTED);
	rec->ended = (uint64_t)sqlite3_column_int64(s, COL_ENDED);
	rec->attempt = sqlite3_column_int(s, COL_ATTEMPT);
	rec->retries_left = sqlite3_column_int(s, COL_RETRIES_LEFT);
	rec->recovered = sqlite3_column_int(s, COL_RECOVERED);
	rec->session = sqlite3_column_int(s, COL_SESSION);
	rec->results_pass = sqlite3_column_int(s, COL_RESULTS_PASS);
	rec->results_fail = sqlite3_column_int(s, COL_RESULTS_FAIL);
	rec->results_skip = sqlite3_column_int(s, COL_RESULTS_SKIP);
	rec->results_unknown = sqlite3_column_int(s, COL_RESULTS_UNKNOWN);
	rec->log_removed = (uint64_t)sqlite3_column_int64(s, COL_LOG_REMOVED);
	rec->history_removed = (uint64_t)sqlite3_column_int64(s, COL_HISTORY_REMOVED);
	if (job_read_enums(sq, s, rec) < 0)
		return -EIO;
	return sqlite_read_texts(s, rec, job_texts, ARRAY_SIZE(job_texts));
}

static const struct sqlite_reader job_reader = { &store_job_rows, sqlite_job_read };

static int job_bind_texts(sqlite3_stmt *s, const struct job_record *rec)
{
	return sqlite3_bind_text(s, 1, rec->name, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 2, rec->device_type, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 3, rec->tags, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 11, rec->error_msg, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 12, rec->device, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 13, rec->definition, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 14, rec->format, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 15, rec->filename, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 16, rec->submitter, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 20, rec->last_error, -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 22, rec->avoid, -1, SQLITE_STATIC);
}

static int job_bind_values(sqlite3_stmt *s, const struct job_record *rec, int attempt)
{
	return sqlite3_bind_int(s, 4, rec->priority) ||
	       sqlite3_bind_int64(s, 5, (int64_t)rec->submitted) ||
	       sqlite3_bind_int64(s, 6, (int64_t)rec->started) ||
	       sqlite3_bind_int64(s, 7, (int64_t)rec->ended) ||
	       sqlite3_bind_text(s, 8, job_state_name(rec->state), -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 9, job_health_name(rec->health), -1, SQLITE_STATIC) ||
	       sqlite3_bind_text(s, 10, error_type_name(rec->error_type), -1, SQLITE_STATIC) ||
	       sqlite3_bind_int(s, 17, attempt) ||
	       sqlite3_bind_int(s, 18, rec->retries_left) ||
	       sqlite3_bind_int(s, 19, rec->recovered) ||
	       sqlite3_bind_int(s, 21, rec->session);
}

int sqlite_job_insert(struct store *st, struct job_record *rec)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_INSERT];
	int attempt = rec->attempt > 1 ? rec->attempt : 1;
	int r;

	sqlite_write(sq);

	if (job_bind_texts(s, rec) || job_bind_values(s, rec, attempt))
		return sqlite_fail(sq, s, "insert a job");
	r = sqlite_insert(sq, s, "insert a job", &rec->id);
	if (!r)
		rec->attempt = attempt;
	return r;
}

int sqlite_job_get(struct store *st, int64_t id, struct job_record *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_GET];

	if (sqlite3_bind_int64(s, 1, id))
		return sqlite_fail(sq, s, "read a job");
	return sqlite_read_one(sq, s, "read a job", &job_reader, ret);
}

int sqlite_job_queued(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_JOB_QUEUED], "list the queue", &job_reader, rows);
}

int sqlite_job_running(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_JOB_RUNNING], "list running jobs", &job_reader,
				rows);
}

int sqlite_job_start(struct store *st, int64_t id, const char *device, uint64_t when)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_START];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_text(s, 2, device, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 3, (int64_t)when))
		return sqlite_fail(sq, s, "start a job");
	return sqlite_update(sq, s, "start a job");
}

int sqlite_job_set_state(struct store *st, int64_t id, enum job_state state)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_SET_STATE];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, id) ||
	    sqlite3_bind_text(s, 2, job_state_name(state), -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "set a job's state");
	return sqlite_update(sq, s, "set a job's state");
}

int sqlite_job_finish(struct store *st, int64_t id, enum job_health health,
		      enum error_type type, const char *msg, uint64_t when)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_FINISH];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, id) ||
	    sqlite3_bind_text(s, 2, job_health_name(health), -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, error_type_name(type), -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, msg, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 5, (int64_t)when))
		return sqlite_fail(sq, s, "finish a job");
	return sqlite_update(sq, s, "finish a job");
}

int sqlite_job_requeue(struct store *st, int64_t id, bool recovered, const char *why)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_REQUEUE];
	int r;

	sqlite_write(sq);

	r = sqlite_savepoint_begin(sq);
	if (r < 0)
		return r;
	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int(s, 2, recovered) ||
	    sqlite3_bind_text(s, 3, why, -1, SQLITE_STATIC))
		r = sqlite_fail(sq, s, "requeue a job");
	else
		r = sqlite_update(sq, s, "requeue a job");
	if (r >= 0)
		r = sqlite_result_drop_job(sq, id);
	return sqlite_savepoint_end(sq, r);
}

int sqlite_job_prune(struct store *st, int64_t id, uint64_t log_removed,
		     uint64_t history_removed)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_JOB_PRUNE];
	int r;

	sqlite_write(sq);

	r = sqlite_savepoint_begin(sq);
	if (r < 0)
		return r;
	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int64(s, 2, (int64_t)log_removed) ||
	    sqlite3_bind_int64(s, 3, (int64_t)history_removed))
		r = sqlite_fail(sq, s, "prune a job");
	else
		r = sqlite_update(sq, s, "prune a job");
	if (r >= 0 && history_removed)
		r = sqlite_result_drop_job(sq, id);
	if (r >= 0 && history_removed)
		r = sqlite_event_drop_job(sq, id);
	if (r >= 0 && history_removed)
		r = sqlite_delivered_drop_job(sq, id);
	return sqlite_savepoint_end(sq, r);
}
