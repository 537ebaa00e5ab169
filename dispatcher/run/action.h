/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * action.h -- the interface between the job runner and its actions
 *
 * A running job (struct run, run.c) executes the job's actions in order.
 * Each action kind is one file (action_deploy.c, action_boot_bootloader.c, ...)
 * defining a `const struct action_ops`.  An action is a small state machine:
 * the runner calls ->start() once, then ->event() for every event the action
 * asked for (a console match, a timeout, a power operation finishing, a
 * download finishing), until the action calls run_done() or run_fail().
 * ->stop() is always called at the end (also on cancel and job timeout) and
 * must release everything the action holds; after run_done()/run_fail() no
 * more events arrive.
 *
 * Services: the runner owns the board's console stream for the job.  An
 * action sets the patterns it waits for (run_expect_*), sends text
 * (run_send), drives power (run_power), records results and boot phases and
 * writes to the job log.  Every wait has a timeout: the connection timeout
 * of the stage unless the action gives one, bounded by the action's and the
 * job's remaining time.
 */
#ifndef LABD_ACTION_H
#define LABD_ACTION_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jobstate.h"
#include "drivers/power.h"
#include "run/match.h"
#include "run/run.h"

struct run;
struct job;
struct job_action;
struct board;
struct kv;
struct loop;
struct lab_config;
struct http_client;

enum run_event_kind {
	RUN_EVENT_MATCH,	/* a pattern matched: ev->id, ev->match */
	RUN_EVENT_TIMEOUT,	/* the current wait timed out */
	RUN_EVENT_POWER,	/* run_power() finished: ev->err, ev->msg */
	RUN_EVENT_WAKE,		/* run_wake_at() time reached */
	RUN_EVENT_DONE,		/* an asynchronous helper finished: ev->err, ev->msg */
};

struct run_event {
	enum run_event_kind kind;
	int id;
	const struct match *match;
	int err;
	const char *msg;
};

struct action_ops {
	const char *name;	/* "deploy", "boot-u-boot", "test-interactive" ... */
	size_t state_size;	/* zeroed per-run state handed to the callbacks */
	/** required: begin the action; return 0 or a negative errno (a bug) */
	int (*start)(struct run *r, void *state);
	/** required: react to an event the action asked for */
	void (*event)(struct run *r, void *state, const struct run_event *ev);
	/** optional: release what the action holds; called exactly once */
	void (*stop)(struct run *r, void *state);
};

struct fastboot_config;

/**
 * action_fastboot_config() - the `fastboot` group of the run's board, parsed
 * into @cfg (release it with fastboot_config_release()), for the fastboot
 * deploy and boot.  On error the run has failed with the reason (no group, a
 * bad key).  Returns 0 or a negative errno.
 */
int action_fastboot_config(struct run *r, struct fastboot_config *cfg);

/* The actions, one file each. */
extern const struct action_ops action_deploy_ops;
extern const struct action_ops action_deploy_sdmux_ops;
extern const struct action_ops action_deploy_fastboot_ops;
extern const struct action_ops action_boot_fastboot_ops;
/* The bootloader methods, one engine: by enum bootloader (config.h), then the
 * method `bootloader` at [BOOTLOADER_COUNT]; the name is "boot-<method>". */
extern const struct action_ops action_boot_bootloader_ops[];
extern const struct action_ops action_boot_minimal_ops;
extern const struct action_ops action_boot_qemu_ops;
extern const struct action_ops action_test_interactive_ops;
extern const struct action_ops action_test_monitors_ops;
extern const struct action_ops action_test_definitions_ops;

/* ---- what the action runs on ---- */
const struct job_action *run_action(const struct run *r);
size_t run_action_index(const struct run *r);
struct board *run_board(const struct run *r);
struct loop *run_loop(const struct run *r);
const struct lab_config *run_config(const struct run *r);
struct http_client *run_http(const struct run *r);
int64_t run_id(const struct run *r);
/** run_dir() - the job's directory (<state_dir>/jobs/<id>), for logs and images. */
const char *run_dir(const struct run *r);
/** run_tftp_dir() - <tftp_root>/<id>; run_tftp_prefix() - "<id>" as boards see it. */
const char *run_tftp_dir(const struct run *r);
const char *run_tftp_prefix(const struct run *r);

