/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run_internal.h -- the layout of struct run, shared by run.c (lifecycle,
 * action sequencing, outcome), run_console.c (console stream, expect, lines,
 * kernel messages) and run_report.c (log, phases, results).  Actions never
 * include this: they use action.h.
 */
#ifndef LABD_RUN_INTERNAL_H
#define LABD_RUN_INTERNAL_H

#include <jansson.h>

#include "core/kv.h"
#include "core/strbuf.h"
#include "overlay/overlay_build.h"
#include "run/action.h"
#include "run/run.h"

struct joblog;
struct kmsg;
struct ktap;
struct loop_source;
struct matcher;
struct rootfs_tree;

enum run_phase {
	RUN_PHASE_ACTIONS,	/* running the job's actions */
	RUN_PHASE_POWER_OFF,	/* finishing: powering the board off */
	RUN_PHASE_FINISHED,
};

struct run_line_sub {
	run_line_fn fn;
	void *userdata;
	bool dead;
	struct run_line_sub *next;
};

struct run {
	struct run_deps deps;
	int64_t id;
	int attempt;
	struct job *job;
	struct board *board;
	struct joblog *log;
	char *dir;
	char *tftp_dir;
	char *tftp_prefix;
	struct kv vars;
	run_finished_fn finished;
	void *userdata;
	enum run_phase phase;
	uint64_t started;	/* realtime usec of run_start() */

	/* the current action */
	size_t action_idx;
	unsigned action_attempt;
	const struct action_ops *ops;
	void *astate;
	bool action_active;
	uint64_t action_started;
	struct loop_source *next_action;	/* defer: start the next action */
	struct loop_source *action_timer;
	struct loop_source *job_timer;
	uint64_t job_deadline;
	uint64_t action_deadline;

	/* console stream */
	struct matcher *matcher;
	bool waiting;
	bool board_off;		/* an emulated power cycle's "off": bytes logged, not read */
	char wait_stage[64];
	char limit_key[96];		/* the job's key bounding the wait (run_limits.c) */
	uint64_t limit_usec;		/* ... its length */
	bool limit_given;		/* run_expect_limit() named it for the next wait */
	char last_line[160];		/* the last console line that said something */
	struct loop_source *wait_timer;
	struct loop_source *match_defer;	/* match bytes already buffered */
	struct strbuf line;			/* the console line in progress */
	int64_t line_no;			/* its number in the job log */
	bool line_skip_lf;
	struct run_line_sub *line_subs;
	unsigned line_dispatching;
	bool watch_kernel;
	struct kmsg *kmsg;
	struct ktap *ktap;			/* KTAP/TAP results: watched all the job long */
	char *panic_line;			/* a panic was seen: fail once its report ended */
	struct loop_source *panic_timer;

	/* the artifact URLs, checked before the first action (url_check.h) */
	struct url_check *url_check;
	bool urls_checked;

	/* power, wakes, async helpers */
	struct loop_source *wake_timer;
	struct loop_source *async_defer;
	int async_err;
	char *async_msg;

	struct mask *mask;		/* the job's secrets and passwords (core/mask.h) */
	struct rootfs_tree *nfs_tree;	/* the job's NFS root, removed when the job ends */

	/* the job's test overlay (run_overlay.c) */
	struct overlay_plan overlay_plan;
	struct overlay_build *overlay_build;
	enum error_type overlay_error;	/* of the last failed build */
	struct testdef **overlay_defs;	/* the job's definitions, as the build loaded them */
	size_t n_overlay_defs;
	char **overlay_commits;
	char *overlay_path;		/* the tests' overlay (transfer, typed) */
	char *overlay_served;		/* its name in deps.overlays, while served */

	/* outcome */
	struct run_outcome outcome;
	char *error_msg;
	int results_pass;
	json_t *phases;		/* array of {phase, t, at} */
	uint64_t phase_origin;	/* monotonic time of the boot's first phase */
};

/* run_console.c */
int run_console_init(struct run *r);
void run_console_release(struct run *r);
void run_console_attach(struct run *r);
void run_console_detach(struct run *r);

/* run_limits.c: which limit ran out */
/** run_format_usec() - a duration as people read it: "1.5 s", "90 s", "5 min", "2 h". */
void run_format_usec(uint64_t usec, char *buf, size_t len);
/** run_limit_for_wait() - the key bounding a wait in @stage of @timeout (run_expect()). */
void run_limit_for_wait(struct run *r, const char *stage, uint64_t timeout);
/** run_note_line() - a console line, kept when it says something. */
void run_note_line(struct run *r, const char *line, size_t len);
/** run_action_timeout_reason() - why the action's timer ran out, and whose fault that is. */
enum error_type run_action_timeout_reason(struct run *r, char *buf, size_t len);
/** run_job_timeout_reason() - why the job's timer ran out. */
void run_job_timeout_reason(struct run *r, char *buf, size_t len);

/* run_overlay.c */
void run_overlay_init(struct run *r);
void run_overlay_release(struct run *r);

/* run.c */
void run_finish(struct run *r, enum job_health health, enum error_type type, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));
void run_deliver(struct run *r, const struct run_event *ev);

#endif
