/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * logzst.h -- a finished job's log files, compressed with zstd and read at
 * any offset in bounded memory
 *
 * A log file NAME (console.log, console.idx, labd.log: joblog.h) of a
 * finished job is compressed into NAME.zst, in zstd's seekable format:
 * independent zstd frames of LOGZST_FRAME bytes of the file each, then a
 * skippable frame holding the seek table (each frame's compressed and
 * decompressed size).  `zstd -d NAME.zst` gives the file back as it was,
 * and a reader reaches any offset by decompressing one frame at most, so
 * memory stays at one frame's window and two buffers whatever the size.
 * libzstd does every compression; this file only frames the output.
 *
 * Writing goes in steps (one frame per call of logzst_writer_step()), so
 * that labd compresses a big log a piece per loop turn without stalling
 * the consoles.  The compressed file is written as NAME.zst.tmp.PID, then
 * renamed over NAME.zst and NAME is unlinked: at every moment one complete
 * copy is there, and readers (which look for NAME first, then NAME.zst)
 * always find the same bytes.
 */
#ifndef LABD_LOGZST_H
#define LABD_LOGZST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LOGZST_SUFFIX ".zst"
#define LOGZST_FRAME (256 * 1024)	/* bytes of the file per frame */
#define LOGZST_DEFAULT_LEVEL 3

/* ---- reading ---- */

struct logzst;

/**
 * logzst_open() - open the compressed file @path for reading
 *
 * Reads its seek table (16 bytes per frame in memory).  Returns 0, -ENOENT,
 * -EINVAL (not in the seekable format), -EIO or -ENOMEM.
 */
int logzst_open(const char *path, struct logzst **ret);

/** logzst_close() - accepts NULL; returns NULL. */
struct logzst *logzst_close(struct logzst *z);

/** logzst_size() - the decompressed size. */
uint64_t logzst_size(const struct logzst *z);

/**
 * logzst_pread() - up to @len decompressed bytes at @offset into @buf
 *
 * Reading on from where the last read stopped continues the decompression;
 * another offset starts again at the frame that holds it.  Returns the
 * bytes read (0 at the end) or a negative errno (-EIO: a corrupt file).
 */
ssize_t logzst_pread(struct logzst *z, void *buf, size_t len, uint64_t offset);

/* ---- writing ---- */

struct logzst_writer;

/**
 * logzst_writer_new() - compress file @path into @path.zst, in steps
 * @level: zstd's compression level (1..19)
 *
 * Returns 0, -ENOENT (no @path) or another negative errno.
 */
int logzst_writer_new(const char *path, int level, struct logzst_writer **ret);

/**
 * logzst_writer_step() - compress the next frame; at the end write the seek
 * table
 *
 * Returns 1 when the compressed file is complete (logzst_writer_commit()
 * next), 0 when there is more to do, or a negative errno (free the writer:
 * the temporary file is removed and @path kept).
 */
int logzst_writer_step(struct logzst_writer *w);

/**
 * logzst_writer_commit() - once complete: fsync(2) the compressed file,
 * rename it to @path.zst and unlink @path.  Returns 0 or a negative errno.
 *
 * Only system calls: a child process may run it (the daemon does, so that
 * neither the fsync nor freeing a big original, which the last close of an
 * unlinked file does, waits in its loop), then the parent calls
 * logzst_writer_committed().
 */
int logzst_writer_commit(struct logzst_writer *w);

/** logzst_writer_committed() - another process committed @w: forget its file. */
void logzst_writer_committed(struct logzst_writer *w);

/** logzst_writer_free() - abandon an unfinished compression (its file is removed); accepts NULL. */
struct logzst_writer *logzst_writer_free(struct logzst_writer *w);

/** logzst_writer_in() / _out() - bytes read from @path and written so far. */
uint64_t logzst_writer_in(const struct logzst_writer *w);
uint64_t logzst_writer_out(const struct logzst_writer *w);

/** logzst_compress() - the whole compression at once (tools, tests). */
int logzst_compress(const char *path, int level);

#endif
