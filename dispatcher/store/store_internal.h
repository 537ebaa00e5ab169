/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store_internal.h -- what a store implementation provides, and what store.c
 * gives it; only store/ includes this file
 *
 * An implementation is a struct store_driver listed in store.c: the name
 * labd.conf gives it (`store = { driver = "sqlite"; };`), the keys of its
 * `store` group, and an open function that returns a struct store whose ops
 * table does the work.  It embeds struct store first in its own struct.
 * Adding one (PostgreSQL next to SQLite) is a new file with its driver and
 * ops, and one line in store.c's driver table: no caller changes.
 *
 * store.c stands between the callers and the ops, the same for every
 * implementation:
 *  - it checks the arguments store.h documents (-EINVAL for an enum out of
 *    range or a required string missing), so ops see valid arguments only;
 *  - transactions nest there: ->begin and ->commit are called for the
 *    outermost store_begin()/store_commit() pair only, and store_close()
 *    commits one still open before ->close;
 *  - listings: a listing op fills a struct store_rows with every matching
 *    row, in order, and store.c then runs the caller's callback on each.
 *    So "every row is read before the first callback" holds for every
 *    implementation, and an asynchronous one may hand its rows over later.
 *
 * Op contract: 0 or a negative errno as store.h says; inputs are borrowed
 * for the call (an op that completes later copies them); a record filled for the caller (->job_get ...) is written
 * only on success; a listing leaves @rows empty when it fails.
 */
#ifndef LABD_STORE_INTERNAL_H
#define LABD_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- rows of a listing ---- */

/* A record type of store.h: its size and how to free its strings. */
struct store_row_type {
	size_t size;
	void (*release)(void *rec);
};

extern const struct store_row_type store_job_rows;
extern const struct store_row_type store_device_rows;
extern const struct store_row_type store_result_rows;
extern const struct store_row_type store_event_rows;
extern const struct store_row_type store_reservation_rows;
extern const struct store_row_type store_queue_rows;
extern const struct store_row_type store_token_rows;
extern const struct store_row_type store_delivery_rows;

/* Records of one type, in the order a listing found them. */
struct store_rows {
	const struct store_row_type *type;	/* set by store.c */
	char *v;		/* n records of type->size bytes */
	size_t n;
	size_t alloc;
};

/* store_rows_add() - a zeroed record appended to @rows, or NULL (ENOMEM). */
void *store_rows_add(struct store_rows *rows);

/* store_rows_at() - the @i-th record. */
void *store_rows_at(const struct store_rows *rows, size_t i);

/* store_rows_release() - release every record and the array; @rows becomes empty. */
void store_rows_release(struct store_rows *rows);

/* ---- the ops table ---- */

struct store {
	const struct store_ops *ops;
	unsigned depth;		/* store_begin() nesting, kept by store.c */
	struct store_later *later;	/* store_read_later()'s waiting for answers, kept by store.c */
};

/* One entry per function of store.h, with the same meaning. */
struct store_ops {
	/* close and free (store.c committed a transaction left open) */
	void (*close)(struct store *st);
	int (*begin)(struct store *st);
	int (*commit)(struct store *st);	/* a failed commit rolls back */
	/* optional: whether it answers now (NULL: always) */
	bool (*available)(const struct store *st);

	int (*job_insert)(struct store *st, struct job_record *rec);
	int (*job_get)(struct store *st, int64_t id, struct job_record *ret);
	int (*job_list)(struct store *st, const struct job_filter *f, struct store_rows *rows);
	int (*job_queued)(struct store *st, struct store_rows *rows);
	int (*job_running)(struct store *st, struct store_rows *rows);
	/* optional (NULL: store.c reads each job with ->job_get) */
	int (*job_still_queued)(struct store *st, const int64_t *ids, size_t n,
				struct store_rows *rows);
	int (*job_start)(struct store *st, int64_t id, const char *device, uint64_t when);
	int (*job_set_state)(struct store *st, int64_t id, enum job_state state);
	int (*job_finish)(struct store *st, int64_t id, enum job_health health,
			  enum error_type type, const char *msg, uint64_t when);
	int (*job_requeue)(struct store *st, int64_t id, bool recovered, const char *why);
	int (*job_prune)(struct store *st, int64_t id, uint64_t log_removed,
			 uint64_t history_removed);
	int (*job_count)(struct store *st, enum job_state state, int64_t *ret);
	int (*job_count_matching)(struct store *st, const struct job_filter *f, int64_t *ret);

