// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_deploy_fastboot.c -- deploy to: fastboot: flash each image to the
 * partition named by its label, over USB, from labd's loop
 *
 *  1. download the images into the job's image directory (the deploy action
 *     does it, decompression included: this action embeds it);
 *  2. find the board in fastboot mode by the serial number of its
 *     `fastboot` group; when it is not there, power-cycle it (if it has power
 *     control) and wait for it, at most the "fastboot" connection timeout;
 *  3. log getvar:product, then for each image: download it (progress every
 *     10 % in the job log) and flash:<label>; the device's INFO lines go to
 *     the job log.
 * The board stays in fastboot mode: `boot: method: fastboot` reboots it.
 * A FAIL answer is the job's error (wrong partition name, image too large);
 * a missing device or a transfer failure is an infrastructure error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "board/board.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/loop.h"
#include "drivers/usb.h"
#include "drivers/usb/fastboot.h"
#include "job/job.h"
#include "run/action.h"

#define FB_PROGRESS_STEP 10	/* percent between progress lines */
#define FB_VAR_MAX 64
#define FB_STAGE "fastboot"	/* connection timeout of the wait for the device */

enum fb_phase {
	FB_PHASE_DOWNLOAD,	/* the artifacts, from their URLs */
	FB_PHASE_POWER,		/* power-cycling the board into fastboot mode */
	FB_PHASE_WAIT,		/* for the device to appear */
	FB_PHASE_GETVAR,
	FB_PHASE_SEND,		/* download:%08x to the device */
	FB_PHASE_FLASH,
};

struct fb_state {
	struct run *run;
	void *deploy;		/* the embedded deploy action's state */
	bool deploy_started;
	enum fb_phase phase;
	struct fastboot_config cfg;
	bool has_cfg;
	struct usb *usb;
	struct usb_watch *watch;
	struct fastboot *fb;
	size_t image;		/* the artifact being flashed */
	int fd;
	unsigned next_percent;
};

static void fb_flash_next(struct fb_state *st);

static void fb_info(struct fastboot *fb, const char *text, void *userdata)
{
	struct fb_state *st = userdata;

	run_log(st->run, "info", "fastboot: %s", text);
}

static void fb_progress(struct fastboot *fb, uint64_t sent, uint64_t total, void *userdata)
{
	struct fb_state *st = userdata;
	unsigned percent = total ? (unsigned)(sent * 100 / total) : 100;

	if (percent < st->next_percent)
		return;
	run_log(st->run, "info", "fastboot: sent %u%% of '%s' (%llu of %llu KiB)", percent,
		run_action(st->run)->deploy.artifacts[st->image].label,
		(unsigned long long)(sent >> 10), (unsigned long long)(total >> 10));
	st->next_percent = percent - percent % FB_PROGRESS_STEP + FB_PROGRESS_STEP;
}

static void fb_done(struct fastboot *fb, int err, const char *reply, void *userdata)
{
	struct fb_state *st = userdata;

	run_async_done(st->run, err, reply);
}

static const struct fastboot_ops fb_ops = {
	.info = fb_info,
	.progress = fb_progress,
	.done = fb_done,
};

/* The downloaded file of artifact @i: the variable the deploy action set. */
static const char *fb_image_path(struct run *r, size_t i)
{
	const char *label = run_action(r)->deploy.artifacts[i].label;
	char var[FB_VAR_MAX];
	size_t n;

	for (n = 0; label[n] && n < sizeof(var) - 1; n++)
		var[n] = (char)(label[n] >= 'a' && label[n] <= 'z' ? label[n] - 32 : label[n]);
	var[n] = '\0';
	return kv_get(run_vars(r), var);
}

static void fb_send_image(struct fb_state *st)
{
	struct run *r = st->run;
	const char *path = fb_image_path(r, st->image);
	struct stat sb;
	int err;

	if (!path || (st->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(st->fd, &sb) < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot open image '%s': %s",
			 path ? path : "?", strerror(path ? errno : ENOENT));
		return;
	}
	st->phase = FB_PHASE_SEND;
	st->next_percent = FB_PROGRESS_STEP;
	run_log(r, "info", "fastboot: sending '%s' (%lld bytes)",
		run_action(r)->deploy.artifacts[st->image].label, (long long)sb.st_size);
	err = fastboot_download(st->fb, st->fd, (uint64_t)sb.st_size, &fb_ops, st);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot send '%s' to fastboot: %s", path,
			 strerror(-err));
}

static void fb_flash(struct fb_state *st)
{
	const char *label = run_action(st->run)->deploy.artifacts[st->image].label;
	char cmd[FASTBOOT_COMMAND_MAX + 1];
	int err;

	close(st->fd);
	st->fd = -1;
	st->phase = FB_PHASE_FLASH;
	snprintf(cmd, sizeof(cmd), "flash:%s", label);
	run_log(st->run, "info", "fastboot: %s", cmd);
	err = fastboot_command(st->fb, cmd, &fb_ops, st);
	if (err < 0)
		run_fail(st->run, ERROR_INFRASTRUCTURE, "cannot send '%s': %s", cmd,
			 strerror(-err));
}

static void fb_flash_next(struct fb_state *st)
{
	if (st->image < run_action(st->run)->deploy.n_artifacts)
		fb_send_image(st);
	else
		run_done(st->run);
}

