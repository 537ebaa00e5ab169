// SPDX-License-Identifier: GPL-2.0-or-later
/* test-loop.c -- dispatcher/core/loop.c driven one iteration at a time on real fds */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "core/loop.h"
#include "tap.h"

static int io_hits;
static int timer_hits;
static int order[8], norder;

static int on_io(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	char buf[16];

	io_hits++;
	if (read(fd, buf, sizeof(buf)) <= 0)
		return -EIO;
	return 0;
}

static int on_timer(struct loop_source *s, uint64_t now, void *ud)
{
	timer_hits++;
	order[norder++] = (int)(intptr_t)ud;
	return 0;
}

TEST(test_loop__io_pipe)
{
	struct loop *l;
	struct loop_source *s;
	int p[2];

	CHECK(loop_new(&l) == 0);
	CHECK(pipe(p) == 0);
	io_hits = 0;
	CHECK(loop_add_io(l, &s, p[0], EPOLLIN, on_io, NULL) == 0);
	CHECK(loop_run_once(l, 0) == 0);
	CHECK(write(p[1], "x", 1) == 1);
	CHECK(loop_run_once(l, 1000 * USEC_PER_MSEC) == 1);
	CHECK_INT(io_hits, ==, 1);
	loop_source_free(s);
	close(p[0]);
	close(p[1]);
	loop_free(l);
}

TEST(test_loop__timer_order)
{
	struct loop *l;
	struct loop_source *a, *b, *c;
	uint64_t now;

	CHECK(loop_new(&l) == 0);
	now = loop_now(l);
	timer_hits = norder = 0;
	CHECK(loop_add_timer(l, &a, now + 30000, on_timer, (void *)3) == 0);
	CHECK(loop_add_timer(l, &b, now + 10000, on_timer, (void *)1) == 0);
	CHECK(loop_add_timer(l, &c, now + 20000, on_timer, (void *)2) == 0);
	while (timer_hits < 3)
		CHECK(loop_run_once(l, USEC_PER_SEC) >= 0);
	CHECK_INT(order[0], ==, 1);
	CHECK_INT(order[1], ==, 2);
	CHECK_INT(order[2], ==, 3);
	CHECK(!loop_timer_is_armed(a));
	CHECK(loop_now(l) >= now + 30000);
	loop_source_free(a);
	loop_source_free(b);
	loop_source_free(c);
	loop_free(l);
}

TEST(test_loop__timer_rearm_and_cancel)
{
	struct loop *l;
	struct loop_source *a, *b;

	CHECK(loop_new(&l) == 0);
	timer_hits = norder = 0;
	CHECK(loop_add_timer(l, &a, loop_now(l) + 5000, on_timer, (void *)1) == 0);
	CHECK(loop_add_timer(l, &b, loop_now(l) + 10000, on_timer, (void *)2) == 0);
	CHECK(loop_timer_set(a, USEC_INFINITY) == 0);	/* cancel a */
	while (timer_hits < 1)
		CHECK(loop_run_once(l, USEC_PER_SEC) >= 0);
	CHECK_INT(order[0], ==, 2);
	CHECK(loop_timer_set_rel(a, 1000) == 0);
	while (timer_hits < 2)
		CHECK(loop_run_once(l, USEC_PER_SEC) >= 0);
	CHECK_INT(order[1], ==, 1);
	loop_source_free(a);
	loop_source_free(b);
	loop_free(l);
}

/*
 * The test clock: an hour passes at once, timers fire in the order of their
 * deadlines as the clock reaches them, and not before; realtime follows.
 */
