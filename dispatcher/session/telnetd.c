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
#define TELNETD_MAX_WATCHES 8

/* Another host's relay port of this one, told when it closes. */
struct watch {
	struct telnetd *t;
	int fd;
	struct loop_source *io;
	viewer_close_fn close;
	void *close_userdata;
};

struct telnetd {
	struct telnetd_deps deps;
	struct board *board;		/* referenced; NULL for a relay port */
	char *name;			/* the board's */
	char *holder;
	int fd;
	int port;
	struct loop_source *io;
	struct watch *watches[TELNETD_MAX_WATCHES];
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
	if (!t->deps.relay && viewers_count_owned(vs, t) >= TELNETD_MAX_CLIENTS) {
		refuse(c, "labd: too many clients on this port\r\n");
		return 0;
	}
	if (!client_allowed(t, c, why, sizeof(why))) {
		log_warning("board '%s': telnet client refused: %s", t->name, why);
		snprintf(msg, sizeof(msg), "labd: this port is for '%s': %s\r\n", t->holder, why);
		refuse(c, msg);
		return 0;
	}
	if (t->deps.relay) {
		t->deps.relay(c, t->deps.relay_userdata);	/* it tells the client why not */
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

static int telnetd_open(const struct telnetd_deps *deps, struct board *b, const char *name,
			const char *holder, struct telnetd **ret)
{
	struct telnetd *t = calloc(1, sizeof(*t));
	char desc[128];
	int err;

	if (!t)
		return -ENOMEM;
	t->deps = *deps;
	t->fd = -1;
	t->board = b ? board_ref(b) : NULL;
	t->name = strdup(name);
	t->holder = strdup(holder);
	err = t->name && t->holder ? listen_loopback(&t->fd, &t->port) : -ENOMEM;
	if (!err)
		err = loop_add_io(deps->loop, &t->io, t->fd, EPOLLIN, on_accept, t);
	if (err < 0) {
		log_warning("board '%s': cannot open a telnet port: %s", name, strerror(-err));
		telnetd_free(t, NULL);
		return err;
	}
	snprintf(desc, sizeof(desc), "telnet:%s", name);
	loop_source_set_description(t->io, desc);
	log_info("board '%s': telnet port %d for '%s'%s", name, t->port, holder,
		 b ? "" : " (relayed to the board's host)");
	*ret = t;
	return 0;
}

int telnetd_new(const struct telnetd_deps *deps, struct board *b, const char *holder,
		struct telnetd **ret)
{
	return telnetd_open(deps, b, board_name(b), holder, ret);
}

int telnetd_new_relay(const struct telnetd_deps *deps, const char *board, const char *holder,
		      struct telnetd **ret)
{
	if (!deps->relay)
		return -EINVAL;
	return telnetd_open(deps, NULL, board, holder, ret);
}

int telnetd_attach(struct telnetd *t, int fd, const void *extra, size_t extra_len,
		   viewer_close_fn close, void *close_userdata)
{
	static const char busy[] = "labd: too many clients on this port\r\n";
	struct viewer_params p = {
		.board = t->board, .fd = fd, .wire = VIEWER_WIRE_TELNET, .who = t->holder,
		.role = USER_ROLE_DEVELOPER, .replay = TELNETD_REPLAY, .owner = t,
		.extra_in = extra, .extra_in_len = extra_len,
		.close = close, .close_userdata = close_userdata,
	};

	if (!t->board || viewers_count_owned(t->deps.viewers, t) >= TELNETD_MAX_CLIENTS) {
		send(fd, busy, strlen(busy), MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd, close_userdata);
		return -EBUSY;
	}
	log_info("board '%s': a telnet client through another host", t->name);
	return viewer_attach(t->deps.viewers, &p);
}

/* ---- watches: another host's relay port, told when this one closes ---- */

static void watch_free(struct watch *w, const char *why)
{
	size_t i;

	for (i = 0; i < TELNETD_MAX_WATCHES; i++)
		if (w->t->watches[i] == w)
			w->t->watches[i] = NULL;
	if (why) {
		send(w->fd, why, strlen(why), MSG_NOSIGNAL | MSG_DONTWAIT);
		send(w->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	loop_source_free(w->io);
	w->close(w->fd, w->close_userdata);
	free(w);
}

/* The other host sends nothing: readable is its end. */
static int on_watch(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		watch_free(ud, NULL);
	return 0;
}

int telnetd_watch(struct telnetd *t, int fd, viewer_close_fn close, void *close_userdata)
{
	struct watch *w = calloc(1, sizeof(*w));
	size_t i;
	int err = w ? -EBUSY : -ENOMEM;

	for (i = 0; w && i < TELNETD_MAX_WATCHES && err; i++)
		if (!t->watches[i]) {
			t->watches[i] = w;
			err = 0;
		}
	if (!err)
		err = loop_add_io(t->deps.loop, &w->io, fd, EPOLLIN | EPOLLRDHUP, on_watch, w);
	if (err < 0) {
		for (i = 0; w && i < TELNETD_MAX_WATCHES; i++)
			if (t->watches[i] == w)
				t->watches[i] = NULL;
		free(w);
		close(fd, close_userdata);
		return err;
	}
	w->t = t;
	w->fd = fd;
	w->close = close;
	w->close_userdata = close_userdata;
	loop_source_set_description(w->io, "telnet-watch");
	return 0;
}

void telnetd_unwatch(struct telnetd *t, const char *why)
{
	size_t i;

	for (i = 0; t && i < TELNETD_MAX_WATCHES; i++)
		if (t->watches[i])
			watch_free(t->watches[i], why);
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
		log_info("board '%s': telnet port %d closed", t->name, t->port);
	telnetd_unwatch(t, why ? why : "closed");
	viewers_close(t->deps.viewers, t, why);
	loop_source_free(t->io);
	if (t->fd >= 0)
		close(t->fd);
	if (t->board)
		board_unref(t->board);
	free(t->name);
	free(t->holder);
	free(t);
	return NULL;
}
