// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sched_finish.c -- the one way a job ends: its outcome into the store, then
 * its "finished" event
 *
 * Every consumer of the event stream waits for "finished" (backends, KCIDB,
 * JUnit), so every way a job ends goes through sched_finish_job(), and the
 * event follows the store: a job the store still has running is ended once
 * more after a restart (sched_recover()), and must not have announced its
 * end yet.  When the store cannot record the end (its disk is full), the end
 * is kept and tried again every SCHED_FINISH_RETRY until it is recorded,
 * then announced: the job is not left running.  Each try first reads the
 * jobs whose end waits (one of them may have been canceled meanwhile), in a
 * read context (store_read_later()): on PostgreSQL the loop does not wait
 * for those reads, the try is made once their answers are in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/log.h"
#include "core/loop.h"
#include "journal/events.h"
#include "sched/sched_internal.h"
#include "store/store.h"

#define SCHED_FINISH_RETRY (2 * USEC_PER_SEC)

/* An end the store did not record yet. */
struct sched_end {
	struct sched_end *next;
	int64_t id;
	enum job_health health;
	enum error_type type;
	char *msg;		/* or NULL */
	char *device;		/* or NULL */
	int results_fail;	/* < 0: not counted */
	bool finished;		/* the store has the job finished (a try's read) */
};

/* One try of the ends kept when the retry timer fired (store_read_later()). */
struct retry_round {
	struct sched *sched;
	struct sched_end *ends;	/* taken from sched->ends; what is left goes back */
};

static void end_free(struct sched_end *e)
{
	free(e->msg);
	free(e->device);
	free(e);
}

static void ends_free(struct sched_end *e)
{
	struct sched_end *next;

	for (; e; e = next) {
		next = e->next;
		end_free(e);
	}
}

/* The "finished" event of @e, recorded in the store. */
static void announce(struct sched *s, const struct sched_end *e)
{
	json_t *data;

	data = json_pack("{s:s, s:s, s:s?, s:s?}", "health", job_health_name(e->health),
			 "error_type", error_type_name(e->type), "error_msg", e->msg, "device",
			 e->device);
	if (data && e->results_fail >= 0)
		json_object_set_new(data, "results_fail", json_integer(e->results_fail));
	events_emit(s->deps.run.events, e->id, loop_realtime(s->deps.run.loop), "finished", data);
}

/* Record @e in the store, then announce it; -errno when the store refused. */
static int record(struct sched *s, const struct sched_end *e)
{
	int err;

	err = store_job_finish(s->deps.run.store, e->id, e->health, e->type, e->msg,
			       loop_realtime(s->deps.run.loop));
	if (err < 0)
		return err;
	announce(s, e);
	return 0;
}

/* Whether the store has @e's job finished already (canceled while its end waited). */
static void read_finished(struct sched *s, struct sched_end *e)
{
	struct job_record rec = { 0 };

	e->finished = store_job_get(s->deps.run.store, e->id, &rec) == 0 &&
		      rec.state == JOB_STATE_FINISHED;
	job_record_release(&rec);
}

/* Give the ends @r did not record back to the scheduler, and try them again later. */
static void round_give_back(struct retry_round *r)
{
	struct sched *s = r->sched;
	struct sched_end **pp = &s->ends;

	if (!r->ends)
		return;
	while (*pp)
		pp = &(*pp)->next;
	*pp = r->ends;
	r->ends = NULL;
	if (!loop_timer_is_armed(s->retry_ends))
		loop_timer_set_rel(s->retry_ends, SCHED_FINISH_RETRY);
}

/*
 * A try: read every job of the round, then, once every answer is in (not in
 * a run whose reads went to the database), record each end not recorded
 * meanwhile.  Only the last run writes, so no end is recorded twice.
 */
static void round_run(void *userdata)
{
	struct retry_round *r = userdata;
	struct store *st = r->sched->deps.run.store;
	struct sched_end **pp, *e;

	for (e = r->ends; e; e = e->next)
		read_finished(r->sched, e);
	if (store_read_pending(st))
		return;
	for (pp = &r->ends; (e = *pp);) {
		if (!e->finished && record(r->sched, e) < 0) {
			pp = &e->next;
			continue;
		}
		log_info("job %lld: its end is recorded now", (long long)e->id);
		*pp = e->next;
		end_free(e);
	}
	round_give_back(r);
}

/* After the last run, or when dropped (labd stops): what is left is freed. */
static void round_free(void *userdata)
{
	struct retry_round *r = userdata;

	ends_free(r->ends);
	free(r);
}

static int on_retry(struct loop_source *src, uint64_t now, void *ud)
{
	struct sched *s = ud;
	struct retry_round *r;

	if (!s->ends)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		loop_timer_set_rel(s->retry_ends, SCHED_FINISH_RETRY);
		return 0;
	}
	r->sched = s;
	r->ends = s->ends;
	s->ends = NULL;
	store_read_later(s->deps.run.store, &s->ends, round_run, round_free, r);
	return 0;
}

