// SPDX-License-Identifier: GPL-2.0-or-later
/* command.c -- power driver "command": admin-defined shell commands switch the board */
/*
 * Board definition:
 *
 *	power = {
 *		driver = "command";
 *		on = "pdu-ctl on 3";
 *		off = "pdu-ctl off 3";
 *		reset = "pdu-ctl reboot 3";	// optional: without it, cycle = off, delay, on
 *		timeout = 10;			// optional, seconds
 *	};
 *
 * {DEVICE} in a command is replaced by the board name.  Each command runs as
 * `/bin/sh -c CMD` in its own process group, stdin from /dev/null, stdout and
 * stderr into a pipe read by the loop; the last CHILD_OUTPUT_MAX bytes are
 * kept so that a failure reason quotes the last line the command printed.  On
 * timeout or abort the whole process group is killed.
 *
 * A command that is plain words, nothing the shell would read otherwise (no
 * quote, $, `, \, redirection, pipe, glob, ~, # or assignment), is run
 * without the shell: its words are the program (looked up in $PATH) and its
 * arguments, as the shell would have split them.  One exec instead of two:
 * a lab of hundreds of boards switches two commands per job.  When such a
 * program cannot be started, the command goes through the shell after all,
 * so that the failure reads as it always did ("sh: 1: x: not found").
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/child.h"
#include "core/diag.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"

#define COMMAND_REASON_MAX 300	/* bytes of the last output line quoted in a reason */

struct command {
	char *cmds[POWER_CYCLE + 1];	/* by operation; [POWER_CYCLE] is `reset`, or NULL */
	char **words[POWER_CYCLE + 1];	/* a plain command's words, or NULL: through the shell */
	enum power_op op;		/* running */
	pid_t pid;			/* the command (or its shell), leader of its process group */
	struct loop_source *child;
	struct child_output out;	/* what it prints, for the failure reason */
	struct loop_source *timer;
	bool timed_out;
};

static const char *const command_keys[] = {
	[POWER_OFF] = "off",
	[POWER_ON] = "on",
	[POWER_CYCLE] = "reset",
};

/* @cmd with every {DEVICE} replaced by @device; NULL on ENOMEM. */
static char *command_expand(const char *cmd, const char *device)
{
	static const char var[] = "{DEVICE}";
	struct strbuf sb = STRBUF_INIT;
	const char *at;
	int r = 0;

	while (device && !r && (at = strstr(cmd, var))) {
		r = strbuf_add(&sb, cmd, (size_t)(at - cmd));
		if (!r)
			r = strbuf_addstr(&sb, device);
		cmd = at + sizeof(var) - 1;
	}
	if (!r)
		r = strbuf_addstr(&sb, cmd);
	if (r) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* @cmd's words when the shell would only split it at blanks; NULL otherwise (or ENOMEM). */
static char **command_words(const char *cmd)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-./:,+=@% \t";
	char *copy, *word, *save = NULL, **words = NULL;

	if (cmd[strspn(cmd, plain)] || cmd[strspn(cmd, " \t")] == '\0')
		return NULL;
	copy = strdup(cmd);
	if (!copy)
		return NULL;
	for (word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		/* NAME=value first is an assignment, '=' later an argument */
		if ((!words && strchr(word, '=')) || strv_push(&words, word) < 0) {
			words = strv_free(words);
			break;
		}
	}
	free(copy);
	return words;
}

static int command_parse_one(struct power *p, const config_setting_t *s, enum power_op op,
			     struct diag *diag)
{
	struct command *c = power_priv(p);
	const char *key = command_keys[op];
	config_setting_t *e;
	const char *v;
	int r;

	r = cfg_get_string(s, key, op != POWER_CYCLE, &v, diag);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (!*v) {
		e = config_setting_get_member(s, key);
		return diag_add(diag, cfg_file(e), cfg_line(e), "'%s' must not be empty", key);
	}
	c->cmds[op] = command_expand(v, power_ctx(p)->device_name);
	if (!c->cmds[op])
		return -ENOMEM;
	c->words[op] = command_words(c->cmds[op]);
	return 0;
}

static int command_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = { POWER_COMMON_KEYS, "on", "off", "reset", NULL };
	struct command *c = power_priv(p);
	int op, r, e;

	child_output_init(&c->out);
	r = cfg_check_keys(s, known, diag);
	for (op = POWER_OFF; op <= POWER_CYCLE; op++) {
		e = command_parse_one(p, s, op, diag);
		if (e < 0 && (r >= 0 || e == -ENOMEM))
			r = e;
	}
	return r;
}

