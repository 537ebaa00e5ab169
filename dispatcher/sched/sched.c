// SPDX-License-Identifier: GPL-2.0-or-later
/* sched.c -- queue order, board matching, retries, recovery after a crash */
#include "sched/sched.h"

#include <errno.h>
#include <stdio.h>
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
	struct sched_run *next;
};

/* A board a job must not retry on (it failed there with an infrastructure error). */
struct sched_avoid {
	int64_t id;
	char *board;
	struct sched_avoid *next;
};

static int on_plan(struct loop_source *src, void *ud);
static int on_reap(struct loop_source *src, void *ud);

int sched_new(const struct sched_deps *deps, struct sched **ret)
{
	struct sched *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->deps = *deps;
	err = loop_add_defer(deps->run.loop, &s->plan, on_plan, s);
	if (!err)
		err = loop_add_defer(deps->run.loop, &s->reap, on_reap, s);
	if (err) {
		sched_free(s);
		return err;
	}
	loop_source_set_description(s->plan, "sched:plan");
	loop_source_set_description(s->reap, "sched:reap");
	*ret = s;
	return 0;
}

static void avoid_clear(struct sched *s, int64_t id)
{
	struct sched_avoid **pp = &s->avoid;

	while (*pp) {
		struct sched_avoid *a = *pp;

		if (id && a->id != id) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		free(a->board);
		free(a);
	}
}

static bool avoided(const struct sched *s, int64_t id, const char *board)
{
	const struct sched_avoid *a;

	for (a = s->avoid; a; a = a->next)
		if (a->id == id && !strcmp(a->board, board))
			return true;
	return false;
}

static void avoid_add(struct sched *s, int64_t id, const char *board)
{
	struct sched_avoid *a = calloc(1, sizeof(*a));

	if (!a || !(a->board = strdup(board))) {
		free(a);
		return;
	}
	a->id = id;
	a->next = s->avoid;
	s->avoid = a;
}

struct sched *sched_free(struct sched *s)
{
	struct sched_run *sr;

	if (!s)
		return NULL;
	while ((sr = s->runs)) {
		s->runs = sr->next;
		run_free(sr->run);
		board_unref(sr->board);
		free(sr);
	}
	avoid_clear(s, 0);
	loop_source_free(s->plan);
	loop_source_free(s->reap);
	free(s);
	return NULL;
}

void sched_set_config(struct sched *s, const struct lab_config *config)
{
	s->deps.run.config = config;
}

