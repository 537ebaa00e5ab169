// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite_reservations.c -- the reservations table: developers waiting for and holding boards */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
	COL_ID,
	COL_HOLDER,
	COL_BOARD,
	COL_DEVICE_TYPE,
	COL_TAGS,
	COL_PRIORITY,
	COL_DURATION,
	COL_SUBMITTED,
	COL_STATE,
	COL_DEVICE,
	COL_STARTED,
	COL_UNTIL,
	COL_ENDED,
	COL_END_REASON,
};

#define TEXT(c, field) { c, offsetof(struct reservation_record, field) }
static const struct sqlite_text reservation_texts[] = {
	TEXT(COL_HOLDER, holder),
	TEXT(COL_BOARD, board),
	TEXT(COL_DEVICE_TYPE, device_type),
	TEXT(COL_TAGS, tags),
	TEXT(COL_DEVICE, device),
	TEXT(COL_END_REASON, end_reason),
};
#undef TEXT

/* Queue order as the jobs': higher priority first, then first asked, then id. */
const struct sqlite_sql sqlite_reservations_sql[] = {
	{ STMT_RESERVATION_INSERT,
	  "INSERT INTO reservations (holder, board, device_type, tags, priority, duration,"
	  " submitted, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'waiting')" },
	{ STMT_RESERVATION_GET, "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE id = ?1" },
	{ STMT_RESERVATION_WAITING,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE state = 'waiting'"
	  " ORDER BY priority DESC, submitted, id" },
	{ STMT_RESERVATION_ACTIVE,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE state = 'active' ORDER BY id" },
	{ STMT_RESERVATION_RECENT,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE id <= ?2"
	  " ORDER BY id DESC LIMIT ?1" },
	{ STMT_RESERVATION_ACTIVATE,
	  "UPDATE reservations SET state = 'active', device = ?2, started = ?3, until = ?4"
	  " WHERE id = ?1 AND state = 'waiting'" },
	{ STMT_RESERVATION_RENEW,
	  "UPDATE reservations SET until = ?2 WHERE id = ?1 AND state = 'active'" },
	{ STMT_RESERVATION_END,
	  "UPDATE reservations SET state = 'ended', ended = ?2, end_reason = ?3"
	  " WHERE id = ?1 AND state != 'ended'" },
	{ 0, NULL },
};

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
int sqlite_reservation_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	const char *state = (const char *)sqlite3_column_text(s, COL_STATE);
	struct reservation_record *rec = p;

	rec->id = sqlite3_column_int64(s, COL_ID);
	rec->priority = sqlite3_column_int(s, COL_PRIORITY);
	rec->duration = (uint64_t)sqlite3_column_int64(s, COL_DURATION);
	rec->submitted = (uint64_t)sqlite3_column_int64(s, COL_SUBMITTED);
	rec->started = (uint64_t)sqlite3_column_int64(s, COL_STARTED);
	rec->until = (uint64_t)sqlite3_column_int64(s, COL_UNTIL);
	rec->ended = (uint64_t)sqlite3_column_int64(s, COL_ENDED);
	if (reservation_state_from_name(state, &rec->state) < 0)
		return sqlite_bad_value(sq, "reservation state", state);
	return sqlite_read_texts(s, rec, reservation_texts, ARRAY_SIZE(reservation_texts));
}

static const struct sqlite_reader reservation_reader = {
	&store_reservation_rows, sqlite_reservation_read
};

int sqlite_reservation_insert(struct store *st, struct reservation_record *rec)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESERVATION_INSERT];
	int r;

	sqlite_write(sq);

	if (sqlite3_bind_text(s, 1, rec->holder, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 2, rec->board, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, rec->device_type, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, rec->tags, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int(s, 5, rec->priority) ||
	    sqlite3_bind_int64(s, 6, (int64_t)rec->duration) ||
	    sqlite3_bind_int64(s, 7, (int64_t)rec->submitted))
		return sqlite_fail(sq, s, "insert a reservation");
	r = sqlite_insert(sq, s, "insert a reservation", &rec->id);
	if (!r)
		rec->state = RESERVATION_WAITING;
	return r;
}

int sqlite_reservation_get(struct store *st, int64_t id, struct reservation_record *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESERVATION_GET];

	if (sqlite3_bind_int64(s, 1, id))
		return sqlite_fail(sq, s, "read a reservation");
	return sqlite_read_one(sq, s, "read a reservation", &reservation_reader, ret);
}

int sqlite_reservation_waiting(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_RESERVATION_WAITING],
				"list waiting reservations", &reservation_reader, rows);
}

int sqlite_reservation_active(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_RESERVATION_ACTIVE], "list active reservations",
				&reservation_reader, rows);
}

int sqlite_reservation_recent(struct store *st, unsigned limit, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESERVATION_RECENT];

	/* an id range rather than a scan of the table, however few rows it reads */
	if (sqlite3_bind_int(s, 1, (int)limit) || sqlite3_bind_int64(s, 2, INT64_MAX))
		return sqlite_fail(sq, s, "list reservations");
	return sqlite_read_rows(sq, s, "list reservations", &reservation_reader, rows);
}

int sqlite_reservation_activate(struct store *st, int64_t id, const char *device,
				uint64_t started, uint64_t until)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESERVATION_ACTIVATE];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_text(s, 2, device, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 3, (int64_t)started) || sqlite3_bind_int64(s, 4, (int64_t)until))
		return sqlite_fail(sq, s, "activate a reservation");
	return sqlite_update(sq, s, "activate a reservation");
}

int sqlite_reservation_renew(struct store *st, int64_t id, uint64_t until)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESERVATION_RENEW];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int64(s, 2, (int64_t)until))
		return sqlite_fail(sq, s, "renew a reservation");
	return sqlite_update(sq, s, "renew a reservation");
}

int sqlite_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_RESERVATION_END];

	sqlite_write(sq);

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int64(s, 2, (int64_t)when) ||
	    sqlite3_bind_text(s, 3, reason, -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "end a reservation");
	return sqlite_update(sq, s, "end a reservation");
}
