/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * retention.h -- history that does not fill the disk: finished jobs' logs
 * compressed, then removed after N days; results and events removed after
 * M days; a size cap on the state directory, the oldest logs going first
 *
 * labd.conf's `retention` group (doc/man/labd.conf.5.scd):
 *
 *   retention = {
 *     log_days = 30;            # console logs kept (absent: for ever)
 *     history_days = 365;       # results and events kept (absent: for ever)
 *     max_state_size = "200G";  # cap on the state directory (absent: none)
 *     compress = true;          # zstd once the job ended (default)
 *     compress_level = 3;       # zstd's level, 1..19
 *     interval = 86400;         # seconds between two runs in the daemon
 *   };
 *
 * A run ("gc") walks the finished jobs in id order, a batch at a time:
 * each job's log is compressed if it is not yet (journal/logzst.h), or
 * removed when it is older than log_days (the job's end); its results and
 * events are removed from the store when older than history_days.  The
 * size of the state directory is measured on the way (the job directories
 * and the files at its top, the database); when it is over max_state_size,
 * a second walk removes the logs of the oldest jobs (lowest ids) until it
 * is under.  What was removed is recorded in the store (store_job_prune()):
 * the job stays, and the API answers 410 Gone for its log, results or events.
 * Several hosts sharing a PostgreSQL store: each handles the logs it has
 * (their job directory is there), any of them the results and events.
 *
 * In the daemon the work never blocks the loop: retention_step() does a
 * few milliseconds of it (one zstd frame, one job, one batch of the store)
 * per loop turn, from a timer; a batch of finished jobs is read through
 * store_read_later() (on PostgreSQL the run waits for the answer, not the
 * loop); a run starts every `interval`, and a job's
 * log is compressed RETENTION_COMPRESS_DELAY after its "finished" event.
 * `labd gc` runs the same work at once, in its own process
 * (retention_gc()).
 */
#ifndef LABD_RETENTION_H
#define LABD_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "core/loop.h"

struct diag;
struct events;
struct store;
struct retention;

#define RETENTION_DEFAULT_INTERVAL (24 * 3600 * USEC_PER_SEC)
#define RETENTION_COMPRESS_DELAY (2 * USEC_PER_SEC)	/* after the job's end */
#define RETENTION_STEP_BUDGET (2 * USEC_PER_MSEC)	/* of work per loop turn */

struct retention_params {
	int64_t log_days;	/* -1: for ever */
	int64_t history_days;	/* -1: for ever */
	uint64_t max_size;	/* bytes; 0: no cap */
	bool compress;
	int level;		/* zstd's */
	uint64_t interval;	/* usec between two runs in the daemon */
};

/**
 * retention_parse() - the `retention` group @settings (NULL: absent, the
 * defaults: keep everything, compress at level 3, daily) into @ret
 *
 * Returns 0 or -EINVAL (problems in @diag as "FILE:LINE: cause").
 */
int retention_parse(const config_setting_t *settings, struct retention_params *ret,
		    struct diag *diag);

struct retention_deps {
	struct loop *loop;	/* NULL: retention_gc() only (`labd gc`) */
	struct store *store;
	struct events *events;	/* "finished" starts a compression; may be NULL */
	const char *state_dir;	/* copied */
};

/** What one run did. */
struct retention_stats {
	uint64_t jobs;		/* finished jobs looked at */
	uint64_t compressed;	/* log files compressed */
	uint64_t bytes_in;	/* ... their bytes before */
	uint64_t bytes_out;	/* ... and after */
	uint64_t logs_removed;	/* logs older than log_days */
	uint64_t histories_removed;	/* jobs whose results and events went */
	uint64_t capped;	/* logs removed for max_state_size */
	uint64_t size;		/* bytes of the state directory at the end */
	uint64_t elapsed;	/* usec */
};

/**
 * retention_new() - the garbage collector of @d->state_dir
 *
 * With a loop: runs every @p->interval (the first one interval after start,
 * at most a minute), compresses logs of jobs that end.  @p is copied.
 */
int retention_new(const struct retention_deps *d, const struct retention_params *p,
		  struct retention **ret);

/** retention_free() - stops a run in progress (a half-written compression is removed); accepts NULL. */
struct retention *retention_free(struct retention *g);

/**
 * retention_set_params() - labd.conf reloaded: @p (copied) from the next
 * step on; a new interval from the next run on.
 */
void retention_set_params(struct retention *g, const struct retention_params *p);

/** retention_start() - a run now (daemon); -EBUSY while one runs. */
int retention_start(struct retention *g);

/** retention_running() - whether a run is in progress. */
bool retention_running(const struct retention *g);

/**
 * retention_step() - about RETENTION_STEP_BUDGET of work, at realtime @now
 *
 * Returns 0 when there is more to do, 1 when there is nothing to do now,
 * or a negative errno (the store failed; the run stops).
 */
int retention_step(struct retention *g, uint64_t now);

/** retention_gc() - a whole run at once, at realtime @now (`labd gc`); its figures in @ret. */
int retention_gc(struct retention *g, uint64_t now, struct retention_stats *ret);

/** retention_last() - the figures of the last complete run (zero before one). */
const struct retention_stats *retention_last(const struct retention *g);

/** retention_total() - every complete run since start added up (size: the last run's). */
const struct retention_stats *retention_total(const struct retention *g);

#endif
