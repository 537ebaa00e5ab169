// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sched_plan.c -- free boards claim their next queue entry; new entries look
 * for a free board
 *
 * The queue is never loaded.  Planning touches only what changed:
 *  - a board that may have become free (its job ended, a reservation ended,
 *    it came back from maintenance) claims: store_claim() gives it the first
 *    entry of its device type it may take, through the store's index, and
 *    marks it taken in the same transaction.  Nothing to take: the board
 *    stays idle ("parked") and claims nothing more until something is queued
 *    for it or it changes again.
 *  - a new entry (a job submitted or requeued, a reservation asked for) looks
 *    for a free board that fits it and makes that board claim.  The claim may
 *    take an earlier entry the board fits better; then the new entry tries the
 *    next free board, until it is taken, gone, or no free board fits it.
 *  - in a lab of several hosts (a shared store), a job submitted here while
 *    a board of this host is free for it is left to this host by the
 *    others (sched_may_claim_now(), claimed_here_first); when no board of
 *    this host takes it after all, it is offered to them (arrival_drop(),
 *    store_announce()).  Otherwise every host places the entry.
 *  - sched_kick() (start, reload) makes every free board claim once.
 *  - at sched_set_max_running()'s cap (the open files limit), no board claims:
 *    the boards and entries stay where they are, and the first run to end
 *    below the cap kicks every free board (sched_run_ended()).
 *
 * A claim completes through a callback, at once with SQLite, later with an
 * asynchronous store.  Meanwhile its board is "claiming": it starts no second
 * claim, and a new entry that fits only claiming boards waits for one of
 * their claims to complete.  A kick or a change of a claiming board (another
 * host's NOTIFY of a job queued after the claim's snapshot) is not lost: the
 * board claims again when its claim took nothing.  The store guarantees that
 * an entry is taken by one claim only, so a job runs once per attempt.
 */
#include "sched/sched.h"

#include <errno.h>
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
#include "sched/sched_internal.h"
#include "store/store.h"

#define SCHED_RETRY (1 * USEC_PER_SEC)	/* after the store failed a claim */
#define SCHED_CONTENDED_RETRY (USEC_PER_SEC / 10)	/* after a claim passed a locked entry by */
#define SCHED_MAX_DIRTY 64	/* more boards changed than this: every free board claims */

/* A board's claim in flight: the board is "claiming" until it completes. */
struct sched_claim {
	struct sched *sched;
	struct board *board;		/* a reference */
	struct sched_arrival *arrival;	/* the new entry it was made for, or NULL */
	bool again;			/* kicked meanwhile: claim again if it took nothing */
	struct sched_claim *next;
};

/* A new queue entry looking for a free board. */
struct sched_arrival {
	int64_t job;			/* the entry: a job, */
	int64_t reservation;		/* or a reservation */
	char *device_type;
	char **tags;
	char *board;			/* a reservation of a board by name */
	char *avoid;			/* a requeued job's failed board */
	bool local;			/* queued by this host: its claim sees this host's writes */
	bool first;			/* the lab's other hosts leave it to this one (store_announce()) */
	struct sched_arrival *next;
};

static void arrival_free(struct sched_arrival *a)
{
	if (!a)
		return;
	free(a->device_type);
	strv_free(a->tags);
	free(a->board);
	free(a->avoid);
	free(a);
}

/* Add a reference to @b to @list (of *@n, at most SCHED_MAX_DIRTY); -ENOMEM when full. */
static int board_list_add(struct board ***list, size_t *n, struct board *b)
{
	struct board **grown;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*list)[i] == b)
			return 0;
	grown = *n < SCHED_MAX_DIRTY ? realloc(*list, (*n + 1) * sizeof(*grown)) : NULL;
	if (!grown)
		return -ENOMEM;
	*list = grown;
	(*list)[(*n)++] = board_ref(b);
	return 0;
}

static void board_list_free(struct board ***list, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		board_unref((*list)[i]);
	free(*list);
	*list = NULL;
	*n = 0;
}

static void arrival_drop(struct sched *s, struct sched_arrival *a);

void sched_plan_release(struct sched *s)
{
	struct sched_arrival *a;

	while ((a = s->arrivals)) {
		s->arrivals = a->next;
		arrival_drop(s, a);
	}
	board_list_free(&s->dirty, &s->n_dirty);
	board_list_free(&s->held, &s->n_held);
	/* claims in flight (asynchronous stores) complete into nothing */
	while (s->claims) {
		struct sched_claim *c = s->claims;

		s->claims = c->next;
		store_forget(s->deps.run.store, c);
		arrival_drop(s, c->arrival);
		board_unref(c->board);
		free(c);
	}
}

