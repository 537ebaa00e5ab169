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
 * SQLite implementation, the default, and pg*.c the PostgreSQL one that
 * several labd hosts share (doc/multi-host.md).  Only those files include
 * sqlite3.h or libpq-fe.h.
 *
 * Opening: labd.conf's `store` group names the driver, `store = { driver =
 * "sqlite"; };`, the default when the group is absent.  An unknown driver or
 * key is a "FILE:LINE: cause" error, at start and in `labd check-config`.
 * SQLite keeps one file, <state_dir>/labd.db (WAL mode, foreign keys on),
 * versioned and migrated in order at open; every statement is prepared once.
 *
 * Calls are short (an indexed row or an index range, never a scan of the
 * history: tests/unit/test-store-sqlite.c checks every statement's plan) and
 * labd makes them from the loop.  Timestamps are CLOCK_REALTIME
 * microseconds.  Errors: negative errno (-EINVAL for an argument out of
 * range, checked the same for every implementation in store.c; -ENOENT for
 * a missing row, or for a job_id naming no job; -EIO for a failure of the
 * database, logged once with its message; -ENOMEM).
 *
 * Ownership: records and strings passed in are borrowed for the duration of
 * the call (an implementation copies what it keeps).  Records returned are
 * the caller's, released with the matching *_release() function.  Records
 * passed to a listing's callback or to a completion are borrowed for that
 * callback only.
 *
 * Listing functions read every matching row before the first callback, so
 * a callback may call the store, even the same function.  A callback
 * returning < 0 stops the listing, and the listing returns that value.
 *
 * Durability and batching (SQLite): WAL with synchronous=NORMAL, so a
 * SIGKILL of labd loses no committed write (a power cut may lose the last
 * few).  With a loop (store_params.loop), the writes of one loop iteration
 * go into one transaction, committed at the start of the next iteration:
 * what a caller must not announce before it is durable, it announces from
 * store_sync()'s completion.  labd does so in two places: the API answers a
 * request only once what it wrote is committed (api_reply()), and job
 * events reach their listeners (backends, followers) only once stored
 * (journal/events.c), so a job the store still has running after a crash
 * has announced nothing more than the store holds.  Without a loop (tools,
 * unit tests) every write commits at once.  A database written by an older
 * labd is migrated at open; a file that is not a database, or one from a
 * newer labd, gives -EIO.
 *
 * The queue: queued jobs (not session jobs) and waiting reservations are one
 * queue per device type, in order of priority (higher first), then
 * submission time, a job before a reservation submitted at the same time,
 * then id.  It is never loaded: a free board takes its next entry with
 * store_claim(), a waiting reservation's place is store_queue_position(),
 * the counts per device type are store_queue_summary() and
 * store_job_count(), all through indexes (or counts kept by the database).
 *
 * ---- What an asynchronous implementation completes later ----
 *
 * PostgreSQL through libpq's non-blocking API (issue 12) must never wait on
 * the network inside a loop callback.  This interface gives it the
 * following; what pg*.c does today is said with each point.
 *
 *  1. Completions, for what the caller cannot go on without:
 *     - store_claim(): the scheduler's only way into the queue.  One
 *       transaction: `SELECT ... FROM jobs WHERE <the board fits> ORDER BY
 *       <queue order> LIMIT 1 FOR UPDATE SKIP LOCKED`, the same for
 *       reservations, then an UPDATE of the winner; SQLite runs the same
 *       statements without the locking clause.  Completed once, from the
 *       loop (SQLite: before store_claim() returns; PostgreSQL: from the
 *       connection's callbacks, pg_queue.c, the claim and its read-back one
 *       batch of the pipeline; a claim whose answer was lost with the
 *       connection is found again by the board's next claim).  The
 *       scheduler keeps a board "claiming" until then (sched/sched_plan.c),
 *       and works whichever way it completes (test-store-queue checks the
 *       claim on both drivers).
 *     - store_sync(): called back once every write made before it is
 *       durable.  The API suspends the request's connection meanwhile
 *       (api/api.c), the events wait in journal/events.c.  PostgreSQL's
 *       writes are journaled locally before they return (pg_writer.c);
 *       pg_sync() waits for the database's commit all the same (a job
 *       submitted through one host and shown through another at once is
 *       found there), for 1 s at most, and not at all while the database
 *       is away: the journal is durable on this host.
 *  2. Writes that return at once (write-behind): every other function that
 *     changes something (job_insert, job_start, job_set_state, job_finish,
 *     job_requeue, device_put, result_add, event_add, reservation_insert /
 *     activate / renew / end).  Their arguments are checked before they
 *     return; they are applied in the order they were made (pipelined on
 *     one connection, or queued while the database is away) and a later
 *     read on the same store sees them.  What they return must be known at
 *     once: job and reservation ids (fetch a block of the sequence ahead,
 *     refilled from the loop; a request that finds none left is held in its
 *     read context until the refill is in, never a wait in the loop) and
 *     event sequence numbers (count them per running job); pg_writer.c and
 *     pg_ids.c do so.  A result's id is not needed at once: PostgreSQL
 *     numbers results as it commits them, in the order they were added.
 *  3. Reads: the scheduler and the runner read nothing on their hot paths
 *     (the claim returns the whole job); sched_recover(), the backends'
 *     start-up and the API read.  The API's handlers, POST as GET, run
 *     inside a read context (store_read_begin()): on PostgreSQL each read is
 *     sent, the handler's connection suspended, and the handler run again
 *     with the answers (pg_reads.c).  A handler acts once every read is in:
 *     a write in a run whose reads are not all in fails with -EINPROGRESS,
 *     and a read after a write of the same run waits for its answer, so no
 *     write is ever made twice; what a handler reads after acting, it
 *     reads in a context of its own (api_answer_after()).  Code reacting to
 *     an event does the same through store_read_later() (the notify
 *     backend, /metrics' job durations); GET /health's job counts are
 *     counts kept at most a second old, refreshed without waiting; a
 *     job's end the store refused is tried again the same way
 *     (sched_finish.c), and so is the body of a notify callback an older
 *     labd spooled without it; an event whose number the store does not
 *     know is refused (store_event_add() -EAGAIN) and numbered by a run of
 *     store_read_later() that read its job (journal/events.c).  Only a
 *     read after a write of the same run still waits in the loop, bounded
 *     by the store's `timeout` (doc/multi-host.md); at start-up (outside
 *     the loop's callbacks) every read waits.  SQLite answers every read
 *     at once.
 *  store_forget() drops the completions of a caller that goes away; the
 *  store_params.loop is where an asynchronous driver registers its socket
 *  and timers (SQLite: its commit at the next iteration).
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
	char *avoid;		/* the board its last attempt failed on: not claimed there */
	bool session;		/* a holder's boot on its board (labctl boot): never queued */
	/*
	 * store_job_insert() only, not stored: a free board of this host claims
	 * the job first, and the lab's other hosts leave it to this one until
	 * store_announce() (a shared store)
	 */
	bool claimed_here_first;
	char *host;		/* the labd host running it or that ran it (PostgreSQL), or NULL */
	uint64_t log_removed;	/* when retention removed its console log, or 0 */
	uint64_t history_removed;	/* when retention removed its results and events, or 0 */
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
	char *device_type;	/* its type in the lab's registry (PostgreSQL), or NULL */
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
	int64_t before_id;	/* cursor: only ids < this, 0 = no limit */
	int64_t after_id;	/* cursor: only ids > this (the page just above it), 0 = none */
	unsigned offset;	/* paging: skip this many of the matching jobs (costs O(offset)) */
	unsigned limit;		/* 0 = STORE_JOB_LIST_DEFAULT; at most STORE_JOB_LIST_MAX */
};

#define STORE_JOB_LIST_DEFAULT 100
#define STORE_JOB_LIST_MAX 1000

/** A device type's queue: what store_queue_summary() reports. */
struct queue_record {
	char *device_type;
	int64_t queued;		/* queued jobs (session jobs, which wait for no board, not) */
	uint64_t oldest;	/* submission time of the oldest queued job, realtime usec */
	int64_t reservations;	/* waiting reservations */
	uint64_t oldest_reservation;	/* submission time of the oldest of them */
};

/** What a free board asks of the queue (store_claim()). */
struct store_claim_req {
	const char *board;	/* its name */
	const char *device_type;
	const char *tags;	/* its tags as a JSON array text; NULL: none */
	uint64_t when;		/* now: the job's started, the reservation's started */
	bool lone;		/* the only board of its type: it takes a job that failed on it */
	/*
	 * made for an entry this host queued just now: the claim must see this
	 * host's writes so far (PostgreSQL: it goes after them, on the same
	 * connection).  Other claims (an entry of another host, a board freed)
	 * go on a connection of their own, not behind this host's writes.
	 */
	bool after_writes;
};

enum store_claimed_kind {
	STORE_CLAIMED_NONE,		/* nothing waits that this board may take */
	STORE_CLAIMED_JOB,
	STORE_CLAIMED_RESERVATION,
	STORE_CLAIMED_CONTENDED,	/* nothing taken: what it may take was locked by another
					 * transaction (a shared store); claim again shortly */
};

/** What a claim took; borrowed by the completion. */
struct store_claimed {
	enum store_claimed_kind kind;
	struct job_record job;			/* JOB: as stored now, running on the board */
	struct reservation_record reservation;	/* RESERVATION: active on the board */
};

/** Completion of store_sync(): @err 0 (durable) or the commit's error. */
typedef void (*store_done_fn)(int err, void *userdata);

/** Completion of store_claim(): @err 0 with @c, or a negative errno (@c NULL). */
typedef void (*store_claim_fn)(int err, const struct store_claimed *c, void *userdata);

/** An entry another host queued (a job submitted or requeued, a reservation asked for). */
struct store_queued {
	int64_t job;		/* the job, or 0 */
	int64_t reservation;	/* or the reservation */
	const char *device_type;
	const char *tags;	/* JSON array text, or NULL */
	const char *board;	/* a reservation of a board by name, or NULL */
	const char *avoid;	/* a requeued job's failed board, or NULL */
	const char *first;	/* the host whose free board claims it first, or NULL */
};

/** How to open a store. */
struct store_params {
	const config_setting_t *settings;	/* labd.conf's `store` group, or NULL */
	const char *state_dir;	/* labd's state directory (SQLite: STORE_SQLITE_FILE there) */
	struct loop *loop;	/* for asynchronous implementations; SQLite does not use it */
	/* several hosts (PostgreSQL): this host's API for the others, or NULL */
	const char *host_url;
	/*
	 * several hosts: the names of this host's boards (strv), or NULL.  One
	 * that another host that is alive has refuses the open (-EADDRINUSE,
	 * logged) before this host is registered: a refused labd leaves no
	 * trace in the lab (store_board_register() checks again, for two
	 * hosts starting at once)
	 */
	char *const *boards;
	/*
	 * a command run beside the lab's labd (labd gc): with several hosts it
	 * neither takes this host's name nor registers it, so it runs beside the
	 * labd of the same labd.conf and leaves no host for the others to reap
	 */
	bool tool;
	/*
	 * called from the loop when another host changed the queue in a way not
	 * told by @queued (its jobs requeued as it was reaped, the database came
	 * back): every free board claims; may be NULL
	 */
	void (*changed)(void *userdata);
	/* called from the loop when another host queued an entry; may be NULL */
	void (*queued)(const struct store_queued *q, void *userdata);
	void *changed_userdata;
	/*
	 * called once from the loop (with changed_userdata) when this host finds
	 * it was reaped by another (its lease ran out while it was away, its
	 * running jobs went back to the queue): from then on the database
	 * refuses its writes and the store drops them, its claims fail; the
	 * caller stops, and starts again to take its boards back.  May be NULL.
	 */
	void (*fenced)(void *userdata);
	/*
	 * called from the loop (with changed_userdata) for each event the store
	 * wrote by itself, committed and numbered, in order: the events of the
	 * jobs of a host this host reaped ("attempt-ended", then "requeued" or
	 * "finished"), for labd to hand to its listeners (events_announce()).
	 * Only the host that reaped is called, once per event.  May be NULL.
	 */
	void (*event)(const struct event_record *ev, void *userdata);
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
 * A store that writes behind (PostgreSQL in labd's loop) takes the id from
 * a block fetched ahead.  When none is left it never waits: inside a read
 * context that has not written yet it fails with -EINPROGRESS (the caller
 * runs again once ids are in: store_read_begin()); elsewhere, or after a
 * write of the same run, with -EAGAIN (refused: try again).  The same for
 * store_reservation_insert().
 *
 * Every field is stored as given (a zeroed record is queued, health unknown,
 * error none), except id and the results counts; an attempt below 1 is
 * stored, and written back to rec->attempt, as 1.
 */
int store_job_insert(struct store *st, struct job_record *rec);

/** store_job_get() - read job @id into @ret (release with job_record_release()). */
int store_job_get(struct store *st, int64_t id, struct job_record *ret);

/**
 * store_job_list() - jobs matching @f, newest first; @cb returns <0 to stop.
 *
 * Paging: f->before_id gives the page below an id, f->after_id the page
 * just above one (still newest first), each in the time of one page
 * whatever its depth, through an index on each filter (state, device,
 * device_type, submitter, one health).  A health filter of several values
 * and f->offset cost what they skip.
 */
int store_job_list(struct store *st, const struct job_filter *f,
		   int (*cb)(const struct job_record *rec, void *ud), void *ud);

/**
 * store_job_count_matching() - how many jobs match @f (its paging ignored):
 * kept counts when @f filters by state and device type at most, else a
 * COUNT over the range of an index.
 */
int store_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret);

/**
 * store_job_queued() - every queued job, in queue order: for tools and
 * start-up only, never on a hot path (use store_claim(), store_queue_*()).
 */
int store_job_queued(struct store *st, int (*cb)(const struct job_record *rec, void *ud),
		     void *ud);

/**
 * store_job_still_queued() - of the @n jobs @ids (at most
 * STORE_STILL_QUEUED_MAX), those still queued and not session jobs, to @cb
 * (whole records, in no particular order).  One read: a host looks again at the
 * jobs another host's NOTIFY left to that host (sched), in a read context
 * (store_read_later()) when it must not wait.  -EINVAL for more than
 * STORE_STILL_QUEUED_MAX ids.
 */
#define STORE_STILL_QUEUED_MAX 256
int store_job_still_queued(struct store *st, const int64_t *ids, size_t n,
			   int (*cb)(const struct job_record *rec, void *ud), void *ud);

/** store_job_start() - mark @id running on @device at @when. */
int store_job_start(struct store *st, int64_t id, const char *device, uint64_t when);

/** store_job_set_state() - e.g. running -> canceling. */
int store_job_set_state(struct store *st, int64_t id, enum job_state state);

/**
 * store_job_finish() - record the outcome; state finished, ended @when.
 *
 * Counts the job's results into results_pass/fail/skip/unknown ("unknown"
 * is every result that is not "pass", "fail" or "skip").  Several hosts
 * (PostgreSQL): a job running (or canceling) on another host is left as
 * it is, without an error: a job read queued and canceled here may have
 * been claimed by another host meanwhile (read it back to know).
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
 * Unless @recovered, the board it ran on is the one store_claim() keeps it
 * from ("avoid"), until it is requeued again.
 */
int store_job_requeue(struct store *st, int64_t id, bool recovered, const char *why);

/**
 * store_job_prune() - retention removed part of finished job @id: its log
 * (@log_removed: when, or 0 for not now) and/or its results and events
 * (@history_removed: when; they are deleted here).  The job stays; the
 * first time of each kind is kept.  -EINVAL when both are 0, -ENOENT for
 * no job @id.  The log files are the caller's to delete (journal/retention.h).
 */
int store_job_prune(struct store *st, int64_t id, uint64_t log_removed,
		    uint64_t history_removed);

/** store_job_running() - every job in state running or canceling (for recovery). */
int store_job_running(struct store *st, int (*cb)(const struct job_record *rec, void *ud),
		      void *ud);

/** store_job_count() - number of jobs in @state (a count the database keeps). */
int store_job_count(struct store *st, enum job_state state, int64_t *ret);

/** job_record_release() - free @rec's strings and zero it; accepts NULL. */
void job_record_release(struct job_record *rec);

/* ---- devices ---- */

/** store_device_get() - -ENOENT if the board was never seen. */
int store_device_get(struct store *st, const char *name, struct device_record *ret);

/** store_device_put() - insert or replace a board's state. */
int store_device_put(struct store *st, const struct device_record *rec);

/** store_device_list() - every board ever seen, by name (of every host, PostgreSQL). */
int store_device_list(struct store *st, int (*cb)(const struct device_record *rec, void *ud),
		      void *ud);

/**
 * store_board_register() - this host takes board @name, of @device_type, in
 * the lab's registry of boards (several hosts on PostgreSQL: board names are
 * unique across the lab)
 *
 * @now is the time of the registration (CLOCK_REALTIME, usec): the leases
 * are compared with it.  In a read context (a reload: store_read_later())
 * give the same @now to each run, so that the run with every answer is
 * answered from what was kept: the registration is sent (and made) once,
 * and the run that sent it fails with -EINPROGRESS.
 *
 * Returns 0, or -EADDRINUSE when another host that is alive (its lease runs)
 * has a board of that name: its host name in @owner (@len bytes).  A board
 * of a host whose lease ran out changes hands.  SQLite: one host, always 0.
 */
int store_board_register(struct store *st, const char *name, const char *device_type,
			 uint64_t now, char *owner, size_t len);

/**
 * store_board_release() - this host no longer has board @name (a reload
 * removed it): its row in the registry keeps its history but no host, so
 * the other hosts no longer list it and another host may take the name.
 * A write: returns at once (PostgreSQL: journaled).  SQLite: 0.
 */
int store_board_release(struct store *st, const char *name);

/* ---- hosts (several labd on PostgreSQL) ---- */

/**
 * store_host_name() - this labd's host name in the lab (store.host), or NULL
 * with one host (SQLite).  Borrowed: valid until store_close().
 */
const char *store_host_name(const struct store *st);

/**
 * store_host_url() - the API address another host of the lab registered
 * (store.url, or from its --listen): "http://rack-2.lab:8080", in @ret
 * (the caller frees).  -ENOENT for a host without one or unknown, and with
 * one host (SQLite); -ENOTCONN while the database is away.
 */
int store_host_url(struct store *st, const char *host, char **ret);

/**
 * store_host_reaped() - whether @host, another host of the lab, was reaped
 * (its lease ran out: another host requeued its jobs, ended its boards'
 * reservations) and has not started again since, in @ret.  A short read:
 * from the loop, in a read context (store_read_later()).  An unknown host
 * is not reaped.  SQLite: one host, always false.  -ENOTCONN while the
 * database is away.
 */
int store_host_reaped(struct store *st, const char *host, bool *ret);

/**
 * store_lab_secret() - the secret the hosts of a lab share (hex text, made
 * once by the first host to open the database, kept in it), with which a
 * host vouches for the identity of a request it forwards to another
 * (api_forward_identity()); NULL with one host (SQLite) and for a tool.
 * Never shown through the API.  Borrowed: valid until store_close().
 */
const char *store_lab_secret(const struct store *st);

/**
 * store_board_elsewhere() - whether another host of the lab registered a
 * board of @device_type (its tags are not known here): a job for it may be
 * submitted through this host.  SQLite: one host, always false.
 */
int store_board_elsewhere(struct store *st, const char *device_type, bool *ret);

/** device_record_release() - free @rec's strings and zero it; accepts NULL. */
void device_record_release(struct device_record *rec);

/* ---- tokens ---- */

/*
 * An API token made through the API (POST /tokens), kept in the store so
 * that every host of a lab on PostgreSQL knows it: its SHA-256 only, the
 * user it authenticates as and that user's role.  labd.conf's `users` stay
 * where they are (session/users.h); these come beside them.
 */
struct token_record {
	char *hash;		/* "sha256:<64 lowercase hex digits>" */
	char *user;		/* the user it authenticates as */
	char *role;		/* user_role_name(): "reader", "ci", "developer", "admin" */
	uint64_t created;	/* realtime usec */
	char *created_by;	/* who made it, or NULL */
};

/** store_token_add() - keep a new token; -EEXIST when its hash is there already. */
int store_token_add(struct store *st, const struct token_record *rec);

/**
 * store_token_find() - the token of hash @hash, or -ENOENT.  Answered at
 * once in labd's loop (PostgreSQL: from the tokens each host keeps, loaded
 * at start and again on every other host's NOTIFY), so that authenticating
 * a request never waits for the network.
 */
int store_token_find(struct store *st, const char *hash, struct token_record *ret);

/** store_token_list() - every token, oldest first (`labd store migrate`). */
int store_token_list(struct store *st, int (*cb)(const struct token_record *rec, void *ud),
		     void *ud);

/**
 * store_migrate() - `labd store migrate`: copy everything of @from (an
 * existing lab's SQLite store) into @to (an empty PostgreSQL database),
 * keeping the ids of jobs, reservations and results, the events, results,
 * boards, tokens and delivery positions, in one transaction; @to's id sequences then continue
 * past the largest.  Both opened without a loop.  -EEXIST when @to has
 * jobs already, -EOPNOTSUPP when @to's driver cannot (SQLite).
 */
int store_migrate(struct store *to, struct store *from);

/** token_record_release() - free @rec's strings and zero it; accepts NULL. */
void token_record_release(struct token_record *rec);

/* ---- results ---- */

/**
 * store_result_add() - append a result; fills rec->id, but for a store that
 * writes behind (PostgreSQL in labd's loop), which numbers it as it
 * commits, in the order results were added: 0 then.
 */
int store_result_add(struct store *st, struct result_record *rec);

/** store_result_list() - results of a job in the order they were added. */
int store_result_list(struct store *st, int64_t job_id,
		      int (*cb)(const struct result_record *rec, void *ud), void *ud);

/** result_record_release() - free @rec's strings and zero it; accepts NULL. */
void result_record_release(struct result_record *rec);

/* ---- events ---- */

/**
 * store_event_add() - append an event; returns its per-job sequence number
 * in *ret_seq (@ret_seq may be NULL).
 *
 * A store writing behind must know the number when the event is written:
 * PostgreSQL in labd's loop keeps the number of the last event of every job
 * this host runs (until it ends here) and of the 1024 other jobs it learnt
 * one of last (submitted, ended, read or listed outside a read context),
 * and takes the number of a job the current run of a read
 * context read (store_job_get()) from that read.  Any other job's event is
 * refused with -EAGAIN, nothing stored, rather than read for in the loop:
 * the caller adds it again from a run of store_read_later() that read the
 * job (journal/events.c does, keeping the job's events in order).  SQLite,
 * and a store without a loop, never return -EAGAIN.  -ESTALE: this host was
 * reaped by another (store_params.fenced), its writes are dropped: the event
 * is nobody's to hear of.
 */
int store_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		    const char *data, int64_t *ret_seq);

/** store_event_list() - events of a job with seq > @after, in order. */
int store_event_list(struct store *st, int64_t job_id, int64_t after,
		     int (*cb)(const struct event_record *rec, void *ud), void *ud);

/*
 * How far a results backend's receiver acknowledged each job's events, kept
 * for the lab (a shared store: every host's), so that the host that reports
 * a job's later events (it reaped the host that ran it, or runs it after a
 * requeue) goes on from there instead of sending them all again.  @backend
 * is the backend's name, @receiver where it delivers (its URL): a position
 * counts only for the same pair.
 */

/**
 * store_delivered_set() - @backend's @receiver acknowledged job @job_id's
 * events up to @seq.  Never moves back (a lower @seq changes nothing); a
 * job that is not there (any more) is skipped, 0.  A write: returns at once
 * (PostgreSQL: journaled).
 */
int store_delivered_set(struct store *st, const char *backend, const char *receiver,
			int64_t job_id, int64_t seq);

/**
 * store_delivered_get() - the last event of job @job_id that @backend's
 * @receiver acknowledged, through any host, in *@ret: 0 when none.  A read
 * (in a read context on PostgreSQL: -EINPROGRESS, answered later).
 */
int store_delivered_get(struct store *st, const char *backend, const char *receiver,
			int64_t job_id, int64_t *ret);

/* One position: @backend's @receiver acknowledged job @job_id's events up to @seq. */
struct delivery_record {
	char *backend;
	char *receiver;
	int64_t job_id;
	int64_t seq;
};

/**
 * store_delivered_list() - every position of every job, by job id, backend
 * and receiver (`labd store migrate` copies them).  A read (in a read
 * context on PostgreSQL: -EINPROGRESS, answered later).
 */
int store_delivered_list(struct store *st,
			 int (*cb)(const struct delivery_record *rec, void *ud), void *ud);

/** delivery_record_release() - free @rec's strings and zero it; accepts NULL. */
void delivery_record_release(struct delivery_record *rec);

/** event_record_release() - free @rec's strings and zero it; accepts NULL. */
void event_record_release(struct event_record *rec);

/* ---- reservations ---- */

/** store_reservation_insert() - add a waiting reservation; fills rec->id. */
int store_reservation_insert(struct store *st, struct reservation_record *rec);

/** store_reservation_get() - reservation @id (release with reservation_record_release()). */
int store_reservation_get(struct store *st, int64_t id, struct reservation_record *ret);

/** store_reservation_waiting() - waiting reservations in queue order. */
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

/* ---- the queue ---- */

/**
 * store_claim() - a free board takes the first queue entry it may take
 * @req: the board; the store copies what it keeps
 * @done: called exactly once with what was taken
 *
 * The entry: the first, in queue order, of @req->device_type whose tags the
 * board has (every tag of the entry is in @req->tags), and for a
 * reservation naming a board, that board; a requeued job avoids the board
 * it failed on (store_job_requeue()) unless @req->lone.  It is taken in the same transaction:
 * a job becomes running on the board, started @req->when (its attempt then
 * runs once: no other claim can take it), a reservation becomes active on
 * the board from @req->when for its duration.  Session jobs are never
 * taken.  What @done is told is durable (SQLite commits the iteration's
 * batch with it): a claim rolled back later would give the entry to a
 * second board.
 *
 * Returns 0 when @done will be called (SQLite: before store_claim()
 * returns; an asynchronous store: later, from the loop, unless
 * store_forget(@userdata)), or -EINVAL (@done is not called).
 */
int store_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
		void *userdata);

/**
 * store_announce() - job @id of @device_type with @tags (JSON array text),
 * inserted with claimed_here_first, was not claimed by a board of this host:
 * every host of a shared store places it now (its `queued` callback).  A
 * store of one host has nobody to tell: 0.  Best effort: when the message
 * is lost (the database is away), the hosts claim again once it is back.
 */
int store_announce(struct store *st, int64_t id, const char *device_type, const char *tags);

/**
 * store_queue_position() - where waiting reservation @id stands in its
 * device type's queue: 1 + the queued jobs and waiting reservations before
 * it (a COUNT over an index range).  -ENOENT when it is not waiting.
 */
int store_queue_position(struct store *st, int64_t id, int64_t *ret);

/**
 * store_job_position() - where queued job @id stands in its device type's
 * queue, the same way: 1 + the queued jobs and waiting reservations a board
 * of its type takes before it.  -ENOENT when it is not queued.
 */
int store_job_position(struct store *st, int64_t id, int64_t *ret);

/**
 * store_queue_summary() - per device type with queued jobs or waiting
 * reservations: their counts and the oldest of each.
 */
int store_queue_summary(struct store *st, int (*cb)(const struct queue_record *rec, void *ud),
			void *ud);

/** queue_record_release() - free @rec's strings and zero it; accepts NULL. */
void queue_record_release(struct queue_record *rec);

/* ---- durability ---- */

/**
 * store_sync() - be told when every write made so far is durable
 *
 * Returns 0 when it already is (@done is not called), 1 when @done will be
 * called once from the loop after the commit (unless store_forget()), or a
 * negative errno.  -ESTALE, returned or given to @done: this host was reaped
 * by another (store_params.fenced), the writes are dropped, never durable.
 */
int store_sync(struct store *st, store_done_fn done, void *userdata);

/**
 * store_read_begin() / store_read_end() - reads that complete later, for a
 * caller that can run its code again (the API's GET handlers, api.c)
 *
 * Between the two, a read that an asynchronous store (PostgreSQL) cannot
 * answer at once is sent and fails with -EINPROGRESS, its answer kept for
 * @userdata.  A write in a run that sent a read fails with -EINPROGRESS
 * (that run must not act: the one with every answer does), and a read
 * after a write of the same run waits for its answer (running the code
 * again would repeat the write).  An insert that needs an id when none is
 * left ahead (store_job_insert()) is held the same way, as a read whose
 * answer is the refill.  store_read_end() returns 1 when reads were sent: @done is
 * called once from the loop when every answer is in, and the caller then
 * runs the same code again between store_read_begin(@userdata) and
 * store_read_end(): the same reads, in the same order with the same
 * arguments, are answered from what was kept (one that differs is sent
 * again).  It returns 0 when every read was answered (what was kept is
 * dropped).  The caller must not act on what it read in a run that sent
 * reads: store_read_pending() says whether the current one did (api_reply()
 * drops that run's answer).  store_forget(@userdata) drops the context.
 * SQLite, and any store without a loop, answers every read at once: 0.
 */
int store_read_begin(struct store *st, store_done_fn done, void *userdata);
int store_read_end(struct store *st);
bool store_read_pending(const struct store *st);

/**
 * store_read_later() - run @fn(@userdata) now and, when it read something
 * an asynchronous store sent to the database, again once the answers are in
 * (a read context, store_read_begin()): for code that reacts to something
 * (an event) and may do so a little later, never waiting in the loop.  @fn
 * must not act on a run whose reads were sent (store_read_pending(); its
 * reads fail with -EINPROGRESS).  @release(@userdata) is called after the
 * last run, or when store_read_later_forget(@owner) drops it, or at
 * store_close().  SQLite runs @fn once, now.  Returns 0, or -ENOMEM after
 * running @fn once with reads that wait (and releasing @userdata).
 */
int store_read_later(struct store *st, const void *owner, void (*fn)(void *userdata),
		     void (*release)(void *userdata), void *userdata);

/** store_read_later_forget() - drop (release) @owner's store_read_later() runs not done yet. */
void store_read_later_forget(struct store *st, const void *owner);

/** store_forget() - never call the pending completions given @userdata. */
void store_forget(struct store *st, void *userdata);

/**
 * store_begin() / store_commit() - group several writes in one transaction.
 *
 * Calls nest: only the outermost pair begins and commits.  store_commit()
 * without store_begin() is -EINVAL; a failed commit rolls back.  store_close()
 * commits a transaction still open.  A batch of the loop iteration still
 * open is part of the transaction: store_commit() commits it too.
 */
int store_begin(struct store *st);
int store_commit(struct store *st);

#endif
