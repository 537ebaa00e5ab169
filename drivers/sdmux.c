// SPDX-License-Identifier: GPL-2.0-or-later
/* sdmux.c -- SD-mux core: driver table, one switch at a time, timeout, delivery from the loop */
#include "drivers/sdmux.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/sdmux/drivers.h"

#define SDMUX_TIMEOUT_GRACE (1 * USEC_PER_SEC)	/* drivers report their own timeouts first */

static const struct sdmux_driver *const sdmux_drivers[] = {
	&sdmux_usbsdmux_driver,
	&sdmux_fake_driver,
};

#define SDMUX_N_DRIVERS (sizeof(sdmux_drivers) / sizeof(sdmux_drivers[0]))

enum sdmux_phase {
	SDMUX_IDLE,
	SDMUX_SWITCHING,
	SDMUX_DELIVER,		/* the result waits for the timer to deliver it */
};

struct sdmux {
	const struct sdmux_driver *drv;
	struct driver_ctx ctx;
	char *disk;
	uint64_t timeout;
	enum sdmux_mode mode;
	enum sdmux_phase phase;
	int err;
	char *msg;
	sdmux_done_fn done;
	void *userdata;
	struct loop_source *timer;	/* timeout, then delivery */
	void *priv;
};

const char *const *sdmux_driver_names(void)
{
	static const char *names[SDMUX_N_DRIVERS + 1];
	size_t i;

	for (i = 0; i < SDMUX_N_DRIVERS; i++)
		names[i] = sdmux_drivers[i]->name;
	return names;
}

const char *sdmux_mode_name(enum sdmux_mode mode)
{
	switch (mode) {
	case SDMUX_OFF:
		return "off";
	case SDMUX_HOST:
		return "host";
	case SDMUX_DUT:
		return "dut";
	}
	return "?";
}

static const struct sdmux_driver *sdmux_find_driver(const char *name)
{
	size_t i;

	for (i = 0; name && i < SDMUX_N_DRIVERS; i++)
		if (!strcmp(sdmux_drivers[i]->name, name))
			return sdmux_drivers[i];
	return NULL;
}

/* `disk` and `timeout`, the keys of every driver. */
static int sdmux_parse_common(struct sdmux *m, const config_setting_t *s, struct diag *diag)
{
	const config_setting_t *e;
	const char *disk;
	int r = cfg_get_string(s, "disk", true, &disk, diag), t;

	if (r == 0 && disk[0] != '/') {
		e = config_setting_get_member(s, "disk");
		r = diag_add(diag, cfg_file(e), cfg_line(e),
			     "'disk' must be an absolute path, like /dev/disk/by-id/...");
	} else if (r == 0 && !(m->disk = strdup(disk))) {
		return -ENOMEM;
	}
	t = cfg_get_duration(s, "timeout", false, &m->timeout, diag);
	if (t == 0 && !m->timeout) {
		e = config_setting_get_member(s, "timeout");
		t = diag_add(diag, cfg_file(e), cfg_line(e), "'timeout' must be more than 0");
	}
	if (t == -EINVAL)
		r = t;
	return r;
}

int sdmux_new(const struct driver_config *cfg, const struct driver_ctx *ctx, struct sdmux **ret,
	      struct diag *diag)
{
	const struct sdmux_driver *drv = sdmux_find_driver(cfg->driver);
	struct sdmux *m;
	int r, rc;

	if (!drv)
		return diag_add(diag, cfg->file, cfg->line, "unknown sdmux driver '%s'",
				cfg->driver ? cfg->driver : "");
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->drv = drv;
	m->ctx = *ctx;
	m->timeout = SDMUX_DEFAULT_TIMEOUT;
	m->priv = calloc(1, drv->priv_size ? drv->priv_size : 1);
	if (!m->priv) {
		r = -ENOMEM;
		goto err_free;
	}
	rc = sdmux_parse_common(m, cfg->settings, diag);
	r = drv->parse(m, cfg->settings, diag);
	if (r >= 0 && rc < 0)
		r = rc;
	if (r < 0)
		goto err_free;
	*ret = m;
	return 0;

err_free:
	sdmux_free(m);
	return r;
}

