// SPDX-License-Identifier: GPL-2.0-or-later
/* test-fdlimit.c -- dispatcher/core/fdlimit.c: how many jobs an open files limit holds */
#include <stdint.h>

#include "core/fdlimit.h"
#include "tap.h"

TEST(test_fdlimit__max_jobs)
{
	/* enough for every board busy, or unknown: no cap */
	CHECK(fdlimit_max_jobs(fdlimit_need(4096), 4096) == SIZE_MAX);
	CHECK(fdlimit_max_jobs(-1, 4096) == SIZE_MAX);
	/* this VM's hard limit: 4096 idle boards hold 16,384 fds, 256 kept for the rest */
	CHECK(fdlimit_max_jobs(20000, 4096) == (20000 - 256 - 4 * 4096) / FDLIMIT_PER_JOB);
	/* too low even for the idle boards: one job at a time, not none */
	CHECK(fdlimit_max_jobs(200, 3) == 1);
	CHECK(fdlimit_max_jobs(0, 64) == 1);
	/* room for more jobs than boards, below fdlimit_need(): no cap */
	CHECK(fdlimit_max_jobs(256 + 4 * 4 + FDLIMIT_PER_JOB * 4, 4) == SIZE_MAX);
	CHECK(fdlimit_max_jobs(256 + 4 * 4 + FDLIMIT_PER_JOB * 3, 4) == 3);
}

TEST_LIST(test_fdlimit__max_jobs);
