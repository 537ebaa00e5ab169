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

#define PG_MAX_ARGS 32
#define PG_DEFAULT_TIMEOUT 10	/* seconds a call waits for the database */
#define PG_DEFAULT_LEASE 30	/* seconds: host_lease */
#define PG_IDS_AHEAD 64		/* ids fetched ahead per sequence, at first (ids_ahead) */
#define PG_IDS_MAX 1024		/* ... and at most, after bursts outran the refill */
#define PG_EVENT_SEQS_KEPT 1024	/* jobs not running here whose last event number is kept */
#define PG_COUNTS_AGE (1000 * 1000ULL)	/* usec: kept job counts asked again after */
#define PG_COUNTED_STATES JOB_STATE_FINISHED	/* the states whose counts are kept */
#define PG_CLAIM_DOUBTS 8	/* a board's claims whose answer was lost, looked for again */
/*
 * NOTIFY: a queue entry came or went back.  Its payload is the entry, a JSON
 * object {"job": ID or "reservation": ID, "type": "...", "tags": "[...]",
 * "board": "...", "avoid": "..."} (tags as JSON text, the last three may be
 * null): the other hosts make one of their free boards that fits it claim.
 * No payload (a host reaped): every free board claims.
 */
#define PG_CHANNEL_QUEUE "labd_queue"
/* a queue entry told to every host: $1 its payload (pg_queue_payload()) */
#define PG_SQL_NOTIFY_QUEUE "SELECT pg_notify('" PG_CHANNEL_QUEUE "', $1)"
#define PG_CHANNEL_TOKENS "labd_tokens"	/* NOTIFY: a token was added */
/* NOTIFY: a host registered a board; the payload is its device type */
#define PG_CHANNEL_BOARDS "labd_boards"

struct pg_entry;
struct pg_claim;
struct pg_reads;
struct pg_doubt;
struct pg_event_seqs;

/* Ids of a sequence fetched ahead, for inserts that return at once (pg_ids.c). */
struct pg_ids {
	const char *sequence;	/* "jobs_id_seq" ... */
	struct pg_store *ps;
	int64_t v[PG_IDS_MAX];	/* v[first] .. v[first + n - 1] */
	unsigned first, n;
	unsigned block;		/* a refill tops the pool up to this many */
	bool fetching;		/* a refill is on its way */
	bool ran_out;		/* none was left for a taker while it was */
	int err;		/* the last refill failed: told to the next taker that finds none */
	struct pg_reads **waits;	/* read contexts held until the refill is in */
	unsigned n_waits, alloc_waits;
};

