/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * child.h -- running programs from the loop: spawning them clean, keeping the
 * tail of what they print
 *
 * Drivers that run programs (the `command` power driver's shell commands,
 * QEMU) start them with child_spawn(): a process group of their own (a ^C on
 * labd's terminal is not for them, and a timeout kills the whole group),
 * stdin from /dev/null, stdout and stderr into one pipe, every signal
 * unblocked and at its default (the loop blocks and ignores some), and no fd
 * of labd's but the ones asked for.
 *
 * The pipe's read end is a struct child_output: the loop reads it as the
 * program writes and keeps the last CHILD_OUTPUT_MAX bytes, so that a failure
 * reason can quote the program's last line ("exited with status 1: no such
 * outlet").  Watching the program's exit is the caller's (loop_add_child()).
 *
 *	struct child_output out;
 *	int wfd;
 *
 *	child_output_init(&out);
 *	r = child_output_open(&out, loop, "power-command-output", &wfd);
 *	r = child_spawn(&(struct child_spawn){ .argv = argv, .out_fd = wfd,
 *					       .extra_fd = -1 }, &pid);
 *	close(wfd);
 *	... at its exit: child_output_drain(&out); child_output_last_line(...)
 */
#ifndef LABD_CHILD_H
#define LABD_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/strbuf.h"

struct loop;
struct loop_source;

#define CHILD_OUTPUT_MAX 4096	/* bytes of output kept */

/* How to start a program. */
struct child_spawn {
	char *const *argv;	/* argv[0] is the program */
	bool search_path;	/* look argv[0] up in $PATH */
	int out_fd;		/* becomes its stdout and stderr */
	int extra_fd;		/* -1, or an fd it gets as @extra_at */
	int extra_at;		/* > STDERR_FILENO; fds above it are closed */
	char *const *setenv;	/* NULL, or "NAME=value" entries replacing or adding to
				 * labd's environment for the program */
};

/**
 * child_spawn() - start a program as @how says
 *
 * Returns 0 with its pid in @ret (the leader of a new process group), or a
 * negative errno (-ENOENT: no such program).
 */
int child_spawn(const struct child_spawn *how, pid_t *ret);

/* The read end of a program's output pipe, and the tail read so far. */
struct child_output {
	int fd;				/* -1 when closed */
	struct loop_source *src;
	struct strbuf tail;		/* the last CHILD_OUTPUT_MAX bytes */
};

/** child_output_init() - closed and empty; allocates nothing. */
void child_output_init(struct child_output *o);

/**
 * child_output_open() - a new pipe, its read end watched by @loop
 *
 * Empties the tail.  The write end (close-on-exec: child_spawn() gives the
 * program its own copy) is returned in @ret_wfd for the caller to pass to
 * child_spawn() and close.  Returns 0 or a negative errno (nothing left open).
 */
int child_output_open(struct child_output *o, struct loop *loop, const char *description,
		      int *ret_wfd);

/** child_output_drain() - read what is in the pipe now (the program exited). */
void child_output_drain(struct child_output *o);

/** child_output_close() - stop watching and close the read end; the tail stays. */
void child_output_close(struct child_output *o);

/**
 * child_output_last_line() - the last non-empty line of the tail, control
 * characters replaced by spaces, at most @size - 1 bytes, into @buf.
 */
void child_output_last_line(const struct child_output *o, char *buf, size_t size);

/** child_output_release() - close and free the tail. */
void child_output_release(struct child_output *o);

#endif
