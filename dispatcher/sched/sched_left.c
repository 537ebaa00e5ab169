// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sched_left.c -- the jobs another host's NOTIFY left to that host, looked
 * at again a little later
 *
 * A job submitted through a host that has a free board for it is left to
 * that host: its NOTIFY names the host (`first`) and the other hosts do not
 * claim for it (sched_entry_queued()).  Were that host killed before its
 * board claimed, the job would wait in the queue until a board of the type
 * is freed somewhere, or until that host's lease ran out and it was reaped.
 * So a host with a free board for such a job keeps it here and looks again
 * once SCHED_LEFT_DELAY passed: the jobs still queued then (one read for
 * all of them, store_job_still_queued(), in a read context: the loop does
 * not wait) are placed as any other host's entry, if a board of this host
 * is still free for them.  A job its host claimed meanwhile, the usual case,
 * costs its share of one read and no claim.  One timer for every such job;
 * they are looked at in batches of STORE_STILL_QUEUED_MAX, the due ones at
 * most every SCHED_LEFT_DELAY / 2.  A burst leaves thousands of jobs to
 * the other hosts within seconds: the list grows up to SCHED_LEFT_MAX, and
 * only past that does every free board claim once instead (a claim per
 * free board of every host at once is what a burst must not cost: each
 * host's claims queue behind each other on its connection).  A host
 * without a free board for the job keeps nothing: a board of it freed
 * later claims from the queue anyway.
 */
#include "sched/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "sched/sched_internal.h"
#include "store/store.h"

#define SCHED_LEFT_DELAY (2 * USEC_PER_SEC)
#define SCHED_LEFT_MAX 16384	/* kept at once; more: every free board claims */
#define SCHED_LEFT_BATCH STORE_STILL_QUEUED_MAX	/* looked at in one read */

/* A job left to another host, looked at again at @due (loop time). */
struct sched_left {
	int64_t job;
	char *device_type;
	char **tags;
	uint64_t due;
};

/* The jobs of one look: read in a read context (store_read_later()). */
struct left_look {
	struct sched *sched;
	size_t n;
	int64_t ids[SCHED_LEFT_BATCH];
};

static void left_release(struct sched_left *l)
{
	free(l->device_type);
	strv_free(l->tags);
}

/* A job still queued after its host had the time to claim it: as any other host's entry. */
static int still_queued(const struct job_record *rec, void *ud)
{
	struct store_queued q = { .job = rec->id, .device_type = rec->device_type,
				  .tags = rec->tags, .avoid = rec->avoid };

	log_info("job %lld, left to another host, is still queued: this host's boards may take it",
		 (long long)rec->id);
	sched_entry_queued(ud, &q);
	return 0;
}

static void look(void *ud)
{
	struct left_look *lk = ud;
	struct store *st = lk->sched->deps.run.store;
	int err = store_job_still_queued(st, lk->ids, lk->n, still_queued, lk->sched);

	if (store_read_pending(st))
		return;	/* run again with the answer */
	if (err < 0 && err != -ENOTCONN)	/* the database back: every free board claims */
		log_warning("cannot look whether %zu job(s) left to another host are still queued: %s",
			    lk->n, strerror(-err));
}

/* A batch due by @now (and a little later): the ids of those a free board still fits. */
static struct left_look *take_due(struct sched *s, uint64_t now)
{
	struct left_look *lk = calloc(1, sizeof(*lk));
	size_t i;

	for (i = 0; i < s->n_left && i < SCHED_LEFT_BATCH &&
		    s->left[i].due <= now + SCHED_LEFT_DELAY / 2; i++) {
		if (lk && sched_may_claim_now(s, s->left[i].device_type, s->left[i].tags))
			lk->ids[lk->n++] = s->left[i].job;
		left_release(&s->left[i]);
	}
	memmove(s->left, s->left + i, (s->n_left - i) * sizeof(*s->left));
	s->n_left -= i;
	if (lk)
		lk->sched = s;
	return lk;
}

/* Whether the oldest job kept is due by @now (and a little later). */
static bool left_due(const struct sched *s, uint64_t now)
{
	return s->n_left && s->left[0].due <= now + SCHED_LEFT_DELAY / 2;
}

static int on_left(struct loop_source *src, uint64_t now, void *ud)
{
	struct sched *s = ud;
	struct left_look *lk;

	if (s->left_overflow) {
		s->left_overflow = false;
		sched_kick(s);	/* too many to keep: every free board claims once */
	}
	while (left_due(s, now)) {
		lk = take_due(s, now);
		if (!lk)
			log_warning("cannot look whether jobs left to another host are still "
				    "queued: %s", strerror(ENOMEM));
		else if (!lk->n)
			free(lk);
		else if (store_read_later(s->deps.run.store, s, look, free, lk) < 0)
			log_warning("jobs left to another host: looked at waiting for the database");
	}
	if (s->n_left)
		loop_timer_set(src, s->left[0].due);
	return 0;
}

/* Room for one more job kept: false past SCHED_LEFT_MAX (or out of memory). */
static bool left_room(struct sched *s)
{
	size_t cap = s->cap_left ? 2 * s->cap_left : 64;
	struct sched_left *grown;

	if (s->n_left < s->cap_left)
		return true;
	if (cap > SCHED_LEFT_MAX)
		return false;
	grown = realloc(s->left, cap * sizeof(*s->left));
	if (!grown)
		return false;
	s->left = grown;
	s->cap_left = cap;
	return true;
}

void sched_left_add(struct sched *s, const struct store_queued *q)
{
	struct sched_left *l;
	char **tags;

	if (!q->job)
		return;	/* reservations are not left to a host */
	tags = sched_tags_from_json(q->tags);
	if (!sched_may_claim_now(s, q->device_type, tags)) {
		strv_free(tags);
		return;
	}
	l = left_room(s) ? &s->left[s->n_left] : NULL;
	if (!l || !(l->device_type = strdup(q->device_type))) {
		strv_free(tags);
		s->left_overflow = true;
		if (!loop_timer_is_armed(s->left_timer))
			loop_timer_set_rel(s->left_timer, SCHED_LEFT_DELAY);
		return;
	}
	l->job = q->job;
	l->tags = tags;
	l->due = loop_now(s->deps.run.loop) + SCHED_LEFT_DELAY;
	if (!s->n_left++ && !loop_timer_is_armed(s->left_timer))
		loop_timer_set(s->left_timer, l->due);
}

int sched_left_init(struct sched *s)
{
	int err;

	err = loop_add_timer(s->deps.run.loop, &s->left_timer, USEC_INFINITY, on_left, s);
	if (err < 0)
		return err;
	loop_source_set_description(s->left_timer, "sched:left");
	return 0;
}

void sched_left_release(struct sched *s)
{
	size_t i;

	if (s->deps.run.store)
		store_read_later_forget(s->deps.run.store, s);
	for (i = 0; i < s->n_left; i++)
		left_release(&s->left[i]);
	free(s->left);
	s->left = NULL;
	s->n_left = 0;
	s->cap_left = 0;
	s->left_timer = loop_source_free(s->left_timer);
}
