// SPDX-License-Identifier: GPL-2.0-or-later
/* pg_reservations.c -- the reservations table on PostgreSQL */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RESERVATION_COLUMNS PG_RESERVATION_COLUMNS

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
static const struct pg_text reservation_texts[] = {
	TEXT(COL_HOLDER, holder),
	TEXT(COL_BOARD, board),
	TEXT(COL_DEVICE_TYPE, device_type),
	TEXT(COL_TAGS, tags),
	TEXT(COL_DEVICE, device),
	TEXT(COL_END_REASON, end_reason),
};
#undef TEXT

static const char sql_insert[] =
	"INSERT INTO reservations (holder, board, device_type, tags, priority, duration,"
	" submitted, state, id) VALUES ($1, $2, $3, $4, $5, $6, $7, 'waiting',"
	" COALESCE($8::bigint, nextval('reservations_id_seq'))) RETURNING id";
/* the other hosts' free boards claim it (PG_CHANNEL_QUEUE) */
static const char sql_get[] = "SELECT " RESERVATION_COLUMNS " FROM reservations WHERE id = $1";
static const char sql_waiting[] =
	"SELECT " RESERVATION_COLUMNS " FROM reservations WHERE state = 'waiting'"
	" ORDER BY priority DESC, submitted, id";
static const char sql_active[] =
	"SELECT " RESERVATION_COLUMNS " FROM reservations WHERE state = 'active' ORDER BY id";
static const char sql_recent[] =
	"SELECT " RESERVATION_COLUMNS " FROM reservations ORDER BY id DESC LIMIT $1";
static const char sql_activate[] =
	"UPDATE reservations SET state = 'active', device = $2, started = $3, until = $4"
	" WHERE id = $1 AND state = 'waiting'";
static const char sql_renew[] =
	"UPDATE reservations SET until = $2 WHERE id = $1 AND state = 'active'";
static const char sql_end[] =
	"UPDATE reservations SET state = 'ended', ended = $2, end_reason = $3"
	" WHERE id = $1 AND state != 'ended'";

static int reservation_read(PGresult *res, int row, void *p)
{
	const char *state = pg_value(res, row, COL_STATE);
	struct reservation_record *rec = p;

	rec->id = pg_int(res, row, COL_ID);
	rec->priority = (int)pg_int(res, row, COL_PRIORITY);
	rec->duration = (uint64_t)pg_int(res, row, COL_DURATION);
	rec->submitted = (uint64_t)pg_int(res, row, COL_SUBMITTED);
	rec->started = (uint64_t)pg_int(res, row, COL_STARTED);
	rec->until = (uint64_t)pg_int(res, row, COL_UNTIL);
	rec->ended = (uint64_t)pg_int(res, row, COL_ENDED);
	if (reservation_state_from_name(state, &rec->state) < 0)
		return pg_bad_value("reservation state", state);
	return pg_read_texts(res, row, rec, reservation_texts, ARRAY_SIZE(reservation_texts));
}

const struct pg_reader pg_reservation_reader = { &store_reservation_rows, reservation_read };
#define reservation_reader pg_reservation_reader

void pg_reservation_args(struct pg_args *a, const struct reservation_record *rec)
{
	pg_arg_text(a, rec->holder);
	pg_arg_text(a, rec->board);
	pg_arg_text(a, rec->device_type);
	pg_arg_text(a, rec->tags);
	pg_arg_int(a, rec->priority);
	pg_arg_int(a, (int64_t)rec->duration);
	pg_arg_int(a, (int64_t)rec->submitted);
}

int pg_reservation_insert(struct store *st, struct reservation_record *rec)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };
	char *payload;
	int64_t id = 0;
	int r;

	if (pg_writing_behind(ps) && (r = pg_ids_take(ps, &ps->reservation_ids, &id)) < 0)
		return r;
	pg_reservation_args(&a, rec);
	if (id)
		pg_arg_int(&a, id);
	else
		pg_arg_text(&a, NULL);
	payload = pg_queue_payload("reservation", id, rec->device_type, rec->tags, rec->board,
				   NULL);
	if (!payload)
		return -ENOMEM;
	r = pg_write_notify(ps, "insert a reservation", sql_insert, &a, pg_read_int, &id,
			    PG_SQL_NOTIFY_QUEUE, payload);
	free(payload);
	if (!r) {
		rec->id = id;
		rec->state = RESERVATION_WAITING;
	}
	return r;
}

int pg_reservation_get(struct store *st, int64_t id, struct reservation_record *ret)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	return pg_get(pg_of(st), "read a reservation", sql_get, &a, &reservation_reader, ret);
}

int pg_reservation_waiting(struct store *st, struct store_rows *rows)
{
	return pg_list(pg_of(st), "list waiting reservations", sql_waiting, NULL,
		       &reservation_reader, rows);
}

int pg_reservation_active(struct store *st, struct store_rows *rows)
{
	return pg_list(pg_of(st), "list active reservations", sql_active, NULL,
		       &reservation_reader, rows);
}

int pg_reservation_recent(struct store *st, unsigned limit, struct store_rows *rows)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, limit);
	return pg_list(pg_of(st), "list reservations", sql_recent, &a, &reservation_reader, rows);
}

int pg_reservation_activate(struct store *st, int64_t id, const char *device, uint64_t started,
			    uint64_t until)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_text(&a, device);
	pg_arg_int(&a, (int64_t)started);
	pg_arg_int(&a, (int64_t)until);
	return pg_write(pg_of(st), "activate a reservation", sql_activate, &a, pg_read_changed,
		       NULL);
}

int pg_reservation_renew(struct store *st, int64_t id, uint64_t until)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_int(&a, (int64_t)until);
	return pg_write(pg_of(st), "renew a reservation", sql_renew, &a, pg_read_changed, NULL);
}

int pg_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_int(&a, (int64_t)when);
	pg_arg_text(&a, reason);
	return pg_write(pg_of(st), "end a reservation", sql_end, &a, pg_read_changed, NULL);
}