void sched_kick(struct sched *s)
{
	if (!s->paused)
		loop_defer_again(s->plan);
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

static void emit(struct sched *s, int64_t id, const char *kind, json_t *data)
{
	events_emit(s->deps.run.events, id, loop_realtime(s->deps.run.loop), kind, data);
}

/* ---- finishing ---- */

/*
 * The one way a job ends: its outcome into the store, then its "finished"
 * event, which every consumer of the event stream waits for (backends, KCIDB,
 * JUnit).  The event follows the store: a job the store still has running is
 * ended once more after a restart, and must not have announced its end yet.
 * @device may be NULL; @results_fail < 0 leaves the count out.
 */
static void finish_job(struct sched *s, int64_t id, enum job_health health, enum error_type type,
		       const char *msg, const char *device, int results_fail)
{
	json_t *data;
	int err;

	err = store_job_finish(s->deps.run.store, id, health, type, msg,
			       loop_realtime(s->deps.run.loop));
	if (err < 0) {
		log_error("job %lld: cannot record its end: %s", (long long)id, strerror(-err));
		return;
	}
	data = json_pack("{s:s, s:s, s:s?, s:s?}", "health", job_health_name(health), "error_type",
			 error_type_name(type), "error_msg", msg, "device", device);
	if (data && results_fail >= 0)
		json_object_set_new(data, "results_fail", json_integer(results_fail));
	emit(s, id, "finished", data);
}

static void record_outcome(struct sched *s, struct sched_run *sr, const struct job_record *rec)
{
	const struct run_outcome *o = run_outcome(sr->run);
	const char *msg = o->error_msg;

	if (o->health == JOB_HEALTH_INCOMPLETE && o->error_type == ERROR_INFRASTRUCTURE &&
	    rec->retries_left > 0) {
		avoid_add(s, sr->id, board_name(sr->board));
		store_job_requeue(s->deps.run.store, sr->id, false, msg);
		log_info("job %lld: infrastructure error on '%s', requeued (%d retries left): %s",
			 (long long)sr->id, board_name(sr->board), rec->retries_left - 1, msg);
		emit(s, sr->id, "requeued",
		     json_pack("{s:s, s:s, s:s, s:i}", "reason", msg, "error_type",
			       "infrastructure", "device", board_name(sr->board), "retries_left",
			       rec->retries_left - 1));
		return;
	}
	avoid_clear(s, sr->id);
	log_info("job %lld finished on '%s': %s%s%s", (long long)sr->id, board_name(sr->board),
		 job_health_name(o->health), msg ? ": " : "", msg ? msg : "");
	finish_job(s, sr->id, o->health, o->error_type, msg, board_name(sr->board),
		   o->results_fail);
}

static void on_run_finished(struct run *r, void *ud)
{
	struct sched_run *sr = ud;
	struct sched *s = sr->sched;
	struct job_record rec = { 0 };

	if (store_job_get(s->deps.run.store, sr->id, &rec) == 0)
		record_outcome(s, sr, &rec);
	job_record_release(&rec);
	sr->finished = true;
	s->n_running--;
	board_set_job(sr->board, 0);
	if (board_is_retired(sr->board))
		board_retire(sr->board);
	/* the run is still on the stack: free it from the loop */
	loop_defer_again(s->reap);
	sched_kick(s);
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
		run_free(sr->run);
		board_unref(sr->board);
		free(sr);
	}
	return 0;
}

/* ---- planning ---- */

/* A queue entry: a job, or a reservation (reservation != 0, no definition). */
struct candidate {
	int64_t id;
	int64_t reservation;
	char *device_type;
	char **tags;
	char *board;		/* reservations of a board by name */
	char *definition;
	char *filename;
	char *format;
	int attempt;
	int priority;
	uint64_t submitted;
	bool session;
};

static char **tags_from_json(const char *text)
{
	json_t *arr = text ? json_loads(text, 0, NULL) : NULL;
	char **tags = NULL;
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v))
			strv_push(&tags, json_string_value(v));
	json_decref(arr);
	return tags;
}

static struct board *pick_board(struct sched *s, const struct candidate *c)
{
	size_t n, i;
	struct board **boards = lab_boards(s->deps.lab, &n);

	for (i = 0; i < n; i++) {
		struct board *b = boards[i];
		const struct device *dev = board_device(b);

		if (!board_is_available(b) || strcmp(dev->type_name, c->device_type))
			continue;
		if (c->board && strcmp(board_name(b), c->board))
			continue;
		if (!board_has_tags(b, c->tags) || avoided(s, c->id, board_name(b)))
			continue;
		return b;
	}
	return NULL;
}

static void on_job_log(struct joblog *jl, void *ud)
{
	struct sched_run *sr = ud;

	events_log_grew(sr->sched->deps.run.events, sr->id);
}

