// SPDX-License-Identifier: GPL-2.0-or-later
/* qemu.c -- console driver "qemu": labd's end of the serial line of a QEMU board */
/*
 * Board definition, with the `qemu` power driver:
 *
 *	console = { driver = "qemu"; };
 *
 * The console is a socketpair made by labd (qemu_line.h); the power driver
 * hands its other end to QEMU as the first serial port.  It is up from the
 * moment labd starts, whether QEMU runs or not, and goes down only when QEMU
 * dies on its own (with QEMU's reason) until it is reopened a second later.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "drivers/console.h"
#include "drivers/qemu_line.h"

struct qemu_console {
	struct qemu_line *line;
};

static int qemu_parse(struct console *c, const config_setting_t *settings, struct diag *diag)
{
	static const char *const known[] = { "driver", NULL };
	struct qemu_console *q = console_priv(c);
	int r = cfg_check_keys(settings, known, diag);

	if (r < 0)
		return r;
	r = qemu_line_get(console_ctx(c), &q->line);
	if (r < 0)
		return r;
	qemu_line_set_console(q->line, c);
	return 0;
}

static int qemu_open(struct console *c, int *ret_fd)
{
	struct qemu_console *q = console_priv(c);
	int r = qemu_line_open(q->line, ret_fd);

	if (r < 0)
		console_set_error(c, "cannot create the serial line of QEMU: %s", strerror(-r));
	return r;
}

static void qemu_close(struct console *c, int fd)
{
	struct qemu_console *q = console_priv(c);

	close(fd);
	qemu_line_close(q->line);
}

static void qemu_release(struct console *c)
{
	struct qemu_console *q = console_priv(c);

	if (!q->line)
		return;
	qemu_line_set_console(q->line, NULL);
	q->line = qemu_line_put(q->line);
}

const struct console_driver console_qemu_driver = {
	.name = "qemu",
	.priv_size = sizeof(struct qemu_console),
	.parse = qemu_parse,
	.open = qemu_open,
	.close = qemu_close,
	.release = qemu_release,
};
