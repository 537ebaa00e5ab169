// SPDX-License-Identifier: GPL-2.0-or-later
/* pg_records.c -- devices, results and events on PostgreSQL */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- devices ---- */

#define DEVICE_COLUMNS "name, state, reason, holder, hold_until, job_id, changed"

enum { DCOL_NAME, DCOL_STATE, DCOL_REASON, DCOL_HOLDER, DCOL_HOLD_UNTIL, DCOL_JOB_ID,
       DCOL_CHANGED, DCOL_HOST, DCOL_DEVICE_TYPE };

static const struct pg_text device_texts[] = {
	{ DCOL_NAME, offsetof(struct device_record, name) },
	{ DCOL_REASON, offsetof(struct device_record, reason) },
	{ DCOL_HOLDER, offsetof(struct device_record, holder) },
	{ DCOL_HOST, offsetof(struct device_record, host) },
	{ DCOL_DEVICE_TYPE, offsetof(struct device_record, device_type) },
};

/*
 * job_id 0 ("no job") is stored as NULL; the registry's columns (host,
 * device_type: store_board_register()) are kept.
 */
static const char sql_device_get[] =
	"SELECT " DEVICE_COLUMNS ", host, device_type FROM devices WHERE name = $1";
static const char sql_device_put[] =
	"INSERT INTO devices (" DEVICE_COLUMNS ")"
	" VALUES ($1, $2, $3, $4, $5, NULLIF($6, 0), $7)"
	" ON CONFLICT (name) DO UPDATE SET state = excluded.state, reason = excluded.reason,"
	" holder = excluded.holder, hold_until = excluded.hold_until,"
	" job_id = excluded.job_id, changed = excluded.changed";
static const char sql_device_list[] =
	"SELECT " DEVICE_COLUMNS ", host, device_type FROM devices ORDER BY name";

static int device_read(PGresult *res, int row, void *p)
{
	const char *state = pg_value(res, row, DCOL_STATE);
	struct device_record *rec = p;
	int r;

	rec->hold_until = (uint64_t)pg_int(res, row, DCOL_HOLD_UNTIL);
	rec->job_id = pg_int(res, row, DCOL_JOB_ID);
	rec->changed = (uint64_t)pg_int(res, row, DCOL_CHANGED);
	r = pg_read_texts(res, row, rec, device_texts, ARRAY_SIZE(device_texts));
	if (r < 0)
		return r;
	if (device_state_from_name(state, &rec->state) < 0)
		return pg_bad_value("device state", state);
	return 0;
}

static const struct pg_reader device_reader = { &store_device_rows, device_read };

int pg_device_get(struct store *st, const char *name, struct device_record *ret)
{
	struct pg_args a = { 0 };

	pg_arg_text(&a, name);
	return pg_get(pg_of(st), "read a device", sql_device_get, &a, &device_reader, ret);
}

int pg_device_put(struct store *st, const struct device_record *rec)
{
	struct pg_args a = { 0 };

	pg_arg_text(&a, rec->name);
	pg_arg_text(&a, device_state_name(rec->state));
	pg_arg_text(&a, rec->reason);
	pg_arg_text(&a, rec->holder);
	pg_arg_int(&a, (int64_t)rec->hold_until);
	pg_arg_int(&a, rec->job_id);
	pg_arg_int(&a, (int64_t)rec->changed);
	return pg_write(pg_of(st), "write a device", sql_device_put, &a, NULL, NULL);
}

int pg_device_list(struct store *st, struct store_rows *rows)
{
	return pg_list(pg_of(st), "list devices", sql_device_list, NULL, &device_reader, rows);
}

/* ---- results ---- */

#define RESULT_COLUMNS \
	"id, job_id, suite, name, result, measurement, units, log_start, log_end, extra, created"

enum { RCOL_ID, RCOL_JOB_ID, RCOL_SUITE, RCOL_NAME, RCOL_RESULT, RCOL_MEASUREMENT, RCOL_UNITS,
       RCOL_LOG_START, RCOL_LOG_END, RCOL_EXTRA, RCOL_CREATED };

#define TEXT(c, field) { c, offsetof(struct result_record, field) }
static const struct pg_text result_texts[] = {
	TEXT(RCOL_SUITE, suite),
	TEXT(RCOL_NAME, name),
	TEXT(RCOL_RESULT, result),
	TEXT(RCOL_UNITS, units),
	TEXT(RCOL_EXTRA, extra),
};
#undef TEXT

