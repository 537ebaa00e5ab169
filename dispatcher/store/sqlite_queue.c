// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sqlite_queue.c -- the queue through its indexes: a free board's claim, a
 * reservation's place, the counts per device type
 *
 * The queue of a device type is the queued jobs (not session jobs) and the
 * waiting reservations of that type, each table with a partial index in
 * queue order: (device_type, priority DESC, submitted, id) over the rows
 * still waiting.  A claim reads the first row of each index that the board
 * may take (tags, a board asked by name, a board to avoid) and takes the
 * earlier of the two; a position counts the rows before a reservation in
 * both indexes.  PostgreSQL runs the same statements, the claim's SELECTs
 * with FOR UPDATE SKIP LOCKED.
 */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Every tag of the entry is one of the board's (?3, a JSON array; NULL: none). */
#define FITS_TAGS(table)                                                                  \
	" AND NOT EXISTS (SELECT 1 FROM json_each(" table ".tags)"                       \
	" WHERE value NOT IN (SELECT value FROM json_each(?3)))"

/* The queued jobs and waiting reservations (o) of reservation r's device type. */
#define QUEUED_JOBS "jobs.state = 'queued' AND jobs.session = 0 AND jobs.device_type = r.device_type"
#define WAITING "o.state = 'waiting' AND o.device_type = r.device_type"

const struct sqlite_sql sqlite_queue_sql[] = {
	{ STMT_CLAIM_JOB,
	  "SELECT " JOB_COLUMNS " FROM jobs"
	  " WHERE state = 'queued' AND session = 0 AND device_type = ?1"
	  " AND (avoid IS NULL OR avoid != ?2 OR ?4)" FITS_TAGS("jobs")
	  " ORDER BY priority DESC, submitted, id LIMIT 1" },
	{ STMT_CLAIM_RESERVATION,
	  "SELECT " RESERVATION_COLUMNS " FROM reservations"
	  " WHERE state = 'waiting' AND device_type = ?1 AND (board IS NULL OR board = ?2)"
	  FITS_TAGS("reservations") " ORDER BY priority DESC, submitted, id LIMIT 1" },
	{ STMT_TAKE_JOB,
	  "UPDATE jobs SET state = 'running', device = ?2, started = ?3"
	  " WHERE id = ?1 AND state = 'queued'" },
	{ STMT_TAKE_RESERVATION,
	  "UPDATE reservations SET state = 'active', device = ?2, started = ?3,"
	  " until = ?3 + duration WHERE id = ?1 AND state = 'waiting'" },
	/* a job goes before a reservation submitted at the same time */
	{ STMT_QUEUE_POSITION,
	  "SELECT 1"
	  " + (SELECT count(*) FROM jobs WHERE " QUEUED_JOBS " AND jobs.priority > r.priority)"
	  " + (SELECT count(*) FROM jobs WHERE " QUEUED_JOBS " AND jobs.priority = r.priority"
	  "    AND jobs.submitted <= r.submitted)"
	  " + (SELECT count(*) FROM reservations o WHERE " WAITING " AND o.priority > r.priority)"
	  " + (SELECT count(*) FROM reservations o WHERE " WAITING " AND o.priority = r.priority"
	  "    AND (o.submitted, o.id) < (r.submitted, r.id))"
	  " FROM reservations r WHERE r.id = ?1 AND r.state = 'waiting'" },
	/* the kept counts of queued jobs, the (few) waiting reservations counted */
	/* a job: the order of jobs_claim (priority, submitted, id), then reservations */
	{ STMT_JOB_POSITION,
	  "SELECT 1"
	  " + (SELECT count(*) FROM jobs o WHERE o.state = 'queued' AND o.session = 0"
	  "    AND o.device_type = j.device_type AND (o.priority > j.priority"
	  "    OR (o.priority = j.priority AND (o.submitted, o.id) < (j.submitted, j.id))))"
	  " + (SELECT count(*) FROM reservations o WHERE o.state = 'waiting'"
	  "    AND o.device_type = j.device_type AND (o.priority > j.priority"
	  "    OR (o.priority = j.priority AND o.submitted < j.submitted)))"
	  " FROM jobs j WHERE j.id = ?1 AND j.state = 'queued' AND j.session = 0" },
	{ STMT_QUEUE_SUMMARY,
	  "SELECT t, sum(jn), min(jo), sum(rn), min(ro) FROM ("
	  " SELECT c.device_type AS t, c.n AS jn, (SELECT min(submitted) FROM jobs"
	  "  WHERE state = 'queued' AND session = 0 AND jobs.device_type = c.device_type) AS jo,"
	  "  0 AS rn, NULL AS ro FROM job_counts c WHERE c.state = 'queued' AND c.n > 0"
	  " UNION ALL SELECT device_type, 0, NULL, count(*), min(submitted) FROM reservations"
	  "  WHERE state = 'waiting' GROUP BY device_type"
	  ") GROUP BY t ORDER BY t" },
	{ STMT_COUNT_STATE, "SELECT coalesce(sum(n), 0) FROM job_counts WHERE state = ?1" },
	{ STMT_COUNT_STATE_TYPE,
	  "SELECT coalesce(sum(n), 0) FROM job_counts WHERE state = ?1 AND device_type = ?2" },
	{ STMT_COUNT_TYPE, "SELECT coalesce(sum(n), 0) FROM job_counts WHERE device_type = ?2" },
	{ STMT_COUNT_ALL, "SELECT coalesce(sum(n), 0) FROM job_counts" },
	{ 0, NULL },
};

