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
 *
 * An event is stored with its number (its seq in the job), which a store
 * writing behind may not know without reading the job (PostgreSQL, a job
 * this host does not run and has not read lately): it does not wait for
 * that read in the loop (store_event_add() -EAGAIN).  The event is held
 * here, the job read (store_read_later()), and once the answer is in the
 * event is stored, numbered from it; the job's events emitted meanwhile
 * are held behind it, so that a job's events keep their order (those of
 * other jobs go on).
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

/* An event waiting for its number, or stored and waiting for the store's commit. */
struct pending {
	struct event ev;	/* kind, data and data_text owned */
	struct pending *next;
};

struct events {
	struct store *st;
	struct events_listener *listeners;
	unsigned dispatching;
	struct pending *pending, **pending_tail;	/* stored, in order */
	struct pending *unnumbered, **unnumbered_tail;	/* waiting for their number */
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
	e->unnumbered_tail = &e->unnumbered;
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

static void pending_free_all(struct pending *p)
{
	struct pending *next;

	for (; p; p = next) {
		next = p->next;
		pending_free(p);
	}
}

struct events *events_free(struct events *e)
{
	struct events_listener *l;

	if (!e)
		return NULL;
	store_forget(e->st, e);
	store_read_later_forget(e->st, e);
	pending_free_all(e->pending);
	pending_free_all(e->unnumbered);
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
 * The store dropped every write of this host (-ESTALE: another host reaped
 * it, and ended or requeued its jobs): the events stored are nobody's to
 * hear of, that host announced what became of their jobs.
 */
static void drop_pending(struct events *e)
{
	size_t n = pending_count(e);

	pending_free_all(e->pending);
	e->pending = NULL;
	e->pending_tail = &e->pending;
	if (n)
		log_warning("%zu job event(s) not announced: the store refused this host's writes",
			    n);
}

/*
 * Ask the store to say when the @covered events stored so far are durable;
 * 0 when they are already (nothing waits then).
 */
static int sync_events(struct events *e, size_t covered)
{
	int r = store_sync(e->st, on_durable, e);

	if (r == -ESTALE)
		drop_pending(e);
	else if (r < 0)
		log_error("cannot wait for the store: %s", strerror(-r));
	e->waiting = r > 0;
	e->covered = e->waiting ? covered : 0;
	return r;
}

/* The store committed: hand out what waited for it, in order. */
static void on_durable(int err, void *ud)
{
	struct events *e = ud;

	e->waiting = false;
	if (err == -ESTALE) {
		e->covered = 0;
		drop_pending(e);
		return;
	}
	if (err < 0)
		log_error("job events may be lost: the store could not commit them: %s",
			  strerror(-err));
	broadcast_pending(e, e->covered);
	e->covered = 0;
	/* stored while that sync was on its way: the next one covers them */
	if (e->pending && sync_events(e, pending_count(e)) <= 0)
		broadcast_pending(e, SIZE_MAX);
}

/* An event of job @job_id; @data and @text stolen (freed on failure: NULL). */
/* An event to store or announce, @data's reference stolen (NULL: {}); NULL when out of memory. */
static struct pending *pending_new(int64_t job_id, uint64_t ts, const char *kind, json_t *data)
{
	struct pending *p = calloc(1, sizeof(*p));
	char *text;

