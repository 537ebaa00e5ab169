// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_ipxe.c -- iPXE: Ctrl-B at "Press Ctrl-B for the iPXE command line",
 * the prompt "iPXE> ", `dhcp`, `kernel tftp://{SERVER_IP}/{KERNEL} ...`,
 * `initrd ...`, `boot`.  Every iPXE error ends with its
 * "(http://ipxe.org/<code>)" link, which an 80-column console may wrap, so
 * only its start is matched; the errors the job caused are listed apart and
 * match first on the line.  Tried on real firmware (Debian's ipxe-qemu ROM,
 * doc/qemu.md).
 */
#include "run/actions/bootloader.h"

static const char *const errors[] = {
	"No configuration methods succeeded",
	"Connection timed out",
	"\\(https?://ipxe\\.org/",
	NULL
};

static const char *const job_errors[] = {
	"[^ \r\n]+: command not found",
	"No image selected",
	"Exec format error",
	"Invalid argument \\(https?://ipxe",
	NULL
};

const struct bootloader_dialect dialect_ipxe = {
	.name = "ipxe",
	.interrupt_what = "'Press Ctrl-B' prompt",
	.interrupt_prompt = "Press Ctrl-B for the iPXE command line",
	.interrupt_char = "\x02",
	.interrupt_newline = false,
	.needs_interrupt = true,
	.bootloader_prompt = "iPXE> ",
	.final_message = NULL,
	.error_messages = errors,
	.job_error_messages = job_errors,
};
