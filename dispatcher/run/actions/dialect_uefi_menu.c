// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_uefi_menu.c -- the menus of EDK II firmware (OVMF's front page and
 * Boot Manager), selected by the text of their entries: Esc enters the front
 * page, the highlighted entry is the one drawn white on black, cursor-down
 * moves the highlight, Enter chooses.  OVMF prints no text before its boot
 * timeout: the cue is its console setting the screen mode (ESC [=3h), which
 * comes before the firmware reads keys: a type sets interrupt_delay (and F2,
 * read at once where Esc waits 2 s for more, devices/qemu.conf).  The
 * command set is the list of entries to choose, page by page ("Boot Manager",
 * then "UEFI PXEv4"); what the last one boots must show the kernel start.
 * Tried on real firmware (Debian's OVMF, doc/qemu.md).
 */
#include "run/actions/bootloader.h"

static const char *const errors[] = {
	"BdsDxe: failed to load [^\r\n]*",
	"PXE-E[0-9A-F]{2}: [^\r\n]*",
	"Synchronous Exception at",
	"Undefined OpCode Exception PC at",
	NULL
};

static const char *const job_errors[] = { NULL };

const struct bootloader_dialect dialect_uefi_menu = {
	.name = "uefi-menu",
	.interrupt_what = "firmware start",
	.interrupt_prompt = "\\x1b\\[=3h|Press ESCAPE for boot options",
	.interrupt_char = "\x1b",
	.interrupt_newline = false,
	.needs_interrupt = true,
	.bootloader_prompt = NULL,
	.final_message = NULL,
	.error_messages = errors,
	.job_error_messages = job_errors,
	.menu = true,
	.menu_item = "\\x1b\\[0m\\x1b\\[37m\\x1b\\[40m\\x1b\\[[0-9]+;[0-9]+H"
		     "(?<item>[^\\x1b\\s][^\\x1b\\r\\n]*?) *(?=\\x1b|\\r|\\n)",
	.menu_down = "\x1b[B",
	.menu_select = "\r",
};
