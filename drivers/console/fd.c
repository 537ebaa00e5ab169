// SPDX-License-Identifier: GPL-2.0-or-later
/* fd.c -- console driver "pty": a pty or any tty-like device opened with plain termios */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/console.h"

#define FD_DEFAULT_BAUD 115200
#define FD_BREAK_DURATION (250 * USEC_PER_MSEC)

struct fd_console {
	char *path;			/* opened as given: a symlink is followed at each open */
	speed_t speed;
	int fd;				/* while open, for the break timer */
	struct loop_source *brk;	/* ends a break */
};

static const struct {
	long baud;
	speed_t speed;
} fd_speeds[] = {
	{ 1200, B1200 }, { 2400, B2400 }, { 4800, B4800 }, { 9600, B9600 },
	{ 19200, B19200 }, { 38400, B38400 }, { 57600, B57600 }, { 115200, B115200 },
	{ 230400, B230400 }, { 460800, B460800 }, { 500000, B500000 }, { 576000, B576000 },
	{ 921600, B921600 }, { 1000000, B1000000 }, { 1152000, B1152000 },
	{ 1500000, B1500000 }, { 2000000, B2000000 }, { 3000000, B3000000 },
	{ 4000000, B4000000 },
};

static int fd_parse_baud(const config_setting_t *settings, speed_t *ret, struct diag *diag)
{
	long long baud = FD_DEFAULT_BAUD;
	size_t i;
	int r;

	r = cfg_get_int(settings, "baud", false, 1, 4000000, &baud, diag);
	if (r < 0 && r != -ENOENT)
		return r;
	for (i = 0; i < sizeof(fd_speeds) / sizeof(fd_speeds[0]); i++) {
		if (fd_speeds[i].baud == baud) {
			*ret = fd_speeds[i].speed;
			return 0;
		}
	}
	return diag_add(diag, cfg_file(settings), cfg_line(settings),
			"'baud' must be a standard rate such as 115200, not %lld", baud);
}

static int fd_parse(struct console *c, const config_setting_t *settings, struct diag *diag)
{
	static const char *const known[] = { "driver", "path", "baud", NULL };
	struct fd_console *f = console_priv(c);
	const char *path = NULL;
	int r;

	f->fd = -1;
	r = cfg_check_keys(settings, known, diag);
	if (cfg_get_string(settings, "path", true, &path, diag) < 0)
		r = -EINVAL;
	else if (!path[0])
		r = diag_add(diag, cfg_file(settings), cfg_line(settings), "'path' is empty");
	if (fd_parse_baud(settings, &f->speed, diag) < 0)
		r = -EINVAL;
	if (r < 0)
		return -EINVAL;
	f->path = strdup(path);
	return f->path ? 0 : -ENOMEM;
}

/* Raw 8N1 at the configured speed, modem lines ignored, DTR kept on close. */
static int fd_set_termios(int fd, speed_t speed)
{
	struct termios t;

	if (tcgetattr(fd, &t) < 0)
		return -errno;
	cfmakeraw(&t);
	cfsetspeed(&t, speed);
	t.c_cflag |= CLOCAL | CREAD;
	t.c_cflag &= ~HUPCL;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSANOW, &t) < 0)
		return -errno;
	return 0;
}

static int fd_open(struct console *c, int *ret_fd)
{
	struct fd_console *f = console_priv(c);
	int fd, r;

	fd = open(f->path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		console_set_error(c, "cannot open console '%s': %s", f->path, strerror(-r));
		return r;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		if (r == -EWOULDBLOCK) {
			console_set_error(c, "console '%s' is in use by another process", f->path);
			r = -EBUSY;	/* not -EAGAIN: that means "call again soon" */
		} else {
			console_set_error(c, "cannot lock console '%s': %s", f->path, strerror(-r));
		}
		goto close_fd;
	}
	if (isatty(fd)) {
		r = fd_set_termios(fd, f->speed);
		if (r < 0) {
			console_set_error(c, "cannot configure console '%s': %s", f->path,
					  strerror(-r));
			goto close_fd;
		}
		/* what the board printed while nobody read it (labd was down) is
		 * an old boot's: a login prompt in it is not the next boot's */
		tcflush(fd, TCIFLUSH);
	}
	f->fd = fd;
	*ret_fd = fd;
	return 0;

close_fd:
	close(fd);
	return r;
}

static void fd_close(struct console *c, int fd)
{
	struct fd_console *f = console_priv(c);

	f->brk = loop_source_free(f->brk);
	/* Drop unsent output: close() of a flow-controlled tty would wait for it. */
	if (isatty(fd))
		tcflush(fd, TCIOFLUSH);
	close(fd);
	f->fd = -1;
}

static int fd_break_end(struct loop_source *s, uint64_t now, void *userdata)
{
	struct fd_console *f = userdata;

	if (f->fd >= 0)
		ioctl(f->fd, TIOCCBRK);
	return 0;
}

/* TIOCSBRK now, TIOCCBRK from a timer: tcsendbreak() would block for the duration. */
static int fd_send_break(struct console *c, int fd)
{
	struct fd_console *f = console_priv(c);
	int r;

	if (!f->brk) {
		r = loop_add_timer(console_ctx(c)->loop, &f->brk, USEC_INFINITY, fd_break_end, f);
		if (r < 0)
			return r;
	}
	if (loop_timer_is_armed(f->brk))
		return -EBUSY;
	if (ioctl(fd, TIOCSBRK) < 0)
		return -errno;
	return loop_timer_set_rel(f->brk, FD_BREAK_DURATION);
}

static void fd_release(struct console *c)
{
	struct fd_console *f = console_priv(c);

	f->brk = loop_source_free(f->brk);
	free(f->path);
}

const struct console_driver console_pty_driver = {
	.name = "pty",
	.priv_size = sizeof(struct fd_console),
	.parse = fd_parse,
	.open = fd_open,
	.close = fd_close,
	.send_break = fd_send_break,
	.release = fd_release,
};
