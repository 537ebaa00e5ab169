// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_queue.c -- the queue on PostgreSQL: a free board's claim, a
 * reservation's place, the queue per device type
 *
 * The statements of sqlite_queue.c, with the claim's SELECTs locking the
 * row they return and skipping rows another host's claim holds (FOR UPDATE
 * SKIP LOCKED), in one transaction with the UPDATE of the winner: two hosts
 * claiming at once take two entries, never one twice.  A board's tags are
 * the JSON array text of store.h; an entry fits when its tags are contained
 * in the board's (jsonb <@).
 *
 * For now the claim waits for its answer as pg_call() does, and completes
 * before pg_claim() returns; the completion shape (store_claim_fn) lets it
 * complete from the connection's callbacks later without a caller change.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FITS_TAGS(table) " AND COALESCE(" table ".tags, '[]')::jsonb <@ COALESCE($3, '[]')::jsonb"
#define QUEUED_JOBS "j.state = 'queued' AND NOT j.session AND j.device_type = r.device_type"
#define WAITING "o.state = 'waiting' AND o.device_type = r.device_type"

static const char sql_claim_job[] =
	"SELECT " PG_JOB_COLUMNS " FROM jobs"
	" WHERE state = 'queued' AND NOT session AND device_type = $1"
	" AND (avoid IS NULL OR avoid <> $2 OR $4)" FITS_TAGS("jobs")
	" ORDER BY priority DESC, submitted, id LIMIT 1 FOR UPDATE SKIP LOCKED";
static const char sql_claim_reservation[] =
	"SELECT " PG_RESERVATION_COLUMNS " FROM reservations"
	" WHERE state = 'waiting' AND device_type = $1 AND (board IS NULL OR board = $2)"
	FITS_TAGS("reservations")
	" ORDER BY priority DESC, submitted, id LIMIT 1 FOR UPDATE SKIP LOCKED";
static const char sql_take_job[] =
	"UPDATE jobs SET state = 'running', device = $2, started = $3, host = $4"
	" WHERE id = $1 AND state = 'queued'";
static const char sql_take_reservation[] =
	"UPDATE reservations SET state = 'active', device = $2, started = $3, until = $3 + duration"
	" WHERE id = $1 AND state = 'waiting'";
/* a job goes before a reservation submitted at the same time */
static const char sql_position[] =
	"SELECT 1"
	" + (SELECT count(*) FROM jobs j WHERE " QUEUED_JOBS " AND j.priority > r.priority)"
	" + (SELECT count(*) FROM jobs j WHERE " QUEUED_JOBS " AND j.priority = r.priority"
	"    AND j.submitted <= r.submitted)"
	" + (SELECT count(*) FROM reservations o WHERE " WAITING " AND o.priority > r.priority)"
	" + (SELECT count(*) FROM reservations o WHERE " WAITING " AND o.priority = r.priority"
	"    AND (o.submitted, o.id) < (r.submitted, r.id))"
	" FROM reservations r WHERE r.id = $1 AND r.state = 'waiting'";
static const char sql_summary[] =
	"SELECT device_type, count(*), min(submitted) FROM jobs WHERE state = 'queued'"
	" AND NOT session GROUP BY device_type ORDER BY device_type";

/* The first entry of one table the board of @req may take: 0, -ENOENT or an error. */
static int first_fit(struct pg_store *ps, const char *sql, const struct pg_reader *reader,
		     const struct store_claim_req *req, void *ret)
{
	struct pg_args a = { 0 };

	pg_arg_text(&a, req->device_type);
	pg_arg_text(&a, req->board);
	pg_arg_text(&a, req->tags);
	if (sql == sql_claim_job)
		pg_arg_bool(&a, req->lone);
	return pg_get(ps, "claim from the queue", sql, &a, reader, ret);
}

static int take(struct pg_store *ps, const char *sql, int64_t id,
		const struct store_claim_req *req)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_text(&a, req->board);
	pg_arg_int(&a, (int64_t)req->when);
	if (sql == sql_take_job)
		pg_arg_text(&a, ps->host);
	return pg_call(ps, "claim from the queue", sql, &a, pg_read_changed, NULL);
}

