// SPDX-License-Identifier: GPL-2.0-or-later
/* pg_jobs.c -- the jobs table on PostgreSQL: queue, lifecycle and outcome of every job */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOB_COLUMNS PG_JOB_COLUMNS

enum {
	COL_ID,
	COL_NAME,
	COL_DEVICE_TYPE,
	COL_TAGS,
	COL_PRIORITY,
	COL_SUBMITTED,
	COL_STARTED,
	COL_ENDED,
	COL_STATE,
	COL_HEALTH,
	COL_ERROR_TYPE,
	COL_ERROR_MSG,
	COL_DEVICE,
	COL_DEFINITION,
	COL_FORMAT,
	COL_FILENAME,
	COL_SUBMITTER,
	COL_ATTEMPT,
	COL_RETRIES_LEFT,
	COL_RECOVERED,
	COL_RESULTS_PASS,
	COL_RESULTS_FAIL,
	COL_RESULTS_SKIP,
	COL_RESULTS_UNKNOWN,
	COL_LAST_ERROR,
	COL_SESSION,
	COL_AVOID,
	COL_HOST,
	COL_LOG_REMOVED,
	COL_HISTORY_REMOVED,
	COL_LAST_SEQ,	/* sql_get, sql_queued and sql_running only */
};

#define TEXT(c, field) { c, offsetof(struct job_record, field) }
static const struct pg_text job_texts[] = {
	TEXT(COL_NAME, name),
	TEXT(COL_DEVICE_TYPE, device_type),
	TEXT(COL_TAGS, tags),
	TEXT(COL_ERROR_MSG, error_msg),
	TEXT(COL_DEVICE, device),
	TEXT(COL_DEFINITION, definition),
	TEXT(COL_FORMAT, format),
	TEXT(COL_FILENAME, filename),
	TEXT(COL_SUBMITTER, submitter),
	TEXT(COL_LAST_ERROR, last_error),
	TEXT(COL_AVOID, avoid),
	TEXT(COL_HOST, host),
};
#undef TEXT

/* The conditions of struct job_filter: $1 state, $2 device, $3 type, $4 submitter, $5 healths. */
#define JOB_MATCHES                                                                       \
	"($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR device = $2)"          \
	" AND ($3::text IS NULL OR device_type = $3) AND ($4::text IS NULL OR submitter = $4)" \
	" AND ($5::text IS NULL OR strpos($5, ',' || health || ',') > 0)"

static const char sql_insert[] =
	"INSERT INTO jobs (name, device_type, tags, priority, submitted, started, ended, state,"
	" health, error_type, error_msg, device, definition, format, filename, submitter,"
	" attempt, retries_left, recovered, last_error, session, id, avoid)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	" $18, $19, $20, $21, COALESCE($22::bigint, nextval('jobs_id_seq')), $23) RETURNING id";
