/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bootjob.h -- the job of `labctl boot BOARD --kernel URL ...`, written for the board's type
 *
 * A holder gives files (kernel, ramdisk, dtb), kernel arguments and a login;
 * the board's device type decides the rest, as a lab admin configured it:
 * the boot method (the first of its boot_methods), where files go (tftp for
 * U-Boot, tmpfs for QEMU, as its deploy_methods allow), the U-Boot command
 * set (its default_commands), the login prompt and the shell prompts.  The
 * result is an ordinary job document (JSON), checked and run as any job:
 * deploy, then boot to a shell (sched_boot_session()).
 */
#ifndef LABD_BOOTJOB_H
#define LABD_BOOTJOB_H

struct device;

#define BOOTJOB_ERR_MAX 256
#define BOOTJOB_DEFAULT_LOGIN "root"
#define BOOTJOB_TIMEOUT_MINUTES 30

struct bootjob_params {
	const char *kernel;	/* URLs, each optional */
	const char *ramdisk;
	const char *dtb;
	const char *kernel_type;	/* "image", "zimage", "uimage" or NULL */
	const char *append;	/* extra kernel arguments, or NULL */
	const char *login;	/* user name at the login prompt; NULL: BOOTJOB_DEFAULT_LOGIN */
	const char *password;	/* or NULL */
	const char *holder;	/* named in the job's name */
};

/**
 * bootjob_build() - the job text for @dev
 * @ret: a JSON job document, caller frees
 *
 * Returns 0, -EINVAL with the reason in @err (the type cannot take files,
 * has no boot method labd can drive), or -ENOMEM.
 */
int bootjob_build(const struct device *dev, const struct bootjob_params *p, char **ret,
		  char err[BOOTJOB_ERR_MAX]);

#endif
