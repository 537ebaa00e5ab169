/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * console.h -- a board's serial console: the driver interface and its core
 *
 * labd owns every console continuously, job or no job, so nothing a board
 * prints is lost.  A console driver is one file (drivers/console/<name>.c)
 * defining a `const struct console_driver`, listed in drivers/console.c.  The
 * driver only knows how to open a non-blocking fd (a tty, a pty, a socket)
 * and, for network protocols, how to decode and encode the byte stream
 * (telnet IAC).  The core (console.c) owns the fd in the loop, reads, queues
 * writes (with an optional per-character delay), notices when the console
 * vanishes (EOF, EIO, HUP: USB adapter unplugged, socket closed) and tries
 * to reopen it every second until it comes back.
 *
 * Protocol for users (the board):
 *  1. console_new() parses the board's `console` group (no hardware access).
 *  2. console_start() opens the console and keeps it open; ops->data()
 *     receives every byte the board sends, ops->state() reports up/down.
 *  3. console_write() queues bytes for the board (-ENOBUFS when the queue
 *     is full: CONSOLE_MAX_QUEUE).
 *  4. console_free() closes everything.
 */
#ifndef LABD_CONSOLE_H
#define LABD_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libconfig.h>

#include "drivers/driver.h"

struct diag;
struct driver_config;
struct console;
struct strbuf;

#define CONSOLE_MAX_QUEUE (256 * 1024)	/* bytes waiting to be written to the board */
#define CONSOLE_REOPEN_INTERVAL (1000000ULL)

struct console_driver {
	const char *name;
	size_t priv_size;
	/** required: parse @settings into the private state; no hardware access */
	int (*parse)(struct console *c, const config_setting_t *settings, struct diag *diag);
	/**
	 * required: open a non-blocking, close-on-exec fd into *@ret_fd.  Return 0
	 * when usable, -EINPROGRESS when a connect is pending (the core waits for
	 * EPOLLOUT and calls ->connected()), -EAGAIN when it cannot tell yet (a
	 * host name lookup runs: the core calls ->open() again shortly), or a
	 * negative errno; write a reason with console_set_error() before failing.
	 * console_write_raw() works from here on (protocol greetings).
	 */
	int (*open)(struct console *c, int *ret_fd);
	/** optional: check a pending connect once the fd is writable (default: SO_ERROR) */
	int (*connected)(struct console *c, int fd);
	/** optional: close the fd and driver resources (default: close(fd)) */
	void (*close)(struct console *c, int fd);
	/**
	 * optional: protocol decoding, in place: strip protocol bytes from @buf and
	 * return how many data bytes remain at its start.  Replies go out through
	 * console_write_raw().
	 */
	size_t (*decode)(struct console *c, uint8_t *buf, size_t len);
	/** optional: protocol encoding of data for the board (e.g. IAC doubling) */
	int (*encode)(struct console *c, const uint8_t *data, size_t len, struct strbuf *out);
	/** optional: send a serial break */
	int (*send_break)(struct console *c, int fd);
	/** optional: free what ->parse() allocated */
	void (*release)(struct console *c);
};

struct console_ops {
	/** bytes from the board, decoded; never NULL */
	void (*data)(struct console *c, const uint8_t *buf, size_t len, void *userdata);
	/** the console came up (@up) or went down with a one-line @reason */
	void (*state)(struct console *c, bool up, const char *reason, void *userdata);
};

const struct console_driver *console_find_driver(const char *name);
const char *const *console_driver_names(void);

/** console_new() - parse a board's console settings. Returns 0, -EINVAL (see @diag), -ENOMEM. */
int console_new(const struct driver_config *cfg, const struct driver_ctx *ctx,
		struct console **ret, struct diag *diag);

/**
 * console_start() - open now and keep the console open; reports through @ops
 *
 * The first ops->state() may come from inside this call.  Callbacks may call
 * console_free().  Returns 0 (even when the console is down: it is retried
 * every CONSOLE_REOPEN_INTERVAL), -EALREADY or -ENOMEM.
 */
int console_start(struct console *c, const struct console_ops *ops, void *userdata);

/** console_is_up() - whether the console is open and connected. */
bool console_is_up(const struct console *c);

/** console_last_error() - why the console is down (borrowed), or "". */
const char *console_last_error(const struct console *c);

/**
 * console_write() - queue @len bytes for the board
 * @char_delay: usec between characters (U-Boot on slow UARTs), 0 for none
 *
 * Returns 0, -ENOTCONN when the console is down, -ENOBUFS when the queue is full.
 */
int console_write(struct console *c, const void *data, size_t len, uint64_t char_delay);

/** console_queued() - bytes not yet written to the board. */
size_t console_queued(const struct console *c);

/** console_send_break() - send a serial break; -EOPNOTSUPP if the driver cannot. */
int console_send_break(struct console *c);

/** console_free() - close and free; accepts NULL; returns NULL. */
struct console *console_free(struct console *c);

/* For drivers */
void *console_priv(struct console *c);
const struct driver_ctx *console_ctx(const struct console *c);
/** console_set_error() - record why open failed or why the console went down. */
void console_set_error(struct console *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** console_write_raw() - queue protocol bytes as they are (no encoding, no delay). */
int console_write_raw(struct console *c, const void *data, size_t len);
/** console_lost() - the driver detected a dead link (e.g. telnet protocol error). */
void console_lost(struct console *c, const char *reason);

#endif