/* the other hosts' free boards claim it (PG_CHANNEL_QUEUE) */
static const char sql_list[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE " JOB_MATCHES
	" AND ($6 = 0 OR id < $6) ORDER BY id DESC LIMIT $7 OFFSET $8";
/* the page just above a cursor, read upwards, handed over newest first */
static const char sql_list_after[] =
	"SELECT * FROM (SELECT " JOB_COLUMNS " FROM jobs WHERE " JOB_MATCHES
	" AND id > $6 ORDER BY id LIMIT $7 OFFSET $8) page ORDER BY id DESC";
static const char sql_count_matching[] = "SELECT count(*) FROM jobs WHERE " JOB_MATCHES;
/* with the number of each job's last event, for the events this host will add */
#define LAST_SEQ ", (SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.job_id = jobs.id)"
/* a job read before this host adds an event to it (a cancel) numbers that event */
static const char sql_get[] = "SELECT " JOB_COLUMNS LAST_SEQ " FROM jobs WHERE id = $1";
static const char sql_queued[] =
	"SELECT " JOB_COLUMNS LAST_SEQ " FROM jobs WHERE state = 'queued'"
	" ORDER BY priority DESC, submitted, id";
static const char sql_still_queued[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE id = ANY($1::bigint[]) AND state = 'queued'"
	" AND NOT session";
/* this host's: the others recover their own (or are reaped, pg_hosts.c) */
static const char sql_running[] =
	"SELECT " JOB_COLUMNS LAST_SEQ " FROM jobs WHERE state IN ('running', 'canceling')"
	" AND host = $1 ORDER BY id";
static const char sql_start[] =
	"UPDATE jobs SET state = 'running', device = $2, started = $3, host = $4 WHERE id = $1";
static const char sql_set_state[] = "UPDATE jobs SET state = $2 WHERE id = $1";
static const char sql_finish[] =
	"UPDATE jobs SET state = 'finished', health = $2, error_type = $3, error_msg = $4,"
	" ended = $5,"
	" results_pass = (SELECT count(*) FROM results WHERE job_id = $1 AND result = 'pass'),"
	" results_fail = (SELECT count(*) FROM results WHERE job_id = $1 AND result = 'fail'),"
	" results_skip = (SELECT count(*) FROM results WHERE job_id = $1 AND result = 'skip'),"
	" results_unknown = (SELECT count(*) FROM results WHERE job_id = $1"
	"  AND result NOT IN ('pass', 'fail', 'skip'))"
	" WHERE id = $1 AND (state NOT IN ('running', 'canceling') OR host IS NULL OR host = $6)";
/* one statement: the update and the abandoned attempt's results, atomically */
static const char sql_requeue[] =
	"WITH j AS (UPDATE jobs SET state = 'queued', attempt = attempt + 1, device = NULL,"
	" started = 0, ended = 0, health = 'unknown', error_type = 'none',"
	" last_error = COALESCE($3, error_msg, last_error), error_msg = NULL,"
	" retries_left = CASE WHEN $2 THEN retries_left ELSE GREATEST(retries_left - 1, 0) END,"
	" recovered = recovered OR $2, results_pass = 0, results_fail = 0, results_skip = 0,"
	" results_unknown = 0, avoid = CASE WHEN $2 THEN avoid ELSE device END"
	" WHERE id = $1 RETURNING id, device_type, tags, avoid, session),"
	" r AS (DELETE FROM results WHERE job_id IN (SELECT id FROM j)),"
	" n AS (SELECT pg_notify('" PG_CHANNEL_QUEUE "', json_build_object('job', id, 'type',"
	"  device_type, 'tags', tags, 'avoid', avoid)::text) FROM j WHERE NOT session)"
	" SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM n)";
static const char sql_count[] = "SELECT count(*) FROM jobs WHERE state = $1";
/* one statement, as SQLite's savepoint: the first removal of each kind is remembered */
static const char sql_prune[] =
	"WITH j AS (UPDATE jobs SET"
	" log_removed = CASE WHEN $2::bigint > 0 AND log_removed = 0 THEN $2::bigint"
	"  ELSE log_removed END,"
	" history_removed = CASE WHEN $3::bigint > 0 AND history_removed = 0 THEN $3::bigint"
	"  ELSE history_removed END"
	" WHERE id = $1 RETURNING id),"
	" r AS (DELETE FROM results WHERE $3::bigint > 0 AND job_id IN (SELECT id FROM j)),"
	" e AS (DELETE FROM events WHERE $3::bigint > 0 AND job_id IN (SELECT id FROM j)),"
	" d AS (DELETE FROM deliveries WHERE $3::bigint > 0 AND job_id IN (SELECT id FROM j))"
	" SELECT count(*) FROM j";

static int job_read_enums(PGresult *res, int row, struct job_record *rec)
{
	const char *state = pg_value(res, row, COL_STATE);
	const char *health = pg_value(res, row, COL_HEALTH);
	const char *type = pg_value(res, row, COL_ERROR_TYPE);

	if (job_state_from_name(state, &rec->state) < 0)
		return pg_bad_value("job state", state);
	if (job_health_from_name(health, &rec->health) < 0)
		return pg_bad_value("job health", health);
	if (error_type_from_name(type, &rec->error_type) < 0)
		return pg_bad_value("error type", type);
	return 0;
}

static int job_read(PGresult *res, int row, void *p)
{
	struct job_record *rec = p;

	rec->id = pg_int(res, row, COL_ID);
	rec->priority = (int)pg_int(res, row, COL_PRIORITY);
	rec->submitted = (uint64_t)pg_int(res, row, COL_SUBMITTED);
	rec->started = (uint64_t)pg_int(res, row, COL_STARTED);
	rec->ended = (uint64_t)pg_int(res, row, COL_ENDED);
	rec->attempt = (int)pg_int(res, row, COL_ATTEMPT);
	rec->retries_left = (int)pg_int(res, row, COL_RETRIES_LEFT);
	rec->recovered = pg_bool(res, row, COL_RECOVERED);
	rec->session = pg_bool(res, row, COL_SESSION);
	rec->results_pass = (int)pg_int(res, row, COL_RESULTS_PASS);
	rec->results_fail = (int)pg_int(res, row, COL_RESULTS_FAIL);
	rec->results_skip = (int)pg_int(res, row, COL_RESULTS_SKIP);
	rec->results_unknown = (int)pg_int(res, row, COL_RESULTS_UNKNOWN);
	rec->log_removed = (uint64_t)pg_int(res, row, COL_LOG_REMOVED);
	rec->history_removed = (uint64_t)pg_int(res, row, COL_HISTORY_REMOVED);
	if (job_read_enums(res, row, rec) < 0)
		return -EIO;
	return pg_read_texts(res, row, rec, job_texts, ARRAY_SIZE(job_texts));
}

const struct pg_reader pg_job_reader = { &store_job_rows, job_read };
#define job_reader pg_job_reader

void pg_job_args(struct pg_args *a, const struct job_record *rec, int attempt)
{
	pg_arg_text(a, rec->name);
	pg_arg_text(a, rec->device_type);
	pg_arg_text(a, rec->tags);
	pg_arg_int(a, rec->priority);
	pg_arg_int(a, (int64_t)rec->submitted);
	pg_arg_int(a, (int64_t)rec->started);
	pg_arg_int(a, (int64_t)rec->ended);
	pg_arg_text(a, job_state_name(rec->state));
	pg_arg_text(a, job_health_name(rec->health));
	pg_arg_text(a, error_type_name(rec->error_type));
	pg_arg_text(a, rec->error_msg);
	pg_arg_text(a, rec->device);
	pg_arg_text(a, rec->definition);
	pg_arg_text(a, rec->format);
	pg_arg_text(a, rec->filename);
	pg_arg_text(a, rec->submitter);
	pg_arg_int(a, attempt);
	pg_arg_int(a, rec->retries_left);
	pg_arg_bool(a, rec->recovered);
	pg_arg_text(a, rec->last_error);
	pg_arg_bool(a, rec->session);
}

int pg_job_insert(struct store *st, struct job_record *rec)
{
	int attempt = rec->attempt > 1 ? rec->attempt : 1;
	bool notify = rec->state == JOB_STATE_QUEUED && !rec->session;
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };
	char *payload = NULL;
	int64_t id = 0;
	int r;

	/* none left ahead: the request runs again once the refill is in (pg_ids_take()) */
	if (pg_writing_behind(ps) && (r = pg_ids_take(ps, &ps->job_ids, &id)) < 0)
		return r;
	/* without an id yet (no loop: nobody listens), the payload says only "plan again" */
	if (notify && !(payload = pg_queue_payload("job", id, rec->device_type, rec->tags, NULL,
						   rec->claimed_here_first ? ps->host : NULL)))
		return -ENOMEM;
	pg_job_args(&a, rec, attempt);
	if (id)
		pg_arg_int(&a, id);
	else
		pg_arg_text(&a, NULL);
	pg_arg_text(&a, rec->avoid);
	r = pg_write_notify(ps, "insert a job", sql_insert, &a, pg_read_int, &id,
			    notify ? PG_SQL_NOTIFY_QUEUE : NULL, payload);
	free(payload);
	if (r < 0)
		return r;
	rec->id = id;
	rec->attempt = attempt;
	pg_event_seq_note(ps, id, 0);
	return 0;
}

/*
 * A job, and the number of its last event when this host may add one: the
 * job is not finished and was read outside a read context.  Inside one (the
 * API's handlers) nothing is noted, or the GETs' jobs would take the slots
 * of the jobs this host runs: the run that adds an event to the job it read
 * (a cancel) takes the number from its answer (pg_job_read_seq()).
 */
struct job_seq_read {
	struct pg_one_read one;
	struct pg_store *ps;
};

static int read_job_seq(PGresult *res, void *userdata)
{
	struct job_seq_read *j = userdata;

	if (!j->ps->reading && PQntuples(res) && strcmp(pg_value(res, 0, COL_STATE), "finished"))
		pg_event_seq_note(j->ps, pg_int(res, 0, COL_ID), pg_int(res, 0, COL_LAST_SEQ));
	return pg_read_one(res, &j->one);
}

int pg_job_read_seq(struct pg_store *ps, int64_t id, int64_t *ret)
{
	struct pg_args a = { 0 };
	PGresult *res;

	pg_arg_int(&a, id);
	res = pg_read_answered(ps, sql_get, &a);
	if (!res || !PQntuples(res))
		return -ENOENT;
	*ret = pg_int(res, 0, COL_LAST_SEQ);
	return 0;
}

int pg_job_get(struct store *st, int64_t id, struct job_record *ret)
{
	struct job_seq_read j = { { &job_reader, ret }, pg_of(st) };
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	return pg_call(pg_of(st), "read a job", sql_get, &a, read_job_seq, &j);
}

/* $1 .. $5 of JOB_MATCHES; @buf holds the health text. */
static void filter_args(struct pg_args *a, const struct job_filter *f, char *buf, size_t len)
{
	pg_arg_text(a, f->state >= 0 ? job_state_name(f->state) : NULL);
	pg_arg_text(a, f->device);
	pg_arg_text(a, f->device_type);
	pg_arg_text(a, f->submitter);
	pg_arg_text(a, store_healths_text(f->healths, buf, len));
}

int pg_job_list(struct store *st, const struct job_filter *f, struct store_rows *rows)
{
	struct pg_args a = { 0 };
	char healths[64];

	filter_args(&a, f, healths, sizeof(healths));
	pg_arg_int(&a, f->after_id > 0 ? f->after_id : f->before_id > 0 ? f->before_id : 0);
	pg_arg_int(&a, f->limit ? f->limit : STORE_JOB_LIST_DEFAULT);
	pg_arg_int(&a, f->offset);
	return pg_list(pg_of(st), "list jobs", f->after_id > 0 ? sql_list_after : sql_list, &a,
		       &job_reader, rows);
}

int pg_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret)
{
	struct pg_args a = { 0 };
	char healths[64];

	filter_args(&a, f, healths, sizeof(healths));
	return pg_call(pg_of(st), "count jobs", sql_count_matching, &a, pg_read_int, ret);
}

