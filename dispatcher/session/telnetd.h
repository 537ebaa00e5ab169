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
 */
#ifndef LABD_TELNETD_H
#define LABD_TELNETD_H

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
};

/** telnetd_new() - listen for @b's holder @holder. Returns 0 or a negative errno. */
int telnetd_new(const struct telnetd_deps *deps, struct board *b, const char *holder,
		struct telnetd **ret);

/** telnetd_port() - the TCP port it listens on. */
int telnetd_port(const struct telnetd *t);

/** telnetd_free() - stop listening and close the clients, telling them @why; accepts NULL. */
struct telnetd *telnetd_free(struct telnetd *t, const char *why);

#endif
