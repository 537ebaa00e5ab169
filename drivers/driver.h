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
#include <stddef.h>

#include <libconfig.h>

struct http_client;
struct kv;
struct lab_config;
struct loop;

/**
 * A driver instance's settings, as the board definition gives them: the
 * driver's name and its libconfig group (config/config.h fills them in
 * struct device).
 */
struct driver_config {
	char *driver;		/* "pty", "command", ... */
	const config_setting_t *settings;	/* borrowed from the lab_config's parsed files */
	char *file;
	int line;
};

/**
 * Called by a driver, from the loop, when hardware it needs vanished
 * (@present false) or came back: a USB hub, a YKUSH, a USB-SD-Mux.  @part is
 * the same key for the same piece every time ("power", "sdmux"); @what names
 * it for people ("USB device at '1-1'").  The board is bad while a part is
 * missing and comes back by itself when it returns.
 */
typedef void (*driver_presence_fn)(const char *part, bool present, const char *what,
				   void *userdata);

/**
 * QEMU boards (power/qemu.c): the argv of a QEMU for this board, built from
 * its definition with the job's variables @job_vars (config/qemu_cmdline.h
 * says how), QEMU's serial line at fd @serial_fd, its log at @serial_log
 * (or NULL).  0, or -EINVAL with the reason in @err, or -ENOMEM.
 */
typedef int (*driver_qemu_argv_fn)(void *userdata, const struct kv *job_vars, int serial_fd,
				   const char *serial_log, char ***ret, char *err, size_t errlen);

struct driver_ctx {
	struct loop *loop;
	struct http_client *http;	/* NULL in check-config mode */
	/* which lab configuration the driver belongs to: with device_name, the key of
	 * state two drivers of one board share (qemu_line.h); never read through */
	const struct lab_config *config;
	const char *device_name;	/* for messages: "power 'sim-01': ..." */
	const char *state_dir;	/* labd's; a driver keeps its files in boards/<name>/ */
	/* optional, set by the board (not in check-config mode nor in tools):
	 * drivers watching their hardware report here (when both are set), and
	 * the QEMU power driver asks for its command line */
	driver_presence_fn presence;
	driver_qemu_argv_fn qemu_argv;
	void *board_userdata;		/* of presence and qemu_argv */
};

#endif
