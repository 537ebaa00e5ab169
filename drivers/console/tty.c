// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tty.c -- console driver "tty": a real serial port through libserialport
 *
 * libserialport 0.1.1 (Debian 12) cannot open pseudo-terminals: ptys have no
 * /sys/class/tty entry and no modem-control ioctls.  So this driver is tested
 * without hardware only for parsing and for its clear error on a pty
 * (tests/unit/test-console.c); the termios-level behaviour it shares with real
 * UARTs is covered by driver "pty" (fd.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <libserialport.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "drivers/console.h"

#define TTY_DEFAULT_BAUD 115200
#define TTY_BREAK_DURATION (250 * USEC_PER_MSEC)
#define TTY_PTY_MAJOR_FIRST 136		/* UNIX98_PTY_SLAVE_MAJOR */
#define TTY_PTY_MAJOR_LAST 143

struct tty_console {
	char *device;			/* resolved at each open, so re-plugging works */
	int baud;
	enum sp_parity parity;
	int data_bits;
	int stop_bits;
	enum sp_flowcontrol flow;
	struct sp_port *port;		/* while open */
	struct loop_source *brk;	/* ends a break */
};

struct tty_name {
	const char *name;
	int value;
};

static const struct tty_name tty_parities[] = {
	{ "none", SP_PARITY_NONE }, { "odd", SP_PARITY_ODD }, { "even", SP_PARITY_EVEN },
	{ "mark", SP_PARITY_MARK }, { "space", SP_PARITY_SPACE }, { NULL, 0 },
};

static const struct tty_name tty_flows[] = {
	{ "none", SP_FLOWCONTROL_NONE }, { "xonxoff", SP_FLOWCONTROL_XONXOFF },
	{ "rtscts", SP_FLOWCONTROL_RTSCTS }, { "dtrdsr", SP_FLOWCONTROL_DTRDSR }, { NULL, 0 },
};

/* A string setting that must be one of @names; *@ret keeps its default when absent. */
static int tty_parse_name(const config_setting_t *settings, const char *key,
			  const struct tty_name *names, int *ret, struct diag *diag)
{
	struct strbuf known = STRBUF_INIT;
	const struct tty_name *n;
	const char *s = NULL;
	int r = cfg_get_string(settings, key, false, &s, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	for (n = names; n->name; n++) {
		if (!strcmp(n->name, s)) {
			*ret = n->value;
			return 0;
		}
	}
	for (n = names; n->name; n++)
		strbuf_addf(&known, "%s%s", n == names ? "" : ", ", n->name);
	r = diag_add(diag, cfg_file(settings), cfg_line(settings), "unknown %s '%s' (known: %s)",
		     key, s, known.buf);
	strbuf_release(&known);
	return r;
}

static int tty_parse_numbers(struct tty_console *t, const config_setting_t *settings,
			     struct diag *diag)
{
	long long baud = TTY_DEFAULT_BAUD, bits = 8, stop = 1;
	int r = 0;

	if (cfg_get_int(settings, "baud", false, 50, 4000000, &baud, diag) == -EINVAL)
		r = -EINVAL;
	if (cfg_get_int(settings, "data_bits", false, 5, 8, &bits, diag) == -EINVAL)
		r = -EINVAL;
	if (cfg_get_int(settings, "stop_bits", false, 1, 2, &stop, diag) == -EINVAL)
		r = -EINVAL;
	t->baud = (int)baud;
	t->data_bits = (int)bits;
	t->stop_bits = (int)stop;
	return r;
}

static int tty_parse(struct console *c, const config_setting_t *settings, struct diag *diag)
{
	static const char *const known[] = { "driver", "device", "baud", "parity", "data_bits",
					     "stop_bits", "flow_control", NULL };
	struct tty_console *t = console_priv(c);
	int parity = SP_PARITY_NONE, flow = SP_FLOWCONTROL_NONE;
	const char *device = NULL;
	int r = cfg_check_keys(settings, known, diag);

	if (cfg_get_string(settings, "device", true, &device, diag) < 0)
		r = -EINVAL;
	else if (!device[0])
		r = diag_add(diag, cfg_file(settings), cfg_line(settings), "'device' is empty");
	if (tty_parse_numbers(t, settings, diag) < 0)
		r = -EINVAL;
	if (tty_parse_name(settings, "parity", tty_parities, &parity, diag) < 0)
		r = -EINVAL;
	if (tty_parse_name(settings, "flow_control", tty_flows, &flow, diag) < 0)
		r = -EINVAL;
	if (r < 0)
		return -EINVAL;
	t->parity = parity;
	t->flow = flow;
	t->device = strdup(device);
	return t->device ? 0 : -ENOMEM;
}

/* libserialport's reason for @err, copied into the console error as "...: reason". */
static const char *tty_sp_reason(enum sp_return err, char *buf, size_t size)
{
	char *msg;

	switch (err) {
	case SP_ERR_ARG:
		return "not a serial port known to the system";
	case SP_ERR_MEM:
		return "out of memory";
	case SP_ERR_SUPP:
		return "not supported";
	default:
		msg = sp_last_error_message();
		snprintf(buf, size, "%s", msg ? msg : "unknown error");
		sp_free_error_message(msg);
		return buf;
	}
}

static bool tty_is_pty(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) >= TTY_PTY_MAJOR_FIRST && major(st.st_rdev) <= TTY_PTY_MAJOR_LAST;
}

static int tty_open_failed(struct console *c, const char *path, enum sp_return err)
{
	char buf[128];
	const char *why = tty_sp_reason(err, buf, sizeof(buf));

	if (tty_is_pty(path))
		console_set_error(c, "libserialport cannot open '%s': %s; use driver \"pty\" for pseudo-terminals",
				  path, why);
	else
		console_set_error(c, "libserialport cannot open '%s': %s", path, why);
	return err == SP_ERR_MEM ? -ENOMEM : -ENODEV;
}

static enum sp_return tty_configure(struct tty_console *t)
{
	struct sp_port_config *cfg;
	enum sp_return r;

	r = sp_new_config(&cfg);
	if (r != SP_OK)
		return r;
	r = sp_set_config_baudrate(cfg, t->baud);
	if (r == SP_OK)
		r = sp_set_config_bits(cfg, t->data_bits);
	if (r == SP_OK)
		r = sp_set_config_parity(cfg, t->parity);
	if (r == SP_OK)
		r = sp_set_config_stopbits(cfg, t->stop_bits);
	if (r == SP_OK)
		r = sp_set_config_flowcontrol(cfg, t->flow);
	if (r == SP_OK)
		r = sp_set_config(t->port, cfg);
	sp_free_config(cfg);
	return r;
}

/* What libserialport 0.1.1 leaves out: close-on-exec, an owner lock, DTR kept on close. */
static int tty_fix_fd(struct console *c, int fd, const char *path)
{
	struct termios tio;

	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		if (err == EWOULDBLOCK) {
			console_set_error(c, "console '%s' is in use by another process", path);
			return -EBUSY;
		}
		console_set_error(c, "cannot lock console '%s': %s", path, strerror(err));
		return -err;
	}
	if (!tcgetattr(fd, &tio)) {
		tio.c_cflag &= ~HUPCL;
		tcsetattr(fd, TCSANOW, &tio);
	}
	return 0;
}

