/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drivers.h -- the power drivers listed in the table of drivers/power.c
 *
 * Internal to drivers/power.c and drivers/power/: users find drivers by name
 * through power_find_driver().  Each driver file defines exactly one of these
 * objects; adding a driver means one line here and one in power.c's table.
 *
 * The core reads some keys of every `power` group itself (POWER_COMMON_KEYS:
 * `driver`, and `timeout` in seconds, which sets power_timeout()).  A driver
 * lists them among the keys it knows, so that cfg_check_keys() accepts them.
 */
#ifndef LABD_POWER_DRIVERS_H
#define LABD_POWER_DRIVERS_H

#include "drivers/power.h"

#define POWER_COMMON_KEYS "driver", "timeout"

extern const struct power_driver power_command_driver;
extern const struct power_driver power_pdudaemon_driver;
extern const struct power_driver power_fake_driver;
extern const struct power_driver power_qemu_driver;
extern const struct power_driver power_usbhub_driver;
extern const struct power_driver power_ykush_driver;
extern const struct power_driver power_gpio_driver;

#endif