static void start_on(struct sched *s, const struct candidate *c, struct board *b)
{
	struct diag diag = DIAG_INIT;
	struct sched_run *sr;
	struct job *job;
	enum job_format fmt = c->format && !strcmp(c->format, "json") ? JOB_FORMAT_JSON :
									 JOB_FORMAT_YAML;
	int err;

	err = job_parse(c->definition, strlen(c->definition), c->filename, fmt, &job, &diag);
	sr = err ? NULL : calloc(1, sizeof(*sr));
	if (!sr) {
		char *why = diag_join(&diag);

		finish_job(s, c->id, JOB_HEALTH_INCOMPLETE, ERROR_BUG,
			   why ? why : "cannot parse the stored job", NULL, -1);
		free(why);
		diag_release(&diag);
		if (!err)
			job_free(job);
		return;
	}
	diag_release(&diag);
	job->session = c->session;
	sr->sched = s;
	sr->id = c->id;
	sr->board = board_ref(b);
	board_set_job(b, c->id);
	store_job_start(s->deps.run.store, c->id, board_name(b), loop_realtime(s->deps.run.loop));
	emit(s, c->id, "started", json_pack("{s:s, s:i}", "device", board_name(b), "attempt",
					    c->attempt));
	log_info("job %lld: starting on '%s' (attempt %d)", (long long)c->id, board_name(b),
		 c->attempt);
	err = run_start(&s->deps.run, c->id, c->attempt, job, b, on_run_finished, sr, &sr->run);
	if (err < 0) {
		board_set_job(b, 0);
		finish_job(s, c->id, JOB_HEALTH_INCOMPLETE, ERROR_BUG, "cannot start the job runner",
			   board_name(b), -1);
		board_unref(sr->board);
		free(sr);
		return;
	}
	run_set_log_notify(sr->run, on_job_log, sr);
	sr->next = s->runs;
	s->runs = sr;
	s->n_running++;
}

struct queue {
	struct candidate *c;
	size_t n, alloc;
};

static struct candidate *queue_add(struct queue *q)
{
	struct candidate *c;

	if (q->n == q->alloc) {
		size_t alloc = q->alloc ? 2 * q->alloc : 32;

		c = realloc(q->c, alloc * sizeof(*c));
		if (!c)
			return NULL;
		q->c = c;
		q->alloc = alloc;
	}
	c = &q->c[q->n++];
	memset(c, 0, sizeof(*c));
	return c;
}

static int add_job(struct queue *q, const struct job_record *rec)
{
	struct candidate *c = queue_add(q);

	if (!c)
		return -ENOMEM;
	c->id = rec->id;
	c->device_type = strdup(rec->device_type);
	c->tags = tags_from_json(rec->tags);
	c->definition = strdup(rec->definition ? rec->definition : "");
	c->filename = strdup(rec->filename ? rec->filename : "job");
	c->format = rec->format ? strdup(rec->format) : NULL;
	c->attempt = rec->attempt;
	c->priority = rec->priority;
	c->submitted = rec->submitted;
	c->session = rec->session;
	return 0;
}

static int collect_queued(const struct job_record *rec, void *ud)
{
	/* a session job never waits in the queue: it starts on its board or fails */
	return rec->session ? 0 : add_job(ud, rec);
}

static int collect_waiting(const struct reservation_record *rec, void *ud)
{
	struct candidate *c = queue_add(ud);

	if (!c)
		return -ENOMEM;
	c->reservation = rec->id;
	c->device_type = strdup(rec->device_type);
	c->tags = tags_from_json(rec->tags);
	c->board = rec->board ? strdup(rec->board) : NULL;
	c->priority = rec->priority;
	c->submitted = rec->submitted;
	return 0;
}

static void queue_release(struct queue *q)
{
	size_t i;

	for (i = 0; i < q->n; i++) {
		free(q->c[i].device_type);
		strv_free(q->c[i].tags);
		free(q->c[i].board);
		free(q->c[i].definition);
		free(q->c[i].filename);
		free(q->c[i].format);
	}
	free(q->c);
}

/* Queue order: higher priority, then first submitted; a job before a reservation. */
static int candidate_cmp(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->submitted != b->submitted)
		return a->submitted < b->submitted ? -1 : 1;
	if (!a->reservation != !b->reservation)
		return a->reservation ? 1 : -1;
	if (a->reservation != b->reservation)
		return a->reservation < b->reservation ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The queued jobs and the waiting reservations, in queue order. */