/* ---- substitution variables: {KERNEL}, {SERVER_IP}, {KERNEL_ADDR} ... ---- */
struct kv *run_vars(struct run *r);
/**
 * run_substitute() - replace every {NAME} in @in from run_vars(), then the
 * device's parameters.  Returns 0, or -ENOENT with *@ret_missing set to the
 * first unknown name (borrowed until the next call); @ret is the new string.
 */
int run_substitute(struct run *r, const char *in, char **ret, const char **ret_missing);

/* ---- console ---- */
/** run_expect_clear() - forget the patterns of the previous wait (buffered bytes stay). */
void run_expect_clear(struct run *r);
/** run_expect_add() - wait for @regex too; matches report @id. -EINVAL on a bad regex. */
int run_expect_add(struct run *r, const char *regex, int id);
int run_expect_add_literal(struct run *r, const char *text, int id);
/** run_expect_add_strv() - every regex of @v, all reporting @id. */
int run_expect_add_strv(struct run *r, char *const *v, int id);
/**
 * run_expect() - start waiting for the patterns added since run_expect_clear()
 * @stage: names the wait in logs and selects the connection timeout
 *         (job timeouts.connections[stage], else the job's default)
 * @timeout: 0 for the stage's connection timeout, else usec
 *
 * Bytes already buffered are matched at once (from the loop, not inside this
 * call).  Exactly one RUN_EVENT_MATCH or RUN_EVENT_TIMEOUT follows, then the
 * wait is over until run_expect() is called again.
 */
void run_expect(struct run *r, const char *stage, uint64_t timeout);
/**
 * run_expect_limit() - the job's key that bounds the next run_expect() when
 * it is not the stage's connection timeout: @key ("timeouts.actions.
 * bootloader-commands"), @usec its length, for the reason of a timeout.
 * run_expect_limit_action() - that key is the action's own timeout.
 */
void run_expect_limit(struct run *r, const char *key, uint64_t usec);
void run_expect_limit_action(struct run *r);

/**
 * run_fail_timeout() - the wait timed out: run_fail() with @fmt ("timed out
 * waiting for the login prompt") followed by the job's `timeouts:` key that
 * ran out, its length, the stage and the action, and the last console line
 * seen.  @type says whose fault it is, as LAVA classes it.
 */
