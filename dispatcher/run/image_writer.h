/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_writer.h -- write an image to a card's block device, then read it back
 *
 * Writing gigabytes to an SD card takes minutes of blocking I/O, which the
 * loop must never do: a child process forked for the job does it and reports
 * on a pipe the loop watches.  The child writes the image in
 * IMAGE_WRITER_CHUNK pieces (hashing them with SHA-256), fsync()s, drops the
 * device's cached pages, reads the same length back (O_DIRECT when the
 * device allows it) and compares the hashes.  Regular files work too (tests,
 * a disk image for a board emulator).
 *
 * Protocol:
 *  1. image_writer_start() forks the child; -errno if it cannot.
 *  2. ->progress(w, phase, done, total) from the loop, after each chunk of
 *     the "write" phase, then of the "verify" phase.
 *  3. ->done(w, err, msg) exactly once: 0 with msg = the image's SHA-256 in
 *     hex, or a negative errno with a one-line reason ("verify failed: ...").
 *  4. image_writer_free() at any time kills the child (no callback after).
 */
#ifndef LABD_IMAGE_WRITER_H
#define LABD_IMAGE_WRITER_H

#include <stdint.h>

struct loop;
struct image_writer;

#define IMAGE_WRITER_CHUNK (4 * 1024 * 1024)
#define IMAGE_WRITER_ALIGN 4096		/* O_DIRECT buffers and lengths */
#define IMAGE_WRITER_LINE_MAX 512	/* bytes of one report line from the child */

struct image_writer_ops {
	/** optional: @phase is "write" or "verify" */
	void (*progress)(struct image_writer *w, const char *phase, uint64_t done, uint64_t total,
			 void *userdata);
	/** required */
	void (*done)(struct image_writer *w, int err, const char *msg, void *userdata);
};

/**
 * image_writer_start() - write file @src to @dst (a block device or a file)
 * Returns 0 or a negative errno (-ENOENT: @src missing).  Free with
 * image_writer_free().
 */
int image_writer_start(struct loop *l, const char *src, const char *dst,
		       const struct image_writer_ops *ops, void *userdata,
		       struct image_writer **ret);

/** image_writer_free() - kill the child if it runs; accepts NULL; returns NULL. */
struct image_writer *image_writer_free(struct image_writer *w);

#endif
