// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite.c -- the SQLite store: open, pragmas, schema migrations, statements, the ops table */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/loop.h"

/* Writers wait this long for a lock held by another process (the sqlite3 CLI). */
#define SQLITE_BUSY_TIMEOUT_MS 100

/*
 * The schema, one entry per version: migrations[i] takes a database from
 * version i to i + 1.  Never edit a released entry; append a new one.  Enums
 * are stored as their jobstate.h names so that the sqlite3 CLI reads well.
 */
static const char *const migrations[] = {
	/* 1: jobs, devices, results, events */
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT, device_type TEXT, tags TEXT,"
	" priority INTEGER NOT NULL DEFAULT 50,"
	" submitted INTEGER NOT NULL DEFAULT 0,"
	" started INTEGER NOT NULL DEFAULT 0,"
	" ended INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL DEFAULT 'queued',"
	" health TEXT NOT NULL DEFAULT 'unknown',"
	" error_type TEXT NOT NULL DEFAULT 'none',"
	" error_msg TEXT, device TEXT, definition TEXT, format TEXT, filename TEXT,"
	" submitter TEXT,"
	" attempt INTEGER NOT NULL DEFAULT 1,"
	" retries_left INTEGER NOT NULL DEFAULT 0,"
	" recovered INTEGER NOT NULL DEFAULT 0,"
	" results_pass INTEGER NOT NULL DEFAULT 0,"
	" results_fail INTEGER NOT NULL DEFAULT 0,"
	" results_skip INTEGER NOT NULL DEFAULT 0,"
	" results_unknown INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX jobs_queue ON jobs (state, priority DESC, id);"
	"CREATE INDEX jobs_device ON jobs (device, id);"
	"CREATE TABLE devices ("
	" name TEXT PRIMARY KEY,"
	" state TEXT NOT NULL,"
	" reason TEXT, holder TEXT,"
	" hold_until INTEGER NOT NULL DEFAULT 0,"
	" job_id INTEGER,"
	" changed INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE results ("
	" id INTEGER PRIMARY KEY,"
	" job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" suite TEXT, name TEXT,"
	" result TEXT NOT NULL,"
	" measurement REAL, units TEXT,"
	" log_start INTEGER NOT NULL DEFAULT 0,"
	" log_end INTEGER NOT NULL DEFAULT 0,"
	" extra TEXT,"
	" created INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX results_job ON results (job_id, id);"
	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY,"
	" job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL,"
	" ts INTEGER NOT NULL,"
	" kind TEXT NOT NULL,"
	" data TEXT,"
	" UNIQUE (job_id, seq));",
	/* 2: the error text of the previous attempt of a requeued job */
	"ALTER TABLE jobs ADD COLUMN last_error TEXT;",
	/* 3: developers' reservations, queued with the jobs; session boot jobs */
	"CREATE TABLE reservations ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" holder TEXT NOT NULL, board TEXT, device_type TEXT NOT NULL, tags TEXT,"
	" priority INTEGER NOT NULL DEFAULT 50,"
	" duration INTEGER NOT NULL,"
	" submitted INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL DEFAULT 'waiting',"
	" device TEXT,"
	" started INTEGER NOT NULL DEFAULT 0,"
	" until INTEGER NOT NULL DEFAULT 0,"
	" ended INTEGER NOT NULL DEFAULT 0,"
	" end_reason TEXT);"
	"CREATE INDEX reservations_queue ON reservations (state, priority DESC, id);"
	"ALTER TABLE jobs ADD COLUMN session INTEGER NOT NULL DEFAULT 0;",
	/*
	 * 4: the queue and the lists at scale.  The queue of each device type is
	 * read through partial indexes in queue order (sqlite_queue.c), every
	 * list through an index on its filter and the id (sqlite_joblist.c), and
	 * the counts per state and device type are kept by triggers, so that
	 * nothing labd does per job or per request reads the whole table.  A
	 * requeued job remembers the board it failed on (avoid).
	 */
	"ALTER TABLE jobs ADD COLUMN avoid TEXT;"
	"DROP INDEX jobs_queue;"
	"CREATE INDEX jobs_claim ON jobs (device_type, priority DESC, submitted, id)"
	" WHERE state = 'queued' AND session = 0;"
	"CREATE INDEX jobs_queue_age ON jobs (device_type, submitted)"
	" WHERE state = 'queued' AND session = 0;"
	"CREATE INDEX jobs_state ON jobs (state, id);"
	"CREATE INDEX jobs_type ON jobs (device_type, id);"
	"CREATE INDEX jobs_submitter ON jobs (submitter, id);"
	"CREATE INDEX jobs_health ON jobs (health, id);"
	"DROP INDEX reservations_queue;"
	"CREATE INDEX reservations_claim ON reservations (device_type, priority DESC, submitted, id)"
	" WHERE state = 'waiting';"
	"CREATE INDEX reservations_state ON reservations (state, id);"
	"CREATE TABLE job_counts (state TEXT NOT NULL, device_type TEXT NOT NULL,"
	" n INTEGER NOT NULL, PRIMARY KEY (state, device_type)) WITHOUT ROWID;"
	"INSERT INTO job_counts SELECT state, coalesce(device_type, ''), count(*) FROM jobs"
	" GROUP BY 1, 2;"
	"CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN"
	" INSERT INTO job_counts VALUES (new.state, coalesce(new.device_type, ''), 1)"
	"  ON CONFLICT (state, device_type) DO UPDATE SET n = n + 1;"
	" END;"
	"CREATE TRIGGER jobs_count_update AFTER UPDATE OF state ON jobs"
	" WHEN old.state IS NOT new.state BEGIN"
	" UPDATE job_counts SET n = n - 1"
	"  WHERE state = old.state AND device_type = coalesce(old.device_type, '');"
	" INSERT INTO job_counts VALUES (new.state, coalesce(new.device_type, ''), 1)"
	"  ON CONFLICT (state, device_type) DO UPDATE SET n = n + 1;"
	" END;"
	"CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN"
	" UPDATE job_counts SET n = n - 1"
	"  WHERE state = old.state AND device_type = coalesce(old.device_type, '');"
	" END;",
	/* 5: retention: when a finished job's log, and its results and events, were removed */
	"ALTER TABLE jobs ADD COLUMN log_removed INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN history_removed INTEGER NOT NULL DEFAULT 0;",
	/* 6: API tokens made through the API (their SHA-256), beside labd.conf's users */
	"CREATE TABLE tokens (hash TEXT PRIMARY KEY, user TEXT NOT NULL, role TEXT NOT NULL,"
	" created INTEGER NOT NULL DEFAULT 0, created_by TEXT);",
	/* 7: how far each results backend's receiver acknowledged a job's events */
	"CREATE TABLE deliveries ("
	" job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" backend TEXT NOT NULL, receiver TEXT NOT NULL,"
	" seq INTEGER NOT NULL,"
	" PRIMARY KEY (job_id, backend, receiver)) WITHOUT ROWID;",
};

