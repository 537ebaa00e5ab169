// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_uboot.c -- simboard: the U-Boot stage: banner, autoboot countdown, prompt, commands */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETH_DEV		"ethernet@fe300000"
#define UBOOT_VERSION	"U-Boot 2023.01-sim (Dec 03 2026 - 10:00:00 +0000)"

static const char *const default_env[][2] = {
	{ "arch", "arm" },
	{ "baudrate", "115200" },
	{ "board", "sim" },
	{ "bootcmd", "dhcp; tftp ${kernel_addr_r} Image; tftp ${ramdisk_addr_r} rootfs.cpio.gz; "
		     "setenv initrd_size ${filesize}; tftp ${fdt_addr_r} sim.dtb; "
		     "booti ${kernel_addr_r} ${ramdisk_addr_r}:${initrd_size} ${fdt_addr_r}" },
	{ "bootdelay", "2" },
	{ "cpu", "armv8" },
	{ "ethaddr", "52:54:00:12:34:56" },
	{ "fdt_addr_r", "0x40000000" },
	{ "fdtcontroladdr", "0x7ef0f000" },
	{ "kernel_addr_r", "0x40400000" },
	{ "loadaddr", "0x40400000" },
	{ "ramdisk_addr_r", "0x44000000" },
	{ "stderr", "serial" },
	{ "stdin", "serial" },
	{ "stdout", "serial" },
	{ "vendor", "sim" },
};

static const struct {
	unsigned int ms;	/* delay before this part */
	const char *text;
} banner[] = {
	{ 0, "\r\n\r\n" UBOOT_VERSION "\r\n\r\n" },
	{ 10, "Model: Simulated ARM64 Board\r\n" },
	{ 10, "DRAM:  1 GiB\r\n" },
	{ 40, "Core:  42 devices, 11 uclasses, devicetree: board\r\n" },
	{ 20, "MMC:   mmc@fe320000: 1\r\n" },
	{ 30, "Loading Environment from MMC... OK\r\n" },
	{ 10, "In:    serial\r\nOut:   serial\r\nErr:   serial\r\n" },
	{ 20, "Net:   eth0: " ETH_DEV "\r\n" },
};

static void uboot_prompt(struct board *b);
static int uboot_exec(struct board *b, int argc, char **argv);

/* A U-Boot variable, or def when it is not set. */
const char *sim_uenv(struct board *b, const char *name, const char *def)
{
	const char *v = sim_env_get(&b->uenv, name);

	return v ? v : def;
}

static void load_defaults(struct board *b)
{
	size_t i;

	sim_env_clear(&b->uenv);
	for (i = 0; i < sizeof(default_env) / sizeof(default_env[0]); i++)
		sim_env_set(&b->uenv, default_env[i][0], default_env[i][1]);
}

static void banner_step(struct board *b);
static void countdown_start(struct board *b);

/* Power-on or reset: the banner, then the countdown. */
void sim_uboot_start(struct board *b)
{
	b->stage = STAGE_UBOOT;
	b->in = IN_HOLD;	/* keys pressed now stop the countdown */
	b->exec = uboot_exec;
	b->prompt_fn = uboot_prompt;
	b->status = 0;
	if (b->env_saved)
		sim_env_copy(&b->uenv, &b->saved_env);
	else
		load_defaults(b);
	b->pc = 0;
	banner_step(b);
}

static void banner_step(struct board *b)
{
	sim_puts(b, banner[b->pc++].text);
	if (b->pc < (int)(sizeof(banner) / sizeof(banner[0]))) {
		sim_after_tx(b, sim_slow(b, banner[b->pc].ms), banner_step);
	} else if (b->cur == MODE_HANG_UBOOT) {
		b->in = IN_DISCARD;	/* stuck for good */
		b->talen = 0;
	} else {
		sim_after_tx(b, sim_slow(b, 20), countdown_start);
	}
}

static void autoboot(struct board *b)
{
	const char *cmd = sim_env_get(&b->uenv, "bootcmd");

	if (cmd && *cmd)
		sim_cmd_line(b, cmd);
	else
		uboot_prompt(b);
}

static void countdown_key(struct board *b, unsigned char c)
{
	sim_cancel(b);
	b->last_cr = c == '\r';
	sim_puts(b, "\b\b\b 0 \r\n");
	uboot_prompt(b);
}

static void countdown_tick(struct board *b)
{
	if (b->countdown > 0)
		b->countdown--;
	sim_printf(b, "\b\b\b%2d ", b->countdown);
	if (b->countdown > 0) {
		sim_after(b, sim_slow(b, 1000), countdown_tick);
		return;
	}
	sim_puts(b, "\r\n");
	b->in = IN_BUSY;
	autoboot(b);
}

