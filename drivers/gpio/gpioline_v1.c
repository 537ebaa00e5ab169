// SPDX-License-Identifier: GPL-2.0-or-later
/* gpioline_v1.c -- gpioline.h on the libgpiod v1 API (1.x: Debian 12 ships 1.6.3) */
#include "drivers/gpio/gpioline.h"

#include <errno.h>
#include <stdlib.h>

#include <gpiod.h>

struct gpioline_chip {
	struct gpiod_chip *chip;
};

struct gpioline {
	struct gpiod_line *line;	/* owned by the chip; requested */
};

/* libgpiod v1 returns -1 or NULL and sets errno. */
static int gpioline_errno(void)
{
	return errno ? -errno : -EIO;
}

int gpioline_chip_open(const char *chip, struct gpioline_chip **ret)
{
	struct gpioline_chip *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	errno = 0;
	c->chip = gpiod_chip_open_lookup(chip);
	if (!c->chip) {
		int r = gpioline_errno();

		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void gpioline_chip_close(struct gpioline_chip *c)
{
	if (!c)
		return;
	gpiod_chip_close(c->chip);
	free(c);
}

int gpioline_find(struct gpioline_chip *c, const char *name, unsigned *ret)
{
	struct gpiod_line *l;

	errno = 0;
	l = gpiod_chip_find_line(c->chip, name);
	if (!l)
		return errno && errno != ENOENT ? -errno : -ENOENT;
	*ret = gpiod_line_offset(l);
	return 0;
}

int gpioline_request(struct gpioline_chip *c, unsigned offset, bool active_low, int value,
		     const char *consumer, struct gpioline **ret)
{
	int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
	struct gpioline *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	errno = 0;
	l->line = gpiod_chip_get_line(c->chip, offset);
	if (!l->line)
		goto err_free;
	errno = 0;
	if (gpiod_line_request_output_flags(l->line, consumer, flags, value) < 0)
		goto err_free;
	*ret = l;
	return 0;

err_free:
	r = gpioline_errno();
	free(l);
	return r;
}

int gpioline_set(struct gpioline *l, int value)
{
	errno = 0;
	return gpiod_line_set_value(l->line, value) < 0 ? gpioline_errno() : 0;
}

int gpioline_get(struct gpioline *l)
{
	int v;

	errno = 0;
	v = gpiod_line_get_value(l->line);
	return v < 0 ? gpioline_errno() : v;
}

void gpioline_release(struct gpioline *l)
{
	if (!l)
		return;
	gpiod_line_release(l->line);
	free(l);
}
