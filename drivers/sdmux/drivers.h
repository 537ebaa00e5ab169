/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drivers.h -- the SD-mux drivers listed in the table of drivers/sdmux.c
 *
 * Internal to drivers/sdmux.c and drivers/sdmux/.  Adding a driver means one
 * line here and one in sdmux.c's table.  Each driver lists SDMUX_COMMON_KEYS
 * among the keys it knows (the core reads them).
 */
#ifndef LABD_SDMUX_DRIVERS_H
#define LABD_SDMUX_DRIVERS_H

#include "drivers/sdmux.h"

extern const struct sdmux_driver sdmux_usbsdmux_driver;
extern const struct sdmux_driver sdmux_fake_driver;

#endif
