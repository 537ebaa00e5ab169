/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spool.h -- a bounded on-disk queue of records, one per results backend
 *
 * A spool keeps what a backend still has to deliver, so that neither a slow
 * or absent receiver nor a restart of labd loses it.  It lives in its own
 * directory (<state_dir>/spool/<backend>/) and holds:
 *
 *   <16 hex digits>.seg  segment files: records appended with write(2), never
 *                        rewritten; the name is the spool position of the
 *                        segment's first byte
 *   ack                  the position up to which records were delivered (one
 *                        16-byte write: position and its checksum)
 *
 * Positions are byte addresses in the stream of all records ever appended;
 * they only grow, so a position names a record for the life of the spool.
 * A record is a 16-byte header (magic "LSR1", payload length and an 8-byte
 * checksum: the start of the SHA-256 of length and payload, little-endian)
 * followed by the payload.
 *
 * Durability: a SIGKILL at any moment loses nothing appended or acknowledged
 * (the page cache keeps what write(2) returned); a power cut may lose the
 * last records.  spool_open() drops a torn or corrupt record at the end of
 * the newest segment, and everything after a corrupt record in an older one
 * (both counted in spool_dropped()).
 *
 * Bounds: the segment files never exceed @max_bytes together; an append that
 * would go past it fails with -ENOSPC, and the caller decides what to do.
 * Segments are deleted once every record in them is acknowledged.
 *
 * Use (single-threaded, calls are short local file I/O):
 *  1. spool_open();
 *  2. spool_append() as data comes;
 *  3. spool_read() from spool_head() to build a delivery;
 *  4. spool_ack() the position reached once the receiver confirmed it.
 */
#ifndef LABD_SPOOL_H
#define LABD_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool;

#define SPOOL_MAX_RECORD (8U << 20)		/* payload bytes of one record */
#define SPOOL_SEGMENT_MAX (4ULL << 20)		/* a segment is closed past this size */
#define SPOOL_MIN_BYTES (64ULL << 10)		/* smallest max_bytes accepted */
#define SPOOL_HEADER 16				/* bytes of a record's header */

/**
 * spool_open() - open (creating it and its parents) the spool in @dir
 * @max_bytes: bound of the segment files together, at least SPOOL_MIN_BYTES
 *
 * Recovers a spool left by a previous labd: records not yet acknowledged are
 * read again from spool_head().  Returns 0, -EINVAL (bound too small) or the
 * negative errno of a failed file operation.
 */
int spool_open(const char *dir, uint64_t max_bytes, struct spool **ret);

/** spool_close() - close the files (the spool stays on disk); accepts NULL; returns NULL. */
struct spool *spool_close(struct spool *sp);

/**
 * spool_append() - add one record at the end
 *
 * Returns 0, -ENOSPC (the spool is full: nothing written), -E2BIG (payload
 * larger than SPOOL_MAX_RECORD) or -EIO (a write failed; the segment is cut
 * back to its last whole record).
 */
int spool_append(struct spool *sp, const void *data, size_t len);

/** Called for each record read; return 0 to go on, > 0 to stop before the next, < 0 to fail. */
typedef int (*spool_record_fn)(const void *data, size_t len, void *userdata);

/**
 * spool_read() - hand records from position *@pos on to @fn
 * @max_bytes: stop before a record that would make the payloads read exceed
 *	this; the first record is always read
 *
 * *@pos moves past each record handed over (also on a stop by @fn).  Reading
 * stops at spool_tail().  Returns the number of records handed over, the
 * negative value @fn returned, -EINVAL (@pos before spool_head() or past the
 * tail) or -EIO.
 */
int spool_read(struct spool *sp, uint64_t *pos, size_t max_bytes, spool_record_fn fn,
	       void *userdata);

/**
 * spool_scan() - hand every record still on disk to @fn, acknowledged ones
 * included (oldest first), so that a backend can rebuild its state at start
 *
 * Returns the number of records, the negative value @fn returned, or -EIO.
 */
int spool_scan(struct spool *sp, spool_record_fn fn, void *userdata);

/**
 * spool_ack() - every record before @pos was delivered
 *
 * Stores the position (a restarted labd reads from there) and deletes the
 * segments holding nothing else.  @pos must be a position spool_read()
 * returned, between spool_head() and spool_tail().  Returns 0, -EINVAL or -EIO.
 */
int spool_ack(struct spool *sp, uint64_t pos);

/** spool_ack_frees() - whether spool_ack(@pos) would delete a segment. */
bool spool_ack_frees(const struct spool *sp, uint64_t pos);

/** spool_head() / spool_tail() - first unacknowledged position / end of the last record. */
uint64_t spool_head(const struct spool *sp);
uint64_t spool_tail(const struct spool *sp);

/** spool_size() - bytes of the segment files, acknowledged records included. */
uint64_t spool_size(const struct spool *sp);

/** spool_max() - the bound given to spool_open(). */
uint64_t spool_max(const struct spool *sp);

/** spool_dropped() - bytes of torn or corrupt records dropped since spool_open(). */
uint64_t spool_dropped(const struct spool *sp);

/** spool_dir() - the directory (borrowed). */
const char *spool_dir(const struct spool *sp);

#endif
