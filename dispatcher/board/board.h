/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * board.h -- a board of the lab at run time
 *
 * board/ owns the boards at run time: this header, the scrollback ring of a
 * console (consolebuf.h), and the lab as the other modules see it, the
 * configuration, users and boards of now (lab.h).
 *
 * A board is a device of the configuration brought to life: its console is
 * opened at start and kept open for as long as labd runs (every byte goes to
 * the board's own log, the scrollback ring and whoever subscribes: a running
 * job, console viewers), and its power driver is ready for jobs and people.
 *
 * State: an admin state (idle or maintenance, persisted) combined with what
 * labd observes: a job running, a reservation, a vanished console or a
 * failed power control.  board_state() gives the effective state:
 *
 *   maintenance  an admin took the board out
 *   running      a job runs on it
 *   reserved     a developer holds it
 *   bad          its console is gone, its power control failed or a part
 *                of its hardware (a USB hub, an SD-mux) vanished; it comes
 *                back by itself when the console or the part returns (power
 *                faults need an admin: `labctl device set-state NAME idle`)
 *   idle         ready for a job
 *
 * Boards are refcounted: the daemon's board list, a running job and API
 * handlers may hold one.  A board removed by a configuration reload is
 * "retired": it finishes its job, then closes its console.
 */
#ifndef LABD_BOARD_H
#define LABD_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jobstate.h"

struct board;
struct consolebuf;
struct console;
struct device;
struct http_client;
struct joblog;
struct lab_config;
struct loop;
struct power;
struct sdmux;
struct store;

#define BOARD_LOG_MAX (16 * 1024 * 1024)	/* board log rotated beyond this */
#define BOARD_MAX_PARTS 8	/* hardware parts that can be missing at once */
#define BOARD_MASK_HOLD (300 * 1000ULL)	/* usec a possible secret's start may wait */

/** Called when a board's effective state may have changed (the scheduler re-plans). */
typedef void (*board_changed_fn)(struct board *b, void *userdata);

struct board_deps {
	struct loop *loop;
	struct http_client *http;
	struct store *store;
	board_changed_fn changed;
	void *userdata;
};

/**
 * board_new() - bring a configured device to life (nothing opened yet)
 * @cfg: referenced by the board for as long as it lives
 *
 * The persisted admin state is read from the store.
 */
int board_new(const struct board_deps *deps, struct lab_config *cfg, const struct device *dev,
	      struct board **ret);

/** board_start() - open the console (and keep reopening it) and the board log. */
int board_start(struct board *b);

struct board *board_ref(struct board *b);
struct board *board_unref(struct board *b);

const char *board_name(const struct board *b);
const struct device *board_device(const struct board *b);
const struct lab_config *board_config(const struct board *b);
struct console *board_console(struct board *b);
/** board_power() - the power control, or NULL for a board without one. */
struct power *board_power(struct board *b);
/** board_sdmux() - the SD-mux of the board's card, or NULL. */
struct sdmux *board_sdmux(struct board *b);
struct consolebuf *board_consolebuf(struct board *b);
/** board_log() - the board's own log (its output, labd's notes on it), or NULL if not open. */
struct joblog *board_log(struct board *b);

bool board_console_up(const struct board *b);
enum device_state board_state(const struct board *b);
/** board_state_reason() - why maintenance or bad (borrowed), or NULL. */
const char *board_state_reason(const struct board *b);
/** board_is_available() - idle, started and not retired: the scheduler may use it. */
bool board_is_available(const struct board *b);
bool board_has_tags(const struct board *b, char *const *tags);

/** board_set_admin_state() - idle or maintenance (persisted). idle also clears a power fault. */
int board_set_admin_state(struct board *b, enum device_state s, const char *reason);
/** board_set_job() - mark the board running job @id (0: none). */
void board_set_job(struct board *b, int64_t id);
int64_t board_job(const struct board *b);
/**
 * board_power_off() - power the board off outside a job (after a crash, when a
 * reservation ends).  The board is not available until the power-off finished;
 * a failure marks it bad.  Returns 0, or -EBUSY / -ENODEV.
 */
int board_power_off(struct board *b, const char *why);

/** board_set_power_fault() - power control failed: bad until an admin clears it. */
void board_set_power_fault(struct board *b, const char *reason);

/**
 * board_set_part_missing() - hardware @part of the board ("power", "sdmux")
 * vanished (@what names it: "USB device at '1-1'") or, with @what NULL, is
 * back.  The board is bad while any part is missing.  Drivers report through
 * driver_ctx.presence, which the board points here.
 */
void board_set_part_missing(struct board *b, const char *part, const char *what);

/** board_set_reservation() - holder and expiry (0 clears); reserved while held. */
void board_set_reservation(struct board *b, const char *holder, uint64_t until);
const char *board_holder(const struct board *b);
uint64_t board_hold_until(const struct board *b);

/** board_retire() - removed from the configuration: close once no job runs. */
void board_retire(struct board *b);
bool board_is_retired(const struct board *b);

/** board_persist() - write the effective state to the store. */
void board_persist(struct board *b);

/**
 * Console hooks for the running job.  Only one job at a time: board_set_job_hooks()
 * replaces the previous hooks; pass NULL to remove them.  While they are set the
 * console bytes go to the job (its log) and not to the board's own log, which
 * notes where they went ("job N: the console goes to the job's log").
 */
struct board_job_hooks {
	void (*data)(const uint8_t *buf, size_t len, void *userdata);
	void (*console_state)(bool up, const char *reason, void *userdata);
};
void board_set_job_hooks(struct board *b, const struct board_job_hooks *hooks, void *userdata);

/**
 * board_set_mask() - a running job's secrets (core/mask.h; borrowed until the
 * next call, NULL for none): from now on replaced in every console byte
 * before the board's log, its scrollback, viewers and the job's hooks see
 * it.  Bytes that may begin a secret wait for the next ones, at most
 * BOARD_MASK_HOLD; a call flushes them.
 */
struct mask;
void board_set_mask(struct board *b, const struct mask *m);

#endif
