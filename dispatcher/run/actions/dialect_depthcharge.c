// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_depthcharge.c -- depthcharge, the Chromebook firmware, in its
 * netboot build with the serial console: "Starting netboot on <board>...",
 * then the prompt "dpch: " without any interrupt, and
 * `tftpboot <server> <image> <args file> [<ramdisk>]`.  Only tried on the
 * simulated board (tests/sim/sim_depthcharge.c): Debian ships no depthcharge.
 */
#include "run/actions/bootloader.h"

static const char *const errors[] = {
	"Tftp failed\\.",
	"TFTP failed for ramdisk\\.",
	"Dhcp release failed\\.",
	"No network device\\.",
	"Out of space adding TFTP server IP to the command line\\.",
	"Error code \\d+( \\([\\w\\s]+\\))?",
	NULL
};

static const char *const job_errors[] = {
	"Unknown command '[^']*'",
	"Invalid IPv4 address: [^\r\n]*",
	"No space left for ramdisk",
	NULL
};

const struct bootloader_dialect dialect_depthcharge = {
	.name = "depthcharge",
	.interrupt_what = "netboot banner",
	.interrupt_prompt = "Starting netboot on",
	.interrupt_char = "",
	.interrupt_newline = false,
	.needs_interrupt = false,
	.bootloader_prompt = "dpch: ",
	.final_message = "Starting kernel",
	.error_messages = errors,
	.job_error_messages = job_errors,
};
