// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dialect_depthcharge.c -- depthcharge, the Chromebook firmware, in its
 * netboot build with the serial console: "Starting netboot on <board>...",
 * then the prompt "dpch: " without any interrupt, and
 * `tftpboot <server> <image> <args file> [<ramdisk>]`.  The args file holds
 * the kernel command line: the device's parameter KERNEL_CMDLINE (or
 * KERNEL_CMDLINE_NFS for the job's `commands: nfs`, any set alike),
 * substituted, is written to the job's TFTP directory as "cmdline", and
 * {CMDLINE} names it for the commands.  Only tried on the simulated board
 * (tests/sim/sim_depthcharge.c): Debian ships no depthcharge.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "board/board.h"
#include "config/config.h"
#include "core/kv.h"
#include "job/job.h"
#include "run/action.h"
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

/*
 * The command line's template: the parameter KERNEL_CMDLINE_<SET> for the
 * command set the job names (KERNEL_CMDLINE_NFS for `commands: nfs`), else
 * KERNEL_CMDLINE.
 */
static const char *cmdline_template(struct run *r)
{
	const struct device *dev = board_device(run_board(r));
	const char *set = run_action(r)->boot.commands_name, *tmpl = NULL;
	char key[96];
	size_t i, n;

	if (set) {
		n = (size_t)snprintf(key, sizeof(key), "KERNEL_CMDLINE_%s", set);
		for (i = 0; i < n && i < sizeof(key); i++)
			key[i] = key[i] == '-' ? '_' : (char)toupper((unsigned char)key[i]);
		tmpl = device_param(dev, key);
	}
	return tmpl ? tmpl : device_param(dev, "KERNEL_CMDLINE");
}

/* Write the args file with the kernel command line; {CMDLINE} is its TFTP path. */
static int write_cmdline(struct run *r)
{
	const char *tmpl = cmdline_template(r);
	const char *missing = NULL;
	char path[4096], tftp_path[256], *line = NULL;
	FILE *f;
	int err;

	if (!tmpl)
		return 0;
	err = run_substitute(r, tmpl, &line, &missing);
	if (err == -ENOENT) {
		run_fail(r, ERROR_JOB, "KERNEL_CMDLINE needs {%s}, which this job does not define",
			 missing);
		return -EINVAL;
	}
	if (err < 0)
		return err;
	snprintf(path, sizeof(path), "%s/cmdline", run_tftp_dir(r));
	snprintf(tftp_path, sizeof(tftp_path), "%s/cmdline", run_tftp_prefix(r));
	mkdir(run_tftp_dir(r), 0755);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot write '%s': %s", path, strerror(errno));
		free(line);
		return -EINVAL;
	}
	free(line);
	run_log(r, "info", "depthcharge: kernel command line in %s", tftp_path);
	return kv_set(run_vars(r), "CMDLINE", tftp_path);
}

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
	.prepare = write_cmdline,
};
