// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sqlite_batch.c -- the writes of one loop iteration in one transaction,
 * store_sync() and store_begin()/store_commit()
 *
 * A commit costs more than the writes it commits (about 80 us against 6 us
 * for a row here), and one loop iteration may write many rows: a burst of
 * submissions, a job's start with its events.  So with a loop, the first
 * write of an iteration opens a transaction (BEGIN IMMEDIATE) and a defer
 * commits it at the start of the next iteration, before the loop waits
 * again.  store_sync() waiters are called after that commit, in order.
 * Without a loop every write commits by itself and nothing ever waits.
 */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>

#include "core/log.h"
#include "core/loop.h"

struct sqlite_waiter {
	store_done_fn done;
	void *userdata;
	struct sqlite_waiter *next;
};

/* The batch is over (@r: its commit's result): tell every waiter, in order. */
static void batch_done(struct sqlite_store *sq, int r)
{
	struct sqlite_waiter *w = sq->waiters, *next;

	sq->batch = false;
	sq->waiters = NULL;
	sq->waiters_tail = &sq->waiters;
	for (; w; w = next) {
		next = w->next;
		w->done(r, w->userdata);
		free(w);
	}
}

static int commit_now(struct sqlite_store *sq)
{
	int r = sqlite_run(sq, sq->stmt[STMT_COMMIT], "commit a transaction");

	if (r < 0 && !sqlite3_get_autocommit(sq->db))
		sqlite_run(sq, sq->stmt[STMT_ROLLBACK], "roll back a transaction");
	return r;
}

static int on_commit(struct loop_source *src, void *ud)
{
	struct sqlite_store *sq = ud;

	/* inside store_begin(), store_commit() ends the batch */
	if (sq->batch && !sq->store.depth)
		batch_done(sq, commit_now(sq));
	return 0;
}

void sqlite_write(struct sqlite_store *sq)
{
	if (sq->batch && sqlite3_get_autocommit(sq->db)) {
		/* SQLite rolled the batch back itself (I/O error, disk full) */
		log_error("the writes of the last moment to '%s' were rolled back", sq->path);
		batch_done(sq, -EIO);
	}
	if (!sq->commit || sq->batch || sq->store.depth)
		return;
	/* if the lock is not ours (another writer), the write commits by itself */
	if (sqlite_run(sq, sq->stmt[STMT_BEGIN], "begin a transaction") < 0)
		return;
	sq->batch = true;
	loop_defer_again(sq->commit);
}

int sqlite_commit_batch(struct sqlite_store *sq)
{
	int r;

	if (!sq->batch || sq->store.depth)
		return 0;
	r = commit_now(sq);
	batch_done(sq, r);
	return r;
}

int sqlite_batch_init(struct sqlite_store *sq, struct loop *loop)
{
	int r;

	sq->waiters_tail = &sq->waiters;
	if (!loop)
		return 0;
	r = loop_add_defer(loop, &sq->commit, on_commit, sq);
	if (r < 0)
		return r;
	loop_source_set_description(sq->commit, "store:commit");
	return 0;	/* it runs once at the first iteration, with nothing to commit */
}

void sqlite_batch_close(struct sqlite_store *sq)
{
	struct sqlite_waiter *w;

	if (sq->batch)
		commit_now(sq);
	sq->batch = false;
	/* whoever waited is going away with labd: drop, never call */
	while ((w = sq->waiters)) {
		sq->waiters = w->next;
		free(w);
	}
	sq->commit = loop_source_free(sq->commit);
}

int sqlite_begin(struct store *st)
{
	struct sqlite_store *sq = sqlite_of(st);

	/* the open batch becomes the transaction that store_commit() ends */
	if (sq->batch)
		return 0;
	return sqlite_run(sq, sq->stmt[STMT_BEGIN], "begin a transaction");
}

int sqlite_commit(struct store *st)
{
	struct sqlite_store *sq = sqlite_of(st);
	int r = commit_now(sq);

	batch_done(sq, r);
	return r;
}

int sqlite_sync(struct store *st, store_done_fn done, void *userdata)
{
	struct sqlite_store *sq = sqlite_of(st);
	struct sqlite_waiter *w;

	if (!sq->batch && !st->depth)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->done = done;
	w->userdata = userdata;
	*sq->waiters_tail = w;
	sq->waiters_tail = &w->next;
	return 1;
}

void sqlite_forget(struct store *st, void *userdata)
{
	struct sqlite_store *sq = sqlite_of(st);
	struct sqlite_waiter **pp = &sq->waiters, *w;

	while ((w = *pp)) {
		if (w->userdata != userdata) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		free(w);
	}
	sq->waiters_tail = pp;
}