/* Jobs with their last event's number, noted for the events this host adds. */
struct jobs_seq_read {
	struct pg_rows_read rr;
	struct pg_store *ps;
};

static int read_jobs_seq(PGresult *res, void *userdata)
{
	struct jobs_seq_read *j = userdata;
	int i;

	for (i = 0; i < PQntuples(res); i++)
		pg_event_seq_note(j->ps, pg_int(res, i, COL_ID), pg_int(res, i, COL_LAST_SEQ));
	return pg_read_rows(res, &j->rr);
}

static int list_jobs_seq(struct store *st, const char *op, const char *sql,
			 const struct pg_args *a, struct store_rows *rows)
{
	struct jobs_seq_read j = { { &job_reader, rows }, pg_of(st) };

	return pg_call(pg_of(st), op, sql, a, read_jobs_seq, &j);
}

int pg_job_still_queued(struct store *st, const int64_t *ids, size_t n,
			struct store_rows *rows)
{
	char text[STORE_STILL_QUEUED_MAX * 21 + 3];	/* "{id,id,...}" */
	struct pg_args a = { 0 };
	size_t off = 0, i;

	for (i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%c%lld", i ? ',' : '{',
					(long long)ids[i]);
	snprintf(text + off, sizeof(text) - off, "}");
	pg_arg_text(&a, text);
	return pg_list(pg_of(st), "read whether jobs are still queued", sql_still_queued, &a,
		       &job_reader, rows);
}

