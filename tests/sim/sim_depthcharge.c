// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_depthcharge.c -- simboard: depthcharge, the Chromebook firmware, in its
 * netboot build with the serial console (--firmware depthcharge)
 *
 * What the board prints and accepts follows depthcharge's sources
 * (src/netboot/netboot.c, src/debug/cli/console_main.c, command.c, net.c,
 * Kconfig): "Starting netboot on <board>...", then at once the dev console
 * prompt "dpch: " (no countdown to interrupt); `tftpboot <server|dhcp>
 * <bootfile> <argsfile> [<ramdisk>]` does DHCP, fetches the image and the
 * file holding the kernel command line, prints "The command line is: ..."
 * with " tftpserverip=<server>" appended, and boots; a failed download prints
 * "Tftp failed." and halts (no prompt comes back).  `exit` leaves the console
 * for the netboot configured in flash.  Unknown commands get "Unknown command
 * 'x' - try 'help'".  With --tftp-root the files are looked up (and the
 * command line read) there; without, every name exists.
 */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DC_BOARD	"Simulated Chromebook"
#define DC_MAC		"52:54:00:12:34:56"
#define DC_IP		"10.0.2.15"
#define DC_SERVER	"10.0.2.2"
#define DC_DEF_CMDLINE	"console=ttyS0,115200 cros_netboot"

static void dc_prompt(struct board *b);
static int dc_exec(struct board *b, int argc, char **argv);

static void banner_done(struct board *b)
{
	if (b->cur == MODE_HANG_UBOOT) {
		b->in = IN_DISCARD;
		return;
	}
	dc_prompt(b);
}

void sim_depthcharge_start(struct board *b)
{
	b->stage = STAGE_UBOOT;
	b->in = IN_HOLD;
	b->exec = dc_exec;
	b->prompt_fn = dc_prompt;
	b->status = 0;
	sim_env_clear(&b->uenv);
	sim_puts(b, "\r\n\r\nStarting netboot on " DC_BOARD "...\r\n");
	sim_after_tx(b, sim_slow(b, 60), banner_done);
}

static void dc_line(struct board *b, char *line)
{
	sim_cmd_line(b, line);
}

static void dc_prompt(struct board *b)
{
	sim_puts(b, "\rdpch: ");
	sim_readline(b, false, dc_line);
}

static void kernel_go(struct board *b)
{
	sim_kernel_boot(b, sim_env_get(&b->uenv, "cmdline"), b->job_i);
}

/* The last step of tftpboot: the command line, then the kernel. */
static void netboot_boot(struct board *b)
{
	const char *cmdline = sim_env_get(&b->uenv, "cmdline");

	sim_printf(b, "The command line is: %s\r\n", cmdline ? cmdline : "");
	sim_puts(b, "Starting kernel ...\r\n\r\n");
	b->stage = STAGE_KERNEL;
	b->in = IN_DISCARD;
	sim_cmd_clear(b);
	sim_after_tx(b, sim_slow(b, 80), kernel_go);
}

/* A failed download: depthcharge halts, silent for good. */
static void halt(struct board *b, const char *what)
{
	sim_printf(b, "%s\r\n", what);
	b->in = IN_DISCARD;
	b->talen = 0;
	sim_cmd_clear(b);
}

/* Fetch @file over TFTP: "Tftp failed." (halting) when it is not there. */
static bool fetch(struct board *b, const char *file, const char *fail)
{
	uint64_t size;
	bool image;

	if (b->cur == MODE_UBOOT_ERROR || sim_tftp_size(file, &size, &image) < 0) {
		halt(b, fail);
		return false;
	}
	sim_printf(b, "Sending tftp read request... done.\r\nWaiting for the transfer... \r\n"
		   "The bootfile was %llu bytes long.\r\n", (unsigned long long)size);
	return true;
}

