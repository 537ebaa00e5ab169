// SPDX-License-Identifier: GPL-2.0-or-later
/* tcp.c -- console drivers "tcp" (raw TCP, e.g. a ser2net raw port) and "unix" (AF_UNIX) */
#include "drivers/console/tcp.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "drivers/console.h"

#define TCP_KEEPALIVE_IDLE 10		/* seconds of silence before the first probe */
#define TCP_KEEPALIVE_INTERVAL 5	/* seconds between probes */
#define TCP_KEEPALIVE_COUNT 3		/* unanswered probes before the link is dead */

struct console_tcp_lookup {
	struct gaicb cb;
	struct addrinfo hints;
	char *host;			/* owned here: a lookup may outlive its console */
	char port[8];
};

int console_tcp_parse(struct console_tcp *t, const config_setting_t *settings,
		      struct diag *diag)
{
	const char *host = NULL;
	long long port = 0;
	int r = 0;

	if (cfg_get_string(settings, "host", true, &host, diag) < 0)
		r = -EINVAL;
	else if (!host[0])
		r = diag_add(diag, cfg_file(settings), cfg_line(settings), "'host' is empty");
	if (cfg_get_int(settings, "port", true, 1, 65535, &port, diag) < 0)
		r = -EINVAL;
	if (r < 0)
		return -EINVAL;
	snprintf(t->port, sizeof(t->port), "%lld", port);
	t->host = strdup(host);
	if (t->host && asprintf(&t->where, strchr(host, ':') ? "[%s]:%lld" : "%s:%lld", host,
				port) < 0)
		t->where = NULL;
	return t->host && t->where ? 0 : -ENOMEM;
}

static struct console_tcp_lookup *tcp_lookup_free(struct console_tcp_lookup *l)
{
	if (!l)
		return NULL;
	if (l->cb.ar_result)
		freeaddrinfo(l->cb.ar_result);
	free(l->host);
	free(l);
	return NULL;
}

static int tcp_lookup_start(struct console_tcp *t)
{
	struct console_tcp_lookup *l = calloc(1, sizeof(*l));
	struct gaicb *list[1];
	int r;

	if (!l)
		return -ENOMEM;
	l->host = strdup(t->host);
	if (!l->host) {
		free(l);
		return -ENOMEM;
	}
	memcpy(l->port, t->port, sizeof(l->port));
	l->hints.ai_socktype = SOCK_STREAM;
	l->hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV;
	l->cb.ar_name = l->host;
	l->cb.ar_service = l->port;
	l->cb.ar_request = &l->hints;
	list[0] = &l->cb;
	r = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (r) {
		tcp_lookup_free(l);
		return r == EAI_MEMORY ? -ENOMEM : -EAGAIN;
	}
	t->lookup = l;
	return 0;
}

/*
 * Resolve t->host into *@ret (free with freeaddrinfo): numeric addresses at
 * once, names through a background lookup (-EAGAIN until it is done).
 */
static int tcp_resolve(struct console *c, struct console_tcp *t, struct addrinfo **ret)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	int r;

	if (!t->lookup) {
		r = getaddrinfo(t->host, t->port, &hints, ret);
		if (r != EAI_NONAME)
			goto done;
		r = tcp_lookup_start(t);
		if (r < 0)
			return r;
	}
	r = gai_error(&t->lookup->cb);
	if (r == EAI_INPROGRESS)
		return -EAGAIN;
	*ret = t->lookup->cb.ar_result;
	t->lookup->cb.ar_result = NULL;
	t->lookup = tcp_lookup_free(t->lookup);
done:
	if (!r)
		return 0;
	console_set_error(c, "cannot resolve '%s': %s", t->host,
			  r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
	return -EHOSTUNREACH;
}

static void tcp_set_options(int fd)
{
	int on = 1, idle = TCP_KEEPALIVE_IDLE, intvl = TCP_KEEPALIVE_INTERVAL;
	int cnt = TCP_KEEPALIVE_COUNT;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int tcp_connect(struct console *c, struct console_tcp *t, const struct addrinfo *ai,
		       int *ret_fd)
{
	int fd, r;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		console_set_error(c, "cannot create socket for '%s': %s", t->where, strerror(-r));
		return r;
	}
	tcp_set_options(fd);
	r = connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
	if (!r || r == -EINPROGRESS) {
		*ret_fd = fd;
		return r;
	}
	console_set_error(c, "cannot connect to '%s': %s", t->where, strerror(-r));
	close(fd);
	t->attempt++;
	return r;
}

