/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched.h -- the scheduler: queued jobs onto idle boards
 *
 * The queue lives in the store; the scheduler plans whenever something
 * changed (a job submitted or finished, a board freed, a reload), at most
 * once per loop iteration.  Order: priority, then submission.  A job runs on
 * an available board of its device type that has all its tags.  A job whose
 * type has no free board waits without blocking jobs of other types.
 *
 * When a run finishes the scheduler records the outcome, or requeues the job
 * when it ended with an infrastructure error and has retries left (it then
 * avoids the board that failed), and frees the board.
 *
 * At start, sched_recover() handles jobs that were running when labd died:
 * each is marked incomplete (infrastructure) and requeued once.
 */
#ifndef LABD_SCHED_H
#define LABD_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h"

struct board;
struct sched;

/** Boards the scheduler may use: the daemon's current list (borrowed). */
typedef struct board **(*sched_boards_fn)(size_t *ret_n, void *userdata);
/** Called whenever a running job's console log grows (for live followers). */
typedef void (*sched_log_fn)(int64_t job_id, void *userdata);

struct sched_deps {
	struct run_deps run;	/* config is refreshed through sched_set_config() */
	sched_boards_fn boards;
	sched_log_fn log_grew;
	void *userdata;
};

int sched_new(const struct sched_deps *deps, struct sched **ret);
struct sched *sched_free(struct sched *s);

/** sched_set_config() - the configuration used for runs started from now on. */
void sched_set_config(struct sched *s, const struct lab_config *config);

/** sched_kick() - plan at the next loop iteration. */
void sched_kick(struct sched *s);

/** sched_recover() - requeue or finish jobs left running by a previous labd. */
int sched_recover(struct sched *s);

/**
 * sched_cancel() - cancel a queued or running job
 *
 * Returns 0, -ENOENT (no such job) or -EALREADY (already finished).
 */
int sched_cancel(struct sched *s, int64_t id, const char *why);

/** sched_run_of() - the run of job @id while it runs, else NULL (borrowed). */
struct run *sched_run_of(struct sched *s, int64_t id);

/** sched_running() - number of jobs running. */
size_t sched_running(const struct sched *s);

/** sched_pause() - start no more jobs (labd is stopping); queued jobs stay queued. */
void sched_pause(struct sched *s);

/** sched_cancel_all() - cancel every running job (shutdown); returns how many. */
size_t sched_cancel_all(struct sched *s, const char *why);

#endif
