/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiod_fake.h -- a recording stand-in for the libgpiod v1 calls labd makes
 *
 * The CI host has no GPIO at all (no gpiochip, no gpio-sim, no modules), so
 * test-gpio links the gpio power driver with gpiod_fake.c instead of
 * libgpiod.  The fake implements gpiod_chip_open_lookup(), _close(),
 * gpiod_chip_get_line(), gpiod_chip_find_line(), gpiod_line_offset(),
 * gpiod_line_request_output_flags(), gpiod_line_set_value(),
 * gpiod_line_get_value() and gpiod_line_release() over two chips:
 *
 *	gpiochip0  label "pinctrl-fake", 32 lines, line 5 is named "RELAY1"
 *	gpiochip1  label "relay-board", 8 lines, named "R0" .. "R7"
 *
 * looked up like the real library (name, /dev path, label, number), with the
 * kernel's rules: a line requested twice is EBUSY.  Every call is recorded,
 * one line each, e.g.:
 *
 *	open gpiochip0
 *	request gpiochip0 5 consumer=labd:board-1 active_low=1 value=1
 *	set gpiochip0 5 0
 *	release gpiochip0 5
 *	close gpiochip0
 */
#ifndef LABD_GPIOD_FAKE_H
#define LABD_GPIOD_FAKE_H

/** gpiod_fake_reset() - no chip open, no line requested, empty log, no failure armed. */
void gpiod_fake_reset(void);

/** gpiod_fake_log() - the calls so far, one per line (static buffer). */
const char *gpiod_fake_log(void);

/** gpiod_fake_fail() - make the next @call ("open", "request", "set") fail with @err. */
void gpiod_fake_fail(const char *call, int err);

/** gpiod_fake_level() - the physical level of a line (active_low applied), -1 if not driven. */
int gpiod_fake_level(const char *chip, unsigned offset);

/** gpiod_fake_open_chips() - how many chip handles are open. */
int gpiod_fake_open_chips(void);

#endif
