// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_qemu.c -- the qemu boot: (re)start the board's QEMU with the
 * deployed kernel, ramdisk and command line, then login and shell
 *
 * Direct kernel boot, as LAVA's qemu method does: the device type's `qemu`
 * group holds the command line, the board's `qemu` power driver starts it
 * (drivers/power/qemu.c), and the job only chooses artifacts (deploy to
 * tmpfs, labels the type allows) and, within the type's bounds, what
 * job/job_qemu.c allows: the kernel command line (context
 * extra_kernel_args, image_arg and extra_options -append), memory, CPUs,
 * and its own images as files and drives.  This action composes {APPEND}
 * (the type's `append`, then the job's) and the job's own arguments
 * (QEMU_CMDLINE_JOB_ARGS, added after the type's: files the type's args do
 * not name already, -m, -smp, -drive), power-cycles the board, which starts
 * a fresh QEMU, and hands over to boot_login.
 *
 * A drive whose file is shared with the download cache (a hard link) gets
 * snapshot=on: the guest's writes go to a temporary overlay, the cache stays
 * as downloaded.  A qcow2 drive naming a backing or data file (a file of the
 * lab host) is refused.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board/board.h"
#include "config/config.h"
#include "config/qemu_cmdline.h"
#include "core/kv.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "run/action.h"
#include "run/boot_login.h"
#include "run/run.h"

#define QEMU_LABEL_MAX 64
#define QCOW2_HEADER 80		/* bytes of a qcow2 header read: v3 incompatible features */

static const struct device_type *type_of(struct run *r)
{
	return board_device(run_board(r))->type;
}

/* The tmpfs deploy whose images this boot starts: the last one before it. */
static const struct job_deploy *boot_deploy(struct run *r)
{
	const struct job *job = run_job(r);
	size_t i = run_action_index(r);

	while (i-- > 0)
		if (job->actions[i].kind == JOB_ACTION_DEPLOY &&
		    job->actions[i].deploy.to == DEPLOY_TO_TMPFS)
			return &job->actions[i].deploy;
	return NULL;
}

static void add_text(struct strbuf *sb, const char *s)
{
	if (s && *s)
		strbuf_addf(sb, "%s%s", sb->len ? " " : "", s);
}

/*
 * {APPEND}: the device type's kernel command line, its {VARIABLES} the
 * job's (an NFS root's {NFSROOTFS}, {NFS_SERVER_IP} ...), then what the job
 * adds.
 */
static int set_append(struct run *r, const struct job_deploy *d)
{
	const struct qemu_params *q = &type_of(r)->qemu;
	const char *extra = run_action(r)->boot.qemu_append, *missing = NULL;
	struct strbuf append = STRBUF_INIT, job = STRBUF_INIT;
	char *base = NULL;
	int err;

	add_text(&job, d ? d->qemu.append : NULL);
	add_text(&job, run_job(r)->qemu_context.append);
	add_text(&job, extra);
	if (job.len && !q->append_allowed) {
		run_fail(r, ERROR_JOB, "device type '%s' does not let jobs change the kernel command line",
			 type_of(r)->name);
		strbuf_release(&job);
		return -EPERM;
	}
	err = run_substitute(r, q->append_default ? q->append_default : "", &base, &missing);
	if (err == -ENOENT)
		run_fail(r, ERROR_JOB, "device type '%s' boots with {%s} on the kernel command line: "
			 "deploy it (an NFS root: 'nfsrootfs', doc/nfs.md)", type_of(r)->name, missing);
	if (err < 0) {
		strbuf_release(&job);
		return err == -ENOENT ? -EINVAL : err;
	}
	add_text(&append, base);
	add_text(&append, job.buf);
	free(base);
	err = kv_set(run_vars(r), "APPEND", append.buf ? append.buf : "");
	if (!err)
		run_log(r, "info", "kernel command line: %s", append.buf ? append.buf : "");
	strbuf_release(&append);
	strbuf_release(&job);
	return err;
}