static const struct sqlite_sql sqlite_sql[] = {
	{ STMT_BEGIN, "BEGIN IMMEDIATE" },
	{ STMT_COMMIT, "COMMIT" },
	{ STMT_ROLLBACK, "ROLLBACK" },
	{ STMT_SAVEPOINT, "SAVEPOINT store_call" },
	{ STMT_RELEASE, "RELEASE store_call" },
	{ STMT_ROLLBACK_TO, "ROLLBACK TO store_call" },
	{ 0, NULL },
};

static const struct sqlite_sql *const sqlite_sql_tables[] = {
	sqlite_sql, sqlite_jobs_sql, sqlite_devices_sql, sqlite_results_sql, sqlite_events_sql,
	sqlite_reservations_sql, sqlite_queue_sql, sqlite_tokens_sql,
};

int sqlite_error(struct sqlite_store *sq, const char *op)
{
	int code = sqlite3_extended_errcode(sq->db);

	if (code == SQLITE_NOMEM)
		return -ENOMEM;
	if (code == SQLITE_CONSTRAINT_FOREIGNKEY)
		return -ENOENT;
	log_error("cannot %s in '%s': %s", op, sq->path, sqlite3_errmsg(sq->db));
	return -EIO;
}

void sqlite_reset(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

int sqlite_fail(struct sqlite_store *sq, sqlite3_stmt *s, const char *op)
{
	int r = sqlite_error(sq, op);

	sqlite_reset(s);
	return r;
}

int sqlite_run(struct sqlite_store *sq, sqlite3_stmt *s, const char *op)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		return sqlite_fail(sq, s, op);
	sqlite_reset(s);
	return 0;
}

