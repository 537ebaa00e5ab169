// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_barebox.c -- barebox (Pengutronix): "Hit m for menu or any other
 * key to stop autoboot", the prompt "barebox@<model>:<dir> ", TFTP files
 * under /mnt/tftp, `bootm [-v] [-r initrd] [-o dtb] kernel`.  Only tried on
 * the simulated board (tests/sim/sim_barebox.c): Debian ships no barebox.
 */
#include "run/actions/bootloader.h"

static const char *const errors[] = {
	"### ERROR ### Please RESET the board ###",
	"could not open [^\r\n]*",
	"ERROR: [^\r\n]*",
	"[^\r\n]*: Out of memory",
	"TFTP error[^\r\n]*",
	NULL
};

static const char *const job_errors[] = {
	"Unknown command '[^']*'",
	"[^ \r\n]+: command not found",
	"invalid magic 0x[0-9a-f]+",
	"no image handler found for [^\r\n]*",
	NULL
};

const struct bootloader_dialect dialect_barebox = {
	.name = "barebox",
	.interrupt_what = "autoboot prompt",
	.interrupt_prompt = "Hit m for menu or any other key to stop autoboot",
	.interrupt_char = "\n",
	.interrupt_newline = false,
	.needs_interrupt = true,
	.bootloader_prompt = "barebox@[^:\r\n]*:[^ \r\n]* ",
	.final_message = "Starting kernel",
	.error_messages = errors,
	.job_error_messages = job_errors,
};
