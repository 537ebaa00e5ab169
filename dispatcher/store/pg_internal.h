/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pg_internal.h -- the PostgreSQL store: struct pg_store and what the pg*.c
 * files share; only they include this file (and libpq-fe.h, through
 * pg_conn.h)
 *
 * pg.c opens the store (settings, connection, schema migrations under an
 * advisory lock) and holds the ops table; each pg_<table>.c has the SQL of
 * its table and implements its ops, in the same shape as sqlite_<table>.c.
 * Enums are stored as their jobstate.h names, as SQLite does, so that the
 * two databases read alike and `labd store migrate` copies rows as they are.
 *
 * Calls: pg_call() queues one statement on the store's connection
 * (pg_conn.h) and waits for its answer outside the loop's callbacks, or for
 * at most the store's `timeout` (labd.conf) inside them.
 */
#ifndef LABD_PG_INTERNAL_H
#define LABD_PG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/pg_conn.h"
#include "store/store.h"
#include "store/store_internal.h"

#define PG_MAX_ARGS 24
#define PG_DEFAULT_TIMEOUT 10	/* seconds a call waits for the database */
#define PG_DEFAULT_LEASE 30	/* seconds: host_lease */

struct pg_store {
	struct store store;	/* first: the interface */
	struct pg_conn *conn;
	struct loop *loop;
	char *host;		/* this host's name in the lab */
	uint64_t timeout;	/* usec a call waits */
	unsigned host_lease;	/* seconds */
	bool in_txn;		/* store_begin() sent BEGIN */
	bool patient;		/* pg_call() retries connecting until the timeout */
};

static inline struct pg_store *pg_of(struct store *st)
{
	return (struct pg_store *)st;
}

/* The text parameters of one statement ($1 .. $n); numbers are formatted in place. */
struct pg_args {
	int n;
	const char *v[PG_MAX_ARGS];
	char num[PG_MAX_ARGS][32];
};

/* pg_arg_text() - the next parameter: @s (borrowed; NULL is SQL NULL). */
void pg_arg_text(struct pg_args *a, const char *s);
void pg_arg_int(struct pg_args *a, int64_t v);
void pg_arg_bool(struct pg_args *a, bool v);
void pg_arg_double(struct pg_args *a, double v);

/* Reads the answer of a statement; a negative errno fails the call. */
typedef int (*pg_read_fn)(PGresult *res, void *userdata);

/*
 * pg_call() - run @sql with @a (NULL: none) and wait for its answer; @read
 * (may be NULL) reads it.  Inside a store_begin() transaction the statement
 * joins it, else it is a transaction of its own.  Returns 0, @read's error,
 * the statement's (pg_conn.h: -ENOENT, -EEXIST, -EIO logged with @op and the
 * server's message), -ENOTCONN when the database cannot be reached (logged),
 * or -ETIMEDOUT after the store's timeout.
 */
int pg_call(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	    pg_read_fn read, void *userdata);

/* pg_changed() - the rows an UPDATE or DELETE @res changed. */
int64_t pg_changed(PGresult *res);

/* pg_read_changed() - a pg_read_fn: -ENOENT when the statement changed no row. */
int pg_read_changed(PGresult *res, void *userdata);

/* pg_read_int() - a pg_read_fn: the first column of the first row into *(int64_t *)@userdata. */
int pg_read_int(PGresult *res, void *userdata);

/* Row @row, column @col of @res. */
int64_t pg_int(PGresult *res, int row, int col);
double pg_double(PGresult *res, int row, int col);
bool pg_bool(PGresult *res, int row, int col);
bool pg_null(PGresult *res, int row, int col);
const char *pg_value(PGresult *res, int row, int col);	/* NULL for SQL NULL */

/* A text column of a record type: its result column and where it goes. */
struct pg_text {
	int col;
	size_t offset;		/* of a char * in the record */
};

/* pg_read_texts() - copy @n text columns of @row into @rec; -ENOMEM leaves it releasable. */
int pg_read_texts(PGresult *res, int row, void *rec, const struct pg_text *t, size_t n);

/* pg_bad_value() - log a stored value labd cannot read (an unknown state name); -EIO. */
int pg_bad_value(const char *what, const char *value);

/* How a row of a query becomes a record of store.h. */
struct pg_reader {
	const struct store_row_type *type;
	int (*read)(PGresult *res, int row, void *rec);
};

/* Read every row of @res into @rows (of reader->type); on failure @rows is left empty. */
struct pg_rows_read {
	const struct pg_reader *reader;
	struct store_rows *rows;
};
int pg_read_rows(PGresult *res, void *userdata);	/* @userdata: a struct pg_rows_read */

/* Read the one row of @res into @rec (-ENOENT without one). */
struct pg_one_read {
	const struct pg_reader *reader;
	void *rec;
};
int pg_read_one(PGresult *res, void *userdata);	/* @userdata: a struct pg_one_read */

/* pg_list() - pg_call() of a query whose rows go to @rows through @reader. */
int pg_list(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	    const struct pg_reader *reader, struct store_rows *rows);

/* pg_get() - pg_call() of a query of one row into @ret (written only on success). */
int pg_get(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	   const struct pg_reader *reader, void *ret);

/* ---- the schema (pg_schema.c) ---- */

/* pg_migrate() - bring the schema to the newest version, under an advisory lock. */
int pg_migrate(struct pg_store *ps);

/* ---- the ops of each table (pg_<table>.c), listed in pg.c's ops table ---- */

int pg_job_insert(struct store *st, struct job_record *rec);
int pg_job_get(struct store *st, int64_t id, struct job_record *ret);
int pg_job_list(struct store *st, const struct job_filter *f, struct store_rows *rows);
int pg_job_queued(struct store *st, struct store_rows *rows);
int pg_job_running(struct store *st, struct store_rows *rows);
int pg_job_start(struct store *st, int64_t id, const char *device, uint64_t when);
int pg_job_set_state(struct store *st, int64_t id, enum job_state state);
int pg_job_finish(struct store *st, int64_t id, enum job_health health, enum error_type type,
		  const char *msg, uint64_t when);
int pg_job_requeue(struct store *st, int64_t id, bool recovered, const char *why);
int pg_job_count(struct store *st, enum job_state state, int64_t *ret);
int pg_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret);

int pg_device_get(struct store *st, const char *name, struct device_record *ret);
int pg_device_put(struct store *st, const struct device_record *rec);
int pg_device_list(struct store *st, struct store_rows *rows);

int pg_result_add(struct store *st, struct result_record *rec);
int pg_result_list(struct store *st, int64_t job_id, struct store_rows *rows);

int pg_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		 const char *data, int64_t *ret_seq);
int pg_event_list(struct store *st, int64_t job_id, int64_t after, struct store_rows *rows);

int pg_reservation_insert(struct store *st, struct reservation_record *rec);
int pg_reservation_get(struct store *st, int64_t id, struct reservation_record *ret);
int pg_reservation_waiting(struct store *st, struct store_rows *rows);
int pg_reservation_active(struct store *st, struct store_rows *rows);
int pg_reservation_recent(struct store *st, unsigned limit, struct store_rows *rows);
int pg_reservation_activate(struct store *st, int64_t id, const char *device, uint64_t started,
			    uint64_t until);
int pg_reservation_renew(struct store *st, int64_t id, uint64_t until);
int pg_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason);

#endif
