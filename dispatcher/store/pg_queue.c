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
 * The winner is locked FOR NO KEY UPDATE (what the UPDATE takes anyway), so
 * that a row another transaction only references (an event or a result of
 * the job being inserted: a foreign key's FOR KEY SHARE) does not make the
 * claim pass it by.  A row another transaction does lock (another host's
 * claim, a write to the job) is skipped; the claim then says so
 * (STORE_CLAIMED_CONTENDED) when an entry it could take is there but was
 * skipped, and the board claims again a moment later: no NOTIFY comes for an
 * entry that was already queued, and a board that parked would wait for ever.
 *
 * The claim is one batch of the pipeline (one transaction) and completes
 * from the connection's callbacks, never waiting in the loop: its first
 * statement takes the winner (the first job or reservation of either
 * queue, in store.h's order, in data-modifying CTEs), the next two read
 * back what runs or is active on the board since the claim's time.  When
 * the answer is lost with the connection, the claim may have committed:
 * its time is kept "in doubt" for the board, and the board's next claim
 * (the scheduler claims again) takes nothing new while what a claim in
 * doubt took is there, and reads that back instead.  Without a loop
 * (tools, unit tests) pg_claim() waits for its answer.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define FITS_TAGS(table) " AND COALESCE(" table ".tags, '[]')::jsonb <@ COALESCE($3, '[]')::jsonb"
#define QUEUED_JOBS "j.state = 'queued' AND NOT j.session AND j.device_type = r.device_type"
#define WAITING "o.state = 'waiting' AND o.device_type = r.device_type"

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
static const char sql_job_position[] =
	"SELECT 1"
	" + (SELECT count(*) FROM jobs o WHERE o.state = 'queued' AND NOT o.session"
	"    AND o.device_type = j.device_type AND (o.priority > j.priority"
	"    OR (o.priority = j.priority AND (o.submitted, o.id) < (j.submitted, j.id))))"
	" + (SELECT count(*) FROM reservations o WHERE o.state = 'waiting'"
	"    AND o.device_type = j.device_type AND (o.priority > j.priority"
	"    OR (o.priority = j.priority AND o.submitted < j.submitted)))"
	" FROM jobs j WHERE j.id = $1 AND j.state = 'queued' AND NOT j.session";
static const char sql_summary[] =
	"SELECT t, sum(jn), min(jo), sum(rn), min(ro) FROM ("
	" SELECT device_type AS t, count(*) AS jn, min(submitted) AS jo, 0::bigint AS rn,"
	"  NULL::bigint AS ro FROM jobs WHERE state = 'queued' AND NOT session GROUP BY device_type"
	" UNION ALL SELECT device_type, 0, NULL, count(*), min(submitted) FROM reservations"
	"  WHERE state = 'waiting' GROUP BY device_type"
	") q GROUP BY t ORDER BY t";

/* The claim ($1 type, $2 board, $3 tags, $4 lone, $5 when, $6 host, $7 the whens of
 * this board's claims in doubt and $5): nothing new while one of them is there. */
#define IN_DOUBT(table) table ".device = $2 AND " table ".started = ANY($7::bigint[])"
#define CLAIMABLE_JOB                                                                    \
	"state = 'queued' AND NOT session AND device_type = $1"                           \
	" AND (avoid IS NULL OR avoid <> $2 OR $4::boolean)" FITS_TAGS("jobs")
#define CLAIMABLE_RESERVATION                                                            \
	"state = 'waiting' AND device_type = $1 AND (board IS NULL OR board = $2)"        \
	FITS_TAGS("reservations")
static const char sql_claim[] =
	"WITH orphan AS (SELECT 1 FROM jobs WHERE jobs.state = 'running' AND " IN_DOUBT("jobs")
	"  UNION ALL SELECT 1 FROM reservations WHERE reservations.state = 'active' AND "
	IN_DOUBT("reservations") "),"
	" j AS (SELECT id, priority, submitted FROM jobs WHERE " CLAIMABLE_JOB
	"  AND NOT EXISTS (SELECT 1 FROM orphan)"
	"  ORDER BY priority DESC, submitted, id LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED),"
	" r AS (SELECT id, priority, submitted FROM reservations WHERE " CLAIMABLE_RESERVATION
	"  AND NOT EXISTS (SELECT 1 FROM orphan)"
	"  ORDER BY priority DESC, submitted, id LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED),"
	" pick AS (SELECT (SELECT id FROM j) AS job, (SELECT id FROM r) AS res,"
	"  NOT EXISTS (SELECT 1 FROM r) OR EXISTS (SELECT 1 FROM j, r WHERE j.priority > r.priority"
	"  OR (j.priority = r.priority AND j.submitted <= r.submitted)) AS job_first),"
	" tr AS (UPDATE reservations SET state = 'active', device = $2, started = $5::bigint,"
	"  until = $5::bigint + duration WHERE id = (SELECT res FROM pick WHERE NOT job_first)"
	"  RETURNING id),"
	" tj AS (UPDATE jobs SET state = 'running', device = $2, started = $5::bigint, host = $6"
	"  WHERE id = (SELECT job FROM pick WHERE job_first) RETURNING id)"
	/* took nothing although an entry is there: it was locked, skipped */
	" SELECT NOT EXISTS (SELECT 1 FROM tj) AND NOT EXISTS (SELECT 1 FROM tr)"
	"  AND NOT EXISTS (SELECT 1 FROM orphan)"
	"  AND (EXISTS (SELECT 1 FROM jobs WHERE " CLAIMABLE_JOB ")"
	"  OR EXISTS (SELECT 1 FROM reservations WHERE " CLAIMABLE_RESERVATION "))";
/*
 * what the claim (or one in doubt) took: $1 board, $2 host, $3 the whens
 * (reservations: $2); a job with the number of its last event, for the
 * events this host adds (the job may have been queued by another host)
 */
static const char sql_claimed_job[] =
	"SELECT " PG_JOB_COLUMNS ", (SELECT COALESCE(MAX(seq), 0) FROM events e"
	" WHERE e.job_id = jobs.id) FROM jobs WHERE state = 'running' AND device = $1"
	" AND host = $2 AND started = ANY($3::bigint[]) ORDER BY started, id LIMIT 1";
static const char sql_claimed_reservation[] =
	"SELECT " PG_RESERVATION_COLUMNS " FROM reservations WHERE state = 'active'"
	" AND device = $1 AND started = ANY($2::bigint[]) ORDER BY started, id LIMIT 1";

/* A claim on its way: three commands of one batch, completed by the last. */
struct pg_claim {
	struct pg_store *ps;
	store_claim_fn done;
	void *userdata;
	bool forgotten;		/* store_forget(): done is not called */
	bool *finished;		/* without a loop: the waiting pg_claim()'s flag */
	char *board;
	int64_t when;
	int err;
	bool contended;		/* took nothing, passed a locked entry by */
	unsigned refs;		/* its commands not completed yet */
	int64_t last_seq;	/* the number of the claimed job's last event */
	struct store_claimed c;
	struct pg_claim *next;	/* ps->claims */
};

/* The claims of a board whose answer was lost: their whens. */
struct pg_doubt {
	char *board;
	int64_t when[PG_CLAIM_DOUBTS];
	unsigned n;
	struct pg_doubt *next;
};

static struct pg_doubt *doubt_of(struct pg_store *ps, const char *board)
{
	struct pg_doubt *d;

	for (d = ps->doubts; d; d = d->next)
		if (!strcmp(d->board, board))
			return d;
	return NULL;
}

/* A claim's outcome is unknown (its connection went): the next claim of its board looks. */
static void doubt_add(struct pg_store *ps, const char *board, int64_t when)
{
	struct pg_doubt *d = doubt_of(ps, board);

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d || !(d->board = strdup(board))) {
			free(d);
			log_error("board '%s': a claim in doubt is forgotten (out of memory)", board);
			return;
		}
		d->next = ps->doubts;
		ps->doubts = d;
	}
	if (d->n == PG_CLAIM_DOUBTS)
		memmove(d->when, d->when + 1, --d->n * sizeof(d->when[0]));
	d->when[d->n++] = when;
}

