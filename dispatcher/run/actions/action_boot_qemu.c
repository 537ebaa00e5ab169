// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_qemu.c -- the qemu boot: (re)start the board's QEMU with the
 * deployed kernel, ramdisk and command line, then login and shell
 *
 * Direct kernel boot, as LAVA's qemu method does: the device type's `qemu`
 * group holds the command line, the board's `qemu` power driver starts it
 * (drivers/power/qemu.c), and the job only chooses artifacts (deploy to
 * tmpfs, labels the type allows) and, where the type allows it, extra kernel
 * arguments (context: extra_kernel_args).  This action composes {APPEND}
 * (the type's `append`, then the job's extra arguments), power-cycles the
 * board, which starts a fresh QEMU, and hands over to boot_login.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/kv.h"
#include "core/strv.h"
#include "job/job.h"
#include "run/action.h"
#include "run/boot_login.h"

#define QEMU_LABEL_MAX 64

/*
 * {APPEND}: the device type's kernel command line, its {VARIABLES} the
 * job's (an NFS root's {NFSROOTFS}, {NFS_SERVER_IP} ...), then what the job
 * adds.
 */
static int set_append(struct run *r)
{
	const struct device_type *t = board_device(run_board(r))->type;
	const char *extra = run_action(r)->boot.qemu_append, *missing = NULL;
	char *base = NULL, *append;
	int err;

	if (extra && !t->qemu.append_allowed) {
		run_fail(r, ERROR_JOB, "device type '%s' does not let jobs change the kernel command line",
			 t->name);
		return -EPERM;
	}
	err = run_substitute(r, t->qemu.append_default ? t->qemu.append_default : "", &base,
			     &missing);
	if (err == -ENOENT) {
		run_fail(r, ERROR_JOB, "device type '%s' boots with {%s} on the kernel command line: "
			 "deploy it (an NFS root: 'nfsrootfs', doc/nfs.md)", t->name, missing);
		return -EINVAL;
	}
	if (err < 0)
		return err;
	if (asprintf(&append, "%s%s%s", base, *base && extra ? " " : "", extra ? extra : "") < 0)
		append = NULL;
	free(base);
	if (!append)
		return -ENOMEM;
	err = kv_set(run_vars(r), "APPEND", append);
	if (!err)
		run_log(r, "info", "kernel command line: %s", append);
	free(append);
	return err;
}

/* Whether {@name} (length @n) is an artifact's variable that the job did not deploy. */
static bool artifact_missing(struct run *r, const char *name, size_t n, char *label)
{
	const struct qemu_params *q = &board_device(run_board(r))->type->qemu;
	char var[QEMU_LABEL_MAX];
	size_t i;

	if (n >= sizeof(var))
		return false;
	for (i = 0; i < n; i++) {
		var[i] = name[i];
		label[i] = (char)tolower((unsigned char)name[i]);
	}
	var[n] = label[n] = '\0';
	if (!strcmp(var, "RAMDISK") || !strcmp(var, "INITRD")) {
		if (!strv_contains(q->allowed_images, "ramdisk") &&
		    !strv_contains(q->allowed_images, "initrd"))
			return false;
		strcpy(label, "ramdisk");
	} else if (!strv_contains(q->allowed_images, label)) {
		return false;
	}
	return !kv_get(run_vars(r), var);
}

/*
 * The device type's QEMU arguments that name an artifact the job did not
 * deploy: the job's error, said before QEMU is started (a power-on that
 * fails would take the board out of service).
 */
static int check_artifacts(struct run *r)
{
	char label[QEMU_LABEL_MAX];

	STRV_FOREACH(a, board_device(run_board(r))->type->qemu.args) {
		for (const char *p = strchr(*a, '{'); p; p = strchr(p + 1, '{')) {
			size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

			if (p[n + 1] != '}' || !artifact_missing(r, p + 1, n, label))
				continue;
			run_fail(r, ERROR_JOB, "the QEMU command line of device type '%s' needs {%.*s}: deploy a '%s' to tmpfs",
				 board_device(run_board(r))->type->name, (int)n, p + 1, label);
			return -ENOENT;
		}
	}
	return 0;
}

static int qemu_start(struct run *r, void *state)
{
	int err;

	if (!board_device(run_board(r))->type->has_qemu) {
		run_fail(r, ERROR_INFRASTRUCTURE, "device type '%s' has no 'qemu' group",
			 board_device(run_board(r))->type->name);
		return 0;
	}
	if (check_artifacts(r) < 0)
		return 0;
	err = set_append(r);
	if (err < 0)
		return err == -EPERM || err == -EINVAL ? 0 : err;
	boot_login_power_cycle(r, state, &run_action(r)->boot, "start QEMU");
	return 0;
}

static void qemu_event(struct run *r, void *state, const struct run_event *ev)
{
	boot_login_event(r, state, ev);
}

const struct action_ops action_boot_qemu_ops = {
	.name = "boot-qemu",
	.state_size = sizeof(struct boot_login),
	.start = qemu_start,
	.event = qemu_event,
};
