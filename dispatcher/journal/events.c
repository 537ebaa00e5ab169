// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * events.c -- store job events and hand them, and log growth, to listeners
 *
 * An event reaches its listeners once the store says it is durable
 * (store_sync()): with SQLite's batching that is the start of the next loop
 * iteration, with PostgreSQL the database's commit.  A listener thus never
 * announces (to a backend's spool, a follower, KCIDB) what a crash could
 * take back, nor what another host of the lab cannot read yet (a follower
 * told "finished" asks another host for the job), and the events keep their
 * order.  A sync covers the events stored before it was asked for: the
 * events stored while it was on its way wait for the next one.
 */
#include "journal/events.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/store.h"

struct events_listener {
	struct events *e;
	events_fn fn;		/* an event listener, */
	events_log_fn log_fn;	/* or a log listener */
	void *userdata;
	bool dead;
	struct events_listener *next;
};

/* An event stored, waiting for the store's commit before it is handed out. */
struct pending {
	struct event ev;	/* kind, data and data_text owned */
	struct pending *next;
};

struct events {
	struct store *st;
	struct events_listener *listeners;
	unsigned dispatching;
	struct pending *pending, **pending_tail;
	bool waiting;		/* for store_sync()'s completion */
	size_t covered;		/* pending events stored before that sync was asked for */
};

int events_new(struct store *st, struct events **ret)
{
	struct events *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->st = st;
	e->pending_tail = &e->pending;
	*ret = e;
	return 0;
}

static void reap(struct events *e)
{
	struct events_listener **pp = &e->listeners;

	while (*pp) {
		struct events_listener *l = *pp;

		if (l->dead) {
			*pp = l->next;
			free(l);
		} else {
			pp = &l->next;
		}
	}
}

static void pending_free(struct pending *p)
{
	free((char *)p->ev.kind);
	json_decref(p->ev.data);
	free((char *)p->ev.data_text);
	free(p);
}

struct events *events_free(struct events *e)
{
	struct events_listener *l;
	struct pending *p;

	if (!e)
		return NULL;
	store_forget(e->st, e);
	while ((p = e->pending)) {
		e->pending = p->next;
		pending_free(p);
	}
	while ((l = e->listeners)) {
		e->listeners = l->next;
		free(l);
	}
	free(e);
	return NULL;
}

static void broadcast(struct events *e, const struct event *ev)
{
	struct events_listener *l;

	e->dispatching++;
	for (l = e->listeners; l; l = l->next)
		if (!l->dead && l->fn)
			l->fn(ev, l->userdata);
	if (--e->dispatching == 0)
		reap(e);
}

static size_t pending_count(const struct events *e)
{
	const struct pending *p;
	size_t n = 0;

	for (p = e->pending; p; p = p->next)
		n++;
	return n;
}

/* Hand out the first @n pending events. */
static void broadcast_pending(struct events *e, size_t n)
{
	struct pending *p;

	while (n-- && (p = e->pending)) {
		e->pending = p->next;
		if (!e->pending)
			e->pending_tail = &e->pending;
		broadcast(e, &p->ev);
		pending_free(p);
	}
}

static void on_durable(int err, void *ud);

/*
 * Ask the store to say when the @covered events stored so far are durable;
 * 0 when they are already (nothing waits then).
 */
static int sync_events(struct events *e, size_t covered)
{
	int r = store_sync(e->st, on_durable, e);

	if (r < 0)
		log_error("cannot wait for the store: %s", strerror(-r));
	e->waiting = r > 0;
	e->covered = e->waiting ? covered : 0;
	return r;
}

/* The store committed: hand out what waited for it, in order. */
static void on_durable(int err, void *ud)
{
	struct events *e = ud;

	if (err < 0)
		log_error("job events may be lost: the store could not commit them: %s",
			  strerror(-err));
	e->waiting = false;
	broadcast_pending(e, e->covered);
	e->covered = 0;
	/* stored while that sync was on its way: the next one covers them */
	if (e->pending && sync_events(e, pending_count(e)) <= 0)
		broadcast_pending(e, SIZE_MAX);
}

/* Keep @ev (its data's reference and data_text stolen) until the store's commit. */
static int hold(struct events *e, const struct event *ev)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p || !(p->ev.kind = strdup(ev->kind))) {
		free(p);
		json_decref(ev->data);
		free((char *)ev->data_text);
		return -ENOMEM;
	}
	p->ev.job_id = ev->job_id;
	p->ev.seq = ev->seq;
	p->ev.ts = ev->ts;
	p->ev.data = ev->data;
	p->ev.data_text = ev->data_text;
	*e->pending_tail = p;
	e->pending_tail = &p->next;
	return 0;
}

int events_emit(struct events *e, int64_t job_id, uint64_t ts, const char *kind, json_t *data)
{
	struct event ev = { .job_id = job_id, .ts = ts, .kind = kind };
	char *text;
	int r;

	if (!data)
		data = json_object();
	text = data ? json_dumps(data, JSON_COMPACT) : NULL;
	if (!text) {
		json_decref(data);
		return -ENOMEM;
	}
	r = store_event_add(e->st, job_id, ts, kind, text, &ev.seq);
	if (r < 0) {
		log_error("cannot store event '%s' of job %lld: %s", kind, (long long)job_id,
			  strerror(-r));
		json_decref(data);
		free(text);
		return r;
	}
	ev.data = data;
	ev.data_text = text;	/* listeners that send the event as JSON need not dump it again */
	if (!e->waiting)
		sync_events(e, 1);	/* this event, the only one pending */
	if (e->waiting)
		return hold(e, &ev);	/* until a sync asked for after it completes */
	broadcast(e, &ev);
	json_decref(data);
	free(text);
	return 0;
}

bool events_waiting(const struct events *e)
{
	return e->waiting;
}

void events_log_grew(struct events *e, int64_t job_id)
{
	struct events_listener *l;

	e->dispatching++;
	for (l = e->listeners; l; l = l->next)
		if (!l->dead && l->log_fn)
			l->log_fn(job_id, l->userdata);
	if (--e->dispatching == 0)
		reap(e);
}

static int add_listener(struct events *e, events_fn fn, events_log_fn log_fn, void *userdata,
			struct events_listener **ret)
{
	struct events_listener *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->e = e;
	l->fn = fn;
	l->log_fn = log_fn;
	l->userdata = userdata;
	l->next = e->listeners;
	e->listeners = l;
	if (ret)
		*ret = l;
	return 0;
}

int events_listen(struct events *e, events_fn fn, void *userdata, struct events_listener **ret)
{
	return add_listener(e, fn, NULL, userdata, ret);
}

int events_listen_log(struct events *e, events_log_fn fn, void *userdata,
		      struct events_listener **ret)
{
	return add_listener(e, NULL, fn, userdata, ret);
}

struct events_listener *events_unlisten(struct events_listener *l)
{
	if (!l)
		return NULL;
	l->dead = true;
	if (!l->e->dispatching)
		reap(l->e);
	return NULL;
}
