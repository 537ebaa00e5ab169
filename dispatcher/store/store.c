// SPDX-License-Identifier: GPL-2.0-or-later
/* store.c -- the SQLite database: open, pragmas, schema migrations, statements, transactions */
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "store/store_internal.h"

/* Writers wait this long for a lock held by another process (the sqlite3 CLI). */
#define STORE_BUSY_TIMEOUT_MS 100

/* Initial capacity of a store_rows array. */
#define STORE_ROWS_MIN 16

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
};

static const struct store_sql store_sql[] = {
	{ STMT_BEGIN, "BEGIN IMMEDIATE" },
	{ STMT_COMMIT, "COMMIT" },
	{ STMT_ROLLBACK, "ROLLBACK" },
	{ STMT_SAVEPOINT, "SAVEPOINT store_call" },
	{ STMT_RELEASE, "RELEASE store_call" },
	{ STMT_ROLLBACK_TO, "ROLLBACK TO store_call" },
	{ 0, NULL },
};

static const struct store_sql *const store_sql_tables[] = {
	store_sql, store_jobs_sql, store_devices_sql, store_results_sql, store_events_sql,
	store_reservations_sql,
};

int store_error(struct store *st, const char *op)
{
	int code = sqlite3_extended_errcode(st->db);

	if (code == SQLITE_NOMEM)
		return -ENOMEM;
	if (code == SQLITE_CONSTRAINT_FOREIGNKEY)
		return -ENOENT;
	log_error("cannot %s in '%s': %s", op, st->path, sqlite3_errmsg(st->db));
	return -EIO;
}

void store_reset(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

int store_fail(struct store *st, sqlite3_stmt *s, const char *op)
{
	int r = store_error(st, op);

	store_reset(s);
	return r;
}

int store_run(struct store *st, sqlite3_stmt *s, const char *op)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		return store_fail(st, s, op);
	store_reset(s);
	return 0;
}

int store_row(struct store *st, sqlite3_stmt *s, const char *op)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE) {
		store_reset(s);
		return -ENOENT;
	}
	return store_fail(st, s, op);
}

int store_update(struct store *st, sqlite3_stmt *s, const char *op)
{
	int r = store_run(st, s, op);

	if (r < 0)
		return r;
	return sqlite3_changes(st->db) ? 0 : -ENOENT;
}

int store_savepoint_begin(struct store *st)
{
	return store_run(st, st->stmt[STMT_SAVEPOINT], "start a savepoint");
}

int store_savepoint_end(struct store *st, int r)
{
	int r2;

	if (r < 0)
		store_run(st, st->stmt[STMT_ROLLBACK_TO], "roll back a savepoint");
	r2 = store_run(st, st->stmt[STMT_RELEASE], "release a savepoint");
	return r < 0 ? r : r2;
}

int store_read_texts(sqlite3_stmt *s, void *rec, const struct store_text *t, size_t n)
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

void store_free_texts(void *rec, const struct store_text *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(*(char **)((char *)rec + t[i].offset));
}

int store_bad_value(struct store *st, const char *what, const char *value)
{
	log_error("invalid %s '%s' in '%s'", what, value ? value : "(null)", st->path);
	return -EIO;
}

static int rows_grow(struct store_rows *rows)
{
	size_t alloc = rows->alloc ? rows->alloc * 2 : STORE_ROWS_MIN;
	char *v;

	if (rows->n < rows->alloc)
		return 0;
	v = reallocarray(rows->v, alloc, rows->type->size);
	if (!v)
		return -ENOMEM;
	rows->v = v;
	rows->alloc = alloc;
	return 0;
}

int store_rows_read(struct store *st, sqlite3_stmt *s, const char *op, struct store_rows *rows)
{
	int rc, r = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		r = rows_grow(rows);
		if (r < 0)
			break;
		memset(store_rows_at(rows, rows->n), 0, rows->type->size);
		r = rows->type->read(st, s, store_rows_at(rows, rows->n));
		rows->n++;	/* a half-read record is released with the others */
		if (r < 0)
			break;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_error(st, op);
	store_reset(s);
	if (r < 0)
		store_rows_release(rows);
	return r;
}

void *store_rows_at(const struct store_rows *rows, size_t i)
{
	return rows->v + i * rows->type->size;
}

void store_rows_release(struct store_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->n; i++)
		rows->type->release(store_rows_at(rows, i));
	free(rows->v);
	rows->v = NULL;
	rows->n = 0;
	rows->alloc = 0;
}

/* Run @sql, which returns no rows, outside the prepared set (open and migrations only). */
static int store_exec(struct store *st, const char *sql, const char *op)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_error(st, op);
	return 0;
}

/* WAL: readers never block the writer and a SIGKILL loses nothing committed. */
static int store_set_wal(struct store *st)
{
	sqlite3_stmt *s;
	const char *mode;
	int r = 0;

	if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "set the journal mode");
	if (sqlite3_step(s) != SQLITE_ROW) {
		r = store_error(st, "set the journal mode");
	} else {
		mode = (const char *)sqlite3_column_text(s, 0);
		if (!mode || strcmp(mode, "wal"))
			log_warning("database '%s' is not in WAL mode but '%s'", st->path,
				    mode ? mode : "unknown");
	}
	sqlite3_finalize(s);
	return r;
}

