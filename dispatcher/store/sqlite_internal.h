/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sqlite_internal.h -- the SQLite store: struct sqlite_store and what the
 * sqlite*.c files share; only they include this file, and sqlite3.h
 *
 * sqlite.c opens the database, migrates the schema, prepares every
 * statement listed in enum sqlite_stmt and holds the ops table; each
 * sqlite_<table>.c supplies the SQL of its own statements
 * (sqlite_<table>_sql[]), reads its own rows and implements its ops.
 *
 * Statement protocol, per call:
 *   1. take sq->stmt[STMT_...] (always reset, no bindings),
 *   2. bind the parameters (text with SQLITE_STATIC: the caller's strings),
 *   3. run it with sqlite_run(), sqlite_update(), sqlite_read_one() or
 *      sqlite_read_rows(), which step it, reset it and clear its bindings,
 *      also on failure; when a bind fails, call sqlite_fail() instead.
 * A statement is thus never left half-stepped (that would hold a read
 * snapshot open and stall WAL checkpoints) nor pointing at freed strings.
 */
#ifndef LABD_SQLITE_INTERNAL_H
#define LABD_SQLITE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_internal.h"

enum sqlite_stmt {
	/* sqlite.c */
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_SAVEPOINT,
	STMT_RELEASE,
	STMT_ROLLBACK_TO,
	/* sqlite_jobs.c */
	STMT_JOB_INSERT,
	STMT_JOB_GET,
	STMT_JOB_QUEUED,
	STMT_JOB_RUNNING,
	STMT_JOB_START,
	STMT_JOB_SET_STATE,
	STMT_JOB_FINISH,
	STMT_JOB_REQUEUE,
	STMT_JOB_PRUNE,
	/* sqlite_devices.c */
	STMT_DEVICE_GET,
	STMT_DEVICE_PUT,
	STMT_DEVICE_LIST,
	/* sqlite_results.c */
	STMT_RESULT_ADD,
	STMT_RESULT_LIST,
	STMT_RESULT_DROP_JOB,
	/* sqlite_events.c */
	STMT_EVENT_ADD,
	STMT_EVENT_SEQ,
	STMT_EVENT_LIST,
	STMT_EVENT_DROP_JOB,
	STMT_DELIVERED_SET,
	STMT_DELIVERED_GET,
	STMT_DELIVERED_DROP_JOB,
	STMT_DELIVERED_LIST,
	/* sqlite_reservations.c */
	STMT_RESERVATION_INSERT,
	STMT_RESERVATION_GET,
	STMT_RESERVATION_WAITING,
	STMT_RESERVATION_ACTIVE,
	STMT_RESERVATION_RECENT,
	STMT_RESERVATION_ACTIVATE,
	STMT_RESERVATION_RENEW,
	STMT_RESERVATION_END,
	/* sqlite_queue.c */
	STMT_CLAIM_JOB,
	STMT_CLAIM_RESERVATION,
	STMT_TAKE_JOB,
	STMT_TAKE_RESERVATION,
	STMT_QUEUE_POSITION,
	STMT_JOB_POSITION,
	STMT_QUEUE_SUMMARY,
	STMT_COUNT_STATE,
	STMT_COUNT_STATE_TYPE,
	STMT_COUNT_TYPE,
	STMT_COUNT_ALL,

	STMT_TOKEN_ADD,
	STMT_TOKEN_FIND,
	STMT_TOKEN_LIST,
	STMT__COUNT
};

/*
 * The job list's statements, one per shape of struct job_filter: which
 * conditions it has (sqlite_jobs.c writes the SQL of each, prepared the
 * first time it is used).
 */
enum {
	JOBLIST_STATE = 1 << 0,
	JOBLIST_DEVICE = 1 << 1,
	JOBLIST_TYPE = 1 << 2,
	JOBLIST_SUBMITTER = 1 << 3,
	JOBLIST_HEALTH = 1 << 4,	/* one health */
	JOBLIST_HEALTHS = 1 << 5,	/* several */
	JOBLIST_AFTER = 1 << 6,		/* the page above after_id, else below before_id */
	JOBLIST_COUNT = 1 << 7,		/* count(*) of the matches instead of a page */
	JOBLIST__SHAPES = 1 << 8,
};

/* The columns every query of jobs reads (sqlite_job_read()), in this order. */
#define JOB_COLUMNS                                                                        \
	"id, name, device_type, tags, priority, submitted, started, ended, state, health, " \
	"error_type, error_msg, device, definition, format, filename, submitter, attempt, "  \
	"retries_left, recovered, results_pass, results_fail, results_skip, "                \
	"results_unknown, last_error, session, avoid, log_removed, history_removed"

/* The columns every query of reservations reads (sqlite_reservation_read()). */
#define RESERVATION_COLUMNS                                                                 \
	"id, holder, board, device_type, tags, priority, duration, submitted, state, device, " \
	"started, until, ended, end_reason"

/* The SQL text of one prepared statement. */
struct sqlite_sql {
	enum sqlite_stmt id;
	const char *sql;
};

/* Terminated by an entry with a NULL sql. */
extern const struct sqlite_sql sqlite_jobs_sql[];
extern const struct sqlite_sql sqlite_devices_sql[];
extern const struct sqlite_sql sqlite_results_sql[];
extern const struct sqlite_sql sqlite_events_sql[];
extern const struct sqlite_sql sqlite_reservations_sql[];
extern const struct sqlite_sql sqlite_queue_sql[];

struct loop;
struct loop_source;
struct sqlite_waiter;

struct sqlite_store {
	struct store store;	/* first: the interface */
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[STMT__COUNT];
	sqlite3_stmt *joblist[JOBLIST__SHAPES];	/* prepared on first use */
	/* batching (with a loop): the writes of one iteration in one transaction */
	struct loop_source *commit;	/* defer: commit the batch */
	bool batch;		/* a batch transaction is open */
	struct sqlite_waiter *waiters;	/* store_sync() completions, in order */
	struct sqlite_waiter **waiters_tail;
};

/* sqlite_of() - the SQLite store behind @st. */
static inline struct sqlite_store *sqlite_of(struct store *st)
{
	return (struct sqlite_store *)st;
}

/*
 * sqlite_error() - turn the connection's last error into a negative errno:
 * -ENOMEM, -ENOENT for a foreign key that points nowhere (a job that does not
 * exist), otherwise -EIO after logging "cannot @op in '<path>': <sqlite msg>".
 */
int sqlite_error(struct sqlite_store *sq, const char *op);

/*
 * sqlite_write() - a write op is about to run: with a loop and outside
 * store_begin(), open the iteration's batch if it is not open yet (its
 * commit is deferred to the next iteration).  Without one, the write
 * commits by itself.
 */
void sqlite_write(struct sqlite_store *sq);

/* sqlite_batch.c: batching (sqlite_write() above), transactions and store_sync() */
int sqlite_batch_init(struct sqlite_store *sq, struct loop *loop);
void sqlite_batch_close(struct sqlite_store *sq);	/* commits an open batch */
int sqlite_begin(struct store *st);
int sqlite_commit(struct store *st);	/* a failed commit rolls back */
int sqlite_sync(struct store *st, store_done_fn done, void *userdata);
void sqlite_forget(struct store *st, void *userdata);

/*
 * sqlite_joblist_sql() - the SQL of job-list shape @shape (JOBLIST_* bits)
 * into @buf.  Parameters: ?1 state, ?2 device, ?3 device type, ?4
 * submitter, ?5 health (one name, or ",a,b," for several), ?6 cursor id,
 * ?7 limit, ?8 offset.
 */
void sqlite_joblist_sql(unsigned shape, char *buf, size_t len);

/* sqlite_job_read() - the current row of a JOB_COLUMNS query into the zeroed @rec. */
int sqlite_job_read(struct sqlite_store *sq, sqlite3_stmt *s, void *rec);

/* sqlite_reservation_read() - the current row of a RESERVATION_COLUMNS query into @rec. */
int sqlite_reservation_read(struct sqlite_store *sq, sqlite3_stmt *s, void *rec);

/* sqlite_reset() - reset @s and clear its bindings. */
void sqlite_reset(sqlite3_stmt *s);

/* sqlite_fail() - sqlite_error(), then sqlite_reset(@s); for failed binds. */
int sqlite_fail(struct sqlite_store *sq, sqlite3_stmt *s, const char *op);

/* sqlite_run() - step the bound write @s to its end and reset it. */
int sqlite_run(struct sqlite_store *sq, sqlite3_stmt *s, const char *op);

/* sqlite_insert() - sqlite_run() of the bound INSERT @s; the new row's id in *@ret_id. */
int sqlite_insert(struct sqlite_store *sq, sqlite3_stmt *s, const char *op, int64_t *ret_id);

/* sqlite_update() - sqlite_run(), and -ENOENT when no row was changed. */
int sqlite_update(struct sqlite_store *sq, sqlite3_stmt *s, const char *op);

/*
 * sqlite_savepoint_begin() / sqlite_savepoint_end() - make the statements of
 * one call atomic, inside or outside a store_begin() transaction.
 * sqlite_savepoint_end() keeps the changes when @r >= 0, undoes them
 * otherwise, and returns @r (or the release's own error).  Savepoints do not
 * nest.
 */
int sqlite_savepoint_begin(struct sqlite_store *sq);
int sqlite_savepoint_end(struct sqlite_store *sq, int r);

/* A text column of a record type: its result column and where it goes. */
struct sqlite_text {
	int col;
	size_t offset;		/* of a char * in the record */
};

/*
 * sqlite_read_texts() - copy @n text columns of the current row of @s into
 * @rec (NULL for SQL NULL).  On -ENOMEM the copies made so far stay in @rec
 * for its release function.
 */
int sqlite_read_texts(sqlite3_stmt *s, void *rec, const struct sqlite_text *t, size_t n);

/* sqlite_bad_value() - log a stored value labd cannot read (an unknown state name); -EIO. */
int sqlite_bad_value(struct sqlite_store *sq, const char *what, const char *value);

/* How the current row of a query becomes a record of store.h. */
struct sqlite_reader {
	const struct store_row_type *type;
	/* fill the zeroed @rec; on failure leave it releasable by type->release */
	int (*read)(struct sqlite_store *sq, sqlite3_stmt *s, void *rec);
};

/*
 * sqlite_read_one() - step the bound query @s that reads one row into @ret
 * (written only on success) and reset it: 0, -ENOENT when there is no row,
 * or an error as sqlite_error().
 */
int sqlite_read_one(struct sqlite_store *sq, sqlite3_stmt *s, const char *op,
		    const struct sqlite_reader *reader, void *ret);

/*
 * sqlite_read_int() - step the bound query @s that reads at most one
 * integer and reset it: 0 with *@ret, -ENOENT when there is no row (*@ret
 * untouched), or an error as sqlite_error().
 */
int sqlite_read_int(struct sqlite_store *sq, sqlite3_stmt *s, const char *op, int64_t *ret);

/*
 * sqlite_read_rows() - step the bound query @s to its end, appending every
 * row to @rows (of reader->type), and reset it.  On failure @rows is left
 * empty.
 */
int sqlite_read_rows(struct sqlite_store *sq, sqlite3_stmt *s, const char *op,
		     const struct sqlite_reader *reader, struct store_rows *rows);

/* sqlite_result_drop_job() - delete the results of @job_id (sqlite_results.c). */
int sqlite_result_drop_job(struct sqlite_store *sq, int64_t job_id);

/* sqlite_event_drop_job() - delete the events of @job_id (sqlite_events.c). */
int sqlite_event_drop_job(struct sqlite_store *sq, int64_t job_id);

/* sqlite_delivered_drop_job() - forget how far @job_id's events were delivered. */
int sqlite_delivered_drop_job(struct sqlite_store *sq, int64_t job_id);

/* sqlite_job_prune() - store_job_prune() (sqlite_jobs.c). */
int sqlite_job_prune(struct store *st, int64_t id, uint64_t log_removed,
		     uint64_t history_removed);

/* ---- the ops of each table (sqlite_<table>.c), listed in sqlite.c's ops table ---- */

int sqlite_job_insert(struct store *st, struct job_record *rec);
int sqlite_job_get(struct store *st, int64_t id, struct job_record *ret);
int sqlite_job_list(struct store *st, const struct job_filter *f, struct store_rows *rows);
int sqlite_job_queued(struct store *st, struct store_rows *rows);
int sqlite_job_running(struct store *st, struct store_rows *rows);
int sqlite_job_start(struct store *st, int64_t id, const char *device, uint64_t when);
int sqlite_job_set_state(struct store *st, int64_t id, enum job_state state);
int sqlite_job_finish(struct store *st, int64_t id, enum job_health health,
		      enum error_type type, const char *msg, uint64_t when);
int sqlite_job_requeue(struct store *st, int64_t id, bool recovered, const char *why);
int sqlite_job_count(struct store *st, enum job_state state, int64_t *ret);	/* sqlite_joblist.c */
int sqlite_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret);

