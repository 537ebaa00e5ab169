/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.h -- job events: stored, then handed to live listeners
 *
 * journal/ owns what a job leaves behind while it runs: its events (this
 * header; stored in the store, then handed to listeners) and its console log
 * files (joblog.h).
 *
 * Everything that happens to a job (queued, started, phase, result,
 * finished, canceled, requeued) is an event: a kind and a JSON object.
 * events_emit() stores it (store_event_add gives it a per-job sequence
 * number) and calls every listener (results backends, API followers) once
 * the store says it is durable (store_sync()): at once without batching,
 * else from the loop after the commit, in the order emitted.  An event
 * whose number the store cannot give without reading its job (PostgreSQL:
 * a job this host neither runs nor knew lately) is stored once that read,
 * made without waiting, is answered, the job's next events behind it: a
 * job's events always come in the order emitted, another job's may come
 * between.  Listeners must not block.  A host another host reaped (its
 * store refuses its writes, -ESTALE) announces nothing more: the events
 * stored and not yet committed are dropped with what comes after, the host
 * that reaped it announced what became of its jobs (events_announce()).
 *
 * The growth of a running job's console log is announced the same way, but
 * not stored (the log files are the record): the scheduler calls
 * events_log_grew() after each append, and log listeners (the API's log
 * followers, the results backends) read the new bytes from the files.
 *
 * A listener may unlisten itself, or another, from inside a callback.
 */
#ifndef LABD_EVENTS_H
#define LABD_EVENTS_H

#include <stdbool.h>
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
	const char *data_text;	/* @data as compact JSON, as stored (borrowed) */
};

typedef void (*events_fn)(const struct event *ev, void *userdata);
/** A log listener: the console log of running job @job_id grew. */
typedef void (*events_log_fn)(int64_t job_id, void *userdata);

int events_new(struct store *st, struct events **ret);
struct events *events_free(struct events *e);

/** events_emit() - store and broadcast; steals the reference to @data (may be NULL). */
int events_emit(struct events *e, int64_t job_id, uint64_t ts, const char *kind, json_t *data);

/**
 * events_announce() - hand the listeners an event the store wrote by itself
 * (store_params.event: the jobs of a host this one reaped), already numbered
 * (@seq) and durable; not stored again.  It comes after the events emitted
 * before it.  @data_text: the event's JSON object text (NULL: {}).
 */
int events_announce(struct events *e, int64_t job_id, int64_t seq, uint64_t ts, const char *kind,
		    const char *data_text);

/** events_waiting() - whether emitted events wait for the store's commit, or their number. */
bool events_waiting(const struct events *e);

/** events_listen() - call @fn for every event from now on; @ret (optional) to unlisten. */
int events_listen(struct events *e, events_fn fn, void *userdata, struct events_listener **ret);

/** events_listen_log() - call @fn whenever a running job's log grows. */
int events_listen_log(struct events *e, events_log_fn fn, void *userdata,
		      struct events_listener **ret);

/** events_unlisten() - stop a listener of either kind; accepts NULL; returns NULL. */
struct events_listener *events_unlisten(struct events_listener *l);

/** events_log_grew() - tell the log listeners that job @job_id's log grew. */
void events_log_grew(struct events *e, int64_t job_id);

#endif