TEST(test_loop__test_clock)
{
	struct loop *l;
	struct loop_source *a, *b, *c;
	uint64_t t0, r0;

	CHECK(loop_new(&l) == 0);
	loop_set_test_clock(l, loop_now(l));
	t0 = loop_now(l);
	r0 = loop_realtime(l);
	timer_hits = norder = 0;
	CHECK(loop_add_timer(l, &a, t0 + 3600 * USEC_PER_SEC, on_timer, (void *)3) == 0);
	CHECK(loop_add_timer(l, &b, t0 + 10 * USEC_PER_SEC, on_timer, (void *)1) == 0);
	CHECK(loop_add_timer(l, &c, t0 + 60 * USEC_PER_SEC, on_timer, (void *)2) == 0);
	CHECK(loop_next_timer(l) == t0 + 10 * USEC_PER_SEC);
	CHECK_INT(loop_run_once(l, 0), ==, 0);	/* nothing due: the system's clock is not read */
	CHECK(loop_now(l) == t0);
	loop_set_test_clock(l, t0 + 60 * USEC_PER_SEC);
	CHECK_INT(loop_run_once(l, USEC_PER_SEC), ==, 2);	/* due: no wait */
	CHECK_INT(timer_hits, ==, 2);
	CHECK_INT(order[0], ==, 1);
	CHECK_INT(order[1], ==, 2);
	CHECK(loop_realtime(l) == r0 + 60 * USEC_PER_SEC);
	loop_set_test_clock(l, t0);	/* never back */
	CHECK(loop_now(l) == t0 + 60 * USEC_PER_SEC);
	CHECK(loop_next_timer(l) == t0 + 3600 * USEC_PER_SEC);
	loop_set_test_clock(l, loop_next_timer(l));
	CHECK_INT(loop_run_once(l, 0), ==, 1);
	CHECK_INT(order[2], ==, 3);
	CHECK(loop_next_timer(l) == USEC_INFINITY);
	CHECK(loop_timer_set_rel(a, 5) == 0);	/* relative to the test's clock */
	CHECK(loop_next_timer(l) == t0 + 3600 * USEC_PER_SEC + 5);
	loop_source_free(a);
	loop_source_free(b);
	loop_source_free(c);
	loop_free(l);
}

static int child_code = -1;

static int on_child(struct loop_source *s, const siginfo_t *si, void *ud)
{
	child_code = si->si_code == CLD_EXITED ? si->si_status : 1000 + si->si_status;
	return 0;
}

