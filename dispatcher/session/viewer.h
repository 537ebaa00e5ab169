/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * viewer.h -- people watching a board's console live, and typing on it
 *
 * A viewer is one client connection: `labctl console` over an upgraded API
 * connection (the framed protocol of viewer_proto.h), or a telnet client on
 * a holder's port (RFC 854: IAC doubled both ways, BREAK).  On attach it gets
 * the recent output (the board's scrollback), then everything the board
 * prints, for any board, job or no job.
 *
 * Output is queued per viewer, at most VIEWER_MAX_QUEUE bytes beyond what
 * the kernel buffers (VIEWER_SNDBUF): a viewer that does not keep up is
 * dropped, with a notice if one still fits, so a slow viewer never slows the
 * board or the other viewers.
 *
 * Input reaches the board only from the board's holder or an admin; anyone
 * else's keys are ignored with a notice.  Every chunk typed is logged with
 * who typed it: an "input" line in the board's log and, while a job runs on
 * the board, in the job's log.  A break and a power cycle (holder only) are
 * logged the same way.
 *
 * The daemon owns one struct viewers; everything runs on the loop.

 */
#ifndef LABD_VIEWER_H
#define LABD_VIEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/reservations.h"
#include "session/users.h"

struct board;
struct loop;
struct sched;
struct viewers;

#define VIEWER_MAX_QUEUE (256 * 1024)	/* bytes queued in labd before a viewer is dropped */
#define VIEWER_SNDBUF (64 * 1024)	/* the socket's send buffer */
#define VIEWER_MAX_REPLAY (64 * 1024)	/* scrollback bytes replayed on attach, at most */
#define VIEWER_DEFAULT_REPLAY (16 * 1024)
#define VIEWER_NOTICE_EVERY (5 * 1000000ULL)	/* "read-only" notices, at most this often */

enum viewer_wire {
	VIEWER_WIRE_FRAMED,	/* labctl console: viewer_proto.h */
	VIEWER_WIRE_TELNET,	/* telnet, socat, microcom */
};

/** How to close a viewer's fd (libmicrohttpd closes upgraded connections itself). */
typedef void (*viewer_close_fn)(int fd, void *userdata);

struct viewer_params {
	struct board *board;
	int fd;			/* connected; made non-blocking */
	enum viewer_wire wire;
	const char *who;	/* identity ("alice"); a telnet port's clients are its holder */
	enum user_role role;
	size_t replay;		/* scrollback bytes sent first (at most VIEWER_MAX_REPLAY) */
	const void *extra_in;	/* bytes already read from @fd (after the HTTP upgrade) */
	size_t extra_in_len;
	viewer_close_fn close;	/* NULL: close(2) */
	void *close_userdata;
	const void *owner;	/* groups viewers for viewers_close() (a telnet port), or NULL */
};

/*
 * What the viewers get at creation.  A holder's power cycle (the `~p`
 * escape) is the reservations' decision (reservations_power()); they are
 * created after the viewers (they tell viewers what happens to their board),
 * so the daemon forwards @power_cycle and @power_forget to them.
 */
struct viewers_deps {
	struct loop *loop;
	struct sched *sched;	/* the run of a board's job, which logs typed input too */
	/* reservations_power(@board, POWER_CYCLE, ...) */
	int (*power_cycle)(void *userdata, const char *board, const char *who,
			   reservations_power_fn done, void *done_userdata,
			   char err[RESERVATION_ERR_MAX]);
	/* reservations_power_forget(@done_userdata) */
	void (*power_forget)(void *userdata, void *done_userdata);
	void *userdata;
};

int viewers_new(const struct viewers_deps *deps, struct viewers **ret);

/** viewers_free() - close every viewer; accepts NULL; returns NULL. */
struct viewers *viewers_free(struct viewers *vs);

/**
 * viewer_attach() - a new viewer of p->board: the scrollback now, live
 * output from now on.  @p->fd is the viewer's from here, also on failure
 * (it is then closed through p->close).  Returns 0 or -ENOMEM.
 */
int viewer_attach(struct viewers *vs, const struct viewer_params *p);

/** viewers_notice() - tell every viewer of @board something ("alice holds sim-01"). */
void viewers_notice(struct viewers *vs, const char *board, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** viewers_close() - close the viewers of @owner (every viewer for NULL), telling them @why. */
void viewers_close(struct viewers *vs, const void *owner, const char *why);

/** viewers_count() - how many viewers watch @board. */
size_t viewers_count(const struct viewers *vs, const char *board);

/** viewers_count_owned() - how many viewers @owner has. */
size_t viewers_count_owned(const struct viewers *vs, const void *owner);

#endif
