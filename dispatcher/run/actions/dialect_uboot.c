// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_uboot.c -- U-Boot: a key at "Hit any key to stop autoboot", the
 * prompt "=> ", "Starting kernel" after bootm/bootz/booti, LAVA's list of
 * U-Boot failures, and {BOOTX}: the boot command for the deployed kernel with
 * the device type's load addresses.  Tried on real firmware (Debian's
 * u-boot-qemu on arm64 and armhf, tests t2100 and t2200).
 */
#include <stdio.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/kv.h"
#include "core/strbuf.h"
#include "run/action.h"
#include "run/actions/bootloader.h"

/* The lab failed: resets, network and TFTP errors. */
static const char *const errors[] = {
	"Resetting CPU",
	"Must RESET board to recover",
	"TIMEOUT",
	"Retry count exceeded",
	"Retry time exceeded; starting again",
	"The remote end did not respond in time.",
	"File not found",
	"TFTP error",
	"ERROR: Failed to allocate",
	NULL
};

/* The job's commands or images are wrong. */
static const char *const job_errors[] = {
	"Unknown command '[^']*' - try 'help'",
	"Bad Linux ARM64 Image magic!",
	"Bad Linux RISCV Image magic!",
	"Wrong Ramdisk Image Format",
	"Ramdisk image is corrupt or invalid",
	"Wrong Image Format for boot",
	"ERROR: Did not find a cmdline Flattened Device Tree",
	"ERROR: RD image overlaps OS image",
	"kernel_comp_addr_r or kernel_comp_size is not provided",
	"zimage: Bad magic",
	NULL
};

/* The boot command for the deployed kernel type: image -> booti, zimage -> bootz,
 * uimage -> bootm; without a type, the first the device type has addresses for. */
static const char *boot_command(struct run *r)
{
	static const char *const cmds[] = { "booti", "bootz", "bootm" };
	const struct kv *bootx = &board_device(run_board(r))->type->bootx;
	const char *type = kv_get(run_vars(r), "KERNEL_TYPE");
	char key[32];
	size_t i;

	if (type && !strcmp(type, "zimage"))
		return "bootz";
	if (type && !strcmp(type, "uimage"))
		return "bootm";
	if (type)
		return "booti";
	for (i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "%s.kernel", cmds[i]);
		if (kv_get(bootx, key))
			return cmds[i];
	}
	return "booti";
}

/* {KERNEL_ADDR}, {RAMDISK_ADDR}, {DTB_ADDR} from the type's addresses for the boot
 * command, and {BOOTX}: "<cmd> <kernel> <ramdisk>|- [<dtb>]" (LAVA's convention). */
static int set_bootx_vars(struct run *r)
{
	static const char *const parts[][2] = {
		{ "kernel", "KERNEL_ADDR" }, { "ramdisk", "RAMDISK_ADDR" }, { "dtb", "DTB_ADDR" },
	};
	const struct kv *bootx = &board_device(run_board(r))->type->bootx;
	struct kv *vars = run_vars(r);
	const char *cmd = boot_command(r), *fallback;
	struct strbuf bx = STRBUF_INIT;
	char key[32];
	size_t i;
	int err = 0;

	for (i = 0; i < 3 && !err; i++) {
		const char *addr;

		snprintf(key, sizeof(key), "%s.%s", cmd, parts[i][0]);
		addr = kv_get(bootx, key);
		if (addr && !kv_get(vars, parts[i][1]))
			err = kv_set(vars, parts[i][1], addr);
	}
	strbuf_addf(&bx, "%s {KERNEL_ADDR}", cmd);
	if (!kv_get(vars, "RAMDISK"))
		strbuf_addstr(&bx, " -");
	else if (kv_get(vars, "RAMDISK_UBOOT_HEADER"))
		strbuf_addstr(&bx, " {RAMDISK_ADDR}");
	else
		strbuf_addstr(&bx, " {RAMDISK_ADDR}:${initrd_size}");
	fallback = device_param(board_device(run_board(r)), "DTB_FALLBACK");
	if (kv_get(vars, "DTB"))
		strbuf_addstr(&bx, " {DTB_ADDR}");
	else if (fallback)
		strbuf_addf(&bx, " %s", fallback);
	if (!err)
		err = kv_set(vars, "BOOTX", bx.buf);
	strbuf_release(&bx);
	return err;
}

const struct bootloader_dialect dialect_uboot = {
	.name = "u-boot",
	.interrupt_what = "autoboot prompt",
	.interrupt_prompt = "Hit any key to stop autoboot",
	.interrupt_char = " ",
	.interrupt_newline = true,
	.needs_interrupt = true,
	.bootloader_prompt = "=> ",
	.final_message = "Starting kernel",
	.error_messages = errors,
	.job_error_messages = job_errors,
	.prepare = set_bootx_vars,
};
