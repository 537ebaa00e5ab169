/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_prepare.h -- what the test-definitions action types before the
 * definitions run: the overlay's delivery and the job's secrets
 *
 * Each command is typed on its own and answered by a shell prompt.  The
 * last overlay command prints TEST_OVERLAY_OK only when /lava-<job>/bin is
 * on the board: the action waits for that or fails with the board's last
 * line.  The typed text never holds the marker itself ($((6*7)) makes it),
 * so the shell's echo cannot be mistaken for it.
 */
#ifndef LABD_TEST_PREPARE_H
#define LABD_TEST_PREPARE_H

#include <stddef.h>
#include <stdint.h>

#include "overlay/overlay_build.h"

struct job_boot;
struct kv;

#define TEST_OVERLAY_OK "labd-overlay-ok-42"
#define TEST_BASE64_LINE 64	/* base64 characters per line of a typed overlay */

struct test_overlay_how {
	enum overlay_delivery delivery;
	int64_t job_id;
	const struct job_boot *boot;	/* TRANSFER: download_command, unpack_command */
	const char *url;		/* TRANSFER: where the board downloads it */
	const char *path;		/* TYPED: the tar.gz on the lab host */
};

/**
 * test_overlay_commands() - commands putting the overlay on the board, the
 * check last (strv in @ret, caller frees).  Returns 0, -EFBIG (TYPED: the
 * overlay is larger than OVERLAY_TYPED_MAX) or another negative errno;
 * @err says why.
 */
int test_overlay_commands(const struct test_overlay_how *how, char ***ret, char *err,
			  size_t errlen);

/**
 * test_secrets_commands() - "export NAME='value'", one per secret, between
 * "stty -echo" and "stty echo" (appended to the strv @ret; none without secrets).
 */
int test_secrets_commands(const struct kv *secrets, char ***ret);

#endif