int console_tcp_open(struct console *c, struct console_tcp *t, int *ret_fd)
{
	struct addrinfo *list = NULL, *ai;
	unsigned n = 0, i;
	int r;

	r = tcp_resolve(c, t, &list);
	if (r < 0)
		return r;
	for (ai = list; ai; ai = ai->ai_next)
		n++;
	ai = list;
	for (i = 0; ai && i < t->attempt % (n ? n : 1); i++)
		ai = ai->ai_next;
	if (!ai) {
		console_set_error(c, "cannot resolve '%s': no address", t->host);
		r = -EHOSTUNREACH;
	} else {
		r = tcp_connect(c, t, ai, ret_fd);
	}
	freeaddrinfo(list);
	return r;
}

int console_tcp_connected(struct console *c, struct console_tcp *t, int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (!err)
		return 0;
	console_set_error(c, "cannot connect to '%s': %s", t->where, strerror(err));
	t->attempt++;
	return -err;
}

void console_tcp_release(struct console_tcp *t)
{
	struct console_tcp_lookup *l = t->lookup;

	/* A lookup the resolver still works on cannot be freed: leave it behind. */
	if (l && gai_cancel(&l->cb) != EAI_NOTCANCELED)
		tcp_lookup_free(l);
	t->lookup = NULL;
	free(t->host);
	free(t->where);
	t->host = t->where = NULL;
}

int console_tcp_open_unix(struct console *c, const char *path, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		console_set_error(c, "cannot connect to '%s': path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		console_set_error(c, "cannot create socket for '%s': %s", path, strerror(-r));
		return r;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		console_set_error(c, "cannot connect to '%s': %s", path, strerror(-r));
		close(fd);
		/* a full backlog: retry at the normal pace, not as a pending lookup */
		return r == -EAGAIN ? -ECONNREFUSED : r;
	}
	*ret_fd = fd;
	return 0;
}

/* ---- driver "tcp" ---- */

static int tcp_parse(struct console *c, const config_setting_t *settings, struct diag *diag)
{
	static const char *const known[] = { "driver", "host", "port", NULL };
	int r = cfg_check_keys(settings, known, diag);
	int q = console_tcp_parse(console_priv(c), settings, diag);

	return q < 0 ? q : r;
}

static int tcp_open(struct console *c, int *ret_fd)
{
	return console_tcp_open(c, console_priv(c), ret_fd);
}

static int tcp_connected(struct console *c, int fd)
{
	return console_tcp_connected(c, console_priv(c), fd);
}

static void tcp_release(struct console *c)
{
	console_tcp_release(console_priv(c));
}

const struct console_driver console_tcp_driver = {
	.name = "tcp",
	.priv_size = sizeof(struct console_tcp),
	.parse = tcp_parse,
	.open = tcp_open,
	.connected = tcp_connected,
	.release = tcp_release,
};

/* ---- driver "unix" ---- */

struct unix_console {
	char *path;
};

static int unix_parse(struct console *c, const config_setting_t *settings, struct diag *diag)
{
	static const char *const known[] = { "driver", "path", NULL };
	struct unix_console *u = console_priv(c);
	const char *path = NULL;
	int r = cfg_check_keys(settings, known, diag);

	if (cfg_get_string(settings, "path", true, &path, diag) < 0)
		return -EINVAL;
	if (!path[0])
		return diag_add(diag, cfg_file(settings), cfg_line(settings), "'path' is empty");
	if (r < 0)
		return r;
	u->path = strdup(path);
	return u->path ? 0 : -ENOMEM;
}

static int unix_open(struct console *c, int *ret_fd)
{
	struct unix_console *u = console_priv(c);

	return console_tcp_open_unix(c, u->path, ret_fd);
}

static void unix_release(struct console *c)
{
	struct unix_console *u = console_priv(c);

	free(u->path);
}

const struct console_driver console_unix_driver = {
	.name = "unix",
	.priv_size = sizeof(struct unix_console),
	.parse = unix_parse,
	.open = unix_open,
	.release = unix_release,
};
