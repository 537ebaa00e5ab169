// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_ids.c -- what a write returning at once must know at once: the ids of
 * new jobs and reservations (PostgreSQL sequences, fetched ahead in blocks
 * and refilled from the loop); the numbers of events are pg_event_seqs.c's.
 * A result needs no id at once: the database numbers it as it commits
 * (pg_result_add())
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

static const char sql_fetch[] = "SELECT nextval($1::regclass) FROM generate_series(1, $2)";

/*
 * How it stays ahead: a refill is sent from the loop once half of the block
 * is used, for what tops the pool up to the block.  A burst that takes
 * the rest before the refill is in doubles the block (up to PG_IDS_MAX),
 * so that the next burst finds enough; a refill that comes while more than
 * a quarter of the block is left halves it again (down to the store's
 * `ids_ahead`, PG_IDS_AHEAD by default).
 * A taker that finds none never waits in the loop: inside a read context it
 * is held until the refill is in (pg_ids_take()).
 */

static int read_ids(PGresult *res, void *userdata)
{
	struct pg_ids *ids = userdata;
	int i;

	if (ids->first) {
		memmove(ids->v, ids->v + ids->first, ids->n * sizeof(ids->v[0]));
		ids->first = 0;
	}
	for (i = 0; i < PQntuples(res) && ids->n < PG_IDS_MAX; i++)
		ids->v[ids->n++] = pg_int(res, i, 0);
	return 0;
}

static void ids_refill(struct pg_store *ps, struct pg_ids *ids);

/* The block the next refill tops up to, from how this one went. */
static void ids_adapt(struct pg_ids *ids)
{
	if (ids->ran_out && ids->block < PG_IDS_MAX)
		ids->block *= 2;
	else if (!ids->ran_out && ids->n > ids->block / 4 && ids->block / 2 >= ids->ps->ids_ahead)
		ids->block /= 2;
	ids->ran_out = false;
}

/* The answer of a refill sent from the loop: the takers held for it run again. */
static void ids_fetched(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_ids *ids = userdata;
	struct pg_reads **waits = ids->waits;
	unsigned i, n = ids->n_waits;

	ids->fetching = false;
	ids_adapt(ids);
	ids->err = err;
	if (!err)
		read_ids(res, ids);
	ids->waits = NULL;	/* a taker run again from here may be held for the next one */
	ids->n_waits = ids->alloc_waits = 0;
	if (!err)
		ids_refill(ids->ps, ids);	/* still half empty: at once */
	for (i = 0; i < n; i++)
		pg_read_release(waits[i]);
	free(waits);
}

static void ids_refill(struct pg_store *ps, struct pg_ids *ids)
{
	struct pg_args a = { 0 };

	if (ids->fetching || ids->n > ids->block / 2 || !ps->loop)
		return;
	pg_arg_text(&a, ids->sequence);
	pg_arg_int(&a, ids->block - ids->n);
	if (pg_conn_send(ps->conn, sql_fetch, a.n, a.v, PG_CMD_SYNC, ids_fetched, ids) == 0)
		ids->fetching = true;
}

/* Hold the current read context until the refill is in: -EINPROGRESS, or -EAGAIN. */
static int ids_hold(struct pg_store *ps, struct pg_ids *ids)
{
	struct pg_reads **n;

	if (!pg_read_deferred(ps)) {
		log_warning("store: no id of %s left ahead for a caller that cannot run again "
			    "(it wrote already, or is not an API request): refused, try again",
			    ids->sequence);
		return -EAGAIN;
	}
	if (ids->n_waits == ids->alloc_waits) {
		n = realloc(ids->waits, (ids->alloc_waits * 2 + 8) * sizeof(*ids->waits));
		if (!n)
			return -ENOMEM;
		ids->waits = n;
		ids->alloc_waits = ids->alloc_waits * 2 + 8;
	}
	ids->waits[ids->n_waits++] = pg_read_hold(ps);
	log_debug("store: no id of %s left ahead: a request held until the refill is in",
		  ids->sequence);
	return -EINPROGRESS;
}

/* None left ahead (a burst outran the refill): never a wait in the loop. */
static int ids_none_left(struct pg_store *ps, struct pg_ids *ids)
{
	int r = ids->err;

	ids->ran_out = true;
	ids->err = 0;
	if (r < 0)
		return r;	/* the refill failed: this taker is told, the next one sends another */
	ids_refill(ps, ids);
	if (!ids->fetching || !pg_conn_is_up(ps->conn))
		return -ENOTCONN;	/* the refill goes once the database is back */
	return ids_hold(ps, ids);
}

int pg_ids_take(struct pg_store *ps, struct pg_ids *ids, int64_t *ret)
{
	if (pg_read_pending(&ps->store))
		return -EINPROGRESS;	/* the run's write is refused anyway: no id spent */
	if (!ids->n)
		return ids_none_left(ps, ids);
	*ret = ids->v[ids->first++];
	if (!--ids->n)
		ids->first = 0;
	ids_refill(ps, ids);
	return 0;
}

int pg_ids_fill(struct pg_store *ps)
{
	struct pg_ids *all[] = { &ps->job_ids, &ps->reservation_ids };
	struct pg_args a;
	size_t i;
	int r;

	ps->job_ids.sequence = "jobs_id_seq";
	ps->reservation_ids.sequence = "reservations_id_seq";
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		all[i]->ps = ps;
		all[i]->block = ps->ids_ahead;
		memset(&a, 0, sizeof(a));
		pg_arg_text(&a, all[i]->sequence);
		pg_arg_int(&a, ps->ids_ahead);
		r = pg_call(ps, "fetch ids ahead", sql_fetch, &a, read_ids, all[i]);
		if (r < 0)
			return r;
	}
	return 0;
}
