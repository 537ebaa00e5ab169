// SPDX-License-Identifier: GPL-2.0-or-later
/* telnetd.c -- a board's console on a loopback telnet port for its holder, like ser2net */
#include "telnetd.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "board.h"
#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "users.h"
#include "viewer.h"

#define TELNETD_BACKLOG 8

struct telnetd {
	struct daemon *d;
	struct board *board;		/* referenced */
	char *holder;
	int fd;
	int port;
	struct loop_source *io;
};

static int on_accept(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct telnetd *t = ud;
	struct viewers *vs = daemon_viewers(t->d);
	struct viewer_params p = {
		.board = t->board, .wire = VIEWER_WIRE_TELNET, .who = t->holder,
		.role = USER_ROLE_DEVELOPER, .replay = TELNETD_REPLAY, .owner = t,
	};
	static const char busy[] = "labd: too many clients on this port\r\n";
	int c;

	c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? 0 : -errno;
	if (viewers_count_owned(vs, t) >= TELNETD_MAX_CLIENTS) {
		send(c, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(c);
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

int telnetd_new(struct daemon *d, struct board *b, const char *holder, struct telnetd **ret)
{
	struct telnetd *t = calloc(1, sizeof(*t));
	char desc[128];
	int err;

	if (!t)
		return -ENOMEM;
	t->d = d;
	t->fd = -1;
	t->board = board_ref(b);
	t->holder = strdup(holder);
	err = t->holder ? listen_loopback(&t->fd, &t->port) : -ENOMEM;
	if (!err)
		err = loop_add_io(daemon_loop(d), &t->io, t->fd, EPOLLIN, on_accept, t);
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
	viewers_close(daemon_viewers(t->d), t, why);
	loop_source_free(t->io);
	if (t->fd >= 0)
		close(t->fd);
	board_unref(t->board);
	free(t->holder);
	free(t);
	return NULL;
}
