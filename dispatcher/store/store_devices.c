// SPDX-License-Identifier: GPL-2.0-or-later
/* store_devices.c -- the devices table: each board's persistent state */
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

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
static const struct store_text device_texts[] = {
	TEXT(COL_NAME, name),
	TEXT(COL_REASON, reason),
	TEXT(COL_HOLDER, holder),
};
#undef TEXT

/* job_id 0 ("no job") is stored as NULL. */
const struct store_sql store_devices_sql[] = {
	{ STMT_DEVICE_GET, "SELECT " DEVICE_COLUMNS " FROM devices WHERE name = ?1" },
	{ STMT_DEVICE_PUT,
	  "INSERT INTO devices (" DEVICE_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, NULLIF(?6, 0), ?7)"
	  " ON CONFLICT (name) DO UPDATE SET state = excluded.state, reason = excluded.reason,"
	  " holder = excluded.holder, hold_until = excluded.hold_until,"
	  " job_id = excluded.job_id, changed = excluded.changed" },
	{ STMT_DEVICE_LIST, "SELECT " DEVICE_COLUMNS " FROM devices ORDER BY name" },
	{ 0, NULL },
};

void device_record_release(struct device_record *rec)
{
	if (!rec)
		return;
	store_free_texts(rec, device_texts, ARRAY_SIZE(device_texts));
	memset(rec, 0, sizeof(*rec));
}

/* Read the current row into the zeroed @p; on failure @p stays releasable. */
static int device_read(struct store *st, sqlite3_stmt *s, void *p)
{
	const char *state = (const char *)sqlite3_column_text(s, COL_STATE);
	struct device_record *rec = p;
	int r;

	rec->hold_until = (uint64_t)sqlite3_column_int64(s, COL_HOLD_UNTIL);
	rec->job_id = sqlite3_column_int64(s, COL_JOB_ID);
	rec->changed = (uint64_t)sqlite3_column_int64(s, COL_CHANGED);
	r = store_read_texts(s, rec, device_texts, ARRAY_SIZE(device_texts));
	if (r < 0)
		return r;
	if (device_state_from_name(state, &rec->state) < 0)
		return store_bad_value(st, "device state", state);
	return 0;
}

static void device_release(void *rec)
{
	device_record_release(rec);
}

static const struct store_row_type device_rows = {
	.size = sizeof(struct device_record),
	.read = device_read,
	.release = device_release,
};

int store_device_get(struct store *st, const char *name, struct device_record *ret)
{
	sqlite3_stmt *s = st->stmt[STMT_DEVICE_GET];
	struct device_record rec = { 0 };
	int r;

	if (!name)
		return -EINVAL;
	if (sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC))
		return store_fail(st, s, "read a device");
	r = store_row(st, s, "read a device");
	if (r < 0)
		return r;
	r = device_read(st, s, &rec);
	store_reset(s);
	if (r < 0) {
		device_record_release(&rec);
		return r;
	}
	*ret = rec;
	return 0;
}

int store_device_put(struct store *st, const struct device_record *rec)
{
	sqlite3_stmt *s = st->stmt[STMT_DEVICE_PUT];

	if (!rec->name || (unsigned)rec->state > DEVICE_STATE_BAD)
		return -EINVAL;
	if (sqlite3_bind_text(s, 1, rec->name, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 2, device_state_name(rec->state), -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, rec->reason, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 4, rec->holder, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 5, (int64_t)rec->hold_until) ||
	    sqlite3_bind_int64(s, 6, rec->job_id) ||
	    sqlite3_bind_int64(s, 7, (int64_t)rec->changed))
		return store_fail(st, s, "write a device");
	return store_run(st, s, "write a device");
}

int store_device_list(struct store *st, int (*cb)(const struct device_record *rec, void *ud),
		      void *ud)
{
	struct store_rows rows = { .type = &device_rows };
	size_t i;
	int r;

	r = store_rows_read(st, st->stmt[STMT_DEVICE_LIST], "list devices", &rows);
	for (i = 0; r >= 0 && i < rows.n; i++)
		r = cb(store_rows_at(&rows, i), ud);
	store_rows_release(&rows);
	return r < 0 ? r : 0;
}