static bool job_first(const struct job_record *j, const struct reservation_record *r)
{
	if (j->priority != r->priority)
		return j->priority > r->priority;
	return j->submitted <= r->submitted;
}

static int claim_in(struct pg_store *ps, const struct store_claim_req *req,
		    struct store_claimed *c)
{
	int rj, rr;

	rj = first_fit(ps, sql_claim_job, &pg_job_reader, req, &c->job);
	if (rj < 0 && rj != -ENOENT)
		return rj;
	rr = first_fit(ps, sql_claim_reservation, &pg_reservation_reader, req, &c->reservation);
	if (rr < 0 && rr != -ENOENT)
		return rr;
	if (!rj && (rr || job_first(&c->job, &c->reservation))) {
		c->kind = STORE_CLAIMED_JOB;
		c->job.state = JOB_STATE_RUNNING;
		c->job.started = req->when;
		free(c->job.device);
		c->job.device = strdup(req->board);
		return c->job.device ? take(ps, sql_take_job, c->job.id, req) : -ENOMEM;
	}
	if (!rr) {
		c->kind = STORE_CLAIMED_RESERVATION;
		c->reservation.state = RESERVATION_ACTIVE;
		c->reservation.started = req->when;
		c->reservation.until = req->when + c->reservation.duration;
		free(c->reservation.device);
		c->reservation.device = strdup(req->board);
		return c->reservation.device ?
			       take(ps, sql_take_reservation, c->reservation.id, req) : -ENOMEM;
	}
	return 0;
}

int pg_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
	     void *userdata)
{
	struct pg_store *ps = pg_of(st);
	struct store_claimed c = { STORE_CLAIMED_NONE };
	bool in_txn = ps->in_txn;
	/* a transaction of its own, unless inside a real one (store_begin() without writing behind) */
	bool own = !in_txn || pg_writing_behind(ps);
	int r = 0;

	if (own) {
		ps->in_txn = true;
		r = pg_call(ps, "begin a claim", "BEGIN", NULL, NULL, NULL);
	}
	if (!r)
		r = claim_in(ps, req, &c);
	if (own) {
		ps->in_txn = in_txn;
		if (r >= 0)
			r = pg_call(ps, "commit a claim", "COMMIT", NULL, NULL, NULL);
		else
			pg_call(ps, "roll back a claim", "ROLLBACK", NULL, NULL, NULL);
	}
	done(r, r < 0 ? NULL : &c, userdata);
	job_record_release(&c.job);
	reservation_record_release(&c.reservation);
	return 0;
}

int pg_queue_position(struct store *st, int64_t id, int64_t *ret)
{
	struct pg_args a = { 0 };
	int64_t pos = 0;
	int r;

	pg_arg_int(&a, id);
	r = pg_call(pg_of(st), "find a place in the queue", sql_position, &a, pg_read_int, &pos);
	if (r < 0)
		return r;
	if (!pos)
		return -ENOENT;	/* no row: not waiting */
	*ret = pos;
	return 0;
}

static int queue_read(PGresult *res, int row, void *p)
{
	static const struct pg_text texts[] = { { 0, offsetof(struct queue_record, device_type) } };
	struct queue_record *rec = p;

	rec->queued = pg_int(res, row, 1);
	rec->oldest = (uint64_t)pg_int(res, row, 2);
	return pg_read_texts(res, row, rec, texts, ARRAY_SIZE(texts));
}

int pg_queue_summary(struct store *st, struct store_rows *rows)
{
	static const struct pg_reader reader = { &store_queue_rows, queue_read };

	return pg_list(pg_of(st), "summarize the queue", sql_summary, NULL, &reader, rows);
}

/*
 * A write returned once it was sent and waited for, or journaled locally
 * (pg_writer.c): as durable as this store makes it already.
 */
int pg_sync(struct store *st, store_done_fn done, void *userdata)
{
	return 0;
}

void pg_forget(struct store *st, void *userdata)
{
}