/* Stop everything the running command holds; the process group is killed. */
static void command_stop(struct command *c)
{
	if (c->child) {
		kill(-c->pid, SIGKILL);
		/* The loop kills the command (or its shell) and reaps it in the background. */
		c->child = loop_source_free(c->child);
	}
	child_output_close(&c->out);
	if (c->timer)
		loop_timer_set(c->timer, USEC_INFINITY);
	strbuf_reset(&c->out.tail);
	c->timed_out = false;
}

/* Report how the command ended: @code and @status as waitid() gives them. */
static void command_report(struct power *p, int code, int status)
{
	struct command *c = power_priv(p);
	const char *key = command_keys[c->op], *cmd = c->cmds[c->op];
	bool timed_out = c->timed_out;
	char line[COMMAND_REASON_MAX + 1];
	const char *sep;

	child_output_last_line(&c->out, line, sizeof(line));
	sep = *line ? ": " : "";
	command_stop(c);
	if (timed_out)
		power_complete(p, -ETIMEDOUT, "power %s command '%s' timed out after %g s%s%s", key,
			       cmd, (double)power_timeout(p) / USEC_PER_SEC, sep, line);
	else if (code == CLD_EXITED && !status)
		power_complete(p, 0, NULL);
	else if (code == CLD_EXITED)
		power_complete(p, -EIO, "power %s command '%s' exited with status %d%s%s", key, cmd,
			       status, sep, line);
	else
		power_complete(p, -EIO, "power %s command '%s' was killed by signal %d (%s)%s%s",
			       key, cmd, status, strsignal(status), sep, line);
}

static int command_on_exit(struct loop_source *s, const siginfo_t *si, void *userdata)
{
	struct power *p = userdata;
	struct command *c = power_priv(p);

	c->child = loop_source_free(c->child);
	/* The command has exited: what it printed is in the pipe already. */
	child_output_drain(&c->out);
	command_report(p, si->si_code, si->si_status);
	return 0;
}

static int command_on_timeout(struct loop_source *s, uint64_t now, void *userdata)
{
	struct command *c = userdata;

	/* Kill the whole group; its leader's exit reports the timeout. */
	c->timed_out = true;
	kill(-c->pid, SIGKILL);
	return 0;
}

/* Watch the child, its output and the timeout in the loop. */
static int command_watch(struct power *p)
{
	struct command *c = power_priv(p);
	struct loop *l = power_ctx(p)->loop;
	int r;

	r = loop_add_child(l, &c->child, c->pid, command_on_exit, p);
	if (r < 0) {
		kill(-c->pid, SIGKILL);
		return r;
	}
	loop_source_set_description(c->child, "power-command");
	if (!c->timer) {
		r = loop_add_timer(l, &c->timer, USEC_INFINITY, command_on_timeout, c);
		if (r < 0)
			return r;
		loop_source_set_description(c->timer, "power-command-timeout");
	}
	return loop_timer_set_rel(c->timer, power_timeout(p));
}

static int command_start(struct power *p, enum power_op op)
{
	struct command *c = power_priv(p);
	char *shell[] = { "/bin/sh", "-c", c->cmds[op], NULL };
	struct child_spawn how = { .argv = shell, .extra_fd = -1 };
	int r;

	if (!c->cmds[op])
		return -EOPNOTSUPP;	/* no `reset`: the core cycles with off and on */
	if (!power_ctx(p)->loop)
		return -ENOTCONN;
	r = child_output_open(&c->out, power_ctx(p)->loop, "power-command-output", &how.out_fd);
	if (r < 0)
		return r;
	if (c->words[op]) {
		struct child_spawn plain = how;

		plain.argv = c->words[op];
		plain.search_path = true;
		r = child_spawn(&plain, &c->pid);
	}
	if (!c->words[op] || r < 0)
		r = child_spawn(&how, &c->pid);
	close(how.out_fd);
	if (r < 0) {
		child_output_close(&c->out);
		return r;
	}
	c->op = op;
	c->timed_out = false;
	r = command_watch(p);
	if (r < 0)
		command_stop(c);
	return r;
}

static void command_abort(struct power *p)
{
	command_stop(power_priv(p));
}

static void command_release(struct power *p)
{
	struct command *c = power_priv(p);
	int op;

	command_stop(c);
	c->timer = loop_source_free(c->timer);
	child_output_release(&c->out);
	for (op = POWER_OFF; op <= POWER_CYCLE; op++) {
		free(c->cmds[op]);
		strv_free(c->words[op]);
	}
}

const struct power_driver power_command_driver = {
	.name = "command",
	.priv_size = sizeof(struct command),
	.parse = command_parse,
	.start = command_start,
	.abort = command_abort,
	.release = command_release,
	.cycles = true,		/* with `reset`; without it ->start() says -EOPNOTSUPP */
};
