// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_bootloader.c -- boot through a bootloader: power-cycle,
 * interrupt the autoboot, type the command set with substitutions (or select
 * firmware menu entries), then kernel, login and shell; for every bootloader
 * method, each configured by its dialect (bootloader.h)
 *
 * Each command is typed (with the per-character delay), then its echo is
 * awaited before the prompt, so a prompt still buffered from before cannot be
 * taken for the answer.  The echo may come back with terminal control
 * sequences between the characters (GRUB on EFI moves the cursor for each
 * one) and wrapped lines, and a loaded emulator drops output bytes when its
 * reader is slow (QEMU's UART gives up on a byte after a few retries): so
 * only the end of the command is looked for, with any control bytes and
 * broken escape sequences between its characters, and when even that does
 * not come within ECHO_TIMEOUT the prompt is awaited without it.  The error messages
 * of the dialect are watched from the interrupt to the kernel start and end
 * the boot at once, with the line they appeared on as the reason.
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
#include "run/actions/bootloader.h"
#include "run/boot_login.h"

#define REASON_MAX 200			/* bytes of a bootloader's error line in a reason */
#define MENU_MOVES_MAX 64		/* entries passed looking for one */
#define MENU_MOVE_TIMEOUT (10 * 1000000ULL)	/* for the highlight to move */
#define MENU_SEEN_MAX 8			/* entries listed when one is not found */
#define ERROR_LINE_TIMEOUT (1000000ULL)	/* for the rest of an error's line */
#define ECHO_TAIL 16			/* bytes of a command its echo is known by */
#define ECHO_TIMEOUT (10 * 1000000ULL)	/* then the prompt is awaited without the echo */

enum step {
	STEP_INTERRUPT,		/* waiting for the interrupt prompt */
	STEP_INTERRUPT_DELAY,	/* it came: the keys go at the wake (interrupt_delay) */
	STEP_PROMPT,		/* waiting for the first prompt */
	STEP_ECHO,		/* a command was typed, waiting for its echo */
	STEP_ANSWER,		/* echo seen, waiting for the prompt */
	STEP_MENU,		/* waiting for the highlighted menu entry */
	STEP_FINAL,		/* waiting for the final message */
	STEP_KERNEL,		/* waiting for the kernel to start */
	STEP_LOGIN,		/* the kernel runs: boot_login */
	STEP_ERROR_LINE,	/* an error message matched: the rest of its line */
};

enum {
	ID_WANT = 100,
	ID_ERROR,		/* the lab failed */
	ID_JOB_ERROR,		/* the job's commands are wrong */
	ID_BOOTED,		/* the kernel started before the bootloader's prompt */
};

struct state {
	struct bootloader_conf c;
	const struct job_boot *boot;
	enum step step;
	char **commands;	/* substituted command lines, or menu entries */
	size_t next;		/* next command to type / entry to select */
	unsigned int moves;	/* menu: keys sent looking for the current entry */
	bool stuck;		/* menu: a key was sent again after no highlight came */
	char *first_seen;	/* menu: the first entry highlighted on this page */
	char **seen;		/* menu: entries passed, for the failure reason */
	const char *stage;	/* the stage waited in: "bootloader-commands" ... */
	uint64_t stage_end;	/* its end from the job's timeouts.actions, or 0 */
	struct strbuf error;	/* the failure reason being collected */
	struct strbuf prompts;	/* method bootloader: the job's prompts as one regex */
	enum error_type error_type;
	bool powered_on;	/* the "power-on" phase is recorded */
	struct boot_login login;
};

static const char *name(const struct state *st)
{
	return st->c.dialect->name;
}

/* The last command typed, for reasons; "" before the first. */
static const char *last_command(const struct state *st)
{
	return st->next ? st->commands[st->next - 1] : "";
}

/*
 * The timeout of a wait in @stage: @timeout (0: the stage's connection
 * timeout), cut to what is left of the stage when the job gives the stage
 * a timeout of its own (LAVA's timeouts: actions: bootloader-commands).
 */
static uint64_t stage_timeout(struct run *r, struct state *st, const char *stage,
			      uint64_t timeout)
{
	uint64_t now = run_now(r), limit;
	char key[96];

	if (!st->stage || strcmp(st->stage, stage)) {
		st->stage = stage;
		limit = job_stage_timeout(run_job(r), run_action(r), stage, 0);
		st->stage_end = limit ? now + limit : 0;
	}
	if (!st->stage_end)
		return timeout;
	if (!timeout)
		timeout = job_connection_timeout(run_job(r), stage);
	if (st->stage_end <= now || st->stage_end - now < timeout) {
		snprintf(key, sizeof(key), "timeouts.actions.%s", stage);
		run_expect_limit(r, key, job_stage_timeout(run_job(r), run_action(r), stage, 0));
	}
	return st->stage_end <= now ? 1 : st->stage_end - now < timeout ? st->stage_end - now
									: timeout;
}

/* The patterns of a wait for @want (a regex, or @literal text), plus the dialect's errors. */
static void expect_patterns(struct run *r, struct state *st, const char *want, bool literal)
{
	run_expect_clear(r);
	if (literal)
		run_expect_add_literal(r, want, ID_WANT);
	else
		run_expect_add(r, want, ID_WANT);
	run_expect_add_strv(r, st->c.job_error_messages, ID_JOB_ERROR);
	run_expect_add_strv(r, st->c.error_messages, ID_ERROR);
}

/* Wait for @want (a regex, or @literal text), plus the dialect's error messages. */
static void expect(struct run *r, struct state *st, const char *stage, const char *want,
		   bool literal, uint64_t timeout)
{
	timeout = stage_timeout(r, st, stage, timeout);
	expect_patterns(r, st, want, literal);
	run_expect(r, stage, timeout);
}

/*
 * Wait for @want before the bootloader's first prompt: from the power-on
 * command's start (a board prints while it runs, and a command that returns
 * after the autoboot countdown would make the interrupt late), and with the
 * kernel's start, which means the bootloader was not stopped.
 */
static void expect_bootloader(struct run *r, struct state *st, const char *want)
{
	const char *kernel = boot_login_kernel_message(r, st->boot);
	uint64_t timeout = stage_timeout(r, st, "bootloader-interrupt", 0);

	expect_patterns(r, st, want, false);
	if (kernel && *kernel)
		run_expect_add(r, kernel, ID_BOOTED);
	run_expect(r, "bootloader-interrupt", timeout);
}

/* The "power-on" phase, once: when the power command ends, or at the first
 * prompt that comes before that (phases stay in order). */
static void power_on_phase(struct run *r, struct state *st)
{
	if (st->powered_on)
		return;
	st->powered_on = true;
	run_phase(r, "power-on");
}

int bootloader_echo_regex(const char *cmd, struct strbuf *re)
{
	static const char gap[] =
		"(?:\\x1b(?:\\[[0-9;?=]*[ -/]*[@-~]?)?|[\\x00-\\x1a\\x1c-\\x1f\\x7f])*";
	const unsigned char *p;
	size_t len = strlen(cmd);
	int err = 0;

	if (len > ECHO_TAIL)
		cmd += len - ECHO_TAIL;
	for (p = (const unsigned char *)cmd; *p && !err; p++) {
		if (p != (const unsigned char *)cmd)
			err = strbuf_addstr(re, gap);
		if (!err)
			err = strbuf_addf(re, "\\x%02x", *p);
	}
	return err;
}

/* The command set: the job's inline list, a named set of the type, or its default. */
static int command_source(struct run *r, struct state *st, char ***ret)
{
	const char *set = st->boot->commands_name ? st->boot->commands_name
						   : st->c.default_commands;
	const char *text;

	if (st->boot->commands)
		return strv_copy(st->boot->commands, ret);
	if (!set && st->boot->method == BOOT_METHOD_BOOTLOADER)
		return 0;	/* just stop at the prompt */
	text = set ? kv_get(st->c.command_sets, set) : NULL;
	if (!text) {
		run_fail(r, ERROR_JOB, "device type '%s' has no %s command set '%s'",
			 board_device(run_board(r))->type->name, name(st), set ? set : "(default)");
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
static int prepare_commands(struct run *r, struct state *st)
{
	char **src = NULL;
	int err = command_source(r, st, &src);

	if (err < 0) {
		strv_free(src);
		return err;
	}
	STRV_FOREACH(c, src) {
		const char *missing = NULL;
		char *line;

		err = run_substitute(r, *c, &line, &missing);
		if (err == -ENOENT && (!strcmp(missing, "NFSROOTFS") ||
				       !strcmp(missing, "NFS_SERVER_IP"))) {
			run_fail(r, ERROR_JOB, "%s command '%s' needs {%s}: the job deploys no "
				 "'nfsrootfs' before this boot", name(st), *c, missing);
			strv_free(src);
			return -EINVAL;
		}
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
	if (!strv_length(st->commands) && src && st->boot->method != BOOT_METHOD_BOOTLOADER) {
		run_fail(r, ERROR_JOB, "no %s commands left to send", name(st));
		return -EINVAL;
	}
	return 0;
}

static void type_next_command(struct run *r, struct state *st)
{
	const char *cmd = st->commands[st->next++];
	struct strbuf line = STRBUF_INIT, re = STRBUF_INIT;

	if (strbuf_addf(&line, "%s\n", cmd) < 0 || bootloader_echo_regex(cmd, &re) < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "out of memory");
	} else if (run_send(r, line.buf, st->c.char_delay) < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot type %s command '%s'", name(st), cmd);
	} else {
		st->step = STEP_ECHO;
		expect(r, st, "bootloader-commands", re.len ? re.buf : "", false, ECHO_TIMEOUT);
	}
	strbuf_release(&line);
	strbuf_release(&re);
}

/* After the bootloader's part: the final message if the dialect has one, then the kernel. */
static void wait_final(struct run *r, struct state *st)
{
	if (st->c.final_message) {
		st->step = STEP_FINAL;
		expect(r, st, "bootloader-commands", st->c.final_message, false, 0);
		return;
	}
	run_phase(r, "bootloader-final");
	boot_login_stage(r);
	st->step = STEP_KERNEL;
	expect(r, st, "kernel-start", boot_login_kernel_message(r, st->boot), false, 0);
}

/* The bootloader is at its prompt with nothing left to type. */
static void commands_done(struct run *r, struct state *st)
{
	if (st->boot->method == BOOT_METHOD_BOOTLOADER) {
		run_phase(r, "bootloader-final");
		run_done(r);
		return;
	}
	wait_final(r, st);
}

/*
 * The first wait, from the power-on command's start: the interrupt prompt,
 * or the prompt of a bootloader that needs no interrupt.  A menu without an
 * interrupt is awaited once the power command ended (after_power()).
 */
static void wait_bootloader(struct run *r, struct state *st)
{
	if (st->c.needs_interrupt) {
		st->step = STEP_INTERRUPT;
		expect_bootloader(r, st, st->c.interrupt_prompt);
	} else if (!st->c.dialect->menu) {
		st->step = STEP_PROMPT;
		expect_bootloader(r, st, st->c.bootloader_prompt);
	} else {
		st->step = STEP_MENU;	/* not waiting yet */
	}
}

static int start(struct run *r, void *state)
{
	struct state *st = state;
	const struct job_boot *boot = &run_action(r)->boot;
	const struct device_type *t = board_device(run_board(r))->type;
	const struct bootloader_dialect *d = bootloader_dialect(boot->bootloader);
	/* the job's context (labctl boot --append) */
	const char *append = json_string_value(json_object_get(run_job(r)->context,
								"extra_kernel_args"));
	int err;

	strbuf_init(&st->error);
	strbuf_init(&st->prompts);
	if (!d) {
		run_fail(r, ERROR_JOB, "boot method '%s' has no bootloader", boot_method_name(boot->method));
		return 0;
	}
	st->boot = boot;
	bootloader_conf_resolve(d, &t->bootloaders[boot->bootloader], run_job(r)->context, &st->c);
	if (boot->method == BOOT_METHOD_BOOTLOADER && strv_length(boot->prompts)) {
		/* LAVA's bootloader method: the job's prompts are the bootloader's */
		STRV_FOREACH(p, boot->prompts)
			if (strbuf_addf(&st->prompts, "%s(?:%s)", st->prompts.len ? "|" : "", *p) < 0)
				return -ENOMEM;
		st->c.bootloader_prompt = st->prompts.buf;
	}
	err = kv_get(run_vars(r), "EXTRA_KERNEL_ARGS") ? 0 :
	      kv_set(run_vars(r), "EXTRA_KERNEL_ARGS", append ? append : "");
	if (!err && d->prepare)
		err = d->prepare(r);
	if (err < 0)
		return err == -ENOMEM ? err : 0;	/* the dialect failed the run with a reason */
	err = prepare_commands(r, st);
	if (err < 0)
		return err == -ENOMEM ? err : 0;	/* already failed with a reason */
	run_flush_console(r);
	wait_bootloader(r, st);
	err = run_power(r, POWER_CYCLE);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot power-cycle the board: %s",
			 strerror(-err));
	return 0;
}

/* The next menu entry to select, or the commands when the menu is done. */
static void menu_next(struct run *r, struct state *st)
{
	st->moves = 0;
	st->stuck = false;
	st->first_seen = NULL;
	st->seen = strv_free(st->seen);
	if (st->next == strv_length(st->commands)) {
		commands_done(r, st);
		return;
	}
	st->step = STEP_MENU;
	expect(r, st, "bootloader-commands", st->c.menu_item, false, 0);
}

/* The power command ended (a failed one has failed the run already). */
static void after_power(struct run *r, struct state *st)
{
	bool waiting = !st->powered_on;

	power_on_phase(r, st);
	if (!waiting)
		return;
	/* the wait before the first prompt counts from here, as it did when it
	 * started here: a slow power command does not eat into it */
	if (st->step == STEP_INTERRUPT)
		expect_bootloader(r, st, st->c.interrupt_prompt);
	else if (st->step == STEP_PROMPT)
		expect_bootloader(r, st, st->c.bootloader_prompt);
	else
		menu_next(r, st);
}

static void interrupted(struct run *r, struct state *st)
{
	struct strbuf keys = STRBUF_INIT;

	strbuf_addf(&keys, "%s%s", st->c.interrupt_char, st->c.interrupt_newline ? "\n" : "");
	run_send(r, keys.buf, 0);
	strbuf_release(&keys);
	if (st->c.dialect->menu) {
		run_phase(r, "bootloader-prompt");
		menu_next(r, st);
		return;
	}
	st->step = STEP_PROMPT;
	expect_bootloader(r, st, st->c.bootloader_prompt);
}

/*
 * The firmware says it may be interrupted before it listens (EDK II sets its
 * screen mode, then connects its devices and only then reads keys): the keys
 * wait interrupt_delay.  The board's errors are not watched meanwhile.
 */
static void interrupt_later(struct run *r, struct state *st)
{
	run_log(r, "info", "%s: %s seen, interrupting in %g s", name(st),
		st->c.dialect->interrupt_what, (double)st->c.interrupt_delay / 1e6);
	st->step = STEP_INTERRUPT_DELAY;
	run_expect_stop(r);
	run_wake_at(r, run_now(r) + st->c.interrupt_delay);
}

/* "a, b, c" of the entries seen on a menu page */
static void menu_not_found(struct run *r, struct state *st)
{
	char *list = strv_join(st->seen, "', '");

	run_fail(r, ERROR_JOB, "%s: no menu entry '%s' (seen: '%s')", name(st),
		 st->commands[st->next], list ? list : "");
	free(list);
}

/* A highlighted entry: choose it if it is the one, else move on, until the menu wraps. */
static void menu_entry(struct run *r, struct state *st)
{
	const uint8_t *p;
	size_t len = 0;
	char *item;

	st->stuck = false;
	if (!run_match_group(r, "item", &p, &len))
		p = (const uint8_t *)"";
	item = strndup((const char *)p, len);
	if (!item) {
		run_fail(r, ERROR_INFRASTRUCTURE, "out of memory");
		return;
	}
	if (strstr(item, st->commands[st->next])) {
		run_log(r, "info", "%s: selecting '%s'", name(st), item);
		free(item);
		run_send(r, st->c.menu_select, 0);
		st->next++;
		menu_next(r, st);
		return;
	}
	if (st->first_seen && (!strcmp(item, st->first_seen) || st->moves >= MENU_MOVES_MAX)) {
		free(item);
		menu_not_found(r, st);
		return;
	}
	if (strv_length(st->seen) < MENU_SEEN_MAX && !strv_contains(st->seen, item))
		strv_push(&st->seen, item);
	if (!st->first_seen)
		st->first_seen = st->seen ? st->seen[0] : NULL;
	free(item);
	st->moves++;
	run_send(r, st->c.menu_down, 0);
	expect(r, st, "bootloader-commands", st->c.menu_item, false, MENU_MOVE_TIMEOUT);
}

static void on_want(struct run *r, struct state *st)
{
	bool last = st->next == strv_length(st->commands);

	switch (st->step) {
	case STEP_INTERRUPT:
		power_on_phase(r, st);
		if (st->c.interrupt_delay)
			interrupt_later(r, st);
		else
			interrupted(r, st);
		break;
	case STEP_PROMPT:
		power_on_phase(r, st);
		run_phase(r, "bootloader-prompt");
		if (!strv_length(st->commands))
			commands_done(r, st);
		else
			type_next_command(r, st);
		break;
	case STEP_ECHO:
		if (last && st->boot->method != BOOT_METHOD_BOOTLOADER) {
			wait_final(r, st);
			break;
		}
		st->step = STEP_ANSWER;
		expect(r, st, "bootloader-commands", st->c.bootloader_prompt, false, 0);
		break;
	case STEP_ANSWER:
		if (last)
			commands_done(r, st);
		else
			type_next_command(r, st);
		break;
	case STEP_MENU:
		menu_entry(r, st);
		break;
	case STEP_FINAL:
		run_phase(r, "bootloader-final");
		boot_login_stage(r);
		st->step = STEP_KERNEL;
		expect(r, st, "kernel-start", boot_login_kernel_message(r, st->boot), false, 0);
		break;
	case STEP_KERNEL:
		st->step = STEP_LOGIN;
		boot_login_after_kernel(r, &st->login, st->boot);
		break;
	default:
		break;
	}
}

static void on_timeout(struct run *r, struct state *st)
{
	if (st->stage_end && run_now(r) >= st->stage_end) {
		run_fail_timeout(r, ERROR_INFRASTRUCTURE, "%s: the job's %s timeout ran out%s%s%s",
				 name(st), st->stage, st->next ? " after '" : "", last_command(st),
				 st->next ? "'" : "");
		return;
	}
	switch (st->step) {
	case STEP_INTERRUPT:
		run_fail_timeout(r, ERROR_INFRASTRUCTURE, "timed out waiting for the %s %s",
				 name(st), st->c.dialect->interrupt_what);
		break;
	case STEP_PROMPT:
		run_fail_timeout(r, ERROR_INFRASTRUCTURE, "timed out waiting for the %s prompt",
				 name(st));
		break;
	case STEP_ECHO:
		run_log(r, "warning", "%s: no echo of '%s' seen: waiting for the prompt", name(st),
			last_command(st));
		on_want(r, st);
		break;
	case STEP_MENU:
		if (st->moves && !st->stuck) {
			/* the highlight's redraw was lost, or the menu's end: one more key */
			st->stuck = true;
			st->moves++;
			run_send(r, st->c.menu_down, 0);
			expect(r, st, "bootloader-commands", st->c.menu_item, false, MENU_MOVE_TIMEOUT);
		} else if (st->moves) {
			menu_not_found(r, st);
		} else
			run_fail_timeout(r, ERROR_INFRASTRUCTURE, "timed out waiting for the %s menu",
					 name(st));
		break;
	case STEP_KERNEL:
		run_fail_timeout(r, ERROR_JOB, "timed out waiting for the kernel to start");
		break;
	default:
		run_fail_timeout(r, ERROR_INFRASTRUCTURE, "timed out waiting for %s after '%s'",
				 name(st), last_command(st));
		break;
	}
}

/* Printable bytes of @p (terminal sequences and control characters dropped) into @sb. */
static void add_printable(struct strbuf *sb, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && sb->len < REASON_MAX; i++) {
		if (p[i] == 0x1b && i + 1 < n && p[i + 1] == '[') {
			for (i += 2; i < n && !(p[i] >= '@' && p[i] <= '~'); i++)
				;
			continue;
		}
		if (p[i] >= ' ' && p[i] != 0x7f)
			strbuf_addch(sb, (char)p[i]);
	}
}

/* The reason is complete: "<dialect> error after <command>: <line>". */
static void error_done(struct run *r, struct state *st)
{
	run_fail(r, st->error_type, "%s error%s%s: %s", name(st),
		 st->next && !st->c.dialect->menu ? " after " : "",
		 st->c.dialect->menu ? "" : last_command(st), st->error.len ? st->error.buf : "?");
}

/* An error message: the line it appeared on is the reason, up to its end. */
static void on_error(struct run *r, struct state *st, const struct run_event *ev)
{
	const struct match *m = ev->match;
	size_t start = m->before_len;

	while (start && m->before[start - 1] != '\n' && m->before[start - 1] != '\r')
		start--;
	add_printable(&st->error, m->before + start, m->before_len - start);
	add_printable(&st->error, m->text, m->len);
	st->error_type = ev->id == ID_JOB_ERROR ? ERROR_JOB : ERROR_INFRASTRUCTURE;
	st->step = STEP_ERROR_LINE;
	run_expect_clear(r);
	run_expect_add(r, "[^\r\n]*[\r\n]", ID_WANT);
	run_expect(r, "bootloader-commands", ERROR_LINE_TIMEOUT);
}

/* The rest of an error message's line arrived (or not, after a moment). */
static void error_line(struct run *r, struct state *st, const struct run_event *ev)
{
	if (ev->kind == RUN_EVENT_MATCH)
		add_printable(&st->error, ev->match->text, ev->match->len);
	if (ev->kind == RUN_EVENT_MATCH || ev->kind == RUN_EVENT_TIMEOUT)
		error_done(r, st);
}

static void event(struct run *r, void *state, const struct run_event *ev)
{
	struct state *st = state;

	if (st->step == STEP_LOGIN) {
		boot_login_event(r, &st->login, ev);
		return;
	}
	if (st->step == STEP_ERROR_LINE) {
		error_line(r, st, ev);
		return;
	}
	switch (ev->kind) {
	case RUN_EVENT_POWER:
		after_power(r, st);
		break;
	case RUN_EVENT_WAKE:
		if (st->step == STEP_INTERRUPT_DELAY)
			interrupted(r, st);
		break;
	case RUN_EVENT_TIMEOUT:
		on_timeout(r, st);
		break;
	case RUN_EVENT_MATCH:
		if (ev->id == ID_ERROR || ev->id == ID_JOB_ERROR)
			on_error(r, st, ev);
		else if (ev->id == ID_BOOTED)
			run_fail(r, ERROR_INFRASTRUCTURE, "the board booted past its bootloader: "
				 "autoboot was not interrupted");
		else
			on_want(r, st);
		break;
	default:
		break;
	}
}

static void stop(struct run *r, void *state)
{
	struct state *st = state;

	st->commands = strv_free(st->commands);
	st->seen = strv_free(st->seen);
	strbuf_release(&st->error);
	strbuf_release(&st->prompts);
}

#define BOOTLOADER_OPS(method) { .name = "boot-" method, .state_size = sizeof(struct state), \
				.start = start, .event = event, .stop = stop }

const struct action_ops action_boot_bootloader_ops[BOOTLOADER_COUNT + 1] = {
	[BOOTLOADER_UBOOT] = BOOTLOADER_OPS("u-boot"),
	[BOOTLOADER_BAREBOX] = BOOTLOADER_OPS("barebox"),
	[BOOTLOADER_GRUB] = BOOTLOADER_OPS("grub"),
	[BOOTLOADER_GRUB_EFI] = BOOTLOADER_OPS("grub-efi"),
	[BOOTLOADER_IPXE] = BOOTLOADER_OPS("ipxe"),
	[BOOTLOADER_DEPTHCHARGE] = BOOTLOADER_OPS("depthcharge"),
	[BOOTLOADER_UEFI_MENU] = BOOTLOADER_OPS("uefi-menu"),
	[BOOTLOADER_COUNT] = BOOTLOADER_OPS("bootloader"),
};
