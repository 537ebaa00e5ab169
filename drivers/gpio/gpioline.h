/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpioline.h -- output GPIO lines through libgpiod, whatever its major version
 *
 * Debian 12 ships libgpiod 1.6 (the v1 API); newer distributions ship v2,
 * which is incompatible.  The gpio power driver uses this small interface;
 * the Makefile builds gpioline_v1.c or gpioline_v2.c, whichever matches the
 * installed libgpiod (pkg-config --atleast-version=2 libgpiod).
 *
 * Every call is one ioctl on the chip's character device: nothing waits.
 * Errors are negative errno values from libgpiod (ENOENT: no such chip or
 * line name, EBUSY: another consumer holds the line, EACCES, EINVAL: offset
 * beyond the chip).  A requested line keeps its level until it is released:
 * keep it requested for as long as the level must hold.
 */
#ifndef LABD_GPIOLINE_H
#define LABD_GPIOLINE_H

#include <stdbool.h>

struct gpioline_chip;
struct gpioline;

/**
 * gpioline_chip_open() - open a GPIO chip by name ("gpiochip0"), path
 * ("/dev/gpiochip0"), label ("pinctrl-bcm2711") or number ("0").
 * Close it with gpioline_chip_close() once its lines are released.
 */
int gpioline_chip_open(const char *chip, struct gpioline_chip **ret);
void gpioline_chip_close(struct gpioline_chip *c);

/** gpioline_find() - the offset of the first line called @name; -ENOENT if none. */
int gpioline_find(struct gpioline_chip *c, const char *name, unsigned *ret);

/**
 * gpioline_request() - request line @offset as an output at logical @value
 * (1 active), @active_low inverting the physical level, for @consumer.
 * Release it with gpioline_release().
 */
int gpioline_request(struct gpioline_chip *c, unsigned offset, bool active_low, int value,
		     const char *consumer, struct gpioline **ret);

/** gpioline_set() - drive the logical @value (0 or 1). */
int gpioline_set(struct gpioline *l, int value);

/** gpioline_get() - the logical value, 0 or 1, or a negative errno. */
int gpioline_get(struct gpioline *l);

/** gpioline_release() - give the line back; accepts NULL. */
void gpioline_release(struct gpioline *l);

#endif
