// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-store-sqlite.c -- what only the SQLite store does: schema migrations,
 * a database edited by hand, a file from a newer labd or not a database at
 * all.  These tests reach into the file with sqlite3 itself; everything else
 * goes through the store interface (test-store.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/sqlite_internal.h"
#include "store/store.h"
#include "storebed.h"
#include "tap.h"

/* db_file() - state directory @name (created) in @dir, and its database file in @path. */
static void db_file(const char *name, char dir[160], char path[200])
{
	snprintf(dir, 160, "%s", state_dir(name));
	snprintf(path, 200, "%s/%s", dir, STORE_SQLITE_FILE);
}

/* A value labd cannot read (someone edited the database) is -EIO, without leaks. */
TEST(test_store__bad_value)
{
	char dir[160], path[200];
	struct device_record dev = { .name = "qemu-01", .reason = "x" };
	struct seen s = { 0 };
	struct job_record rec;
	struct store *st;
	sqlite3 *db;

	db_file("edited", dir, path);
	CHECK(open_at(dir, &st) == 0);
	CHECK(add_job(st, "edited", 50) == 1);
	CHECK(add_job(st, "fine", 50) == 2);
	CHECK(store_device_put(st, &dev) == 0);
	st = store_close(st);
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "UPDATE jobs SET state = 'bogus' WHERE id = 1;"
			   "UPDATE devices SET state = 'on fire'", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(open_at(dir, &st) == 0);
	CHECK(store_job_get(st, 1, &rec) == -EIO);
	CHECK(store_job_get(st, 2, &rec) == 0);
	job_record_release(&rec);
	CHECK(store_job_list(st, NULL, seen_job, &s) == -EIO);
	CHECK_INT(s.n, ==, 0);
	CHECK(store_device_get(st, "qemu-01", &dev) == -EIO);
	CHECK(store_device_list(st, seen_device, &s) == -EIO);
	store_close(st);
}

/* The version-1 schema, frozen here as labd shipped it (before jobs.last_error). */
static const char schema_v1[] =
	"CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL);"
	"INSERT INTO schema_version VALUES (1, 0);"
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, device_type TEXT,"
	" tags TEXT, priority INTEGER NOT NULL DEFAULT 50, submitted INTEGER NOT NULL DEFAULT 0,"
	" started INTEGER NOT NULL DEFAULT 0, ended INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL DEFAULT 'queued', health TEXT NOT NULL DEFAULT 'unknown',"
	" error_type TEXT NOT NULL DEFAULT 'none', error_msg TEXT, device TEXT, definition TEXT,"
	" format TEXT, filename TEXT, submitter TEXT, attempt INTEGER NOT NULL DEFAULT 1,"
	" retries_left INTEGER NOT NULL DEFAULT 0, recovered INTEGER NOT NULL DEFAULT 0,"
	" results_pass INTEGER NOT NULL DEFAULT 0, results_fail INTEGER NOT NULL DEFAULT 0,"
	" results_skip INTEGER NOT NULL DEFAULT 0, results_unknown INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX jobs_queue ON jobs (state, priority DESC, id);"
	"CREATE INDEX jobs_device ON jobs (device, id);"
	"CREATE TABLE devices (name TEXT PRIMARY KEY, state TEXT NOT NULL, reason TEXT,"
	" holder TEXT, hold_until INTEGER NOT NULL DEFAULT 0, job_id INTEGER,"
	" changed INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE results (id INTEGER PRIMARY KEY,"
	" job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE, suite TEXT, name TEXT,"
	" result TEXT NOT NULL, measurement REAL, units TEXT, log_start INTEGER NOT NULL DEFAULT 0,"
	" log_end INTEGER NOT NULL DEFAULT 0, extra TEXT, created INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX results_job ON results (job_id, id);"
	"CREATE TABLE events (id INTEGER PRIMARY KEY,"
	" job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL, ts INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT,"
	" UNIQUE (job_id, seq));"
	"INSERT INTO jobs (name, state, device, error_msg, attempt)"
	" VALUES ('old', 'running', 'rpi4-01', 'power control failed', 1);"
	"INSERT INTO events (job_id, seq, ts, kind) VALUES (1, 1, 10, 'queued');";

static int schema_version_of(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int v = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT MAX(version) FROM schema_version", -1, &s,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return v;
}

TEST(test_store__migrate_v1)
{
	char dir[160], path[200];
	struct job_record rec;
	struct store *st;
	sqlite3 *db;
	int64_t seq;

	db_file("v1", dir, path);
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, schema_v1, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK_INT(schema_version_of(path), ==, 1);

	CHECK(open_at(dir, &st) == 0);
	CHECK(store_job_get(st, 1, &rec) == 0);
	CHECK_STR(rec.name, "old");
	CHECK_INT(rec.state, ==, JOB_STATE_RUNNING);
	CHECK(!rec.last_error);
	job_record_release(&rec);
	CHECK(store_job_requeue(st, 1, true, NULL) == 0);
	CHECK(store_job_get(st, 1, &rec) == 0);
	CHECK_STR(rec.last_error, "power control failed");
	job_record_release(&rec);
	CHECK(store_event_add(st, 1, 20, "requeued", NULL, &seq) == 0);
	CHECK_INT(seq, ==, 2);
	store_close(st);
	CHECK_INT(schema_version_of(path), ==, 7);
}

TEST(test_store__newer_schema)
{
	char dir[160], path[200];
	struct store *st = NULL;
	sqlite3 *db;

	db_file("future", dir, path);
	CHECK(open_at(dir, &st) == 0);
	st = store_close(st);
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "INSERT INTO schema_version VALUES (999, 0)", NULL, NULL,
			   NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(open_at(dir, &st) == -EIO);
	CHECK(!st);
}

/* Open the store of state directory @dir with stderr captured into @log. */
static int open_capturing(const char *dir, struct store **st, char *log, size_t size)
{
	int saved = dup(2), fd, r;
	ssize_t n;

	fd = open(tmp_path("stderr.txt"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0)
		abort();
	fflush(stderr);
	dup2(fd, 2);
	r = open_at(dir, st);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, log, size - 1, 0);
	log[n > 0 ? n : 0] = '\0';
	close(fd);
	return r;
}

TEST(test_store__garbage_file)
{
	struct store *st = NULL;
	char dir[160], path[200], log[1024];
	char junk[4096];
	FILE *f;

	db_file("garbage", dir, path);
	memset(junk, 'x', sizeof(junk));
	memcpy(junk, "this is not a database\n", 23);
	f = fopen(path, "w");
	CHECK(f);
	CHECK(fwrite(junk, 1, sizeof(junk), f) == sizeof(junk));
	fclose(f);
	CHECK(open_capturing(dir, &st, log, sizeof(log)) == -EIO);
	CHECK(!st);
	printf("# %s", log);
	CHECK_CONTAINS(log, "file is not a database");
	CHECK_CONTAINS(log, "garbage/labd.db");

	snprintf(dir, sizeof(dir), "%s", tmp_path("no-such-dir"));
	CHECK(open_capturing(dir, &st, log, sizeof(log)) == -EIO);
	CHECK(!st);
	CHECK_CONTAINS(log, "unable to open database file");
}

/*
 * Statements allowed to read more than an index range, each with why it is
 * bounded: a list the history does not grow.
 */
static const struct {
	enum sqlite_stmt id;
	const char *why;
} plan_exceptions[] = {
	{ STMT_JOB_QUEUED, "the whole queue, for start-up and tools, never a hot path" },
	{ STMT_JOB_RUNNING, "sorts the running jobs: at most one per board" },
	{ STMT_RESERVATION_WAITING, "sorts the waiting reservations: a few per developer" },
	{ STMT_RESERVATION_ACTIVE, "active reservations: at most one per board" },
	{ STMT_QUEUE_SUMMARY, "groups a row per device type: the kept counts of queued jobs "
			      "and the waiting reservations (through their index)" },
};

/* Tables that grow with the history: never scanned, never sorted outside an index. */
static bool plan_scans(const char *detail)
{
	static const char *const bad[] = { "SCAN jobs", "SCAN results", "SCAN events",
					   "SCAN reservations", "SCAN r", "SCAN o",
					   "TEMP B-TREE" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(detail, bad[i]))
			return true;
	return false;
}

/* Whether @sql's plan in @db stays in index ranges; prints the plan when not. */
static bool plan_ok(sqlite3 *db, const char *sql)
{
	char explain[2048];
	sqlite3_stmt *s;
	bool ok = true;

	snprintf(explain, sizeof(explain), "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_prepare_v2(db, explain, -1, &s, NULL) != SQLITE_OK) {
		printf("#   cannot explain '%s': %s\n", sql, sqlite3_errmsg(db));
		return false;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *detail = (const char *)sqlite3_column_text(s, 3);

		if (detail && plan_scans(detail)) {
			printf("#   '%s': %s\n", sql, detail);
			ok = false;
		}
	}
	sqlite3_finalize(s);
	return ok;
}

static bool plan_exception(enum sqlite_stmt id)
{
	size_t i;

	for (i = 0; i < sizeof(plan_exceptions) / sizeof(plan_exceptions[0]); i++)
		if (plan_exceptions[i].id == id)
			return true;
	return false;
}

/* Every statement of the SQLite store, and every shape of the job list, through an index. */
TEST(test_store__query_plans)
{
	static const struct sqlite_sql *const tables[] = {
		sqlite_jobs_sql, sqlite_devices_sql, sqlite_results_sql, sqlite_events_sql,
		sqlite_reservations_sql, sqlite_queue_sql,
	};
	char dir[160], path[200], sql[1024];
	const struct sqlite_sql *q;
	struct store *st = NULL;
	sqlite3 *db;
	unsigned shape, bad = 0, n = 0;
	size_t i;

	db_file("plans", dir, path);
	CHECK(open_at(dir, &st) == 0);
	st = store_close(st);
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	/* the check itself: a query by an unindexed column scans */
	CHECK(!plan_ok(db, "SELECT id FROM jobs WHERE name = 'x' ORDER BY id"));
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		for (q = tables[i]; q->sql; q++, n++)
			if (!plan_exception(q->id) && !plan_ok(db, q->sql))
				bad++;
	}
	for (shape = 0; shape < JOBLIST__SHAPES; shape++) {
		if ((shape & JOBLIST_HEALTH) && (shape & JOBLIST_HEALTHS))
			continue;
		sqlite_joblist_sql(shape, sql, sizeof(sql));
		n++;
		if (!plan_ok(db, sql))
			bad++;
	}
	sqlite3_close(db);
	printf("# %u statements explained\n", n);
	CHECK_INT(bad, ==, 0);
}

TEST_LIST(test_store__bad_value, test_store__migrate_v1, test_store__newer_schema,
	  test_store__garbage_file, test_store__query_plans);