TEST(test_loop__child_exit)
{
	struct loop *l;
	pid_t pid;

	CHECK(loop_new(&l) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(7);
	child_code = -1;
	CHECK(loop_add_child(l, NULL, pid, on_child, NULL) == 0);
	while (child_code < 0)
		CHECK(loop_run_once(l, USEC_PER_SEC) >= 0);
	CHECK_INT(child_code, ==, 7);
	loop_free(l);
}

TEST(test_loop__child_free_kills)
{
	struct loop *l;
	struct loop_source *s;
	pid_t pid;
	int i;

	CHECK(loop_new(&l) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK(loop_add_child(l, &s, pid, on_child, NULL) == 0);
	loop_source_free(s);
	/* the loop reaps it in the background */
	for (i = 0; i < 100 && kill(pid, 0) == 0; i++)
		loop_run_once(l, 10 * USEC_PER_MSEC);
	CHECK(kill(pid, 0) < 0 && errno == ESRCH);
	loop_free(l);
}

static int sig_hits;

static int on_signal(struct loop_source *s, const struct signalfd_siginfo *si, void *ud)
{
	sig_hits++;
	return 0;
}

TEST(test_loop__signal)
{
	struct loop *l;
	struct loop_source *s;

	CHECK(loop_new(&l) == 0);
	sig_hits = 0;
	CHECK(loop_add_signal(l, &s, SIGUSR1, on_signal, NULL) == 0);
	CHECK(loop_add_signal(l, NULL, SIGUSR1, on_signal, NULL) == -EBUSY);
	kill(getpid(), SIGUSR1);
	while (!sig_hits)
		CHECK(loop_run_once(l, USEC_PER_SEC) >= 0);
	CHECK_INT(sig_hits, ==, 1);
	loop_source_free(s);
	loop_free(l);
}

static int defer_hits;
static struct loop_source *victim;

static int on_defer(struct loop_source *s, void *ud)
{
	defer_hits++;
	if (ud)
		victim = loop_source_free(victim);	/* free another source mid-dispatch */
	return 0;
}

TEST(test_loop__defer_and_free_in_callback)
{
	struct loop *l;

	CHECK(loop_new(&l) == 0);
	defer_hits = 0;
	CHECK(loop_add_defer(l, NULL, on_defer, (void *)1) == 0);
	CHECK(loop_add_defer(l, &victim, on_defer, NULL) == 0);
	CHECK(loop_run_once(l, 0) >= 1);
	CHECK_INT(defer_hits, ==, 1);	/* the victim was freed before its turn */
	CHECK(loop_run_once(l, 0) == 0);
	loop_free(l);
}

/*
 * who ran, in order: 'u' the urgent pipe, 'd' the defer it queued, 'e' the
 * defer that one queued, 'b' a bulk pipe
 */
static char ran[8];
static size_t nran;
static struct loop_source *queued_by_urgent;

static struct loop_source *queued_by_defer;

static int on_ordered_defer(struct loop_source *s, void *ud)
{
	ran[nran++] = (char)(intptr_t)ud;
	if (s == queued_by_urgent)
		loop_defer_again(queued_by_defer);
	return 0;
}

static int on_ordered_io(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	char c, buf[16];

	if (read(fd, buf, sizeof(buf)) <= 0)
		return -EIO;
	c = (char)(intptr_t)ud;
	ran[nran++] = c;
	if (c == 'u')
		loop_defer_again(queued_by_urgent);
	return 0;
}

TEST(test_loop__bulk_after_urgent_and_its_defers)
{
	struct loop_source *bulk[2], *urgent;
	int pb[2][2], pu[2], i;
	struct loop *l;

	CHECK(loop_new(&l) == 0);
	CHECK(loop_add_defer(l, &queued_by_urgent, on_ordered_defer, (void *)(intptr_t)'d') == 0);
	CHECK(loop_add_defer(l, &queued_by_defer, on_ordered_defer, (void *)(intptr_t)'e') == 0);
	CHECK(loop_run_once(l, 0) == 2);	/* the defers run once at their creation */
	/* bulk sources added first: epoll would report them first */
	for (i = 0; i < 2; i++) {
		CHECK(pipe(pb[i]) == 0);
		CHECK(loop_add_io(l, &bulk[i], pb[i][0], EPOLLIN, on_ordered_io,
				  (void *)(intptr_t)'b') == 0);
		loop_source_set_bulk(bulk[i], true);
		CHECK(write(pb[i][1], "x", 1) == 1);
	}
	CHECK(pipe(pu) == 0);
	CHECK(loop_add_io(l, &urgent, pu[0], EPOLLIN, on_ordered_io, (void *)(intptr_t)'u') == 0);
	CHECK(write(pu[1], "x", 1) == 1);
	nran = 0;
	CHECK(loop_run_once(l, 0) == 5);
	CHECK_INT((int)nran, ==, 5);
	/* the urgent pipe, its defer, the defer that one queued, then the bulk pipes */
	CHECK(ran[0] == 'u' && ran[1] == 'd' && ran[2] == 'e' && ran[3] == 'b' && ran[4] == 'b');
	for (i = 0; i < 2; i++) {
		loop_source_free(bulk[i]);
		close(pb[i][0]);
		close(pb[i][1]);
	}
	loop_source_free(urgent);
	loop_source_free(queued_by_urgent);
	loop_source_free(queued_by_defer);
	close(pu[0]);
	close(pu[1]);
	loop_free(l);
}

TEST_LIST(test_loop__io_pipe, test_loop__timer_order, test_loop__timer_rearm_and_cancel,
	  test_loop__test_clock,
	  test_loop__child_exit, test_loop__child_free_kills, test_loop__signal,
	  test_loop__defer_and_free_in_callback, test_loop__bulk_after_urgent_and_its_defers)
