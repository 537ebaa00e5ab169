// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_uboot.c -- boot through U-Boot: power-cycle, interrupt autoboot,
 * type the command set with substitutions, then kernel, login and shell
 *
 * Each command is typed (with the device type's per-character delay), then
 * its echo is awaited before the prompt, so a prompt still buffered from
 * before cannot be taken for the answer.  The device type's error messages
 * ("TFTP error", "Bad Linux ARM64 Image magic!") fail the boot at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "run/action.h"
#include "run/boot_login.h"

enum uboot_step {
	UBOOT_POWER,		/* power-cycling */
	UBOOT_INTERRUPT,	/* waiting for "Hit any key to stop autoboot" */
	UBOOT_PROMPT,		/* waiting for the first bootloader prompt */
	UBOOT_ECHO,		/* a command was typed, waiting for its echo */
	UBOOT_ANSWER,		/* echo seen, waiting for the prompt (or the final message) */
	UBOOT_LOGIN,		/* the kernel runs: boot_login */
};

enum {
	ID_WANT = 100,
	ID_ERROR,
	ID_FINAL,
};

struct uboot_state {
	enum uboot_step step;
	char **commands;	/* substituted command lines */
	size_t next;		/* next command to type */
	struct boot_login login;
};

static const struct uboot_params *params(struct run *r)
{
	return &board_device(run_board(r))->type->uboot;
}

/* Patterns of a bootloader wait: @want plus the device type's error messages. */
static void expect(struct run *r, const char *stage, const char *want, bool literal)
{
	const struct uboot_params *p = params(r);

	run_expect_clear(r);
	if (literal)
		run_expect_add_literal(r, want, ID_WANT);
	else
		run_expect_add(r, want, ID_WANT);
	run_expect_add_strv(r, p->error_messages, ID_ERROR);
	run_expect(r, stage, 0);
}

/* The command set: the job's inline list, a named set of the type, or its default. */
static int command_source(struct run *r, char ***ret)
{
	const struct job_boot *boot = &run_action(r)->boot;
	const struct uboot_params *p = params(r);
	const char *name = boot->commands_name ? boot->commands_name : p->default_commands;
	const char *text;

	if (boot->commands)
		return strv_copy(boot->commands, ret);
	text = name ? kv_get(&p->command_sets, name) : NULL;
	if (!text) {
		run_fail(r, ERROR_JOB, "device type '%s' has no u-boot command set '%s'",
			 board_device(run_board(r))->type->name, name ? name : "(default)");
		return -ENOENT;
	}
	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		if (n && strv_consume(ret, strndup(s, n)) < 0)
			return -ENOMEM;
		s += n + (nl ? 1 : 0);
	}
	return 0;
}

/* Substitute every command; a line naming something not deployed is dropped. */
static int prepare_commands(struct run *r, struct uboot_state *st)
{
	char **src = NULL;
	int err = command_source(r, &src);

	if (err < 0) {
		strv_free(src);
		return err;
	}
	STRV_FOREACH(c, src) {
		const char *missing = NULL;
		char *line;

		err = run_substitute(r, *c, &line, &missing);
		if (err == -ENOENT) {
			run_log(r, "warning", "skipping command '%s': {%s} is not defined", *c,
				missing);
			continue;
		}
		if (err < 0 || strv_consume(&st->commands, line) < 0)
			break;
	}
	strv_free(src);
	if (err == -ENOMEM)
		return err;
	if (!strv_length(st->commands)) {
		run_fail(r, ERROR_JOB, "no u-boot commands left to send");
		return -EINVAL;
	}
	return 0;
}

static void type_next_command(struct run *r, struct uboot_state *st)
{
	const char *cmd = st->commands[st->next++];
	struct strbuf line = STRBUF_INIT;

	strbuf_addf(&line, "%s\n", cmd);
	if (run_send(r, line.buf, params(r)->char_delay) < 0) {
		strbuf_release(&line);
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot type u-boot command '%s'", cmd);
		return;
	}
	strbuf_release(&line);
	st->step = UBOOT_ECHO;
	expect(r, "bootloader-commands", cmd, true);
}

/* The boot command for the deployed kernel type: image -> booti, zimage -> bootz,
 * uimage -> bootm; without a type, the first the device type has addresses for. */
static const char *boot_command(struct run *r)
{
	static const char *const cmds[] = { "booti", "bootz", "bootm" };
	const struct kv *bootx = &board_device(run_board(r))->type->bootx;
	const char *type = kv_get(run_vars(r), "KERNEL_TYPE");
	char key[32];
	size_t i;

	if (type && !strcmp(type, "zimage"))
		return "bootz";
	if (type && !strcmp(type, "uimage"))
		return "bootm";
	if (type)
		return "booti";
	for (i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "%s.kernel", cmds[i]);
		if (kv_get(bootx, key))
			return cmds[i];
	}
	return "booti";
}

/* {KERNEL_ADDR}, {RAMDISK_ADDR}, {DTB_ADDR} from the type's addresses for the boot
 * command, {BOOTX}: "<cmd> <kernel> <ramdisk>|- [<dtb>]" (LAVA's convention), and
 * {EXTRA_KERNEL_ARGS} from the job's context. */
