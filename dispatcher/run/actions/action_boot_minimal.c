// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_minimal.c -- the minimal boot: power the board on (a power
 * cycle, unless `reset: false`) and wait for its login and shell prompts
 *
 * For boards that boot by themselves (firmware in flash, an SD card prepared
 * earlier) or whose bootloader the lab does not drive.
 */
#include "run/action.h"
#include "board/board.h"
#include "job/job.h"
#include "run/boot_login.h"

static int minimal_start(struct run *r, void *state)
{
	struct boot_login *bl = state;
	const struct job_boot *boot = &run_action(r)->boot;

	if (!boot->reset || !board_power(run_board(r))) {
		if (boot->reset)
			run_log(r, "warning", "board has no power control: not resetting it");
		boot_login_start(r, bl, boot, false);
		return 0;
	}
	boot_login_power_cycle(r, bl, boot, "power-cycle the board");
	return 0;
}

static void minimal_event(struct run *r, void *state, const struct run_event *ev)
{
	boot_login_event(r, state, ev);
}

const struct action_ops action_boot_minimal_ops = {
	.name = "boot-minimal",
	.state_size = sizeof(struct boot_login),
	.start = minimal_start,
	.event = minimal_event,
};
