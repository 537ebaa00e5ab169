/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h -- labd's persistent state, behind one interface
 *
 * store/ owns everything labd keeps across restarts except the console logs
 * (append-only files, journal/joblog.h): the queue and every job, the board
 * states, the results, the job events and the reservations.  This header is
 * the interface every caller uses (the scheduler, the runner, the API, the
 * sessions, the backends); store_internal.h is what implementations provide
 * (struct store_ops, like the power drivers' ops tables); sqlite*.c is the
 * SQLite implementation, the default and, for now, the only one.  Only
 * those files include sqlite3.h.
 *
 * Opening: labd.conf's `store` group names the driver, `store = { driver =
 * "sqlite"; };`, the default when the group is absent.  An unknown driver or
 * key is a "FILE:LINE: cause" error, at start and in `labd check-config`.
 * SQLite keeps one file, <state_dir>/labd.db (WAL mode, foreign keys on),
 * versioned and migrated in order at open; every statement is prepared once.
 *
 * Calls are synchronous but short (an indexed row); labd calls them from the
 * loop.  Timestamps are CLOCK_REALTIME microseconds.  Errors: negative errno
 * (-EINVAL for an argument out of range, checked the same for every
 * implementation in store.c; -ENOENT for a missing row, or for a job_id
 * naming no job; -EIO for a failure of the database, logged once with its
 * message; -ENOMEM).
 *
 * Ownership: records and strings passed in are borrowed for the duration of
 * the call (an implementation copies what it keeps).  Records returned are
 * the caller's, released with the matching *_release() function.  Records
 * passed to a listing's callback are borrowed for that callback only.
 *
 * Listing functions read every matching row before the first callback, so
 * a callback may call the store, even the same function (the scheduler
 * starts jobs from inside store_job_queued()).  A callback returning < 0
 * stops the listing, and the listing returns that value.
 *
 * Durability (SQLite): WAL with synchronous=NORMAL, so a SIGKILL of labd
 * loses no committed write (a power cut may lose the last few).  A database
 * written by an older labd is migrated at open; a file that is not a
 * database, or one from a newer labd, gives -EIO.
 *
 * Towards an asynchronous implementation (PostgreSQL through libpq's
 * non-blocking API, where no call may wait on the network inside a loop
 * callback), which this interface is shaped for but does not have yet:
 *  - store_params.loop is where such a driver registers its connection's
 *    socket and timers; SQLite ignores it;
 *  - the ownership rules above already let an operation finish after the
 *    call returned: inputs are copied, outputs are the caller's, and a
 *    listing hands its rows over as one array (store_internal.h) before the
 *    first callback runs, so rows could as well arrive later;
 *  - what it needs on top is a completion for each operation that callers
 *    inside loop callbacks wait for (e.g. a "done" callback and user data
 *    next to today's arguments, the synchronous functions below staying as
 *    they are for SQLite), and a claim operation for the scheduler (the
 *    first waiting job or reservation a freed board may take, found through
 *    an index, `SELECT ... FOR UPDATE SKIP LOCKED` in one transaction) that
 *    replaces loading the whole queue with store_job_queued() and
 *    store_reservation_waiting().  Both are new entries in struct
 *    store_ops; the existing ones keep their meaning.
 */
#ifndef LABD_STORE_H
#define LABD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "core/jobstate.h"

struct diag;
struct loop;
struct store;

#define STORE_DEFAULT_DRIVER "sqlite"
#define STORE_SQLITE_FILE "labd.db"	/* in the state directory */

/** A job as the queue and the API know it. */
struct job_record {
	int64_t id;
	char *name;
	char *device_type;
	char *tags;		/* JSON array text, e.g. ["usb","arm64"] */
	int priority;		/* 0..100 */
	uint64_t submitted;	/* realtime usec */
	uint64_t started;	/* 0 until it runs */
	uint64_t ended;		/* 0 until finished */
	enum job_state state;
	enum job_health health;
	enum error_type error_type;
	char *error_msg;	/* one line, or NULL */
	char *device;		/* board it runs or ran on, or NULL */
	char *definition;	/* the submitted document, as submitted */
	char *format;		/* "yaml" or "json" */
	char *filename;		/* as given by the submitter, for diagnostics */
	char *submitter;	/* identity that submitted it */
	int attempt;		/* 1 for the first run, +1 per requeue */
	int retries_left;	/* infrastructure retries still allowed */
	bool recovered;		/* already requeued once after a labd crash */
	int results_pass;	/* counts, filled when the job finishes */
	int results_fail;
	int results_skip;
	int results_unknown;
	char *last_error;	/* error text of the previous attempt, or NULL */
	bool session;		/* a holder's boot on its board (labctl boot): never queued */
};

/** A board's persistent state. */
struct device_record {
	char *name;
	enum device_state state;
	char *reason;		/* why maintenance or bad, or NULL */
	char *holder;		/* reservation holder, or NULL */
	uint64_t hold_until;	/* reservation expiry, realtime usec, or 0 */
	int64_t job_id;		/* running job, or 0 */
	uint64_t changed;	/* when the state last changed */
	char *host;		/* the labd host it is on (PostgreSQL), or NULL */
};

/** One test result of a job. */
struct result_record {
	int64_t id;
	int64_t job_id;
	char *suite;		/* "boot", "lava", "0_smoke", a KTAP suite ... */
	char *name;		/* test case; KTAP paths use '.' between levels */
	char *result;		/* "pass", "fail", "skip", "unknown" */
	bool has_measurement;
	double measurement;
	char *units;
	int64_t log_start;	/* first and last console log line (1-based), 0 if none */
	int64_t log_end;
	char *extra;		/* JSON object text, or NULL */
	uint64_t created;
};

/** An event in a job's life (queued, started, phase, finished ...). */
struct event_record {
	int64_t seq;		/* per-job sequence number, from 1 */
	int64_t job_id;
	uint64_t ts;
	char *kind;		/* "queued", "started", "phase", "finished", ... */
	char *data;		/* JSON object text */
};

/* A developer's hold on a board: waiting in the queue, active, then ended. */
enum reservation_state {
	RESERVATION_WAITING,
	RESERVATION_ACTIVE,
	RESERVATION_ENDED,
};

struct reservation_record {
	int64_t id;
	char *holder;		/* the identity that asked */
	char *board;		/* the board asked for by name, or NULL: any of the type */
	char *device_type;
	char *tags;		/* JSON array text, or NULL */
	int priority;		/* 0..100, queue order as jobs */
	uint64_t duration;	/* usec asked for */
	uint64_t submitted;	/* realtime usec */
	enum reservation_state state;
	char *device;		/* the board held (active, or ended after holding), or NULL */
	uint64_t started;	/* 0 until granted */
	uint64_t until;		/* expiry while active */
	uint64_t ended;		/* 0 until ended */
	char *end_reason;	/* "released by alice", "expired", ... or NULL */
};

struct job_filter {
	int state;		/* enum job_state, or -1 for all */
	const char *device;	/* or NULL */
	const char *device_type;	/* or NULL */
	const char *submitter;	/* or NULL */
	unsigned healths;	/* jobs whose health h has bit (1 << h) set; 0 = all */
	int64_t before_id;	/* paging: only ids < this, 0 = no limit */
	unsigned offset;	/* paging: skip this many of the matching jobs */
	unsigned limit;		/* 0 = 100 */
};

/** How to open a store. */
struct store_params {
	const config_setting_t *settings;	/* labd.conf's `store` group, or NULL */
	const char *state_dir;	/* labd's state directory (SQLite: STORE_SQLITE_FILE there) */
	struct loop *loop;	/* for asynchronous implementations; SQLite does not use it */
	/* several hosts (PostgreSQL): this host's API for the others, or NULL */
	const char *host_url;
	/* called from the loop when another host changed the queue or the boards; may be NULL */
	void (*changed)(void *userdata);
	void *changed_userdata;
};

/**
 * store_check() - `labd check-config`: whether the `store` group @settings
 * (NULL: absent) names a known driver and only keys it knows.  Returns 0 or
 * -EINVAL (problems in @diag).
 */
int store_check(const config_setting_t *settings, struct diag *diag);

/**
 * store_open() - open the store of the driver @p->settings names (SQLite by
 * default), creating and migrating it as needed
 *
 * Returns 0; -EINVAL when the settings are wrong (problems in @diag); or the
 * driver's error opening it (-EIO, logged; -ENOMEM ...).
 */
int store_open(const struct store_params *p, struct store **ret, struct diag *diag);

/**
 * store_available() - whether the store answers now: false while a shared
 * database (PostgreSQL) is away or its writes from before are being sent
 * again; reads then fail at once with -ENOTCONN, writes queue locally.  The
 * API answers 503 with Retry-After: STORE_RETRY_AFTER meanwhile.
 */
bool store_available(const struct store *st);
#define STORE_RETRY_AFTER "5"	/* seconds */

/** store_close() - close, committing a transaction still open; accepts NULL; returns NULL. */
struct store *store_close(struct store *st);

/* ---- jobs ---- */

/**
 * store_job_insert() - add a job; fills rec->id.
 *
 * Every field is stored as given (a zeroed record is queued, health unknown,
 * error none), except id and the results counts; an attempt below 1 is
 * stored, and written back to rec->attempt, as 1.
 */
int store_job_insert(struct store *st, struct job_record *rec);

/** store_job_get() - read job @id into @ret (release with job_record_release()). */
int store_job_get(struct store *st, int64_t id, struct job_record *ret);

/** store_job_list() - jobs matching @f, newest first; @cb returns <0 to stop. */
int store_job_list(struct store *st, const struct job_filter *f,
		   int (*cb)(const struct job_record *rec, void *ud), void *ud);

/** store_job_count_matching() - how many jobs match @f (its paging ignored). */
int store_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret);

/** store_job_queued() - every queued job, in queue order (priority desc, then id). */
int store_job_queued(struct store *st, int (*cb)(const struct job_record *rec, void *ud),
		     void *ud);

/** store_job_start() - mark @id running on @device at @when. */
int store_job_start(struct store *st, int64_t id, const char *device, uint64_t when);

/** store_job_set_state() - e.g. running -> canceling. */
int store_job_set_state(struct store *st, int64_t id, enum job_state state);

/**
 * store_job_finish() - record the outcome; state finished, ended @when.
 *
 * Counts the job's results into results_pass/fail/skip/unknown ("unknown"
 * is every result that is not "pass", "fail" or "skip").
 */
int store_job_finish(struct store *st, int64_t id, enum job_health health,
		     enum error_type type, const char *msg, uint64_t when);

/**
 * store_job_requeue() - put @id back in the queue for another attempt
 * @recovered: set the job's "recovered" flag (requeued after a labd crash)
 *
 * Increments attempt, clears device/started/ended, health and error type,
 * moves the error message (@why if given, else the job's error_msg) to
 * last_error, decrements retries_left (not below 0) unless @recovered.
 * The results of the abandoned attempt are deleted (the events stay).
 */
int store_job_requeue(struct store *st, int64_t id, bool recovered, const char *why);

/** store_job_running() - every job in state running or canceling (for recovery). */
int store_job_running(struct store *st, int (*cb)(const struct job_record *rec, void *ud),
		      void *ud);

/** store_job_count() - number of jobs in @state. */
int store_job_count(struct store *st, enum job_state state, int64_t *ret);

/** job_record_release() - free @rec's strings and zero it; accepts NULL. */
void job_record_release(struct job_record *rec);

/* ---- devices ---- */

/** store_device_get() - -ENOENT if the board was never seen. */
int store_device_get(struct store *st, const char *name, struct device_record *ret);

/** store_device_put() - insert or replace a board's state. */
int store_device_put(struct store *st, const struct device_record *rec);

/** store_device_list() - every board ever seen, by name. */
int store_device_list(struct store *st, int (*cb)(const struct device_record *rec, void *ud),
		      void *ud);

/**
 * store_board_register() - this host takes board @name, of @device_type, in
 * the lab's registry of boards (several hosts on PostgreSQL: board names are
 * unique across the lab)
 *
 * Returns 0, or -EADDRINUSE when another host that is alive (its lease runs)
 * has a board of that name: its host name in @owner (@len bytes).  A board
 * of a host whose lease ran out changes hands.  SQLite: one host, always 0.
 */
int store_board_register(struct store *st, const char *name, const char *device_type,
			 char *owner, size_t len);

/** device_record_release() - free @rec's strings and zero it; accepts NULL. */
void device_record_release(struct device_record *rec);

/* ---- results ---- */

/** store_result_add() - append a result; fills rec->id. */
int store_result_add(struct store *st, struct result_record *rec);

/** store_result_list() - results of a job in the order they were added. */
int store_result_list(struct store *st, int64_t job_id,
		      int (*cb)(const struct result_record *rec, void *ud), void *ud);

/** result_record_release() - free @rec's strings and zero it; accepts NULL. */
void result_record_release(struct result_record *rec);

/* ---- events ---- */

/** store_event_add() - append an event; returns its per-job sequence number in *ret_seq. */
int store_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		    const char *data, int64_t *ret_seq);

/** store_event_list() - events of a job with seq > @after, in order. */
int store_event_list(struct store *st, int64_t job_id, int64_t after,
		     int (*cb)(const struct event_record *rec, void *ud), void *ud);

/** event_record_release() - free @rec's strings and zero it; accepts NULL. */
void event_record_release(struct event_record *rec);

/* ---- reservations ---- */

/** store_reservation_insert() - add a waiting reservation; fills rec->id. */
int store_reservation_insert(struct store *st, struct reservation_record *rec);

/** store_reservation_get() - reservation @id (release with reservation_record_release()). */
int store_reservation_get(struct store *st, int64_t id, struct reservation_record *ret);

/** store_reservation_waiting() - waiting reservations in queue order (priority desc, then id). */
int store_reservation_waiting(struct store *st,
			      int (*cb)(const struct reservation_record *rec, void *ud), void *ud);

/** store_reservation_active() - active reservations, by id. */
int store_reservation_active(struct store *st,
			     int (*cb)(const struct reservation_record *rec, void *ud), void *ud);

/** store_reservation_recent() - the last @limit reservations of any state, newest first. */
int store_reservation_recent(struct store *st, unsigned limit,
			     int (*cb)(const struct reservation_record *rec, void *ud), void *ud);

/** store_reservation_activate() - waiting -> active on @device from @started to @until. */
int store_reservation_activate(struct store *st, int64_t id, const char *device,
			       uint64_t started, uint64_t until);

/** store_reservation_renew() - an active reservation now ends at @until. */
int store_reservation_renew(struct store *st, int64_t id, uint64_t until);

/** store_reservation_end() - waiting or active -> ended at @when, because of @reason. */
int store_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason);

/** reservation_record_release() - free @rec's strings and zero it; accepts NULL. */
void reservation_record_release(struct reservation_record *rec);

/** reservation_state_name() - "waiting", "active", "ended". */
const char *reservation_state_name(enum reservation_state s);

/** reservation_state_from_name() - the inverse; -EINVAL for an unknown name. */
int reservation_state_from_name(const char *name, enum reservation_state *ret);

/**
 * store_begin() / store_commit() - group several writes in one transaction.
 *
 * Calls nest: only the outermost pair begins and commits.  store_commit()
 * without store_begin() is -EINVAL; a failed commit rolls back.  store_close()
 * commits a transaction still open.
 */
int store_begin(struct store *st);
int store_commit(struct store *st);

#endif
