// SPDX-License-Identifier: GPL-2.0-or-later
/* loop.c -- epoll event loop: io, timers (one timerfd + heap), signals, pidfds, defers */
#include "core/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

#define LOOP_MAX_EVENTS 64
#define LOOP_DEFER_ROUNDS 4	/* defers queued by defers run in the same dispatch, so deep */

enum source_type {
	SOURCE_IO,
	SOURCE_TIMER,
	SOURCE_SIGNAL,
	SOURCE_CHILD,
	SOURCE_DEFER,
};

struct loop_source {
	struct loop *loop;
	enum source_type type;
	bool enabled;
	bool floating;
	bool dead;		/* freed while dispatching; released after the batch */
	bool bulk;		/* dispatched after the other ready sources and the defers */
	char *desc;
	void *userdata;
	union {
		loop_io_fn io;
		loop_time_fn time;
		loop_signal_fn signal;
		loop_child_fn child;
		loop_defer_fn defer;
	} cb;
	/* SOURCE_IO: fd and events; SOURCE_CHILD: the pidfd */
	int fd;
	uint32_t events;
	bool in_epoll;
	/* SOURCE_TIMER */
	uint64_t when;
	size_t heap_idx;	/* SIZE_MAX when not in the heap */
	/* SOURCE_SIGNAL */
	int sig;
	/* SOURCE_CHILD */
	pid_t pid;
	bool reaped;
	/* SOURCE_DEFER */
	bool pending;
	struct loop_source *defer_next;
	/* every source, for loop_free(); the dead list */
	struct loop_source *prev, *next;
	struct loop_source *dead_next;
};

struct loop {
	int epfd;
	int timerfd;
	int sigfd;
	sigset_t sigmask;
	struct loop_source *signals[_NSIG];
	uint64_t now;
	uint64_t realtime;
	uint64_t timerfd_armed;	/* deadline the timerfd is set to, USEC_INFINITY if none */
	bool test_clock;	/* loop_set_test_clock(): now and realtime move by hand */
	struct loop_source **heap;
	size_t heap_len, heap_cap;
	struct loop_source *defer_head, *defer_tail;
	struct loop_source *all;
	struct loop_source *dead;
	unsigned dispatching;
	bool exiting;
	int exit_code;
};

/* Markers for the loop's own fds in epoll_event.data.ptr. */
static char timerfd_marker, sigfd_marker;

uint64_t now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t now_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static void loop_update_clock(struct loop *l)
{
	if (l->test_clock)
		return;
	l->now = now_monotonic();
	l->realtime = now_realtime();
}

uint64_t loop_now(struct loop *l)
{
	return l->now;
}

uint64_t loop_realtime(struct loop *l)
{
	return l->realtime;
}

void loop_set_test_clock(struct loop *l, uint64_t now)
{
	struct itimerspec off = { 0 };

	if (!l->test_clock) {
		l->test_clock = true;
		timerfd_settime(l->timerfd, 0, &off, NULL);
		l->timerfd_armed = USEC_INFINITY;
	}
	if (now > l->now) {
		l->realtime += now - l->now;
		l->now = now;
	}
}

uint64_t loop_next_timer(const struct loop *l)
{
	return l->heap_len ? l->heap[0]->when : USEC_INFINITY;
}

int loop_new(struct loop **ret)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t chld;
	struct loop *l;
	int r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->epfd = l->timerfd = l->sigfd = -1;
	l->timerfd_armed = USEC_INFINITY;
	sigemptyset(&l->sigmask);

	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		goto err_errno;
	l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->timerfd < 0)
		goto err_errno;
	ev.data.ptr = &timerfd_marker;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->timerfd, &ev) < 0)
		goto err_errno;

	/* Children are watched through pidfds; SIGCHLD must not kill or interrupt us. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	loop_update_clock(l);
	*ret = l;
	return 0;

err_errno:
	r = -errno;
	loop_free(l);
	return r;
}

/* ---- timer heap (min-heap on ->when) ---- */

