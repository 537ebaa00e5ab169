// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_deploy_sdmux.c -- deploy to: sdmux: write the job's image to the
 * board's SD card through its SD-mux
 *
 *  1. download the one image into the job's image directory (the deploy
 *     action does it, decompression included: this action embeds it);
 *  2. power the board off (its card is about to change hands);
 *  3. switch the card to the host and wait for its block device (`disk` of
 *     the board's `sdmux` group) to show up with a medium;
 *  4. write the image in a child process (image_writer.h), progress in the
 *     job log every 10 %, then read it back and compare SHA-256;
 *  5. switch the card to the board.
 * The board is booted by the next action (boot: method: minimal).  Every
 * failure is an infrastructure error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "board/board.h"
#include "core/kv.h"
#include "core/loop.h"
#include "drivers/sdmux.h"
#include "job/job.h"
#include "run/action.h"
#include "run/image_writer.h"

#define SDMUX_DISK_WAIT (30 * USEC_PER_SEC)	/* the card's block device appears */
#define SDMUX_DISK_POLL (250 * USEC_PER_MSEC)
#define SDMUX_PROGRESS_STEP 10			/* percent between progress lines */
#define SDMUX_VAR_MAX 64

enum sdmux_phase {
	SDMUX_PHASE_DOWNLOAD,
	SDMUX_PHASE_POWER_OFF,
	SDMUX_PHASE_TO_HOST,
	SDMUX_PHASE_WAIT_DISK,
	SDMUX_PHASE_WRITE,
	SDMUX_PHASE_TO_DUT,
};

struct sdmux_state {
	struct run *run;
	void *deploy;		/* the embedded deploy action's state */
	bool deploy_started;
	enum sdmux_phase phase;
	struct sdmux *mux;
	char *image;
	uint64_t disk_deadline;
	struct image_writer *writer;
	unsigned next_percent[2];	/* write, verify */
};

static void deploy_sdmux_switched(struct sdmux *m, int err, const char *msg, void *userdata)
{
	struct sdmux_state *st = userdata;

	run_async_done(st->run, err, msg);
}

static void deploy_sdmux_switch(struct run *r, struct sdmux_state *st, enum sdmux_mode mode)
{
	int err;

	st->phase = mode == SDMUX_HOST ? SDMUX_PHASE_TO_HOST : SDMUX_PHASE_TO_DUT;
	run_log(r, "info", "sdmux: switching the SD card to %s", sdmux_mode_name(mode));
	err = sdmux_switch(st->mux, mode, deploy_sdmux_switched, st);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot switch the SD card to %s: %s",
			 sdmux_mode_name(mode), strerror(-err));
}

/* The downloaded image: the variable the deploy action set for its label. */
static int deploy_sdmux_find_image(struct run *r, struct sdmux_state *st)
{
	const struct job_artifact *a = &run_action(r)->deploy.artifacts[0];
	char var[SDMUX_VAR_MAX];
	const char *path;
	size_t i;

	for (i = 0; a->label[i] && i < sizeof(var) - 1; i++)
		var[i] = (char)(a->label[i] >= 'a' && a->label[i] <= 'z' ? a->label[i] - 32 :
				a->label[i]);
	var[i] = '\0';
	path = kv_get(run_vars(r), var);
	if (!path) {
		run_fail(r, ERROR_BUG, "deploy left no {%s} for the image", var);
		return -ENOENT;
	}
	st->image = strdup(path);
	return st->image ? 0 : -ENOMEM;
}

static void deploy_sdmux_downloaded(struct run *r, struct sdmux_state *st)
{
	int err;

	if (deploy_sdmux_find_image(r, st) < 0)
		return;
	if (!board_power(run_board(r))) {
		deploy_sdmux_switch(r, st, SDMUX_HOST);
		return;
	}
	st->phase = SDMUX_PHASE_POWER_OFF;
	err = run_power(r, POWER_OFF);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot power the board off: %s", strerror(-err));
}

/* The card's block device is there with a medium: 1; not yet: 0; unusable: < 0. */
static int deploy_sdmux_disk_ready(const char *disk, uint64_t image_size)
{
	struct stat st;
	off_t size;
	int fd = open(disk, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return errno == ENOENT || errno == ENOMEDIUM || errno == ENXIO ? 0 : -errno;
	size = lseek(fd, 0, SEEK_END);
	if (fstat(fd, &st) < 0)
		size = -1;
	close(fd);
	if (S_ISREG(st.st_mode))
		return 1;	/* a file standing for the card (fake mux, emulators) */
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (size <= 0)
		return 0;
	return (uint64_t)size < image_size ? -ENOSPC : 1;
}

static void on_writer_progress(struct image_writer *w, const char *phase, uint64_t done,
			       uint64_t total, void *userdata)
{
	struct sdmux_state *st = userdata;
	struct run *r = st->run;
	unsigned *next = &st->next_percent[phase[0] == 'v'];
	unsigned percent = total ? (unsigned)(done * 100 / total) : 100;

	if (percent < *next)
		return;
	run_log(r, "info", "sdmux: %s %u%% (%llu of %llu MiB)", phase[0] == 'v' ?
		"verifying" : "writing", percent, (unsigned long long)(done >> 20),
		(unsigned long long)(total >> 20));
	*next = percent - percent % SDMUX_PROGRESS_STEP + SDMUX_PROGRESS_STEP;
}

static void on_writer_done(struct image_writer *w, int err, const char *msg, void *userdata)
{
	struct sdmux_state *st = userdata;

	run_async_done(st->run, err, msg);
}

static const struct image_writer_ops deploy_sdmux_writer_ops = {
	.progress = on_writer_progress,
	.done = on_writer_done,
};

static void deploy_sdmux_write(struct run *r, struct sdmux_state *st)
{
	const char *disk = sdmux_disk(st->mux);
	int err;

	st->phase = SDMUX_PHASE_WRITE;
	run_log(r, "info", "sdmux: writing '%s' to '%s'", st->image, disk);
	err = image_writer_start(run_loop(r), st->image, disk, &deploy_sdmux_writer_ops, st,
				 &st->writer);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot start writing '%s' to '%s': %s",
			 st->image, disk, strerror(-err));
}