int pg_job_queued(struct store *st, struct store_rows *rows)
{
	return list_jobs_seq(st, "list the queue", sql_queued, NULL, rows);
}

int pg_job_running(struct store *st, struct store_rows *rows)
{
	struct pg_args a = { 0 };

	pg_arg_text(&a, pg_of(st)->host);
	return list_jobs_seq(st, "list running jobs", sql_running, &a, rows);
}

int pg_job_start(struct store *st, int64_t id, const char *device, uint64_t when)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_text(&a, device);
	pg_arg_int(&a, (int64_t)when);
	pg_arg_text(&a, pg_of(st)->host);
	pg_event_seq_live(pg_of(st), id, -1);	/* a session job, inserted here */
	return pg_write(pg_of(st), "start a job", sql_start, &a, pg_read_changed, NULL);
}

int pg_job_set_state(struct store *st, int64_t id, enum job_state state)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_text(&a, job_state_name(state));
	return pg_write(pg_of(st), "set a job's state", sql_set_state, &a, pg_read_changed, NULL);
}

int pg_job_finish(struct store *st, int64_t id, enum job_health health, enum error_type type,
		  const char *msg, uint64_t when)
{
	struct pg_args a = { 0 };

	pg_arg_int(&a, id);
	pg_arg_text(&a, job_health_name(health));
	pg_arg_text(&a, error_type_name(type));
	pg_arg_text(&a, msg);
	pg_arg_int(&a, (int64_t)when);
	pg_arg_text(&a, pg_of(st)->host);
	pg_event_seq_end(pg_of(st), id);	/* its "finished" comes next: kept a while */
	return pg_write(pg_of(st), "finish a job", sql_finish, &a, pg_read_changed, NULL);
}

