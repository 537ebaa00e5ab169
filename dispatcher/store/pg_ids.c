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
#include <string.h>

#include "core/log.h"

static const char sql_fetch[] = "SELECT nextval($1::regclass) FROM generate_series(1, $2)";

static int read_ids(PGresult *res, void *userdata)
{
	struct pg_ids *ids = userdata;
	int i;

	for (i = 0; i < PQntuples(res) && ids->n < PG_IDS_AHEAD; i++)
		ids->v[ids->n++] = pg_int(res, i, 0);
	return 0;
}

/* The answer of a refill sent from the loop. */
static void ids_fetched(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_ids *ids = userdata;

	ids->fetching = false;
	if (!err)
		read_ids(res, ids);
}

static void ids_refill(struct pg_store *ps, struct pg_ids *ids)
{
	struct pg_args a = { 0 };

	if (ids->fetching || ids->n > PG_IDS_AHEAD / 2 || !ps->loop)
		return;
	pg_arg_text(&a, ids->sequence);
	pg_arg_int(&a, PG_IDS_AHEAD - ids->n);
	if (pg_conn_send(ps->conn, sql_fetch, a.n, a.v, PG_CMD_SYNC, ids_fetched, ids) == 0)
		ids->fetching = true;
}

/* None left while the database is there (a burst outran the refill): wait for some. */
static int ids_fetch_now(struct pg_store *ps, struct pg_ids *ids)
{
	struct pg_args a = { 0 };

	if (!pg_conn_is_up(ps->conn))
		return -ENOTCONN;
	pg_arg_text(&a, ids->sequence);
	pg_arg_int(&a, PG_IDS_AHEAD);
	return pg_call_now(ps, "fetch ids ahead", sql_fetch, &a, read_ids, ids);
}

int pg_ids_take(struct pg_store *ps, struct pg_ids *ids, int64_t *ret)
{
	if (!ids->n && (ids_fetch_now(ps, ids) < 0 || !ids->n)) {
		ids_refill(ps, ids);
		return -ENOTCONN;
	}
	*ret = ids->v[0];
	memmove(ids->v, ids->v + 1, (ids->n - 1) * sizeof(ids->v[0]));
	ids->n--;
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
		memset(&a, 0, sizeof(a));
		pg_arg_text(&a, all[i]->sequence);
		pg_arg_int(&a, PG_IDS_AHEAD);
		r = pg_call(ps, "fetch ids ahead", sql_fetch, &a, read_ids, all[i]);
		if (r < 0)
			return r;
	}
	return 0;
}