/* Open the board in fastboot mode; -ENODEV while it is not there. */
static int fb_open(struct fb_state *st)
{
	int err = fastboot_open(st->usb, &st->cfg, &st->fb);

	if (err == -ENODEV)
		return err;
	if (err < 0) {
		run_fail(st->run, ERROR_INFRASTRUCTURE, "cannot open the board in fastboot mode (serial '%s'): %s",
			 st->cfg.match.serial, strerror(-err));
		return err;
	}
	st->watch = usb_watch_free(st->watch);
	st->phase = FB_PHASE_GETVAR;
	err = fastboot_command(st->fb, "getvar:product", &fb_ops, st);
	if (err < 0)
		run_fail(st->run, ERROR_INFRASTRUCTURE, "cannot send 'getvar:product': %s",
			 strerror(-err));
	return err;
}

static void fb_presence(bool present, void *userdata)
{
	struct fb_state *st = userdata;

	if (present && st->phase == FB_PHASE_WAIT && !st->fb)
		fb_open(st);
}

/* Wait for the board to show up in fastboot mode, within the stage's connection timeout. */
static void fb_wait(struct fb_state *st)
{
	struct run *r = st->run;
	int err;

	st->phase = FB_PHASE_WAIT;
	run_log(r, "info", "fastboot: waiting for the board (serial '%s')", st->cfg.match.serial);
	run_wake_at(r, run_now(r) + job_connection_timeout(run_job(r), FB_STAGE));
	err = usb_watch_add(st->usb, &st->cfg.match, fb_presence, st, &st->watch);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot watch for the board: %s", strerror(-err));
}

static void fb_find_board(struct fb_state *st)
{
	struct run *r = st->run;
	int err;

	if (fb_open(st) != -ENODEV)
		return;
	if (!board_power(run_board(r))) {
		fb_wait(st);
		return;
	}
	run_log(r, "info", "fastboot: board not in fastboot mode: power-cycling it");
	st->phase = FB_PHASE_POWER;
	err = run_power(r, POWER_CYCLE);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot power-cycle the board: %s",
			 strerror(-err));
}

int action_fastboot_config(struct run *r, struct fastboot_config *cfg)
{
	const struct device *dev = board_device(run_board(r));
	struct diag diag = DIAG_INIT;
	char *msg;
	int err;

	if (!dev->fastboot) {
		run_fail(r, ERROR_INFRASTRUCTURE,
			 "board '%s' has no 'fastboot' group: it cannot use fastboot", dev->name);
		return -ENOENT;
	}
	err = fastboot_config_parse(dev->fastboot, cfg, &diag);
	if (err < 0) {
		msg = diag_join(&diag);
		run_fail(r, ERROR_INFRASTRUCTURE, "%s", msg ? msg : strerror(-err));
		free(msg);
	}
	diag_release(&diag);
	return err;
}

/* The `fastboot` group of the board, parsed at the start of the action. */
static int fb_config(struct fb_state *st)
{
	int r = action_fastboot_config(st->run, &st->cfg);

	st->has_cfg = r == 0;
	if (r >= 0)
		r = usb_get(run_loop(st->run), &st->usb);
	return r;
}

static int fb_start(struct run *r, void *state)
{
	struct fb_state *st = state;

	st->run = r;
	st->fd = -1;
	if (fb_config(st) < 0)
		return 0;
	st->deploy = calloc(1, action_deploy_ops.state_size);
	if (!st->deploy)
		return -ENOMEM;
	st->phase = FB_PHASE_DOWNLOAD;
	st->deploy_started = true;
	return action_deploy_ops.start(r, st->deploy);
}

/* A step of the device ended well. */
static void fb_step_done(struct fb_state *st, const char *reply)
{
	switch (st->phase) {
	case FB_PHASE_DOWNLOAD:
		fb_find_board(st);
		break;
	case FB_PHASE_GETVAR:
		run_log(st->run, "info", "fastboot: product '%s'", reply);
		fb_flash_next(st);
		break;
	case FB_PHASE_SEND:
		fb_flash(st);
		break;
	case FB_PHASE_FLASH:
		st->image++;
		fb_flash_next(st);
		break;
	default:
		break;
	}
}

static void fb_event(struct run *r, void *state, const struct run_event *ev)
{
	struct fb_state *st = state;

	switch (ev->kind) {
	case RUN_EVENT_DONE:
		if (!ev->err)
			fb_step_done(st, ev->msg);
		else if (ev->err == -EREMOTEIO && st->phase == FB_PHASE_FLASH)
			run_fail(r, ERROR_JOB, "%s", ev->msg);	/* FAIL from the bootloader */
		else
			run_fail(r, ERROR_INFRASTRUCTURE, "%s", ev->msg);
		break;
	case RUN_EVENT_POWER:
		if (st->phase != FB_PHASE_POWER)
			break;
		if (ev->err)
			run_fail(r, ERROR_INFRASTRUCTURE, "cannot power-cycle the board: %s",
				 ev->msg);
		else
			fb_wait(st);
		break;
	case RUN_EVENT_WAKE:
		if (st->phase == FB_PHASE_WAIT)
			run_fail(r, ERROR_INFRASTRUCTURE,
				 "the board did not show up in fastboot mode (serial '%s')",
				 st->cfg.match.serial);
		break;
	default:
		break;
	}
}

static void fb_stop(struct run *r, void *state)
{
	struct fb_state *st = state;

	if (st->deploy_started)
		action_deploy_ops.stop(r, st->deploy);
	free(st->deploy);
	fastboot_close(st->fb);
	usb_watch_free(st->watch);
	usb_unref(st->usb);
	if (st->fd >= 0)
		close(st->fd);
	if (st->has_cfg)
		fastboot_config_release(&st->cfg);
}

const struct action_ops action_deploy_fastboot_ops = {
	.name = "deploy-fastboot",
	.state_size = sizeof(struct fb_state),
	.start = fb_start,
	.event = fb_event,
	.stop = fb_stop,
};