/* "Hit any key to stop autoboot": bootdelay -1 stops, -2 boots without asking. */
static void countdown_start(struct board *b)
{
	const char *d = sim_env_get(&b->uenv, "bootdelay");
	int delay = d ? atoi(d) : 2;

	if (b->cur == MODE_NO_AUTOBOOT)
		delay = -2;
	if (delay == -2) {
		b->in = IN_BUSY;
		autoboot(b);
		return;
	}
	if (delay < 0) {
		uboot_prompt(b);
		return;
	}
	b->countdown = delay;
	sim_printf(b, "Hit any key to stop autoboot: %2d ", delay);
	b->in = IN_COUNTDOWN;
	b->key_fn = countdown_key;
	/* a key held since the banner is seen at once (the caller pumps it) */
	if (delay)
		sim_after(b, sim_slow(b, 1000), countdown_tick);
	else
		sim_after(b, 10, countdown_tick);
}

static void uboot_line(struct board *b, char *line)
{
	sim_cmd_line(b, line);
}

static void uboot_prompt(struct board *b)
{
	sim_puts(b, "=> ");
	sim_readline(b, false, uboot_line);
}


static int do_setenv(struct board *b, int argc, char **argv)
{
	char value[SIM_LINE_MAX];
	size_t len = 0;
	int i;

	if (argc > 1 && !strcmp(argv[1], "-f"))
		argc--, argv++;
	if (argc < 2)
		return sim_ub_usage(b, "setenv");
	value[0] = '\0';
	for (i = 2; i < argc; i++)
		len += snprintf(value + len, sizeof(value) - len, "%s%s", i > 2 ? " " : "",
				argv[i]);
	if (len >= sizeof(value))
		len = sizeof(value) - 1;
	sim_env_set(&b->uenv, argv[1], argc > 2 ? value : NULL);
	return 0;
}

static int do_printenv(struct board *b, int argc, char **argv)
{
	const char *v;
	size_t size = 0;
	int i, ret = 0;

	if (argc > 1) {
		for (i = 1; i < argc; i++) {
			v = sim_env_get(&b->uenv, argv[i]);
			if (v) {
				sim_printf(b, "%s=%s\r\n", argv[i], v);
			} else {
				sim_printf(b, "## Error: \"%s\" not defined\r\n", argv[i]);
				ret = 1;
			}
		}
		return ret;
	}
	for (i = 0; i < b->uenv.n; i++) {
		sim_printf(b, "%s=%s\r\n", b->uenv.v[i].name, b->uenv.v[i].value);
		size += strlen(b->uenv.v[i].name) + strlen(b->uenv.v[i].value) + 2;
	}
	sim_printf(b, "\r\nEnvironment size: %zu/65532 bytes\r\n", size);
	return 0;
}

static int do_saveenv(struct board *b, int argc, char **argv)
{
	sim_puts(b, "Saving Environment to MMC... Writing to MMC(1)... OK\r\n");
	b->env_saved = !sim_env_copy(&b->saved_env, &b->uenv);
	return 0;
}

static int do_env(struct board *b, int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "print"))
		return do_printenv(b, argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "set"))
		return do_setenv(b, argc - 1, argv + 1);
	if (argc >= 3 && !strcmp(argv[1], "delete"))
		return sim_env_set(&b->uenv, argv[2], NULL) ? 1 : 0;
	if (argc >= 3 && !strcmp(argv[1], "default") && !strcmp(argv[2], "-a")) {
		load_defaults(b);
		sim_puts(b, "## Resetting to default environment\r\n");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "save"))
		return do_saveenv(b, argc, argv);
	return sim_ub_usage(b, "env");
}

static int do_echo(struct board *b, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		sim_printf(b, "%s%s", i > 1 ? " " : "", argv[i]);
	sim_puts(b, "\r\n");
	return 0;
}

/* The commands of a variable run next, in the running command list. */
static int run_var(struct board *b, const char *name)
{
	const char *v = sim_env_get(&b->uenv, name);

	if (!v) {
		sim_printf(b, "## Error: \"%s\" not defined\r\n", name);
		return 1;
	}
	return sim_cmd_splice(b, v) < 0;
}

static int do_run(struct board *b, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return sim_ub_usage(b, "run");
	for (i = argc - 1; i >= 1; i--)	/* spliced last first, so they run in order */
		if (run_var(b, argv[i]))
			return 1;
	return 0;
}

static int do_boot(struct board *b, int argc, char **argv)
{
	return run_var(b, "bootcmd");
}

static int do_version(struct board *b, int argc, char **argv)
{
	sim_puts(b, UBOOT_VERSION "\r\n\r\naarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0\r\n"
		    "GNU ld (GNU Binutils for Debian) 2.40\r\n");
	return 0;
}

