// SPDX-License-Identifier: GPL-2.0-or-later
/* fake.c -- SD-mux driver "fake": records switches in a file, for tests and demos */
/*
 * Board definition:
 *
 *	sdmux = {
 *		driver = "fake";
 *		disk = "/tmp/sim-01.card";	// a regular file stands for the card
 *		log = "/tmp/sim-01.sdmux";	// optional: where switches are recorded
 *		fail = "dut";			// optional: "host", "dut", "off" or a list
 *		delay = 0.1;			// optional: seconds each switch takes
 *	};
 *
 * Each switch appends "<realtime seconds.micro> <device> <host|dut|off>[ failed]"
 * to the log, so scenario tests can check what happened to the card and when.
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
#include "drivers/sdmux.h"
#include "drivers/sdmux/drivers.h"

struct fake {
	char *log;
	bool fail[SDMUX_DUT + 1];
	uint64_t delay;
	enum sdmux_mode mode;
	struct loop_source *timer;
};

static int fake_parse_fail(struct fake *f, const config_setting_t *s, struct diag *diag)
{
	const config_setting_t *e;
	enum sdmux_mode mode;
	char **modes = NULL;
	int r = cfg_get_strv(s, "fail", false, &modes, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	STRV_FOREACH(m, modes) {
		for (mode = SDMUX_OFF; mode <= SDMUX_DUT; mode++)
			if (!strcmp(*m, sdmux_mode_name(mode)))
				break;
		if (mode <= SDMUX_DUT) {
			f->fail[mode] = true;
			continue;
		}
		e = config_setting_get_member(s, "fail");
		r = diag_add(diag, cfg_file(e), cfg_line(e),
			     "'fail' must name \"host\", \"dut\" or \"off\", not '%s'", *m);
	}
	strv_free(modes);
	return r;
}

static int fake_parse(struct sdmux *m, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = { SDMUX_COMMON_KEYS, "log", "fail", "delay", NULL };
	struct fake *f = sdmux_priv(m);
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

static int fake_record(struct sdmux *m, bool failed)
{
	const struct driver_ctx *ctx = sdmux_ctx(m);
	struct fake *f = sdmux_priv(m);
	uint64_t now = loop_realtime(ctx->loop);
	int fd, r = 0;

	if (!f->log)
		return 0;
	fd = open(f->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%llu.%06llu %s %s%s\n", (unsigned long long)(now / USEC_PER_SEC),
		    (unsigned long long)(now % USEC_PER_SEC),
		    ctx->device_name ? ctx->device_name : "-", sdmux_mode_name(f->mode),
		    failed ? " failed" : "") < 0)
		r = -EIO;
	close(fd);
	return r;
}

static int fake_on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct sdmux *m = userdata;
	struct fake *f = sdmux_priv(m);
	int r = fake_record(m, f->fail[f->mode]);

	if (r < 0)
		sdmux_complete(m, r, "cannot write fake sdmux log '%s': %s", f->log, strerror(-r));
	else if (f->fail[f->mode])
		sdmux_complete(m, -EIO, "fake sdmux: switching to %s failed as configured",
			       sdmux_mode_name(f->mode));
	else
		sdmux_complete(m, 0, NULL);
	return 0;
}

static int fake_start(struct sdmux *m, enum sdmux_mode mode)
{
	struct fake *f = sdmux_priv(m);
	int r;

	if (!f->timer) {
		r = loop_add_timer(sdmux_ctx(m)->loop, &f->timer, USEC_INFINITY, fake_on_timer, m);
		if (r < 0)
			return r;
		loop_source_set_description(f->timer, "sdmux-fake");
	}
	f->mode = mode;
	return loop_timer_set_rel(f->timer, f->delay);
}

static void fake_abort(struct sdmux *m)
{
	struct fake *f = sdmux_priv(m);

	if (f->timer)
		loop_timer_set(f->timer, USEC_INFINITY);
}

static void fake_release(struct sdmux *m)
{
	struct fake *f = sdmux_priv(m);

	f->timer = loop_source_free(f->timer);
	free(f->log);
}

const struct sdmux_driver sdmux_fake_driver = {
	.name = "fake",
	.priv_size = sizeof(struct fake),
	.parse = fake_parse,
	.start = fake_start,
	.abort = fake_abort,
	.release = fake_release,
};
