// SPDX-License-Identifier: GPL-2.0-or-later
/* power.c -- power control core: driver table, one operation at a time, timeout, cycle */
#include "drivers/power.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/loop.h"
#include "drivers/power/drivers.h"

/*
 * Extra time the core grants a step before it gives up on the driver.  Drivers
 * that enforce power_timeout() themselves (killing a command, cancelling a
 * request) report first, with a better reason; the core's timer is the safety
 * net for the others.
 */
#define POWER_TIMEOUT_GRACE (1 * USEC_PER_SEC)
#define POWER_NAMES_MAX 256	/* "command, pdudaemon, ..." in messages */

static const struct power_driver *const power_drivers[] = {
	&power_command_driver,
	&power_pdudaemon_driver,
	&power_fake_driver,
	&power_qemu_driver,
	&power_usbhub_driver,
	&power_ykush_driver,
	&power_gpio_driver,
};

#define POWER_N_DRIVERS (sizeof(power_drivers) / sizeof(power_drivers[0]))

enum power_phase {
	POWER_IDLE,
	POWER_STEP,	/* the driver runs p->step */
	POWER_DELAY,	/* emulated cycle: off done, waiting before on */
	POWER_DONE,	/* finished: the result waits for the timer to deliver it */
};

struct power {
	const struct power_driver *drv;
	struct driver_ctx ctx;
	uint64_t timeout;
	uint64_t cycle_delay;
	enum power_op op;	/* what the user asked for */
	enum power_op step;	/* what the driver does now */
	enum power_phase phase;
	uint64_t step_deadline;	/* loop_now() + timeout at the step's start */
	int last_state;
	int err;		/* result waiting to be delivered */
	char *msg;
	power_done_fn done;
	power_step_fn on_step;	/* of the operation: its emulated cycle's steps start */
	void *userdata;
	struct loop_source *timer;	/* step timeout, cycle delay, or delivery */
	struct kv vars;		/* power_set_vars() */
	void *priv;
};

const struct power_driver *power_find_driver(const char *name)
{
	size_t i;

	for (i = 0; name && i < POWER_N_DRIVERS; i++)
		if (!strcmp(power_drivers[i]->name, name))
			return power_drivers[i];
	return NULL;
}

const char *const *power_driver_names(void)
{
	static const char *names[POWER_N_DRIVERS + 1];
	size_t i;

	for (i = 0; i < POWER_N_DRIVERS; i++)
		names[i] = power_drivers[i]->name;
	return names;
}

const char *power_op_name(enum power_op op)
{
	switch (op) {
	case POWER_OFF:
		return "off";
	case POWER_ON:
		return "on";
	case POWER_CYCLE:
		return "cycle";
	}
	return "?";
}

static const char *power_device(const struct power *p)
{
	return p->ctx.device_name ? p->ctx.device_name : "(unnamed)";
}

static int power_unknown_driver(const struct driver_config *cfg, struct diag *diag)
{
	char known[POWER_NAMES_MAX] = "";
	size_t i, len = 0;

	for (i = 0; i < POWER_N_DRIVERS && len < sizeof(known); i++)
		len += snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
				power_drivers[i]->name);
	if (!cfg->driver)
		return diag_add(diag, cfg->file, cfg->line, "missing power driver (one of: %s)",
				known);
	return diag_add(diag, cfg->file, cfg->line, "unknown power driver '%s' (one of: %s)",
			cfg->driver, known);
}

/* The keys every power group may hold whatever its driver (POWER_COMMON_KEYS). */
static int power_parse_common(struct power *p, const config_setting_t *s, struct diag *diag)
{
	config_setting_t *t;
	uint64_t timeout;
	int r;

	r = cfg_get_duration(s, "timeout", false, &timeout, diag);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (!timeout) {
		t = config_setting_get_member(s, "timeout");
		return diag_add(diag, cfg_file(t), cfg_line(t), "'timeout' must be more than 0");
	}
	p->timeout = timeout;
	return 0;
}

