// SPDX-License-Identifier: GPL-2.0-or-later
/* telnetd.c -- a board's console on a loopback telnet port for its holder, like ser2net */
#include "session/telnetd.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "board/board.h"
#include "board/lab.h"
#include "core/log.h"
#include "core/loop.h"
#include "session/users.h"
#include "session/viewer.h"

#define TELNETD_BACKLOG 8

struct telnetd {
	struct telnetd_deps deps;
	struct board *board;		/* referenced */
	char *holder;
	int fd;
	int port;
	struct loop_source *io;
};

/*
 * The uid owning the other end of loopback TCP connection @fd: the socket of
 * /proc/net/tcp whose local address is our peer and whose remote address is
 * us (an ident lookup without identd).  -ENOENT when it is not there: gone
 * already, or not on this host's network namespace.
 */
static int loopback_peer_uid(int fd, uid_t *ret)
{
	struct sockaddr_in self, peer;
	socklen_t ls = sizeof(self), lp = sizeof(peer);
	char want_local[32], want_rem[32], local[64], rem[64], line[512];
	unsigned long uid;
	int err = -ENOENT;
	FILE *f;

	if (getsockname(fd, (struct sockaddr *)&self, &ls) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &lp) < 0)
		return -errno;
	/* The kernel prints the address as the int it stores, the port in host order. */
	snprintf(want_local, sizeof(want_local), "%08" PRIX32 ":%04X", peer.sin_addr.s_addr,
		 ntohs(peer.sin_port));
	snprintf(want_rem, sizeof(want_rem), "%08" PRIX32 ":%04X", self.sin_addr.s_addr,
		 ntohs(self.sin_port));
	f = fopen("/proc/net/tcp", "re");
	if (!f)
		return -errno;
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %*u: %63s %63s %*x %*s %*s %*s %lu", local, rem, &uid) == 3 &&
		    !strcmp(local, want_local) && !strcmp(rem, want_rem)) {
			*ret = (uid_t)uid;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/*
 * Whether the client on @c may act as the holder.  When the holder's user
 * lists uids, only a process of one of them (or of an admin's) may; a holder
 * known by token only cannot be told from other local users (doc/console.md).
 */
static bool client_allowed(struct telnetd *t, int c, char *why, size_t len)
{
	const struct users *us = lab_users(t->deps.lab);
	const struct user *holder = users_find_name(us, t->holder), *who;
	uid_t uid = (uid_t)-1;
	size_t i;

	if (!holder || !holder->n_uids)
		return true;
	if (loopback_peer_uid(c, &uid) < 0) {
		snprintf(why, len, "cannot tell who connects");
		return false;
	}
	for (i = 0; i < holder->n_uids; i++)
		if (holder->uids[i] == uid)
			return true;
	who = users_find_uid(us, uid);
	if (who && who->role == USER_ROLE_ADMIN)
		return true;
	snprintf(why, len, "uid %lu is not '%s'", (unsigned long)uid, t->holder);
	return false;
}

/* Turn a client away with @msg. */
static void refuse(int c, const char *msg)
{
	send(c, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	close(c);
}

static int on_accept(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct telnetd *t = ud;
	struct viewers *vs = t->deps.viewers;
	struct viewer_params p = {
		.board = t->board, .wire = VIEWER_WIRE_TELNET, .who = t->holder,
		.role = USER_ROLE_DEVELOPER, .replay = TELNETD_REPLAY, .owner = t,
	};
	char why[128], msg[256];
	int c;

	c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? 0 : -errno;
	if (viewers_count_owned(vs, t) >= TELNETD_MAX_CLIENTS) {
		refuse(c, "labd: too many clients on this port\r\n");
		return 0;
	}
	if (!client_allowed(t, c, why, sizeof(why))) {
		log_warning("board '%s': telnet client refused: %s", board_name(t->board), why);
		snprintf(msg, sizeof(msg), "labd: this port is for '%s': %s\r\n", t->holder, why);
		refuse(c, msg);
		return 0;
	}
	p.fd = c;
	viewer_attach(vs, &p);
	return 0;
}

static int listen_loopback(int *ret_fd, int *ret_port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, TELNETD_BACKLOG) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	*ret_fd = fd;
	*ret_port = ntohs(sin.sin_port);
	return 0;
}

int telnetd_new(const struct telnetd_deps *deps, struct board *b, const char *holder,
		struct telnetd **ret)
{
	struct telnetd *t = calloc(1, sizeof(*t));
	char desc[128];
	int err;

	if (!t)
		return -ENOMEM;
	t->deps = *deps;
	t->fd = -1;
	t->board = board_ref(b);
	t->holder = strdup(holder);
	err = t->holder ? listen_loopback(&t->fd, &t->port) : -ENOMEM;
	if (!err)
		err = loop_add_io(deps->loop, &t->io, t->fd, EPOLLIN, on_accept, t);
	if (err < 0) {
		log_warning("board '%s': cannot open a telnet port: %s", board_name(b),
			    strerror(-err));
		telnetd_free(t, NULL);
		return err;
	}
	snprintf(desc, sizeof(desc), "telnet:%s", board_name(b));
	loop_source_set_description(t->io, desc);
	log_info("board '%s': telnet port %d for '%s'", board_name(b), t->port, holder);
	*ret = t;
	return 0;
}

int telnetd_port(const struct telnetd *t)
{
	return t->port;
}

struct telnetd *telnetd_free(struct telnetd *t, const char *why)
{
	if (!t)
		return NULL;
	if (t->io)
		log_info("board '%s': telnet port %d closed", board_name(t->board), t->port);
	viewers_close(t->deps.viewers, t, why);
	loop_source_free(t->io);
	if (t->fd >= 0)
		close(t->fd);
	board_unref(t->board);
	free(t->holder);
	free(t);
	return NULL;
}
