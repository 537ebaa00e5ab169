// SPDX-License-Identifier: GPL-2.0-or-later
/* pg_schema.c -- the PostgreSQL schema, its versions, and migrating under an advisory lock */
#include "store/pg_internal.h"

#include <errno.h>
#include <time.h>

#include "core/log.h"

/* pg_advisory_xact_lock() key of the schema migration: "labd" in ASCII */
#define PG_SCHEMA_LOCK "1818321508"

/*
 * The schema, one entry per version, each a list of statements (libpq's
 * pipeline mode runs one statement per command): migrations[i] takes a
 * database from version i to i + 1, all in the transaction of the open.
 * Never edit a released entry; append a new one.  Version 1 is SQLite's
 * schema (sqlite.c, its versions 1 to 3) with the tables of several hosts.
 */
static const char *const schema_v1[] = {
	"CREATE TABLE jobs ("
	" id BIGSERIAL PRIMARY KEY,"
	" name TEXT, device_type TEXT, tags TEXT,"
	" priority INTEGER NOT NULL DEFAULT 50,"
	" submitted BIGINT NOT NULL DEFAULT 0,"
	" started BIGINT NOT NULL DEFAULT 0,"
	" ended BIGINT NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL DEFAULT 'queued',"
	" health TEXT NOT NULL DEFAULT 'unknown',"
	" error_type TEXT NOT NULL DEFAULT 'none',"
	" error_msg TEXT, device TEXT, definition TEXT, format TEXT, filename TEXT,"
	" submitter TEXT,"
	" attempt INTEGER NOT NULL DEFAULT 1,"
	" retries_left INTEGER NOT NULL DEFAULT 0,"
	" recovered BOOLEAN NOT NULL DEFAULT false,"
	" results_pass INTEGER NOT NULL DEFAULT 0,"
	" results_fail INTEGER NOT NULL DEFAULT 0,"
	" results_skip INTEGER NOT NULL DEFAULT 0,"
	" results_unknown INTEGER NOT NULL DEFAULT 0,"
	" last_error TEXT,"
	" session BOOLEAN NOT NULL DEFAULT false,"
	" host TEXT)",	/* the host running it, or that ran it */
	"CREATE INDEX jobs_queue ON jobs (state, priority DESC, id)",
	"CREATE INDEX jobs_device ON jobs (device, id)",
	"CREATE TABLE devices ("
	" name TEXT PRIMARY KEY,"
	" state TEXT NOT NULL,"
	" reason TEXT, holder TEXT,"
	" hold_until BIGINT NOT NULL DEFAULT 0,"
	" job_id BIGINT,"
	" changed BIGINT NOT NULL DEFAULT 0,"
	" host TEXT, device_type TEXT, tags TEXT)",	/* the registry: its host, type, tags */
	"CREATE TABLE results ("
	" id BIGSERIAL PRIMARY KEY,"
	" job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" suite TEXT, name TEXT,"
	" result TEXT NOT NULL,"
	" measurement DOUBLE PRECISION, units TEXT,"
	" log_start BIGINT NOT NULL DEFAULT 0,"
	" log_end BIGINT NOT NULL DEFAULT 0,"
	" extra TEXT,"
	" created BIGINT NOT NULL DEFAULT 0)",
	"CREATE INDEX results_job ON results (job_id, id)",
	"CREATE TABLE events ("
	" id BIGSERIAL PRIMARY KEY,"
	" job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" seq BIGINT NOT NULL,"
	" ts BIGINT NOT NULL,"
	" kind TEXT NOT NULL,"
	" data TEXT,"
	" UNIQUE (job_id, seq))",
	"CREATE TABLE reservations ("
	" id BIGSERIAL PRIMARY KEY,"
	" holder TEXT NOT NULL, board TEXT, device_type TEXT NOT NULL, tags TEXT,"
	" priority INTEGER NOT NULL DEFAULT 50,"
	" duration BIGINT NOT NULL,"
	" submitted BIGINT NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL DEFAULT 'waiting',"
	" device TEXT,"
	" started BIGINT NOT NULL DEFAULT 0,"
	" until BIGINT NOT NULL DEFAULT 0,"
	" ended BIGINT NOT NULL DEFAULT 0,"
	" end_reason TEXT)",
	"CREATE INDEX reservations_queue ON reservations (state, priority DESC, id)",
	/* the labd hosts sharing the database: lease, API address, journal position */
	"CREATE TABLE hosts ("
	" name TEXT PRIMARY KEY,"
	" url TEXT,"
	" started BIGINT NOT NULL DEFAULT 0,"
	" lease_until BIGINT NOT NULL DEFAULT 0,"
	" journal_applied BIGINT NOT NULL DEFAULT 0)",
	NULL,
};

/*
 * 2: the queue and the lists at scale, as SQLite's version 4: the queue of
 * each device type in partial indexes in queue order (pg_queue.c's claim
 * and positions), an index per filter of the job list, the board a
 * requeued job avoids.  The counts stay COUNTs over these indexes: a row of
 * kept counts would be updated by every host at every change of state.
 */
static const char *const schema_v2[] = {
	"ALTER TABLE jobs ADD COLUMN avoid TEXT",
	"DROP INDEX jobs_queue",
	"CREATE INDEX jobs_claim ON jobs (device_type, priority DESC, submitted, id)"
	" WHERE state = 'queued' AND NOT session",
	"CREATE INDEX jobs_queue_age ON jobs (device_type, submitted)"
	" WHERE state = 'queued' AND NOT session",
	"CREATE INDEX jobs_state ON jobs (state, id)",
	"CREATE INDEX jobs_type ON jobs (device_type, id)",
	"CREATE INDEX jobs_submitter ON jobs (submitter, id)",
	"CREATE INDEX jobs_health ON jobs (health, id)",
	"DROP INDEX reservations_queue",
	"CREATE INDEX reservations_claim ON reservations"
	" (device_type, priority DESC, submitted, id) WHERE state = 'waiting'",
	"CREATE INDEX reservations_state ON reservations (state, id)",
	NULL,
};