int sqlite_insert(struct sqlite_store *sq, sqlite3_stmt *s, const char *op, int64_t *ret_id)
{
	int r = sqlite_run(sq, s, op);

	if (r < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(sq->db);
	return 0;
}

int sqlite_update(struct sqlite_store *sq, sqlite3_stmt *s, const char *op)
{
	int r = sqlite_run(sq, s, op);

	if (r < 0)
		return r;
	return sqlite3_changes(sq->db) ? 0 : -ENOENT;
}

int sqlite_savepoint_begin(struct sqlite_store *sq)
{
	return sqlite_run(sq, sq->stmt[STMT_SAVEPOINT], "start a savepoint");
}

int sqlite_savepoint_end(struct sqlite_store *sq, int r)
{
	int r2;

	if (r < 0)
		sqlite_run(sq, sq->stmt[STMT_ROLLBACK_TO], "roll back a savepoint");
	r2 = sqlite_run(sq, sq->stmt[STMT_RELEASE], "release a savepoint");
	return r < 0 ? r : r2;
}

int sqlite_read_texts(sqlite3_stmt *s, void *rec, const struct sqlite_text *t, size_t n)
{
	const unsigned char *text;
	char **field;
	size_t i;

	for (i = 0; i < n; i++) {
		field = (char **)((char *)rec + t[i].offset);
		if (sqlite3_column_type(s, t[i].col) == SQLITE_NULL) {
			*field = NULL;
			continue;
		}
		text = sqlite3_column_text(s, t[i].col);
		*field = text ? strdup((const char *)text) : NULL;
		if (!*field)
			return -ENOMEM;
	}
	return 0;
}

int sqlite_bad_value(struct sqlite_store *sq, const char *what, const char *value)
{
	log_error("invalid %s '%s' in '%s'", what, value ? value : "(null)", sq->path);
	return -EIO;
}

int sqlite_read_one(struct sqlite_store *sq, sqlite3_stmt *s, const char *op,
		    const struct sqlite_reader *reader, void *ret)
{
	int rc = sqlite3_step(s), r;

	if (rc == SQLITE_DONE) {
		sqlite_reset(s);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW)
		return sqlite_fail(sq, s, op);
	memset(ret, 0, reader->type->size);
	r = reader->read(sq, s, ret);
	sqlite_reset(s);
	if (r < 0) {
		reader->type->release(ret);
		return r;
	}
	return 0;
}

int sqlite_read_int(struct sqlite_store *sq, sqlite3_stmt *s, const char *op, int64_t *ret)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlite_fail(sq, s, op);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(s, 0);
	sqlite_reset(s);
	return rc == SQLITE_ROW ? 0 : -ENOENT;
}

int sqlite_read_rows(struct sqlite_store *sq, sqlite3_stmt *s, const char *op,
		     const struct sqlite_reader *reader, struct store_rows *rows)
{
	void *rec;
	int rc, r = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		rec = store_rows_add(rows);
		r = rec ? reader->read(sq, s, rec) : -ENOMEM;
		if (r < 0)
			break;	/* a half-read record is released with the others */
	}
	if (!r && rc != SQLITE_DONE)
		r = sqlite_error(sq, op);
	sqlite_reset(s);
	if (r < 0)
		store_rows_release(rows);
	return r;
}

