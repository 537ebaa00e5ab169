/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp.h -- stream-socket connections for console drivers (tcp, unix, telnet, qemu)
 *
 * A driver that talks to its console over a socket embeds a struct
 * console_tcp in its private state and:
 *  1. fills it from its settings with console_tcp_parse() (keys `host`,
 *     `port`; the driver checks for unknown keys itself);
 *  2. calls console_tcp_open() from ->open() and console_tcp_connected()
 *     from ->connected();
 *  3. calls console_tcp_release() from ->release().
 *
 * Numeric addresses connect at once.  Host names are resolved without
 * blocking (getaddrinfo_a): console_tcp_open() returns -EAGAIN while the
 * lookup runs, and the core calls ->open() again shortly.  A name is looked
 * up again at every open, and each failed attempt moves on to the next of its
 * addresses (so "localhost" works whether the server listens on 127.0.0.1 or
 * ::1).  Sockets get TCP_NODELAY and keepalive probes, so a dead server is
 * noticed in about half a minute even when the board is silent.
 *
 * console_tcp_open_unix() connects an AF_UNIX stream socket instead (QEMU's
 * `-chardev socket,path=...,server=on`); it returns 0 or an error, never
 * -EINPROGRESS.
 */
#ifndef LABD_CONSOLE_TCP_H
#define LABD_CONSOLE_TCP_H

#include <libconfig.h>

struct console;
struct console_tcp_lookup;
struct diag;

struct console_tcp {
	char *host;
	char port[8];			/* decimal, as getaddrinfo() wants it */
	char *where;			/* "host:port", for messages */
	struct console_tcp_lookup *lookup;	/* a name lookup in progress */
	unsigned attempt;		/* failed connects, to rotate addresses */
};

/** console_tcp_parse() - read `host` and `port` from @settings. 0, -EINVAL, -ENOMEM. */
int console_tcp_parse(struct console_tcp *t, const config_setting_t *settings,
		      struct diag *diag);

/**
 * console_tcp_open() - start a non-blocking connect
 *
 * Returns 0 (connected), -EINPROGRESS (*@ret_fd is set; wait for it to become
 * writable), -EAGAIN (name lookup in progress; call again) or a negative errno
 * with a reason recorded by console_set_error().
 */
int console_tcp_open(struct console *c, struct console_tcp *t, int *ret_fd);

/** console_tcp_connected() - result of a pending connect on @fd: 0 or a negative errno. */
int console_tcp_connected(struct console *c, struct console_tcp *t, int fd);

/** console_tcp_release() - free the settings and cancel a lookup; accepts a zeroed @t. */
void console_tcp_release(struct console_tcp *t);

/** console_tcp_open_unix() - connect to the AF_UNIX stream socket at @path. */
int console_tcp_open_unix(struct console *c, const char *path, int *ret_fd);

#endif
