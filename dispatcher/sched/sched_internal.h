/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched_internal.h -- struct sched, shared by sched.c (the runs),
 * sched_plan.c (claims: which board takes which queue entry) and
 * sched_submit.c (what enters the queue); only sched/ includes it
 */
#ifndef LABD_SCHED_INTERNAL_H
#define LABD_SCHED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sched/sched.h"

struct board;
struct job_record;
struct loop_source;
struct sched_arrival;
struct sched_claim;
struct sched_end;
struct sched_run;
struct store_queued;

struct sched {
	struct sched_deps deps;
	struct loop_source *plan;	/* defer: plan at the next iteration */
	struct loop_source *reap;	/* defer: free finished runs */
	struct loop_source *retry;	/* timer: plan again after a failed or contended claim */
	struct sched_run *runs;
	size_t n_running;
	size_t max_running;		/* sched_set_max_running(); SIZE_MAX: no cap */
	bool capped;			/* a board or entry waits for a run to end (the cap) */
	bool paused;
	/* sched_plan.c */
	struct sched_claim *claims;	/* in flight: their boards are "claiming" */
	struct sched_arrival *arrivals;	/* new entries looking for a free board */
	struct board **dirty;		/* boards that may have become free (references) */
	size_t n_dirty;
	struct board **held;		/* their claim passed a locked entry by: again on retry */
	size_t n_held;
	bool all;			/* every free board claims (start, reload) */
	bool claims_failing;		/* the store failed the last claim: said once */
	/* sched_finish.c */
	struct sched_end *ends;		/* ends the store did not record yet */
	struct queued_cancel *cancels;	/* queued jobs canceled, not read back yet */
	struct loop_source *retry_ends;	/* timer: try them again */
	/* sched_keep.c: what is kept of queued jobs outside the store */
	json_t *secrets;		/* "<id>" -> the job's secrets and passwords */
	json_t *deadlines;		/* "<id>" -> realtime usec its queue wait ends */
	struct loop_source *queue_timer;
	/* sched_left.c: jobs another host's NOTIFY left to it, looked at again */
	struct sched_left *left;	/* grown up to SCHED_LEFT_MAX, the oldest first */
	size_t n_left, cap_left;
	bool left_overflow;		/* one more than fits: every free board claims */
	struct loop_source *left_timer;
};

/* sched_finish.c */

/**
 * sched_finish_job() - end job @id: its outcome into the store, then its
 * "finished" event (once the store has it; tried again until it does)
 * @device: may be NULL; @results_fail < 0 leaves the count out
 */
void sched_finish_job(struct sched *s, int64_t id, enum job_health health, enum error_type type,
		      const char *msg, const char *device, int results_fail);

/**
 * sched_cancel_queued() - end queued job @id canceled (@why), unless a host
 * started it since it was read: the store does not end another host's run
 * (store_job_finish()).  The job is read back after the write, without
 * waiting (store_read_later()): its "cancel" and "finished" events are
 * emitted then, only if this cancel took; a host that started it meanwhile
 * is logged and left alone (the API's answer, which reads the job after
 * the write too, sends the cancel there).  A second cancel of the same job
 * before the read back does nothing.  Returns 0 or the write's error.
 */
int sched_cancel_queued(struct sched *s, int64_t id, const char *why);

/** sched_finish_free() - drop the ends not recorded (labd stops; a restart recovers them). */
void sched_finish_free(struct sched *s);

/* sched_plan.c: the plan and retry callbacks, and what sched_free() releases */
int sched_on_plan(struct loop_source *src, void *ud);
int sched_on_retry(struct loop_source *src, uint64_t now, void *ud);
void sched_kick_plan(struct sched *s);
/** sched_run_ended() - a run ended: below the cap again, what waited for it claims. */
void sched_run_ended(struct sched *s);
void sched_plan_release(struct sched *s);

/*
 * sched_job_queued() - job @id entered the queue (submitted, or requeued
 * avoiding board @avoid): a free board that fits it claims.  Its tags are
 * @tags (strv) or @tags_json.  @first: it was inserted claimed_here_first
 * (the lab's other hosts leave it to this one): if no board of this host
 * takes it, it is offered to them (store_announce()).
 */
void sched_job_queued(struct sched *s, int64_t id, const char *device_type, char *const *tags,
		      const char *tags_json, const char *avoid, bool first);

/*
 * sched_may_claim_now() - whether a board of this host is free for an entry
 * of @device_type with @tags (strv) now, and not at the running jobs' cap.
 */
bool sched_may_claim_now(struct sched *s, const char *device_type, char *const *tags);

/*
 * sched_start_claimed() - sched.c: board @b claimed job @rec (running on @b
 * in the store): start its run.  When it cannot start, the job is finished
 * (incomplete) and the board claims again.
 */
void sched_start_claimed(struct sched *s, const struct job_record *rec, struct board *b);

struct job;

/*
 * sched_tags_from_json() - a JSON array text of tags as a strv (NULL for
 * none, or when out of memory).
 */
char **sched_tags_from_json(const char *text);

/* sched_left.c */
int sched_left_init(struct sched *s);
void sched_left_release(struct sched *s);
/*
 * sched_left_add() - another host's NOTIFY left entry @q to that host
 * (q->first): if a board of this host is free for it, look again a little
 * later whether it is still queued, and place it then.
 */
void sched_left_add(struct sched *s, const struct store_queued *q);

/* sched_keep.c */
int sched_keep_init(struct sched *s);
void sched_keep_release(struct sched *s);
/** sched_keep_job() - a job entered the queue (@submitted: realtime usec). */
int sched_keep_job(struct sched *s, int64_t id, const struct job *job, uint64_t submitted);
/** sched_keep_queued() - a job found queued after a restart: its queue deadline. */
int sched_keep_queued(struct sched *s, const struct job *job, const struct job_record *rec);
/** sched_keep_restore() - the job starts: its secrets back; -ENOKEY if they were lost. */
int sched_keep_restore(struct sched *s, int64_t id, struct job *job);
/** sched_keep_drop() - the job ended. */
void sched_keep_drop(struct sched *s, int64_t id);

#endif