static void heap_swap(struct loop *l, size_t a, size_t b)
{
	struct loop_source *t = l->heap[a];

	l->heap[a] = l->heap[b];
	l->heap[b] = t;
	l->heap[a]->heap_idx = a;
	l->heap[b]->heap_idx = b;
}

static void heap_up(struct loop *l, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (l->heap[parent]->when <= l->heap[i]->when)
			break;
		heap_swap(l, parent, i);
		i = parent;
	}
}

static void heap_down(struct loop *l, size_t i)
{
	for (;;) {
		size_t left = 2 * i + 1, right = left + 1, min = i;

		if (left < l->heap_len && l->heap[left]->when < l->heap[min]->when)
			min = left;
		if (right < l->heap_len && l->heap[right]->when < l->heap[min]->when)
			min = right;
		if (min == i)
			break;
		heap_swap(l, i, min);
		i = min;
	}
}

static int heap_insert(struct loop *l, struct loop_source *s)
{
	if (l->heap_len == l->heap_cap) {
		size_t cap = l->heap_cap ? l->heap_cap * 2 : 16;
		struct loop_source **h = realloc(l->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		l->heap = h;
		l->heap_cap = cap;
	}
	s->heap_idx = l->heap_len;
	l->heap[l->heap_len++] = s;
	heap_up(l, s->heap_idx);
	return 0;
}

static void heap_remove(struct loop *l, struct loop_source *s)
{
	size_t i = s->heap_idx;

	if (i == SIZE_MAX)
		return;
	s->heap_idx = SIZE_MAX;
	l->heap_len--;
	if (i == l->heap_len)
		return;
	l->heap[i] = l->heap[l->heap_len];
	l->heap[i]->heap_idx = i;
	heap_down(l, i);
	heap_up(l, l->heap[i]->heap_idx);
}

/* Point the timerfd at the earliest deadline, if it changed. */
static void timerfd_rearm(struct loop *l)
{
	uint64_t next = loop_next_timer(l);
	struct itimerspec its = { 0 };

	if (next == l->timerfd_armed || l->test_clock)
		return;
	l->timerfd_armed = next;
	if (next != USEC_INFINITY) {
		if (next == 0)
			next = 1;	/* 0 would disarm */
		its.it_value.tv_sec = next / USEC_PER_SEC;
		its.it_value.tv_nsec = (next % USEC_PER_SEC) * 1000;
	}
	timerfd_settime(l->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* ---- sources ---- */

static int source_new(struct loop *l, enum source_type type, void *userdata,
		      struct loop_source **ret)
{
	struct loop_source *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->type = type;
	s->enabled = true;
	s->userdata = userdata;
	s->fd = -1;
	s->heap_idx = SIZE_MAX;
	s->next = l->all;
	if (l->all)
		l->all->prev = s;
	l->all = s;
	*ret = s;
	return 0;
}

/* Hand the source to the caller, or mark it owned by the loop. */
static void source_commit(struct loop_source *s, struct loop_source **ret)
{
	if (ret)
		*ret = s;
	else
		s->floating = true;
}

static void source_release_memory(struct loop_source *s)
{
	struct loop *l = s->loop;

	if (s->prev)
		s->prev->next = s->next;
	else
		l->all = s->next;
	if (s->next)
		s->next->prev = s->prev;
	free(s->desc);
	free(s);
}

static int epoll_update(struct loop_source *s)
{
	struct loop *l = s->loop;
	struct epoll_event ev = { .events = s->events, .data.ptr = s };
	bool want = s->enabled && !s->dead && (s->type != SOURCE_IO || s->events);

	if (want == s->in_epoll && !want)
		return 0;
	if (!want) {
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		s->in_epoll = false;
		return 0;
	}
	if (epoll_ctl(l->epfd, s->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->fd, &ev) < 0)
		return -errno;
	s->in_epoll = true;
	return 0;
}

int loop_add_io(struct loop *l, struct loop_source **ret, int fd, uint32_t events,
		loop_io_fn cb, void *userdata)
{
	struct loop_source *s;
	int r;

	if (fd < 0 || !cb)
		return -EINVAL;
	r = source_new(l, SOURCE_IO, userdata, &s);
	if (r < 0)
		return r;
	s->cb.io = cb;
	s->fd = fd;
	s->events = events;
	r = epoll_update(s);
	if (r < 0) {
		source_release_memory(s);
		return r;
	}
	source_commit(s, ret);
	return 0;
}

int loop_io_set_events(struct loop_source *s, uint32_t events)
{
	if (s->type != SOURCE_IO)
		return -EINVAL;
	if (s->events == events)
		return 0;
	s->events = events;
	return epoll_update(s);
}

int loop_add_timer(struct loop *l, struct loop_source **ret, uint64_t when,
		   loop_time_fn cb, void *userdata)
{
	struct loop_source *s;
	int r;

	if (!cb)
		return -EINVAL;
	r = source_new(l, SOURCE_TIMER, userdata, &s);
	if (r < 0)
		return r;
	s->cb.time = cb;
	s->when = USEC_INFINITY;
	r = loop_timer_set(s, when);
	if (r < 0) {
		source_release_memory(s);
		return r;
	}
	source_commit(s, ret);
	return 0;
}

int loop_timer_set(struct loop_source *s, uint64_t when)
{
	struct loop *l = s->loop;
	int r = 0;

	if (s->type != SOURCE_TIMER || s->dead)
		return -EINVAL;
	heap_remove(l, s);
	s->when = when;
	if (when != USEC_INFINITY && s->enabled)
		r = heap_insert(l, s);
	timerfd_rearm(l);
	return r;
}

int loop_timer_set_rel(struct loop_source *s, uint64_t usec)
{
	uint64_t now = s->loop->now;

	return loop_timer_set(s, usec >= USEC_INFINITY - now ? USEC_INFINITY : now + usec);
}

bool loop_timer_is_armed(const struct loop_source *s)
{
	return s->type == SOURCE_TIMER && s->heap_idx != SIZE_MAX;
}

static int sigfd_update(struct loop *l)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &sigfd_marker };
	int fd;

	fd = signalfd(l->sigfd, &l->sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (l->sigfd < 0) {
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			int r = -errno;

			close(fd);
			return r;
		}
		l->sigfd = fd;
	}
	return 0;
}

int loop_add_signal(struct loop *l, struct loop_source **ret, int sig, loop_signal_fn cb,
		    void *userdata)
{
	struct loop_source *s;
	sigset_t one;
	int r;

	if (sig <= 0 || sig >= _NSIG || !cb)
		return -EINVAL;
	if (l->signals[sig])
		return -EBUSY;
	r = source_new(l, SOURCE_SIGNAL, userdata, &s);
	if (r < 0)
		return r;
	s->cb.signal = cb;
	s->sig = sig;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_BLOCK, &one, NULL);
	sigaddset(&l->sigmask, sig);
	r = sigfd_update(l);
	if (r < 0) {
		sigdelset(&l->sigmask, sig);
		source_release_memory(s);
		return r;
	}
	l->signals[sig] = s;
	source_commit(s, ret);
	return 0;
}

