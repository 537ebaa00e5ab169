/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * worker.h -- heavy work in a forked child of labd, its report lines read by the loop
 *
 * What would block the loop for long (writing gigabytes to a card, writing
 * an archive into a file system image) runs in a child forked for it: the
 * child calls @fn, which writes report lines ("write 4194304", "error
 * cannot open ...") to the fd it is given and returns the child's exit
 * status.  The parent reads the lines from the loop, hands each to ->line,
 * and calls ->done once the child exited and its pipe is drained, with the
 * exit status (128 + signal when killed) and the last line it wrote.
 *
 * The child starts with every signal unblocked (the loop blocks some) and
 * leaves with _exit(): nothing of labd's is flushed or freed twice.  It must
 * not touch the loop.  worker_free() at any time kills the child; no
 * callback comes after it.
 */
#ifndef LABD_WORKER_H
#define LABD_WORKER_H

struct loop;
struct worker;

#define WORKER_LINE_MAX 1024	/* bytes of one report line; longer ones are cut */

/** What the child runs: report lines to @out; returns its exit status. */
typedef int (*worker_fn)(int out, void *arg);

struct worker_ops {
	/** optional: each report line (without its '\n'), as it comes */
	void (*line)(struct worker *w, const char *line, void *userdata);
	/** required, once: the exit status and the last line ("" if none) */
	void (*done)(struct worker *w, int status, const char *last, void *userdata);
};

/**
 * worker_start() - fork a child running @fn(@arg)
 *
 * @arg is the child's copy of the parent's memory: it may point anywhere.
 * Returns 0 or a negative errno (no child then).  Free with worker_free().
 */
int worker_start(struct loop *l, worker_fn fn, void *arg, const struct worker_ops *ops,
		 void *userdata, struct worker **ret);

/** worker_free() - kill the child if it runs; accepts NULL; returns NULL. */
struct worker *worker_free(struct worker *w);

#endif