/* Whether an element of the type's args names {@var}. */
static bool type_names(struct run *r, const char *var)
{
	char want[QEMU_LABEL_MAX + 2];

	snprintf(want, sizeof(want), "{%s}", var);
	STRV_FOREACH(a, type_of(r)->qemu.args)
		if (strstr(*a, want))
			return true;
	return false;
}

/* @label's variable name ("KERNEL") into @var. */
static void var_of(const char *label, char *var)
{
	size_t i;

	for (i = 0; label[i] && i < QEMU_LABEL_MAX - 1; i++)
		var[i] = (char)toupper((unsigned char)label[i]);
	var[i] = '\0';
}

/* An option and its value. */
static int push2(char ***argv, const char *opt, const char *value)
{
	return strv_push(argv, opt) < 0 || strv_push(argv, value) < 0 ? -ENOMEM : 0;
}

/* "-kernel PATH" unless the type's args take that image already. */
static int add_file(struct run *r, char ***argv, const char *opt, const char *label)
{
	char var[QEMU_LABEL_MAX];
	const char *path;

	if (!label)
		return 0;
	var_of(label, var);
	path = kv_get(run_vars(r), var);
	if (!path || type_names(r, var) ||
	    (!strcmp(opt, "-initrd") && (type_names(r, "RAMDISK") || type_names(r, "INITRD"))))
		return 0;
	return push2(argv, opt, path);
}

/* Whether @path is a qcow2 image naming another file of the host (backing or data file). */
static bool qcow2_names_a_file(const char *path)
{
	unsigned char h[QCOW2_HEADER] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, h, sizeof(h), 0) : -1;
	uint64_t backing = 0;

	if (fd >= 0)
		close(fd);
	if (n < 20 || memcmp(h, "QFI\xfb", 4))
		return false;
	for (int i = 8; i < 16; i++)
		backing = backing << 8 | h[i];
	/* version 3: incompatible feature bit 2, an external data file */
	return backing || (h[7] >= 3 && n >= 80 && (h[79] & 4));
}

/* A drive of the job: "-drive file=PATH,format=...", PATH's commas doubled. */
static int add_drive(struct run *r, char ***argv, const struct job_qemu_drive *d)
{
	char var[QEMU_LABEL_MAX];
	const char *path, *fmt = d->format ? d->format : "raw";
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int err = 0;

	var_of(d->label, var);
	path = kv_get(run_vars(r), var);
	if (path && type_names(r, var))
		return 0;	/* the type's args attach it already */
	if (!path) {
		run_fail(r, ERROR_JOB, "the QEMU drive '{%s}' names no deployed image", d->label);
		return -ENOENT;
	}
	if (!strcmp(fmt, "qcow2") && qcow2_names_a_file(path)) {
		run_fail(r, ERROR_JOB, "qcow2 image '%s' names a backing or data file: a job's drive holds its data itself",
			 d->label);
		return -EPERM;
	}
	strbuf_addstr(&sb, "file=");
	for (const char *p = path; *p; p++)
		strbuf_addstr(&sb, *p == ',' ? ",," : (char[]){ *p, 0 });
	strbuf_addf(&sb, ",format=%s", fmt);
	if (d->interface)
		strbuf_addf(&sb, ",if=%s", d->interface);
	if (d->media)
		strbuf_addf(&sb, ",media=%s", d->media);
	if (d->index >= 0)
		strbuf_addf(&sb, ",index=%d", d->index);
	if (d->readonly)
		strbuf_addstr(&sb, ",readonly=on");
	else if (stat(path, &st) == 0 && st.st_nlink > 1)
		strbuf_addstr(&sb, ",snapshot=on");	/* the cache's file */
	if (strv_push(argv, "-drive") < 0 || strv_push(argv, sb.buf) < 0)
		err = -ENOMEM;
	strbuf_release(&sb);
	return err;
}

