// SPDX-License-Identifier: GPL-2.0-or-later
/* gpio.c -- power driver "gpio": a relay or a reset input on a GPIO line (libgpiod) */
/*
 * Board definition:
 *
 *	power = {
 *		driver = "gpio";
 *		chip = "gpiochip0";	// name, /dev path, label or number of the chip
 *		line = 17;		// offset on the chip, or the line's name: "RELAY1"
 *		active_low = false;	// optional: the relay closes on a low level
 *		reset_pulse = 0.2;	// optional: cycle = off for this long, then on
 *		timeout = 5;		// optional, seconds
 *	};
 *
 * On drives the line active, off inactive (active_low inverts the physical
 * level).  With reset_pulse, a cycle is one pulse: inactive for that many
 * seconds, then active again; this also drives a board's reset input (wire
 * it so that "on" means out of reset).  Without it a cycle is off, the
 * board's power-on delay, on.
 *
 * The line is requested at the first operation and stays requested, holding
 * its level, for as long as the board exists: the GPIO character device does
 * not promise to keep a released line's level.  Boards sharing a chip share
 * one open chip (a table of chips with reference counts); two boards cannot
 * hold the same line (EBUSY).  The libgpiod calls are ioctls that do not
 * wait; results are still delivered from the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/gpio/gpioline.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"

#define GPIO_MAX_OFFSET 65535
#define GPIO_MAX_PULSE (60 * USEC_PER_SEC)
#define GPIO_CONSUMER_MAX 32	/* the kernel keeps 31 characters of a consumer name */

/* An open chip shared by every board using it. */
struct gpio_chip {
	char *name;		/* as the boards name it */
	struct gpioline_chip *chip;
	int refcount;
	struct gpio_chip *next;
};

static struct gpio_chip *gpio_chips;

struct gpio {
	char *chip_name;
	unsigned offset;
	char *line_name;	/* NULL: the line is given by offset */
	bool active_low;
	uint64_t pulse;		/* 0: no reset pulse */
	char consumer[GPIO_CONSUMER_MAX];
	struct gpio_chip *chip;
	struct gpioline *line;	/* requested until the board goes */
	enum power_op op;
	bool pulsing;		/* a cycle: the line is off, on comes at the timer */
	struct loop_source *timer;
};

/* ---- the shared chip table ---- */