/* The board's claim was answered: whatever its claims in doubt took, it was told. */
static void doubt_clear(struct pg_store *ps, const char *board)
{
	struct pg_doubt **pp, *d;

	for (pp = &ps->doubts; (d = *pp); pp = &d->next) {
		if (!strcmp(d->board, board)) {
			*pp = d->next;
			free(d->board);
			free(d);
			return;
		}
	}
}

void pg_claims_free(struct pg_store *ps)
{
	struct pg_doubt *d;

	while ((d = ps->doubts)) {
		ps->doubts = d->next;
		free(d->board);
		free(d);
	}
}

/* "{when,doubts...}" of @board's claim at @when. */
static void whens_text(struct pg_store *ps, const char *board, int64_t when, char *buf,
		       size_t len)
{
	struct pg_doubt *d = doubt_of(ps, board);
	size_t off;
	unsigned i;

	off = (size_t)snprintf(buf, len, "{%" PRId64, when);
	for (i = 0; d && i < d->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, ",%" PRId64, d->when[i]);
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

static void claim_unlink(struct pg_claim *cl)
{
	struct pg_claim **pp;

	for (pp = &cl->ps->claims; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			return;
		}
	}
}

/* An error of one of the claim's commands: the first that is not "an earlier one failed". */
static void claim_error(struct pg_claim *cl, int err, const char *msg)
{
	if (!err || (cl->err && cl->err != -ECANCELED))
		return;
	cl->err = err;
	if (err != -ENOTCONN && err != -ECANCELED)
		log_error("cannot claim from the queue: %s", msg ? msg : strerror(-err));
}