/* A result without a measurement has measurement NULL. */
/*
 * A result or an event of a job that is not there (any more) is not
 * inserted: no error, which would drop the writes grouped with it
 * (pg_writer.c); without a loop the caller gets -ENOENT (no row returned).
 */
static const char sql_result_add[] =
	"INSERT INTO results (job_id, suite, name, result, measurement, units, log_start,"
	" log_end, extra, created, id) SELECT $1::bigint, $2::text, $3::text, $4::text,"
	" $5::double precision, $6::text, $7::bigint, $8::bigint, $9::text, $10::bigint,"
	" COALESCE($11::bigint, nextval('results_id_seq'))"
	" WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1::bigint) RETURNING id";
static const char sql_result_list[] =
	"SELECT " RESULT_COLUMNS " FROM results WHERE job_id = $1 ORDER BY id";

static int result_read(PGresult *res, int row, void *p)
{
	struct result_record *rec = p;

	rec->id = pg_int(res, row, RCOL_ID);
	rec->job_id = pg_int(res, row, RCOL_JOB_ID);
	rec->has_measurement = !pg_null(res, row, RCOL_MEASUREMENT);
	rec->measurement = pg_double(res, row, RCOL_MEASUREMENT);
	rec->log_start = pg_int(res, row, RCOL_LOG_START);
	rec->log_end = pg_int(res, row, RCOL_LOG_END);
	rec->created = (uint64_t)pg_int(res, row, RCOL_CREATED);
	return pg_read_texts(res, row, rec, result_texts, ARRAY_SIZE(result_texts));
}

static const struct pg_reader result_reader = { &store_result_rows, result_read };

int pg_result_insert(struct pg_store *ps, const struct result_record *rec, int64_t id,
		     int64_t *ret_id)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, rec->job_id);
	pg_arg_text(&a, rec->suite);
	pg_arg_text(&a, rec->name);
	pg_arg_text(&a, rec->result);
	if (rec->has_measurement)
		pg_arg_double(&a, rec->measurement);
	else
		pg_arg_text(&a, NULL);
	pg_arg_text(&a, rec->units);
	pg_arg_int(&a, rec->log_start);
	pg_arg_int(&a, rec->log_end);
	pg_arg_text(&a, rec->extra);
	pg_arg_int(&a, (int64_t)rec->created);
	if (id)
		pg_arg_int(&a, id);
	else
		pg_arg_text(&a, NULL);
	*ret_id = id;
	return pg_write(ps, "add a result", sql_result_add, &a, pg_read_int, ret_id);
}

/*
 * The database numbers a result as it commits: in the order the results were
 * added (one connection, the journal's order), with nothing to fetch ahead
 * and nothing to wait for, however many a console gives in one turn.  Written
 * behind (a loop), the caller gets 0 in rec->id: nobody needs it at once.
 */
int pg_result_add(struct store *st, struct result_record *rec)
{
	return pg_result_insert(pg_of(st), rec, 0, &rec->id);
}

int pg_result_list(struct store *st, int64_t job_id, struct store_rows *rows)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, job_id);
	return pg_list(pg_of(st), "list results", sql_result_list, &a, &result_reader, rows);
}

/* ---- events ---- */

enum { ECOL_SEQ, ECOL_JOB_ID, ECOL_TS, ECOL_KIND, ECOL_DATA };

static const struct pg_text event_texts[] = {
	{ ECOL_KIND, offsetof(struct event_record, kind) },
	{ ECOL_DATA, offsetof(struct event_record, data) },
};

/* $5: the number this host expects (or 0); another host's event before it moves it on */
static const char sql_event_add[] =
	"INSERT INTO events (job_id, seq, ts, kind, data) SELECT $1::bigint,"
	" GREATEST($5::bigint, COALESCE((SELECT MAX(seq) FROM events WHERE job_id = $1::bigint),"
	" 0) + 1), $2::bigint, $3::text, $4::text"
	" WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1::bigint) RETURNING seq";
static const char sql_event_list[] =
	"SELECT seq, job_id, ts, kind, data FROM events WHERE job_id = $1 AND seq > $2"
	" ORDER BY seq";

static int event_read(PGresult *res, int row, void *p)
{
	struct event_record *rec = p;

	rec->seq = pg_int(res, row, ECOL_SEQ);
	rec->job_id = pg_int(res, row, ECOL_JOB_ID);
	rec->ts = (uint64_t)pg_int(res, row, ECOL_TS);
	return pg_read_texts(res, row, rec, event_texts, ARRAY_SIZE(event_texts));
}