/* The job's own arguments: files the type's args do not name, -append, -m, -smp, drives. */
static int job_argv(struct run *r, const struct job_deploy *d, char ***argv)
{
	const struct job_qemu_args *q = d ? &d->qemu : NULL, *ctx = &run_job(r)->qemu_context;
	uint64_t memory = q && q->memory_mib ? q->memory_mib : ctx->memory_mib;
	unsigned cpus = q && q->cpus ? q->cpus : ctx->cpus;
	char mem[32], smp[32];
	size_t n;
	int err = 0;

	snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)memory);
	snprintf(smp, sizeof(smp), "%u", cpus);
	if (q && (add_file(r, argv, "-kernel", q->kernel) < 0 ||
		  add_file(r, argv, "-initrd", q->initrd) < 0 ||
		  add_file(r, argv, "-dtb", q->dtb) < 0))
		return -ENOMEM;
	if (strv_contains(*argv, "-kernel") && !type_names(r, "APPEND") &&
	    *kv_get(run_vars(r), "APPEND"))
		err = push2(argv, "-append", kv_get(run_vars(r), "APPEND"));
	if (!err && memory)
		err = push2(argv, "-m", mem);
	if (!err && cpus)
		err = push2(argv, "-smp", smp);
	for (n = 0; q && !err && n < q->n_drives; n++)
		err = add_drive(r, argv, &q->drives[n]);
	return err;
}

/* QEMU_CMDLINE_JOB_ARGS, always set: no value of the job's context stands in for it. */
static int set_job_args(struct run *r, const struct job_deploy *d)
{
	char **argv = NULL, *joined, *shown;
	int err = job_argv(r, d, &argv);

	if (err) {
		strv_free(argv);
		return err;
	}
	STRV_FOREACH(a, argv) {
		if (strchr(*a, '\n')) {
			run_fail(r, ERROR_JOB, "a QEMU argument of the job holds a line break: '%s'", *a);
			strv_free(argv);
			return -EINVAL;
		}
	}
	joined = argv ? strv_join(argv, "\n") : strdup("");
	shown = argv ? strv_join(argv, " ") : NULL;
	err = joined ? kv_set(run_vars(r), QEMU_CMDLINE_JOB_ARGS, joined) : -ENOMEM;
	if (!err && shown)
		run_log(r, "info", "QEMU arguments of the job: %s", shown);
	free(joined);
	free(shown);
	strv_free(argv);
	return err;
}

/* Whether {@name} (length @n) is an artifact's variable that the job did not deploy. */
static bool artifact_missing(struct run *r, const char *name, size_t n, char *label)
{
	const struct qemu_params *q = &type_of(r)->qemu;
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

	STRV_FOREACH(a, type_of(r)->qemu.args) {
		for (const char *p = strchr(*a, '{'); p; p = strchr(p + 1, '{')) {
			size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

			if (p[n + 1] != '}' || !artifact_missing(r, p + 1, n, label))
				continue;
			run_fail(r, ERROR_JOB, "the QEMU command line of device type '%s' needs {%.*s}: deploy a '%s' to tmpfs",
				 type_of(r)->name, (int)n, p + 1, label);
			return -ENOENT;
		}
	}
	return 0;
}

static int qemu_start(struct run *r, void *state)
{
	const struct job_boot *boot = &run_action(r)->boot;
	const struct job_deploy *d = boot_deploy(r);
	int err;

	if (!type_of(r)->has_qemu) {
		run_fail(r, ERROR_INFRASTRUCTURE, "device type '%s' has no 'qemu' group",
			 type_of(r)->name);
		return 0;
	}
	if (check_artifacts(r) < 0)
		return 0;
	if (boot->qemu_image)
		run_log(r, "info", "QEMU of container image '%s': the device type's %s runs",
			boot->qemu_image, type_of(r)->qemu.binary);
	err = set_append(r, d);
	if (!err)
		err = set_job_args(r, d);
	if (err < 0)
		return err == -ENOMEM ? err : 0;
	boot_login_power_cycle(r, state, boot, "start QEMU");
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