int loop_add_child(struct loop *l, struct loop_source **ret, pid_t pid, loop_child_fn cb,
		   void *userdata)
{
	struct loop_source *s;
	int r;

	if (pid <= 1)
		return -EINVAL;
	r = source_new(l, SOURCE_CHILD, userdata, &s);
	if (r < 0)
		return r;
	s->cb.child = cb;
	s->pid = pid;
	s->events = EPOLLIN;
	s->fd = pidfd_open(pid, 0);
	if (s->fd < 0) {
		r = -errno;
		source_release_memory(s);
		return r;
	}
	r = epoll_update(s);
	if (r < 0) {
		close(s->fd);
		source_release_memory(s);
		return r;
	}
	source_commit(s, ret);
	return 0;
}

int loop_child_kill(struct loop_source *s, int sig)
{
	if (s->type != SOURCE_CHILD)
		return -EINVAL;
	if (s->reaped)
		return -ESRCH;
	if (pidfd_send_signal(s->fd, sig, NULL, 0) < 0)
		return -errno;
	return 0;
}

static void defer_queue(struct loop_source *s)
{
	struct loop *l = s->loop;

	if (s->pending)
		return;
	s->pending = true;
	s->defer_next = NULL;
	if (l->defer_tail)
		l->defer_tail->defer_next = s;
	else
		l->defer_head = s;
	l->defer_tail = s;
}

