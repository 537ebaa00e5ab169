/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop.h -- the single-threaded event loop of labd
 *
 * core/ is labd's toolbox, below everything else: this loop and the child
 * processes it runs (child.h), the HTTP client inside it (http_client.h),
 * logging (log.h), strings (strbuf.h, strv.h, kv.h), problems as "file:line:
 * cause" (diag.h), typed libconfig reads (cfg.h), the states and outcomes
 * every layer shares (jobstate.h) and the version (version.h).  Each header
 * stands alone; nothing in core/ includes anything outside it.
 *
 * Every file descriptor of the daemon (consoles, sockets, pipes of child
 * processes, libcurl's and libmicrohttpd's sockets) and every timer, signal
 * and child process is a "source" registered here.  The loop runs in one
 * thread; callbacks run to completion and must never block.
 *
 * Time: every duration is a uint64_t in microseconds.  loop_now() returns the
 * CLOCK_MONOTONIC time cached at the start of the current iteration, so all
 * callbacks of one iteration see the same "now".
 *
 * Ownership: a loop_add_*() call with a non-NULL @ret hands the source to the
 * caller, who must release it with loop_source_free().  With @ret == NULL the
 * source is "floating": the loop owns it and frees it when it is disabled for
 * good (a fired one-shot timer, an exited child) or when the loop is freed.
 * loop_source_free() may be called from inside any callback, including the
 * source's own: the memory is released after the current dispatch.
 *
 * Callbacks return 0, or a negative errno to disable the source (the error is
 * logged once with the source's description).
 *
 * Child processes are watched through pidfds; SIGCHLD needs no handler.  A
 * child source owns its process: freeing the source before the child exited
 * kills it with SIGKILL and the loop reaps it in the background.
 */
#ifndef LABD_LOOP_H
#define LABD_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MSEC 1000ULL
#define USEC_INFINITY UINT64_MAX

struct loop;
struct loop_source;

/** Called when @fd is ready; @revents are EPOLLIN/EPOLLOUT/EPOLLHUP/EPOLLERR bits. */
typedef int (*loop_io_fn)(struct loop_source *s, int fd, uint32_t revents, void *userdata);
/** Called when a timer expires; @now is loop_now().  One-shot: re-arm with loop_timer_set(). */
typedef int (*loop_time_fn)(struct loop_source *s, uint64_t now, void *userdata);
/** Called for each delivered signal. */
typedef int (*loop_signal_fn)(struct loop_source *s, const struct signalfd_siginfo *si,
			      void *userdata);
/** Called once when the child exited; @si is what waitid() returned (si_code, si_status). */
typedef int (*loop_child_fn)(struct loop_source *s, const siginfo_t *si, void *userdata);
/** Called at the next iteration of the loop, before waiting; one-shot. */
typedef int (*loop_defer_fn)(struct loop_source *s, void *userdata);

/**
 * loop_new() - create an event loop
 * @ret: the new loop, to be freed with loop_free()
 *
 * Blocks SIGCHLD in the calling thread.  Returns 0 or a negative errno.
 */
int loop_new(struct loop **ret);

/**
 * loop_free() - free the loop and every source still registered
 *
 * Children still running are killed.  Sources owned by callers become
 * dangling: free them first.  Accepts NULL.  Returns NULL.
 */
struct loop *loop_free(struct loop *l);

/** loop_now() - monotonic time in microseconds, cached per iteration. */
uint64_t loop_now(struct loop *l);

/** loop_realtime() - CLOCK_REALTIME in microseconds, cached per iteration. */
uint64_t loop_realtime(struct loop *l);

/**
 * loop_set_test_clock() - move the loop's time by hand (unit tests only)
 * @now: the monotonic time from now on, in usec; an earlier one than
 *       loop_now() is taken as loop_now() (time never goes back)
 *
 * From the first call on the loop reads no clock and its timerfd is left
 * disarmed: loop_now() is @now until the next call, loop_realtime() moves as
 * far as loop_now() did, and loop_run_once() fires every timer whose deadline
 * is <= @now (without waiting for events when one is).  Everything else (io,
 * signals, children, defers) is dispatched as usual, so a test steps the loop
 * with loop_run_once() and jumps over waits of minutes at once
 * (loop_next_timer() says where the next one ends).  labd itself never calls it.
 */
void loop_set_test_clock(struct loop *l, uint64_t now);

/** loop_next_timer() - the deadline of the earliest armed timer, USEC_INFINITY if none. */
uint64_t loop_next_timer(const struct loop *l);

/**
 * loop_add_io() - watch a file descriptor
 * @events: EPOLLIN and/or EPOLLOUT (level-triggered)
 *
 * The fd stays owned by the caller; close it after freeing the source.
 */
int loop_add_io(struct loop *l, struct loop_source **ret, int fd, uint32_t events,
		loop_io_fn cb, void *userdata);

/** loop_io_set_events() - change the watched events of an io source. */
int loop_io_set_events(struct loop_source *s, uint32_t events);

/**
 * loop_add_timer() - one-shot timer at absolute monotonic time @when (usec)
 *
 * @when == USEC_INFINITY creates the timer disarmed.
 */
int loop_add_timer(struct loop *l, struct loop_source **ret, uint64_t when,
		   loop_time_fn cb, void *userdata);

/** loop_timer_set() - (re-)arm a timer at absolute @when; USEC_INFINITY disarms. */
int loop_timer_set(struct loop_source *s, uint64_t when);

/** loop_timer_set_rel() - (re-)arm a timer @usec from now. */
int loop_timer_set_rel(struct loop_source *s, uint64_t usec);

/** loop_timer_is_armed() - whether the timer will fire. */
bool loop_timer_is_armed(const struct loop_source *s);

/**
 * loop_add_signal() - deliver @sig through the loop
 *
 * Blocks @sig in the calling thread.  At most one source per signal.
 */
int loop_add_signal(struct loop *l, struct loop_source **ret, int sig, loop_signal_fn cb,
		    void *userdata);

/**
 * loop_add_child() - watch child process @pid (a direct child of labd)
 *
 * Opens a pidfd.  The callback runs once after the child was reaped.
 */
int loop_add_child(struct loop *l, struct loop_source **ret, pid_t pid, loop_child_fn cb,
		   void *userdata);

/** loop_child_kill() - send @sig to the child through its pidfd; -ESRCH once reaped. */
int loop_child_kill(struct loop_source *s, int sig);

/**
 * loop_add_defer() - call @cb once, after the callbacks running now
 *
 * Defers run at the start of each iteration and before its bulk sources
 * (loop_source_set_bulk()); one queued by a defer runs in the same
 * dispatch, LOOP_DEFER_ROUNDS deep (one that queues itself again runs at
 * most that many times per iteration).
 */
int loop_add_defer(struct loop *l, struct loop_source **ret, loop_defer_fn cb, void *userdata);

/** loop_defer_again() - schedule an existing defer source once more. */
int loop_defer_again(struct loop_source *s);

/** loop_source_set_description() - name used in logs, e.g. "console:rpi4-03" (copied). */
void loop_source_set_description(struct loop_source *s, const char *desc);

/**
 * loop_source_set_bulk() - dispatch an io source after the others
 *
 * In each iteration the ready sources that are not bulk run first, then
 * the defers they queued (and those these queue, a few deep), then the
 * bulk ones: a console's bytes (hundreds of
 * boards at once) never hold up a claim's answer, the run it starts and its
 * first power switch, which would otherwise wait behind every console ready
 * in the same iteration.  Every ready source still runs in the iteration.
 */
void loop_source_set_bulk(struct loop_source *s, bool bulk);

/** loop_source_get_description() - the description, or "(unnamed)". */
const char *loop_source_get_description(const struct loop_source *s);

/** loop_source_set_enabled() - stop or resume dispatching a source. */
int loop_source_set_enabled(struct loop_source *s, bool enabled);

/** loop_source_get_loop() - the loop a source belongs to. */
struct loop *loop_source_get_loop(const struct loop_source *s);

/**
 * loop_source_free() - unregister and free a source (deferred if dispatching)
 *
 * Accepts NULL.  Returns NULL, so callers write `s = loop_source_free(s);`.
 */
struct loop_source *loop_source_free(struct loop_source *s);

/**
 * loop_run_once() - wait for events (at most @timeout usec) and dispatch them
 *
 * Returns the number of sources dispatched, or a negative errno.
 */
int loop_run_once(struct loop *l, uint64_t timeout);

/** loop_run() - dispatch until loop_exit(); returns the exit code. */
int loop_run(struct loop *l);

/** loop_exit() - make loop_run() return @code after the current iteration. */
void loop_exit(struct loop *l, int code);

/** loop_is_exiting() - whether loop_exit() was called. */
bool loop_is_exiting(const struct loop *l);

/** now_monotonic() / now_realtime() - uncached clocks, for code without a loop. */
uint64_t now_monotonic(void);
uint64_t now_realtime(void);

#endif