int pg_job_requeue(struct store *st, int64_t id, bool recovered, const char *why)
{
	struct pg_args a = { 0 };
	int64_t n = 0;
	int r;

	pg_arg_int(&a, id);
	pg_arg_bool(&a, recovered);
	pg_arg_text(&a, why);
	n = 1;	/* written behind: taken as there */
	pg_event_seq_end(pg_of(st), id);	/* its "requeued" comes next: kept a while */
	r = pg_write(pg_of(st), "requeue a job", sql_requeue, &a, pg_read_int, &n);
	return r < 0 ? r : n ? 0 : -ENOENT;
}

/*
 * The counts of the jobs not finished, kept for labd's loop (GET /health):
 * answered from the last answer, asked again when it is older than
 * PG_COUNTS_AGE, never waited for; a slow database gives older counts.
 */
static const char sql_counts[] =
	"SELECT state, count(*) FROM jobs WHERE state IN ('queued', 'running', 'canceling')"
	" GROUP BY state";

static int read_counts(PGresult *res, void *userdata)
{
	struct pg_store *ps = userdata;
	enum job_state s;
	int i;

	memset(ps->counts, 0, sizeof(ps->counts));
	for (i = 0; i < PQntuples(res); i++)
		if (job_state_from_name(pg_value(res, i, 0), &s) == 0 && s < PG_COUNTED_STATES)
			ps->counts[s] = pg_int(res, i, 1);
	ps->counts_at = pg_now();
	return 0;
}

static void counts_answered(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;

	ps->counting = false;
	if (!err)
		read_counts(res, ps);
}

int pg_counts_fill(struct pg_store *ps)
{
	return pg_call(ps, "count jobs", sql_counts, NULL, read_counts, ps);
}

int pg_job_count(struct store *st, enum job_state state, int64_t *ret)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };

	if (ps->loop && state < PG_COUNTED_STATES && ps->counts_at) {
		if (!ps->counting && pg_now() - ps->counts_at > PG_COUNTS_AGE &&
		    pg_conn_send(ps->conn, sql_counts, 0, NULL, PG_CMD_SYNC, counts_answered,
				 ps) == 0)
			ps->counting = true;
		*ret = ps->counts[state];
		return 0;
	}
	pg_arg_text(&a, job_state_name(state));
	return pg_call(ps, "count jobs", sql_count, &a, pg_read_int, ret);
}

int pg_job_prune(struct store *st, int64_t id, uint64_t log_removed, uint64_t history_removed)
{
	struct pg_args a = { 0 };
	int64_t n = 1;	/* written behind: taken as there */
	int r;

	pg_arg_int(&a, id);
	pg_arg_int(&a, (int64_t)log_removed);
	pg_arg_int(&a, (int64_t)history_removed);
	r = pg_write(pg_of(st), "prune a job", sql_prune, &a, pg_read_int, &n);
	return r < 0 ? r : n ? 0 : -ENOENT;
}
