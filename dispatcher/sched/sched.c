// SPDX-License-Identifier: GPL-2.0-or-later
/* sched.c -- the runs: starting what a board claimed, outcomes, retries, cancel, recovery */
#include "sched/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "job/job.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "sched/sched_internal.h"
#include "store/store.h"

struct sched_run {
	struct sched *sched;
	int64_t id;
	struct run *run;
	struct board *board;
	bool finished;
	int retries_left;	/* of the job when it started */
	char *device_type;	/* to queue it again */
	char *tags;		/* JSON text, or NULL */
	char *submitter;	/* or NULL */
	struct sched_run *next;
};

static int on_reap(struct loop_source *src, void *ud);

int sched_new(const struct sched_deps *deps, struct sched **ret)
{
	struct sched *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->deps = *deps;
	s->max_running = SIZE_MAX;
	err = loop_add_defer(deps->run.loop, &s->plan, sched_on_plan, s);
	if (!err)
		err = loop_add_defer(deps->run.loop, &s->reap, on_reap, s);
	if (!err)
		err = loop_add_timer(deps->run.loop, &s->retry, USEC_INFINITY, sched_on_retry, s);
	if (!err)
		err = sched_keep_init(s);
	if (!err)
		err = sched_left_init(s);
	if (err) {
		sched_free(s);
		return err;
	}
	loop_source_set_description(s->plan, "sched:plan");
	loop_source_set_description(s->reap, "sched:reap");
	loop_source_set_description(s->retry, "sched:retry");
	*ret = s;
	return 0;
}

static void sched_run_free(struct sched_run *sr)
{
	run_free(sr->run);
	board_unref(sr->board);
	free(sr->device_type);
	free(sr->tags);
	free(sr->submitter);
	free(sr);
}

struct sched *sched_free(struct sched *s)
{
	struct sched_run *sr;

	if (!s)
		return NULL;
	while ((sr = s->runs)) {
		s->runs = sr->next;
		sched_run_free(sr);
	}
	sched_plan_release(s);
	sched_finish_free(s);
	sched_keep_release(s);
	sched_left_release(s);
	loop_source_free(s->plan);
	loop_source_free(s->reap);
	loop_source_free(s->retry);
	free(s);
	return NULL;
}

void sched_set_config(struct sched *s, const struct lab_config *config)
{
	s->deps.run.config = config;
}

void sched_set_max_running(struct sched *s, size_t max)
{
	s->max_running = max ? max : 1;
	sched_run_ended(s);	/* a higher cap: what waited claims now */
}

void sched_pause(struct sched *s)
{
	s->paused = true;
}

size_t sched_running(const struct sched *s)
{
	return s->n_running;
}

struct run *sched_run_of(struct sched *s, int64_t id)
{
	struct sched_run *sr;

	for (sr = s->runs; sr; sr = sr->next)
		if (sr->id == id && !sr->finished)
			return sr->run;
	return NULL;
}

int sched_run_info(struct sched *s, int64_t id, struct sched_run_info *ret)
{
	struct sched_run *sr;
	const struct job *job;

	for (sr = s->runs; sr && (sr->id != id || sr->finished); sr = sr->next)
		;
	if (!sr)
		return -ENOENT;
	job = run_job(sr->run);
	memset(ret, 0, sizeof(*ret));
	ret->name = job->name;
	ret->submitter = sr->submitter;
	ret->started = run_started(sr->run);
	ret->action = run_current_action(sr->run, &ret->action_index);
	ret->n_actions = job->n_actions;
	return 0;
}

static void emit(struct sched *s, int64_t id, const char *kind, json_t *data)
{
	events_emit(s->deps.run.events, id, loop_realtime(s->deps.run.loop), kind, data);
}

/* ---- finishing ---- */

static void record_outcome(struct sched *s, struct sched_run *sr)
{
	const struct run_outcome *o = run_outcome(sr->run);
	const char *msg = o->error_msg, *board = board_name(sr->board);

	if (o->health == JOB_HEALTH_INCOMPLETE && o->error_type == ERROR_INFRASTRUCTURE &&
	    sr->retries_left > 0 && sr->device_type) {
		/* the store keeps it from this board (store_job_requeue()'s "avoid") */
		store_job_requeue(s->deps.run.store, sr->id, false, msg);
		log_info("job %lld: infrastructure error on '%s', requeued (%d retries left): %s",
			 (long long)sr->id, board, sr->retries_left - 1, msg);
		emit(s, sr->id, "requeued",
		     json_pack("{s:s, s:s, s:s, s:i}", "reason", msg, "error_type",
			       "infrastructure", "device", board, "retries_left",
			       sr->retries_left - 1));
		sched_job_queued(s, sr->id, sr->device_type, NULL, sr->tags, board, false);
		return;
	}
	log_info("job %lld finished on '%s': %s%s%s", (long long)sr->id, board,
		 job_health_name(o->health), msg ? ": " : "", msg ? msg : "");
	sched_finish_job(s, sr->id, o->health, o->error_type, msg, board, o->results_fail);
}

