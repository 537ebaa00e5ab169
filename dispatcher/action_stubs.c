// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_stubs.c -- actions whose real implementation is being written:
 * they fail clearly instead of pretending to work.  Each entry disappears
 * when its file (action_boot_qemu.c) lands.
 */
#include "action.h"

static int not_implemented(struct run *r, void *state)
{
	run_fail(r, ERROR_BUG, "this action is not implemented in this build of labd");
	return 0;
}

static void no_event(struct run *r, void *state, const struct run_event *ev)
{
}


const struct action_ops action_boot_qemu_ops = {
	.name = "boot-qemu",
	.start = not_implemented,
	.event = no_event,
};
