// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_boot_fastboot.c -- boot: method: fastboot: reboot the board out of
 * fastboot mode into what was flashed, then wait for its login and shell
 * prompts (as the minimal boot)
 *
 * The board must be in fastboot mode, as a deploy to fastboot leaves it: it
 * is found by the serial number of its `fastboot` group and gets "reboot";
 * then the console is watched from the kernel on (boot_login.h).  A board
 * not in fastboot mode is an infrastructure error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/diag.h"
#include "drivers/usb.h"
#include "drivers/usb/fastboot.h"
#include "job/job.h"
#include "run/action.h"
#include "run/boot_login.h"

struct fb_boot_state {
	struct run *run;
	struct fastboot_config cfg;
	bool has_cfg;
	struct usb *usb;
	struct fastboot *fb;
	bool rebooting;
	struct boot_login login;
};

static void fb_boot_info(struct fastboot *fb, const char *text, void *userdata)
{
	struct fb_boot_state *st = userdata;

	run_log(st->run, "info", "fastboot: %s", text);
}

static void fb_boot_done(struct fastboot *fb, int err, const char *reply, void *userdata)
{
	struct fb_boot_state *st = userdata;

	run_async_done(st->run, err, reply);
}

static const struct fastboot_ops fb_boot_ops = {
	.info = fb_boot_info,
	.done = fb_boot_done,
};

static int fb_boot_config(struct fb_boot_state *st)
{
	int r = action_fastboot_config(st->run, &st->cfg);

	st->has_cfg = r == 0;
	return r;
}

static int fb_boot_start(struct run *r, void *state)
{
	struct fb_boot_state *st = state;
	int err;

	st->run = r;
	if (fb_boot_config(st) < 0)
		return 0;
	err = usb_get(run_loop(r), &st->usb);
	if (err >= 0)
		err = fastboot_open(st->usb, &st->cfg, &st->fb);
	if (err == -ENODEV) {
		run_fail(r, ERROR_INFRASTRUCTURE, "the board is not in fastboot mode (serial '%s')",
			 st->cfg.match.serial);
		return 0;
	}
	if (err < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot open the board in fastboot mode: %s",
			 strerror(-err));
		return 0;
	}
	run_flush_console(r);
	run_log(r, "info", "fastboot: reboot");
	st->rebooting = true;
	err = fastboot_command(st->fb, "reboot", &fb_boot_ops, st);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot send 'reboot': %s", strerror(-err));
	return 0;
}

static void fb_boot_event(struct run *r, void *state, const struct run_event *ev)
{
	struct fb_boot_state *st = state;

	if (!st->rebooting) {
		boot_login_event(r, &st->login, ev);
		return;
	}
	if (ev->kind != RUN_EVENT_DONE)
		return;
	st->rebooting = false;
	st->fb = fastboot_close(st->fb);
	if (ev->err) {
		run_fail(r, ERROR_INFRASTRUCTURE, "%s", ev->msg);
		return;
	}
	run_phase(r, "power-on");
	boot_login_start(r, &st->login, &run_action(r)->boot, false);
}

static void fb_boot_stop(struct run *r, void *state)
{
	struct fb_boot_state *st = state;

	fastboot_close(st->fb);
	usb_unref(st->usb);
	if (st->has_cfg)
		fastboot_config_release(&st->cfg);
}

const struct action_ops action_boot_fastboot_ops = {
	.name = "boot-fastboot",
	.state_size = sizeof(struct fb_boot_state),
	.start = fb_boot_start,
	.event = fb_boot_event,
	.stop = fb_boot_stop,
};
