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
 *   ack                  per slot (below), the position up to which its records
 *                        were delivered, and their checksum: one write of
 *                        SPOOL_ACK_BYTES (the 16 bytes of an older labd, one
 *                        position and its checksum, are read as every slot's)
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
 * Slots: a spool may be drained by several deliveries at once, each taking
 * the records of its own streams (a backend's jobs), so records are
 * acknowledged out of order.  The caller puts every record in one of
 * SPOOL_SLOTS slots (by its stream); the spool keeps, per slot, the position
 * before which every record of that slot was delivered, so a restarted labd
 * sends none of them again.  spool_head() is the smallest of these.
 *
 * Use (single-threaded, calls are short local file I/O):
 *  1. spool_open();
 *  2. spool_append() as data comes;
 *  3. spool_read() from spool_head() (or spool_read_at() record by record)
 *     to build a delivery;
 *  4. spool_ack() the position reached once the receiver confirmed it, or
 *     spool_ack_slots() a position per slot.
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
#define SPOOL_SLOTS 64				/* acknowledged positions kept apart */
#define SPOOL_ACK_BYTES (8 * (SPOOL_SLOTS + 1))	/* the ack file: slots, checksum */

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
 * Returns 0, -ENOSPC (the spool is full, or its file system: nothing written), -E2BIG (payload
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
 * *@pos moves past each record handed over (also on a stop by @fn), before
 * @fn is called, so @fn may tell where its record began (*@pos - len -
 * SPOOL_HEADER).  Reading stops at spool_tail().  Returns the number of
 * records handed over, the negative value @fn returned, -EINVAL (@pos before
 * spool_head() or past the tail) or -EIO.
 */
int spool_read(struct spool *sp, uint64_t *pos, size_t max_bytes, spool_record_fn fn,
	       void *userdata);

/**
 * spool_read_at() - hand the one record that begins at @pos to @fn
 *
 * Returns what @fn returned, -EINVAL (no record of the unacknowledged part
 * begins at @pos), -EBADMSG (the record is torn or corrupt: it is lost) or
 * -EIO.
 */
int spool_read_at(struct spool *sp, uint64_t pos, spool_record_fn fn, void *userdata);

/**
 * spool_scan() - hand every record still on disk to @fn, acknowledged ones
 * included (oldest first), so that a backend can rebuild its state at start
 *
 * Returns the number of records, the negative value @fn returned, or -EIO.
 */
int spool_scan(struct spool *sp, spool_record_fn fn, void *userdata);

/**
 * spool_ack() - every record before @pos was delivered, whatever its slot
 *
 * Stores the position (a restarted labd reads from there) and deletes the
 * segments holding nothing else.  @pos must be a position spool_read()
 * returned, between spool_head() and spool_tail().  Returns 0, -EINVAL or -EIO.
 */
int spool_ack(struct spool *sp, uint64_t pos);

/** spool_ack_frees() - whether spool_ack(@pos) would delete a segment. */
bool spool_ack_frees(const struct spool *sp, uint64_t pos);

/**
 * spool_ack_slots() - per slot, every record of the slot before @pos[slot]
 * was delivered
 *
 * A position at or below the slot's present one changes nothing (pass 0 to
 * leave a slot alone).  Stores the positions, as spool_ack() does, and
 * deletes the segments before the smallest.  Returns 0, -EINVAL (a position
 * past spool_tail(); nothing changed) or -EIO.
 */
int spool_ack_slots(struct spool *sp, const uint64_t pos[SPOOL_SLOTS]);

/** spool_ack_slots_frees() - whether spool_ack_slots(@pos) would delete a segment. */
bool spool_ack_slots_frees(const struct spool *sp, const uint64_t pos[SPOOL_SLOTS]);

/** spool_slot_pos() - where the records of @slot that are not yet delivered begin. */
uint64_t spool_slot_pos(const struct spool *sp, unsigned slot);

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
