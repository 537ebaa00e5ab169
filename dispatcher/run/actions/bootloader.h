/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bootloader.h -- one engine for every bootloader, and the dialects it speaks
 *
 * U-Boot, barebox, GRUB, iPXE, depthcharge and firmware menus are driven the
 * same way (action_boot_bootloader.c): power-cycle the board, wait for the
 * interrupt prompt and send the keys that stop the autoboot, wait for the
 * prompt, type each command of the command set (waiting for its echo, then
 * for the prompt again), watch for the bootloader's error messages all along,
 * then wait for the final message and the kernel start.  A firmware menu
 * (uefi-menu) selects entries by their text instead of typing commands.
 *
 * A dialect (dialect_*.c, one small file per bootloader) holds the defaults:
 * its prompts, the keys that interrupt it, the messages that mean a failure
 * and whose fault it is.  A device type overrides any of them in its group
 * of the same name (struct bootloader_params), and the method `bootloader`
 * (LAVA's: stop at the prompt, run `commands`, no kernel) uses the dialect
 * its job names.  Which error is whose:
 *   error_messages      the lab failed (TFTP, DHCP, the network, a reset):
 *                       ERROR_INFRASTRUCTURE;
 *   job_error_messages  the job's commands or images are wrong (an unknown
 *                       command, a bad image magic): ERROR_JOB.
 */
#ifndef LABD_BOOTLOADER_H
#define LABD_BOOTLOADER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct run;
struct kv;
struct strbuf;
struct bootloader_params;

struct bootloader_dialect {
	const char *name;		/* "u-boot": the method, the type's group, messages */
	const char *interrupt_what;	/* "autoboot prompt": names the interrupt wait */
	const char *interrupt_prompt;	/* regex */
	const char *interrupt_char;	/* bytes */
	bool interrupt_newline;
	bool needs_interrupt;
	const char *bootloader_prompt;	/* regex */
	const char *final_message;	/* regex, or NULL: the kernel follows the last command */
	const char *const *error_messages;	/* NULL-terminated regexes: infrastructure */
	const char *const *job_error_messages;	/* NULL-terminated regexes: job errors */
	bool menu;			/* commands are menu entries to select */
	const char *menu_item;		/* regex with (?<item>...): the highlighted entry */
	const char *menu_down;		/* key to the next entry */
	const char *menu_select;	/* key choosing the highlighted entry */
	/**
	 * optional: set the dialect's own substitution variables ({BOOTX} ...)
	 * before the commands are substituted.  Returns 0, -ENOMEM, or another
	 * negative errno after failing the run with run_fail().
	 */
	int (*prepare)(struct run *r);
};

/* dialect_*.c */
extern const struct bootloader_dialect dialect_uboot;
extern const struct bootloader_dialect dialect_barebox;
extern const struct bootloader_dialect dialect_grub;
extern const struct bootloader_dialect dialect_grub_efi;
extern const struct bootloader_dialect dialect_ipxe;
extern const struct bootloader_dialect dialect_depthcharge;
extern const struct bootloader_dialect dialect_uefi_menu;

/** bootloader_dialect() - the dialect of enum bootloader @b (config.h), NULL if invalid. */
const struct bootloader_dialect *bootloader_dialect(int b);

/**
 * struct bootloader_conf - what a boot goes by: the device type's group over
 * the dialect's defaults, then the job's context (bootloader_prompt,
 * interrupt_prompt, interrupt_char: only where the device type allows those
 * context keys).  Every pointer is borrowed from the dialect, the type or
 * the job, which outlive the boot.
 */
struct bootloader_conf {
	const struct bootloader_dialect *dialect;
	const char *interrupt_prompt;
	const char *interrupt_char;
	bool interrupt_newline;
	bool needs_interrupt;
	uint64_t interrupt_delay;	/* usec from the interrupt prompt to its keys */
	const char *bootloader_prompt;
	uint64_t char_delay;
	const char *final_message;	/* NULL: none */
	char *const *error_messages;
	char *const *job_error_messages;
	const struct kv *command_sets;
	const char *default_commands;
	const char *menu_item;
	const char *menu_down;
	const char *menu_select;
};

/** bootloader_conf_resolve() - fill @ret for @d, @p (the type's group) and the job's @context. */
void bootloader_conf_resolve(const struct bootloader_dialect *d, const struct bootloader_params *p,
			     const json_t *context, struct bootloader_conf *ret);

/**
 * bootloader_echo_regex() - append to @re a regex matching the echo of the
 * end of @cmd (its last 16 bytes): each byte literally, with control bytes
 * and terminal escape sequences, whole or broken, allowed between them (GRUB
 * on EFI moves the cursor before each character, consoles wrap long lines,
 * an emulator under load drops output bytes).  Returns 0 or -ENOMEM.
 */
int bootloader_echo_regex(const char *cmd, struct strbuf *re);

#endif
