// SPDX-License-Identifier: GPL-2.0-or-later
/* store_events.c -- the events table: the numbered history of each job */
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

enum {
	COL_SEQ,
	COL_JOB_ID,
	COL_TS,
	COL_KIND,
	COL_DATA,
};

#define TEXT(c, field) { c, offsetof(struct event_record, field) }
static const struct store_text event_texts[] = {
	TEXT(COL_KIND, kind),
	TEXT(COL_DATA, data),
};
#undef TEXT

/*
 * The sequence number is computed by the insert itself (one statement is
 * atomic), from the unique (job_id, seq) index, so it needs no cache and
 * holds across restarts; it is read back by rowid (RETURNING costs twice
 * the insert).
 */
const struct store_sql store_events_sql[] = {
	{ STMT_EVENT_ADD,
	  "INSERT INTO events (job_id, seq, ts, kind, data) VALUES (?1,"
	  " COALESCE((SELECT MAX(seq) FROM events WHERE job_id = ?1), 0) + 1, ?2, ?3, ?4)" },
	{ STMT_EVENT_SEQ, "SELECT seq FROM events WHERE id = ?1" },
	{ STMT_EVENT_LIST,
	  "SELECT seq, job_id, ts, kind, data FROM events WHERE job_id = ?1 AND seq > ?2"
	  " ORDER BY seq" },
	{ 0, NULL },
};

void event_record_release(struct event_record *rec)
{
	if (!rec)
		return;
	store_free_texts(rec, event_texts, ARRAY_SIZE(event_texts));
	memset(rec, 0, sizeof(*rec));
}

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
static int event_read(struct store *st, sqlite3_stmt *s, void *p)
{
	struct event_record *rec = p;

	rec->seq = sqlite3_column_int64(s, COL_SEQ);
	rec->job_id = sqlite3_column_int64(s, COL_JOB_ID);
	rec->ts = (uint64_t)sqlite3_column_int64(s, COL_TS);
	return store_read_texts(s, rec, event_texts, ARRAY_SIZE(event_texts));
}

static void event_release(void *rec)
{
	event_record_release(rec);
}

static const struct store_row_type event_rows = {
	.size = sizeof(struct event_record),
	.read = event_read,
	.release = event_release,
};

int store_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		    const char *data, int64_t *ret_seq)
{
	sqlite3_stmt *s = st->stmt[STMT_EVENT_ADD];
	int64_t seq;
	int r;

	if (!kind)
		return -EINVAL;
	if (sqlite3_bind_int64(s, 1, job_id) || sqlite3_bind_int64(s, 2, (int64_t)ts) ||
	    sqlite3_bind_text(s, 3, kind, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, data, -1, SQLITE_STATIC))
		return store_fail(st, s, "add an event");
	r = store_run(st, s, "add an event");
	if (r < 0)
		return r;
	s = st->stmt[STMT_EVENT_SEQ];
	if (sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(st->db)) ||
	    sqlite3_step(s) != SQLITE_ROW)
		return store_fail(st, s, "read an event's sequence number");
	seq = sqlite3_column_int64(s, 0);
	store_reset(s);
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

int store_event_list(struct store *st, int64_t job_id, int64_t after,
		     int (*cb)(const struct event_record *rec, void *ud), void *ud)
{
	sqlite3_stmt *s = st->stmt[STMT_EVENT_LIST];
	struct store_rows rows = { .type = &event_rows };
	size_t i;
	int r;

	if (sqlite3_bind_int64(s, 1, job_id) || sqlite3_bind_int64(s, 2, after))
		return store_fail(st, s, "list events");
	r = store_rows_read(st, s, "list events", &rows);
	for (i = 0; r >= 0 && i < rows.n; i++)
		r = cb(store_rows_at(&rows, i), ud);
	store_rows_release(&rows);
	return r < 0 ? r : 0;
}