int power_new(const struct driver_config *cfg, const struct driver_ctx *ctx,
	      struct power **ret, struct diag *diag)
{
	const struct power_driver *drv = power_find_driver(cfg->driver);
	struct power *p;
	int r, rc;

	if (!drv)
		return power_unknown_driver(cfg, diag);
	if (!cfg->settings)
		return diag_add(diag, cfg->file, cfg->line, "missing settings of power driver '%s'",
				cfg->driver);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->drv = drv;
	p->ctx = *ctx;
	p->timeout = POWER_DEFAULT_TIMEOUT;
	p->cycle_delay = POWER_DEFAULT_CYCLE_DELAY;
	p->last_state = -1;
	p->priv = calloc(1, drv->priv_size ? drv->priv_size : 1);
	if (!p->priv) {
		r = -ENOMEM;
		goto err_free_power;
	}
	/* Report the problems of both the common keys and the driver's own in one go. */
	rc = power_parse_common(p, cfg->settings, diag);
	r = drv->parse(p, cfg->settings, diag);
	if (r >= 0 && rc < 0)
		r = rc;
	if (r < 0)
		goto err_free_power;
	*ret = p;
	return 0;

err_free_power:
	/* ->release() copes with what a failed ->parse() left half-built. */
	power_free(p);
	return r;
}

void power_set_timeout(struct power *p, uint64_t usec)
{
	p->timeout = usec;
}

void power_set_cycle_delay(struct power *p, uint64_t usec)
{
	p->cycle_delay = usec;
}

int power_set_vars(struct power *p, const struct kv *vars)
{
	struct kv n = KV_INIT;

	if (vars && kv_merge(&n, vars) < 0) {
		kv_release(&n);
		return -ENOMEM;
	}
	kv_release(&p->vars);
	p->vars = n;
	return 0;
}

/* Record the result and deliver it from the next loop iteration. */
static void power_finish(struct power *p, int err, char *msg)
{
	free(p->msg);
	p->msg = msg;
	p->err = err;
	p->phase = POWER_DONE;
	if (err)
		p->last_state = -1;
	else
		p->last_state = p->op == POWER_OFF ? 0 : 1;
	/* The timer cannot fail here: it exists and re-arming it allocates nothing. */
	loop_timer_set_rel(p->timer, 0);
}

static void power_finishf(struct power *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void power_finishf(struct power *p, int err, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	power_finish(p, err, msg);
}

/* Start one driver step under the step timeout. */
static int power_start_step(struct power *p, enum power_op step)
{
	int r;

	if (p->op == POWER_CYCLE && step != POWER_CYCLE && p->on_step)
		p->on_step(p, step, p->userdata);	/* the core's own cycle */
	p->step = step;
	p->phase = POWER_STEP;
	p->step_deadline = loop_now(p->ctx.loop) + p->timeout;
	r = loop_timer_set_rel(p->timer, p->timeout + POWER_TIMEOUT_GRACE);
	if (r >= 0)
		r = p->drv->start(p, step);
	/* A driver that cannot cycle this board natively lets the core do it. */
	if (r == -EOPNOTSUPP && step == POWER_CYCLE)
		return power_start_step(p, POWER_OFF);
	if (r < 0) {
		loop_timer_set(p->timer, USEC_INFINITY);
		p->phase = POWER_IDLE;
	}
	return r;
}

static void power_timed_out(struct power *p)
{
	if (p->drv->abort)
		p->drv->abort(p);
	power_finishf(p, -ETIMEDOUT, "power %s of '%s' timed out after %g s",
		      power_op_name(p->step), power_device(p), (double)p->timeout / USEC_PER_SEC);
}

static void power_delay_over(struct power *p)
{
	int r = power_start_step(p, POWER_ON);

	if (r < 0)
		power_finishf(p, r, "cannot start power on of '%s': %s", power_device(p),
			      strerror(-r));
}

static void power_deliver(struct power *p)
{
	power_done_fn done = p->done;
	void *userdata = p->userdata;
	char *msg = p->msg;
	int err = p->err;

	/* Idle before the callback, which may start the next operation or free @p. */
	p->phase = POWER_IDLE;
	p->done = NULL;
	p->on_step = NULL;
	p->msg = NULL;
	if (err && !msg)
		done(p, err, strerror(-err), userdata);
	else
		done(p, err, msg ? msg : "", userdata);
	free(msg);
}

static int power_on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct power *p = userdata;

	switch (p->phase) {
	case POWER_STEP:
		power_timed_out(p);
		break;
	case POWER_DELAY:
		power_delay_over(p);
		break;
	case POWER_DONE:
		power_deliver(p);
		break;
	case POWER_IDLE:
		break;
	}
	return 0;
}