static int gpio_chip_get(const char *name, struct gpio_chip **ret)
{
	struct gpio_chip *c;
	int r;

	for (c = gpio_chips; c; c = c->next) {
		if (!strcmp(c->name, name)) {
			c->refcount++;
			*ret = c;
			return 0;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return -ENOMEM;
	}
	r = gpioline_chip_open(name, &c->chip);
	if (r < 0) {
		free(c->name);
		free(c);
		return r;
	}
	c->refcount = 1;
	c->next = gpio_chips;
	gpio_chips = c;
	*ret = c;
	return 0;
}

static void gpio_chip_put(struct gpio_chip *c)
{
	struct gpio_chip **p;

	if (!c || --c->refcount > 0)
		return;
	for (p = &gpio_chips; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	gpioline_chip_close(c->chip);
	free(c->name);
	free(c);
}

/* ---- configuration ---- */

/* `line`: an offset, or a line name. */
static int gpio_parse_line(struct gpio *g, const config_setting_t *s, struct diag *diag)
{
	const config_setting_t *e = config_setting_get_member(s, "line");
	long long v;

	if (e && config_setting_type(e) == CONFIG_TYPE_STRING) {
		if (!*config_setting_get_string(e))
			return diag_add(diag, cfg_file(e), cfg_line(e), "'line' must not be empty");
		g->line_name = strdup(config_setting_get_string(e));
		return g->line_name ? 0 : -ENOMEM;
	}
	if (cfg_get_int(s, "line", true, 0, GPIO_MAX_OFFSET, &v, diag) < 0)
		return -EINVAL;
	g->offset = (unsigned)v;
	return 0;
}

static int gpio_parse_pulse(struct gpio *g, const config_setting_t *s, struct diag *diag)
{
	const config_setting_t *e;
	int r = cfg_get_duration(s, "reset_pulse", false, &g->pulse, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (g->pulse && g->pulse <= GPIO_MAX_PULSE)
		return 0;
	e = config_setting_get_member(s, "reset_pulse");
	return diag_add(diag, cfg_file(e), cfg_line(e),
			"'reset_pulse' must be more than 0 and at most %llu seconds",
			GPIO_MAX_PULSE / USEC_PER_SEC);
}

static int gpio_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = {
		POWER_COMMON_KEYS, "chip", "line", "active_low", "reset_pulse", NULL
	};
	const char *device = power_ctx(p)->device_name;
	struct gpio *g = power_priv(p);
	const char *chip = NULL;
	int r, e;

	r = cfg_check_keys(s, known, diag);
	if (cfg_get_string(s, "chip", true, &chip, diag) < 0)
		r = -EINVAL;
	else if (!*chip && r != -ENOMEM)
		r = diag_add(diag, cfg_file(s), cfg_line(config_setting_get_member(s, "chip")),
			     "'chip' must not be empty");
	e = gpio_parse_line(g, s, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	if (cfg_get_bool(s, "active_low", false, &g->active_low, diag) == -EINVAL)
		r = r == -ENOMEM ? r : -EINVAL;
	e = gpio_parse_pulse(g, s, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	if (r < 0)
		return r;
	snprintf(g->consumer, sizeof(g->consumer), "labd:%s", device ? device : "-");
	g->chip_name = strdup(chip);
	return g->chip_name ? 0 : -ENOMEM;
}

/* ---- operations ---- */

/* "line 17" or "line 'RELAY1' (5)", for messages */
static const char *gpio_line_desc(const struct gpio *g, char *buf, size_t len)
{
	if (g->line_name)
		snprintf(buf, len, "line '%s'", g->line_name);
	else
		snprintf(buf, len, "line %u", g->offset);
	return buf;
}

/* Open the chip and request the line at @value, once; failures are reported. */
static int gpio_acquire(struct power *p, int value)
{
	struct gpio *g = power_priv(p);
	char desc[96];
	int r;

	if (g->line)
		return 0;
	r = gpio_chip_get(g->chip_name, &g->chip);
	if (r < 0) {
		power_complete(p, r, "cannot open GPIO chip '%s': %s", g->chip_name, strerror(-r));
		return r;
	}
	if (g->line_name && (r = gpioline_find(g->chip->chip, g->line_name, &g->offset)) < 0) {
		if (r == -ENOENT)
			power_complete(p, r, "GPIO chip '%s' has no line named '%s'", g->chip_name,
				       g->line_name);
		else
			power_complete(p, r, "cannot look up line '%s' on GPIO chip '%s': %s",
				       g->line_name, g->chip_name, strerror(-r));
		goto err_put_chip;
	}
	r = gpioline_request(g->chip->chip, g->offset, g->active_low, value, g->consumer,
			     &g->line);
	if (r >= 0)
		return 0;
	power_complete(p, r, "cannot request %s of GPIO chip '%s': %s",
		       gpio_line_desc(g, desc, sizeof(desc)), g->chip_name, strerror(-r));
err_put_chip:
	gpio_chip_put(g->chip);
	g->chip = NULL;
	return r;
}

static int gpio_drive(struct power *p, int value)
{
	struct gpio *g = power_priv(p);
	char desc[96];
	int r;

	if (!g->line)
		return gpio_acquire(p, value);
	r = gpioline_set(g->line, value);
	if (r < 0)
		power_complete(p, r, "cannot set %s of GPIO chip '%s' %s: %s",
			       gpio_line_desc(g, desc, sizeof(desc)), g->chip_name,
			       value ? "active" : "inactive", strerror(-r));
	return r;
}

static int gpio_on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct power *p = userdata;
	struct gpio *g = power_priv(p);

	if (g->pulsing) {
		g->pulsing = false;
		if (gpio_drive(p, 1) == 0)
			power_complete(p, 0, NULL);
		return 0;
	}
	if (gpio_drive(p, g->op != POWER_OFF && g->op != POWER_CYCLE) < 0)
		return 0;
	if (g->op == POWER_CYCLE) {
		g->pulsing = true;
		loop_timer_set_rel(g->timer, g->pulse);
		return 0;
	}
	power_complete(p, 0, NULL);
	return 0;
}

static int gpio_start(struct power *p, enum power_op op)
{
	struct gpio *g = power_priv(p);
	int r;

	if (op == POWER_CYCLE && !g->pulse)
		return -EOPNOTSUPP;	/* the core does off, delay, on */
	if (!g->timer) {
		if (!power_ctx(p)->loop)
			return -ENOTCONN;
		r = loop_add_timer(power_ctx(p)->loop, &g->timer, USEC_INFINITY, gpio_on_timer, p);
		if (r < 0)
			return r;
		loop_source_set_description(g->timer, "power-gpio");
	}
	g->op = op;
	g->pulsing = false;
	return loop_timer_set_rel(g->timer, 0);
}

static void gpio_abort(struct power *p)
{
	struct gpio *g = power_priv(p);

	if (g->timer)
		loop_timer_set(g->timer, USEC_INFINITY);
	g->pulsing = false;
}

static void gpio_release(struct power *p)
{
	struct gpio *g = power_priv(p);

	g->timer = loop_source_free(g->timer);
	gpioline_release(g->line);
	gpio_chip_put(g->chip);
	free(g->chip_name);
	free(g->line_name);
}

const struct power_driver power_gpio_driver = {
	.name = "gpio",
	.priv_size = sizeof(struct gpio),
	.parse = gpio_parse,
	.start = gpio_start,
	.abort = gpio_abort,
	.release = gpio_release,
	.cycles = true,		/* with reset_pulse; -EOPNOTSUPP without */
};