static int tty_open_port(struct console *c, struct tty_console *t, const char *path,
			 int *ret_fd)
{
	enum sp_return err;
	int fd = -1, r;

	err = sp_get_port_by_name(path, &t->port);
	if (err != SP_OK)
		return tty_open_failed(c, path, err);
	err = sp_open(t->port, SP_MODE_READ_WRITE);
	if (err != SP_OK) {
		r = tty_open_failed(c, path, err);
		goto free_port;
	}
	r = -EIO;
	if (sp_get_port_handle(t->port, &fd) != SP_OK || fd < 0)
		goto close_port;
	r = tty_fix_fd(c, fd, path);
	if (r < 0)
		goto close_port;
	err = tty_configure(t);
	if (err != SP_OK) {
		char buf[128];

		console_set_error(c, "cannot configure console '%s': %s", path,
				  tty_sp_reason(err, buf, sizeof(buf)));
		r = -EINVAL;
		goto close_port;
	}
	*ret_fd = fd;
	return 0;

close_port:
	sp_close(t->port);
free_port:
	sp_free_port(t->port);
	t->port = NULL;
	return r;
}

static int tty_open(struct console *c, int *ret_fd)
{
	struct tty_console *t = console_priv(c);
	char *path;
	int r;

	/* /dev/serial/by-id/... names a different ttyUSBn after each re-plug */
	path = realpath(t->device, NULL);
	if (!path) {
		r = -errno;
		console_set_error(c, "cannot open console '%s': %s", t->device, strerror(-r));
		return r;
	}
	r = tty_open_port(c, t, path, ret_fd);
	free(path);
	return r;
}

static void tty_close(struct console *c, int fd)
{
	struct tty_console *t = console_priv(c);

	t->brk = loop_source_free(t->brk);
	if (!t->port) {
		close(fd);
		return;
	}
	/* Drop unsent output: close() of a flow-controlled tty would wait for it. */
	sp_flush(t->port, SP_BUF_BOTH);
	sp_close(t->port);
	sp_free_port(t->port);
	t->port = NULL;
}

static int tty_break_end(struct loop_source *s, uint64_t now, void *userdata)
{
	struct tty_console *t = userdata;

	if (t->port)
		sp_end_break(t->port);
	return 0;
}

static int tty_send_break(struct console *c, int fd)
{
	struct tty_console *t = console_priv(c);
	int r;

	if (!t->port)
		return -ENOTCONN;
	if (!t->brk) {
		r = loop_add_timer(console_ctx(c)->loop, &t->brk, USEC_INFINITY, tty_break_end, t);
		if (r < 0)
			return r;
	}
	if (loop_timer_is_armed(t->brk))
		return -EBUSY;
	if (sp_start_break(t->port) != SP_OK)
		return -EIO;
	return loop_timer_set_rel(t->brk, TTY_BREAK_DURATION);
}

static void tty_release(struct console *c)
{
	struct tty_console *t = console_priv(c);

	t->brk = loop_source_free(t->brk);
	free(t->device);
}

const struct console_driver console_tty_driver = {
	.name = "tty",
	.priv_size = sizeof(struct tty_console),
	.parse = tty_parse,
	.open = tty_open,
	.close = tty_close,
	.send_break = tty_send_break,
	.release = tty_release,
};
