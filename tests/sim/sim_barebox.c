// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_barebox.c -- simboard: barebox instead of U-Boot (--firmware barebox)
 *
 * What the board prints and accepts follows barebox's sources and manual
 * (common/startup.c, common/console_countdown.c, common/command.c,
 * arch/arm/lib32/bootm.c): the banner, "Hit m for menu or any other key to
 * stop autoboot:" counting down, "type exit to get to the menu" and the
 * prompt "barebox@<model>:/ " once a key stopped it; TFTP files under
 * /mnt/tftp; `bootm [-v] [-r initrd] [-o dtb] kernel` loading them ("could
 * not open <file>: No such file or directory" for a missing one) and, with
 * -v, "Starting kernel at ..."; the kernel command line from the
 * global.linux.bootargs.* variables; "Unknown command 'x' - try 'help'".
 */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAREBOX_VERSION	"barebox 2024.09.0-sim #1 Tue Dec 3 10:00:00 UTC 2026"
#define BAREBOX_MODEL	"Simulated ARM Board"
#define TFTP_MOUNT	"/mnt/tftp/"

static const struct {
	unsigned int ms;
	const char *text;
} banner[] = {
	{ 0, "\r\n\r\n" BAREBOX_VERSION "\r\n\r\n\r\n" },
	{ 10, "Board: " BAREBOX_MODEL "\r\n" },
	{ 20, "eth0: got preset MAC address: 52:54:00:12:34:56\r\n" },
	{ 30, "mmc0: detected SD card version 2.0\r\nmmc0: registered mmc0\r\n" },
	{ 10, "malloc space: 0x4fefb480 -> 0x8fdf68ff (size 1023 MiB)\r\n" },
	{ 20, "running /env/bin/init...\r\n\r\n" },
};

static void barebox_prompt(struct board *b);
static int barebox_exec(struct board *b, int argc, char **argv);

static void banner_step(struct board *b);
static void countdown_start(struct board *b);

void sim_barebox_start(struct board *b)
{
	b->stage = STAGE_UBOOT;
	b->in = IN_HOLD;
	b->exec = barebox_exec;
	b->prompt_fn = barebox_prompt;
	b->status = 0;
	sim_env_clear(&b->uenv);
	sim_env_set(&b->uenv, "global.linux.bootargs.console", "console=ttyAMA0,115200");
	b->pc = 0;
	banner_step(b);
}

static void banner_step(struct board *b)
{
	sim_puts(b, banner[b->pc++].text);
	if (b->pc < (int)(sizeof(banner) / sizeof(banner[0])))
		sim_after_tx(b, sim_slow(b, banner[b->pc].ms), banner_step);
	else if (b->cur == MODE_HANG_UBOOT)
		b->in = IN_DISCARD;
	else
		sim_after_tx(b, sim_slow(b, 20), countdown_start);
}

/* The kernel command line: every global.linux.bootargs.* value, in name order. */
static void bootargs(struct board *b, char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < b->uenv.n && len < size; i++)
		if (!strncmp(b->uenv.v[i].name, "global.linux.bootargs.", 22))
			len += snprintf(buf + len, size - len, "%s%s", len ? " " : "",
					b->uenv.v[i].value);
}

static void kernel_go(struct board *b)
{
	char cmdline[SIM_LINE_MAX];

	bootargs(b, cmdline, sizeof(cmdline));
	sim_kernel_boot(b, cmdline, b->job_i);
}

/* Hand over to the kernel: barebox's last words, then Linux. */
static int start_kernel(struct board *b, bool verbose, bool initrd, bool dtb)
{
	char cmdline[SIM_LINE_MAX];

	bootargs(b, cmdline, sizeof(cmdline));
	sim_printf(b, "commandline: %s\r\n", cmdline);
	if (verbose)
		sim_printf(b, "\r\nStarting kernel at 0x40008000%s%s...\r\n\r\n",
			   initrd ? ", initrd at 0x48000000" : "",
			   dtb ? ", oftree at 0x47ff0000" : "");
	b->job_i = initrd;
	b->stage = STAGE_KERNEL;
	b->in = IN_DISCARD;
	sim_cmd_clear(b);
	sim_after_tx(b, sim_slow(b, 80), kernel_go);
	return CMD_GONE;
}

static void autoboot(struct board *b)
{
	sim_puts(b, "booting 'net'\r\n");
	sim_cmd_line(b, "bootm -v " TFTP_MOUNT "zImage");
}

static void countdown_key(struct board *b, unsigned char c)
{
	sim_cancel(b);
	b->last_cr = c == '\r';
	sim_puts(b, "\r\n\r\ntype exit to get to the menu\r\n");
	barebox_prompt(b);
}

static void countdown_tick(struct board *b)
{
	if (b->countdown > 0)
		b->countdown--;
	sim_printf(b, "\b\b%2d", b->countdown);
	if (b->countdown > 0) {
		sim_after(b, sim_slow(b, 1000), countdown_tick);
		return;
	}
	sim_puts(b, "\r\n");
	b->in = IN_BUSY;
	autoboot(b);
}

static void countdown_start(struct board *b)
{
	if (b->cur == MODE_NO_AUTOBOOT) {
		b->in = IN_BUSY;
		autoboot(b);
		return;
	}
	b->countdown = 3;
	sim_puts(b, "Hit m for menu or any other key to stop autoboot:  3");
	b->in = IN_COUNTDOWN;
	b->key_fn = countdown_key;
	sim_after(b, sim_slow(b, 1000), countdown_tick);
}

