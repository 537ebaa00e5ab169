// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sched_keep.c -- what labd keeps of a queued job outside the store: its
 * secrets, and the end of its wait in the queue
 *
 * Secrets: the stored definition holds "[secret]" where the job had its
 * secrets and login passwords (job_redact()); the values live here, in
 * memory only, from the submission to the job's end, and go back into the
 * job when it starts.  A job that lost them (labd restarted meanwhile) is
 * canceled, saying so: its owner submits it again.
 *
 * Queue timeouts: a job still queued at submitted + timeouts.queue is
 * canceled with the reason, through store_read_later(): sched_cancel()
 * reads the job first, and on PostgreSQL the loop does not wait for it.
 * After a restart the deadlines of the queued jobs are read back from
 * their definitions (sched_keep_queued()).
 */
#include "sched/sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/log.h"
#include "core/loop.h"
#include "job/job.h"
#include "store/store.h"

#define KEEP_REDACTED "[secret]"

static void id_key(int64_t id, char *buf, size_t size)
{
	snprintf(buf, size, "%lld", (long long)id);
}

/* ---- secrets ---- */

static bool job_has_secrets(const struct job *job)
{
	size_t i;

	for (i = 0; i < job->n_actions; i++)
		if (job->actions[i].kind == JOB_ACTION_BOOT && job->actions[i].boot.auto_login.password)
			return true;
	return job->secrets.n > 0;
}

/* {"secrets": {NAME: value}, "passwords": {"<action index>": value}} */
static json_t *secrets_of(const struct job *job)
{
	json_t *o = json_pack("{s:{}, s:{}}", "secrets", "passwords");
	char key[24];
	size_t i;

	for (i = 0; o && i < job->secrets.n; i++)
		json_object_set_new(json_object_get(o, "secrets"), job->secrets.keys[i],
				    json_string(job->secrets.vals[i]));
	for (i = 0; o && i < job->n_actions; i++) {
		const char *pw = job->actions[i].kind == JOB_ACTION_BOOT ?
				 job->actions[i].boot.auto_login.password : NULL;

		if (!pw)
			continue;
		snprintf(key, sizeof(key), "%zu", i);
		json_object_set_new(json_object_get(o, "passwords"), key, json_string(pw));
	}
	return o;
}

/* ---- queue deadlines ---- */

static int on_queue_timer(struct loop_source *src, uint64_t now, void *ud);

/* Arm the timer at the earliest deadline still kept. */
static void rearm(struct sched *s)
{
	uint64_t first = UINT64_MAX, now = loop_realtime(s->deps.run.loop), at;
	const char *key;
	json_t *v;

	json_object_foreach(s->deadlines, key, v)
		if ((uint64_t)json_integer_value(v) < first)
			first = (uint64_t)json_integer_value(v);
	if (first == UINT64_MAX) {
		loop_timer_set(s->queue_timer, USEC_INFINITY);
		return;
	}
	at = first > now ? first - now : 0;
	loop_timer_set(s->queue_timer, loop_now(s->deps.run.loop) + at);
}

static void keep_deadline(struct sched *s, int64_t id, const struct job *job, uint64_t submitted)
{
	char key[24];

	if (!job->queue_timeout)
		return;
	id_key(id, key, sizeof(key));
	json_object_set_new(s->deadlines, key, json_integer((json_int_t)(submitted +
								      job->queue_timeout)));
	rearm(s);
}

#define QUEUE_TIMEOUT_WHY "still queued when its queue timeout (timeouts.queue) ran out"

/* A job whose wait ended, canceled once its read is in (store_read_later()). */
struct timed_out {
	struct sched *sched;
	int64_t id;
};

static void cancel_timed_out(void *userdata)
{
	struct timed_out *t = userdata;

	sched_cancel(t->sched, t->id, QUEUE_TIMEOUT_WHY);	/* acts only with its read in */
}

/* Cancel every job whose wait ended (those started meanwhile were dropped). */
static int on_queue_timer(struct loop_source *src, uint64_t now, void *ud)
{
	struct sched *s = ud;
	uint64_t real = loop_realtime(s->deps.run.loop);
	struct timed_out *t;
	const char *key;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(s->deadlines, tmp, key, v) {
		if ((uint64_t)json_integer_value(v) > real)
			continue;
		int64_t id = strtoll(key, NULL, 10);

		json_object_del(s->deadlines, key);
		log_info("job %lld: %s", (long long)id, QUEUE_TIMEOUT_WHY);
		t = malloc(sizeof(*t));
		if (!t) {
			sched_cancel(s, id, QUEUE_TIMEOUT_WHY);	/* its read waits */
			continue;
		}
		*t = (struct timed_out){ s, id };
		store_read_later(s->deps.run.store, &s->deadlines, cancel_timed_out, free, t);
	}
	rearm(s);
	return 0;
}

/* ---- the interface of sched_internal.h ---- */

int sched_keep_init(struct sched *s)
{
	s->secrets = json_object();
	s->deadlines = json_object();
	if (!s->secrets || !s->deadlines)
		return -ENOMEM;
	return loop_add_timer(s->deps.run.loop, &s->queue_timer, USEC_INFINITY, on_queue_timer, s);
}

void sched_keep_release(struct sched *s)
{
	if (s->deps.run.store)
		store_read_later_forget(s->deps.run.store, &s->deadlines);	/* cancels not made */
	json_decref(s->secrets);
	json_decref(s->deadlines);
	s->queue_timer = loop_source_free(s->queue_timer);
}

int sched_keep_job(struct sched *s, int64_t id, const struct job *job, uint64_t submitted)
{
	char key[24];
	json_t *sec;

	keep_deadline(s, id, job, submitted);
	if (!job_has_secrets(job))
		return 0;
	sec = secrets_of(job);
	id_key(id, key, sizeof(key));
	return sec && json_object_set_new(s->secrets, key, sec) == 0 ? 0 : -ENOMEM;
}

int sched_keep_queued(struct sched *s, const struct job *job, const struct job_record *rec)
{
	keep_deadline(s, rec->id, job, rec->submitted);
	return 0;
}

int sched_keep_restore(struct sched *s, int64_t id, struct job *job)
{
	json_t *sec, *v;
	char key[24];
	size_t i;

	id_key(id, key, sizeof(key));
	json_object_del(s->deadlines, key);	/* it left the queue */
	rearm(s);
	if (!job_has_secrets(job))
		return 0;
	sec = json_object_get(s->secrets, key);
	if (!sec)
		return -ENOKEY;
	for (i = 0; i < job->secrets.n; i++) {
		v = json_object_get(json_object_get(sec, "secrets"), job->secrets.keys[i]);
		if (!json_is_string(v) || kv_set(&job->secrets, job->secrets.keys[i],
						 json_string_value(v)) < 0)
			return -ENOKEY;
	}
	for (i = 0; i < job->n_actions; i++) {
		struct job_auto_login *l = &job->actions[i].boot.auto_login;
		char *pw;

		if (job->actions[i].kind != JOB_ACTION_BOOT || !l->password)
			continue;
		snprintf(key, sizeof(key), "%zu", i);
		v = json_object_get(json_object_get(sec, "passwords"), key);
		if (!json_is_string(v) || !(pw = strdup(json_string_value(v))))
			return -ENOKEY;
		free(l->password);
		l->password = pw;
	}
	return 0;
}

void sched_keep_drop(struct sched *s, int64_t id)
{
	char key[24];

	id_key(id, key, sizeof(key));
	json_object_del(s->secrets, key);
	if (!json_object_del(s->deadlines, key))
		rearm(s);
}