void run_fail_timeout(struct run *r, enum error_type type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** run_match_group() - a named group of the match just delivered (borrowed, valid
 * during the event callback). */
bool run_match_group(struct run *r, const char *name, const uint8_t **ret, size_t *len);
/** run_expect_stop() - end the wait without an event (the action moves on). */
void run_expect_stop(struct run *r);
/** run_flush_console() - drop buffered, unmatched console bytes (e.g. before power-on). */
void run_flush_console(struct run *r);
/**
 * run_send() - type @text on the console (logged as input), @char_delay usec
 * between characters.  Returns 0, or -ENOTCONN / -ENOBUFS.
 */
int run_send(struct run *r, const char *text, uint64_t char_delay);

/* ---- power and time ---- */
/** run_power() - start a power operation; RUN_EVENT_POWER follows. */
int run_power(struct run *r, enum power_op op);
/** run_wake_at() - RUN_EVENT_WAKE at monotonic @when (one pending wake per run). */
void run_wake_at(struct run *r, uint64_t when);
/** run_now() - the loop's monotonic time. */
uint64_t run_now(const struct run *r);
/** run_async_done() - deliver RUN_EVENT_DONE from the loop (for helpers like downloads). */
void run_async_done(struct run *r, int err, const char *msg);

/* ---- the job's test overlay (overlay/overlay_build.h, run_overlay.c) ---- */
struct overlay_plan;
struct testdef;
enum overlay_format;

/** run_overlay_plan() - how the job's overlay reaches the board (computed at start). */
const struct overlay_plan *run_overlay_plan(const struct run *r);

/**
 * run_overlay_build() - build an overlay into @path: labd's helpers and the
 * job's definitions when @tests, the archives of @imports at its root.
 * RUN_EVENT_DONE follows (ev->err, ev->msg); a failure's error type is
 * run_overlay_error_type().  With @tests the definitions are then readable
 * with run_overlay_testdef(), and @path is the overlay run_overlay_url()
 * serves.  Returns 0 or a negative errno (no event).
 */
int run_overlay_build(struct run *r, const char *path, enum overlay_format fmt, bool tests,
		      char *const *imports);

/** run_overlay_build_at() - run_overlay_build(), @imports below @import_prefix ("/usr"). */
int run_overlay_build_at(struct run *r, const char *path, enum overlay_format fmt, bool tests,
			 char *const *imports, const char *import_prefix);
enum error_type run_overlay_error_type(const struct run *r);

/** run_overlay_testdef() - the job's definition @index as the build loaded it, or NULL. */
const struct testdef *run_overlay_testdef(const struct run *r, size_t index);

/** run_overlay_commit() - the commit a git definition was taken at, or "". */
const char *run_overlay_commit(const struct run *r, size_t index);

/** run_overlay_path() - the tests' overlay file, or NULL before it was built. */
const char *run_overlay_path(const struct run *r);

/**
 * run_overlay_url() - serve the tests' overlay to the board until the job
 * ends: the URL it downloads it from (caller frees), or NULL with the reason
 * in @err (labd listens on no TCP port).
 */
char *run_overlay_url(struct run *r, char *err, size_t errlen);

/* ---- the job's NFS root (rootfs/rootfs.h) ---- */
struct rootfs;
struct rootfs_tree;

/** run_rootfs() - the lab's NFS export directory, or NULL (labd.conf has no `nfs` group). */
struct rootfs *run_rootfs(const struct run *r);

/**
 * run_set_nfs_tree() - the job's NFS root from now on (ownership taken; NULL
 * for none): the one it replaces is released at once, this one when the job
 * has ended and its board is off, however it ended.
 */
void run_set_nfs_tree(struct run *r, struct rootfs_tree *t);

/** run_nfs_tree() - the job's NFS root, or NULL. */
struct rootfs_tree *run_nfs_tree(const struct run *r);

/* ---- outcome ---- */
/** run_done() - the action succeeded: the next action starts. */
void run_done(struct run *r);
/**
 * run_fail() - the action failed with an error of @type and a one-line reason.
 * The action is retried when it has failure_retry left, else the job ends
 * incomplete with that error type.  Results recorded so far are kept.
 */
void run_fail(struct run *r, enum error_type type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- kernel messages (panic, oops ...) from the console, see results/kmsg.h ---- */
/** run_watch_kernel() - from now on classify kernel messages; a panic fails the action. */
void run_watch_kernel(struct run *r, bool on);

/* ---- log, phases, results (run_log(): run.h) ---- */
/** run_phase() - record a boot phase time ("power-on", "bootloader-prompt", ...). */
void run_phase(struct run *r, const char *phase);

/**
 * run_stage() - a "stage" event: a step LAVA reports as a result of its own
 * started or finished (@state "started", "finished"): "auto-login-action"
 * when the boot waits for the kernel and the login, "<n>_<name>" when a test
 * definition starts and ends.  Results in LAVA's shape (lava_results.h) list
 * only the steps that started.
 */
void run_stage(struct run *r, const char *name, const char *state);
/** run_console_line() - the console log line being written (1-based). */
int64_t run_console_line(const struct run *r);

struct run_result {
	const char *suite;	/* "boot", "0_smoke", "lava" ... */
	const char *name;
	const char *result;	/* pass, fail, skip, unknown */
	bool has_measurement;
	double measurement;
	const char *units;
	int64_t log_start;	/* 0: the current console line */
	int64_t log_end;
	const char *extra;	/* JSON object text or NULL */
};

/** run_result() - store a test result of the job. */
int run_result(struct run *r, const struct run_result *res);

/* ---- console line consumers (LAVA signals, KTAP ...) ---- */
typedef void (*run_line_fn)(struct run *r, const char *line, size_t len, int64_t lineno,
			    void *userdata);
/**
 * run_lines_subscribe() - get every complete console line ('\r' and the
 * terminal query ESC[6n stripped) from now on, with its log line number.
 * Returns a handle for run_lines_unsubscribe(); unsubscribed automatically
 * when the run ends.
 */
void *run_lines_subscribe(struct run *r, run_line_fn fn, void *userdata);
void run_lines_unsubscribe(struct run *r, void *handle);

#endif