static const struct pg_reader event_reader = { &store_event_rows, event_read };

/*
 * The number of @job_id's next event, when events are written behind: the
 * job read by the current run of a read context (a cancel, events.c's read
 * of a job it has no number for) is the freshest, else the number kept
 * (pg_event_seqs.c).  None: -EAGAIN, never a read that waits in the loop.
 */
static int event_next(struct pg_store *ps, int64_t job_id, int64_t *ret)
{
	int64_t kept = pg_event_seq_next(ps, job_id), last = 0;

	if (!pg_job_read_seq(ps, job_id, &last)) {
		*ret = last + 1 > kept ? last + 1 : kept;
		return 0;
	}
	*ret = kept;
	return kept ? 0 : -EAGAIN;
}

int pg_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		 const char *data, int64_t *ret_seq)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };
	int64_t seq = 0;
	int r;

	if (pg_read_pending(st))	/* a run that must not act: refused as any write */
		return pg_read_writing(ps, "add an event");
	if (ps->fenced)		/* dropped as any write, but nobody must hear of it */
		return -ESTALE;
	if (pg_writing_behind(ps) && (r = event_next(ps, job_id, &seq)) < 0)
		return r;
	pg_arg_int(&a, job_id);
	pg_arg_int(&a, (int64_t)ts);
	pg_arg_text(&a, kind);
	pg_arg_text(&a, data);
	pg_arg_int(&a, seq);
	r = pg_write(ps, "add an event", sql_event_add, &a, pg_read_int, &seq);
	if (r < 0)
		return r;
	pg_event_seq_note(ps, job_id, seq);
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

int pg_event_list(struct store *st, int64_t job_id, int64_t after, struct store_rows *rows)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, job_id);
	pg_arg_int(&a, after);
	return pg_list(pg_of(st), "list events", sql_event_list, &a, &event_reader, rows);
}

/* ---- how far the backends' receivers acknowledged a job's events ---- */

/* a job that is not there is skipped (no error to drop the writes grouped with it) */
static const char sql_delivered_set[] =
	"INSERT INTO deliveries (job_id, backend, receiver, seq)"
	" SELECT $1::bigint, $2::text, $3::text, $4::bigint"
	" WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1::bigint)"
	" ON CONFLICT (job_id, backend, receiver)"
	" DO UPDATE SET seq = GREATEST(deliveries.seq, excluded.seq)";
static const char sql_delivered_get[] =
	"SELECT COALESCE((SELECT seq FROM deliveries WHERE job_id = $1 AND backend = $2"
	" AND receiver = $3), 0)";
static const char sql_delivered_list[] =
	"SELECT backend, receiver, job_id, seq FROM deliveries ORDER BY job_id, backend, receiver";

enum { DLCOL_BACKEND, DLCOL_RECEIVER, DLCOL_JOB_ID, DLCOL_SEQ };

static const struct pg_text delivery_texts[] = {
	{ DLCOL_BACKEND, offsetof(struct delivery_record, backend) },
	{ DLCOL_RECEIVER, offsetof(struct delivery_record, receiver) },
};

static int delivery_read(PGresult *res, int row, void *p)
{
	struct delivery_record *rec = p;

	rec->job_id = pg_int(res, row, DLCOL_JOB_ID);
	rec->seq = pg_int(res, row, DLCOL_SEQ);
	return pg_read_texts(res, row, rec, delivery_texts, ARRAY_SIZE(delivery_texts));
}

static const struct pg_reader delivery_reader = { &store_delivery_rows, delivery_read };

int pg_delivered_set(struct store *st, const char *backend, const char *receiver,
		     int64_t job_id, int64_t seq)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, job_id);
	pg_arg_text(&a, backend);
	pg_arg_text(&a, receiver);
	pg_arg_int(&a, seq);
	return pg_write(pg_of(st), "note a delivery", sql_delivered_set, &a, NULL, NULL);
}

int pg_delivered_get(struct store *st, const char *backend, const char *receiver,
		     int64_t job_id, int64_t *ret)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, job_id);
	pg_arg_text(&a, backend);
	pg_arg_text(&a, receiver);
	return pg_call(pg_of(st), "read a delivery", sql_delivered_get, &a, pg_read_int, ret);
}

int pg_delivered_list(struct store *st, struct store_rows *rows)
{
	return pg_list(pg_of(st), "list deliveries", sql_delivered_list, NULL, &delivery_reader,
		       rows);
}
