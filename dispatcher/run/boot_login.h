/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boot_login.h -- the part every boot method shares: from the kernel starting
 * to a shell prompt
 *
 * Embedded in the state of a boot action.  The steps:
 *  1. optionally wait for the kernel start message (U-Boot boots: after
 *     "Starting kernel"); from then on kernel messages are watched (a panic
 *     fails the boot);
 *  2. with auto_login: wait for the login prompt, send the user name, wait
 *     for the password prompt and send the password when configured;
 *  3. wait for a shell prompt (the job's prompts, else the device type's);
 *  4. send each login command and wait for the prompt after it;
 *  5. run_done().
 * A boot whose job says expect_shell: false (installers) is done once the
 * kernel started.
 * A "Login incorrect" answer fails the job; a bootloader banner after the
 * kernel started means the board reset unexpectedly.  Timeouts fail the job
 * (error type job: the kernel or root filesystem did not come up).
 */
#ifndef LABD_BOOT_LOGIN_H
#define LABD_BOOT_LOGIN_H

#include <stdbool.h>
#include <stddef.h>

struct run;
struct run_event;
struct job_boot;

enum boot_login_step {
	BOOT_LOGIN_POWER,	/* boot_login_power_cycle(): waiting for the power event */
	BOOT_LOGIN_KERNEL,
	BOOT_LOGIN_USER,
	BOOT_LOGIN_PASSWORD,
	BOOT_LOGIN_SHELL,
	BOOT_LOGIN_COMMANDS,
	BOOT_LOGIN_DONE,
};

struct boot_login {
	enum boot_login_step step;
	const struct job_boot *boot;
	bool kernel_started;
	size_t command;		/* next login command */
};

/**
 * boot_login_stage() - the "auto-login-action" stage started (run_stage()):
 * the boot waits for the kernel and the login.  boot_login_start() says it;
 * a bootloader boot says it when its commands are done and it waits for the
 * kernel.
 */
void boot_login_stage(struct run *r);

/** boot_login_start() - begin; @wait_kernel: require the kernel start message first. */
void boot_login_start(struct run *r, struct boot_login *bl, const struct job_boot *boot,
		      bool wait_kernel);

/**
 * boot_login_after_kernel() - begin once the caller saw the kernel start
 * (boot_login_kernel_message() matched): the phase is recorded, kernel
 * messages are watched, then login and shell as usual.  With the job's
 * expect_shell false, the action is done at once.
 */
void boot_login_after_kernel(struct run *r, struct boot_login *bl, const struct job_boot *boot);

/** boot_login_kernel_message() - the regex of the kernel start: the job's, else the type's. */
const char *boot_login_kernel_message(struct run *r, const struct job_boot *boot);

/**
 * boot_login_power_cycle() - power-cycle the board first, then
 * boot_login_start() (without waiting for the kernel) once the power
 * operation is done; feed the events to boot_login_event() meanwhile.
 * Kernel messages are watched from the power-cycle on (a board without a
 * bootloader prints at once, while the power command may still run).
 * @what names the power-cycle in a failure reason ("start QEMU").
 */
void boot_login_power_cycle(struct run *r, struct boot_login *bl, const struct job_boot *boot,
			    const char *what);

/** boot_login_event() - feed an event of the boot action while logging in. */
void boot_login_event(struct run *r, struct boot_login *bl, const struct run_event *ev);

#endif
