// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_minimal.c -- the minimal boot: power the board on (a power
 * cycle, unless `reset: false`) and wait for its login and shell prompts
 *
 * For boards that boot by themselves (firmware in flash, an SD card prepared
 * earlier) or whose bootloader the lab does not drive.
 */
#include <string.h>

#include "action.h"
#include "board.h"
#include "boot_login.h"
#include "job.h"

struct minimal_state {
	bool powering;
	struct boot_login login;
};

static int minimal_start(struct run *r, void *state)
{
	struct minimal_state *st = state;
	const struct job_boot *boot = &run_action(r)->boot;
	int err;

	if (!boot->reset || !board_power(run_board(r))) {
		if (boot->reset)
			run_log(r, "warning", "board has no power control: not resetting it");
		boot_login_start(r, &st->login, boot, false);
		return 0;
	}
	st->powering = true;
	run_flush_console(r);
	err = run_power(r, POWER_CYCLE);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot power-cycle the board: %s",
			 strerror(-err));
	return 0;
}

static void minimal_event(struct run *r, void *state, const struct run_event *ev)
{
	struct minimal_state *st = state;

	if (st->powering) {
		if (ev->kind != RUN_EVENT_POWER)
			return;
		st->powering = false;
		run_phase(r, "power-on");
		boot_login_start(r, &st->login, &run_action(r)->boot, false);
		return;
	}
	boot_login_event(r, &st->login, ev);
}

const struct action_ops action_boot_minimal_ops = {
	.name = "boot-minimal",
	.state_size = sizeof(struct minimal_state),
	.start = minimal_start,
	.event = minimal_event,
};
