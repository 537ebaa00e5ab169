/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.h -- job events: stored, then handed to live listeners
 *
 * Everything that happens to a job (queued, started, phase, result,
 * finished, canceled, requeued) is an event: a kind and a JSON object.
 * events_emit() stores it (store_event_add gives it a per-job sequence
 * number) and calls every listener (results backends, API followers)
 * synchronously; listeners must not block.
 */
#ifndef LABD_EVENTS_H
#define LABD_EVENTS_H

#include <stdint.h>

#include <jansson.h>

struct store;
struct events;
struct events_listener;

struct event {
	int64_t job_id;
	int64_t seq;
	uint64_t ts;		/* realtime usec */
	const char *kind;
	json_t *data;		/* borrowed */
};

typedef void (*events_fn)(const struct event *ev, void *userdata);

int events_new(struct store *st, struct events **ret);
struct events *events_free(struct events *e);

/** events_emit() - store and broadcast; steals the reference to @data (may be NULL). */
int events_emit(struct events *e, int64_t job_id, uint64_t ts, const char *kind, json_t *data);

int events_listen(struct events *e, events_fn fn, void *userdata, struct events_listener **ret);
struct events_listener *events_unlisten(struct events_listener *l);

#endif
