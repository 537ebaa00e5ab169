// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite_devices.c -- the devices table: each board's persistent state */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEVICE_COLUMNS "name, state, reason, holder, hold_until, job_id, changed"

enum {
	COL_NAME,
	COL_STATE,
	COL_REASON,
	COL_HOLDER,
	COL_HOLD_UNTIL,
	COL_JOB_ID,
	COL_CHANGED,
};

#define TEXT(c, field) { c, offsetof(struct device_record, field) }
static const struct sqlite_text device_texts[] = {
	TEXT(COL_NAME, name),
	TEXT(COL_REASON, reason),
	TEXT(COL_HOLDER, holder),
};
#undef TEXT

/* job_id 0 ("no job") is stored as NULL. */
const struct sqlite_sql sqlite_devices_sql[] = {
	{ STMT_DEVICE_GET, "SELECT " DEVICE_COLUMNS " FROM devices WHERE name = ?1" },
	{ STMT_DEVICE_PUT,
	  "INSERT INTO devices (" DEVICE_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, NULLIF(?6, 0), ?7)"
	  " ON CONFLICT (name) DO UPDATE SET state = excluded.state, reason = excluded.reason,"
	  " holder = excluded.holder, hold_until = excluded.hold_until,"
	  " job_id = excluded.job_id, changed = excluded.changed" },
	{ STMT_DEVICE_LIST, "SELECT " DEVICE_COLUMNS " FROM devices ORDER BY name" },
	{ 0, NULL },
};

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
static int device_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	const char *state = (const char *)sqlite3_column_text(s, COL_STATE);
	struct device_record *rec = p;
	int r;

	rec->hold_until = (uint64_t)sqlite3_column_int64(s, COL_HOLD_UNTIL);
	rec->job_id = sqlite3_column_int64(s, COL_JOB_ID);
	rec->changed = (uint64_t)sqlite3_column_int64(s, COL_CHANGED);
	r = sqlite_read_texts(s, rec, device_texts, ARRAY_SIZE(device_texts));
	if (r < 0)
		return r;
	if (device_state_from_name(state, &rec->state) < 0)
		return sqlite_bad_value(sq, "device state", state);
	return 0;
}

static const struct sqlite_reader device_reader = { &store_device_rows, device_read };

int sqlite_device_get(struct store *st, const char *name, struct device_record *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_DEVICE_GET];

	if (sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "read a device");
	return sqlite_read_one(sq, s, "read a device", &device_reader, ret);
}

int sqlite_device_put(struct store *st, const struct device_record *rec)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_DEVICE_PUT];

	sqlite_write(sq);

	if (sqlite3_bind_text(s, 1, rec->name, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 2, device_state_name(rec->state), -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, rec->reason, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, rec->holder, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 5, (int64_t)rec->hold_until) ||
	    sqlite3_bind_int64(s, 6, rec->job_id) ||
	    sqlite3_bind_int64(s, 7, (int64_t)rec->changed))
		return sqlite_fail(sq, s, "write a device");
	return sqlite_run(sq, s, "write a device");
}

int sqlite_device_list(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_DEVICE_LIST], "list devices", &device_reader,
				rows);
}