static int power_make_timer(struct power *p)
{
	char desc[128];
	int r;

	if (p->timer)
		return 0;
	if (!p->ctx.loop)
		return -ENOTCONN;
	r = loop_add_timer(p->ctx.loop, &p->timer, USEC_INFINITY, power_on_timer, p);
	if (r < 0)
		return r;
	snprintf(desc, sizeof(desc), "power:%s", power_device(p));
	loop_source_set_description(p->timer, desc);
	return 0;
}

int power_run(struct power *p, enum power_op op, power_done_fn done, void *userdata)
{
	return power_run_watched(p, op, done, NULL, userdata);
}

int power_run_watched(struct power *p, enum power_op op, power_done_fn done,
		      power_step_fn on_step, void *userdata)
{
	int r;

	if (!done || op > POWER_CYCLE)
		return -EINVAL;
	if (p->phase != POWER_IDLE)
		return -EBUSY;
	r = power_make_timer(p);
	if (r < 0)
		return r;
	p->op = op;
	p->done = done;
	p->on_step = on_step;
	p->userdata = userdata;
	free(p->msg);
	p->msg = NULL;
	p->err = 0;
	r = power_start_step(p, op == POWER_CYCLE && !p->drv->cycles ? POWER_OFF : op);
	if (r < 0) {
		p->done = NULL;
		p->on_step = NULL;
	}
	return r;
}

void power_complete(struct power *p, int err, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	if (p->phase != POWER_STEP)
		return;		/* late report after a timeout or an abort */
	if (!err && p->op == POWER_CYCLE && p->step == POWER_OFF) {
		p->phase = POWER_DELAY;
		loop_timer_set_rel(p->timer, p->cycle_delay);
		return;
	}
	if (fmt && *fmt) {
		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) < 0)
			msg = NULL;
		va_end(ap);
	}
	power_finish(p, err, msg);
}

void power_abort(struct power *p)
{
	if (!p || p->phase == POWER_IDLE)
		return;
	if (p->phase == POWER_STEP && p->drv->abort)
		p->drv->abort(p);
	loop_timer_set(p->timer, USEC_INFINITY);
	p->phase = POWER_IDLE;
	p->done = NULL;
	p->on_step = NULL;
	free(p->msg);
	p->msg = NULL;
}

bool power_is_busy(const struct power *p)
{
	return p->phase != POWER_IDLE;
}

int power_last_state(const struct power *p)
{
	return p->last_state;
}

struct power *power_free(struct power *p)
{
	if (!p)
		return NULL;
	power_abort(p);
	if (p->priv && p->drv->release)
		p->drv->release(p);
	loop_source_free(p->timer);
	kv_release(&p->vars);
	free(p->msg);
	free(p->priv);
	free(p);
	return NULL;
}

void *power_priv(struct power *p)
{
	return p->priv;
}

const struct driver_ctx *power_ctx(const struct power *p)
{
	return &p->ctx;
}

const struct kv *power_vars(const struct power *p)
{
	return &p->vars;
}

uint64_t power_timeout(const struct power *p)
{
	return p->timeout;
}

unsigned power_request_timeout_ms(const struct power *p, unsigned default_ms)
{
	uint64_t now, left;

	if (p->phase != POWER_STEP)
		return default_ms;
	now = loop_now(p->ctx.loop);
	left = p->step_deadline > now ? (p->step_deadline - now) / USEC_PER_MSEC : 0;
	if (left >= default_ms)
		return default_ms;
	return left ? (unsigned)left : 1;
}
