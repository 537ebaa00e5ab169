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
 * then announced: the job is not left running.
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
};

static void end_free(struct sched_end *e)
{
	free(e->msg);
	free(e->device);
	free(e);
}

/* Record @e in the store, then announce it; -errno when the store refused. */
static int record(struct sched *s, const struct sched_end *e)
{
	json_t *data;
	int err;

	err = store_job_finish(s->deps.run.store, e->id, e->health, e->type, e->msg,
			       loop_realtime(s->deps.run.loop));
	if (err < 0)
		return err;
	data = json_pack("{s:s, s:s, s:s?, s:s?}", "health", job_health_name(e->health),
			 "error_type", error_type_name(e->type), "error_msg", e->msg, "device",
			 e->device);
	if (data && e->results_fail >= 0)
		json_object_set_new(data, "results_fail", json_integer(e->results_fail));
	events_emit(s->deps.run.events, e->id, loop_realtime(s->deps.run.loop), "finished", data);
	return 0;
}

/* Whether the store has @id finished already (canceled while its end waited): announced then. */
static bool finished_meanwhile(struct sched *s, int64_t id)
{
	struct job_record rec = { 0 };
	bool done = store_job_get(s->deps.run.store, id, &rec) == 0 &&
		    rec.state == JOB_STATE_FINISHED;

	job_record_release(&rec);
	return done;
}

static int on_retry(struct loop_source *src, uint64_t now, void *ud)
{
	struct sched *s = ud;
	struct sched_end **pp = &s->ends, *e;

	while ((e = *pp)) {
		if (!finished_meanwhile(s, e->id) && record(s, e) < 0) {
			pp = &e->next;
			continue;
		}
		log_info("job %lld: its end is recorded now", (long long)e->id);
		*pp = e->next;
		end_free(e);
	}
	if (s->ends)
		loop_timer_set_rel(s->retry_ends, SCHED_FINISH_RETRY);
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
	struct sched_end e = { NULL, id, health, type, (char *)msg, (char *)device, results_fail };
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

void sched_finish_free(struct sched *s)
{
	struct sched_end *e;

	while ((e = s->ends)) {
		s->ends = e->next;
		end_free(e);
	}
	s->retry_ends = loop_source_free(s->retry_ends);
}
