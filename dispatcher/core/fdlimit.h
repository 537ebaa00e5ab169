/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdlimit.h -- labd's limit on open files, raised to what the lab needs
 *
 * Every board holds its console and its board log (3 files) open and, while it
 * runs a job, the job's log (3 files) and its power or deploy commands' pipes:
 * bench-scale measured 7.4 fds per board at peak; every API client holds a socket.
 * The usual soft limit of 1024 is too low for a lab of a few hundred boards,
 * so labd raises it to the hard limit when it starts (as systemd advises
 * daemons to do) and says when even that is too low for its boards; then it
 * runs at most fdlimit_max_jobs() jobs at once, the others wait in the queue.
 */
#ifndef LABD_FDLIMIT_H
#define LABD_FDLIMIT_H

#include <stddef.h>

#define FDLIMIT_BASE 256	/* fds labd needs besides its boards: store, API clients, loop */
#define FDLIMIT_PER_BOARD 10	/* console, board log and job log (3 files each), a command's pipes */
#define FDLIMIT_IDLE_BOARD 4	/* console, board log (3 files) */
#define FDLIMIT_PER_JOB 6	/* job log (3 files), its downloads or a command's pipe and pidfd */

/** fdlimit_need() - open files a lab of @n_boards boards may need at once. */
size_t fdlimit_need(size_t n_boards);

/**
 * fdlimit_raise() - raise RLIMIT_NOFILE's soft limit to its hard limit and log
 * both; log a warning when the limit is below fdlimit_need(@n_boards).
 * Returns the soft limit now in force (LLONG_MAX: unlimited), or a negative errno (getrlimit or
 * setrlimit failed; the limit is unchanged and the failure logged).
 */
long long fdlimit_raise(size_t n_boards);

/**
 * fdlimit_max_jobs() - jobs that fit at once in open files limit @limit
 * (fdlimit_raise()'s answer) beside @n_boards idle boards: SIZE_MAX when all of
 * them fit or the limit is unknown (< 0), at least 1.  Beyond it a job would
 * fail for want of an fd ("Too many open files") and could mark its board bad.
 */
size_t fdlimit_max_jobs(long long limit, size_t n_boards);

#endif