/* Keep @e for later; false when even that failed (out of memory). */
static bool keep(struct sched *s, const struct sched_end *e)
{
	struct sched_end *k = calloc(1, sizeof(*k));

	if (!k || (!s->retry_ends && loop_add_timer(s->deps.run.loop, &s->retry_ends,
						    USEC_INFINITY, on_retry, s) < 0)) {
		free(k);
		return false;
	}
	*k = *e;
	k->msg = e->msg ? strdup(e->msg) : NULL;
	k->device = e->device ? strdup(e->device) : NULL;
	k->next = s->ends;
	s->ends = k;
	if (!loop_timer_is_armed(s->retry_ends))
		loop_timer_set_rel(s->retry_ends, SCHED_FINISH_RETRY);
	return true;
}

void sched_finish_job(struct sched *s, int64_t id, enum job_health health, enum error_type type,
		      const char *msg, const char *device, int results_fail)
{
	struct sched_end e = { NULL, id, health, type, (char *)msg, (char *)device, results_fail,
				false };
	int err;

	sched_keep_drop(s, id);
	err = record(s, &e);

	if (!err)
		return;
	log_error("job %lld: cannot record its end: %s; trying again", (long long)id,
		  strerror(-err));
	if (!keep(s, &e))
		log_error("job %lld: its end is lost until labd restarts", (long long)id);
}

/* ---- a queued job canceled ---- */

/* A queued job's cancel, written: announced once the store is read back. */
struct queued_cancel {
	struct sched *sched;
	struct queued_cancel *next;	/* sched->cancels */
	int64_t id;
	uint64_t when;		/* its end, as written: tells this cancel's from another's */
	char *why;
};

static struct queued_cancel *cancel_pending(struct sched *s, int64_t id)
{
	struct queued_cancel *c;

	for (c = s->cancels; c && c->id != id; c = c->next)
		;
	return c;
}

/* The job as the store has it after the cancel: announced if the cancel took. */
static void cancel_read_back(void *userdata)
{
	struct queued_cancel *c = userdata;
	struct sched *s = c->sched;
	struct sched_end e = { NULL, c->id, JOB_HEALTH_CANCELED, ERROR_NONE, c->why, NULL, -1,
				true };
	struct job_record rec = { 0 };
	int err = store_job_get(s->deps.run.store, c->id, &rec);

	if (store_read_pending(s->deps.run.store))
		goto out;	/* run again with the answer */
	if (!err && (rec.state != JOB_STATE_FINISHED || rec.ended != c->when)) {
		log_info("job %lld: not canceled here: %s", (long long)c->id,
			 rec.state == JOB_STATE_FINISHED ? "it ended otherwise meanwhile" :
							   "a host started it meanwhile");
		goto out;
	}
	if (err < 0)	/* most likely it took: a lost connection after the write */
		log_warning("job %lld: cannot read it back after its cancel: %s", (long long)c->id,
			    strerror(-err));
	events_emit(s->deps.run.events, c->id, loop_realtime(s->deps.run.loop), "cancel",
		    json_pack("{s:s}", "reason", c->why));
	sched_keep_drop(s, c->id);
	announce(s, &e);
out:
	job_record_release(&rec);
}

static void cancel_free(void *userdata)
{
	struct queued_cancel *c = userdata, **pp;

	for (pp = &c->sched->cancels; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	free(c->why);
	free(c);
}

int sched_cancel_queued(struct sched *s, int64_t id, const char *why)
{
	struct store *st = s->deps.run.store;
	struct queued_cancel *c;
	int err;

	if (cancel_pending(s, id))
		return 0;	/* canceled here a moment ago: that cancel announces it */
	c = calloc(1, sizeof(*c));
	if (!c || !(c->why = strdup(why ? why : ""))) {
		free(c);
		return -ENOMEM;
	}
	c->sched = s;
	c->id = id;
	c->when = loop_realtime(s->deps.run.loop);
	err = store_job_finish(st, id, JOB_HEALTH_CANCELED, ERROR_NONE, c->why, c->when);
	if (err < 0) {
		free(c->why);
		free(c);
		return err;
	}
	c->next = s->cancels;
	s->cancels = c;
	/* read after the write, in a read context: the loop does not wait */
	store_read_later(st, &s->cancels, cancel_read_back, cancel_free, c);
	return 0;
}

void sched_finish_free(struct sched *s)
{
	if (s->deps.run.store)
		store_read_later_forget(s->deps.run.store, &s->cancels);
	if (s->deps.run.store)
		store_read_later_forget(s->deps.run.store, &s->ends);	/* tries not done */
	ends_free(s->ends);
	s->ends = NULL;
	s->retry_ends = loop_source_free(s->retry_ends);
}
