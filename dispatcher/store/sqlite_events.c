// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite_events.c -- the events table: the numbered history of each job */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
	COL_SEQ,
	COL_JOB_ID,
	COL_TS,
	COL_KIND,
	COL_DATA,
};

#define TEXT(c, field) { c, offsetof(struct event_record, field) }
static const struct sqlite_text event_texts[] = {
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
const struct sqlite_sql sqlite_events_sql[] = {
	{ STMT_EVENT_ADD,
	  "INSERT INTO events (job_id, seq, ts, kind, data) VALUES (?1,"
	  " COALESCE((SELECT MAX(seq) FROM events WHERE job_id = ?1), 0) + 1, ?2, ?3, ?4)" },
	{ STMT_EVENT_SEQ, "SELECT seq FROM events WHERE id = ?1" },
	{ STMT_EVENT_LIST,
	  "SELECT seq, job_id, ts, kind, data FROM events WHERE job_id = ?1 AND seq > ?2"
	  " ORDER BY seq" },
	{ STMT_EVENT_DROP_JOB, "DELETE FROM events WHERE job_id = ?1" },
	/* a job that is not there is skipped; the position never moves back */
	{ STMT_DELIVERED_SET,
	  "INSERT INTO deliveries (job_id, backend, receiver, seq) SELECT ?1, ?2, ?3, ?4"
	  " WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1)"
	  " ON CONFLICT (job_id, backend, receiver) DO UPDATE SET seq = max(seq, excluded.seq)" },
	{ STMT_DELIVERED_GET,
	  "SELECT seq FROM deliveries WHERE job_id = ?1 AND backend = ?2 AND receiver = ?3" },
	{ STMT_DELIVERED_DROP_JOB, "DELETE FROM deliveries WHERE job_id = ?1" },
	{ STMT_DELIVERED_LIST,
	  "SELECT backend, receiver, job_id, seq FROM deliveries ORDER BY job_id, backend, receiver" },
	{ 0, NULL },
};

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
static int event_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	struct event_record *rec = p;

	rec->seq = sqlite3_column_int64(s, COL_SEQ);
	rec->job_id = sqlite3_column_int64(s, COL_JOB_ID);
	rec->ts = (uint64_t)sqlite3_column_int64(s, COL_TS);
	return sqlite_read_texts(s, rec, event_texts, ARRAY_SIZE(event_texts));
}

static const struct sqlite_reader event_reader = { &store_event_rows, event_read };

enum { DCOL_BACKEND, DCOL_RECEIVER, DCOL_JOB_ID, DCOL_SEQ };

static const struct sqlite_text delivery_texts[] = {
	{ DCOL_BACKEND, offsetof(struct delivery_record, backend) },
	{ DCOL_RECEIVER, offsetof(struct delivery_record, receiver) },
};

/* Read the current row of STMT_DELIVERED_LIST into the zeroed @p. */
static int delivery_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	struct delivery_record *rec = p;

	rec->job_id = sqlite3_column_int64(s, DCOL_JOB_ID);
	rec->seq = sqlite3_column_int64(s, DCOL_SEQ);
	return sqlite_read_texts(s, rec, delivery_texts, ARRAY_SIZE(delivery_texts));
}

static const struct sqlite_reader delivery_reader = { &store_delivery_rows, delivery_read };

int sqlite_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		     const char *data, int64_t *ret_seq)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_EVENT_ADD];
	int64_t id, seq;
	int r;

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, job_id) || sqlite3_bind_int64(s, 2, (int64_t)ts) ||
	    sqlite3_bind_text(s, 3, kind, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, data, -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "add an event");
	r = sqlite_insert(sq, s, "add an event", &id);
	if (r < 0)
		return r;
	s = sq->stmt[STMT_EVENT_SEQ];
	if (sqlite3_bind_int64(s, 1, id) ||
	    sqlite3_step(s) != SQLITE_ROW)
		return sqlite_fail(sq, s, "read an event's sequence number");
	seq = sqlite3_column_int64(s, 0);
	sqlite_reset(s);
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

int sqlite_event_list(struct store *st, int64_t job_id, int64_t after, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_EVENT_LIST];

	if (sqlite3_bind_int64(s, 1, job_id) || sqlite3_bind_int64(s, 2, after))
		return sqlite_fail(sq, s, "list events");
	return sqlite_read_rows(sq, s, "list events", &event_reader, rows);
}

int sqlite_event_drop_job(struct sqlite_store *sq, int64_t job_id)
{
	sqlite3_stmt *s = sq->stmt[STMT_EVENT_DROP_JOB];

	if (sqlite3_bind_int64(s, 1, job_id))
		return sqlite_fail(sq, s, "delete events");
	return sqlite_run(sq, s, "delete events");
}

/* ---- how far the backends' receivers acknowledged a job's events ---- */

int sqlite_delivered_set(struct store *st, const char *backend, const char *receiver,
			 int64_t job_id, int64_t seq)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_DELIVERED_SET];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, job_id) ||
	    sqlite3_bind_text(s, 2, backend, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, receiver, -1, SQLITE_STATIC) || sqlite3_bind_int64(s, 4, seq))
		return sqlite_fail(sq, s, "note a delivery");
	return sqlite_run(sq, s, "note a delivery");
}

int sqlite_delivered_get(struct store *st, const char *backend, const char *receiver,
			 int64_t job_id, int64_t *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_DELIVERED_GET];
	int r;

	if (sqlite3_bind_int64(s, 1, job_id) ||
	    sqlite3_bind_text(s, 2, backend, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, receiver, -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "read a delivery");
	r = sqlite_read_int(sq, s, "read a delivery", ret);
	return r == -ENOENT ? 0 : r;	/* none delivered: the 0 store.c set */
}

int sqlite_delivered_list(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_DELIVERED_LIST], "list deliveries",
				&delivery_reader, rows);
}

int sqlite_delivered_drop_job(struct sqlite_store *sq, int64_t job_id)
{
	sqlite3_stmt *s = sq->stmt[STMT_DELIVERED_DROP_JOB];

	if (sqlite3_bind_int64(s, 1, job_id))
		return sqlite_fail(sq, s, "delete deliveries");
	return sqlite_run(sq, s, "delete deliveries");
}