int loop_add_defer(struct loop *l, struct loop_source **ret, loop_defer_fn cb, void *userdata)
{
	struct loop_source *s;
	int r;

	if (!cb)
		return -EINVAL;
	r = source_new(l, SOURCE_DEFER, userdata, &s);
	if (r < 0)
		return r;
	s->cb.defer = cb;
	defer_queue(s);
	source_commit(s, ret);
	return 0;
}

int loop_defer_again(struct loop_source *s)
{
	if (s->type != SOURCE_DEFER || s->dead)
		return -EINVAL;
	defer_queue(s);
	return 0;
}

void loop_source_set_description(struct loop_source *s, const char *desc)
{
	char *d = desc ? strdup(desc) : NULL;

	free(s->desc);
	s->desc = d;
}

void loop_source_set_bulk(struct loop_source *s, bool bulk)
{
	s->bulk = bulk;
}

const char *loop_source_get_description(const struct loop_source *s)
{
	return s->desc ? s->desc : "(unnamed)";
}

struct loop *loop_source_get_loop(const struct loop_source *s)
{
	return s->loop;
}

int loop_source_set_enabled(struct loop_source *s, bool enabled)
{
	if (s->dead)
		return -EINVAL;
	if (s->enabled == enabled)
		return 0;
	s->enabled = enabled;
	switch (s->type) {
	case SOURCE_IO:
	case SOURCE_CHILD:
		return epoll_update(s);
	case SOURCE_TIMER:
		return loop_timer_set(s, s->when);
	default:
		return 0;
	}
}

/* Stop a source from ever firing again; the memory may still be in use. */
static void source_disconnect(struct loop_source *s)
{
	struct loop *l = s->loop;

	switch (s->type) {
	case SOURCE_IO:
		if (s->in_epoll)
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		s->in_epoll = false;
		break;
	case SOURCE_TIMER:
		heap_remove(l, s);
		timerfd_rearm(l);
		break;
	case SOURCE_SIGNAL:
		l->signals[s->sig] = NULL;
		sigdelset(&l->sigmask, s->sig);
		if (l->sigfd >= 0)
			signalfd(l->sigfd, &l->sigmask, 0);
		break;
	case SOURCE_CHILD:
		if (s->in_epoll)
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		s->in_epoll = false;
		if (s->fd >= 0)
			close(s->fd);
		s->fd = -1;
		break;
	case SOURCE_DEFER:
		if (s->pending) {
			struct loop_source **pp = &l->defer_head, *prev = NULL;

			while (*pp && *pp != s) {
				prev = *pp;
				pp = &(*pp)->defer_next;
			}
			if (*pp)
				*pp = s->defer_next;
			if (l->defer_tail == s)
				l->defer_tail = prev;
			s->pending = false;
		}
		break;
	}
}

static void source_destroy(struct loop_source *s)
{
	struct loop *l = s->loop;

	source_disconnect(s);
	if (l->dispatching) {
		s->dead = true;
		s->dead_next = l->dead;
		l->dead = s;
		return;
	}
	source_release_memory(s);
}

