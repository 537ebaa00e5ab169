// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite_results.c -- the results table: test results of each job, in the order found */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_COLUMNS \
	"id, job_id, suite, name, result, measurement, units, log_start, log_end, extra, created"

enum {
	COL_ID,
	COL_JOB_ID,
	COL_SUITE,
	COL_NAME,
	COL_RESULT,
	COL_MEASUREMENT,
	COL_UNITS,
	COL_LOG_START,
	COL_LOG_END,
	COL_EXTRA,
	COL_CREATED,
};

#define TEXT(c, field) { c, offsetof(struct result_record, field) }
static const struct sqlite_text result_texts[] = {
	TEXT(COL_SUITE, suite),
	TEXT(COL_NAME, name),
	TEXT(COL_RESULT, result),
	TEXT(COL_UNITS, units),
	TEXT(COL_EXTRA, extra),
};
#undef TEXT

/* A result without a measurement has measurement NULL. */
const struct sqlite_sql sqlite_results_sql[] = {
	{ STMT_RESULT_ADD,
	  "INSERT INTO results (job_id, suite, name, result, measurement, units, log_start,"
	  " log_end, extra, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)" },
	{ STMT_RESULT_LIST, "SELECT " RESULT_COLUMNS " FROM results WHERE job_id = ?1 ORDER BY id" },
	{ STMT_RESULT_DROP_JOB, "DELETE FROM results WHERE job_id = ?1" },
	{ 0, NULL },
};

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
static int result_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	struct result_record *rec = p;

	rec->id = sqlite3_column_int64(s, COL_ID);
	rec->job_id = sqlite3_column_int64(s, COL_JOB_ID);
	rec->has_measurement = sqlite3_column_type(s, COL_MEASUREMENT) != SQLITE_NULL;
	rec->measurement = rec->has_measurement ? sqlite3_column_double(s, COL_MEASUREMENT) : 0;
	rec->log_start = sqlite3_column_int64(s, COL_LOG_START);
	rec->log_end = sqlite3_column_int64(s, COL_LOG_END);
	rec->created = (uint64_t)sqlite3_column_int64(s, COL_CREATED);
	return sqlite_read_texts(s, rec, result_texts, ARRAY_SIZE(result_texts));
}

static const struct sqlite_reader result_reader = { &store_result_rows, result_read };

static int result_bind_measurement(sqlite3_stmt *s, const struct result_record *rec)
{
	if (!rec->has_measurement)
		return sqlite3_bind_null(s, 5);
	return sqlite3_bind_double(s, 5, rec->measurement);
}

int sqlite_result_add(struct store *st, struct result_record *rec)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESULT_ADD];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, rec->job_id) ||
	    sqlite3_bind_text(s, 2, rec->suite, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, rec->name, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, rec->result, -1, SQLITE_STATIC) ||
	    result_bind_measurement(s, rec) ||
	    sqlite3_bind_text(s, 6, rec->units, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 7, rec->log_start) || sqlite3_bind_int64(s, 8, rec->log_end) ||
	    sqlite3_bind_text(s, 9, rec->extra, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 10, (int64_t)rec->created))
		return sqlite_fail(sq, s, "add a result");
	return sqlite_insert(sq, s, "add a result", &rec->id);
}

int sqlite_result_list(struct store *st, int64_t job_id, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESULT_LIST];

	if (sqlite3_bind_int64(s, 1, job_id))
		return sqlite_fail(sq, s, "list results");
	return sqlite_read_rows(sq, s, "list results", &result_reader, rows);
}

int sqlite_result_drop_job(struct sqlite_store *sq, int64_t job_id)
{
	sqlite3_stmt *s = sq->stmt[STMT_RESULT_DROP_JOB];

	if (sqlite3_bind_int64(s, 1, job_id))
		return sqlite_fail(sq, s, "delete results");
	return sqlite_run(sq, s, "delete results");
}
