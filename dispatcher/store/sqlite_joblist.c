// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sqlite_joblist.c -- the job list and its counts, a statement per filter
 *
 * One statement with "?1 IS NULL OR state = ?1" for every filter cannot use
 * an index: SQLite plans it once, before the values are bound.  So each
 * combination of filters (a "shape", JOBLIST_* bits) gets its own SQL with
 * only the conditions it has, prepared the first time it is used: the
 * planner then walks the index of one filter ((state, id), (device, id),
 * (device_type, id), (submitter, id), (health, id)) from the cursor, and a
 * page costs one page whatever its depth.  Counts that filter by state and
 * device type at most come from job_counts, which triggers keep
 * (sqlite.c's schema), the others from a COUNT over an index range.
 */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * The condition of each filter bit, with its parameter, from the most
 * selective: the first one a shape has walks its index, the others filter
 * what it gives ("+column" keeps SQLite, which has no statistics here,
 * from walking the index of a few states through a million finished jobs).
 */
static const struct {
	unsigned bit;
	const char *column;
	const char *cond;
} joblist_conds[] = {
	{ JOBLIST_DEVICE, "device", " = ?2" },
	{ JOBLIST_SUBMITTER, "submitter", " = ?4" },
	{ JOBLIST_TYPE, "device_type", " = ?3" },
	{ JOBLIST_HEALTH, "health", " = ?5" },
	{ JOBLIST_STATE, "state", " = ?1" },
	/* several healths: a filter on the rows another index (or the ids) gives */
	{ JOBLIST_HEALTHS, NULL, " AND instr(?5, ',' || health || ',') > 0" },
};

void sqlite_joblist_sql(unsigned shape, char *buf, size_t len)
{
	bool after = shape & JOBLIST_AFTER, driving = false;
	size_t i, n;

	/* an id range always, so that even the unfiltered list is a search, never a scan */
	if (shape & JOBLIST_COUNT)
		n = (size_t)snprintf(buf, len, "SELECT count(*) FROM jobs WHERE id > 0");
	else
		n = (size_t)snprintf(buf, len, "SELECT " JOB_COLUMNS " FROM jobs WHERE id %s ?6",
				     after ? ">" : "<");
	for (i = 0; i < ARRAY_SIZE(joblist_conds) && n < len; i++) {
		if (!(shape & joblist_conds[i].bit))
			continue;
		if (!joblist_conds[i].column)
			n += (size_t)snprintf(buf + n, len - n, "%s", joblist_conds[i].cond);
		else
			n += (size_t)snprintf(buf + n, len - n, " AND %s%s%s", driving ? "+" : "",
					      joblist_conds[i].column, joblist_conds[i].cond);
		driving |= joblist_conds[i].column != NULL;
	}
	if (!(shape & JOBLIST_COUNT) && n < len)
		snprintf(buf + n, len - n, " ORDER BY id %s LIMIT ?7 OFFSET ?8",
			 after ? "ASC" : "DESC");
}

static unsigned shape_of(const struct job_filter *f)
{
	unsigned shape = 0;

	if (f->state >= 0)
		shape |= JOBLIST_STATE;
	if (f->device)
		shape |= JOBLIST_DEVICE;
	if (f->device_type)
		shape |= JOBLIST_TYPE;
	if (f->submitter)
		shape |= JOBLIST_SUBMITTER;
	if (f->healths && !(f->healths & (f->healths - 1)))
		shape |= JOBLIST_HEALTH;
	else if (f->healths)
		shape |= JOBLIST_HEALTHS;
	if (f->after_id > 0)
		shape |= JOBLIST_AFTER;
	return shape;
}

/* The prepared statement of @shape, prepared now if it is the first use. */
static sqlite3_stmt *joblist_stmt(struct sqlite_store *sq, unsigned shape)
{
	char sql[1024];

	if (sq->joblist[shape])
		return sq->joblist[shape];
	sqlite_joblist_sql(shape, sql, sizeof(sql));
	if (sqlite3_prepare_v3(sq->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &sq->joblist[shape],
			       NULL) != SQLITE_OK) {
		sqlite_error(sq, "prepare the job list");
		return NULL;
	}
	return sq->joblist[shape];
}

/* Bind what @f filters by (the parameters of @shape only); @buf holds the healths. */
static bool bind_filter(sqlite3_stmt *s, unsigned shape, const struct job_filter *f, char *buf,
			size_t len)
{
	const char *health = NULL;

	if (shape & JOBLIST_HEALTH)
		health = job_health_name(__builtin_ctz(f->healths));
	else if (shape & JOBLIST_HEALTHS)
		health = store_healths_text(f->healths, buf, len);
	return (!(shape & JOBLIST_STATE) ||
		!sqlite3_bind_text(s, 1, job_state_name(f->state), -1, SQLITE_STATIC)) &&
	       (!(shape & JOBLIST_DEVICE) || !sqlite3_bind_text(s, 2, f->device, -1, SQLITE_STATIC)) &&
	       (!(shape & JOBLIST_TYPE) ||
		!sqlite3_bind_text(s, 3, f->device_type, -1, SQLITE_STATIC)) &&
	       (!(shape & JOBLIST_SUBMITTER) ||
		!sqlite3_bind_text(s, 4, f->submitter, -1, SQLITE_STATIC)) &&
	       (!health || !sqlite3_bind_text(s, 5, health, -1, SQLITE_STATIC));
}

/* Reverse @rows: a page read upwards from after_id is handed over newest first. */
static void reverse_rows(struct store_rows *rows)
{
	char tmp[sizeof(struct job_record)];
	size_t i, n = rows->n, size = rows->type->size;

	for (i = 0; i < n / 2; i++) {
		memcpy(tmp, store_rows_at(rows, i), size);
		memcpy(store_rows_at(rows, i), store_rows_at(rows, n - 1 - i), size);
		memcpy(store_rows_at(rows, n - 1 - i), tmp, size);
	}
}

int sqlite_job_list(struct store *st, const struct job_filter *f, struct store_rows *rows)
{
	static const struct sqlite_reader reader = { &store_job_rows, sqlite_job_read };
	struct sqlite_store *sq = sqlite_of(st);
	unsigned shape = shape_of(f);
	sqlite3_stmt *s = joblist_stmt(sq, shape);
	int64_t cursor = shape & JOBLIST_AFTER ? f->after_id :
			 f->before_id > 0 ? f->before_id : INT64_MAX;
	char healths[64];
	int r;

	if (!s)
		return -EIO;
	if (!bind_filter(s, shape, f, healths, sizeof(healths)) ||
	    sqlite3_bind_int64(s, 6, cursor) ||
	    sqlite3_bind_int64(s, 7, f->limit ? f->limit : STORE_JOB_LIST_DEFAULT) ||
	    sqlite3_bind_int64(s, 8, f->offset))
		return sqlite_fail(sq, s, "list jobs");
	r = sqlite_read_rows(sq, s, "list jobs", &reader, rows);
	if (!r && (shape & JOBLIST_AFTER))
		reverse_rows(rows);
	return r;
}

/* A count kept in job_counts: by state and/or device type only. */
static int kept_count(struct sqlite_store *sq, const struct job_filter *f, int64_t *ret)
{
	enum sqlite_stmt id = f->state >= 0 && f->device_type ? STMT_COUNT_STATE_TYPE :
			      f->state >= 0		      ? STMT_COUNT_STATE :
			      f->device_type		      ? STMT_COUNT_TYPE :
								STMT_COUNT_ALL;
	sqlite3_stmt *s = sq->stmt[id];

	if ((f->state >= 0 &&
	     sqlite3_bind_text(s, 1, job_state_name(f->state), -1, SQLITE_STATIC)) ||
	    (f->device_type && sqlite3_bind_text(s, 2, f->device_type, -1, SQLITE_STATIC)) ||
	    sqlite3_step(s) != SQLITE_ROW)
		return sqlite_fail(sq, s, "count jobs");
	*ret = sqlite3_column_int64(s, 0);
	sqlite_reset(s);
	return 0;
}

/* Several healths: the sum of one count per health, each over the index of health. */
static int count_healths(struct store *st, const struct job_filter *f, int64_t *ret)
{
	struct job_filter one = *f;
	int64_t n, sum = 0;
	unsigned h;
	int r;

	for (h = 0; h < 32; h++) {
		if (!(f->healths & (1U << h)))
			continue;
		one.healths = 1U << h;
		r = sqlite_job_count_matching(st, &one, &n);
		if (r < 0)
			return r;
		sum += n;
	}
	*ret = sum;
	return 0;
}

int sqlite_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	unsigned shape = shape_of(f) & ~JOBLIST_AFTER;
	sqlite3_stmt *s;
	char healths[64];

	if (!(shape & ~(JOBLIST_STATE | JOBLIST_TYPE)))
		return kept_count(sq, f, ret);
	if (shape & JOBLIST_HEALTHS)
		return count_healths(st, f, ret);
	s = joblist_stmt(sq, shape | JOBLIST_COUNT);
	if (!s)
		return -EIO;
	if (!bind_filter(s, shape, f, healths, sizeof(healths)) || sqlite3_step(s) != SQLITE_ROW)
		return sqlite_fail(sq, s, "count jobs");
	*ret = sqlite3_column_int64(s, 0);
	sqlite_reset(s);
	return 0;
}

int sqlite_job_count(struct store *st, enum job_state state, int64_t *ret)
{
	struct job_filter f = { .state = (int)state };

	return kept_count(sqlite_of(st), &f, ret);
}