struct loop_source *loop_source_free(struct loop_source *s)
{
	if (!s || s->dead)
		return NULL;
	/* A child source owns its process: kill it and let the loop reap it. */
	if (s->type == SOURCE_CHILD && !s->reaped && s->fd >= 0) {
		pidfd_send_signal(s->fd, SIGKILL, NULL, 0);
		s->cb.child = NULL;
		s->userdata = NULL;
		s->floating = true;
		s->enabled = true;
		epoll_update(s);
		return NULL;
	}
	source_destroy(s);
	return NULL;
}

static void source_report_error(struct loop_source *s, int r)
{
	log_error("loop: source '%s' failed: %s; disabled", loop_source_get_description(s),
		  strerror(-r));
	loop_source_set_enabled(s, false);
}

/* ---- dispatch ---- */

/* Whether a timer is due now. */
static bool timer_due(const struct loop *l)
{
	return l->heap_len && l->heap[0]->when <= l->now;
}

/* Fire the due timers; returns how many. */
static int dispatch_due_timers(struct loop *l)
{
	int n = 0;

	while (timer_due(l)) {
		struct loop_source *s = l->heap[0];
		int r;

		heap_remove(l, s);
		s->when = USEC_INFINITY;
		r = s->cb.time(s, l->now, s->userdata);
		if (r < 0 && !s->dead)
			source_report_error(s, r);
		if (s->floating && !s->dead && !loop_timer_is_armed(s))
			source_destroy(s);
		n++;
	}
	timerfd_rearm(l);
	return n;
}

static void dispatch_timers(struct loop *l)
{
	uint64_t exp;

	if (read(l->timerfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_error("loop: timerfd read: %m");
	l->timerfd_armed = USEC_INFINITY;	/* expired: force the next rearm */
	dispatch_due_timers(l);
}

static void dispatch_signals(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sigfd, &si, sizeof(si)) == sizeof(si)) {
		struct loop_source *s;
		int r;

		if (si.ssi_signo >= _NSIG)
			continue;
		s = l->signals[si.ssi_signo];
		if (!s || !s->enabled || s->dead)
			continue;
		r = s->cb.signal(s, &si, s->userdata);
		if (r < 0 && !s->dead)
			source_report_error(s, r);
	}
}

static void dispatch_child(struct loop_source *s)
{
	siginfo_t si = { 0 };
	int r;

	if (waitid(P_PIDFD, s->fd, &si, WEXITED | WNOHANG) < 0) {
		if (errno == EAGAIN)
			return;
		log_error("loop: waitid for pid %d: %m", (int)s->pid);
		si.si_code = CLD_KILLED;
		si.si_status = SIGKILL;
	} else if (si.si_pid == 0) {
		return;		/* not exited yet (spurious wakeup) */
	}
	s->reaped = true;
	source_disconnect(s);
	if (s->cb.child) {
		r = s->cb.child(s, &si, s->userdata);
		if (r < 0 && !s->dead)
			log_error("loop: child source '%s' failed: %s",
				  loop_source_get_description(s), strerror(-r));
	}
	if (s->floating && !s->dead)
		source_destroy(s);
}

static void dispatch_one(struct loop *l, struct epoll_event *ev)
{
	struct loop_source *s = ev->data.ptr;
	int r;

	if (ev->data.ptr == &timerfd_marker) {
		dispatch_timers(l);
		return;
	}
	if (ev->data.ptr == &sigfd_marker) {
		dispatch_signals(l);
		return;
	}
	if (s->dead || !s->enabled)
		return;
	if (s->type == SOURCE_CHILD) {
		dispatch_child(s);
		return;
	}
	r = s->cb.io(s, s->fd, ev->events, s->userdata);
	if (r < 0 && !s->dead)
		source_report_error(s, r);
}

/* Whether @ev is a bulk source's (the loop's own fds are not sources: never bulk). */
static bool is_bulk(const struct epoll_event *ev)
{
	const struct loop_source *s = ev->data.ptr;

	return ev->data.ptr != &timerfd_marker && ev->data.ptr != &sigfd_marker && s->bulk;
}