static void barebox_line(struct board *b, char *line)
{
	sim_cmd_line(b, line);
}

static void barebox_prompt(struct board *b)
{
	sim_puts(b, "barebox@" BAREBOX_MODEL ":/ ");
	sim_readline(b, false, barebox_line);
}

/* Open a file under /mnt/tftp as bootm does; prints barebox's error and returns -1. */
static int open_file(struct board *b, const char *path, const char *what)
{
	uint64_t size;
	bool image;

	if (strncmp(path, TFTP_MOUNT, strlen(TFTP_MOUNT))) {
		sim_printf(b, "could not open %s: No such file or directory\r\n", path);
		return -1;
	}
	if (b->cur == MODE_UBOOT_ERROR) {
		sim_printf(b, "could not open %s: Connection timed out\r\n", path);
		return -1;
	}
	if (sim_tftp_size(path + strlen(TFTP_MOUNT), &size, &image) < 0) {
		sim_printf(b, "could not open %s: No such file or directory\r\n", path);
		return -1;
	}
	sim_printf(b, "Loading %s '%s'\r\n", what, path);
	return 0;
}

/* bootm [-v] [-r initrd] [-o dtb] kernel */
static int do_bootm(struct board *b, int argc, char **argv)
{
	const char *initrd = NULL, *dtb = NULL, *kernel = NULL;
	bool verbose = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			initrd = argv[++i];
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			dtb = argv[++i];
		else if (argv[i][0] != '-')
			kernel = argv[i];
	}
	if (!kernel) {
		sim_puts(b, "\r\nbootm - boot an application image\r\n\r\n"
			    "Usage: bootm [OPTIONS] [IMAGE]\r\n");
		return 1;
	}
	if (open_file(b, kernel, "ARM Linux zImage") < 0 ||
	    (initrd && open_file(b, initrd, "initrd") < 0) ||
	    (dtb && open_file(b, dtb, "devicetree from") < 0))
		return 1;
	return start_kernel(b, verbose, initrd != NULL, dtb != NULL);
}

/* global [NAME[=VALUE]]: barebox's global variables, kept with a "global." prefix */
static int do_global(struct board *b, int argc, char **argv)
{
	char name[256];
	char *eq;
	int i;

	if (argc == 1) {
		for (i = 0; i < b->uenv.n; i++)
			if (!strncmp(b->uenv.v[i].name, "global.", 7))
				sim_printf(b, "  %s: %s\r\n", b->uenv.v[i].name + 7,
					   b->uenv.v[i].value);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		eq = strchr(argv[i], '=');
		snprintf(name, sizeof(name), "global.%.*s",
			 (int)(eq ? eq - argv[i] : (long)strlen(argv[i])), argv[i]);
		sim_env_set(&b->uenv, name, eq ? eq + 1 : "");
	}
	return 0;
}

static void dhcp_done(struct board *b)
{
	sim_puts(b, "eth0: DHCP client bound to address 10.0.2.15\r\n");
	sim_env_set(&b->uenv, "global.net.server", "10.0.2.2");
	sim_cmd_done(b, 0);
}

static int do_dhcp(struct board *b, int argc, char **argv)
{
	if (b->cur == MODE_UBOOT_ERROR) {
		sim_puts(b, "ERROR: dhcp: Connection timed out\r\n");
		return 1;
	}
	sim_after(b, sim_slow(b, 120), dhcp_done);
	return CMD_ASYNC;
}

static int do_echo(struct board *b, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		sim_printf(b, "%s%s", i > 1 ? " " : "", argv[i]);
	sim_puts(b, "\r\n");
	return 0;
}

static int do_version(struct board *b, int argc, char **argv)
{
	sim_puts(b, "\r\n" BAREBOX_VERSION "\r\n");
	return 0;
}

static int do_true(struct board *b, int argc, char **argv)
{
	return argv[0][0] == 'f';
}

static int do_help(struct board *b, int argc, char **argv);

static const struct {
	const char *name;
	sim_exec_fn fn;
	const char *help;
} cmds[] = {
	{ "bootm", do_bootm, "boot an application image" },
	{ "dhcp", do_dhcp, "DHCP client to obtain IP or boot params" },
	{ "echo", do_echo, "echo args to console" },
	{ "false", do_true, "do nothing, unsuccessfully" },
	{ "global", do_global, "create or set global variables" },
	{ "help", do_help, "print online help" },
	{ "reset", sim_ub_reset, "perform RESET of the CPU" },
	{ "sleep", sim_ub_sleep, "delay execution for n seconds" },
	{ "true", do_true, "do nothing, successfully" },
	{ "version", do_version, "print barebox version" },
};

#define NCMDS ((int)(sizeof(cmds) / sizeof(cmds[0])))

static int do_help(struct board *b, int argc, char **argv)
{
	int i;

	for (i = 0; i < NCMDS; i++)
		sim_printf(b, "%-10s - %s\r\n", cmds[i].name, cmds[i].help);
	return 0;
}

static int barebox_exec(struct board *b, int argc, char **argv)
{
	char *eq = strchr(argv[0], '=');
	int i;

	if (eq && !strncmp(argv[0], "global.", 7)) {	/* hush: global.x=value */
		*eq = '\0';
		sim_env_set(&b->uenv, argv[0], eq + 1);
		return 0;
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, argv[0]))
			return cmds[i].fn(b, argc, argv);
	sim_printf(b, "Unknown command '%s' - try 'help'\r\n", argv[0]);
	return 1;
}