static int collect_queue(struct sched *s, struct queue *q)
{
	int err;

	err = store_job_queued(s->deps.run.store, collect_queued, q);
	if (!err)
		err = store_reservation_waiting(s->deps.run.store, collect_waiting, q);
	if (err < 0)
		return err;
	if (q->n)	/* an empty queue has no array: qsort() wants one */
		qsort(q->c, q->n, sizeof(*q->c), candidate_cmp);
	return 0;
}

static int on_plan(struct loop_source *src, void *ud)
{
	struct sched *s = ud;
	struct queue q = { 0 };
	size_t i;

	if (s->paused)
		return 0;
	if (collect_queue(s, &q) < 0)
		log_error("scheduler: cannot read the queue");
	for (i = 0; i < q.n; i++) {
		struct candidate *c = &q.c[i];
		struct board *b;

		if (!c->device_type || (!c->reservation && !c->definition))
			continue;
		b = pick_board(s, c);
		if (b && c->reservation && s->deps.grant)
			s->deps.grant(c->reservation, b, s->deps.userdata);
		else if (b && !c->reservation)
			start_on(s, c, b);
	}
	queue_release(&q);
	return 0;
}

int sched_position(struct sched *s, int64_t id, size_t *ret)
{
	struct queue q = { 0 };
	size_t i, j, pos = 1;
	int err;

	err = collect_queue(s, &q);
	for (i = 0; !err && i < q.n; i++)
		if (q.c[i].reservation == id)
			break;
	if (!err && (i == q.n || !q.c[i].device_type))
		err = -ENOENT;
	for (j = 0; !err && j < i; j++)
		if (q.c[j].device_type && !strcmp(q.c[j].device_type, q.c[i].device_type))
			pos++;
	if (!err)
		*ret = pos;
	queue_release(&q);
	return err;
}

int sched_start_session(struct sched *s, int64_t id, struct board *b)
{
	struct job_record rec = { 0 };
	struct queue q = { 0 };
	int err;

	err = store_job_get(s->deps.run.store, id, &rec);
	if (!err && (!rec.session || rec.state != JOB_STATE_QUEUED))
		err = -EINVAL;
	if (!err)
		err = add_job(&q, &rec);
	if (!err && (!q.c[0].device_type || !q.c[0].definition))
		err = -ENOMEM;
	if (!err)
		start_on(s, &q.c[0], b);
	queue_release(&q);
	job_record_release(&rec);
	if (err < 0)
		return err;
	return sched_run_of(s, id) ? 0 : -EIO;
}

/* ---- cancel and recovery ---- */

int sched_cancel(struct sched *s, int64_t id, const char *why)
{
	struct job_record rec = { 0 };
	struct run *r = sched_run_of(s, id);
	int err;

	err = store_job_get(s->deps.run.store, id, &rec);
	if (err < 0)
		return err;
	if (rec.state == JOB_STATE_FINISHED) {
		job_record_release(&rec);
		return -EALREADY;
	}
	job_record_release(&rec);
	emit(s, id, "cancel", json_pack("{s:s}", "reason", why ? why : ""));
	if (r) {
		store_job_set_state(s->deps.run.store, id, JOB_STATE_CANCELING);
		run_cancel(r, why);
		return 0;
	}
	finish_job(s, id, JOB_HEALTH_CANCELED, ERROR_NONE, why, NULL, -1);
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
		finish_job(s, rec->id, JOB_HEALTH_CANCELED, ERROR_NONE, msg, rec->device, -1);
		return 0;
	}
	if (rec->session) {
		/* a holder's boot is the holder's to start again, on its board */
		finish_job(s, rec->id, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE, msg,
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
	finish_job(s, rec->id, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE, msg, rec->device, -1);
	return 0;
}

int sched_recover(struct sched *s)
{
	return store_job_running(s->deps.run.store, recover_one, s);
}