static int dispatch_defers(struct loop *l)
{
	struct loop_source *s;
	size_t queued = 0;
	int n = 0;

	/* Run only what was queued before we started, so a defer that re-queues itself
	 * cannot starve the rest of the loop. */
	for (s = l->defer_head; s; s = s->defer_next)
		queued++;
	while (queued-- && l->defer_head) {
		int r;

		s = l->defer_head;
		l->defer_head = s->defer_next;
		if (!l->defer_head)
			l->defer_tail = NULL;
		s->pending = false;
		if (!s->enabled || s->dead)
			continue;
		r = s->cb.defer(s, s->userdata);
		n++;
		if (r < 0 && !s->dead)
			source_report_error(s, r);
		if (s->floating && !s->dead && !s->pending)
			source_destroy(s);
	}
	return n;
}

/* The defers, then those they queued, LOOP_DEFER_ROUNDS deep at most. */
static int dispatch_defer_rounds(struct loop *l)
{
	int round, n = 0;

	for (round = 0; round < LOOP_DEFER_ROUNDS && l->defer_head; round++)
		n += dispatch_defers(l);
	return n;
}

static void release_dead(struct loop *l)
{
	while (l->dead) {
		struct loop_source *s = l->dead;

		l->dead = s->dead_next;
		source_release_memory(s);
	}
}

int loop_run_once(struct loop *l, uint64_t timeout)
{
	struct epoll_event events[LOOP_MAX_EVENTS];
	int n, i, ms, dispatched, bulk = 0;

	loop_update_clock(l);
	l->dispatching++;
	dispatched = dispatch_defer_rounds(l);
	l->dispatching--;
	release_dead(l);

	if (l->defer_head || l->exiting || (l->test_clock && timer_due(l)))
		ms = 0;
	else if (timeout == USEC_INFINITY)
		ms = -1;
	else
		ms = (int)((timeout + USEC_PER_MSEC - 1) / USEC_PER_MSEC);

	n = epoll_wait(l->epfd, events, LOOP_MAX_EVENTS, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;

	loop_update_clock(l);
	l->dispatching++;
	if (l->test_clock)	/* no timerfd: the timers the test's clock reached */
		dispatched += dispatch_due_timers(l);
	for (i = 0; i < n; i++)
		if (!is_bulk(&events[i]))
			dispatch_one(l, &events[i]);
		else
			bulk++;
	if (bulk) {
		/*
		 * What the others started goes before the bytes, and what that
		 * queued in turn (a claim's run, then its power switch's request)
		 */
		dispatched += dispatch_defer_rounds(l);
		for (i = 0; i < n; i++)
			if (is_bulk(&events[i]))
				dispatch_one(l, &events[i]);
	}
	l->dispatching--;
	release_dead(l);
	return dispatched + n;
}

int loop_run(struct loop *l)
{
	while (!l->exiting) {
		int r = loop_run_once(l, USEC_INFINITY);

		if (r < 0)
			return r;
	}
	return l->exit_code;
}

void loop_exit(struct loop *l, int code)
{
	l->exiting = true;
	l->exit_code = code;
}

bool loop_is_exiting(const struct loop *l)
{
	return l->exiting;
}

struct loop *loop_free(struct loop *l)
{
	if (!l)
		return NULL;
	release_dead(l);
	while (l->all) {
		struct loop_source *s = l->all;

		if (s->type == SOURCE_CHILD && !s->reaped && s->fd >= 0) {
			siginfo_t si;

			pidfd_send_signal(s->fd, SIGKILL, NULL, 0);
			waitid(P_PIDFD, s->fd, &si, WEXITED);
			s->reaped = true;
		}
		source_disconnect(s);
		source_release_memory(s);
	}
	if (l->sigfd >= 0)
		close(l->sigfd);
	if (l->timerfd >= 0)
		close(l->timerfd);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l->heap);
	free(l);
	return NULL;
}