static void claim_end(struct pg_claim *cl);

/* One of the claim's commands completed; the last ends the claim. */
static void claim_put(struct pg_claim *cl)
{
	if (!--cl->refs)
		claim_end(cl);
}

static void taken(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_claim *cl = userdata;

	claim_error(cl, err, msg);
	if (!err && PQntuples(res))
		cl->contended = pg_bool(res, 0, 0);
	claim_put(cl);
}

/* A read-back's answer: what runs (or is active) on the board, unless something was read. */
static void read_claimed(struct pg_claim *cl, int err, PGresult *res, const char *msg,
			 const struct pg_reader *reader, void *rec, enum store_claimed_kind kind)
{
	struct pg_one_read o = { reader, rec };
	int r;

	claim_error(cl, err, msg);
	if (!cl->err && cl->c.kind == STORE_CLAIMED_NONE && PQntuples(res)) {
		r = pg_read_one(res, &o);
		if (r < 0)
			claim_error(cl, r, NULL);
		else
			cl->c.kind = kind;
	}
	claim_put(cl);
}

static void read_claimed_job(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_claim *cl = userdata;

	if (!err && PQntuples(res))	/* its last event: the last column */
		cl->last_seq = pg_int(res, 0, PQnfields(res) - 1);
	read_claimed(cl, err, res, msg, &pg_job_reader, &cl->c.job, STORE_CLAIMED_JOB);
}

/* The last command of the batch: its sync says whether all of it committed. */
static void read_claimed_reservation(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_claim *cl = userdata;

	read_claimed(cl, err, res, msg, &pg_reservation_reader, &cl->c.reservation,
		     STORE_CLAIMED_RESERVATION);
}

/* Every command answered (the sync included): tell the scheduler, unless it went. */
static void claim_end(struct pg_claim *cl)
{
	if (cl->err == -ENOTCONN || cl->err == -ECANCELED || cl->err == -EIO ||
	    cl->err == -ENOMEM)
		doubt_add(cl->ps, cl->board, cl->when);	/* it may have committed */
	else if (!cl->err)
		doubt_clear(cl->ps, cl->board);
	if (cl->err)
		cl->c.kind = STORE_CLAIMED_NONE;
	else if (cl->c.kind == STORE_CLAIMED_NONE && cl->contended)
		cl->c.kind = STORE_CLAIMED_CONTENDED;
	/* the job runs here now: its number kept until it ends here (a claim lost: none) */
	if (cl->c.kind == STORE_CLAIMED_JOB)
		pg_event_seq_live(cl->ps, cl->c.job.id, cl->last_seq);
	claim_unlink(cl);
	if (cl->finished)
		*cl->finished = true;
	if (!cl->forgotten)
		cl->done(cl->err, cl->err ? NULL : &cl->c, cl->userdata);
	job_record_release(&cl->c.job);
	reservation_record_release(&cl->c.reservation);
	free(cl->board);
	free(cl);
}