static int sdmux_on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct sdmux *m = userdata;
	sdmux_done_fn done = m->done;
	char *msg = m->msg;

	if (m->phase == SDMUX_SWITCHING) {
		if (m->drv->abort)
			m->drv->abort(m);
		m->err = -ETIMEDOUT;
		if (asprintf(&m->msg, "switching the SD card to %s timed out after %g s",
			     sdmux_mode_name(m->mode), (double)m->timeout / USEC_PER_SEC) < 0)
			m->msg = NULL;
		msg = m->msg;
	} else if (m->phase != SDMUX_DELIVER) {
		return 0;
	}
	/* Idle before the callback, which may switch again or free @m. */
	m->phase = SDMUX_IDLE;
	m->done = NULL;
	m->msg = NULL;
	done(m, m->err, msg ? msg : (m->err ? strerror(-m->err) : ""), m->userdata);
	free(msg);
	return 0;
}

int sdmux_switch(struct sdmux *m, enum sdmux_mode mode, sdmux_done_fn done, void *userdata)
{
	int r;

	if (!done || mode > SDMUX_DUT)
		return -EINVAL;
	if (m->phase != SDMUX_IDLE)
		return -EBUSY;
	if (!m->timer) {
		if (!m->ctx.loop)
			return -ENOTCONN;
		r = loop_add_timer(m->ctx.loop, &m->timer, USEC_INFINITY, sdmux_on_timer, m);
		if (r < 0)
			return r;
		loop_source_set_description(m->timer, "sdmux");
	}
	m->mode = mode;
	m->err = 0;
	m->phase = SDMUX_SWITCHING;
	r = loop_timer_set_rel(m->timer, m->timeout + SDMUX_TIMEOUT_GRACE);
	if (r >= 0)
		r = m->drv->start(m, mode);
	if (r < 0) {
		loop_timer_set(m->timer, USEC_INFINITY);
		m->phase = SDMUX_IDLE;
		return r;
	}
	m->done = done;
	m->userdata = userdata;
	return 0;
}

void sdmux_complete(struct sdmux *m, int err, const char *fmt, ...)
{
	va_list ap;

	if (m->phase != SDMUX_SWITCHING)
		return;		/* late, after a timeout or an abort */
	free(m->msg);
	m->msg = NULL;
	if (fmt && *fmt) {
		va_start(ap, fmt);
		if (vasprintf(&m->msg, fmt, ap) < 0)
			m->msg = NULL;
		va_end(ap);
	}
	m->err = err;
	m->phase = SDMUX_DELIVER;
	loop_timer_set_rel(m->timer, 0);
}

void sdmux_abort(struct sdmux *m)
{
	if (!m || m->phase == SDMUX_IDLE)
		return;
	if (m->phase == SDMUX_SWITCHING && m->drv->abort)
		m->drv->abort(m);
	loop_timer_set(m->timer, USEC_INFINITY);
	m->phase = SDMUX_IDLE;
	m->done = NULL;
	free(m->msg);
	m->msg = NULL;
}

const char *sdmux_disk(const struct sdmux *m)
{
	return m->disk;
}

struct sdmux *sdmux_free(struct sdmux *m)
{
	if (!m)
		return NULL;
	sdmux_abort(m);
	if (m->priv && m->drv->release)
		m->drv->release(m);
	loop_source_free(m->timer);
	free(m->priv);
	free(m->disk);
	free(m->msg);
	free(m);
	return NULL;
}

void *sdmux_priv(struct sdmux *m)
{
	return m->priv;
}

const struct driver_ctx *sdmux_ctx(const struct sdmux *m)
{
	return &m->ctx;
}

uint64_t sdmux_timeout(const struct sdmux *m)
{
	return m->timeout;
}
