/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * overlay.h -- the test overlay archive: files for the board, streamed to disk
 *
 * What a job's test definitions need on the board (labd's helper scripts,
 * each definition's run script, the trees of their git repositories, the
 * deploy's kernel modules) becomes one archive, written with libarchive:
 *
 *   OVERLAY_CPIO_GZ  newc cpio, gzip: appended to a ramdisk (the kernel
 *                    unpacks concatenated archives into the same rootfs)
 *   OVERLAY_TAR_GZ   ustar (pax when a name needs it), gzip: downloaded and
 *                    unpacked by the board, or typed on its console
 *
 * Entries are written as they are added and never kept: memory stays flat
 * whatever the overlay's size.  Paths are relative to the board's root
 * ("lava-42/bin/lava-test-case"); each file's parent directories are added
 * before it, once (the kernel's initramfs unpacker creates nothing
 * implicitly).  Everything belongs to root; modes come from the caller or
 * the imported archive.
 *
 * Another archive (the tar of a repository's tree, a modules tarball in any
 * compression libarchive reads) is imported under a prefix a bounded amount
 * of work at a time, so the loop stays responsive while a large tree is
 * copied: overlay_import_step() until it returns 0.  Names with "..", hard
 * links and device nodes are refused.  One file of it may also be captured
 * in memory (the test definition a job names by path).
 *
 * Errors: every function returns 0 or a negative errno, and the reason is in
 * overlay_error() ("cannot write '/x/overlay.cpio.gz': No space left").
 */
#ifndef LABD_OVERLAY_H
#define LABD_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct overlay;
struct overlay_import;
struct strbuf;

enum overlay_format {
	OVERLAY_CPIO_GZ,
	OVERLAY_TAR_GZ,
};

#define OVERLAY_GZIP_LEVEL 3		/* fast: the overlay is built while a job waits */
#define OVERLAY_IMPORT_CHUNK 65536	/* bytes read from an imported archive at once */
#define OVERLAY_ENTRY_COST 4096		/* budget one entry costs, however small */

/** overlay_open() - start a new archive at @path (replaced). */
int overlay_open(const char *path, enum overlay_format fmt, struct overlay **ret);

/** overlay_add_dir() - a directory (and its parents) unless already added. */
int overlay_add_dir(struct overlay *o, const char *path, mode_t mode);

/** overlay_add_file() - a regular file holding @len bytes of @data. */
int overlay_add_file(struct overlay *o, const char *path, mode_t mode, const void *data,
		     size_t len);

/** overlay_add_symlink() - a symbolic link to @target. */
int overlay_add_symlink(struct overlay *o, const char *path, const char *target);

/** overlay_close() - finish the archive and free @o; returns its first error. */
int overlay_close(struct overlay *o);

/** overlay_abort() - free @o and remove its file; accepts NULL. */
void overlay_abort(struct overlay *o);

/** overlay_error() - the reason of the first failure (borrowed), "" if none. */
const char *overlay_error(const struct overlay *o);

/** overlay_bytes() - bytes of file data added so far (before compression). */
uint64_t overlay_bytes(const struct overlay *o);

/**
 * overlay_import_open() - import the archive @path under @prefix ("" for the root)
 * @ret: freed with overlay_import_free(), which may be called any time
 */
int overlay_import_open(struct overlay *o, const char *path, const char *prefix,
			struct overlay_import **ret);

/**
 * overlay_import_capture() - also copy the file @name (as named in the
 * imported archive, without a leading "./") into @out, up to @max bytes;
 * larger is an error (-E2BIG).  overlay_import_captured() tells whether it
 * was seen.
 */
void overlay_import_capture(struct overlay_import *imp, const char *name, size_t max,
			    struct strbuf *out);
bool overlay_import_captured(const struct overlay_import *imp);

/**
 * overlay_import_step() - copy about @budget bytes (an entry costs at least
 * OVERLAY_ENTRY_COST).  Returns 1 while there is more, 0 when the archive
 * was copied, or a negative errno (reason in overlay_error()).
 */
int overlay_import_step(struct overlay_import *imp, size_t budget);

/** overlay_import_free() - accepts NULL; returns NULL. */
struct overlay_import *overlay_import_free(struct overlay_import *imp);

#endif
