/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sdmux.h -- SD-card multiplexers: the board's card switched between the lab host and the board
 *
 * A board booting from an SD card gets its image through a mux (the
 * Pengutronix USB-SD-Mux and the like): labd switches the card to the host,
 * writes the image to the card's block device (`disk`), then switches the
 * card back to the board ("dut").  This is the core: one driver file per
 * kind of mux (drivers/sdmux/<name>.c) defining a `const struct
 * sdmux_driver`, listed in the table of drivers/sdmux.c, found by name from
 * the board's `sdmux` group:
 *
 *	sdmux = {
 *		driver = "usbsdmux";		// or "fake"
 *		disk = "/dev/disk/by-id/usb-LinuxAut_sdmux_HS-SD_MMC_000000001234-0:0";
 *		timeout = 10;			// optional: seconds per switch
 *		...				// the driver's keys
 *	};
 *
 * Protocol for users (the deploy action):
 *  1. sdmux_new() parses the group (no hardware access).
 *  2. sdmux_switch(m, mode, done, ud) starts a switch; -EBUSY if one runs.
 *  3. done(m, err, msg, ud) is called exactly once, from the loop: 0 when
 *     the mux reads back the mode asked for, else a negative errno and a
 *     one-line reason.  The core's timer bounds a switch by `timeout`.
 *  4. sdmux_abort() stops a switch (no callback); sdmux_free() aborts too.
 *
 * Protocol for drivers: ->start() begins the switch and returns 0 or a
 * negative errno; it later calls sdmux_complete() once, from a loop callback.
 */
#ifndef LABD_SDMUX_H
#define LABD_SDMUX_H

#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "drivers/driver.h"

struct diag;
struct driver_config;
struct sdmux;

enum sdmux_mode {
	SDMUX_OFF,		/* the card is connected to neither side */
	SDMUX_HOST,		/* the lab host reads and writes the card */
	SDMUX_DUT,		/* the board boots from the card */
};

#define SDMUX_DEFAULT_TIMEOUT (10 * 1000000ULL)
#define SDMUX_COMMON_KEYS "driver", "disk", "timeout"

typedef void (*sdmux_done_fn)(struct sdmux *m, int err, const char *msg, void *userdata);

struct sdmux_driver {
	const char *name;
	size_t priv_size;
	/** required: parse the driver's keys of @settings; no hardware access */
	int (*parse)(struct sdmux *m, const config_setting_t *settings, struct diag *diag);
	/** required: start switching to @mode */
	int (*start)(struct sdmux *m, enum sdmux_mode mode);
	/** optional: stop the switch; no sdmux_complete() afterwards */
	void (*abort)(struct sdmux *m);
	/** optional: free the private state */
	void (*release)(struct sdmux *m);
};

/**
 * sdmux_new() - the SD-mux of a board from its `sdmux` group
 * @ctx: copied; its pointers must outlive the mux.  A driver watching its
 *       hardware reports it as part "sdmux" through ctx->presence.
 *
 * Returns 0, -EINVAL (problems in @diag) or -ENOMEM.
 */
int sdmux_new(const struct driver_config *cfg, const struct driver_ctx *ctx, struct sdmux **ret,
	      struct diag *diag);

/** sdmux_switch() - switch the card to @mode; @done follows from the loop. */
int sdmux_switch(struct sdmux *m, enum sdmux_mode mode, sdmux_done_fn done, void *userdata);

/** sdmux_abort() - stop the running switch; its callback is not called. */
void sdmux_abort(struct sdmux *m);

/** sdmux_disk() - the block device of the card on the host side (the `disk` key). */
const char *sdmux_disk(const struct sdmux *m);

/** sdmux_free() - abort and free; accepts NULL; returns NULL. */
struct sdmux *sdmux_free(struct sdmux *m);

/** sdmux_driver_names() - NULL-terminated list of the driver names. */
const char *const *sdmux_driver_names(void);

const char *sdmux_mode_name(enum sdmux_mode mode);

/* For drivers */
void *sdmux_priv(struct sdmux *m);
const struct driver_ctx *sdmux_ctx(const struct sdmux *m);
uint64_t sdmux_timeout(const struct sdmux *m);
/** sdmux_complete() - the switch started by ->start() finished. */
void sdmux_complete(struct sdmux *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
