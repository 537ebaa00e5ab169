// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_test_interactive.c -- scripted console tests (LAVA `interactive`)
 *
 * For each block, for each step: type the command, (optionally) wait for its
 * echo, then wait for one of its success or failure messages, or for a
 * prompt when it has none; a named step records a result (pass, or fail with
 * the failure's text).  A failure naming an exception ends the job with that
 * error type; a timeout records a failed result and fails the test action.
 *
 * A command's answer is what the board prints after the command was typed
 * (bytes left from earlier steps are dropped first).  When the prompt comes
 * back, on a line of its own after the command's echo, before any success or
 * failure message, the command has ended without one: the step fails then
 * and the next one starts (a step with wait_for_prompt: false waits for its
 * messages only).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/strv.h"
#include "job/job.h"
#include "run/action.h"

enum interactive_wait {
	WAIT_ECHO,
	WAIT_ANSWER,
	WAIT_PROMPT,
};

enum {
	ID_PROMPT = 1,
	ID_ECHO,
	ID_SUCCESS = 1000,	/* + index of the success message */
	ID_FAILURE = 2000,	/* + index of the failure message */
};

struct interactive_state {
	size_t block;
	size_t step;
	enum interactive_wait wait;
	int64_t step_line;	/* console line where the step started */
	const char *outcome;	/* result of the current step once answered */
	char *failure;		/* text of the failure message that matched */
};

static const struct job_interactive *block_of(struct run *r, struct interactive_state *st)
{
	const struct job_test *t = &run_action(r)->test;

	return st->block < t->n_interactive ? &t->interactive[st->block] : NULL;
}

static const struct job_interactive_step *step_of(struct run *r, struct interactive_state *st)
{
	const struct job_interactive *b = block_of(r, st);

	return b && st->step < b->n_steps ? &b->steps[st->step] : NULL;
}

static void record(struct run *r, struct interactive_state *st, const char *result)
{
	const struct job_interactive_step *s = step_of(r, st);
	struct run_result res = {
		.suite = block_of(r, st)->name,
		.name = s->name,
		.result = result,
		.log_start = st->step_line,
	};

	if (s->name)
		run_result(r, &res);
}

static void step_finished(struct run *r, struct interactive_state *st);

static void expect_prompt(struct run *r, struct interactive_state *st)
{
	run_expect_clear(r);
	run_expect_add_strv(r, block_of(r, st)->prompts, ID_PROMPT);
	st->wait = WAIT_PROMPT;
	run_expect(r, "test-interactive", 0);
}

/* Whether the prompt ends the wait for a step's messages (see the top). */
static bool prompt_ends_answer(struct run *r, struct interactive_state *st)
{
	const struct job_interactive_step *s = step_of(r, st);

	return s->command && s->wait_for_prompt && strv_length(block_of(r, st)->prompts);
}

static void expect_answer(struct run *r, struct interactive_state *st)
{
	const struct job_interactive_step *s = step_of(r, st);
	size_t i;

	if (!s->n_successes && !s->n_failures) {
		if (strv_length(block_of(r, st)->prompts))
			expect_prompt(r, st);
		else
			step_finished(r, st);	/* nothing to wait for: fire and forget */
		return;
	}
	run_expect_clear(r);
	for (i = 0; i < s->n_successes; i++)
		run_expect_add(r, s->successes[i].message, ID_SUCCESS + (int)i);
	for (i = 0; i < s->n_failures; i++)
		run_expect_add(r, s->failures[i].message, ID_FAILURE + (int)i);
	if (prompt_ends_answer(r, st))
		run_expect_add_strv(r, block_of(r, st)->prompts, ID_PROMPT);
	st->wait = WAIT_ANSWER;
	run_expect(r, "test-interactive", 0);
}


static void next_step(struct run *r, struct interactive_state *st);

static void begin_step(struct run *r, struct interactive_state *st)
{
	const struct job_interactive_step *s = step_of(r, st);
	char *line;

	st->step_line = run_console_line(r);
	st->outcome = "pass";
	free(st->failure);
	st->failure = NULL;
	if (!s->command) {
		expect_answer(r, st);
		return;
	}
	if (asprintf(&line, "%s\n", s->command) < 0) {
		run_fail(r, ERROR_BUG, "out of memory");
		return;
	}
	run_flush_console(r);	/* a prompt left from an earlier step is no answer */
	run_send(r, line, board_device(run_board(r))->type->kernel.char_delay);
	free(line);
	if (block_of(r, st)->echo_discard) {
		run_expect_clear(r);
		run_expect_add_literal(r, s->command, ID_ECHO);
		st->wait = WAIT_ECHO;
		run_expect(r, "test-interactive", 0);
		return;
	}
	expect_answer(r, st);
}

static void next_step(struct run *r, struct interactive_state *st)
{
	const struct job_interactive *b;

	for (;;) {
		b = block_of(r, st);
		if (!b) {
			run_done(r);
			return;
		}
		if (st->step < b->n_steps)
			break;
		st->block++;
		st->step = 0;
	}
	begin_step(r, st);
}

static int interactive_start(struct run *r, void *state)
{
	next_step(r, state);
	return 0;
}

static void step_finished(struct run *r, struct interactive_state *st)
{
	record(r, st, st->outcome);
	st->step++;
	next_step(r, st);
}

/* A failure message matched.  Returns true when it ended the action (an exception). */
static bool on_failure(struct run *r, struct interactive_state *st,
		       const struct job_interactive_pattern *f, const struct match *m)
{
	enum error_type type = ERROR_TEST;

	st->outcome = "fail";
	free(st->failure);
	st->failure = strndup((const char *)m->text, m->len);
	run_log(r, "info", "failure message matched: %s", st->failure ? st->failure : "");
	if (!f->exception)
		return false;
	if (!strcmp(f->exception, "InfrastructureError"))
		type = ERROR_INFRASTRUCTURE;
	else if (!strcmp(f->exception, "JobError"))
		type = ERROR_JOB;
	record(r, st, "fail");
	run_fail(r, type, "%s", f->error ? f->error : st->failure);
	return true;	/* st is gone */
}

/* The prompt came while the step waited for its messages. */
static void on_early_prompt(struct run *r, struct interactive_state *st, const struct match *m)
{
	const struct job_interactive_step *s = step_of(r, st);

	if (!m->before_len || !memchr(m->before, '\n', m->before_len)) {
		/* the line editor redrew the prompt with the command being typed */
		expect_answer(r, st);
		return;
	}
	run_log(r, "info", "'%s' ended (the prompt came back) before any success or failure message",
		s->command);
	st->outcome = "fail";
	step_finished(r, st);
}

static void interactive_event(struct run *r, void *state, const struct run_event *ev)
{
	struct interactive_state *st = state;
	const struct job_interactive_step *s = step_of(r, st);

	if (ev->kind == RUN_EVENT_TIMEOUT) {
		record(r, st, "fail");
		run_fail_timeout(r, ERROR_TEST, "interactive test '%s': timed out waiting for %s%s%s%s",
				 block_of(r, st)->name,
				 st->wait == WAIT_PROMPT ? "a prompt" : "an answer",
				 s->command ? " to '" : "", s->command ? s->command : "",
				 s->command ? "'" : "");
		return;
	}
	if (ev->kind != RUN_EVENT_MATCH)
		return;
	if (ev->id == ID_ECHO) {
		expect_answer(r, st);
		return;
	}
	if (ev->id == ID_PROMPT && st->wait == WAIT_ANSWER) {
		on_early_prompt(r, st, ev->match);
		return;
	}
	if (ev->id >= ID_FAILURE && on_failure(r, st, &s->failures[ev->id - ID_FAILURE], ev->match))
		return;
	if (st->wait == WAIT_ANSWER && s->wait_for_prompt && strv_length(block_of(r, st)->prompts)) {
		expect_prompt(r, st);
		return;
	}
	step_finished(r, st);
}

static void interactive_stop(struct run *r, void *state)
{
	struct interactive_state *st = state;

	free(st->failure);
}

const struct action_ops action_test_interactive_ops = {
	.name = "test-interactive",
	.state_size = sizeof(struct interactive_state),
	.start = interactive_start,
	.event = interactive_event,
	.stop = interactive_stop,
};
