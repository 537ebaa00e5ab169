/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched.h -- the scheduler: queued jobs onto idle boards
 *
 * sched/ owns the queue: what enters it (sched_submit.c: a job checked
 * against this lab, stored, queued), which board takes which entry
 * (sched_plan.c: claims) and the runs (sched.c: starting, outcomes, retries,
 * recovery).
 *
 * The queue lives in the store and is never loaded: a board that becomes
 * free claims the first queue entry of its device type that it may take
 * (store_claim(): priority, then submission; all the entry's tags; the board
 * a reservation names), and a new entry makes a free board that fits it
 * claim.  A job whose type has no free board waits without blocking jobs of
 * other types.  Costs per event are O(boards), never O(queue).
 *
 * When a run finishes the scheduler records the outcome, or requeues the job
 * when it ended with an infrastructure error and has retries left (the store
 * then keeps it from the board that failed), and frees the board.
 *
 * At start, sched_recover() handles jobs that were running when labd died:
 * each is marked incomplete (infrastructure) and requeued once.
 *
 * Reservations (a developer waiting for a board, store_reservation_*) are
 * queue entries too, in the same order and matched the same way (device
 * type, tags, and the board's name when one was asked for).  When a board
 * claims one, the store makes it active on the board and the scheduler hands
 * it to deps->grant() instead of starting a run; the board is then reserved
 * and gets no job until it is free again.  A holder's session boot (labctl
 * boot) is a job that is never queued: it starts at once on the held board
 * (sched_start_session()), never powers it off at its end and is not
 * requeued after a labd crash.
 */
#ifndef LABD_SCHED_H
#define LABD_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/job.h"
#include "run/run.h"

struct board;
struct diag;
struct job_record;
struct reservation_record;
struct store_queued;
struct lab;
struct sched;

/**
 * Called when available board @b claimed reservation @rec (now active on @b
 * in the store, until rec->until): hold the board for it.
 */
typedef void (*sched_grant_fn)(const struct reservation_record *rec, struct board *b,
			       void *userdata);

/*
 * What the scheduler gets at creation.  The growth of a running job's log is
 * announced through run.events (events_log_grew()).
 */
struct sched_deps {
	struct run_deps run;	/* config is refreshed through sched_set_config() */
	const struct lab *lab;	/* the boards it may use (board/lab.h) */
	sched_grant_fn grant;
	void *userdata;		/* of grant */
};

int sched_new(const struct sched_deps *deps, struct sched **ret);
struct sched *sched_free(struct sched *s);

/** sched_set_config() - the configuration used for runs started from now on. */
void sched_set_config(struct sched *s, const struct lab_config *config);

/**
 * sched_set_max_running() - at most @max jobs run at once (SIZE_MAX: no cap;
 * 0 counts as 1).  At the cap, free boards claim nothing and queued jobs wait
 * in the queue until a run ends (labd's open files limit: fdlimit_max_jobs()).
 */
void sched_set_max_running(struct sched *s, size_t max);

/* ---- what enters the queue (sched_submit.c) ---- */

/**
 * sched_submit() - validate a job fully and queue it
 * @filename: for diagnostics ("job.yaml:12: ...")
 * @fmt: JOB_FORMAT_AUTO looks at the first character ('{': JSON)
 * @submitter: identity recorded with the job (NULL: "anonymous")
 *
 * The job must parse, name a device type of this lab that it fits, and a
 * board of that type must have its tags.  Returns 0 with the new id, -EINVAL
 * (problems in @diag), -E2BIG or -ENOMEM.
 */
int sched_submit(struct sched *s, const char *text, size_t len, const char *filename,
		 enum job_format fmt, const char *submitter, int64_t *ret_id, struct diag *diag);

/**
 * sched_check_job() - everything sched_submit() checks, without queueing
 * (labctl check)
 * @strict: warnings (a duplicate key) refuse the job too (`labctl check --strict`)
 * @ret_notices: if not NULL, the job's warnings and notes (strv, the caller
 *	frees it) when it is accepted
 *
 * Returns 0 or -EINVAL with the causes in @diag.
 */
int sched_check_job(struct sched *s, const char *text, size_t len, const char *filename,
		    enum job_format fmt, bool strict, struct diag *diag, char ***ret_notices);

