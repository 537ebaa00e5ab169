// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_limits.c -- which limit ran out: a timeout's reason names the job's
 * `timeouts:` key, its length, the action and the last console line seen
 *
 * Every wait on the console is bounded by a key of the job: the stage's
 * connection timeout (`timeouts.connections.<stage>`, else
 * `timeouts.connection`), what is left of a stage (`timeouts.actions.
 * <stage>`), of the action (its `timeout:`, else `timeouts.action`) or of
 * the job (`timeouts.job`).  run_expect() notes which one bounds the wait
 * (an action may say another: run_expect_limit()), and the failure of a
 * timeout says it with the last line the board printed:
 *
 *   timed out waiting for the u-boot autoboot prompt: timeouts.connection
 *   (30 s) ran out in bootloader-interrupt of action 2 (boot-u-boot); the
 *   last console line was 'DRAM:  1 GiB'
 *
 * Whose fault, as LAVA classes it by the action running when the time ran
 * out: the bootloader's stages (its interrupt, prompt and commands) and the
 * deploy are the lab's (infrastructure), the kernel's start and the login
 * the job's, the tests the test's.
 */
#include "run/run_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/loop.h"
#include "job/job.h"

void run_format_usec(uint64_t usec, char *buf, size_t len)
{
	uint64_t s = usec / USEC_PER_SEC;

	if (usec < 10 * USEC_PER_SEC && usec % USEC_PER_SEC)
		snprintf(buf, len, "%.1f s", (double)usec / USEC_PER_SEC);
	else if (s < 600 || s % 60)
		snprintf(buf, len, "%llu s", (unsigned long long)s);
	else if (s < 3 * 3600 || (s / 60) % 60)
		snprintf(buf, len, "%llu min", (unsigned long long)(s / 60));
	else
		snprintf(buf, len, "%llu h", (unsigned long long)(s / 3600));
}

void run_limit_for_wait(struct run *r, const char *stage, uint64_t timeout)
{
	bool own = kv_get(&r->job->connection_timeouts, stage) != NULL;

	if (r->limit_given) {	/* run_expect_limit() said which */
		r->limit_given = false;
		return;
	}
	snprintf(r->limit_key, sizeof(r->limit_key), "%s%s", own ?
		 "timeouts.connections." : "timeouts.connection", own ? stage : "");
	r->limit_usec = timeout;
}

void run_expect_limit(struct run *r, const char *key, uint64_t usec)
{
	snprintf(r->limit_key, sizeof(r->limit_key), "%s", key);
	r->limit_usec = usec;
	r->limit_given = true;
}

/* The key of the current action's own timeout: its `timeout:`, else timeouts.action. */
static void action_key(const struct run *r, char *buf, size_t len)
{
	const struct job_action *a = run_action(r);

	if (a && a->timeout != r->job->action_timeout)
		snprintf(buf, len, "actions[%zu].%s.timeout", r->action_idx,
			 job_action_kind_name(a->kind));
	else
		snprintf(buf, len, "timeouts.action");
}

void run_expect_limit_action(struct run *r)
{
	const struct job_action *a = run_action(r);
	char key[sizeof(r->limit_key)];

	action_key(r, key, sizeof(key));
	run_expect_limit(r, key, a ? a->timeout : 0);
}

/* ---- the last console line ---- */

void run_note_line(struct run *r, const char *line, size_t len)
{
	size_t i, o = 0;

	/* printable text only: terminal sequences and control bytes dropped */
	for (i = 0; i < len && o < sizeof(r->last_line) - 1; i++) {
		if (line[i] == 0x1b && i + 1 < len && line[i + 1] == '[') {
			for (i += 2; i < len && !(line[i] >= '@' && line[i] <= '~'); i++)
				;
			continue;
		}
		if ((unsigned char)line[i] >= 0x20 && line[i] != 0x7f)
			r->last_line[o++] = line[i];
	}
	while (o && r->last_line[o - 1] == ' ')
		o--;
	if (!o)
		return;	/* a blank line: the last one that said something stays */
	r->last_line[o] = '\0';
}

/* The last line the board printed: the one in progress (a prompt) if it says something. */
static const char *last_line(struct run *r, char *buf, size_t len)
{
	char keep[sizeof(r->last_line)];

	memcpy(keep, r->last_line, sizeof(keep));
	run_note_line(r, r->line.buf ? r->line.buf : "", r->line.len);
	snprintf(buf, len, "%s", r->last_line);
	memcpy(r->last_line, keep, sizeof(keep));
	return buf;
}

/* "the last console line was '...'", or that there was none. */
static void add_last_line(struct run *r, char *buf, size_t len)
{
	char line[sizeof(r->last_line)];
	size_t n = strlen(buf);

	if (*last_line(r, line, sizeof(line)))
		snprintf(buf + n, len - n, "; the last console line was '%s'", line);
	else
		snprintf(buf + n, len - n, "; the board printed nothing");
}

/* "timeouts.connection (30 s) ran out in bootloader-interrupt of action 2 (boot-u-boot)" */
static void add_limit(struct run *r, const char *key, uint64_t usec, const char *stage,
		      char *buf, size_t len)
{
	char took[32];
	size_t n = strlen(buf);

	run_format_usec(usec, took, sizeof(took));
	n += (size_t)snprintf(buf + n, len - n, "%s (%s) ran out in ", key, took);
	if (n < len && stage && *stage)
		n += (size_t)snprintf(buf + n, len - n, "%s of ", stage);
	if (n < len)
		snprintf(buf + n, len - n, "action %zu (%s)", r->action_idx + 1,
			 r->ops ? r->ops->name : "?");
	add_last_line(r, buf, len);
}

void run_fail_timeout(struct run *r, enum error_type type, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(msg) - 2) {
		strcat(msg, ": ");
		add_limit(r, r->limit_key, r->limit_usec, r->wait_stage, msg, sizeof(msg));
	}
	run_fail(r, type, "%s", msg);
}

/* ---- the action's and the job's own timeouts ---- */

/* LAVA's class of a timeout in @stage of an action of @kind: whose fault it is. */
static enum error_type stage_error_type(const char *stage, enum job_action_kind kind)
{
	if (!strncmp(stage, "bootloader-", 11) || !strcmp(stage, "power"))
		return ERROR_INFRASTRUCTURE;
	if (!strcmp(stage, "auto-login-action") || !strcmp(stage, "login-action") ||
	    !strcmp(stage, "kernel-start"))
		return ERROR_JOB;
	if (!strncmp(stage, "test", 4))
		return ERROR_TEST;
	return kind == JOB_ACTION_DEPLOY ? ERROR_INFRASTRUCTURE :
	       kind == JOB_ACTION_BOOT ? ERROR_JOB : ERROR_TEST;
}

enum error_type run_action_timeout_reason(struct run *r, char *buf, size_t len)
{
	const struct job_action *a = run_action(r);
	const char *stage = r->waiting ? r->wait_stage : "";
	char key[sizeof(r->limit_key)];

	action_key(r, key, sizeof(key));
	snprintf(buf, len, "%s timed out: ", r->ops ? r->ops->name : "the action");
	add_limit(r, key, a ? a->timeout : 0, stage, buf, len);
	return stage_error_type(stage, a ? a->kind : JOB_ACTION_TEST);
}

void run_job_timeout_reason(struct run *r, char *buf, size_t len)
{
	snprintf(buf, len, "the job timed out: ");
	add_limit(r, "timeouts.job", r->job->timeout, r->waiting ? r->wait_stage : "", buf, len);
}
