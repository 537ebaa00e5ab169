/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h -- labd's composition root: the loop, the store, the boards, the
 * scheduler, the sessions, the results backends and the HTTP API, wired
 * together
 *
 * daemon.c is the only file that knows every module.  It creates them in
 * order, hands each what it needs through its deps struct (sched_deps,
 * viewers_deps, reservations_deps, backends_deps, api_deps) and answers, as
 * struct lab (board/lab.h), the questions about the current configuration,
 * users and boards.  No module calls back into the daemon; main() is its
 * only user.  Every function is called from the loop thread.
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

#include "job/job.h"

struct daemon;
struct diag;
struct events;
struct lab_config;
struct loop;

struct daemon_options {
	const char *config_path;
	bool no_api;		/* do not start the HTTP API (labd run-job) */
	const char *listen;	/* override http.listen */
};

int daemon_new(const struct daemon_options *opts, struct daemon **ret, struct diag *diag);

/** daemon_run() - run the loop until stopped; returns the exit status. */
int daemon_run(struct daemon *d);

struct daemon *daemon_free(struct daemon *d);

/** daemon_loop() - the loop (a test harness drives it step by step). */
struct loop *daemon_loop(struct daemon *d);

/** daemon_api_port() - the TCP port the HTTP API listens on, 0 without one. */
int daemon_api_port(struct daemon *d);

/** daemon_events() - job events and log growth (journal/events.h), to follow a job. */
struct events *daemon_events(struct daemon *d);

/** daemon_config() - the configuration as loaded last. */
const struct lab_config *daemon_config(struct daemon *d);

/** daemon_submit() - sched_submit() on the daemon's scheduler (labd run-job). */
int daemon_submit(struct daemon *d, const char *text, size_t len, const char *filename,
		  enum job_format fmt, const char *submitter, int64_t *ret_id, struct diag *diag);

/** daemon_stop() - begin an orderly stop (as SIGTERM does). */
void daemon_stop(struct daemon *d, int code);

#endif
