// SPDX-License-Identifier: GPL-2.0-or-later
/* store.c -- the store interface: drivers, argument checks, transactions, listings, records */
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "store/store_internal.h"

#define STORE_MAX_KEYS 32	/* of a driver's `store` group, `driver` included */
#define STORE_ROWS_MIN 16	/* initial capacity of a store_rows array */

static const struct store_driver *const store_drivers[] = {
	&store_sqlite_driver,
	&store_pg_driver,
};

/* ---- records ---- */

void job_record_release(struct job_record *rec)
{
	if (!rec)
		return;
	free(rec->name);
	free(rec->device_type);
	free(rec->tags);
	free(rec->error_msg);
	free(rec->device);
	free(rec->definition);
	free(rec->format);
	free(rec->filename);
	free(rec->submitter);
	free(rec->last_error);
	free(rec->avoid);
	free(rec->host);
	memset(rec, 0, sizeof(*rec));
}

void device_record_release(struct device_record *rec)
{
	if (!rec)
		return;
	free(rec->name);
	free(rec->reason);
	free(rec->holder);
	free(rec->host);
	free(rec->device_type);
	memset(rec, 0, sizeof(*rec));
}

void result_record_release(struct result_record *rec)
{
	if (!rec)
		return;
	free(rec->suite);
	free(rec->name);
	free(rec->result);
	free(rec->units);
	free(rec->extra);
	memset(rec, 0, sizeof(*rec));
}

void event_record_release(struct event_record *rec)
{
	if (!rec)
		return;
	free(rec->kind);
	free(rec->data);
	memset(rec, 0, sizeof(*rec));
}

void reservation_record_release(struct reservation_record *rec)
{
	if (!rec)
		return;
	free(rec->holder);
	free(rec->board);
	free(rec->device_type);
	free(rec->tags);
	free(rec->device);
	free(rec->end_reason);
	memset(rec, 0, sizeof(*rec));
}

void queue_record_release(struct queue_record *rec)
{
	if (!rec)
		return;
	free(rec->device_type);
	memset(rec, 0, sizeof(*rec));
}

static const char *const reservation_states[] = {
	[RESERVATION_WAITING] = "waiting",
	[RESERVATION_ACTIVE] = "active",
	[RESERVATION_ENDED] = "ended",
};

const char *reservation_state_name(enum reservation_state s)
{
	return (unsigned)s <= RESERVATION_ENDED ? reservation_states[s] : "unknown";
}

int reservation_state_from_name(const char *name, enum reservation_state *ret)
{
	unsigned i;

	for (i = 0; name && i <= RESERVATION_ENDED; i++) {
		if (!strcmp(name, reservation_states[i])) {
			*ret = (enum reservation_state)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- rows ---- */

static void job_release(void *rec)
{
	job_record_release(rec);
}

static void device_release(void *rec)
{
	device_record_release(rec);
}

static void result_release(void *rec)
{
	result_record_release(rec);
}

static void event_release(void *rec)
{
	event_record_release(rec);
}

static void reservation_release(void *rec)
{
	reservation_record_release(rec);
}

static void queue_release(void *rec)
{
	queue_record_release(rec);
}

const struct store_row_type store_job_rows = { sizeof(struct job_record), job_release };
const struct store_row_type store_device_rows = { sizeof(struct device_record), device_release };
const struct store_row_type store_result_rows = { sizeof(struct result_record), result_release };
const struct store_row_type store_event_rows = { sizeof(struct event_record), event_release };
const struct store_row_type store_reservation_rows = {
	sizeof(struct reservation_record), reservation_release
};
const struct store_row_type store_queue_rows = { sizeof(struct queue_record), queue_release };

void token_record_release(struct token_record *rec)
{
	if (!rec)
		return;
	free(rec->hash);
	free(rec->user);
	free(rec->role);
	free(rec->created_by);
	memset(rec, 0, sizeof(*rec));
}

static void token_release(void *rec)
{
	token_record_release(rec);
}

const struct store_row_type store_token_rows = { sizeof(struct token_record), token_release };

void delivery_record_release(struct delivery_record *rec)
{
	if (!rec)
		return;
	free(rec->backend);
	free(rec->receiver);
	memset(rec, 0, sizeof(*rec));
}

static void delivery_release(void *rec)
{
	delivery_record_release(rec);
}

const struct store_row_type store_delivery_rows = {
	sizeof(struct delivery_record), delivery_release
};

void *store_rows_add(struct store_rows *rows)
{
	size_t alloc = rows->alloc ? rows->alloc * 2 : STORE_ROWS_MIN;
	char *v;

	if (rows->n == rows->alloc) {
		v = reallocarray(rows->v, alloc, rows->type->size);
		if (!v)
			return NULL;
		rows->v = v;
		rows->alloc = alloc;
	}
	v = store_rows_at(rows, rows->n++);
	memset(v, 0, rows->type->size);
	return v;
}

void *store_rows_at(const struct store_rows *rows, size_t i)
{
	return rows->v + i * rows->type->size;
}

void store_rows_release(struct store_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->n; i++)
		rows->type->release(store_rows_at(rows, i));
	free(rows->v);
	rows->v = NULL;
	rows->n = 0;
	rows->alloc = 0;
}

/*
 * The callbacks of a listing, on the rows its op returned (@r: the op's
 * result); then the rows are released.  One loop per record type, since the
 * callbacks are typed.
 */
#define STORE_EACH(rows, r, cb, ud)                                    \
	do {                                                           \
		for (size_t i_ = 0; (r) >= 0 && i_ < (rows)->n; i_++) \
			(r) = (cb)(store_rows_at((rows), i_), (ud));   \
		store_rows_release(rows);                              \
	} while (0)

/* ---- drivers ---- */

static const struct store_driver *find_driver(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(store_drivers); i++)
		if (!strcmp(store_drivers[i]->name, name))
			return store_drivers[i];
	return NULL;
}

static int unknown_driver(const config_setting_t *s, const char *name, struct diag *diag)
{
	struct strbuf known = STRBUF_INIT;
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(store_drivers); i++)
		strbuf_addf(&known, "%s%s", i ? ", " : "", store_drivers[i]->name);
	r = diag_add(diag, cfg_file(s), cfg_line(s), "unknown store driver '%s' (known: %s)", name,
		     known.buf ? known.buf : "");
	strbuf_release(&known);
	return r;
}