static int do_bdinfo(struct board *b, int argc, char **argv)
{
	sim_printf(b, "boot_params = 0x0000000000000000\r\n"
		   "DRAM bank   = 0x0000000000000000\r\n"
		   "-> start    = 0x0000000040000000\r\n"
		   "-> size     = 0x0000000040000000\r\n"
		   "flashstart  = 0x0000000000000000\r\n"
		   "flashsize   = 0x0000000000000000\r\n"
		   "baudrate    = %s bps\r\n"
		   "relocaddr   = 0x000000007ff2e000\r\n"
		   "reloc off   = 0x000000003ff2e000\r\n"
		   "Build       = 64-bit\r\n"
		   "current eth = " ETH_DEV "\r\n"
		   "ethaddr     = %s\r\n"
		   "IP addr     = %s\r\n"
		   "fdt_blob    = 0x000000007ef0f000\r\n"
		   "new_fdt     = 0x000000007ef0f000\r\n"
		   "fdt_size    = 0x0000000000005000\r\n",
		   sim_uenv(b, "baudrate", "115200"), sim_uenv(b, "ethaddr", "(not set)"),
		   sim_uenv(b, "ipaddr", "<NULL>"));
	return 0;
}

static int do_mmc(struct board *b, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (!strcmp(sub, "list")) {
		sim_puts(b, "mmc@fe320000: 1 (SD)\r\n");
	} else if (!strcmp(sub, "info")) {
		sim_puts(b, "Device: mmc@fe320000\r\nManufacturer ID: 3\r\nOEM: 5344\r\n"
			    "Name: SC16G \r\nBus Speed: 50000000\r\n"
			    "Mode: SD High Speed (50MHz)\r\nRd Block Len: 512\r\n"
			    "SD version 3.0\r\nHigh Capacity: Yes\r\nCapacity: 14.8 GiB\r\n"
			    "Bus Width: 4-bit\r\nErase Group Size: 512 Bytes\r\n");
	} else if (!strcmp(sub, "dev")) {
		sim_puts(b, "switch to partitions #0, OK\r\nmmc1 is current device\r\n");
	} else if (!strcmp(sub, "part")) {
		sim_puts(b, "\r\nPartition Map for MMC device 1  --   Partition Type: DOS\r\n\r\n"
			    "Part\tStart Sector\tNum Sectors\tUUID\t\tType\r\n"
			    "  1\t8192      \t524288    \t5e3da3da-01\t0c Boot\r\n"
			    "  2\t532480    \t30583808  \t5e3da3da-02\t83\r\n");
	} else if (strcmp(sub, "rescan")) {
		return sim_ub_usage(b, "mmc");
	}
	return 0;
}

