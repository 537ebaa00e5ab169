// SPDX-License-Identifier: GPL-2.0-or-later
/* gpioline_v2.c -- gpioline.h on the libgpiod v2 API (2.x) */
#include "drivers/gpio/gpioline.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpiod.h>

#define GPIOLINE_DEV "/dev"

struct gpioline_chip {
	struct gpiod_chip *chip;
};

struct gpioline {
	struct gpiod_line_request *req;
	unsigned offset;
};

/* libgpiod returns -1 or NULL and sets errno. */
static int gpioline_errno(void)
{
	return errno ? -errno : -EIO;
}

static bool gpioline_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* v2 opens by path only: find the chip labelled @label among /dev/gpiochip*. */
static struct gpiod_chip *gpioline_open_label(const char *label)
{
	struct gpiod_chip *found = NULL, *c;
	struct gpiod_chip_info *info;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(GPIOLINE_DEV);

	if (!d)
		return NULL;
	while (!found && (e = readdir(d))) {
		if (strncmp(e->d_name, "gpiochip", 8))
			continue;
		snprintf(path, sizeof(path), GPIOLINE_DEV "/%s", e->d_name);
		if (!gpiod_is_gpiochip_device(path) || !(c = gpiod_chip_open(path)))
			continue;
		info = gpiod_chip_get_info(c);
		if (info && !strcmp(gpiod_chip_info_get_label(info), label))
			found = c;
		else
			gpiod_chip_close(c);
		gpiod_chip_info_free(info);
	}
	closedir(d);
	if (!found)
		errno = ENOENT;
	return found;
}

/* The v1 gpiod_chip_open_lookup() rules: path, name, number, then label. */
static struct gpiod_chip *gpioline_lookup(const char *chip)
{
	char path[PATH_MAX];

	if (chip[0] == '/')
		return gpiod_chip_open(chip);
	if (gpioline_all_digits(chip))
		snprintf(path, sizeof(path), GPIOLINE_DEV "/gpiochip%s", chip);
	else
		snprintf(path, sizeof(path), GPIOLINE_DEV "/%s", chip);
	if (!strncmp(chip, "gpiochip", 8) || gpioline_all_digits(chip))
		return gpiod_chip_open(path);
	return gpioline_open_label(chip);
}

int gpioline_chip_open(const char *chip, struct gpioline_chip **ret)
{
	struct gpioline_chip *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	errno = 0;
	c->chip = gpioline_lookup(chip);
	if (!c->chip) {
		r = gpioline_errno();
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
	int offset;

	errno = 0;
	offset = gpiod_chip_get_line_offset_from_name(c->chip, name);
	if (offset < 0)
		return errno && errno != ENOENT ? -errno : -ENOENT;
	*ret = (unsigned)offset;
	return 0;
}

static struct gpiod_line_request *gpioline_do_request(struct gpiod_chip *chip, unsigned offset,
						      bool active_low, int value,
						      const char *consumer)
{
	struct gpiod_line_settings *settings = gpiod_line_settings_new();
	struct gpiod_line_config *lcfg = gpiod_line_config_new();
	struct gpiod_request_config *rcfg = gpiod_request_config_new();
	struct gpiod_line_request *req = NULL;

	if (!settings || !lcfg || !rcfg)
		goto out;
	gpiod_line_settings_set_active_low(settings, active_low);
	if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) < 0 ||
	    gpiod_line_settings_set_output_value(settings, value ? GPIOD_LINE_VALUE_ACTIVE :
						 GPIOD_LINE_VALUE_INACTIVE) < 0 ||
	    gpiod_line_config_add_line_settings(lcfg, &offset, 1, settings) < 0)
		goto out;
	gpiod_request_config_set_consumer(rcfg, consumer);
	req = gpiod_chip_request_lines(chip, rcfg, lcfg);
out:
	gpiod_request_config_free(rcfg);
	gpiod_line_config_free(lcfg);
	gpiod_line_settings_free(settings);
	return req;
}

int gpioline_request(struct gpioline_chip *c, unsigned offset, bool active_low, int value,
		     const char *consumer, struct gpioline **ret)
{
	struct gpioline *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	errno = 0;
	l->req = gpioline_do_request(c->chip, offset, active_low, value, consumer);
	if (!l->req) {
		r = gpioline_errno();
		free(l);
		return r;
	}
	l->offset = offset;
	*ret = l;
	return 0;
}

int gpioline_set(struct gpioline *l, int value)
{
	errno = 0;
	if (gpiod_line_request_set_value(l->req, l->offset, value ? GPIOD_LINE_VALUE_ACTIVE :
					 GPIOD_LINE_VALUE_INACTIVE) < 0)
		return gpioline_errno();
	return 0;
}

int gpioline_get(struct gpioline *l)
{
	enum gpiod_line_value v;

	errno = 0;
	v = gpiod_line_request_get_value(l->req, l->offset);
	if (v == GPIOD_LINE_VALUE_ERROR)
		return gpioline_errno();
	return v == GPIOD_LINE_VALUE_ACTIVE;
}

void gpioline_release(struct gpioline *l)
{
	if (!l)
		return;
	gpiod_line_request_release(l->req);
	free(l);
}