/* Queue the claim's batch; its last completion ends @cl (at once when out of memory). */
static void claim_send(struct pg_store *ps, struct pg_claim *cl, const struct store_claim_req *req)
{
	struct pg_conn *conn = req->after_writes || !ps->claims_conn ? ps->conn : ps->claims_conn;
	char whens[PG_CLAIM_DOUBTS * 24 + 32];
	struct pg_args a = { 0 }, b = { 0 };

	whens_text(ps, req->board, cl->when, whens, sizeof(whens));
	pg_arg_text(&a, req->device_type);
	pg_arg_text(&a, req->board);
	pg_arg_text(&a, req->tags);
	pg_arg_bool(&a, req->lone);
	pg_arg_int(&a, cl->when);
	pg_arg_text(&a, ps->host);
	pg_arg_text(&a, whens);
	pg_arg_text(&b, req->board);
	pg_arg_text(&b, ps->host);
	pg_arg_text(&b, whens);
	/* once a command is queued, the last completion ends the claim */
	/* this function's reference, and one per command (a lost connection completes them) */
	cl->refs = 4;
	if (pg_conn_send(conn, sql_claim, a.n, a.v, 0, taken, cl) < 0) {
		cl->refs -= 3;
		goto nomem;
	}
	if (pg_conn_send(conn, sql_claimed_job, b.n, b.v, 0, read_claimed_job, cl) < 0) {
		cl->refs -= 2;
		goto nomem;
	}
	b.n = 1;	/* the board, then the whens as $2 */
	pg_arg_text(&b, whens);
	if (pg_conn_send(conn, sql_claimed_reservation, b.n, b.v, PG_CMD_SYNC,
			 read_claimed_reservation, cl) < 0) {
		cl->refs--;
		goto nomem;
	}
	claim_put(cl);
	return;
nomem:
	/* a half batch: ended by a sync, it fails as a whole and counts as in doubt */
	claim_error(cl, -ENOMEM, NULL);
	pg_conn_sync(conn);
	claim_put(cl);
	return;
}

int pg_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
	     void *userdata)
{
	struct pg_store *ps = pg_of(st);
	struct pg_claim *cl;
	bool finished = false;
	int r;

	if (ps->fenced) {
		done(-EPERM, NULL, userdata);	/* reaped: the others run the queue */
		return 0;
	}
	/* writes of a group still open would commit with it; a database away: at once */
	if (ps->in_txn || (ps->loop && !pg_available_now(ps))) {
		if (!ps->in_txn)
			pg_conn_start(ps->conn);
		done(ps->in_txn ? -EBUSY : -ENOTCONN, NULL, userdata);
		return 0;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl || !(cl->board = strdup(req->board))) {
		free(cl);
		done(-ENOMEM, NULL, userdata);
		return 0;
	}
	cl->ps = ps;
	cl->done = done;
	cl->userdata = userdata;
	cl->when = (int64_t)req->when;
	cl->finished = ps->loop ? NULL : &finished;
	cl->next = ps->claims;
	ps->claims = cl;
	claim_send(ps, cl, req);	/* completes @cl, at once when out of memory */
	if (ps->loop || finished)
		return 0;
	r = pg_conn_wait(ps->conn, &finished, pg_now() + ps->timeout, !ps->patient);
	if (r < 0 && !finished) {
		cl->forgotten = true;	/* completes into nothing, whenever */
		cl->finished = NULL;
		log_error("cannot claim from the queue: %s", strerror(-r));
		done(r, NULL, userdata);
	}
	return 0;
}

/* The place @sql gives entry @id: 0, -ENOENT (no row: not waiting) or an error. */
static int read_position(struct store *st, const char *sql, int64_t id, int64_t *ret)
{
	struct pg_args a = { 0 };
	int64_t pos = 0;
	int r;

	pg_arg_int(&a, id);
	r = pg_call(pg_of(st), "find a place in the queue", sql, &a, pg_read_int, &pos);
	if (r < 0)
		return r;
	if (!pos)
		return -ENOENT;
	*ret = pos;
	return 0;
}

int pg_queue_position(struct store *st, int64_t id, int64_t *ret)
{
	return read_position(st, sql_position, id, ret);
}

int pg_job_position(struct store *st, int64_t id, int64_t *ret)
{
	return read_position(st, sql_job_position, id, ret);
}

static int queue_read(PGresult *res, int row, void *p)
{
	static const struct pg_text texts[] = { { 0, offsetof(struct queue_record, device_type) } };
	struct queue_record *rec = p;

	rec->queued = pg_int(res, row, 1);
	rec->oldest = (uint64_t)pg_int(res, row, 2);
	rec->reservations = pg_int(res, row, 3);
	rec->oldest_reservation = (uint64_t)pg_int(res, row, 4);
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
	return pg_writer_sync(pg_of(st), done, userdata);
}

void pg_forget(struct store *st, void *userdata)
{
	struct pg_claim *cl;

	for (cl = pg_of(st)->claims; cl; cl = cl->next)
		if (cl->userdata == userdata)
			cl->forgotten = true;
	pg_reads_forget(pg_of(st), userdata);
	pg_writer_forget(pg_of(st), userdata);
}
