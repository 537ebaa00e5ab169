/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run.h -- one running job: the job runner as the scheduler sees it
 *
 * run/ owns running one job: this runner (run.c; run_io.c the console
 * stream, run_report.c results and the outcome), the interface of actions
 * (action.h) with one file per action kind in run/actions/, and what actions
 * share: console pattern matching (match.h), logging in and prompts
 * (boot_login.h), the artifact cache (deploy_cache.h), card images
 * (image_writer.h).
 *
 * A run executes a validated job on one board: deploy, boot and test actions
 * in order, each under its timeout, inside the whole job's timeout.  It owns
 * the board's console stream for the job (log file, pattern matching, line
 * consumers) and ends, whatever happened, by powering the board off.  The
 * actions themselves talk to the run through action.h.
 *
 * Lifecycle:
 *  1. run_start() takes the parsed job and a board (the scheduler marked it
 *     running) and starts the first action from the loop.
 *  2. run_cancel() asks it to stop: current action stopped, board powered
 *     off, outcome "canceled".
 *  3. When the board is off (or power-off failed) the run calls
 *     @finished(run, ud) once; the outcome is then readable with
 *     run_outcome().  The scheduler records it, releases the board and frees
 *     the run with run_free().
 */
#ifndef LABD_RUN_H
#define LABD_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/jobstate.h"

struct board;
struct events;
struct gitcache;
struct http_client;
struct overlay_files;
struct rootfs;
struct job;
struct lab_config;
struct loop;
struct run;
struct store;

struct run_deps {
	struct loop *loop;
	struct http_client *http;
	struct store *store;
	struct events *events;
	const struct lab_config *config;
	struct gitcache *git;		/* test definitions from git */
	struct overlay_files *overlays;	/* test overlays served to boards */
	struct rootfs *rootfs;		/* the NFS export directory, or NULL: none */
};

struct run_outcome {
	enum job_health health;
	enum error_type error_type;
	const char *error_msg;	/* borrowed from the run; NULL when complete */
	bool board_fault;	/* the board's console or power failed: take it out */
	int results_fail;	/* failed results recorded */
};

typedef void (*run_finished_fn)(struct run *r, void *userdata);

/**
 * run_start() - run @job (ownership taken, also on failure) on @board
 * @attempt: 1 for the first attempt; shown in logs
 * @ret: the run, freed with run_free() after @finished was called
 */
int run_start(const struct run_deps *deps, int64_t id, int attempt, struct job *job,
	      struct board *board, run_finished_fn finished, void *userdata, struct run **ret);

/** run_cancel() - stop the job; it finishes "canceled" after powering off. */
void run_cancel(struct run *r, const char *why);

/** run_outcome() - valid once finished. */
const struct run_outcome *run_outcome(const struct run *r);

/** run_is_finished() - whether @finished has been called. */
bool run_is_finished(const struct run *r);

/** run_free() - free a finished run (or abort one: no power-off); accepts NULL. */
struct run *run_free(struct run *r);

/** run_set_log_notify() - call @fn whenever the job's log grows (live followers). */
struct joblog;
void run_set_log_notify(struct run *r, void (*fn)(struct joblog *jl, void *userdata),
			void *userdata);

/** run_job() - the job being run (borrowed, the run's). */
const struct job *run_job(const struct run *r);

/**
 * run_current_action() - what the run does now, for the dashboard: the
 * action's name ("boot-u-boot", borrowed) with its 1-based @index, or NULL
 * between actions and once the actions are over (powering off).
 */
const char *run_current_action(const struct run *r, size_t *index);

/** run_started() - when the run started, realtime usec. */
uint64_t run_started(const struct run *r);

/** run_log_dir() - the directory of the job's log (borrowed). */
const char *run_log_dir(const struct run *r);

/**
 * run_log() - a labd line of @kind ("info", "input" ...) in the job's log
 * (labd.log), at the console line being written
 */
void run_log(struct run *r, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** run_phase_json() - the boot phases recorded so far, as a JSON object text (caller frees). */
char *run_phases_json(const struct run *r);

#endif