/* 3: retention, as SQLite's version 5: when a job's log, results and events were removed */
static const char *const schema_v3[] = {
	"ALTER TABLE jobs ADD COLUMN log_removed BIGINT NOT NULL DEFAULT 0",
	"ALTER TABLE jobs ADD COLUMN history_removed BIGINT NOT NULL DEFAULT 0",
	NULL,
};

/* 4: API tokens made through the API, as SQLite's version 6 */
static const char *const schema_v4[] = {
	"CREATE TABLE tokens (hash TEXT PRIMARY KEY, user_name TEXT NOT NULL, role TEXT NOT NULL,"
	" created BIGINT NOT NULL DEFAULT 0, created_by TEXT)",
	NULL,
};

/*
 * 5: what runs on a board since a claim (pg_queue.c: a claim's orphans and
 * its read-back, by board and start time) found without the board's
 * history: jobs_device holds every job a board ever ran, jobs_state every
 * running job; with 20000 past jobs on the board and 1000 running the
 * claim's check took 2 ms, with this index 0.05 ms.
 */
static const char *const schema_v5[] = {
	"CREATE INDEX jobs_running ON jobs (device, started) WHERE state = 'running'",
	"CREATE INDEX reservations_active ON reservations (device, started)"
	" WHERE state = 'active'",
	NULL,
};

/*
 * 6: the secret the hosts of a lab share (pg_hosts.c), one row, made by the
 * first host that opens the database: a request one host forwards to
 * another carries the identity it established, signed with it
 */
static const char *const schema_v6[] = {
	"CREATE TABLE lab_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret TEXT NOT NULL)",
	NULL,
};

/*
 * 7: how far each results backend's receiver acknowledged a job's events,
 * as SQLite's version 7: the host that reports a job's later events (it
 * reaped the one that ran it) goes on from there
 */
static const char *const schema_v7[] = {
	"CREATE TABLE deliveries ("
	" job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" backend TEXT NOT NULL, receiver TEXT NOT NULL,"
	" seq BIGINT NOT NULL,"
	" PRIMARY KEY (job_id, backend, receiver))",
	NULL,
};

static const char *const *const migrations[] = {
	schema_v1,
	schema_v2,
	schema_v3,
	schema_v4,
	schema_v5,
	schema_v6,
	schema_v7,
};

#define LATEST ((int64_t)(sizeof(migrations) / sizeof(migrations[0])))

static int64_t realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int migrate_one(struct pg_store *ps, int64_t from)
{
	const char *const *sql;
	struct pg_args a = { 0 };
	int r = 0;

	for (sql = migrations[from]; *sql && !r; sql++)
		r = pg_call(ps, "migrate the schema", *sql, NULL, NULL, NULL);
	if (r < 0)
		return r;
	pg_arg_int(&a, from + 1);
	pg_arg_int(&a, realtime_usec());
	return pg_call(ps, "record the schema version",
		       "INSERT INTO schema_version (version, applied) VALUES ($1, $2)", &a, NULL,
		       NULL);
}

/* The steps inside the transaction: lock, read the version, migrate. */
static int migrate_locked(struct pg_store *ps, int64_t *from)
{
	int64_t version = 0, v;
	int r;

	r = pg_call(ps, "take the schema lock", "SELECT pg_advisory_xact_lock(" PG_SCHEMA_LOCK ")",
		    NULL, NULL, NULL);
	if (r == -ETIMEDOUT)
		log_error("another labd host holds the schema migration lock");
	if (!r)
		r = pg_call(ps, "create the schema_version table",
			    "CREATE TABLE IF NOT EXISTS schema_version"
			    " (version INTEGER PRIMARY KEY, applied BIGINT NOT NULL)",
			    NULL, NULL, NULL);
	if (!r)
		r = pg_call(ps, "read the schema version",
			    "SELECT COALESCE(MAX(version), 0) FROM schema_version", NULL,
			    pg_read_int, &version);
	if (r < 0)
		return r;
	if (version > LATEST) {
		log_error("the database has schema version %lld, newer than this labd's %lld",
			  (long long)version, (long long)LATEST);
		return -EIO;
	}
	for (v = version; !r && v < LATEST; v++)
		r = migrate_one(ps, v);
	*from = version;
	return r;
}

int pg_migrate(struct pg_store *ps)
{
	int64_t from = 0;
	int r, r2;

	ps->in_txn = true;
	ps->patient = true;	/* a database starting with labd: retry until the timeout */
	r = pg_call(ps, "start the schema migration", "BEGIN", NULL, NULL, NULL);
	ps->patient = false;
	if (!r)
		r = migrate_locked(ps, &from);
	ps->in_txn = false;
	if (r == -ENOTCONN || r == -ETIMEDOUT)
		return r;	/* the connection closes with the store: the server rolls back */
	r2 = pg_call(ps, r ? "roll back the schema migration" : "commit the schema migration",
		     r ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
	if (r < 0)
		return r;
	if (r2 < 0)
		return r2;
	if (from < LATEST)
		log_info("%s the database's schema from version %lld to %lld",
			 from ? "migrated" : "created", (long long)from, (long long)LATEST);
	return 0;
}