char **sched_tags_from_json(const char *text)
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

static char *tags_to_json(char *const *tags)
{
	json_t *arr = json_array();
	char *text;

	STRV_FOREACH(t, tags)
		json_array_append_new(arr, json_string(*t));
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}

static struct sched_claim *claim_of(const struct sched *s, const struct board *b)
{
	struct sched_claim *c;

	for (c = s->claims; c; c = c->next)
		if (c->board == b)
			return c;
	return NULL;
}

static bool claiming(const struct sched *s, const struct board *b)
{
	return claim_of(s, b) != NULL;
}

/*
 * @b was asked to claim while its claim is in flight: that claim's snapshot
 * may predate what the ask is about, so it claims once more if it took nothing.
 */
static void claim_again_later(struct sched *s, struct board *b)
{
	struct sched_claim *c = claim_of(s, b);

	if (c)
		c->again = true;
}

static void claim_unlink(struct sched *s, struct sched_claim *c)
{
	struct sched_claim **pp;

	for (pp = &s->claims; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			return;
		}
	}
}

/*
 * @a leaves this host's hands untaken (it waits in the queue): a job the
 * lab's other hosts left to this one (a->first) is theirs too now.
 */
static void arrival_drop(struct sched *s, struct sched_arrival *a)
{
	char *tags;
	int err;

	if (a && a->first) {
		tags = tags_to_json(a->tags);
		err = tags ? store_announce(s->deps.run.store, a->job, a->device_type, tags) :
			     -ENOMEM;
		if (err < 0)
			log_warning("job %lld: cannot offer it to the lab's other hosts: %s",
				    (long long)a->job, strerror(-err));
		free(tags);
	}
	arrival_free(a);
}

static void arrival_push(struct sched *s, struct sched_arrival *a)
{
	a->next = s->arrivals;
	s->arrivals = a;
}

/*
 * Whether @b is the only board of its device type in this lab: a job that
 * failed on it has no other board to go to, and takes it again rather than
 * wait for ever.
 */
static bool lone(const struct sched *s, const struct board *b)
{
	const char *type = board_device(b)->type_name;
	struct board **boards;
	size_t n, i;

	boards = lab_boards(s->deps.lab, &n);
	for (i = 0; i < n; i++)
		if (boards[i] != b && !strcmp(board_device(boards[i])->type_name, type))
			return false;
	return true;
}

/* Whether @a's entry may go to board @b. */
static bool fits(const struct sched *s, const struct board *b, const struct sched_arrival *a)
{
	const char *name = board_name(b);

	return !strcmp(board_device(b)->type_name, a->device_type) && board_has_tags(b, a->tags) &&
	       (!a->board || !strcmp(a->board, name)) &&
	       (!a->avoid || strcmp(a->avoid, name) || lone(s, b));
}

/* @b claims at the next plan. */
static void mark_changed(struct sched *s, struct board *b)
{
	if (!s->all && board_list_add(&s->dirty, &s->n_dirty, b) < 0)
		s->all = true;	/* too many (or no memory): every free board claims */
}

/* @b claims when the retry timer fires (its claim passed a locked entry by). */
static void mark_held(struct sched *s, struct board *b)
{
	if (board_list_add(&s->held, &s->n_held, b) < 0)
		s->all = true;
	if (!loop_timer_is_armed(s->retry))
		loop_timer_set_rel(s->retry, SCHED_CONTENDED_RETRY);
}

static bool took_arrival(const struct store_claimed *c, const struct sched_arrival *a)
{
	if (c->kind == STORE_CLAIMED_JOB)
		return a->job && c->job.id == a->job;
	return a->reservation && c->reservation.id == a->reservation;
}

