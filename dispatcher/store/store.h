/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h -- labd's persistent state in SQLite
 *
 * One database file (<state_dir>/labd.db, WAL mode, foreign keys on) holds
 * the queue and every job, the board states, the results and the job events.
 * Console logs are not here: they are append-only files (joblog.h).
 *
 * Only store*.c touch SQLite.  The schema is versioned (table schema_version)
 * and migrated in order at open.  Every statement is prepared once at open.
 * Calls are synchronous but short (an indexed row); labd calls them from the
 * loop.  Timestamps are CLOCK_REALTIME microseconds.
 *
 * Records returned by the store are owned by the caller and released with
 * the matching *_release() function.  Errors: negative errno (-ENOENT for a
 * missing row, or for a job_id naming no job; -EIO for an SQLite failure,
 * logged once with its message; -ENOMEM).
 *
 * Listing functions read every matching row before the first callback, so
 * a callback may call the store, even the same function (the scheduler
 * starts jobs from inside store_job_queued()).  A callback returning < 0
 * stops the listing, and the listing returns that value.
 *
 * Durability: WAL with synchronous=NORMAL, so a SIGKILL of labd loses no
 * committed write (a power cut may lose the last few).  A database written
 * by an older labd is migrated at open; a file that is not a database, or
 * one from a newer labd, gives -EIO.
 */
#ifndef LABD_STORE_H
#define LABD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jobstate.h"

struct store;

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
	int64_t before_id;	/* paging: only ids < this, 0 = no limit */
	unsigned limit;		/* 0 = 100 */
};

/** store_open() - open or create the database at @path and migrate it. */
int store_open(const char *path, struct store **ret);

/** store_close() - close; accepts NULL; returns NULL. */
struct store *store_close(struct store *st);

/* ---- jobs (store_jobs.c) ---- */

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

/* ---- devices (store_devices.c) ---- */

/** store_device_get() - -ENOENT if the board was never seen. */
int store_device_get(struct store *st, const char *name, struct device_record *ret);

/** store_device_put() - insert or replace a board's state. */
int store_device_put(struct store *st, const struct device_record *rec);

/** store_device_list() - every board ever seen, by name. */
int store_device_list(struct store *st, int (*cb)(const struct device_record *rec, void *ud),
		      void *ud);

/** device_record_release() - free @rec's strings and zero it; accepts NULL. */
void device_record_release(struct device_record *rec);

/* ---- results (store_results.c) ---- */

/** store_result_add() - append a result; fills rec->id. */
int store_result_add(struct store *st, struct result_record *rec);

/** store_result_list() - results of a job in the order they were added. */
int store_result_list(struct store *st, int64_t job_id,
		      int (*cb)(const struct result_record *rec, void *ud), void *ud);

/** result_record_release() - free @rec's strings and zero it; accepts NULL. */
void result_record_release(struct result_record *rec);

/* ---- events (store_events.c) ---- */

/** store_event_add() - append an event; returns its per-job sequence number in *ret_seq. */
int store_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		    const char *data, int64_t *ret_seq);

/** store_event_list() - events of a job with seq > @after, in order. */
int store_event_list(struct store *st, int64_t job_id, int64_t after,
		     int (*cb)(const struct event_record *rec, void *ud), void *ud);

/** event_record_release() - free @rec's strings and zero it; accepts NULL. */
void event_record_release(struct event_record *rec);

/* ---- reservations (store_reservations.c) ---- */

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