static void on_run_finished(struct run *r, void *ud)
{
	struct sched_run *sr = ud;
	struct sched *s = sr->sched;

	record_outcome(s, sr);
	sr->finished = true;
	s->n_running--;
	board_set_job(sr->board, 0);
	if (board_is_retired(sr->board))
		board_retire(sr->board);
	else
		sched_board_changed(s, sr->board);	/* free: it claims its next entry */
	sched_run_ended(s);
	/* the run is still on the stack: free it from the loop */
	loop_defer_again(s->reap);
}

static int on_reap(struct loop_source *src, void *ud)
{
	struct sched *s = ud;
	struct sched_run **pp = &s->runs;

	while (*pp) {
		struct sched_run *sr = *pp;

		if (!sr->finished) {
			pp = &sr->next;
			continue;
		}
		*pp = sr->next;
		sched_run_free(sr);
	}
	return 0;
}

/* ---- starting ---- */

static void on_job_log(struct joblog *jl, void *ud)
{
	struct sched_run *sr = ud;

	events_log_grew(sr->sched->deps.run.events, sr->id);
}

/* The run of job @rec (its definition parsed) on @b; NULL when it could not start. */
static struct sched_run *run_new(struct sched *s, const struct job_record *rec, struct board *b,
				 struct job *job)
{
	struct sched_run *sr = calloc(1, sizeof(*sr));
	int err;

	if (!sr)
		goto err;
	sr->sched = s;
	sr->id = rec->id;
	sr->retries_left = rec->retries_left;
	sr->device_type = rec->device_type ? strdup(rec->device_type) : NULL;
	sr->tags = rec->tags ? strdup(rec->tags) : NULL;
	sr->submitter = rec->submitter ? strdup(rec->submitter) : NULL;
	sr->board = board_ref(b);
	board_set_job(b, rec->id);
	emit(s, rec->id, "started", json_pack("{s:s, s:i}", "device", board_name(b), "attempt",
					      rec->attempt));
	log_info("job %lld: starting on '%s' (attempt %d)", (long long)rec->id, board_name(b),
		 rec->attempt);
	err = run_start(&s->deps.run, rec->id, rec->attempt, job, b, on_run_finished, sr, &sr->run);
	job = NULL;	/* the run's, even when it failed */
	if (err < 0) {
		board_set_job(b, 0);
		sched_run_free(sr);
		goto err;
	}
	run_set_log_notify(sr->run, on_job_log, sr);
	sr->next = s->runs;
	s->runs = sr;
	s->n_running++;
	return sr;

err:
	job_free(job);
	sched_finish_job(s, rec->id, JOB_HEALTH_INCOMPLETE, ERROR_BUG, "cannot start the job runner",
		   board_name(b), -1);
	return NULL;
}

/*
 * Start job @rec on @b: @claimed, it is running there in the store already
 * (store_claim()), else (a session job) it is marked so now.  A definition
 * that no longer parses ends the job (incomplete); returns whether it runs.
 */
static bool start_on(struct sched *s, const struct job_record *rec, struct board *b,
		     bool claimed)
{
	enum job_format fmt = rec->format && !strcmp(rec->format, "json") ? JOB_FORMAT_JSON :
									   JOB_FORMAT_YAML;
	const char *text = rec->definition ? rec->definition : "";
	struct diag diag = DIAG_INIT;
	struct job *job;
	char *why;

	if (job_parse(text, strlen(text), rec->filename ? rec->filename : "job", fmt, &job,
		      &diag) < 0) {
		why = diag_join(&diag);
		sched_finish_job(s, rec->id, JOB_HEALTH_INCOMPLETE, ERROR_BUG,
			   why ? why : "cannot parse the stored job", NULL, -1);
		free(why);
		diag_release(&diag);
		return false;
	}
	diag_release(&diag);
	job->session = rec->session;
	if (sched_keep_restore(s, rec->id, job) < 0) {
		sched_finish_job(s, rec->id, JOB_HEALTH_CANCELED, ERROR_NONE,
				 "its secrets were kept in memory only, and labd restarted since it was submitted: submit it again",
				 NULL, -1);
		job_free(job);
		return false;
	}
	/* a start the store did not record would leave the job queued: started again */
	if (!claimed && store_job_start(s->deps.run.store, rec->id, board_name(b),
					loop_realtime(s->deps.run.loop)) < 0) {
		log_error("job %lld: cannot record its start on '%s'", (long long)rec->id,
			  board_name(b));
		job_free(job);
		return false;
	}
	return run_new(s, rec, b, job) != NULL;
}