static void on_claimed(int err, const struct store_claimed *took, void *ud)
{
	struct sched_claim *c = ud;
	struct sched *s = c->sched;
	struct sched_arrival *a = c->arrival;
	struct board *b = c->board;
	bool again = c->again;

	claim_unlink(s, c);
	free(c);
	if (err < 0) {
		/* once, not per board and second, while the store is away */
		if (!s->claims_failing)
			log_error("board '%s': cannot claim from the queue: %s; trying again every "
				  "second", board_name(b), strerror(-err));
		s->claims_failing = true;
		mark_changed(s, b);	/* the retry timer plans, not the next iteration */
		if (a)
			arrival_push(s, a);
		if (!loop_timer_is_armed(s->retry))
			loop_timer_set_rel(s->retry, SCHED_RETRY);
		board_unref(b);
		return;
	}
	if (s->claims_failing)
		log_info("claims from the queue work again");
	s->claims_failing = false;
	if (took->kind == STORE_CLAIMED_JOB)
		sched_start_claimed(s, &took->job, b);
	else if (took->kind == STORE_CLAIMED_RESERVATION && s->deps.grant)
		s->deps.grant(&took->reservation, b, s->deps.userdata);
	if (took->kind == STORE_CLAIMED_CONTENDED) {
		mark_held(s, b);	/* another transaction holds its entry: ask again shortly */
		again = false;
	}
	if (a && (took->kind == STORE_CLAIMED_JOB || took->kind == STORE_CLAIMED_RESERVATION) &&
	    !took_arrival(took, a))
		arrival_push(s, a);	/* an earlier entry went first: the next free board */
	else
		arrival_free(a);	/* taken, gone (canceled, or by another board), or held */
	if (again && took->kind == STORE_CLAIMED_NONE) {
		mark_changed(s, b);
		loop_defer_again(s->plan);
	}
	/* new entries that waited for a claiming board */
	if (s->arrivals)
		loop_defer_again(s->plan);
	board_unref(b);
}

/* Make board @b claim, for new entry @a (NULL: whatever it may take). */
static void claim(struct sched *s, struct board *b, struct sched_arrival *a)
{
	const struct device *dev = board_device(b);
	struct store_claim_req req = { board_name(b), dev->type_name, NULL,
				       loop_realtime(s->deps.run.loop), lone(s, b), a && a->local };
	struct sched_claim *c = calloc(1, sizeof(*c));
	char *tags = tags_to_json(dev->tags);
	int err = c && tags ? 0 : -ENOMEM;

	if (!err) {
		c->sched = s;
		c->board = board_ref(b);
		c->arrival = a;
		c->next = s->claims;
		s->claims = c;
		req.tags = tags;
		/* may complete (and free c) before it returns */
		err = store_claim(s->deps.run.store, &req, on_claimed, c);
		if (err < 0) {
			claim_unlink(s, c);
			board_unref(c->board);
		}
	}
	if (err < 0) {
		log_error("board '%s': cannot claim from the queue: %s", board_name(b),
			  strerror(-err));
		free(c);
		arrival_drop(s, a);
	}
	free(tags);
}

static bool may_claim(const struct sched *s, const struct board *b)
{
	return board_is_available(b) && !board_job(b) && !claiming(s, b);
}

/* Whether the runs and the claims in flight (each may start one) are at the cap. */
static bool at_cap(struct sched *s)
{
	const struct sched_claim *c;
	size_t n = s->n_running;

	if (s->max_running == SIZE_MAX)
		return false;
	for (c = s->claims; c && n < s->max_running; c = c->next)
		n++;
	if (n >= s->max_running)
		s->capped = true;	/* what is skipped claims when a run ends */
	return n >= s->max_running;
}

void sched_run_ended(struct sched *s)
{
	if (s->capped && s->n_running < s->max_running) {
		s->capped = false;
		sched_kick(s);
	}
}

/* New entry @a: the first free board that fits it claims; or it waits, or is dropped. */
static void place(struct sched *s, struct sched_arrival *a)
{
	struct board **boards;
	bool busy = false;
	size_t n, i;

	if (at_cap(s)) {
		arrival_drop(s, a);	/* a free board claims it once a run ends */
		return;
	}
	boards = lab_boards(s->deps.lab, &n);
	for (i = 0; i < n; i++) {
		if (!fits(s, boards[i], a))
			continue;
		if (may_claim(s, boards[i])) {
			claim(s, boards[i], a);
			return;
		}
		busy |= claiming(s, boards[i]);
	}
	if (busy)
		arrival_push(s, a);	/* again when a claim completes */
	else
		arrival_drop(s, a);	/* it waits in the queue for a board to be freed */
}

bool sched_may_claim_now(struct sched *s, const char *device_type, char *const *tags)
{
	struct sched_arrival a = { .device_type = (char *)device_type, .tags = (char **)tags };
	struct board **boards;
	size_t n, i;

	if (at_cap(s))
		return false;
	boards = lab_boards(s->deps.lab, &n);
	for (i = 0; i < n; i++)
		if (fits(s, boards[i], &a) && may_claim(s, boards[i]))
			return true;
	return false;
}