static void deploy_sdmux_poll_disk(struct run *r, struct sdmux_state *st)
{
	const char *disk = sdmux_disk(st->mux);
	struct stat img;
	int ready;

	if (stat(st->image, &img) < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "image '%s' vanished: %s", st->image,
			 strerror(errno));
		return;
	}
	ready = deploy_sdmux_disk_ready(disk, (uint64_t)img.st_size);
	if (ready > 0) {
		deploy_sdmux_write(r, st);
	} else if (ready == -ENOSPC) {
		run_fail(r, ERROR_JOB, "image '%s' (%lld bytes) is larger than the SD card '%s'",
			 st->image, (long long)img.st_size, disk);
	} else if (ready < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot open SD card '%s': %s", disk,
			 strerror(-ready));
	} else if (run_now(r) >= st->disk_deadline) {
		run_fail(r, ERROR_INFRASTRUCTURE, "SD card '%s' did not show up within %llu s",
			 disk, SDMUX_DISK_WAIT / USEC_PER_SEC);
	} else {
		run_wake_at(r, run_now(r) + SDMUX_DISK_POLL);
	}
}

static int deploy_sdmux_start(struct run *r, void *state)
{
	struct sdmux_state *st = state;

	st->run = r;
	st->mux = board_sdmux(run_board(r));
	if (!st->mux) {
		run_fail(r, ERROR_INFRASTRUCTURE,
			 "board '%s' has no 'sdmux' group: it cannot deploy to sdmux",
			 board_name(run_board(r)));
		return 0;
	}
	st->deploy = calloc(1, action_deploy_ops.state_size);
	if (!st->deploy)
		return -ENOMEM;
	st->phase = SDMUX_PHASE_DOWNLOAD;
	st->deploy_started = true;
	return action_deploy_ops.start(r, st->deploy);
}

/* A RUN_EVENT_DONE: the download, a switch, or the writer finished. */
static void deploy_sdmux_step_done(struct run *r, struct sdmux_state *st,
				   const struct run_event *ev)
{
	if (ev->err) {
		run_fail(r, ERROR_INFRASTRUCTURE, "%s", ev->msg);
		return;
	}
	switch (st->phase) {
	case SDMUX_PHASE_DOWNLOAD:
		deploy_sdmux_downloaded(r, st);
		break;
	case SDMUX_PHASE_TO_HOST:
		st->phase = SDMUX_PHASE_WAIT_DISK;
		st->disk_deadline = run_now(r) + SDMUX_DISK_WAIT;
		deploy_sdmux_poll_disk(r, st);
		break;
	case SDMUX_PHASE_WRITE:
		st->writer = image_writer_free(st->writer);
		run_log(r, "info", "sdmux: image written and verified, sha256 %s", ev->msg);
		deploy_sdmux_switch(r, st, SDMUX_DUT);
		break;
	case SDMUX_PHASE_TO_DUT:
		run_done(r);
		break;
	default:
		break;
	}
}

static void deploy_sdmux_event(struct run *r, void *state, const struct run_event *ev)
{
	struct sdmux_state *st = state;

	if (ev->kind == RUN_EVENT_DONE) {
		deploy_sdmux_step_done(r, st, ev);
	} else if (ev->kind == RUN_EVENT_POWER && st->phase == SDMUX_PHASE_POWER_OFF) {
		if (ev->err)
			run_fail(r, ERROR_INFRASTRUCTURE, "cannot power the board off: %s",
				 ev->msg);
		else
			deploy_sdmux_switch(r, st, SDMUX_HOST);
	} else if (ev->kind == RUN_EVENT_WAKE && st->phase == SDMUX_PHASE_WAIT_DISK) {
		deploy_sdmux_poll_disk(r, st);
	}
}

static void deploy_sdmux_stop(struct run *r, void *state)
{
	struct sdmux_state *st = state;

	if (st->deploy_started)
		action_deploy_ops.stop(r, st->deploy);
	free(st->deploy);
	if (st->mux)
		sdmux_abort(st->mux);
	image_writer_free(st->writer);
	free(st->image);
}

const struct action_ops action_deploy_sdmux_ops = {
	.name = "deploy-sdmux",
	.state_size = sizeof(struct sdmux_state),
	.start = deploy_sdmux_start,
	.event = deploy_sdmux_event,
	.stop = deploy_sdmux_stop,
};
