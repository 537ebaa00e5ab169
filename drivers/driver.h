/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * driver.h -- what every driver instance gets from the daemon
 *
 * Drivers are found by name from a board definition (like a kernel
 * `compatible` string) and never go looking for their boards.  Each gets a
 * driver_ctx: the event loop to register its fds, timers and child processes
 * with, the shared HTTP client (libcurl multi inside the loop), and names
 * for its messages.  Driver operations never block: they start work and
 * report completion later, from the loop.
 */
#ifndef LABD_DRIVER_H
#define LABD_DRIVER_H

#include <stdbool.h>

struct loop;
struct http_client;
struct lab_config;

/**
 * Called by a driver, from the loop, when hardware it needs vanished
 * (@present false) or came back: a USB hub, a YKUSH, a USB-SD-Mux.  @part is
 * the same key for the same piece every time ("power", "sdmux"); @what names
 * it for people ("USB device at '1-1'").  The board is bad while a part is
 * missing and comes back by itself when it returns.
 */
typedef void (*driver_presence_fn)(const char *part, bool present, const char *what,
				   void *userdata);

struct driver_ctx {
	struct loop *loop;
	struct http_client *http;	/* NULL in check-config mode */
	const struct lab_config *config;
	const char *device_name;	/* for messages: "power 'sim-01': ..." */
	/* optional: set by the board; drivers watching their hardware report here
	 * (only when both are set: not in check-config mode nor in tools) */
	driver_presence_fn presence;
	void *presence_userdata;
};

#endif