int sched_on_plan(struct loop_source *src, void *ud)
{
	struct sched *s = ud;
	struct board **dirty = s->dirty, **boards;
	struct sched_arrival *a = s->arrivals, *next;
	size_t n_dirty = s->n_dirty, n, i;
	bool all = s->all;

	if (s->paused)
		return 0;
	s->dirty = NULL;
	s->n_dirty = 0;
	s->arrivals = NULL;
	s->all = false;
	boards = all ? lab_boards(s->deps.lab, &n) : NULL;
	/* a free board at the cap claims when a run ends (at_cap() says so) */
	for (i = 0; all && i < n; i++) {
		if (!may_claim(s, boards[i]))
			claim_again_later(s, boards[i]);
		else if (!at_cap(s))
			claim(s, boards[i], NULL);
	}
	for (i = 0; i < n_dirty; i++) {
		bool free_now = !all && may_claim(s, dirty[i]) && !board_is_retired(dirty[i]);

		if (free_now && !at_cap(s))
			claim(s, dirty[i], NULL);
		else if (!all && !free_now)
			claim_again_later(s, dirty[i]);
		board_unref(dirty[i]);
	}
	free(dirty);
	for (; a; a = next) {
		next = a->next;
		a->next = NULL;
		place(s, a);
	}
	return 0;
}

int sched_on_retry(struct loop_source *src, uint64_t now, void *ud)
{
	struct sched *s = ud;
	size_t i;

	for (i = 0; i < s->n_held; i++)
		mark_changed(s, s->held[i]);
	board_list_free(&s->held, &s->n_held);
	sched_kick_plan(s);
	return 0;
}

void sched_kick_plan(struct sched *s)
{
	if (!s->paused)
		loop_defer_again(s->plan);
}

void sched_kick(struct sched *s)
{
	s->all = true;
	sched_kick_plan(s);
}

void sched_board_changed(struct sched *s, struct board *b)
{
	mark_changed(s, b);
	sched_kick_plan(s);
}

/* A new entry of @device_type with @tags (strv, borrowed or JSON text) looks for a board. */
static void arrive(struct sched *s, struct sched_arrival *a, const char *device_type,
		   char *const *tags, const char *tags_json)
{
	int err = 0;

	if (!a)
		return;
	a->device_type = strdup(device_type);
	if (tags_json)
		a->tags = sched_tags_from_json(tags_json);
	else
		err = strv_copy(tags, &a->tags);
	if (!a->device_type || err < 0) {
		arrival_free(a);
		sched_kick(s);	/* no memory for the details: every free board claims */
		return;
	}
	arrival_push(s, a);
	sched_kick_plan(s);
}

static struct sched_arrival *job_arrival(int64_t id, const char *avoid, bool local, bool first)
{
	struct sched_arrival *a = calloc(1, sizeof(*a));

	if (a) {
		a->job = id;
		a->avoid = avoid ? strdup(avoid) : NULL;
		a->local = local;
		a->first = first;
	}
	return a;
}

static struct sched_arrival *reservation_arrival(int64_t id, const char *board, bool local)
{
	struct sched_arrival *a = calloc(1, sizeof(*a));

	if (a) {
		a->reservation = id;
		a->board = board ? strdup(board) : NULL;
		a->local = local;
	}
	return a;
}

void sched_job_queued(struct sched *s, int64_t id, const char *device_type, char *const *tags,
		      const char *tags_json, const char *avoid, bool first)
{
	arrive(s, job_arrival(id, avoid, true, first), device_type, tags, tags_json);
}

void sched_reservation_queued(struct sched *s, const struct reservation_record *rec)
{
	arrive(s, reservation_arrival(rec->id, rec->board, true), rec->device_type, NULL,
	       rec->tags);
}

void sched_entry_queued(struct sched *s, const struct store_queued *q)
{
	struct sched_arrival *a;
	const char *own;

	/*
	 * Left to the host that submitted it, which had a free board for it
	 * (this host: its own arrival is placed already); offered again to
	 * all (store_announce()) if that board did not take it, looked at
	 * again by the others in case that host went before it claimed.
	 */
	if (q->first) {
		own = store_host_name(s->deps.run.store);
		if (!own || strcmp(q->first, own))
			sched_left_add(s, q);
		return;
	}
	a = q->job ? job_arrival(q->job, q->avoid, false, false) :
		     reservation_arrival(q->reservation, q->board, false);
	arrive(s, a, q->device_type, NULL, q->tags);
}

int sched_position(struct sched *s, int64_t id, size_t *ret)
{
	int64_t pos;
	int err = store_queue_position(s->deps.run.store, id, &pos);

	if (!err)
		*ret = (size_t)pos;
	return err;
}
