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

struct loop;
struct http_client;
struct lab_config;

struct driver_ctx {
	struct loop *loop;
	struct http_client *http;	/* NULL in check-config mode */
	const struct lab_config *config;
	const char *device_name;	/* for messages: "power 'sim-01': ..." */
};

#endif