static const struct sqlite_reader job_reader = { &store_job_rows, sqlite_job_read };
static const struct sqlite_reader reservation_reader = {
	&store_reservation_rows, sqlite_reservation_read
};

/* The first entry of one table that the board of @req may take: 0, -ENOENT or an error. */
static int first_fit(struct sqlite_store *sq, enum sqlite_stmt id,
		     const struct sqlite_reader *reader, const struct store_claim_req *req,
		     void *ret)
{
	sqlite3_stmt *s = sq->stmt[id];

	if (sqlite3_bind_text(s, 1, req->device_type, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 2, req->board, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, req->tags, -1, SQLITE_STATIC) ||
	    (id == STMT_CLAIM_JOB && sqlite3_bind_int(s, 4, req->lone)))
		return sqlite_fail(sq, s, "claim from the queue");
	return sqlite_read_one(sq, s, "claim from the queue", reader, ret);
}

/* Mark entry @id (of @stmt's table) taken by the board of @req. */
static int take(struct sqlite_store *sq, enum sqlite_stmt stmt, int64_t id,
		const struct store_claim_req *req)
{
	sqlite3_stmt *s = sq->stmt[stmt];

	if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_text(s, 2, req->board, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 3, (int64_t)req->when))
		return sqlite_fail(sq, s, "claim from the queue");
	return sqlite_update(sq, s, "claim from the queue");
}

/* Queue order between the first job and the first reservation: a job first on a tie. */
static bool job_first(const struct job_record *j, const struct reservation_record *r)
{
	if (j->priority != r->priority)
		return j->priority > r->priority;
	return j->submitted <= r->submitted;
}

static int claim_in(struct sqlite_store *sq, const struct store_claim_req *req,
		    struct store_claimed *c)
{
	int rj, rr;

	rj = first_fit(sq, STMT_CLAIM_JOB, &job_reader, req, &c->job);
	if (rj < 0 && rj != -ENOENT)
		return rj;
	rr = first_fit(sq, STMT_CLAIM_RESERVATION, &reservation_reader, req, &c->reservation);
	if (rr < 0 && rr != -ENOENT)
		return rr;
	if (!rj && (rr || job_first(&c->job, &c->reservation))) {
		c->kind = STORE_CLAIMED_JOB;
		c->job.state = JOB_STATE_RUNNING;
		c->job.started = req->when;
		free(c->job.device);
		c->job.device = strdup(req->board);
		return c->job.device ? take(sq, STMT_TAKE_JOB, c->job.id, req) : -ENOMEM;
	}
	if (!rr) {
		c->kind = STORE_CLAIMED_RESERVATION;
		c->reservation.state = RESERVATION_ACTIVE;
		c->reservation.started = req->when;
		c->reservation.until = req->when + c->reservation.duration;
		free(c->reservation.device);
		c->reservation.device = strdup(req->board);
		return c->reservation.device ?
			       take(sq, STMT_TAKE_RESERVATION, c->reservation.id, req) : -ENOMEM;
	}
	return 0;
}

int sqlite_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
		 void *userdata)
{
	struct sqlite_store *sq = sqlite_of(st);
	struct store_claimed c = { .kind = STORE_CLAIMED_NONE };
	int r;

	sqlite_write(sq);
	r = sqlite_savepoint_begin(sq);
	if (!r)
		r = sqlite_savepoint_end(sq, claim_in(sq, req, &c));
	/*
	 * Told, the claim must hold: a batch rolled back later (its commit
	 * failed: a full disk) would free the entry for another board's claim,
	 * and the job would run on both.
	 */
	if (r >= 0)
		r = sqlite_commit_batch(sq);
	done(r, r < 0 ? NULL : &c, userdata);
	job_record_release(&c.job);
	reservation_record_release(&c.reservation);
	return 0;
}

/* The place statement @stmt gives entry @id: 0, -ENOENT (not waiting) or an error. */
static int read_position(struct store *st, enum sqlite_stmt stmt, int64_t id, int64_t *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[stmt];

	if (sqlite3_bind_int64(s, 1, id))
		return sqlite_fail(sq, s, "find a place in the queue");
	return sqlite_read_int(sq, s, "find a place in the queue", ret);
}

int sqlite_queue_position(struct store *st, int64_t id, int64_t *ret)
{
	return read_position(st, STMT_QUEUE_POSITION, id, ret);
}

int sqlite_job_position(struct store *st, int64_t id, int64_t *ret)
{
	return read_position(st, STMT_JOB_POSITION, id, ret);
}

static int queue_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	static const struct sqlite_text texts[] = {
		{ 0, offsetof(struct queue_record, device_type) },
	};
	struct queue_record *rec = p;

	rec->queued = sqlite3_column_int64(s, 1);
	rec->oldest = (uint64_t)sqlite3_column_int64(s, 2);
	rec->reservations = sqlite3_column_int64(s, 3);
	rec->oldest_reservation = (uint64_t)sqlite3_column_int64(s, 4);
	return sqlite_read_texts(s, rec, texts, ARRAY_SIZE(texts));
}

int sqlite_queue_summary(struct store *st, struct store_rows *rows)
{
	static const struct sqlite_reader reader = { &store_queue_rows, queue_read };
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_QUEUE_SUMMARY], "summarize the queue", &reader,
				rows);
}
