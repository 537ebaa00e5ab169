/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reservations.h -- developers holding boards: grant, expiry, release, and
 * what a holder does with its board (power, telnet port)
 *
 * session/ owns what people do with boards besides jobs: who they are
 * (users.h), holding a board (this header), its live console (viewer.h,
 * viewer_proto.h, which labctl shares), a telnet port to it (telnetd.h) and
 * booting it by hand (bootjob.h).
 *
 * A reservation asks for one board by name, or for any board of a device
 * type with tags, for a while.  It waits in the queue with the jobs, in the
 * same order (sched.h), and holds the first board that matches when its turn
 * comes; the board is then "reserved": the scheduler gives it no job until
 * the reservation ends.  Reservations are persisted (store_reservation_*):
 * after a restart the active ones hold their boards again and the waiting
 * ones are still queued.
 *
 * Lifecycle:
 *  1. reservations_request() stores a waiting reservation, the scheduler
 *     re-plans.
 *  2. The scheduler calls reservations_grant() when a free board claimed it
 *     (store_claim() made it active): the holder holds the board until now +
 *     the duration asked for.
 *  3. reservations_renew() moves the end to now + a new duration.
 *  4. reservations_release() (the holder is done), reservations_cancel() or
 *     the expiry end it: a session boot running on the board is canceled,
 *     the telnet port closes, the board is powered off, and only then is it
 *     free for the queue.
 *
 * Everything runs on the loop; power operations complete through callbacks.
 */
#ifndef LABD_RESERVATIONS_H
#define LABD_RESERVATIONS_H

#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "drivers/power.h"

struct board;
struct lab;
struct reservation_record;
struct reservations;
struct sched;
struct store;
struct telnetd;
struct viewers;

#define RESERVATION_DEFAULT_DURATION (3600 * USEC_PER_SEC)
#define RESERVATION_MIN_DURATION (1 * USEC_PER_SEC)
#define RESERVATION_MAX_DURATION (7 * 24 * 3600 * USEC_PER_SEC)
#define RESERVATION_DEFAULT_PRIORITY 50
#define RESERVATION_ERR_MAX 256		/* bytes of a refusal's message */

struct reservation_request {
	const char *holder;
	const char *board;	/* a board by name, or NULL */
	const char *device_type;	/* any board of this type (NULL with @board) */
	char *const *tags;	/* strv: the board must have all of them */
	int priority;		/* 0..100 */
	uint64_t duration;	/* usec, RESERVATION_MIN_DURATION..RESERVATION_MAX_DURATION */
};

/** Completion of reservations_power(): @err 0 or negative, @msg one line. */
typedef void (*reservations_power_fn)(int err, const char *msg, void *userdata);

/* What the reservations get at creation; the pointers outlive them. */
struct reservations_deps {
	struct loop *loop;
	struct store *store;
	struct sched *sched;	/* re-plans after a request; cancels a holder's boot at the end */
	struct viewers *viewers;	/* told what happens to their board; telnet clients */
	const struct lab *lab;	/* boards by name, device types, users (board/lab.h) */
};

int reservations_new(const struct reservations_deps *deps, struct reservations **ret);

/** reservations_free() - forget the holds (they stay in the store); accepts NULL; returns NULL. */
struct reservations *reservations_free(struct reservations *rs);

/**
 * reservations_restore() - at start, after the boards: active reservations
 * hold their boards again (those that expired while labd was stopped end
 * now), boards held by no active reservation are freed.
 */
int reservations_restore(struct reservations *rs);

/**
 * reservations_request() - queue a reservation; 0 with its id
 *
 * Refusals are -ENOENT (no such board or type), -EINVAL (bad duration,
 * priority, type mismatch, no board with the tags) or -EEXIST (the holder
 * already holds that board), each with a message in @err.
 */
int reservations_request(struct reservations *rs, const struct reservation_request *req,
			 int64_t *ret_id, char err[RESERVATION_ERR_MAX]);

/**
 * reservations_grant() - the scheduler's deps->grant: board @b claimed
 * reservation @rec (active on @b in the store until rec->until): hold it.
 */
void reservations_grant(struct reservations *rs, const struct reservation_record *rec,
			struct board *b);

/** reservations_renew() - @board's reservation now ends @duration from now; -ENOENT if not held. */
int reservations_renew(struct reservations *rs, const char *board, uint64_t duration,
		       uint64_t *ret_until);

/**
 * reservations_release() - end @board's active reservation because of @why
 * ("released by alice"); the board is free once powered off.
 * Returns 0, -ENOENT (not held) or -EALREADY (already ending).
 */
int reservations_release(struct reservations *rs, const char *board, const char *why);

/** reservations_cancel() - end reservation @id, waiting or active; -ENOENT, -EALREADY. */
int reservations_cancel(struct reservations *rs, int64_t id, const char *why);

/** reservations_of_board() - the id of @board's active reservation, or 0. */
int64_t reservations_of_board(const struct reservations *rs, const char *board);

/**
 * reservations_telnet() - open (or find) @board's loopback telnet port for
 * its holder; it closes when the reservation ends.  -ENOENT if not held.
 */
int reservations_telnet(struct reservations *rs, const char *board, int *ret_port);

/** reservations_telnetd() - @board's open telnet port (reservations_telnet()), or NULL. */
struct telnetd *reservations_telnetd(const struct reservations *rs, const char *board);

/** reservations_telnet_port() - @board's telnet port, or 0. */
int reservations_telnet_port(const struct reservations *rs, const char *board);

/**
 * reservations_power() - power @board on, off or cycle it for @who
 *
 * Allowed on a board that runs no job and is not idle (a reserved board, or
 * one in maintenance): idle boards belong to the scheduler.  @done is called
 * once from the loop, also when the reservation ends first (-ECANCELED),
 * unless reservations_power_forget(@userdata) was called.  Returns 0,
 * -ENOENT, -EOPNOTSUPP (no power control), -EBUSY (a job runs, or a power
 * operation) or -EPERM (the board is idle), with a message in @err.
 */
int reservations_power(struct reservations *rs, const char *board, enum power_op op,
		       const char *who, reservations_power_fn done, void *userdata,
		       char err[RESERVATION_ERR_MAX]);

/** reservations_power_forget() - @userdata is going away: never call its @done. */
void reservations_power_forget(struct reservations *rs, void *userdata);

/**
 * reservations_unwatch() - labd stops: the other hosts' watches of the
 * holds' telnet ports (telnetd_watch()) are told @why and closed while the
 * API, whose upgraded connections they are, still runs; the ports close
 * with their holds.
 */
void reservations_unwatch(struct reservations *rs, const char *why);

/**
 * reservations_power_unwait() - labd stops: call every pending @done now with
 * -ESHUTDOWN (the operations themselves go on).
 */
void reservations_power_unwait(struct reservations *rs);

#endif
