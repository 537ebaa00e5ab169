// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_grub.c -- GRUB 2, on BIOS (grub) and EFI (grub-efi): 'c' at the
 * menu ("... or `c' for a command-line"), the prompt "grub> ", commands such
 * as `linux (tftp,{SERVER_IP})/{KERNEL} ...`, `initrd ...`, `boot`.  Nothing
 * marks the kernel start but the kernel's own banner.  On EFI, GRUB echoes
 * each typed character after a cursor move (the engine's echo allows that)
 * and prints "error: no suitable video mode found." at `boot`, which is
 * harmless: the patterns below are specific for that reason.  grub-efi was
 * tried on real firmware (OVMF + Debian's grub-efi-amd64-bin, doc/qemu.md).
 */
#include "run/actions/bootloader.h"

#define GRUB_ERRORS \
	"error: couldn't send network packet", \
	"error: destination unreachable", \
	"error: couldn't autoconfigure", \
	"error: timeout reading", \
	"error: timeout: could not resolve hardware address", \
	"error: file [`'][^']*' not found", \
	"error: File not found", \
	"error: no such device", \
	"error: disk [`'][^']*' not found", \
	"error: unknown filesystem"

#define GRUB_JOB_ERRORS \
	"error: can't find command [`'][^']*'", \
	"error: you need to load the kernel first", \
	"error: invalid magic number", \
	"error: missing [^\r\n]* symbol", \
	"error: unknown command [`'][^']*'"

static const char *const errors[] = { GRUB_ERRORS, NULL };
static const char *const efi_errors[] = {
	"Synchronous Exception at", "Undefined OpCode Exception PC at", GRUB_ERRORS, NULL
};
static const char *const job_errors[] = { GRUB_JOB_ERRORS, NULL };

#define GRUB_DIALECT(method, errs) { \
	.name = method, \
	.interrupt_what = "menu", \
	.interrupt_prompt = "for a command-line", \
	.interrupt_char = "c", \
	.interrupt_newline = false, \
	.needs_interrupt = true, \
	.bootloader_prompt = "grub> ", \
	.final_message = NULL, \
	.error_messages = errs, \
	.job_error_messages = job_errors, \
}

const struct bootloader_dialect dialect_grub = GRUB_DIALECT("grub", errors);
const struct bootloader_dialect dialect_grub_efi = GRUB_DIALECT("grub-efi", efi_errors);