static int do_usb(struct board *b, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (!strcmp(sub, "start") || !strcmp(sub, "reset")) {
		sim_printf(b, "%s USB...\r\nBus usb@fe980000: USB DWC2\r\n"
			   "scanning bus usb@fe980000 for devices... 2 USB Device(s) found\r\n"
			   "       scanning usb for storage devices... "
			   "0 Storage Device(s) found\r\n",
			   sub[0] == 's' ? "starting" : "resetting");
	} else if (!strcmp(sub, "tree")) {
		sim_puts(b, "USB device tree:\r\n  1  Hub (480 Mb/s, 0mA)\r\n"
			    "  |  U-Boot Root Hub \r\n  |\r\n"
			    "  +-2  Vendor specific (480 Mb/s, 2mA)\r\n"
			    "       SIM USB Ethernet\r\n");
	} else if (!strcmp(sub, "stop")) {
		sim_puts(b, "stopping USB..\r\n");
	} else {
		return sim_ub_usage(b, "usb");
	}
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
	const char *help, *usage;
} cmds[] = {
	{ "bdinfo", do_bdinfo, "print Board Info structure", "" },
	{ "boot", do_boot, "boot default, i.e., run 'bootcmd'", "" },
	{ "bootd", do_boot, "boot default, i.e., run 'bootcmd'", "" },
	{ "booti", sim_ub_booti, "boot Linux kernel 'Image' format from memory",
	  "[addr [initrd[:size]] [fdt]]\r\n"
	  "    - boot Linux flat or compressed 'Image' stored at 'addr'" },
	{ "bootm", sim_ub_booti, "boot application image from memory", "[addr [arg ...]]" },
	{ "bootz", sim_ub_booti, "boot Linux zImage image from memory",
	  "[addr [initrd[:size]] [fdt]]" },
	{ "dhcp", sim_ub_dhcp, "boot image via network using DHCP/TFTP protocol",
	  "[loadAddress] [[hostIPaddr:]bootfilename]" },
	{ "echo", do_echo, "echo args to console", "[args..]" },
	{ "env", do_env, "environment handling commands",
	  "default -a - [forcibly] reset default environment\r\n"
	  "env delete name - delete environment variable\r\n"
	  "env print [name ...] - print environment\r\n"
	  "env save - save environment\r\n"
	  "env set name [value] - set environment variable to value" },
	{ "ext4load", sim_ub_load, "load binary file from a Ext4 filesystem",
	  "<interface> [<dev[:part]>] <addr> <filename>" },
	{ "false", do_true, "do nothing, unsuccessfully", "" },
	{ "fatload", sim_ub_load, "load binary file from a dos filesystem",
	  "<interface> [<dev[:part]>] <addr> <filename>" },
	{ "help", do_help, "print command description/usage",
	  "\r\n    - print brief description of all commands\r\n"
	  "help command ...\r\n    - print detailed usage of 'command'" },
	{ "load", sim_ub_load, "load binary file from a filesystem",
	  "<interface> [<dev[:part]> [<addr> [<filename>]]]" },
	{ "mmc", do_mmc, "MMC sub system",
	  "info - display info of the current MMC device\r\n"
	  "mmc rescan\r\nmmc part - lists available partition on current mmc device\r\n"
	  "mmc dev [dev] [part] - show or set current mmc device [partition]\r\n"
	  "mmc list - lists available devices" },
	{ "ping", sim_ub_ping, "send ICMP ECHO_REQUEST to network host", "pingAddress" },
	{ "printenv", do_printenv, "print environment variables",
	  "\r\n    - print [all] values of all environment variables\r\n"
	  "printenv name ...\r\n    - print value of environment variable 'name'" },
	{ "reset", sim_ub_reset, "Perform RESET of the CPU", "" },
	{ "run", do_run, "run commands in an environment variable",
	  "var [...]\r\n    - run the commands in the environment variable(s) 'var'" },
	{ "saveenv", do_saveenv, "save environment variables to persistent storage", "" },
	{ "setenv", do_setenv, "set environment variables",
	  "[-f] name value ...\r\n"
	  "    - [forcibly] set environment variable 'name' to 'value ...'\r\n"
	  "setenv [-f] name\r\n    - [forcibly] delete environment variable 'name'" },
	{ "sleep", sim_ub_sleep, "delay execution for some time",
	  "N\r\n    - delay execution for N seconds (N is _decimal_ and can be\r\n"
	  "      fractional)" },
	{ "tftp", sim_ub_tftp, "download image via network using TFTP protocol",
	  "[loadAddress] [[hostIPaddr:]bootfilename]" },
	{ "tftpboot", sim_ub_tftp, "download image via network using TFTP protocol",
	  "[loadAddress] [[hostIPaddr:]bootfilename]" },
	{ "true", do_true, "do nothing, successfully", "" },
	{ "usb", do_usb, "USB sub-system",
	  "start - start (scan) USB controller\r\nusb reset - reset (rescan) USB controller\r\n"
	  "usb stop - stop USB\r\nusb tree - show USB device tree" },
	{ "version", do_version, "print monitor, compiler and linker version", "" },
};

#define NCMDS ((int)(sizeof(cmds) / sizeof(cmds[0])))

static int find_cmd(const char *name)
{
	int i;

	for (i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return i;
	return -1;
}

/* Print the usage of a command; returns the status of a usage error. */
int sim_ub_usage(struct board *b, const char *name)
{
	int i = find_cmd(name);

	if (i >= 0)
		sim_printf(b, "%s - %s\r\n\r\nUsage:\r\n%s %s\r\n", cmds[i].name, cmds[i].help,
			   cmds[i].name, cmds[i].usage);
	return 1;
}

static int do_help(struct board *b, int argc, char **argv)
{
	int i, ret = 0;

	if (argc == 1) {
		for (i = 0; i < NCMDS; i++)
			sim_printf(b, "%-10s- %s\r\n", cmds[i].name, cmds[i].help);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (find_cmd(argv[i]) < 0) {
			sim_printf(b, "Unknown command '%s' - try 'help' without arguments "
				   "for list of all known commands\r\n\r\n", argv[i]);
			ret = 1;
		} else {
			sim_ub_usage(b, argv[i]);
		}
	}
	return ret;
}

static int uboot_exec(struct board *b, int argc, char **argv)
{
	int i = find_cmd(argv[0]);

	if (i < 0) {
		sim_printf(b, "Unknown command '%s' - try 'help'\r\n", argv[0]);
		return 1;
	}
	return cmds[i].fn(b, argc, argv);
}