struct pg_store {
	struct store store;	/* first: the interface */
	struct pg_conn *conn;
	/* with a loop: the claims that need not see this host's writes (pg_queue.c) */
	struct pg_conn *claims_conn;
	struct loop *loop;	/* NULL: every call waits (tools, unit tests) */
	char *host;		/* this host's name in the lab */
	char *url;		/* its API, for the other hosts, or NULL */
	char *lab_secret;	/* store_lab_secret(), or NULL (a tool) */
	void (*changed)(void *userdata);	/* store_params.changed */
	void (*queued)(const struct store_queued *q, void *userdata);	/* .queued */
	void (*fenced_fn)(void *userdata);	/* store_params.fenced */
	void (*event_fn)(const struct event_record *ev, void *userdata);	/* .event */
	void *changed_userdata;
	bool fenced;		/* reaped by another host: writes dropped (pg_host_fence()) */
	struct loop_source *lease_timer;
	uint64_t timeout;	/* usec a call waits */
	unsigned host_lease;	/* seconds */
	unsigned ids_ahead;	/* the smallest block of ids fetched ahead (pg_ids.c) */
	uint64_t up_since;	/* loop time the connection is up since: reaping waits a lease */
	bool in_txn;		/* inside store_begin() .. store_commit() */
	bool patient;		/* pg_call() retries connecting until the timeout */
	bool opened;		/* pg_open() done: the writer may resynchronise */
	/* the writer (pg_writer.c) */
	int journal_fd;
	struct pg_entry *pending, *pending_tail;	/* not known to be in the database */
	int64_t seq;		/* of the last entry */
	int64_t applied;	/* the database has every entry up to this one */
	bool in_step;		/* the database's position is known: entries are sent */
	unsigned group_len;	/* entries since the last marker */
	struct pg_sync_wait *sync_waits;	/* store_sync() callers, in seq order */
	struct loop_source *sync_timer;	/* the first wait's PG_SYNC_WAIT_MAX */
	struct loop_source *group_end;	/* ends the open group after this loop turn */
	struct pg_ids job_ids, reservation_ids;
	struct pg_event_seqs *event_seqs;	/* the numbers of jobs' last events, or NULL */
	/* the claims (pg_queue.c) */
	struct pg_claim *claims;	/* on their way */
	struct pg_doubt *doubts;	/* boards whose claim's answer was lost */
	/* the counts of jobs not finished, for the loop (pg_jobs.c) */
	int64_t counts[PG_COUNTED_STATES];
	uint64_t counts_at;	/* monotonic usec of the last answer, 0: none yet */
	bool counting;
	/* every token of the lab, for authenticating without waiting (pg_tokens.c) */
	struct store_rows tokens;
	bool tokens_loading;
	/* the device types of the other hosts' boards, kept for the loop (pg_hosts.c) */
	char **other_types;
	char **own_types;	/* this host's, told to the others */
	bool types_known;	/* other_types was read once */
	bool types_loading, types_again;
	/* reads that complete later (pg_reads.c) */
	struct pg_reads *reads;		/* the contexts of callers waiting for answers */
	struct pg_reads *reading;	/* between store_read_begin() and _end(), or NULL */
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
 * or -ETIMEDOUT after the store's timeout.  Inside a read context that may
 * answer it later (pg_read_deferred()): pg_read_in_context().
 */
int pg_call(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	    pg_read_fn read, void *userdata);

/*
 * pg_call_now() - pg_call() that is never answered later, also inside a read
 * context: the read a write makes for itself (an event's number for a job
 * this host never saw), which the write cannot go on without.
 */
int pg_call_now(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
		pg_read_fn read, void *userdata);

/* pg_log_call_error() - log a failed call (-ENOTCONN, -ETIMEDOUT, -EIO with @msg). */
void pg_log_call_error(struct pg_store *ps, const char *op, int err, const char *msg);

/* ---- reads that complete later (pg_reads.c) ---- */

/*
 * pg_read_in_context() - pg_call() inside a read context (ps->reading): the
 * answer kept from a previous run, or the read sent and -EINPROGRESS.
 */
int pg_read_in_context(struct pg_store *ps, const char *op, const char *sql,
		       const struct pg_args *a, pg_read_fn read, void *userdata);

/*
 * pg_read_answered() - what the current run of the current read context
 * read with @sql and @a, answered (borrowed, valid until the context's
 * end), or NULL: for a write of the run that goes on from what it read.
 */
PGresult *pg_read_answered(const struct pg_store *ps, const char *sql, const struct pg_args *a);

/*
 * pg_read_deferred() - whether a read now goes in the read context (answered
 * later, the run done again): there is one, and its current run wrote
 * nothing yet.  A read after a write of the same run waits for its answer
 * instead, so that the write is never made twice.
 */
bool pg_read_deferred(const struct pg_store *ps);

/*
 * pg_read_writing() - a write is being made: inside a read context whose
 * current run sent a read, -EINPROGRESS (that run is dropped and done again:
 * it must not act; the write is made by the run that has every answer);
 * else 0, the run noted as one that wrote (pg_read_deferred()).
 */
int pg_read_writing(struct pg_store *ps, const char *op);

/*
 * pg_read_hold() - the current read context's run waits for something else
 * than a read of its own (the refill of ids: pg_ids.c): the run counts as
 * one that sent a read (api_reply() drops its answer, its writes are
 * refused) and the context completes once pg_read_release() was called for
 * each hold and every read is answered.  Returns the context, kept valid
 * until its release (also when store_forget() dropped it meanwhile), or
 * NULL when no run may wait (pg_read_deferred() is false: no context, or
 * its run wrote already).
 */
struct pg_reads *pg_read_hold(struct pg_store *ps);

/* pg_read_release() - what @ctx held for came (or failed); may complete or free @ctx. */
void pg_read_release(struct pg_reads *ctx);

/* The ops store_read_begin(), store_read_end(), store_read_pending(). */
int pg_read_begin(struct store *st, store_done_fn done, void *userdata);
int pg_read_end(struct store *st);
bool pg_read_pending(const struct store *st);

/* pg_reads_forget() - store_forget() of read contexts; pg_reads_free() at close. */
void pg_reads_forget(struct pg_store *ps, void *userdata);
void pg_reads_free(struct pg_store *ps);

/*
 * pg_queue_payload() - PG_CHANNEL_QUEUE's payload of an entry (caller frees),
 * or NULL; @first: the host that claims it first (the others leave it to
 * it until pg_announce()), or NULL.
 */
char *pg_queue_payload(const char *kind, int64_t id, const char *device_type, const char *tags,
		       const char *board, const char *first);
int pg_announce(struct store *st, int64_t id, const char *device_type, const char *tags);

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

/*
 * pg_available_now() - store_available(): the connection is up and the
 * writer in step (what this host wrote before is on its way ahead).
 */
bool pg_available_now(const struct pg_store *ps);

/* ---- writes (pg_writer.c) ---- */

/*
 * pg_write() - a write: with a loop it is journaled and queued, returns 0 at
 * once and reaches the database in order (@read is not called); without
 * one it is pg_call().
 */
int pg_write(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	     pg_read_fn read, void *userdata);

/*
 * pg_write_notify() - pg_write(), and when @notify_sql is given, that
 * statement with @payload in the same transaction (a NOTIFY to the other
 * hosts, sent when the write commits).
 */
int pg_write_notify(struct pg_store *ps, const char *op, const char *sql,
		    const struct pg_args *a, pg_read_fn read, void *userdata,
		    const char *notify_sql, const char *payload);

/* pg_writing_behind() - whether writes return before the database has them. */
bool pg_writing_behind(const struct pg_store *ps);

/* pg_writer_mark() - close the group of writes since the last (store_commit()). */
int pg_writer_mark(struct pg_store *ps);

/*
 * pg_writer_end_group() - close the group of writes made since the last
 * outside a transaction (pg_writer_mark()), unless in one: before anything
 * else is sent on the store's connection, and before a transaction starts.
 */
void pg_writer_end_group(struct pg_store *ps);

/* pg_writer_open() - the journal of @state_dir, and what it still holds. */
int pg_writer_open(struct pg_store *ps, const char *state_dir);
void pg_writer_close(struct pg_store *ps);

/* pg_writer_state() - the connection came up (resend what the database lacks) or went down. */
void pg_writer_state(struct pg_store *ps, bool up);

/*
 * pg_writer_sync() - store_sync(): 0 when every write so far is in the
 * database (or only journaled: the database is away), else 1 and @done is
 * called once the database committed them, or after PG_SYNC_WAIT_MAX
 * (pg_writer.c) when it is slow: they are journaled.
 */
int pg_writer_sync(struct pg_store *ps, store_done_fn done, void *userdata);
/* pg_writer_forget() - drop @userdata's pg_writer_sync() waits, never calling them. */
void pg_writer_forget(struct pg_store *ps, void *userdata);

/* pg_writer_backlog() - entries the database does not have yet. */
unsigned pg_writer_backlog(const struct pg_store *ps);

/* ---- ids ahead (pg_ids.c) ---- */

/*
 * pg_ids_take() - the next id of @ids in *@ret, never waiting for the
 * database: 0, or when none is left ahead (a refill is sent from the loop)
 * -EINPROGRESS inside a read context, held until the refill is in
 * (pg_read_hold(): the caller runs again and takes one then); -EAGAIN
 * when the caller cannot run again (no read context, or its run wrote
 * already); -ENOTCONN while the database is away; the refill's error
 * once when it failed.  -EINPROGRESS, taking nothing, in a run that sent a
 * read (its write is refused anyway: pg_read_writing()).
 */
int pg_ids_take(struct pg_store *ps, struct pg_ids *ids, int64_t *ret);

/* pg_ids_fill() - fetch ids ahead for every sequence, waiting (at open). */
int pg_ids_fill(struct pg_store *ps);

/* ---- event numbers (pg_event_seqs.c) ---- */

/* pg_event_seq_next() - the number of @job_id's next event, or 0 when unknown. */
int64_t pg_event_seq_next(struct pg_store *ps, int64_t job_id);

/*
 * pg_event_seq_note() - @job_id's events are numbered up to @seq (a larger
 * number noted before stays): kept while among the PG_EVENT_SEQS_KEPT last
 * used, unless live.
 */
void pg_event_seq_note(struct pg_store *ps, int64_t job_id, int64_t seq);

/*
 * pg_event_seq_live() - job @job_id runs on this host (claimed or started
 * here), its events numbered up to @seq (< 0: not known, then only a number
 * kept already is): kept until pg_event_seq_end().
 */
void pg_event_seq_live(struct pg_store *ps, int64_t job_id, int64_t seq);

/* pg_event_seq_end() - job @job_id ended here (finished, requeued): kept as any other. */
void pg_event_seq_end(struct pg_store *ps, int64_t job_id);

/* pg_event_seqs_free() - at close. */
void pg_event_seqs_free(struct pg_store *ps);

/*
 * pg_job_read_seq() - the number of job @id's last event, when the current
 * run of a read context read the job: a POST handler that read the job (a
 * cancel), and events.c's read for an event it has no number for, number
 * the events they add without a read of their own.  Returns 0, or -ENOENT
 * (not read, or no such job).
 */
int pg_job_read_seq(struct pg_store *ps, int64_t id, int64_t *ret);

/* ---- hosts (pg_hosts.c) ---- */

/*
 * pg_host_open() - take this host's name and register it (at open, waiting),
 * unless a board of @boards (strv, may be NULL) is another live host's
 * (-EADDRINUSE, logged): then nothing is written.  With @boards, the boards
 * registered as this host's that are not among them are released.
 */
int pg_host_open(struct pg_store *ps, char *const *boards);

/*
 * pg_board_register() - store_board_register() on PostgreSQL: waits at
 * labd's start; in a read context (a reload), each statement is a read of
 * the context, made once when every run gives the same @now.
 */
int pg_board_register(struct store *st, const char *name, const char *device_type,
		      uint64_t now, char *owner, size_t len);

/* pg_board_release() - store_board_release() on PostgreSQL: a journaled write. */
int pg_board_release(struct store *st, const char *name);

/*
 * pg_host_name(), pg_host_url(), pg_host_reaped() - store_host_name(),
 * store_host_url(), store_host_reaped() (short reads).
 */
const char *pg_host_name(const struct store *st);
int pg_host_url(struct store *st, const char *host, char **ret);
int pg_host_reaped(struct store *st, const char *host, bool *ret);
/* pg_lab_secret_load() - the lab's secret, made when there is none (at open, waiting). */
int pg_lab_secret_load(struct pg_store *ps);
/* pg_lab_secret() - store_lab_secret(). */
const char *pg_lab_secret(const struct store *st);
/* pg_board_elsewhere() - store_board_elsewhere() (a short read). */
int pg_board_elsewhere(struct store *st, const char *device_type, bool *ret);

/* pg_host_start() - renew the lease and reap from the loop; LISTEN for the other hosts. */
int pg_host_start(struct pg_store *ps);

/*
 * pg_host_fence() - another host reaped this one (its lease renewal or a
 * journal marker found lease_until 0): drop what is journaled, refuse what
 * comes, tell labd (store_params.fenced).  Once.
 */
void pg_host_fence(struct pg_store *ps);

/*
 * pg_writer_drop() - forget every journaled write (the host was fenced); the
 * store_sync() callers waiting are told -ESTALE.
 */
void pg_writer_drop(struct pg_store *ps);

/* pg_host_state() - the connection came back (take the name again, plan again) or went. */
void pg_host_state(struct pg_store *ps, bool up);

/* The columns every query of jobs reads (pg_job_reader), in this order. */
#define PG_JOB_COLUMNS                                                                     \
	"id, name, device_type, tags, priority, submitted, started, ended, state, health, " \
	"error_type, error_msg, device, definition, format, filename, submitter, attempt, "  \
	"retries_left, recovered, results_pass, results_fail, results_skip, "                \
	"results_unknown, last_error, session, avoid, host, log_removed, history_removed"

/* The columns every query of reservations reads (pg_reservation_reader). */
#define PG_RESERVATION_COLUMNS                                                              \
	"id, holder, board, device_type, tags, priority, duration, submitted, state, device, " \
	"started, until, ended, end_reason"

extern const struct pg_reader pg_job_reader;		/* pg_jobs.c */
extern const struct pg_reader pg_reservation_reader;	/* pg_reservations.c */

/* pg_counts_fill() - the kept job counts, waiting (at open). */
int pg_counts_fill(struct pg_store *ps);

/* pg_host_free() - what pg_hosts.c keeps (pg_close()). */
void pg_host_free(struct pg_store *ps);

/* ---- tokens (pg_tokens.c) ---- */

/* pg_tokens_load() - every token, waiting (at open); pg_tokens_reload() from the loop. */
int pg_tokens_load(struct pg_store *ps);
void pg_tokens_reload(struct pg_store *ps);
void pg_tokens_free(struct pg_store *ps);

int pg_token_add(struct store *st, const struct token_record *rec);
int pg_token_find(struct store *st, const char *hash, struct token_record *ret);
int pg_token_list(struct store *st, struct store_rows *rows);

/*
 * pg_result_insert() - insert result @rec with id @id (0: the sequence's
 * next), the id in *@ret_id (pg_result_add(), pg_import.c).
 */
int pg_result_insert(struct pg_store *ps, const struct result_record *rec, int64_t id,
		     int64_t *ret_id);

/* pg_job_args() - the columns of a job that insert and import both write, name .. session. */
void pg_job_args(struct pg_args *a, const struct job_record *rec, int attempt);

/* pg_reservation_args() - a reservation's columns holder .. submitted (insert and import). */
void pg_reservation_args(struct pg_args *a, const struct reservation_record *rec);

/* pg_import() - store_migrate() into PostgreSQL (pg_import.c). */
int pg_import(struct store *st, struct store *from);

/* ---- the schema (pg_schema.c) ---- */

/* pg_migrate() - bring the schema to the newest version, under an advisory lock. */
int pg_migrate(struct pg_store *ps);

/* ---- the ops of each table (pg_<table>.c), listed in pg.c's ops table ---- */

int pg_job_insert(struct store *st, struct job_record *rec);
int pg_job_get(struct store *st, int64_t id, struct job_record *ret);
int pg_job_list(struct store *st, const struct job_filter *f, struct store_rows *rows);
int pg_job_queued(struct store *st, struct store_rows *rows);
int pg_job_still_queued(struct store *st, const int64_t *ids, size_t n,
			struct store_rows *rows);
int pg_job_running(struct store *st, struct store_rows *rows);
int pg_job_start(struct store *st, int64_t id, const char *device, uint64_t when);
int pg_job_set_state(struct store *st, int64_t id, enum job_state state);
int pg_job_finish(struct store *st, int64_t id, enum job_health health, enum error_type type,
		  const char *msg, uint64_t when);
int pg_job_requeue(struct store *st, int64_t id, bool recovered, const char *why);
int pg_job_prune(struct store *st, int64_t id, uint64_t log_removed, uint64_t history_removed);
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
int pg_delivered_set(struct store *st, const char *backend, const char *receiver,
		     int64_t job_id, int64_t seq);
int pg_delivered_get(struct store *st, const char *backend, const char *receiver,
		     int64_t job_id, int64_t *ret);
int pg_delivered_list(struct store *st, struct store_rows *rows);

int pg_reservation_insert(struct store *st, struct reservation_record *rec);
int pg_reservation_get(struct store *st, int64_t id, struct reservation_record *ret);
int pg_reservation_waiting(struct store *st, struct store_rows *rows);
int pg_reservation_active(struct store *st, struct store_rows *rows);
int pg_reservation_recent(struct store *st, unsigned limit, struct store_rows *rows);
int pg_reservation_activate(struct store *st, int64_t id, const char *device, uint64_t started,
			    uint64_t until);
int pg_reservation_renew(struct store *st, int64_t id, uint64_t until);
int pg_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason);

int pg_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
	     void *userdata);
/* pg_claims_free() - at close, after the connection (which completed the claims). */
void pg_claims_free(struct pg_store *ps);
int pg_queue_position(struct store *st, int64_t id, int64_t *ret);
int pg_job_position(struct store *st, int64_t id, int64_t *ret);
int pg_queue_summary(struct store *st, struct store_rows *rows);
int pg_sync(struct store *st, store_done_fn done, void *userdata);
void pg_forget(struct store *st, void *userdata);

#endif
