/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sg_fake.h -- a USB-SD-Mux behind the sg.h calls, for test-sdmux (no SCSI on the CI host)
 *
 * test-sdmux links sg_fake.c in place of drivers/sdmux/sg.c.  It emulates
 * the reader's vendor I2C commands (0xcf 0x23 write, 0xcf 0x22 write-read)
 * and the GPIO expander behind them: a PCA9536 at 0x41 ("classic") or a
 * TCA6408 at 0x20 ("fast"), registers input, output, polarity, config
 * (config 0xff at power-on: all inputs).  An undriven pin reads 0.  A command
 * to another I2C address fails with SCSI status 2 (CHECK CONDITION).  The fd
 * sg_open() returns is a pipe that turns readable when a command finished.
 * Every I2C transaction is logged, one per line: "w 41 03 f0" (address,
 * register, value), "r 41 00 -> 0c".
 */
#ifndef LABD_SG_FAKE_H
#define LABD_SG_FAKE_H

#include <stdint.h>

/** sg_fake_reset() - power on a "classic" or "fast" mux; empty log, nothing armed. */
void sg_fake_reset(const char *model);

const char *sg_fake_log(void);

/**
 * sg_fake_fail() - arm a failure: "open" (the next sg_open fails with @err),
 * "status" (the next command ends with SCSI status @err), "silent" (the next
 * command never completes), "stuck" (pin mask @err reads 1 whatever is driven).
 */
void sg_fake_fail(const char *what, int err);

/** sg_fake_reg() - a register of the expander. */
uint8_t sg_fake_reg(unsigned reg);

#endif
