// SPDX-License-Identifier: GPL-2.0-or-later
/* events.c -- store job events and hand them, and log growth, to listeners */
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

struct events {
	struct store *st;
	struct events_listener *listeners;
	unsigned dispatching;
};

int events_new(struct store *st, struct events **ret)
{
	struct events *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->st = st;
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

struct events *events_free(struct events *e)
{
	struct events_listener *l;

	if (!e)
		return NULL;
	while ((l = e->listeners)) {
		e->listeners = l->next;
		free(l);
	}
	free(e);
	return NULL;
}

int events_emit(struct events *e, int64_t job_id, uint64_t ts, const char *kind, json_t *data)
{
	struct event ev = { .job_id = job_id, .ts = ts, .kind = kind };
	struct events_listener *l;
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
	free(text);
	if (r < 0) {
		log_error("cannot store event '%s' of job %lld: %s", kind, (long long)job_id,
			  strerror(-r));
		json_decref(data);
		return r;
	}
	ev.data = data;
	e->dispatching++;
	for (l = e->listeners; l; l = l->next)
		if (!l->dead && l->fn)
			l->fn(&ev, l->userdata);
	if (--e->dispatching == 0)
		reap(e);
	json_decref(data);
	return 0;
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