static int store_schema_version(struct store *st, int *ret)
{
	sqlite3_stmt *s;
	int r = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT COALESCE(MAX(version), 0) FROM schema_version",
			       -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "read the schema version");
	if (sqlite3_step(s) == SQLITE_ROW)
		*ret = sqlite3_column_int(s, 0);
	else
		r = store_error(st, "read the schema version");
	sqlite3_finalize(s);
	return r;
}

/* Apply migrations[from] and record the new version, inside the caller's transaction. */
static int store_migrate_one(struct store *st, int from)
{
	struct timespec now;
	char sql[128];
	int r;

	r = store_exec(st, migrations[from], "migrate the schema");
	if (r < 0)
		return r;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(sql, sizeof(sql), "INSERT INTO schema_version (version, applied) VALUES (%d, %lld)",
		 from + 1, (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000);
	return store_exec(st, sql, "record the schema version");
}

/* Bring the schema to the newest version, all in one transaction. */
static int store_migrate(struct store *st)
{
	const int latest = (int)ARRAY_SIZE(migrations);
	int version = 0, v, r;

	r = store_exec(st, "BEGIN IMMEDIATE", "start the schema migration");
	if (r < 0)
		return r;
	r = store_exec(st, "CREATE TABLE IF NOT EXISTS schema_version"
			   " (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)",
		       "create the schema_version table");
	if (!r)
		r = store_schema_version(st, &version);
	if (!r && version > latest) {
		log_error("database '%s' has schema version %d, newer than this labd's %d",
			  st->path, version, latest);
		r = -EIO;
	}
	for (v = version; !r && v < latest; v++)
		r = store_migrate_one(st, v);
	if (!r)
		r = store_exec(st, "COMMIT", "commit the schema migration");
	if (r < 0) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
	if (version && version < latest)
		log_info("migrated database '%s' from schema version %d to %d", st->path, version,
			 latest);
	return 0;
}

static int store_prepare(struct store *st)
{
	const struct store_sql *q;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(store_sql_tables); i++) {
		for (q = store_sql_tables[i]; q->sql; q++) {
			if (sqlite3_prepare_v3(st->db, q->sql, -1, SQLITE_PREPARE_PERSISTENT,
					       &st->stmt[q->id], NULL) != SQLITE_OK)
				return store_error(st, "prepare a statement");
		}
	}
	for (i = 0; i < STMT__COUNT; i++) {
		if (!st->stmt[i]) {
			log_error("store statement %zu has no SQL", i);
			return -EIO;
		}
	}
	return 0;
}

static int store_configure(struct store *st)
{
	int r;

	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
	r = store_set_wal(st);
	if (r < 0)
		return r;
	/* NORMAL under WAL: a crash of labd loses nothing; a power cut, the last commits */
	r = store_exec(st, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
		       "set the pragmas");
	if (r < 0)
		return r;
	r = store_migrate(st);
	if (r < 0)
		return r;
	return store_prepare(st);
}

int store_open(const char *path, struct store **ret)
{
	struct store *st;
	int rc, r;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->path = strdup(path);
	if (!st->path) {
		r = -ENOMEM;
		goto err_close;
	}
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		if (!st->db || rc == SQLITE_NOMEM) {
			r = -ENOMEM;
			goto err_close;
		}
		log_error("cannot open database '%s': %s", path, sqlite3_errmsg(st->db));
		r = -EIO;
		goto err_close;
	}
	r = store_configure(st);
	if (r < 0)
		goto err_close;
	*ret = st;
	return 0;

err_close:
	store_close(st);
	return r;
}

struct store *store_close(struct store *st)
{
	size_t i;

	if (!st)
		return NULL;
	if (st->db && !sqlite3_get_autocommit(st->db) && st->depth)
		store_exec(st, "COMMIT", "commit on close");
	for (i = 0; i < STMT__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	if (st->db && sqlite3_close(st->db) != SQLITE_OK)
		log_error("cannot close '%s': %s", st->path, sqlite3_errmsg(st->db));
	free(st->path);
	free(st);
	return NULL;
}

int store_begin(struct store *st)
{
	int r;

	if (st->depth++)
		return 0;
	r = store_run(st, st->stmt[STMT_BEGIN], "begin a transaction");
	if (r < 0)
		st->depth = 0;
	return r;
}

int store_commit(struct store *st)
{
	int r;

	if (!st->depth)
		return -EINVAL;
	if (--st->depth)
		return 0;
	r = store_run(st, st->stmt[STMT_COMMIT], "commit a transaction");
	if (r < 0 && !sqlite3_get_autocommit(st->db))
		store_run(st, st->stmt[STMT_ROLLBACK], "roll back a transaction");
	return r;
}
