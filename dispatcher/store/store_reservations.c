// SPDX-License-Identifier: GPL-2.0-or-later
/* store_reservations.c -- the reservations table: developers waiting for and holding boards */
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

#define RESERVATION_COLUMNS                                                                 \
	"id, holder, board, device_type, tags, priority, duration, submitted, state, device, " \
	"started, until, ended, end_reason"

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
static const struct store_text reservation_texts[] = {
	TEXT(COL_HOLDER, holder),
	TEXT(COL_BOARD, board),
	TEXT(COL_DEVICE_TYPE, device_type),
	TEXT(COL_TAGS, tags),
	TEXT(COL_DEVICE, device),
	TEXT(COL_END_REASON, end_reason),
};
#undef TEXT

static const char *const state_names[] = {
	[RESERVATION_WAITING] = "waiting",
	[RESERVATION_ACTIVE] = "active",
	[RESERVATION_ENDED] = "ended",
};

/* Queue order as the jobs': higher priority first, then first asked (ids only grow). */
const struct store_sql store_reservations_sql[] = {
	{ STMT_RESERVATION_INSERT,
	  "INSERT INTO reservations (holder, board, device_type, tags, priority, duration,"
	  " submitted, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'waiting')" },
	{ STMT_RESERVATION_GET, "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE id = ?1" },
	{ STMT_RESERVATION_WAITING,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE state = 'waiting'"
	  " ORDER BY priority DESC, id" },
	{ STMT_RESERVATION_ACTIVE,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE state = 'active' ORDER BY id" },
	{ STMT_RESERVATION_RECENT,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations ORDER BY id DESC LIMIT ?1" },
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

const char *reservation_state_name(enum reservation_state s)
{
	return (unsigned)s <= RESERVATION_ENDED ? state_names[s] : "unknown";
}

static int state_from_name(const char *name, enum reservation_state *ret)
{
	unsigned i;

	for (i = 0; name && i <= RESERVATION_ENDED; i++) {
		if (!strcmp(name, state_names[i])) {
			*ret = (enum reservation_state)i;
			return 0;
		}
	}
	return -EINVAL;
}

void reservation_record_release(struct reservation_record *rec)
{
	if (!rec)
		return;
	store_free_texts(rec, reservation_texts, ARRAY_SIZE(reservation_texts));
	memset(rec, 0, sizeof(*rec));
}

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
static int reservation_read(struct store *st, sqlite3_stmt *s, void *p)
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
	if (state_from_name(state, &rec->state) < 0)
		return store_bad_value(st, "reservation state", state);
	return store_read_texts(s, rec, reservation_texts, ARRAY_SIZE(reservation_texts));
}

static void reservation_release(void *rec)
{
	reservation_record_release(rec);
}

static const struct store_row_type reservation_rows = {
	.size = sizeof(struct reservation_record),
	.read = reservation_read,
	.release = reservation_release,
};

/* Read every row of the bound query @s, then call @cb on each. */
static int reservation_each(struct store *st, sqlite3_stmt *s, const char *op,
			    int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &reservation_rows };
	size_t i;
	int r;

	r = store_rows_read(st, s, op, &rows);
	for (i = 0; r >= 0 && i < rows.n; i++)
		r = cb(store_rows_at(&rows, i), ud);
	store_rows_release(&rows);
	return r < 0 ? r : 0;
}

int store_reservation_insert(struct store *st, struct reservation_record *rec)
{
	sqlite3_stmt *s = st->stmt[STMT_RESERVATION_INSERT];
	int r;

	if (!rec->holder || !rec->device_type)
		return -EINVAL;
	if (sqlite3_bind_text(s, 1, rec->holder, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 2, rec->board, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, rec->device_type, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, rec->tags, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int(s, 5, rec->priority) ||
	    sqlite3_bind_int64(s, 6, (int64_t)rec->duration) ||
	    sqlite3_bind_int64(s, 7, (int64_t)rec->submitted))
		return store_fail(st, s, "insert a reservation");
	r = store_run(st, s, "insert a reservation");
	if (r < 0)
		return r;
	rec->id = sqlite3_last_insert_rowid(st->db);
	rec->state = RESERVATION_WAITING;
	return 0;
}

int store_reservation_get(struct store *st, int64_t id, struct reservation_record *ret)
{
	sqlite3_stmt *s = st->stmt[STMT_RESERVATION_GET];
	struct reservation_record rec = { 0 };
	int r;

	if (sqlite3_bind_int64(s, 1, id))
		return store_fail(st, s, "read a reservation");
	r = store_row(st, s, "read a reservation");
	if (r < 0)
		return r;
	r = reservation_read(st, s, &rec);
	store_reset(s);
	if (r < 0) {
		reservation_record_release(&rec);
		return r;
	}
	*ret = rec;
	return 0;
}

int store_reservation_waiting(struct store *st,
			      int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	return reservation_each(st, st->stmt[STMT_RESERVATION_WAITING],
				"list waiting reservations", cb, ud);
}

int store_reservation_active(struct store *st,
			     int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	return reservation_each(st, st->stmt[STMT_RESERVATION_ACTIVE], "list active reservations",
				cb, ud);
}

int store_reservation_recent(struct store *st, unsigned limit,
			     int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	sqlite3_stmt *s = st->stmt[STMT_RESERVATION_RECENT];

	if (sqlite3_bind_int(s, 1, (int)limit))
		return store_fail(st, s, "list reservations");
	return reservation_each(st, s, "list reservations", cb, ud);
}

int store_reservation_activate(struct store *st, int64_t id, const char *device,
			       uint64_t started, uint64_t until)
{
	sqlite3_stmt *s = st->stmt[STMT_RESERVATION_ACTIVATE];

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_text(s, 2, device, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 3, (int64_t)started) || sqlite3_bind_int64(s, 4, (int64_t)until))
		return store_fail(st, s, "activate a reservation");
	return store_update(st, s, "activate a reservation");
}

int store_reservation_renew(struct store *st, int64_t id, uint64_t until)
{
	sqlite3_stmt *s = st->stmt[STMT_RESERVATION_RENEW];

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int64(s, 2, (int64_t)until))
		return store_fail(st, s, "renew a reservation");
	return store_update(st, s, "renew a reservation");
}

int store_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason)
{
	sqlite3_stmt *s = st->stmt[STMT_RESERVATION_END];

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int64(s, 2, (int64_t)when) ||
	    sqlite3_bind_text(s, 3, reason, -1, SQLITE_STATIC))
		return store_fail(st, s, "end a reservation");
	return store_update(st, s, "end a reservation");
}
