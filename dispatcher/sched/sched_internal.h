/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched_internal.h -- struct sched, shared by sched.c (the queue and the
 * runs) and sched_submit.c (what enters the queue); only sched/ includes it
 */
#ifndef LABD_SCHED_INTERNAL_H
#define LABD_SCHED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/sched.h"

struct loop_source;
struct sched_avoid;
struct sched_run;

struct sched {
	struct sched_deps deps;
	struct loop_source *plan;	/* defer: plan at the next iteration */
	struct loop_source *reap;	/* defer: free finished runs */
	struct sched_run *runs;
	struct sched_avoid *avoid;
	size_t n_running;
	bool paused;
};

#endif
