// SPDX-License-Identifier: GPL-2.0-or-later
/* gpiod_fake.c -- libgpiod v1 stand-in recording every call, for test-gpio (no GPIO here) */
#include "gpiod_fake.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpiod.h>

#define FAKE_CHIPS 2
#define FAKE_MAX_LINES 32
#define FAKE_LOG_MAX 8192

struct gpiod_line {
	struct gpiod_chip *chip;
	unsigned offset;
	char name[16];
	int requested;
	int active_low;
	int value;		/* logical */
};

struct gpiod_chip {
	const char *name, *label;
	unsigned n_lines;
	int open;		/* handles */
	struct gpiod_line lines[FAKE_MAX_LINES];
};

static struct gpiod_chip fake_chips[FAKE_CHIPS];
static char fake_log[FAKE_LOG_MAX];
static char fake_fail_call[16];
static int fake_fail_err;

static void fake_record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fake_record(const char *fmt, ...)
{
	size_t len = strlen(fake_log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fake_log + len, sizeof(fake_log) - len, fmt, ap);
	va_end(ap);
	len = strlen(fake_log);
	if (len + 1 < sizeof(fake_log))
		strcpy(fake_log + len, "\n");
}

/* Whether @call was armed to fail: then errno is set and the arm is spent. */
static int fake_failing(const char *call)
{
	if (!fake_fail_err || strcmp(fake_fail_call, call))
		return 0;
	errno = fake_fail_err;
	fake_fail_err = 0;
	return 1;
}

void gpiod_fake_reset(void)
{
	unsigned c, i;

	memset(fake_chips, 0, sizeof(fake_chips));
	fake_chips[0] = (struct gpiod_chip){ .name = "gpiochip0", .label = "pinctrl-fake",
					     .n_lines = 32 };
	fake_chips[1] = (struct gpiod_chip){ .name = "gpiochip1", .label = "relay-board",
					     .n_lines = 8 };
	for (c = 0; c < FAKE_CHIPS; c++) {
		for (i = 0; i < fake_chips[c].n_lines; i++) {
			fake_chips[c].lines[i].chip = &fake_chips[c];
			fake_chips[c].lines[i].offset = i;
			if (c == 1)
				snprintf(fake_chips[c].lines[i].name, 16, "R%u", i);
		}
	}
	strcpy(fake_chips[0].lines[5].name, "RELAY1");
	fake_log[0] = '\0';
	fake_fail_err = 0;
}

const char *gpiod_fake_log(void)
{
	return fake_log;
}

void gpiod_fake_fail(const char *call, int err)
{
	snprintf(fake_fail_call, sizeof(fake_fail_call), "%s", call);
	fake_fail_err = err;
}

int gpiod_fake_level(const char *chip, unsigned offset)
{
	unsigned c;

	for (c = 0; c < FAKE_CHIPS; c++) {
		const struct gpiod_line *l = &fake_chips[c].lines[offset % FAKE_MAX_LINES];

		if (!strcmp(fake_chips[c].name, chip) && offset < fake_chips[c].n_lines)
			return l->requested ? l->value ^ l->active_low : -1;
	}
	return -1;
}

int gpiod_fake_open_chips(void)
{
	int n = 0;
	unsigned c;

	for (c = 0; c < FAKE_CHIPS; c++)
		n += fake_chips[c].open;
	return n;
}

/* The lookup rules of libgpiod 1.6: path, name, label, then number. */
static struct gpiod_chip *fake_lookup(const char *descr)
{
	const char *name = strncmp(descr, "/dev/", 5) ? descr : descr + 5;
	char number[32];
	unsigned c;

	for (c = 0; c < FAKE_CHIPS; c++) {
		snprintf(number, sizeof(number), "%u", c);
		if (!strcmp(fake_chips[c].name, name) || !strcmp(fake_chips[c].label, descr) ||
		    !strcmp(number, descr))
			return &fake_chips[c];
	}
	return NULL;
}

struct gpiod_chip *gpiod_chip_open_lookup(const char *descr)
{
	struct gpiod_chip *c;

	fake_record("open %s", descr);
	if (fake_failing("open"))
		return NULL;
	c = fake_lookup(descr);
	if (!c) {
		errno = ENOENT;
		return NULL;
	}
	c->open++;
	return c;
}

void gpiod_chip_close(struct gpiod_chip *chip)
{
	unsigned i;

	fake_record("close %s", chip->name);
	chip->open--;
	for (i = 0; i < chip->n_lines; i++)
		chip->lines[i].requested = 0;
}

struct gpiod_line *gpiod_chip_get_line(struct gpiod_chip *chip, unsigned int offset)
{
	if (offset >= chip->n_lines) {
		errno = EINVAL;
		return NULL;
	}
	return &chip->lines[offset];
}

struct gpiod_line *gpiod_chip_find_line(struct gpiod_chip *chip, const char *name)
{
	unsigned i;

	fake_record("find %s %s", chip->name, name);
	for (i = 0; i < chip->n_lines; i++)
		if (!strcmp(chip->lines[i].name, name))
			return &chip->lines[i];
	errno = ENOENT;
	return NULL;
}

unsigned int gpiod_line_offset(struct gpiod_line *line)
{
	return line->offset;
}

int gpiod_line_request_output_flags(struct gpiod_line *line, const char *consumer, int flags,
				    int default_val)
{
	int active_low = !!(flags & GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW);

	fake_record("request %s %u consumer=%s active_low=%d value=%d", line->chip->name,
		    line->offset, consumer, active_low, default_val);
	if (fake_failing("request"))
		return -1;
	if (line->requested) {
		errno = EBUSY;
		return -1;
	}
	line->requested = 1;
	line->active_low = active_low;
	line->value = !!default_val;
	return 0;
}

int gpiod_line_set_value(struct gpiod_line *line, int value)
{
	fake_record("set %s %u %d", line->chip->name, line->offset, value);
	if (fake_failing("set"))
		return -1;
	if (!line->requested) {
		errno = EPERM;
		return -1;
	}
	line->value = !!value;
	return 0;
}

int gpiod_line_get_value(struct gpiod_line *line)
{
	if (!line->requested) {
		errno = EPERM;
		return -1;
	}
	return line->value;
}

void gpiod_line_release(struct gpiod_line *line)
{
	fake_record("release %s %u", line->chip->name, line->offset);
	line->requested = 0;
}