	int (*device_get)(struct store *st, const char *name, struct device_record *ret);
	int (*device_put)(struct store *st, const struct device_record *rec);
	int (*device_list)(struct store *st, struct store_rows *rows);
	/* optional (NULL: one host, always 0) */
	int (*board_register)(struct store *st, const char *name, const char *device_type,
			      uint64_t now, char *owner, size_t len);
	int (*board_release)(struct store *st, const char *name);

	/* optional (NULL: one host): store_host_name(), store_host_url(), store_host_reaped() */
	const char *(*host_name)(const struct store *st);
	int (*host_url)(struct store *st, const char *host, char **ret);
	int (*host_reaped)(struct store *st, const char *host, bool *ret);
	const char *(*lab_secret)(const struct store *st);
	int (*board_elsewhere)(struct store *st, const char *device_type, bool *ret);

	int (*token_add)(struct store *st, const struct token_record *rec);
	int (*token_find)(struct store *st, const char *hash, struct token_record *ret);
	int (*token_list)(struct store *st, struct store_rows *rows);
	/* optional (NULL: -EOPNOTSUPP): store_migrate() into this store */
	int (*import)(struct store *st, struct store *from);

	int (*result_add)(struct store *st, struct result_record *rec);
	int (*result_list)(struct store *st, int64_t job_id, struct store_rows *rows);

	int (*event_add)(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
			 const char *data, int64_t *ret_seq);
	int (*event_list)(struct store *st, int64_t job_id, int64_t after,
			  struct store_rows *rows);
	int (*delivered_set)(struct store *st, const char *backend, const char *receiver,
			     int64_t job_id, int64_t seq);
	int (*delivered_get)(struct store *st, const char *backend, const char *receiver,
			     int64_t job_id, int64_t *ret);
	int (*delivered_list)(struct store *st, struct store_rows *rows);

	int (*reservation_insert)(struct store *st, struct reservation_record *rec);
	int (*reservation_get)(struct store *st, int64_t id, struct reservation_record *ret);
	int (*reservation_waiting)(struct store *st, struct store_rows *rows);
	int (*reservation_active)(struct store *st, struct store_rows *rows);
	int (*reservation_recent)(struct store *st, unsigned limit, struct store_rows *rows);
	int (*reservation_activate)(struct store *st, int64_t id, const char *device,
				    uint64_t started, uint64_t until);
	int (*reservation_renew)(struct store *st, int64_t id, uint64_t until);
	int (*reservation_end)(struct store *st, int64_t id, uint64_t when, const char *reason);

	/* the queue: @done exactly once when 0 is returned (store.h) */
	int (*claim)(struct store *st, const struct store_claim_req *req, store_claim_fn done,
		     void *userdata);
	int (*queue_position)(struct store *st, int64_t id, int64_t *ret);
	int (*job_position)(struct store *st, int64_t id, int64_t *ret);
	/* optional: a store shared by several hosts tells them */
	int (*announce)(struct store *st, int64_t id, const char *device_type, const char *tags);
	int (*queue_summary)(struct store *st, struct store_rows *rows);

	/* durability: 0 durable, 1 @done later (store.h); forget drops @userdata's completions */
	int (*sync)(struct store *st, store_done_fn done, void *userdata);
	void (*forget)(struct store *st, void *userdata);

	/* optional (NULL: every read answers at once): reads that complete later (store.h) */
	int (*read_begin)(struct store *st, store_done_fn done, void *userdata);
	int (*read_end)(struct store *st);
	bool (*read_pending)(const struct store *st);
};

/*
 * store_healths_text() - job_filter.healths as ",complete,canceled," (the
 * names between commas, for an SQL instr() or position() test), or NULL for
 * every health; @buf (64 bytes are enough) holds the text.
 */
const char *store_healths_text(unsigned mask, char *buf, size_t len);

/* ---- drivers ---- */

struct store_driver {
	const char *name;		/* `driver` in labd.conf's `store` group */
	const char *const *keys;	/* its other keys (NULL-terminated), or NULL: none */
	/* optional: check the values of its keys in @settings (may be NULL) */
	int (*check)(const config_setting_t *settings, struct diag *diag);
	/* open: 0 with *ret (its ->ops set), -EINVAL (problems in @diag) or another errno */
	int (*open)(const struct store_params *p, struct store **ret, struct diag *diag);
};

extern const struct store_driver store_sqlite_driver;
extern const struct store_driver store_pg_driver;	/* pg.c: "postgresql" */

#endif