/**
 * sched_boot_session() - a holder's boot on the board it holds (labctl boot)
 * @text: a job for @b's device type; its test actions are skipped and the
 *        board is left powered at its end, the shell to the holder
 * @holder: the submitter
 *
 * The job is checked as sched_submit() checks jobs, stored as a session
 * job and started on @b at once (never queued).  Returns 0 with its id,
 * -EINVAL (problems in @diag), -EBUSY (a job runs on @b) or another negative
 * errno.
 */
int sched_boot_session(struct sched *s, struct board *b, const char *text, size_t len,
		       const char *filename, enum job_format fmt, const char *holder,
		       int64_t *ret_id, struct diag *diag);

/* ---- the queue and the runs (sched.c) ---- */

/** sched_kick() - every free board claims at the next loop iteration (start, reload). */
void sched_kick(struct sched *s);

/** sched_board_changed() - @b may have become free: it claims at the next iteration. */
void sched_board_changed(struct sched *s, struct board *b);

/** sched_reservation_queued() - waiting reservation @rec entered the queue. */
void sched_reservation_queued(struct sched *s, const struct reservation_record *rec);

/**
 * sched_entry_queued() - a host (another, or this one) queued entry @q and
 * it is in the store (store_params.queued): a free board of this host that
 * fits it claims, not necessarily after this host's writes.  An entry left
 * to another host (q->first) is not claimed for now: looked at again a
 * little later, it is claimed if still queued (sched_left.c).
 */
void sched_entry_queued(struct sched *s, const struct store_queued *q);

/** sched_recover() - requeue or finish jobs left running by a previous labd. */
int sched_recover(struct sched *s);

/**
 * sched_cancel() - cancel a queued or running job
 *
 * A job running here is canceled without reading the store; any other is
 * read first (in a read context, store_read_begin(), that read may fail
 * with -EINPROGRESS before anything is done: call again with its answer).
 * Returns 0, -ENOENT (no such job), -EALREADY (already finished),
 * -EREMOTE (it runs, or is being canceled, on another host of the lab: its
 * run is that host's to cancel, the API forwards the cancel there; nothing
 * is done here) or the read's error.
 */
int sched_cancel(struct sched *s, int64_t id, const char *why);

/**
 * sched_runs_elsewhere() - whether job @rec (as read) runs, or is being
 * canceled, on another host of the lab (a shared store): its run is that
 * host's, sched_cancel() leaves it (-EREMOTE).
 */
bool sched_runs_elsewhere(const struct sched *s, const struct job_record *rec);

/**
 * sched_position() - where waiting reservation @id stands: 1 + the queue
 * entries (jobs and reservations) of its device type before it
 * (store_queue_position()).  Returns 0, -ENOENT when it is not waiting, or
 * -EIO.
 */
int sched_position(struct sched *s, int64_t id, size_t *ret);

/**
 * sched_start_session() - start session job @rec on @b now: @rec as it was
 * just stored (queued), so that starting it reads nothing
 *
 * Returns 0 when it runs, else a negative errno; the job is then finished
 * (incomplete) in the store.
 */
int sched_start_session(struct sched *s, const struct job_record *rec, struct board *b);

/** sched_run_of() - the run of job @id while it runs, else NULL (borrowed). */
struct run *sched_run_of(struct sched *s, int64_t id);

/* What a job running here does now (sched_run_info()), for the dashboard; borrowed. */
struct sched_run_info {
	const char *name;	/* the job's name */
	const char *submitter;	/* or NULL */
	uint64_t started;	/* realtime usec this attempt started */
	const char *action;	/* the action running ("boot-u-boot"), or NULL */
	size_t action_index;	/* its 1-based index */
	size_t n_actions;
};

/** sched_run_info() - @ret for job @id while it runs here: 0, or -ENOENT. */
int sched_run_info(struct sched *s, int64_t id, struct sched_run_info *ret);

/** sched_running() - number of jobs running. */
size_t sched_running(const struct sched *s);

/** sched_pause() - start no more jobs (labd is stopping); queued jobs stay queued. */
void sched_pause(struct sched *s);

/** sched_cancel_all() - cancel every running job (shutdown); returns how many. */
size_t sched_cancel_all(struct sched *s, const char *why);

#endif