static int set_bootx_vars(struct run *r)
{
	static const char *const parts[][2] = {
		{ "kernel", "KERNEL_ADDR" }, { "ramdisk", "RAMDISK_ADDR" }, { "dtb", "DTB_ADDR" },
	};
	const struct kv *bootx = &board_device(run_board(r))->type->bootx;
	struct kv *vars = run_vars(r);
	const char *cmd = boot_command(r), *fallback;
	/* the job's context (labctl boot --append) */
	const char *append = json_string_value(json_object_get(run_job(r)->context,
								"extra_kernel_args"));
	struct strbuf bx = STRBUF_INIT;
	char key[32];
	size_t i;
	int err = 0;

	for (i = 0; i < 3 && !err; i++) {
		const char *addr;

		snprintf(key, sizeof(key), "%s.%s", cmd, parts[i][0]);
		addr = kv_get(bootx, key);
		if (addr && !kv_get(vars, parts[i][1]))
			err = kv_set(vars, parts[i][1], addr);
	}
	strbuf_addf(&bx, "%s {KERNEL_ADDR}", cmd);
	if (!kv_get(vars, "RAMDISK"))
		strbuf_addstr(&bx, " -");
	else if (kv_get(vars, "RAMDISK_UBOOT_HEADER"))
		strbuf_addstr(&bx, " {RAMDISK_ADDR}");
	else
		strbuf_addstr(&bx, " {RAMDISK_ADDR}:${initrd_size}");
	fallback = device_param(board_device(run_board(r)), "DTB_FALLBACK");
	if (kv_get(vars, "DTB"))
		strbuf_addstr(&bx, " {DTB_ADDR}");
	else if (fallback)
		strbuf_addf(&bx, " %s", fallback);
	if (!err)
		err = kv_set(vars, "BOOTX", bx.buf);
	if (!err && !kv_get(vars, "EXTRA_KERNEL_ARGS"))
		err = kv_set(vars, "EXTRA_KERNEL_ARGS", append ? append : "");
	strbuf_release(&bx);
	return err;
}

static int uboot_start(struct run *r, void *state)
{
	struct uboot_state *st = state;
	int err;

	err = set_bootx_vars(r);
	if (err < 0)
		return err;
	err = prepare_commands(r, st);
	if (err < 0)
		return err == -ENOMEM ? err : 0;	/* already failed with a reason */
	st->step = UBOOT_POWER;
	run_flush_console(r);
	err = run_power(r, POWER_CYCLE);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot power-cycle the board: %s",
			 strerror(-err));
	return 0;
}

static void after_power(struct run *r, struct uboot_state *st)
{
	const struct uboot_params *p = params(r);

	run_phase(r, "power-on");
	if (p->needs_interrupt) {
		st->step = UBOOT_INTERRUPT;
		expect(r, "bootloader-interrupt", p->interrupt_prompt, false);
	} else {
		st->step = UBOOT_PROMPT;
		expect(r, "bootloader-interrupt", p->bootloader_prompt, false);
	}
}

static void on_want(struct run *r, struct uboot_state *st)
{
	const struct uboot_params *p = params(r);
	bool last = st->next == strv_length(st->commands);

	switch (st->step) {
	case UBOOT_INTERRUPT: {
		char buf[8];

		snprintf(buf, sizeof(buf), "%s%s", p->interrupt_char,
			 p->interrupt_newline ? "\n" : "");
		run_send(r, buf, 0);
		st->step = UBOOT_PROMPT;
		expect(r, "bootloader-interrupt", p->bootloader_prompt, false);
		break;
	}
	case UBOOT_PROMPT:
		run_phase(r, "bootloader-prompt");
		type_next_command(r, st);
		break;
	case UBOOT_ECHO:
		st->step = UBOOT_ANSWER;
		expect(r, "bootloader-commands", last ? p->final_message : p->bootloader_prompt,
		       false);
		break;
	case UBOOT_ANSWER:
		if (!last) {
			type_next_command(r, st);
			break;
		}
		run_phase(r, "bootloader-final");
		st->step = UBOOT_LOGIN;
		boot_login_start(r, &st->login, &run_action(r)->boot, true);
		break;
	default:
		break;
	}
}

static void on_timeout(struct run *r, struct uboot_state *st)
{
	switch (st->step) {
	case UBOOT_INTERRUPT:
		run_fail(r, ERROR_INFRASTRUCTURE, "timed out waiting for the u-boot autoboot prompt");
		break;
	case UBOOT_PROMPT:
		run_fail(r, ERROR_INFRASTRUCTURE, "timed out waiting for the u-boot prompt");
		break;
	case UBOOT_ECHO:
		run_fail(r, ERROR_INFRASTRUCTURE, "u-boot did not echo '%s'",
			 st->commands[st->next - 1]);
		break;
	default:
		run_fail(r, ERROR_INFRASTRUCTURE, "timed out waiting for u-boot after '%s'",
			 st->commands[st->next - 1]);
		break;
	}
}

static void uboot_event(struct run *r, void *state, const struct run_event *ev)
{
	struct uboot_state *st = state;

	if (st->step == UBOOT_LOGIN) {
		boot_login_event(r, &st->login, ev);
		return;
	}
	switch (ev->kind) {
	case RUN_EVENT_POWER:
		after_power(r, st);
		break;
	case RUN_EVENT_TIMEOUT:
		on_timeout(r, st);
		break;
	case RUN_EVENT_MATCH:
		if (ev->id == ID_ERROR)
			run_fail(r, ERROR_INFRASTRUCTURE, "u-boot error%s%s: %.*s",
				 st->next ? " after " : "", st->next ? st->commands[st->next - 1] : "",
				 (int)ev->match->len, (const char *)ev->match->text);
		else
			on_want(r, st);
		break;
	default:
		break;
	}
}

static void uboot_stop(struct run *r, void *state)
{
	struct uboot_state *st = state;

	st->commands = strv_free(st->commands);
}

const struct action_ops action_boot_uboot_ops = {
	.name = "boot-u-boot",
	.state_size = sizeof(struct uboot_state),
	.start = uboot_start,
	.event = uboot_event,
	.stop = uboot_stop,
};
