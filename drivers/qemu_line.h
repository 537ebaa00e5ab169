/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qemu_line.h -- the serial line between labd and the QEMU of a board
 *
 * A QEMU board has a `qemu` console driver (console/qemu.c) and a `qemu`
 * power driver (power/qemu.c).  They share one line per board: a socketpair
 * that labd creates when the console opens.  labd's end is the console's fd;
 * the other end, the board's, is handed to every QEMU the power driver starts
 * (`-chardev socket,id=...,fd=N`), so QEMU's serial port is connected before
 * QEMU even exists: labd owns the console from the first byte, with nothing
 * to wait for and nothing to reconnect.  labd keeps the board's end open
 * itself, so the console stays up while QEMU is off or restarting, like the
 * UART of a real board that is power-cycled.  Bytes typed while no QEMU runs
 * wait in the board's end; the power driver drops them before it starts QEMU
 * (qemu_line_drain()).
 *
 * When QEMU dies on its own (it exits with an error, or is killed by
 * someone else), the power driver reports it with qemu_line_lost(): the
 * console goes down with that reason ("qemu exited with status 1:
 * qemu-system-x86_64: -kernel ...: No such file or directory"), a running
 * job ends with it, and the console core reopens a fresh line a second later.
 *
 * The drivers find their line by board: the lab configuration and device
 * name of their driver_ctx.  Each driver holds a reference from its
 * ->parse() to its ->release(), so either may come first.  Single-threaded,
 * like the rest of the daemon.
 */
#ifndef LABD_QEMU_LINE_H
#define LABD_QEMU_LINE_H

#include "drivers/driver.h"

struct console;
struct qemu_line;

/** qemu_line_get() - the line of @ctx's board, created on first use. 0 or -ENOMEM. */
int qemu_line_get(const struct driver_ctx *ctx, struct qemu_line **ret);

/** qemu_line_put() - drop a reference; accepts NULL; returns NULL. */
struct qemu_line *qemu_line_put(struct qemu_line *l);

/* ---- for the console driver ---- */

/** qemu_line_set_console() - the console that qemu_line_lost() reports to (NULL: none). */
void qemu_line_set_console(struct qemu_line *l, struct console *c);

/**
 * qemu_line_open() - a new socketpair: labd's end (non-blocking, close-on-exec,
 * owned by the caller) in *@ret_fd; the board's end stays in the line.  Any
 * previous pair is forgotten.  Returns 0 or a negative errno.
 */
int qemu_line_open(struct qemu_line *l, int *ret_fd);

/** qemu_line_close() - labd's end was closed: close the board's end too. */
void qemu_line_close(struct qemu_line *l);

/* ---- for the power driver ---- */

/** qemu_line_board_fd() - the board's end for QEMU (close-on-exec), or -1 if not open. */
int qemu_line_board_fd(const struct qemu_line *l);

/** qemu_line_drain() - drop what was typed on the console while no QEMU ran. */
void qemu_line_drain(struct qemu_line *l);

/** qemu_line_lost() - QEMU died on its own: the console goes down with @reason. */
void qemu_line_lost(struct qemu_line *l, const char *reason);

#endif