	if (!data)
		data = json_object();
	text = data ? json_dumps(data, JSON_COMPACT) : NULL;
	if (!p || !text || !(p->ev.kind = strdup(kind))) {
		free(p);
		json_decref(data);
		free(text);
		return NULL;
	}
	p->ev.job_id = job_id;
	p->ev.ts = ts;
	p->ev.data = data;
	p->ev.data_text = text;	/* listeners that send the event as JSON need not dump it again */
	return p;
}

/* @p was stored: handed out once durable (at once when it is already). */
static void stored(struct events *e, struct pending *p)
{
	*e->pending_tail = p;
	e->pending_tail = &p->next;
	/* not waiting: nothing else is pending, the sync covers @p only */
	if (!e->waiting && sync_events(e, 1) <= 0)
		broadcast_pending(e, SIZE_MAX);
}

/* Store @p with its number: 0, -EAGAIN (a read must number it), or the error (logged). */
static int store_numbered(struct events *e, struct pending *p, int err)
{
	if (!err)
		err = store_event_add(e->st, p->ev.job_id, p->ev.ts, p->ev.kind, p->ev.data_text,
				      &p->ev.seq);
	if (err < 0 && err != -EAGAIN && err != -ESTALE)	/* -ESTALE: fenced, dropped */
		log_error("cannot store event '%s' of job %lld: %s", p->ev.kind,
			  (long long)p->ev.job_id, strerror(-err));
	return err;
}

/* Store the events of job @job_id held for their number, in order (@err: its read's error). */
static void store_held(struct events *e, int64_t job_id, int err)
{
	struct pending **pp = &e->unnumbered, *p;

	while ((p = *pp)) {
		if (p->ev.job_id != job_id) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		if (!*pp)
			e->unnumbered_tail = pp;
		p->next = NULL;
		/* numbered from the read now; one that still cannot be is not waited for */
		if (store_numbered(e, p, err) < 0) {
			if (!err)
				log_error("cannot number event '%s' of job %lld", p->ev.kind,
					  (long long)job_id);
			pending_free(p);
			continue;
		}
		stored(e, p);
	}
}

/* The job whose events wait for their number (store_read_later()). */
struct numbering {
	struct events *e;
	int64_t job_id;
};

/* Read the job; once the answer is in, its events held are stored, numbered from it. */
static void number_held(void *userdata)
{
	struct numbering *n = userdata;
	struct job_record rec = { 0 };
	int err = store_job_get(n->e->st, n->job_id, &rec);

	job_record_release(&rec);
	if (store_read_pending(n->e->st))
		return;	/* run again with the answer */
	store_held(n->e, n->job_id, err);
}

/* Whether an event of job @job_id waits for its number (the next ones wait behind it). */
static bool held(const struct events *e, int64_t job_id)
{
	const struct pending *p;

	for (p = e->unnumbered; p; p = p->next)
		if (p->ev.job_id == job_id)
			return true;
	return false;
}

/* Hold @p, the first of its job whose number needs a read, and read the job. */
static int number_later(struct events *e, struct pending *p)
{
	struct numbering *n = malloc(sizeof(*n));
	int64_t job_id = p->ev.job_id;

	*e->unnumbered_tail = p;
	e->unnumbered_tail = &p->next;
	if (!n) {
		store_held(e, job_id, -ENOMEM);
		return -ENOMEM;
	}
	n->e = e;
	n->job_id = job_id;
	if (store_read_later(e->st, e, number_held, free, n) < 0 && held(e, job_id)) {
		store_held(e, job_id, -ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

int events_emit(struct events *e, int64_t job_id, uint64_t ts, const char *kind, json_t *data)
{
	struct pending *p = pending_new(job_id, ts, kind, data);
	int r;

	if (!p)
		return -ENOMEM;
	if (held(e, job_id)) {	/* behind an event of its job that waits for its number */
		*e->unnumbered_tail = p;
		e->unnumbered_tail = &p->next;
		return 0;
	}
	r = store_numbered(e, p, 0);
	if (r == -EAGAIN)
		return number_later(e, p);
	if (r < 0) {
		pending_free(p);
		return r;
	}
	stored(e, p);
	return 0;
}

int events_announce(struct events *e, int64_t job_id, int64_t seq, uint64_t ts, const char *kind,
		    const char *data_text)
{
	struct pending *p = pending_new(job_id, ts, kind,
					json_loads(data_text ? data_text : "{}", 0, NULL));

	if (!p)
		return -ENOMEM;
	p->ev.seq = seq;
	stored(e, p);	/* behind the events stored before it, handed out in order */
	return 0;
}

bool events_waiting(const struct events *e)
{
	return e->waiting || e->unnumbered;
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
