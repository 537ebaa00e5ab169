/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h -- labd's composition root: the loop, the store, the boards, the
 * scheduler and the HTTP API, wired together
 *
 * The API handlers (api*.c) and main() use this interface; nothing else
 * needs the whole daemon.  Every function is called from the loop thread.
 *
 * Startup (daemon_new): load the configuration (any error: refuse to start,
 * printing every "file:line: cause"), open the store, recover jobs left
 * running by a previous labd, bring every board up (console opened and kept
 * open), power off boards a crash left running, start the API.
 * SIGHUP reloads the configuration without touching running jobs; SIGTERM
 * and SIGINT stop labd: running jobs are canceled and their boards powered
 * off before it exits (a second signal exits at once).
 */
#ifndef LABD_DAEMON_H
#define LABD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jobstate.h"
#include "job/job.h"

struct board;
struct daemon;
struct diag;
struct events;
struct http_client;
struct lab_config;
struct loop;
struct reservations;
struct run;
struct store;
struct users;
struct viewers;

struct daemon_options {
	const char *config_path;
	bool no_api;		/* do not start the HTTP API (labd run-job) */
	const char *listen;	/* override http.listen */
};

int daemon_new(const struct daemon_options *opts, struct daemon **ret, struct diag *diag);

/** daemon_run() - run the loop until stopped; returns the exit status. */
int daemon_run(struct daemon *d);

struct daemon *daemon_free(struct daemon *d);

struct loop *daemon_loop(struct daemon *d);
struct store *daemon_store(struct daemon *d);
struct events *daemon_events(struct daemon *d);
struct http_client *daemon_http(struct daemon *d);
const struct lab_config *daemon_config(struct daemon *d);
/** daemon_users() - labd.conf's `users` (users.h), reloaded with the configuration. */
const struct users *daemon_users(struct daemon *d);
struct reservations *daemon_reservations(struct daemon *d);
struct viewers *daemon_viewers(struct daemon *d);

/** daemon_boards() - every board of the current configuration (borrowed). */
struct board **daemon_boards(struct daemon *d, size_t *ret_n);
/** daemon_board() - the board called @name, or NULL (borrowed). */
struct board *daemon_board(struct daemon *d, const char *name);

/**
 * daemon_submit() - validate a job fully and queue it
 * @filename: for diagnostics ("job.yaml:12: ...")
 * @submitter: identity recorded with the job
 *
 * Returns 0 with the new id, -EINVAL (problems in @diag: schema errors,
 * unknown device type, no board with the tags, ...), -E2BIG or -ENOMEM.
 */
int daemon_submit(struct daemon *d, const char *text, size_t len, const char *filename,
		  enum job_format fmt, const char *submitter, int64_t *ret_id, struct diag *diag);

/**
 * daemon_check_job() - everything daemon_submit() checks, without queueing
 * (labctl check).  Returns 0 or -EINVAL with the causes in @diag.
 */
int daemon_check_job(struct daemon *d, const char *text, size_t len, const char *filename,
		     enum job_format fmt, struct diag *diag);

/**
 * daemon_boot_session() - a holder's boot on the board it holds (labctl boot)
 * @text: a job for @b's device type; its test actions are skipped and the
 *        board is left powered at its end, the shell to the holder
 * @holder: the submitter
 *
 * The job is checked as daemon_submit() checks jobs, stored as a session
 * job and started on @b at once (never queued).  Returns 0 with its id,
 * -EINVAL (problems in @diag), -EBUSY (a job runs on @b) or another negative
 * errno.
 */
int daemon_boot_session(struct daemon *d, struct board *b, const char *text, size_t len,
			const char *filename, enum job_format fmt, const char *holder,
			int64_t *ret_id, struct diag *diag);

/** daemon_queue_position() - sched_position() of waiting reservation @id. */
int daemon_queue_position(struct daemon *d, int64_t id, size_t *ret);

/** daemon_cancel() - 0, -ENOENT or -EALREADY (finished). */
int daemon_cancel(struct daemon *d, int64_t id, const char *why);

/** daemon_set_board_state() - idle or maintenance; -ENOENT, -EINVAL. */
int daemon_set_board_state(struct daemon *d, const char *name, enum device_state s,
			   const char *reason);

/** daemon_job_dir() - <state_dir>/jobs/<id> (caller frees); the log lives there. */
char *daemon_job_dir(struct daemon *d, int64_t id);

/** daemon_run_of() - the run of job @id while it runs, else NULL. */
struct run *daemon_run_of(struct daemon *d, int64_t id);

/** daemon_kick() - re-plan the queue (after a board was freed by someone else). */
void daemon_kick(struct daemon *d);

/** Log followers: @fn(job_id, ud) whenever a running job's log grows. */
typedef void (*daemon_log_fn)(int64_t job_id, void *userdata);
struct daemon_log_listener;
int daemon_log_listen(struct daemon *d, daemon_log_fn fn, void *userdata,
		      struct daemon_log_listener **ret);
struct daemon_log_listener *daemon_log_unlisten(struct daemon_log_listener *l);

/** daemon_stop() - begin an orderly stop (as SIGTERM does). */
void daemon_stop(struct daemon *d, int code);

#endif