int sqlite_device_get(struct store *st, const char *name, struct device_record *ret);
int sqlite_device_put(struct store *st, const struct device_record *rec);
int sqlite_device_list(struct store *st, struct store_rows *rows);

extern const struct sqlite_sql sqlite_tokens_sql[];	/* sqlite_tokens.c */
int sqlite_token_add(struct store *st, const struct token_record *rec);
int sqlite_token_find(struct store *st, const char *hash, struct token_record *ret);
int sqlite_token_list(struct store *st, struct store_rows *rows);

int sqlite_result_add(struct store *st, struct result_record *rec);
int sqlite_result_list(struct store *st, int64_t job_id, struct store_rows *rows);

int sqlite_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		     const char *data, int64_t *ret_seq);
int sqlite_event_list(struct store *st, int64_t job_id, int64_t after, struct store_rows *rows);
int sqlite_delivered_set(struct store *st, const char *backend, const char *receiver,
			 int64_t job_id, int64_t seq);
int sqlite_delivered_get(struct store *st, const char *backend, const char *receiver,
			 int64_t job_id, int64_t *ret);
int sqlite_delivered_list(struct store *st, struct store_rows *rows);

int sqlite_reservation_insert(struct store *st, struct reservation_record *rec);
int sqlite_reservation_get(struct store *st, int64_t id, struct reservation_record *ret);
int sqlite_reservation_waiting(struct store *st, struct store_rows *rows);
int sqlite_reservation_active(struct store *st, struct store_rows *rows);
int sqlite_reservation_recent(struct store *st, unsigned limit, struct store_rows *rows);
int sqlite_reservation_activate(struct store *st, int64_t id, const char *device,
				uint64_t started, uint64_t until);
int sqlite_reservation_renew(struct store *st, int64_t id, uint64_t until);
int sqlite_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason);

/*
 * sqlite_commit_batch() - commit the writes of this iteration now (outside
 * store_begin()), for what a caller is told at once and must not be rolled
 * back later (a claim).  Returns 0 or the commit's error (then rolled back).
 */
int sqlite_commit_batch(struct sqlite_store *sq);
int sqlite_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
		 void *userdata);
int sqlite_queue_position(struct store *st, int64_t id, int64_t *ret);
int sqlite_job_position(struct store *st, int64_t id, int64_t *ret);
int sqlite_queue_summary(struct store *st, struct store_rows *rows);

#endif
