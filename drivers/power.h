/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * power.h -- power control of a board: the driver interface and its core
 *
 * A power driver is one file (drivers/power/<name>.c) defining a
 * `const struct power_driver`, listed in the table in drivers/power.c.  The
 * core (power.c) finds drivers by name, runs one operation at a time per
 * board, applies the timeout, builds "cycle" from off + delay + on when the
 * driver has no native cycle, and calls the user's completion callback from
 * the loop (never from inside power_run()).
 *
 * Protocol for users (the runner, the API):
 *  1. power_new() parses the board's `power` group (no hardware access);
 *     check-config stops here and calls power_free().
 *  2. power_run(p, op, done, ud) starts an operation; -EBUSY if one runs.
 *  3. done(p, err, msg, ud) is called exactly once: err 0 on success (msg ""),
 *     else a negative errno and a one-line reason ("command 'x' exited with
 *     status 3"), valid during the call.  done may run the next operation or
 *     free @p.  The timeout bounds each driver step (the off and the on of an
 *     emulated cycle separately); a `timeout` key in the power group sets it.
 *  4. power_abort() stops the operation; done is not called.
 *  5. power_free() aborts and frees.
 *
 * Protocol for drivers: ->start() starts the operation and returns 0 or a
 * negative errno; it later calls power_complete() exactly once, from a loop
 * callback.  ->abort() must stop any pending work so that power_complete()
 * is not called afterwards.
 */
#ifndef LABD_POWER_H
#define LABD_POWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "drivers/driver.h"

struct diag;
struct driver_config;
struct kv;
struct power;

enum power_op {
	POWER_OFF,
	POWER_ON,
	POWER_CYCLE,	/* off, wait, on: a hard reset */
};

#define POWER_DEFAULT_TIMEOUT (30 * 1000000ULL)
#define POWER_DEFAULT_CYCLE_DELAY (1 * 1000000ULL)

typedef void (*power_done_fn)(struct power *p, int err, const char *msg, void *userdata);

struct power_driver {
	const char *name;
	size_t priv_size;	/* bytes of driver state, zeroed, at power_priv() */
	/** required: parse @settings into the private state; no hardware access */
	int (*parse)(struct power *p, const config_setting_t *settings, struct diag *diag);
	/** required: start @op (POWER_CYCLE only if ->cycles) */
	int (*start)(struct power *p, enum power_op op);
	/** optional: stop the operation in progress; no power_complete() afterwards */
	void (*abort)(struct power *p);
	/** optional: release resources held by the private state */
	void (*release)(struct power *p);
	/** true when ->start() implements POWER_CYCLE itself; it may still return
	 *  -EOPNOTSUPP (with no side effect) for a board it cannot cycle natively,
	 *  and the core then does off + delay + on */
	bool cycles;
};

/** power_find_driver() - the driver called @name, or NULL. */
const struct power_driver *power_find_driver(const char *name);

/** power_driver_names() - NULL-terminated list of all driver names. */
const char *const *power_driver_names(void);

/**
 * power_new() - create the power control of a board
 * @cfg: the board's `power` settings (driver name and group)
 * @ctx: copied; its pointers must outlive the power object
 *
 * Returns 0, -EINVAL (problems in @diag, e.g. unknown driver) or -ENOMEM.
 */
int power_new(const struct driver_config *cfg, const struct driver_ctx *ctx,
	      struct power **ret, struct diag *diag);

/** power_set_timeout() / power_set_cycle_delay() - from the board definition. */
void power_set_timeout(struct power *p, uint64_t usec);
void power_set_cycle_delay(struct power *p, uint64_t usec);

/**
 * power_set_vars() - the running job's substitution variables ({KERNEL},
 * {RAMDISK}, {APPEND} ...) for the next operations: drivers that start the
 * board from the job's artifacts (qemu) read them with power_vars().  Copied;
 * NULL clears them.  Returns 0 or -ENOMEM (the old variables are kept).
 */
int power_set_vars(struct power *p, const struct kv *vars);

/* Set in the variables of a job with secrets: drivers keep no raw copy of the console. */
#define POWER_VAR_SECRETS "LABD_SECRETS"

/** power_run() - start @op; @done is called once from the loop. -EBUSY when busy. */
int power_run(struct power *p, enum power_op op, power_done_fn done, void *userdata);

/* A step of a cycle the core makes of off + delay + on starts now: POWER_OFF or POWER_ON. */
typedef void (*power_step_fn)(struct power *p, enum power_op step, void *userdata);

/**
 * power_run_watched() - power_run(), and @on_step(@step, @userdata) (or
 * NULL) as each step of a cycle the core emulates starts: between its
 * POWER_OFF and its POWER_ON the board is off, so what it sent before the
 * POWER_ON is from before the cycle.  A driver's native cycle has no such
 * steps: @on_step is not called.
 */
int power_run_watched(struct power *p, enum power_op op, power_done_fn done,
		      power_step_fn on_step, void *userdata);

/** power_abort() - stop the running operation; its callback is not called. */
void power_abort(struct power *p);

/** power_is_busy() - whether an operation runs. */
bool power_is_busy(const struct power *p);

/** power_last_state() - -1 unknown, 0 off, 1 on: the last completed operation's result. */
int power_last_state(const struct power *p);

/** power_free() - abort and free; accepts NULL; returns NULL. */
struct power *power_free(struct power *p);

/* For drivers */

/** power_priv() - the driver's private state (priv_size bytes, zeroed at creation). */
void *power_priv(struct power *p);
/** power_ctx() - the context given to power_new(). */
const struct driver_ctx *power_ctx(const struct power *p);
/** power_vars() - the variables of the last power_set_vars(); never NULL, maybe empty. */
const struct kv *power_vars(const struct power *p);
/** power_timeout() - the operation timeout, for drivers that enforce it themselves. */
uint64_t power_timeout(const struct power *p);
/**
 * power_request_timeout_ms() - the timeout of the next request of the current step
 * @default_ms: the driver's own limit for one request
 *
 * For a driver that makes several requests in one step (a USB hub: descriptor,
 * switch, status): the time left of the step's power_timeout(), or @default_ms
 * when that is less; at least 1 ms.  The step then ends within power_timeout()
 * whatever its first requests took, and the driver names the request that was
 * too slow a full grace period (a second) before the core's own timer would.
 */
unsigned power_request_timeout_ms(const struct power *p, unsigned default_ms);
/** power_complete() - the driver finished the operation started by ->start(). */
void power_complete(struct power *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const char *power_op_name(enum power_op op);

#endif
