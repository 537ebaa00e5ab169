/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * imagefs.h -- an archive written into an ext2/3/4 file system image, in user space
 *
 * LAVA's apply-overlay puts the test overlay (and the deploy's kernel
 * modules) into a root file system image by mounting it.  labd needs no
 * mount and no loop device: a child process (core/worker.h) reads the
 * archive with libarchive and writes each entry into the image with
 * libext2fs, as e2fsprogs' own tools do:
 *
 *   - directories are created as needed, and an existing one is kept;
 *     a symbolic link met on the way is followed inside the image (Debian's
 *     merged /usr: "lib/modules/..." goes to usr/lib/modules when lib is a
 *     link to usr/lib), never replaced;
 *   - regular files and symbolic links replace what the image has at their
 *     path (a directory there is an error);
 *   - every entry belongs to root, with the archive's permission bits;
 *   - names with "..", absolute names outside "/", hard links, devices and
 *     FIFOs are refused.
 *
 * The image must be the job's own copy (the caller's concern: a file linked
 * with the download cache is copied first, IMAGEFS_COPY); an image whose
 * journal needs recovery is refused (it was not cleanly unmounted).
 */
#ifndef LABD_IMAGEFS_H
#define LABD_IMAGEFS_H

#include <stdint.h>

struct loop;
struct imagefs_write;

enum {
	IMAGEFS_COPY = 1,	/* copy the image to a new file of the same name first
				 * (cp --sparse=always): it shares its data with another */
};

/** The result: @err 0 with @files and @bytes written, or a negative errno and @msg. */
typedef void (*imagefs_fn)(struct imagefs_write *w, int err, const char *msg, uint64_t files,
			   uint64_t bytes, void *userdata);

/**
 * imagefs_write_start() - write the archive @archive (any format and
 * compression libarchive reads) into the image @image, below @prefix
 * ("" or "/" for its root; "usr" ...)
 *
 * @fn is called once from the loop, unless imagefs_write_free() came first.
 * Returns 0 or a negative errno.
 */
int imagefs_write_start(struct loop *l, const char *image, const char *archive,
			const char *prefix, int flags, imagefs_fn fn, void *userdata,
			struct imagefs_write **ret);

/** imagefs_write_free() - kill the child if it runs; accepts NULL; returns NULL. */
struct imagefs_write *imagefs_write_free(struct imagefs_write *w);

#endif