/* The driver @settings names, its keys and their values checked. */
static int pick_driver(const config_setting_t *settings, const struct store_driver **ret,
		       struct diag *diag)
{
	const char *keys[STORE_MAX_KEYS] = { "driver" }, *name = STORE_DEFAULT_DRIVER;
	const struct store_driver *drv;
	size_t n = 1;
	int r;

	if (settings && !config_setting_is_group(settings))
		return diag_add(diag, cfg_file(settings), cfg_line(settings),
				"'store' must be a group, not %s", cfg_type_name(settings));
	if (settings && cfg_get_string(settings, "driver", false, &name, diag) == -EINVAL)
		return -EINVAL;
	drv = find_driver(name);
	if (!drv)
		return unknown_driver(config_setting_get_member(settings, "driver"), name, diag);
	for (const char *const *k = drv->keys; k && *k && n < STORE_MAX_KEYS - 1; k++)
		keys[n++] = *k;
	r = settings ? cfg_check_keys(settings, keys, diag) : 0;
	if (!r && drv->check)
		r = drv->check(settings, diag);
	if (r < 0)
		return r;
	*ret = drv;
	return 0;
}

int store_check(const config_setting_t *settings, struct diag *diag)
{
	const struct store_driver *drv;

	return pick_driver(settings, &drv, diag);
}

int store_open(const struct store_params *p, struct store **ret, struct diag *diag)
{
	const struct store_driver *drv;
	int r = pick_driver(p->settings, &drv, diag);

	if (r < 0)
		return r;
	return drv->open(p, ret, diag);
}

struct store *store_close(struct store *st)
{
	if (!st)
		return NULL;
	if (st->depth) {
		st->depth = 0;
		st->ops->commit(st);
	}
	store_read_later_forget(st, NULL);
	st->ops->close(st);
	return NULL;
}

bool store_available(const struct store *st)
{
	return !st || !st->ops->available || st->ops->available(st);
}

int store_begin(struct store *st)
{
	int r;

	if (st->depth++)
		return 0;
	r = st->ops->begin(st);
	if (r < 0)
		st->depth = 0;
	return r;
}

int store_commit(struct store *st)
{
	if (!st->depth)
		return -EINVAL;
	if (--st->depth)
		return 0;
	return st->ops->commit(st);
}

/* ---- jobs ---- */

static bool job_enums_valid(const struct job_record *rec)
{
	return (unsigned)rec->state <= JOB_STATE_FINISHED &&
	       (unsigned)rec->health <= JOB_HEALTH_CANCELED &&
	       (unsigned)rec->error_type <= ERROR_BUG;
}

int store_job_insert(struct store *st, struct job_record *rec)
{
	if (!job_enums_valid(rec))
		return -EINVAL;
	return st->ops->job_insert(st, rec);
}

