// SPDX-License-Identifier: GPL-2.0-or-later
/* fake.c -- power driver "fake": records operations in a file, for tests and demos */
/*
 * Board definition:
 *
 *	power = {
 *		driver = "fake";
 *		log = "/tmp/sim-01.power";	// optional: where operations are recorded
 *		fail = "on";			// optional: "on", "off" or a list: these fail
 *		delay = 0.5;			// optional: seconds each operation takes
 *	};
 *
 * Each completed operation appends one line to the log:
 * "<realtime seconds.micro> <device> <on|off>[ failed]", so scenario tests can
 * assert what happened to a board and when (a cycle shows as off, then on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "core/strv.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"

struct fake {
	char *log;
	bool fail[POWER_CYCLE + 1];	/* by operation */
	uint64_t delay;
	enum power_op op;
	struct loop_source *timer;
};

static int fake_parse_fail(struct fake *f, const config_setting_t *s, struct diag *diag)
{
	config_setting_t *e;
	char **ops = NULL;
	int r;

	r = cfg_get_strv(s, "fail", false, &ops, diag);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	STRV_FOREACH(op, ops) {
		if (!strcmp(*op, "on")) {
			f->fail[POWER_ON] = true;
		} else if (!strcmp(*op, "off")) {
			f->fail[POWER_OFF] = true;
		} else {
			e = config_setting_get_member(s, "fail");
			r = diag_add(diag, cfg_file(e), cfg_line(e),
				     "'fail' must name \"on\" or \"off\", not '%s'", *op);
		}
	}
	strv_free(ops);
	return r;
}

static int fake_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = { POWER_COMMON_KEYS, "log", "fail", "delay", NULL };
	struct fake *f = power_priv(p);
	const char *log = NULL;
	int r, e;

	r = cfg_check_keys(s, known, diag);
	e = cfg_get_string(s, "log", false, &log, diag);
	if (e == -EINVAL)
		r = e;
	e = cfg_get_duration(s, "delay", false, &f->delay, diag);
	if (e == -EINVAL)
		r = e;
	e = fake_parse_fail(f, s, diag);
	if (e < 0)
		r = e;
	if (r < 0 || !log)
		return r;
	f->log = strdup(log);
	return f->log ? 0 : -ENOMEM;
}

/* Append "<time> <device> <op>[ failed]" to the log. */
static int fake_record(struct power *p, bool failed)
{
	struct fake *f = power_priv(p);
	const char *device = power_ctx(p)->device_name;
	uint64_t now = loop_realtime(power_ctx(p)->loop);
	int fd, r = 0;

	if (!f->log)
		return 0;
	fd = open(f->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%llu.%06llu %s %s%s\n", (unsigned long long)(now / USEC_PER_SEC),
		    (unsigned long long)(now % USEC_PER_SEC), device ? device : "-",
		    power_op_name(f->op), failed ? " failed" : "") < 0)
		r = -EIO;
	close(fd);
	return r;
}

static int fake_on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct power *p = userdata;
	struct fake *f = power_priv(p);
	const char *device = power_ctx(p)->device_name;
	int r = fake_record(p, f->fail[f->op]);

	if (r < 0)
		power_complete(p, r, "cannot write fake power log '%s': %s", f->log, strerror(-r));
	else if (f->fail[f->op])
		power_complete(p, -EIO, "fake power %s of '%s' failed as configured",
			       power_op_name(f->op), device ? device : "-");
	else
		power_complete(p, 0, NULL);
	return 0;
}

static int fake_start(struct power *p, enum power_op op)
{
	struct fake *f = power_priv(p);
	int r;

	if (!f->timer) {
		if (!power_ctx(p)->loop)
			return -ENOTCONN;
		r = loop_add_timer(power_ctx(p)->loop, &f->timer, USEC_INFINITY, fake_on_timer, p);
		if (r < 0)
			return r;
		loop_source_set_description(f->timer, "power-fake");
	}
	f->op = op;
	return loop_timer_set_rel(f->timer, f->delay);
}

static void fake_abort(struct power *p)
{
	struct fake *f = power_priv(p);

	if (f->timer)
		loop_timer_set(f->timer, USEC_INFINITY);
}

static void fake_release(struct power *p)
{
	struct fake *f = power_priv(p);

	f->timer = loop_source_free(f->timer);
	free(f->log);
}

const struct power_driver power_fake_driver = {
	.name = "fake",
	.priv_size = sizeof(struct fake),
	.parse = fake_parse,
	.start = fake_start,
	.abort = fake_abort,
	.release = fake_release,
	.cycles = false,
};
