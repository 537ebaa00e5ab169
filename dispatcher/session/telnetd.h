/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * telnetd.h -- a board's console on a loopback telnet port, for its holder
 *
 * Like a ser2net port: `telnet 127.0.0.1 PORT`, `socat - TCP:127.0.0.1:PORT`
 * or microcom attach to the board's console.  Each client is a viewer
 * (viewer.h) acting as the board's holder: it gets the scrollback, then the
 * live output, and may type while the holder holds the board; labd keeps
 * logging everything.  The listener binds 127.0.0.1 on a port the kernel
 * picks and accepts at most TELNETD_MAX_CLIENTS at once.  The reservation
 * owns it (reservations.h) and frees it when it ends, closing the clients.
 *
 * Through another host of a lab (doc/multi-host.md) the port is that
 * host's: a relay port (telnetd_new_relay()) hands each client it lets in
 * to its deps' relay(), which passes the bytes to the board's host, where
 * they reach this port's viewers (telnetd_attach()); and that host keeps a
 * watch (telnetd_watch()) told when the port closes here.
 */
#ifndef LABD_TELNETD_H
#define LABD_TELNETD_H

#include <stddef.h>

#include "session/viewer.h"

struct board;
struct lab;
struct loop;
struct telnetd;
struct viewers;

#define TELNETD_MAX_CLIENTS 4
#define TELNETD_REPLAY (4 * 1024)	/* scrollback bytes a new client gets */

/* What a telnet port needs; it keeps the pointers, which outlive it. */
struct telnetd_deps {
	struct loop *loop;
	struct viewers *viewers;	/* its clients are viewers */
	const struct lab *lab;		/* the users (whose uid may connect) */
	/* a relay port's: take client @fd (the callee's, closed on failure); 0 or -errno */
	int (*relay)(int fd, void *userdata);
	void *relay_userdata;
};

/** telnetd_new() - listen for @b's holder @holder. Returns 0 or a negative errno. */
int telnetd_new(const struct telnetd_deps *deps, struct board *b, const char *holder,
		struct telnetd **ret);

/**
 * telnetd_new_relay() - listen for @holder on this host for @board, a
 * board of another host: each client let in goes to deps->relay.
 */
int telnetd_new_relay(const struct telnetd_deps *deps, const char *board, const char *holder,
		      struct telnetd **ret);

/**
 * telnetd_attach() - a client of the port that came through another host
 * (@fd, an upgraded API connection, closed with @close): a viewer like one
 * accepted here (@extra: bytes it sent already).  Returns 0, -EBUSY (too
 * many clients: told so, and closed) or -ENOMEM (closed).
 */
int telnetd_attach(struct telnetd *t, int fd, const void *extra, size_t extra_len,
		   viewer_close_fn close, void *close_userdata);

/**
 * telnetd_watch() - keep @fd (another host's relay port's watch) until the
 * port closes, then send it the reason as one line and close it (@close); or
 * until the other end closes it.  Returns 0, or -ENOMEM/-EBUSY (closed).
 */
int telnetd_watch(struct telnetd *t, int fd, viewer_close_fn close, void *close_userdata);

/**
 * telnetd_unwatch() - send every watch @why and close it now, the port left
 * open: labd stops, and a watch is a connection the API upgraded, which
 * must close before the API is freed (reservations_unwatch()).
 */
void telnetd_unwatch(struct telnetd *t, const char *why);

/** telnetd_port() - the TCP port it listens on. */
int telnetd_port(const struct telnetd *t);

/** telnetd_free() - stop listening and close the clients, telling them @why; accepts NULL. */
struct telnetd *telnetd_free(struct telnetd *t, const char *why);

#endif
