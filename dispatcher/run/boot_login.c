// SPDX-License-Identifier: GPL-2.0-or-later
/* boot_login.c -- kernel start, login and shell prompt: shared by all boot methods */
#include "run/boot_login.h"

#include <stdio.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/strv.h"
#include "job/job.h"
#include "run/action.h"

enum {
	ID_WANT = 1,		/* what the current step waits for */
	ID_KERNEL_START,	/* the kernel banner, noted on the way */
	ID_BAD_LOGIN,
	ID_RESET,		/* a bootloader banner: the board reset */
};

static const struct device_type *type_of(struct run *r)
{
	return board_device(run_board(r))->type;
}

static char *const *shell_prompts(struct run *r, const struct boot_login *bl)
{
	return strv_length(bl->boot->prompts) ? bl->boot->prompts : type_of(r)->kernel.prompts;
}

const char *boot_login_kernel_message(struct run *r, const struct job_boot *boot)
{
	if (boot->kernel_start_message)
		return boot->kernel_start_message;
	return type_of(r)->kernel.start_message;
}

static void kernel_started(struct run *r, struct boot_login *bl)
{
	if (bl->kernel_started)
		return;
	bl->kernel_started = true;
	run_phase(r, "kernel-start");
	if (!bl->boot->ignore_kernel_messages)
		run_watch_kernel(r, true);
}

/* Set up the next wait: @want, plus what may arrive on the way. */
static void expect(struct run *r, struct boot_login *bl, const char *stage, const char *want,
		   char *const *wants)
{
	run_expect_clear(r);
	if (want)
		run_expect_add(r, want, ID_WANT);
	run_expect_add_strv(r, wants, ID_WANT);
	if (!bl->kernel_started && bl->step != BOOT_LOGIN_KERNEL && bl->step != BOOT_LOGIN_COMMANDS)
		run_expect_add(r, boot_login_kernel_message(r, bl->boot), ID_KERNEL_START);
	if (bl->step == BOOT_LOGIN_SHELL || bl->step == BOOT_LOGIN_PASSWORD)
		run_expect_add(r, "Login incorrect", ID_BAD_LOGIN);
	if (bl->kernel_started)
		run_expect_add(r, "U-Boot SPL 20[0-9][0-9]|U-Boot 20[0-9][0-9]\\.[0-9]", ID_RESET);
	run_expect(r, stage, 0);
}

static void send_line(struct run *r, const char *text)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s\n", text);
	run_send(r, buf, type_of(r)->kernel.char_delay);
}

static void step_to(struct run *r, struct boot_login *bl, enum boot_login_step step)
{
	const struct job_auto_login *al = &bl->boot->auto_login;
	char **cmds = al->login_commands;

	bl->step = step;
	switch (step) {
	case BOOT_LOGIN_POWER:		/* boot_login_power_cycle() goes there itself */
		break;
	case BOOT_LOGIN_KERNEL:
		expect(r, bl, "kernel-start", boot_login_kernel_message(r, bl->boot), NULL);
		break;
	case BOOT_LOGIN_USER:
		expect(r, bl, "auto-login-action", al->login_prompt, NULL);
		break;
	case BOOT_LOGIN_PASSWORD:
		expect(r, bl, "auto-login-action", al->password_prompt, NULL);
		break;
	case BOOT_LOGIN_SHELL:
		if (!strv_length(shell_prompts(r, bl))) {
			step_to(r, bl, BOOT_LOGIN_DONE);
			break;
		}
		expect(r, bl, "expect-shell-connection", NULL, shell_prompts(r, bl));
		break;
	case BOOT_LOGIN_COMMANDS:
		if (bl->command >= strv_length(cmds)) {
			step_to(r, bl, BOOT_LOGIN_DONE);
			break;
		}
		send_line(r, cmds[bl->command++]);
		expect(r, bl, "login-commands", NULL, shell_prompts(r, bl));
		break;
	case BOOT_LOGIN_DONE:
		run_done(r);
		break;
	}
}

static void next_after_kernel(struct run *r, struct boot_login *bl)
{
	if (!bl->boot->expect_shell)
		step_to(r, bl, BOOT_LOGIN_DONE);
	else
		step_to(r, bl, bl->boot->has_auto_login ? BOOT_LOGIN_USER : BOOT_LOGIN_SHELL);
}

