/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store_internal.h -- struct store and the helpers shared by store*.c only
 *
 * Nothing outside dispatcher/store/store*.c includes this file: it is the only
 * place that names SQLite.  store.c opens the database, migrates the schema
 * and prepares every statement listed in enum store_stmt; each store_<table>.c
 * supplies the SQL of its own statements (store_<table>_sql[]) and reads its
 * own rows.
 *
 * Statement protocol, per call:
 *   1. take st->stmt[STMT_...] (always reset, no bindings),
 *   2. bind the parameters (text with SQLITE_STATIC: the caller's strings),
 *   3. run it with store_run(), store_update() or store_rows_read(), which
 *      step it, reset it and clear its bindings, also on failure; when a bind
 *      fails, call store_fail() instead.
 * A statement is thus never left half-stepped (that would hold a read
 * snapshot open and stall WAL checkpoints) nor pointing at freed strings.
 */
#ifndef LABD_STORE_INTERNAL_H
#define LABD_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/store.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

enum store_stmt {
	/* store.c */
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_SAVEPOINT,
	STMT_RELEASE,
	STMT_ROLLBACK_TO,
	/* store_jobs.c */
	STMT_JOB_INSERT,
	STMT_JOB_GET,
	STMT_JOB_LIST,
	STMT_JOB_QUEUED,
	STMT_JOB_RUNNING,
	STMT_JOB_START,
	STMT_JOB_SET_STATE,
	STMT_JOB_FINISH,
	STMT_JOB_REQUEUE,
	STMT_JOB_COUNT,
	/* store_devices.c */
	STMT_DEVICE_GET,
	STMT_DEVICE_PUT,
	STMT_DEVICE_LIST,
	/* store_results.c */
	STMT_RESULT_ADD,
	STMT_RESULT_LIST,
	STMT_RESULT_DROP_JOB,
	/* store_events.c */
	STMT_EVENT_ADD,
	STMT_EVENT_SEQ,
	STMT_EVENT_LIST,
	/* store_reservations.c */
	STMT_RESERVATION_INSERT,
	STMT_RESERVATION_GET,
	STMT_RESERVATION_WAITING,
	STMT_RESERVATION_ACTIVE,
	STMT_RESERVATION_RECENT,
	STMT_RESERVATION_ACTIVATE,
	STMT_RESERVATION_RENEW,
	STMT_RESERVATION_END,
	STMT__COUNT
};

/* The SQL text of one prepared statement. */
struct store_sql {
	enum store_stmt id;
	const char *sql;
};

/* Terminated by an entry with a NULL sql. */
extern const struct store_sql store_jobs_sql[];
extern const struct store_sql store_devices_sql[];
extern const struct store_sql store_results_sql[];
extern const struct store_sql store_events_sql[];
extern const struct store_sql store_reservations_sql[];

struct store {
	sqlite3 *db;
	char *path;
	unsigned depth;		/* store_begin() nesting; BEGIN at 1, COMMIT back at 0 */
	sqlite3_stmt *stmt[STMT__COUNT];
};

/*
 * store_error() - turn the connection's last error into a negative errno:
 * -ENOMEM, -ENOENT for a foreign key that points nowhere (a job that does not
 * exist), otherwise -EIO after logging "cannot @op in '<path>': <sqlite msg>".
 */
int store_error(struct store *st, const char *op);

/* store_reset() - reset @s and clear its bindings. */
void store_reset(sqlite3_stmt *s);

/* store_fail() - store_error(), then store_reset(@s); for failed binds. */
int store_fail(struct store *st, sqlite3_stmt *s, const char *op);

/* store_run() - step the bound write @s to its end and reset it. */
int store_run(struct store *st, sqlite3_stmt *s, const char *op);

/*
 * store_row() - step the bound query @s that reads one row: 0 with @s on the
 * row (read it, then store_reset()), -ENOENT when there is none (reset), or
 * an error as store_error() (reset).
 */
int store_row(struct store *st, sqlite3_stmt *s, const char *op);

/* store_update() - store_run(), and -ENOENT when no row was changed. */
int store_update(struct store *st, sqlite3_stmt *s, const char *op);

/*
 * store_savepoint_begin() / store_savepoint_end() - make the statements of one
 * call atomic, inside or outside a store_begin() transaction.
 * store_savepoint_end() keeps the changes when @r >= 0, undoes them otherwise,
 * and returns @r (or the release's own error).  Savepoints do not nest.
 */
int store_savepoint_begin(struct store *st);
int store_savepoint_end(struct store *st, int r);

/* A text column of a record type: its result column and where it goes. */
struct store_text {
	int col;
	size_t offset;		/* of a char * in the record */
};

/*
 * store_read_texts() - copy @n text columns of the current row of @s into
 * @rec (NULL for SQL NULL).  On -ENOMEM the copies made so far stay in @rec
 * for store_free_texts().
 */
int store_read_texts(sqlite3_stmt *s, void *rec, const struct store_text *t, size_t n);

/* store_free_texts() - free the @n text fields of @rec named by @t. */
void store_free_texts(void *rec, const struct store_text *t, size_t n);

/* store_bad_value() - log a stored value labd cannot read (an unknown state name); -EIO. */
int store_bad_value(struct store *st, const char *what, const char *value);

/* How store_rows_read() reads and frees one record type. */
struct store_row_type {
	size_t size;
	int (*read)(struct store *st, sqlite3_stmt *s, void *rec);	/* 0 or -errno */
	void (*release)(void *rec);
};

/* Rows read in full before any callback runs, so callbacks may use the store. */
struct store_rows {
	const struct store_row_type *type;
	char *v;		/* n records of type->size bytes */
	size_t n;
	size_t alloc;
};

/*
 * store_rows_read() - step the bound query @s to its end, reading every row
 * into @rows (rows->type set, the rest zero), and reset it.  type->read
 * gets a zeroed record and must leave it releasable when it fails.  On
 * failure @rows is left empty.  Release with store_rows_release().
 */
int store_rows_read(struct store *st, sqlite3_stmt *s, const char *op, struct store_rows *rows);

/* store_rows_at() - the @i-th record. */
void *store_rows_at(const struct store_rows *rows, size_t i);

/* store_rows_release() - release every record and the array; @rows becomes empty. */
void store_rows_release(struct store_rows *rows);

/* store_result_drop_job() - delete the results of @job_id (store_results.c). */
int store_result_drop_job(struct store *st, int64_t job_id);

#endif
