// SPDX-License-Identifier: GPL-2.0-or-later
/* qemu_line.c -- the socketpair a QEMU board's console and power drivers share */
#include "drivers/qemu_line.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/console.h"

#define QEMU_LINE_DRAIN_CHUNK 4096
#define QEMU_LINE_DRAIN_MAX (1024 * 1024)	/* never spin on a peer that keeps writing */

struct qemu_line {
	int refcount;
	const struct lab_config *config;	/* with the name: which board */
	char *name;
	struct console *console;
	int board_fd;
	struct qemu_line *next;
};

/* Every line in use; a handful per lab, so a list does. */
static struct qemu_line *qemu_lines;

static struct qemu_line *qemu_line_find(const struct lab_config *config, const char *name)
{
	struct qemu_line *l;

	for (l = qemu_lines; l; l = l->next)
		if (l->config == config && !strcmp(l->name, name))
			return l;
	return NULL;
}

int qemu_line_get(const struct driver_ctx *ctx, struct qemu_line **ret)
{
	const char *name = ctx->device_name ? ctx->device_name : "";
	struct qemu_line *l = qemu_line_find(ctx->config, name);

	if (l) {
		l->refcount++;
		*ret = l;
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->name = strdup(name);
	if (!l->name) {
		free(l);
		return -ENOMEM;
	}
	l->refcount = 1;
	l->config = ctx->config;
	l->board_fd = -1;
	l->next = qemu_lines;
	qemu_lines = l;
	*ret = l;
	return 0;
}

struct qemu_line *qemu_line_put(struct qemu_line *l)
{
	struct qemu_line **pp;

	if (!l || --l->refcount > 0)
		return NULL;
	for (pp = &qemu_lines; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	qemu_line_close(l);
	free(l->name);
	free(l);
	return NULL;
}

void qemu_line_set_console(struct qemu_line *l, struct console *c)
{
	l->console = c;
}

int qemu_line_open(struct qemu_line *l, int *ret_fd)
{
	int sv[2];

	/* QEMU makes its end non-blocking too, whatever it gets. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	qemu_line_close(l);
	l->board_fd = sv[1];
	*ret_fd = sv[0];
	return 0;
}

void qemu_line_close(struct qemu_line *l)
{
	if (l->board_fd >= 0)
		close(l->board_fd);
	l->board_fd = -1;
}

int qemu_line_board_fd(const struct qemu_line *l)
{
	return l->board_fd;
}

void qemu_line_drain(struct qemu_line *l)
{
	char buf[QEMU_LINE_DRAIN_CHUNK];
	size_t total = 0;
	ssize_t n;

	while (l->board_fd >= 0 && total < QEMU_LINE_DRAIN_MAX) {
		n = recv(l->board_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			break;
		total += (size_t)n;
	}
}

void qemu_line_lost(struct qemu_line *l, const char *reason)
{
	if (l->console)
		console_lost(l->console, reason);
}