void boot_login_stage(struct run *r)
{
	run_stage(r, "auto-login-action", "started");
}

void boot_login_start(struct run *r, struct boot_login *bl, const struct job_boot *boot,
		      bool wait_kernel)
{
	boot_login_stage(r);
	bl->boot = boot;
	bl->kernel_started = false;
	bl->command = 0;
	if (wait_kernel) {
		step_to(r, bl, BOOT_LOGIN_KERNEL);
		return;
	}
	if (!boot->ignore_kernel_messages)
		run_watch_kernel(r, true);
	next_after_kernel(r, bl);
}

void boot_login_after_kernel(struct run *r, struct boot_login *bl, const struct job_boot *boot)
{
	bl->boot = boot;
	bl->kernel_started = false;
	bl->command = 0;
	kernel_started(r, bl);
	next_after_kernel(r, bl);
}

void boot_login_power_cycle(struct run *r, struct boot_login *bl, const struct job_boot *boot,
			    const char *what)
{
	int err;

	bl->boot = boot;
	bl->step = BOOT_LOGIN_POWER;
	run_flush_console(r);
	/* no bootloader to wait for: the kernel may print while the power
	 * command still runs, and its reports (a panic) count from there */
	if (!boot->ignore_kernel_messages)
		run_watch_kernel(r, true);
	err = run_power(r, POWER_CYCLE);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot %s: %s", what, strerror(-err));
}

static void on_want(struct run *r, struct boot_login *bl)
{
	const struct job_auto_login *al = &bl->boot->auto_login;

	switch (bl->step) {
	case BOOT_LOGIN_KERNEL:
		kernel_started(r, bl);
		next_after_kernel(r, bl);
		break;
	case BOOT_LOGIN_USER:
		run_phase(r, "login-prompt");
		send_line(r, al->username);
		step_to(r, bl, al->password_prompt ? BOOT_LOGIN_PASSWORD : BOOT_LOGIN_SHELL);
		break;
	case BOOT_LOGIN_PASSWORD:
		send_line(r, al->password ? al->password : "");
		step_to(r, bl, BOOT_LOGIN_SHELL);
		break;
	case BOOT_LOGIN_SHELL:
		run_phase(r, "shell");
		step_to(r, bl, BOOT_LOGIN_COMMANDS);
		break;
	case BOOT_LOGIN_COMMANDS:
		step_to(r, bl, BOOT_LOGIN_COMMANDS);
		break;
	case BOOT_LOGIN_POWER:		/* no pattern is armed */
	case BOOT_LOGIN_DONE:
		break;
	}
}

static const char *step_waits_for(enum boot_login_step step)
{
	switch (step) {
	case BOOT_LOGIN_KERNEL:
		return "the kernel to start";
	case BOOT_LOGIN_USER:
		return "the login prompt";
	case BOOT_LOGIN_PASSWORD:
		return "the password prompt";
	default:
		return "a shell prompt";
	}
}

void boot_login_event(struct run *r, struct boot_login *bl, const struct run_event *ev)
{
	if (bl->step == BOOT_LOGIN_POWER) {
		if (ev->kind != RUN_EVENT_POWER)
			return;
		run_phase(r, "power-on");
		boot_login_start(r, bl, bl->boot, false);
		return;
	}
	if (ev->kind == RUN_EVENT_TIMEOUT) {
		run_fail_timeout(r, ERROR_JOB, "timed out waiting for %s", step_waits_for(bl->step));
		return;
	}
	if (ev->kind != RUN_EVENT_MATCH)
		return;
	switch (ev->id) {
	case ID_WANT:
		on_want(r, bl);
		break;
	case ID_KERNEL_START:
		/* noted on the way: keep waiting for the same step, now also
		 * watching for an unexpected reset (this step sends nothing) */
		kernel_started(r, bl);
		step_to(r, bl, bl->step);
		break;
	case ID_BAD_LOGIN:
		run_fail(r, ERROR_JOB, "login failed: the board answered 'Login incorrect'");
		break;
	case ID_RESET:
		run_fail(r, ERROR_JOB, "the board reset unexpectedly: '%.*s' after the kernel started",
			 (int)ev->match->len, (const char *)ev->match->text);
		break;
	}
}
