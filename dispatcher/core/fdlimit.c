// SPDX-License-Identifier: GPL-2.0-or-later
/* fdlimit.c -- raise labd's open files limit, and say when it is too low (fdlimit.h) */
#include "core/fdlimit.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "core/log.h"

size_t fdlimit_need(size_t n_boards)
{
	return FDLIMIT_BASE + FDLIMIT_PER_BOARD * n_boards;
}

size_t fdlimit_max_jobs(long long limit, size_t n_boards)
{
	unsigned long long used = FDLIMIT_BASE + (unsigned long long)FDLIMIT_IDLE_BOARD * n_boards;
	unsigned long long jobs;

	if (limit < 0 || (unsigned long long)limit >= fdlimit_need(n_boards))
		return SIZE_MAX;
	jobs = (unsigned long long)limit > used ? ((unsigned long long)limit - used) / FDLIMIT_PER_JOB : 0;
	if (jobs >= n_boards)
		return SIZE_MAX;
	return jobs ? (size_t)jobs : 1;
}

/* @v in words, in @buf */
static const char *limit_str(rlim_t v, char buf[24])
{
	if (v == RLIM_INFINITY)
		return "unlimited";
	snprintf(buf, 24, "%llu", (unsigned long long)v);
	return buf;
}

/* The limit in force is enough for @n_boards, or a warning that says what to do. */
static void check_enough(rlim_t limit, size_t n_boards)
{
	size_t need = fdlimit_need(n_boards);

	if (limit == RLIM_INFINITY || limit >= need)
		return;
	log_warning("open files limit %llu is too low for %zu boards (about %zu needed): "
		    "boards will fail to open their consoles or run jobs; raise the hard limit "
		    "(LimitNOFILE= in the systemd unit, or ulimit -Hn)",
		    (unsigned long long)limit, n_boards, need);
}

long long fdlimit_raise(size_t n_boards)
{
	struct rlimit rl;
	char b1[24], b2[24];
	rlim_t was;
	int err;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		err = -errno;
		log_error("cannot read the open files limit: %s", strerror(-err));
		return err;
	}
	was = rl.rlim_cur;
	if (rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			err = -errno;
			log_error("cannot raise the open files limit from %llu to %llu: %s",
				  (unsigned long long)was, (unsigned long long)rl.rlim_max,
				  strerror(-err));
			check_enough(was, n_boards);
			return err;
		}
		log_info("open files limit raised from %s to %s (the hard limit); %zu boards need "
			 "about %zu", limit_str(was, b1), limit_str(rl.rlim_cur, b2), n_boards,
			 fdlimit_need(n_boards));
	} else {
		log_info("open files limit %s (the hard limit); %zu boards need about %zu",
			 limit_str(rl.rlim_cur, b1), n_boards, fdlimit_need(n_boards));
	}
	check_enough(rl.rlim_cur, n_boards);
	return rl.rlim_cur == RLIM_INFINITY ? LLONG_MAX : (long long)rl.rlim_cur;
}