/* Run @sql, which returns no rows, outside the prepared set (open and migrations only). */
static int sqlite_exec(struct sqlite_store *sq, const char *sql, const char *op)
{
	if (sqlite3_exec(sq->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sqlite_error(sq, op);
	return 0;
}

/* WAL: readers never block the writer and a SIGKILL loses nothing committed. */
static int sqlite_set_wal(struct sqlite_store *sq)
{
	sqlite3_stmt *s;
	const char *mode;
	int r = 0;

	if (sqlite3_prepare_v2(sq->db, "PRAGMA journal_mode = WAL", -1, &s, NULL) != SQLITE_OK)
		return sqlite_error(sq, "set the journal mode");
	if (sqlite3_step(s) != SQLITE_ROW) {
		r = sqlite_error(sq, "set the journal mode");
	} else {
		mode = (const char *)sqlite3_column_text(s, 0);
		if (!mode || strcmp(mode, "wal"))
			log_warning("database '%s' is not in WAL mode but '%s'", sq->path,
				    mode ? mode : "unknown");
	}
	sqlite3_finalize(s);
	return r;
}

static int sqlite_schema_version(struct sqlite_store *sq, int *ret)
{
	sqlite3_stmt *s;
	int r = 0;

	if (sqlite3_prepare_v2(sq->db, "SELECT COALESCE(MAX(version), 0) FROM schema_version",
			       -1, &s, NULL) != SQLITE_OK)
		return sqlite_error(sq, "read the schema version");
	if (sqlite3_step(s) == SQLITE_ROW)
		*ret = sqlite3_column_int(s, 0);
	else
		r = sqlite_error(sq, "read the schema version");
	sqlite3_finalize(s);
	return r;
}

/* Apply migrations[from] and record the new version, inside the caller's transaction. */
static int sqlite_migrate_one(struct sqlite_store *sq, int from)
{
	struct timespec now;
	char sql[128];
	int r;

	r = sqlite_exec(sq, migrations[from], "migrate the schema");
	if (r < 0)
		return r;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(sql, sizeof(sql), "INSERT INTO schema_version (version, applied) VALUES (%d, %lld)",
		 from + 1, (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000);
	return sqlite_exec(sq, sql, "record the schema version");
}

/* Bring the schema to the newest version, all in one transaction. */
static int sqlite_migrate(struct sqlite_store *sq)
{
	const int latest = (int)ARRAY_SIZE(migrations);
	int version = 0, v, r;

	r = sqlite_exec(sq, "BEGIN IMMEDIATE", "start the schema migration");
	if (r < 0)
		return r;
	r = sqlite_exec(sq, "CREATE TABLE IF NOT EXISTS schema_version"
			   " (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)",
		       "create the schema_version table");
	if (!r)
		r = sqlite_schema_version(sq, &version);
	if (!r && version > latest) {
		log_error("database '%s' has schema version %d, newer than this labd's %d",
			  sq->path, version, latest);
		r = -EIO;
	}
	for (v = version; !r && v < latest; v++)
		r = sqlite_migrate_one(sq, v);
	if (!r)
		r = sqlite_exec(sq, "COMMIT", "commit the schema migration");
	if (r < 0) {
		sqlite3_exec(sq->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
	if (version && version < latest)
		log_info("migrated database '%s' from schema version %d to %d", sq->path, version,
			 latest);
	return 0;
}

static int sqlite_prepare(struct sqlite_store *sq)
{
	const struct sqlite_sql *q;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sqlite_sql_tables); i++) {
		for (q = sqlite_sql_tables[i]; q->sql; q++) {
			if (sqlite3_prepare_v3(sq->db, q->sql, -1, SQLITE_PREPARE_PERSISTENT,
					       &sq->stmt[q->id], NULL) != SQLITE_OK)
				return sqlite_error(sq, "prepare a statement");
		}
	}
	for (i = 0; i < STMT__COUNT; i++) {
		if (!sq->stmt[i]) {
			log_error("store statement %zu has no SQL", i);
			return -EIO;
		}
	}
	return 0;
}

static int sqlite_configure(struct sqlite_store *sq)
{
	int r;

	sqlite3_extended_result_codes(sq->db, 1);
	sqlite3_busy_timeout(sq->db, SQLITE_BUSY_TIMEOUT_MS);
	r = sqlite_set_wal(sq);
	if (r < 0)
		return r;
	/* NORMAL under WAL: a crash of labd loses nothing; a power cut, the last commits */
	r = sqlite_exec(sq, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
		       "set the pragmas");
	if (r < 0)
		return r;
	r = sqlite_migrate(sq);
	if (r < 0)
		return r;
	return sqlite_prepare(sq);
}

static void sqlite_close(struct store *st)
{
	struct sqlite_store *sq = sqlite_of(st);
	size_t i;

	sqlite_batch_close(sq);
	for (i = 0; i < STMT__COUNT; i++)
		sqlite3_finalize(sq->stmt[i]);
	for (i = 0; i < JOBLIST__SHAPES; i++)
		sqlite3_finalize(sq->joblist[i]);
	if (sq->db && sqlite3_close(sq->db) != SQLITE_OK)
		log_error("cannot close '%s': %s", sq->path, sqlite3_errmsg(sq->db));
	free(sq->path);
	free(sq);
}

static const struct store_ops sqlite_ops = {
	.close = sqlite_close,
	.begin = sqlite_begin,
	.commit = sqlite_commit,
	.job_insert = sqlite_job_insert,
	.job_get = sqlite_job_get,
	.job_list = sqlite_job_list,
	.job_queued = sqlite_job_queued,
	.job_running = sqlite_job_running,
	.job_start = sqlite_job_start,
	.job_set_state = sqlite_job_set_state,
	.job_finish = sqlite_job_finish,
	.job_requeue = sqlite_job_requeue,
	.job_prune = sqlite_job_prune,
	.job_count = sqlite_job_count,
	.job_count_matching = sqlite_job_count_matching,
	.device_get = sqlite_device_get,
	.device_put = sqlite_device_put,
	.device_list = sqlite_device_list,
	.token_add = sqlite_token_add,
	.token_find = sqlite_token_find,
	.token_list = sqlite_token_list,
	.result_add = sqlite_result_add,
	.result_list = sqlite_result_list,
	.event_add = sqlite_event_add,
	.event_list = sqlite_event_list,
	.delivered_set = sqlite_delivered_set,
	.delivered_get = sqlite_delivered_get,
	.delivered_list = sqlite_delivered_list,
	.reservation_insert = sqlite_reservation_insert,
	.reservation_get = sqlite_reservation_get,
	.reservation_waiting = sqlite_reservation_waiting,
	.reservation_active = sqlite_reservation_active,
	.reservation_recent = sqlite_reservation_recent,
	.reservation_activate = sqlite_reservation_activate,
	.reservation_renew = sqlite_reservation_renew,
	.reservation_end = sqlite_reservation_end,
	.claim = sqlite_claim,
	.queue_position = sqlite_queue_position,
	.job_position = sqlite_job_position,
	.queue_summary = sqlite_queue_summary,
	.sync = sqlite_sync,
	.forget = sqlite_forget,
};

/* The database of labd's state directory: <state_dir>/labd.db. */
static int sqlite_open(const struct store_params *p, struct store **ret, struct diag *diag)
{
	struct sqlite_store *sq;
	int rc, r;

	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return -ENOMEM;
	sq->store.ops = &sqlite_ops;
	if (asprintf(&sq->path, "%s/%s", p->state_dir, STORE_SQLITE_FILE) < 0) {
		sq->path = NULL;
		r = -ENOMEM;
		goto err_close;
	}
	rc = sqlite3_open_v2(sq->path, &sq->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		if (!sq->db || rc == SQLITE_NOMEM) {
			r = -ENOMEM;
			goto err_close;
		}
		log_error("cannot open database '%s': %s", sq->path, sqlite3_errmsg(sq->db));
		r = -EIO;
		goto err_close;
	}
	r = sqlite_configure(sq);
	if (!r)
		r = sqlite_batch_init(sq, p->loop);
	if (r < 0)
		goto err_close;
	*ret = &sq->store;
	return 0;

err_close:
	sqlite_close(&sq->store);
	return r;
}

const struct store_driver store_sqlite_driver = {
	.name = "sqlite",
	.open = sqlite_open,
};
