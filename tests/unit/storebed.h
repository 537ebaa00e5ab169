/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storebed.h -- what the store tests share (test-store.c, test-store-sqlite.c):
 * a state directory per test below one temporary directory (removed at
 * exit), opening a store there through the interface, a job, and callbacks
 * that collect what a listing passes
 *
 * The same tests run on PostgreSQL when LABD_TEST_PG is a libpq conninfo
 * without a dbname (tests/t1060-store-pg.sh starts a server of its own and
 * runs test-store so): each state directory is then a new database of that
 * server, named after the directory, and open_at() opens the postgresql
 * driver on it.
 */
#ifndef LABD_STOREBED_H
#define LABD_STOREBED_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libconfig.h>
#include <libpq-fe.h>

#include "core/diag.h"
#include "store/store.h"

static char tmpdir[64];
static char pathbuf[160];

static inline int remove_entry(const char *path, const struct stat *sb, int flag,
			       struct FTW *ftw)
{
	return remove(path);
}

static inline void remove_tmpdir(void)
{
	nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* tmp_path() - @name in the test's temporary directory (a static buffer). */
static inline const char *tmp_path(const char *name)
{
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/test-store.XXXXXX");
		if (!mkdtemp(tmpdir))
			abort();
		atexit(remove_tmpdir);
	}
	snprintf(pathbuf, sizeof(pathbuf), "%s/%s", tmpdir, name);
	return pathbuf;
}

/* pg_test_base() - LABD_TEST_PG, or NULL: the tests run on SQLite. */
static inline const char *pg_test_base(void)
{
	const char *base = getenv("LABD_TEST_PG");

	return base && *base ? base : NULL;
}

/* pg_test_db() - the database of state directory @dir: t_ and its name's alphanumerics. */
static inline void pg_test_db(const char *dir, char *buf, size_t len)
{
	const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	size_t n = 0;

	n = (size_t)snprintf(buf, len, "t_");
	for (; *name && n + 1 < len; name++)
		buf[n++] = (*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9') ? *name
											  : '_';
	buf[n] = '\0';
}

/* pg_test_createdb() - a new, empty database for state directory @dir. */
static inline void pg_test_createdb(const char *dir)
{
	char conninfo[512], db[64], sql[160];
	PGconn *c;

	pg_test_db(dir, db, sizeof(db));
	snprintf(conninfo, sizeof(conninfo), "%s dbname=postgres", pg_test_base());
	c = PQconnectdb(conninfo);
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", db);
	PQclear(PQexec(c, sql));
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", db);
	PQclear(PQexec(c, sql));
	PQfinish(c);
}

/* pg_test_count() - @sql's count in @dir's database, as another client sees it (never the store). */
static inline int pg_test_count(const char *dir, const char *sql)
{
	char conninfo[512], db[64];
	PGresult *res;
	PGconn *c;
	int n = -1;

	pg_test_db(dir, db, sizeof(db));
	snprintf(conninfo, sizeof(conninfo), "%s dbname=%s", pg_test_base(), db);
	c = PQconnectdb(conninfo);
	res = PQexec(c, sql);
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(c);
	return n;
}

/* state_dir() - the state directory @name, created if needed (a static buffer). */
static inline const char *state_dir(const char *name)
{
	const char *dir = tmp_path(name);

	if (mkdir(dir, 0700) == 0 && pg_test_base())
		pg_test_createdb(dir);
	return dir;
}

/* pg_test_conf() - the `store` group naming the database of @dir, in @cfg. */
static inline const config_setting_t *pg_test_conf(const char *dir, config_t *cfg)
{
	char db[64], text[768];

	pg_test_db(dir, db, sizeof(db));
	snprintf(text, sizeof(text),
		 "store = { driver = \"postgresql\"; conninfo = \"%s dbname=%s\"; timeout = 10; };",
		 pg_test_base(), db);
	config_init(cfg);
	if (config_read_string(cfg, text) != CONFIG_TRUE)
		abort();
	return config_setting_get_member(config_root_setting(cfg), "store");
}

/* open_at() - store_open() in state directory @dir: SQLite, or PostgreSQL (LABD_TEST_PG). */
static inline int open_at(const char *dir, struct store **ret)
{
	struct store_params p = { .state_dir = dir };
	struct diag diag = DIAG_INIT;
	config_t cfg;
	int r;

	if (pg_test_base())
		p.settings = pg_test_conf(dir, &cfg);
	r = store_open(&p, ret, &diag);
	if (pg_test_base())
		config_destroy(&cfg);
	diag_release(&diag);
	return r;
}

/* open_new() - a store in a new state directory @name, or NULL. */
static inline struct store *open_new(const char *name)
{
	struct store *st = NULL;

	if (open_at(state_dir(name), &st) < 0)
		return NULL;
	return st;
}

static inline int64_t add_job(struct store *st, const char *name, int priority)
{
	struct job_record rec = {
		.name = (char *)name,
		.device_type = "qemu-arm64",
		.priority = priority,
		.submitted = 1000,
		.definition = "job_name: x\n",
		.format = "yaml",
		.retries_left = 2,
	};

	if (store_job_insert(st, &rec) < 0)
		return -1;
	return rec.id;
}

/* Collects the ids (and names) a listing passes to its callback. */
struct seen {
	int64_t ids[64];
	char names[64][16];
	int n;
};

static inline int seen_job(const struct job_record *rec, void *ud)
{
	struct seen *s = ud;

	if (s->n < 64) {
		s->ids[s->n] = rec->id;
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", rec->name ? rec->name : "");
	}
	s->n++;
	return 0;
}

static inline int seen_device(const struct device_record *rec, void *ud)
{
	struct seen *s = ud;

	if (s->n < 64)
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", rec->name);
	s->n++;
	return 0;
}

#endif