static void netboot_download(struct board *b)
{
	const char *bootfile = sim_env_get(&b->uenv, "bootfile");
	const char *argsfile = sim_env_get(&b->uenv, "argsfile");
	const char *ramdisk = sim_env_get(&b->uenv, "ramdisk");
	char cmdline[SIM_LINE_MAX];

	if (!fetch(b, bootfile, "Tftp failed."))
		return;
	if (ramdisk && !fetch(b, ramdisk, "TFTP failed for ramdisk."))
		return;
	b->job_i = ramdisk != NULL;
	if (argsfile && sim_tftp_text(argsfile, cmdline, sizeof(cmdline)) == 0)
		sim_printf(b, "Command line loaded dynamically from TFTP file: %s\r\n", argsfile);
	else
		snprintf(cmdline, sizeof(cmdline), "%s", DC_DEF_CMDLINE);
	snprintf(cmdline + strlen(cmdline), sizeof(cmdline) - strlen(cmdline),
		 " tftpserverip=%s", sim_env_get(&b->uenv, "server"));
	sim_env_set(&b->uenv, "cmdline", cmdline);
	sim_after_tx(b, sim_slow(b, 100), netboot_boot);
}

static void netboot_dhcp(struct board *b)
{
	sim_puts(b, "MAC: " DC_MAC "\r\nSending DHCP discover... done.\r\n"
		    "Waiting for reply... done.\r\nSending DHCP request... done.\r\n"
		    "Waiting for reply... done.\r\n");
	sim_printf(b, "My ip is " DC_IP "\r\nThe DHCP server ip is " DC_SERVER "\r\n"
		   "TFTP server IP %s: %s\r\nBootfile %s: %s\r\n",
		   sim_env_get(&b->uenv, "server_by"), sim_env_get(&b->uenv, "server"),
		   sim_env_get(&b->uenv, "bootfile_by"), sim_env_get(&b->uenv, "bootfile"));
	sim_after(b, sim_slow(b, 150), netboot_download);
}

/* Start a netboot; "dhcp" for the server or the file takes it from the DHCP answer. */
static int netboot(struct board *b, const char *server, const char *bootfile,
		   const char *argsfile, const char *ramdisk)
{
	bool dhcp_server = !strcmp(server, "dhcp"), dhcp_file = !strcmp(bootfile, "dhcp");

	if (!dhcp_server && strspn(server, "0123456789.") != strlen(server)) {
		sim_printf(b, "Invalid IPv4 address: %s\r\n", server);
		return 1;
	}
	sim_env_set(&b->uenv, "server", dhcp_server ? DC_SERVER : server);
	sim_env_set(&b->uenv, "server_by", dhcp_server ? "supplied by DHCP server"
						       : "predefined by user");
	sim_env_set(&b->uenv, "bootfile", dhcp_file ? "vmlinuz" : bootfile);
	sim_env_set(&b->uenv, "bootfile_by", dhcp_file ? "supplied by DHCP server"
						       : "predefined by user");
	sim_env_set(&b->uenv, "argsfile", argsfile);
	sim_env_set(&b->uenv, "ramdisk", ramdisk);
	b->in = IN_DISCARD;	/* netboot() only comes back by halting */
	sim_after(b, sim_slow(b, 200), netboot_dhcp);
	return CMD_GONE;
}

/* tftpboot <server|dhcp> <bootfile|dhcp> <argsfile> [<ramdisk>] */
static int do_tftpboot(struct board *b, int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		sim_puts(b, "tftpboot - boot image via network using TFTP protocol\r\n\r\n"
			    "Usage:\r\ntftpboot [host IP addr] [boot file] [args file] [ramdisk]\r\n");
		return 1;
	}
	return netboot(b, argv[1], argv[2], argv[3], argc == 5 ? argv[4] : NULL);
}

/* exit: leave the console for the netboot set in flash (DHCP server, DHCP's file) */
static int do_exit(struct board *b, int argc, char **argv)
{
	return netboot(b, "dhcp", "dhcp", NULL, NULL);
}

static int do_help(struct board *b, int argc, char **argv)
{
	sim_puts(b, "exit    - exit command console to coninue normal boot\r\n"
		    "help    - print command description/usage\r\n"
		    "tftpboot- boot image via network using TFTP protocol\r\n");
	return 0;
}

static int dc_exec(struct board *b, int argc, char **argv)
{
	if (!strcmp(argv[0], "tftpboot"))
		return do_tftpboot(b, argc, argv);
	if (!strcmp(argv[0], "exit"))
		return do_exit(b, argc, argv);
	if (!strcmp(argv[0], "help") || !strcmp(argv[0], "?"))
		return do_help(b, argc, argv);
	sim_printf(b, "Unknown command '%s' - try 'help'\r\n", argv[0]);
	return 1;
}
