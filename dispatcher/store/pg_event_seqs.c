// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_event_seqs.c -- the number of a job's next event, which an event
 * written behind must know at once
 *
 * The number of each job's last event, kept in a hash map by job id:
 *  - of the jobs this host runs (claimed or started here, noted live):
 *    kept until they end here (finished, or requeued), whatever else is
 *    noted meanwhile, so that a running job's events never need a read;
 *    there are as many as the jobs running here;
 *  - of the other jobs whose number this host learned (a job it submitted,
 *    read or listed outside a read context, or that ended here): the
 *    PG_EVENT_SEQS_KEPT last used, the least recently used dropped first.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdlib.h>

#define SEQS_BUCKETS_MIN 256	/* a power of two; doubled as entries come */

struct pg_event_seq {
	int64_t job_id;
	int64_t seq;		/* of its last event */
	bool live;		/* it runs here: never dropped */
	struct pg_event_seq *hnext;	/* in its bucket */
	struct pg_event_seq *newer, *older;	/* not live: in the order of use */
};

struct pg_event_seqs {
	struct pg_event_seq **buckets;
	size_t n_buckets;	/* a power of two */
	size_t n;		/* entries */
	size_t n_kept;		/* not live */
	struct pg_event_seq *newest, *oldest;	/* not live */
};

static size_t bucket_of(const struct pg_event_seqs *s, int64_t job_id)
{
	return (size_t)(((uint64_t)job_id * 0x9e3779b97f4a7c15ULL) >> 32) & (s->n_buckets - 1);
}

static struct pg_event_seq *find(const struct pg_event_seqs *s, int64_t job_id)
{
	struct pg_event_seq *e;

	if (!s)
		return NULL;
	for (e = s->buckets[bucket_of(s, job_id)]; e; e = e->hnext)
		if (e->job_id == job_id)
			return e;
	return NULL;
}

static void kept_unlink(struct pg_event_seqs *s, struct pg_event_seq *e)
{
	*(e->newer ? &e->newer->older : &s->newest) = e->older;
	*(e->older ? &e->older->newer : &s->oldest) = e->newer;
	e->newer = e->older = NULL;
	s->n_kept--;
}

static void kept_push(struct pg_event_seqs *s, struct pg_event_seq *e)
{
	e->newer = NULL;
	e->older = s->newest;
	*(s->newest ? &s->newest->newer : &s->oldest) = e;
	s->newest = e;
	s->n_kept++;
}

/* Drop @e, not live, from the map. */
static void drop(struct pg_event_seqs *s, struct pg_event_seq *e)
{
	struct pg_event_seq **pp = &s->buckets[bucket_of(s, e->job_id)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	kept_unlink(s, e);
	s->n--;
	free(e);
}

/* Twice the buckets; -ENOMEM leaves the map as it was. */
static int grow(struct pg_event_seqs *s)
{
	size_t old_n = s->n_buckets, i;
	struct pg_event_seq **old = s->buckets, *e, *next;

	s->buckets = calloc(old_n * 2, sizeof(*s->buckets));
	if (!s->buckets) {
		s->buckets = old;
		return -ENOMEM;
	}
	s->n_buckets = old_n * 2;
	for (i = 0; i < old_n; i++) {
		for (e = old[i]; e; e = next) {
			next = e->hnext;
			e->hnext = s->buckets[bucket_of(s, e->job_id)];
			s->buckets[bucket_of(s, e->job_id)] = e;
		}
	}
	free(old);
	return 0;
}

static struct pg_event_seqs *seqs_new(void)
{
	struct pg_event_seqs *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->n_buckets = SEQS_BUCKETS_MIN;
	s->buckets = calloc(s->n_buckets, sizeof(*s->buckets));
	if (!s->buckets) {
		free(s);
		return NULL;
	}
	return s;
}

/* @job_id's entry, added (not live, number 0) when missing; NULL: out of memory. */
static struct pg_event_seq *get(struct pg_store *ps, int64_t job_id)
{
	struct pg_event_seqs *s = ps->event_seqs;
	struct pg_event_seq *e = find(s, job_id);

	if (e)
		return e;
	if (!s && !(s = ps->event_seqs = seqs_new()))
		return NULL;
	if (s->n >= s->n_buckets)
		grow(s);	/* or longer chains */
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->job_id = job_id;
	e->hnext = s->buckets[bucket_of(s, job_id)];
	s->buckets[bucket_of(s, job_id)] = e;
	s->n++;
	kept_push(s, e);
	return e;
}

/* @e was used: the newest of the kept ones (a live one stays as it is). */
static void touch(struct pg_event_seqs *s, struct pg_event_seq *e)
{
	if (e->live || s->newest == e)
		return;
	kept_unlink(s, e);
	kept_push(s, e);
}

/* At most PG_EVENT_SEQS_KEPT entries that are not live; @keep stays. */
static void trim(struct pg_event_seqs *s, const struct pg_event_seq *keep)
{
	while (s->n_kept > PG_EVENT_SEQS_KEPT && s->oldest != keep)
		drop(s, s->oldest);
}

int64_t pg_event_seq_next(struct pg_store *ps, int64_t job_id)
{
	struct pg_event_seq *e = find(ps->event_seqs, job_id);

	if (!e)
		return 0;
	touch(ps->event_seqs, e);
	return e->seq + 1;
}

void pg_event_seq_note(struct pg_store *ps, int64_t job_id, int64_t seq)
{
	struct pg_event_seq *e = get(ps, job_id);

	if (!e)
		return;	/* its next event is numbered with a read */
	if (seq > e->seq)
		e->seq = seq;
	touch(ps->event_seqs, e);
	trim(ps->event_seqs, e);
}

void pg_event_seq_live(struct pg_store *ps, int64_t job_id, int64_t seq)
{
	struct pg_event_seq *e = seq < 0 ? find(ps->event_seqs, job_id) : get(ps, job_id);

	if (!e)
		return;
	if (seq > e->seq)
		e->seq = seq;
	if (!e->live) {
		kept_unlink(ps->event_seqs, e);
		e->live = true;
	}
}

void pg_event_seq_end(struct pg_store *ps, int64_t job_id)
{
	struct pg_event_seq *e = find(ps->event_seqs, job_id);

	if (!e || !e->live)
		return;
	e->live = false;
	kept_push(ps->event_seqs, e);
	trim(ps->event_seqs, e);
}

void pg_event_seqs_free(struct pg_store *ps)
{
	struct pg_event_seqs *s = ps->event_seqs;
	struct pg_event_seq *e, *next;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_buckets; i++) {
		for (e = s->buckets[i]; e; e = next) {
			next = e->hnext;
			free(e);
		}
	}
	free(s->buckets);
	free(s);
	ps->event_seqs = NULL;
}