void sched_start_claimed(struct sched *s, const struct job_record *rec, struct board *b)
{
	/* a claim that completed late (an asynchronous store): labd stops, the board went away */
	if (s->paused) {
		store_job_requeue(s->deps.run.store, rec->id, true, "labd stopped as it started");
		return;
	}
	if (board_is_retired(b) || board_job(b)) {
		store_job_requeue(s->deps.run.store, rec->id, true, "its board left the lab");
		sched_job_queued(s, rec->id, rec->device_type, NULL, rec->tags, NULL, false);
		return;
	}
	if (!start_on(s, rec, b, true))
		sched_board_changed(s, b);	/* still free: its next entry */
}

int sched_start_session(struct sched *s, const struct job_record *rec, struct board *b)
{
	if (!rec->session || rec->state != JOB_STATE_QUEUED)
		return -EINVAL;
	return start_on(s, rec, b, false) ? 0 : -EIO;
}

/* ---- cancel and recovery ---- */

bool sched_runs_elsewhere(const struct sched *s, const struct job_record *rec)
{
	const char *me = store_host_name(s->deps.run.store);

	return (rec->state == JOB_STATE_RUNNING || rec->state == JOB_STATE_CANCELING) &&
	       me && rec->host && strcmp(rec->host, me);
}

int sched_cancel(struct sched *s, int64_t id, const char *why)
{
	struct job_record rec = { 0 };
	struct run *r = sched_run_of(s, id);
	int err;

	/* a job running here is not finished: no read (one that may wait, or run again) */
	err = r ? 0 : store_job_get(s->deps.run.store, id, &rec);
	if (err < 0)
		return err;
	if (!r && rec.state == JOB_STATE_FINISHED)
		err = -EALREADY;
	else if (!r && sched_runs_elsewhere(s, &rec))
		err = -EREMOTE;	/* never ended behind the back of the host that runs it */
	job_record_release(&rec);
	if (err < 0)
		return err;
	if (!r)
		return sched_cancel_queued(s, id, why);
	emit(s, id, "cancel", json_pack("{s:s}", "reason", why ? why : ""));
	store_job_set_state(s->deps.run.store, id, JOB_STATE_CANCELING);
	run_cancel(r, why);
	return 0;
}

size_t sched_cancel_all(struct sched *s, const char *why)
{
	struct sched_run *sr;
	size_t n = 0;

	for (sr = s->runs; sr; sr = sr->next) {
		if (sr->finished)
			continue;
		run_cancel(sr->run, why);
		n++;
	}
	return n;
}

static int recover_one(const struct job_record *rec, void *ud)
{
	struct sched *s = ud;
	const char *msg = "labd stopped while the job ran";

	emit(s, rec->id, "attempt-ended",
	     json_pack("{s:s, s:s, s:s, s:s?}", "health", "incomplete", "error_type",
		       "infrastructure", "error_msg", msg, "device", rec->device));
	if (rec->state == JOB_STATE_CANCELING) {
		sched_finish_job(s, rec->id, JOB_HEALTH_CANCELED, ERROR_NONE, msg, rec->device, -1);
		return 0;
	}
	if (rec->session) {
		/* a holder's boot is the holder's to start again, on its board */
		sched_finish_job(s, rec->id, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE, msg,
			   rec->device, -1);
		return 0;
	}
	if (!rec->recovered) {
		log_warning("job %lld: %s; requeued", (long long)rec->id, msg);
		store_job_requeue(s->deps.run.store, rec->id, true, msg);
		emit(s, rec->id, "requeued", json_pack("{s:s, s:s}", "reason", msg, "error_type",
						       "infrastructure"));
		return 0;
	}
	log_warning("job %lld: %s again; not requeued twice", (long long)rec->id, msg);
	sched_finish_job(s, rec->id, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE, msg, rec->device, -1);
	return 0;
}

/* A job queued before a restart: when its wait in the queue ends. */
static int recover_queued(const struct job_record *rec, void *ud)
{
	struct diag diag = DIAG_INIT;
	struct job *job;

	if (rec->session || !rec->definition ||
	    job_parse(rec->definition, strlen(rec->definition), rec->filename ? rec->filename : "job",
		      JOB_FORMAT_AUTO, &job, &diag) < 0) {
		diag_release(&diag);
		return 0;	/* starting it will say what is wrong */
	}
	sched_keep_queued(ud, job, rec);
	job_free(job);
	return 0;
}

int sched_recover(struct sched *s)
{
	int err = store_job_running(s->deps.run.store, recover_one, s);

	return err ? err : store_job_queued(s->deps.run.store, recover_queued, s);
}