int store_job_get(struct store *st, int64_t id, struct job_record *ret)
{
	return st->ops->job_get(st, id, ret);
}

int store_job_list(struct store *st, const struct job_filter *f,
		   int (*cb)(const struct job_record *rec, void *ud), void *ud)
{
	static const struct job_filter all = { .state = -1 };
	struct store_rows rows = { .type = &store_job_rows };
	int r;

	if (!f)
		f = &all;
	if ((f->state >= 0 && (unsigned)f->state > JOB_STATE_FINISHED) || f->before_id < 0 ||
	    f->after_id < 0 || f->limit > STORE_JOB_LIST_MAX)
		return -EINVAL;
	r = st->ops->job_list(st, f, &rows);
	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_job_queued(struct store *st, int (*cb)(const struct job_record *rec, void *ud),
		     void *ud)
{
	struct store_rows rows = { .type = &store_job_rows };
	int r = st->ops->job_queued(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

/* A store without the op (one host): each job read, the queued ones kept. */
static int still_queued_each(struct store *st, const int64_t *ids, size_t n,
			     struct store_rows *rows)
{
	struct job_record rec, *row;
	size_t i;
	int r = 0;

	for (i = 0; i < n && r >= 0; i++) {
		memset(&rec, 0, sizeof(rec));
		r = st->ops->job_get(st, ids[i], &rec);
		if (r == -ENOENT || (!r && (rec.state != JOB_STATE_QUEUED || rec.session))) {
			job_record_release(&rec);
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		row = store_rows_add(rows);
		if (!row) {
			job_record_release(&rec);
			r = -ENOMEM;
			break;
		}
		*row = rec;	/* the strings move to the row */
	}
	if (r < 0)
		store_rows_release(rows);
	return r;
}

int store_job_still_queued(struct store *st, const int64_t *ids, size_t n,
			   int (*cb)(const struct job_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_job_rows };
	int r;

	if (n > STORE_STILL_QUEUED_MAX || (n && !ids))
		return -EINVAL;
	if (!n)
		return 0;
	r = st->ops->job_still_queued ? st->ops->job_still_queued(st, ids, n, &rows) :
					still_queued_each(st, ids, n, &rows);
	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_job_running(struct store *st, int (*cb)(const struct job_record *rec, void *ud),
		      void *ud)
{
	struct store_rows rows = { .type = &store_job_rows };
	int r = st->ops->job_running(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_job_start(struct store *st, int64_t id, const char *device, uint64_t when)
{
	return st->ops->job_start(st, id, device, when);
}

int store_job_set_state(struct store *st, int64_t id, enum job_state state)
{
	if ((unsigned)state > JOB_STATE_FINISHED)
		return -EINVAL;
	return st->ops->job_set_state(st, id, state);
}

int store_job_finish(struct store *st, int64_t id, enum job_health health,
		     enum error_type type, const char *msg, uint64_t when)
{
	if ((unsigned)health > JOB_HEALTH_CANCELED || (unsigned)type > ERROR_BUG)
		return -EINVAL;
	return st->ops->job_finish(st, id, health, type, msg, when);
}

int store_job_requeue(struct store *st, int64_t id, bool recovered, const char *why)
{
	return st->ops->job_requeue(st, id, recovered, why);
}

int store_job_prune(struct store *st, int64_t id, uint64_t log_removed,
		    uint64_t history_removed)
{
	if (!log_removed && !history_removed)
		return -EINVAL;
	return st->ops->job_prune(st, id, log_removed, history_removed);
}

int store_job_count(struct store *st, enum job_state state, int64_t *ret)
{
	if ((unsigned)state > JOB_STATE_FINISHED)
		return -EINVAL;
	return st->ops->job_count(st, state, ret);
}

const char *store_healths_text(unsigned mask, char *buf, size_t len)
{
	enum job_health h;

	if (!mask)
		return NULL;
	snprintf(buf, len, ",");
	for (h = JOB_HEALTH_UNKNOWN; h <= JOB_HEALTH_CANCELED; h++)
		if (mask & (1U << h))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s,", job_health_name(h));
	return buf;
}

int store_job_count_matching(struct store *st, const struct job_filter *f, int64_t *ret)
{
	if (f->state >= 0 && (unsigned)f->state > JOB_STATE_FINISHED)
		return -EINVAL;
	return st->ops->job_count_matching(st, f, ret);
}

/* ---- devices ---- */

int store_device_get(struct store *st, const char *name, struct device_record *ret)
{
	if (!name)
		return -EINVAL;
	return st->ops->device_get(st, name, ret);
}

int store_device_put(struct store *st, const struct device_record *rec)
{
	if (!rec->name || (unsigned)rec->state > DEVICE_STATE_BAD)
		return -EINVAL;
	return st->ops->device_put(st, rec);
}

int store_device_list(struct store *st, int (*cb)(const struct device_record *rec, void *ud),
		      void *ud)
{
	struct store_rows rows = { .type = &store_device_rows };
	int r = st->ops->device_list(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_token_add(struct store *st, const struct token_record *rec)
{
	if (!rec || !rec->hash || !rec->user || !rec->role)
		return -EINVAL;
	return st->ops->token_add ? st->ops->token_add(st, rec) : -EOPNOTSUPP;
}

int store_token_find(struct store *st, const char *hash, struct token_record *ret)
{
	if (!hash || !ret)
		return -EINVAL;
	return st->ops->token_find ? st->ops->token_find(st, hash, ret) : -ENOENT;
}

int store_token_list(struct store *st, int (*cb)(const struct token_record *rec, void *ud),
		     void *ud)
{
	struct store_rows rows = { .type = &store_token_rows };
	int r = st->ops->token_list ? st->ops->token_list(st, &rows) : 0;

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_migrate(struct store *to, struct store *from)
{
	if (!to || !from || to == from)
		return -EINVAL;
	return to->ops->import ? to->ops->import(to, from) : -EOPNOTSUPP;
}

const char *store_host_name(const struct store *st)
{
	return st->ops->host_name ? st->ops->host_name(st) : NULL;
}

const char *store_lab_secret(const struct store *st)
{
	return st->ops->lab_secret ? st->ops->lab_secret(st) : NULL;
}

int store_host_url(struct store *st, const char *host, char **ret)
{
	if (!host || !ret)
		return -EINVAL;
	return st->ops->host_url ? st->ops->host_url(st, host, ret) : -ENOENT;
}

int store_host_reaped(struct store *st, const char *host, bool *ret)
{
	*ret = false;
	if (!host)
		return -EINVAL;
	return st->ops->host_reaped ? st->ops->host_reaped(st, host, ret) : 0;
}

int store_board_elsewhere(struct store *st, const char *device_type, bool *ret)
{
	*ret = false;
	if (!device_type)
		return -EINVAL;
	return st->ops->board_elsewhere ? st->ops->board_elsewhere(st, device_type, ret) : 0;
}

int store_board_register(struct store *st, const char *name, const char *device_type,
			 uint64_t now, char *owner, size_t len)
{
	if (!name || !device_type || !owner || !len)
		return -EINVAL;
	owner[0] = '\0';
	return st->ops->board_register ?
		       st->ops->board_register(st, name, device_type, now, owner, len) : 0;
}

int store_board_release(struct store *st, const char *name)
{
	if (!name)
		return -EINVAL;
	return st->ops->board_release ? st->ops->board_release(st, name) : 0;
}

/* ---- results ---- */

int store_result_add(struct store *st, struct result_record *rec)
{
	if (!rec->result)
		return -EINVAL;
	return st->ops->result_add(st, rec);
}

int store_result_list(struct store *st, int64_t job_id,
		      int (*cb)(const struct result_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_result_rows };
	int r = st->ops->result_list(st, job_id, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

/* ---- events ---- */

int store_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
		    const char *data, int64_t *ret_seq)
{
	if (!kind)
		return -EINVAL;
	return st->ops->event_add(st, job_id, ts, kind, data, ret_seq);
}

int store_event_list(struct store *st, int64_t job_id, int64_t after,
		     int (*cb)(const struct event_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_event_rows };
	int r = st->ops->event_list(st, job_id, after, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_delivered_set(struct store *st, const char *backend, const char *receiver,
			int64_t job_id, int64_t seq)
{
	if (!backend || !receiver || seq < 0)
		return -EINVAL;
	return st->ops->delivered_set(st, backend, receiver, job_id, seq);
}

int store_delivered_get(struct store *st, const char *backend, const char *receiver,
			int64_t job_id, int64_t *ret)
{
	*ret = 0;
	if (!backend || !receiver)
		return -EINVAL;
	return st->ops->delivered_get(st, backend, receiver, job_id, ret);
}

int store_delivered_list(struct store *st,
			 int (*cb)(const struct delivery_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_delivery_rows };
	int r = st->ops->delivered_list(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

/* ---- reservations ---- */

int store_reservation_insert(struct store *st, struct reservation_record *rec)
{
	if (!rec->holder || !rec->device_type)
		return -EINVAL;
	return st->ops->reservation_insert(st, rec);
}

int store_reservation_get(struct store *st, int64_t id, struct reservation_record *ret)
{
	return st->ops->reservation_get(st, id, ret);
}

int store_reservation_waiting(struct store *st,
			      int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_reservation_rows };
	int r = st->ops->reservation_waiting(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_reservation_active(struct store *st,
			     int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_reservation_rows };
	int r = st->ops->reservation_active(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_reservation_recent(struct store *st, unsigned limit,
			     int (*cb)(const struct reservation_record *rec, void *ud), void *ud)
{
	struct store_rows rows = { .type = &store_reservation_rows };
	int r = st->ops->reservation_recent(st, limit, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

int store_reservation_activate(struct store *st, int64_t id, const char *device,
			       uint64_t started, uint64_t until)
{
	return st->ops->reservation_activate(st, id, device, started, until);
}

int store_reservation_renew(struct store *st, int64_t id, uint64_t until)
{
	return st->ops->reservation_renew(st, id, until);
}

int store_reservation_end(struct store *st, int64_t id, uint64_t when, const char *reason)
{
	return st->ops->reservation_end(st, id, when, reason);
}

/* ---- the queue ---- */

int store_claim(struct store *st, const struct store_claim_req *req, store_claim_fn done,
		void *userdata)
{
	if (!req->board || !req->device_type || !done)
		return -EINVAL;
	return st->ops->claim(st, req, done, userdata);
}

int store_announce(struct store *st, int64_t id, const char *device_type, const char *tags)
{
	return st->ops->announce ? st->ops->announce(st, id, device_type, tags) : 0;
}

int store_queue_position(struct store *st, int64_t id, int64_t *ret)
{
	return st->ops->queue_position(st, id, ret);
}

int store_job_position(struct store *st, int64_t id, int64_t *ret)
{
	return st->ops->job_position(st, id, ret);
}

int store_queue_summary(struct store *st, int (*cb)(const struct queue_record *rec, void *ud),
			void *ud)
{
	struct store_rows rows = { .type = &store_queue_rows };
	int r = st->ops->queue_summary(st, &rows);

	STORE_EACH(&rows, r, cb, ud);
	return r < 0 ? r : 0;
}

/* ---- durability ---- */

int store_sync(struct store *st, store_done_fn done, void *userdata)
{
	if (!done)
		return -EINVAL;
	return st->ops->sync(st, done, userdata);
}

int store_read_begin(struct store *st, store_done_fn done, void *userdata)
{
	if (!done)
		return -EINVAL;
	return st->ops->read_begin ? st->ops->read_begin(st, done, userdata) : 0;
}

int store_read_end(struct store *st)
{
	return st->ops->read_end ? st->ops->read_end(st) : 0;
}

bool store_read_pending(const struct store *st)
{
	return st->ops->read_pending && st->ops->read_pending(st);
}

/* A store_read_later() whose reads are on their way. */
struct store_later {
	struct store *st;
	const void *owner;
	void (*fn)(void *userdata);
	void (*release)(void *userdata);
	void *userdata;
	struct store_later *next;	/* st->later */
};

static void later_free(struct store_later *l)
{
	struct store_later **pp;

	for (pp = &l->st->later; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	l->release(l->userdata);
	free(l);
}

static void later_answered(int err, void *userdata);

/* One run of @l's function; it stays while reads are on their way. */
static void later_run(struct store_later *l)
{
	if (store_read_begin(l->st, later_answered, l) < 0) {
		l->fn(l->userdata);	/* no context (out of memory): its reads wait */
		later_free(l);
		return;
	}
	l->fn(l->userdata);
	if (store_read_end(l->st) <= 0)
		later_free(l);
}

static void later_answered(int err, void *userdata)
{
	later_run(userdata);
}

int store_read_later(struct store *st, const void *owner, void (*fn)(void *userdata),
		     void (*release)(void *userdata), void *userdata)
{
	struct store_later *l = calloc(1, sizeof(*l));

	if (!l) {
		fn(userdata);
		release(userdata);
		return -ENOMEM;
	}
	*l = (struct store_later){ st, owner, fn, release, userdata, st->later };
	st->later = l;
	later_run(l);
	return 0;
}

void store_read_later_forget(struct store *st, const void *owner)
{
	struct store_later *l, *next;

	if (!st)
		return;
	for (l = st->later; l; l = next) {
		next = l->next;
		if (owner && l->owner != owner)
			continue;
		store_forget(st, l);
		later_free(l);
	}
}

void store_forget(struct store *st, void *userdata)
{
	if (st)
		st->ops->forget(st, userdata);
}
