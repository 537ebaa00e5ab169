/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qemu_cmdline.h -- QEMU's argv for a board: the device type's command line,
 * the job's artifacts substituted in, nothing else
 *
 * The argv is, in this order:
 *
 *	<binary> -display none -monitor none
 *	         -chardev socket,id=labd-serial,fd=<serial_fd>[,logfile=<serial_log>]
 *	         -serial chardev:labd-serial
 *	         <args of the device type's qemu group, each substituted>
 *	         <the job's own arguments, QEMU_CMDLINE_JOB_ARGS>
 *
 * so the console is always the first serial port (ttyS0, ttyAMA0) and labd's
 * (the qemu group's `console` must be "socket", its default; "pty" is refused).
 * Each element of `args` becomes exactly one argv element: no shell, no
 * splitting, whatever a value holds.  {NAME} is replaced by, in turn:
 *
 *  1. a job variable, but only those a job may choose: the artifacts the
 *     device type allows (`allowed_images`: kernel -> {KERNEL}, initrd or
 *     ramdisk -> {INITRD} and {RAMDISK}, dtb -> {DTB} ...) and {APPEND}, the
 *     kernel command line labd composed (the type's `append`, plus the job's
 *     extra_kernel_args where `append_allowed`); without a job, {APPEND} is
 *     the type's `append`;
 *  2. labd's own: {TFTP_ROOT} (the lab's tftp_root, for `-netdev
 *     user,tftp={TFTP_ROOT}`), {BOARD_DIR} (<state_dir>/boards/<name>),
 *     {DEVICE} (the board's name);
 *  3. the device's and its type's `parameters` ({MEMORY}, {CPU} ...).
 *
 * The job's own arguments are the QEMU_CMDLINE_JOB_ARGS job variable, one
 * argument per line, which labd's qemu boot composes from what the job gave
 * within the allowed set (job/job_qemu.c): its files (-kernel, -initrd,
 * -dtb, -drive), memory and CPUs.  No value of the job itself is ever taken
 * as an argument here.
 *
 * A name defined nowhere is an error naming the argument.  A job value placed
 * inside a larger element (`file={ROOTFS},if=virtio`) must not hold a comma,
 * which would add QEMU sub-options.  Only {NAME} with NAME in [A-Z0-9_] is a
 * variable: other braces pass through.
 */
#ifndef LABD_QEMU_CMDLINE_H
#define LABD_QEMU_CMDLINE_H

#include <stddef.h>

struct device;
struct kv;
struct lab_config;

#define QEMU_CMDLINE_CHARDEV "labd-serial"
#define QEMU_CMDLINE_JOB_ARGS "LABD_QEMU_JOB_ARGS"	/* job variable: the job's own
							 * arguments, one per line */

struct qemu_cmdline_in {
	const struct lab_config *config;
	const struct device *dev;	/* its type's qemu group is used */
	const struct kv *job_vars;	/* power_vars(): may be empty */
	int serial_fd;			/* the fd number QEMU finds its serial line at */
	const char *serial_log;		/* chardev logfile, or NULL */
};

/**
 * qemu_cmdline_build() - the argv (strv_free() it) for @in
 * @err: the reason on -EINVAL, one line
 *
 * Returns 0, -EINVAL (no qemu group or binary, console not "socket", unknown
 * variable, comma in a job value) or -ENOMEM.
 */
int qemu_cmdline_build(const struct qemu_cmdline_in *in, char ***ret, char *err, size_t errlen);

#endif
