// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_reads.c -- reads in labd's loop that never wait for PostgreSQL
 *
 * A caller that can run its code again (an API handler) opens a read
 * context (store_read_begin()): each read pg_call() gets in it is sent and
 * fails with -EINPROGRESS, its answer kept (a copy of the PGresult) in the
 * context; once every answer is in, the context's completion runs, the
 * caller runs again, and the same reads, in the same order and with the
 * same parameters, are answered from what was kept (one that differs is
 * sent again).  A handler with N dependent reads runs N + 1 times, each
 * run cheap; independent reads of one run go out pipelined; a read made
 * again in the same run (a handler reads the job, then sched_cancel() does)
 * is answered from the first.  A context may open inside another
 * (store_read_later() from a handler): the outer one is the current one
 * again when the inner one ends.
 *
 * A run may act (a POST handler) once every read it made is answered:
 * its writes are made once, by the run that has every answer.  A write
 * in a run that sent a read is refused (-EINPROGRESS: that run is done
 * again anyway), and a read made after a write of the same run waits for
 * its answer as outside a context, so that running it again can never
 * repeat the write (the API answers after acting in a context of its own:
 * api_answer_after()).
 *
 * A run may also wait for something that is not one of its reads (ids of a
 * sequence, when none is left ahead: pg_ids.c): pg_read_hold() counts it
 * as an answer not in yet, pg_read_release() as one that came.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

/* One read of a context: what was asked, and its answer once in. */
struct pg_answer {
	struct pg_reads *ctx;
	const char *sql;	/* a string literal: compared by address */
	char *key;		/* the parameters, each followed by '\0' ('\1' for NULL) */
	size_t key_len;
	PGresult *res;
	int err;
	char *msg;
	bool done;
};

struct pg_reads {
	void *userdata;
	store_done_fn done;
	struct pg_answer **answers;
	size_t n, alloc;
	size_t next;		/* the run's next read */
	unsigned outstanding;	/* answers not in yet */
	bool sent;		/* the current run sent a read */
	bool wrote;		/* the current run made a write: its reads wait (pg_read_deferred()) */
	bool forgotten;		/* freed when its last answer comes */
	struct pg_reads *outer;	/* the context open when this one began (nested), or NULL */
	struct pg_store *ps;
	struct pg_reads *link;	/* ps->reads */
};

static char *params_key(const struct pg_args *a, size_t *len)
{
	size_t n = 1;
	char *key, *p;
	int i;

	for (i = 0; a && i < a->n; i++)
		n += (a->v[i] ? strlen(a->v[i]) : 1) + 1;
	key = p = malloc(n);
	if (!key)
		return NULL;
	for (i = 0; a && i < a->n; i++) {
		if (a->v[i]) {
			strcpy(p, a->v[i]);
			p += strlen(a->v[i]) + 1;
		} else {
			*p++ = '\1';
			*p++ = '\0';
		}
	}
	*p++ = '\0';
	*len = (size_t)(p - key);
	return key;
}

static void answer_free(struct pg_answer *an)
{
	PQclear(an->res);
	free(an->msg);
	free(an->key);
	free(an);
}

static void reads_free(struct pg_store *ps, struct pg_reads *ctx)
{
	struct pg_reads **pp;
	size_t i;

	for (pp = &ps->reads; *pp; pp = &(*pp)->link) {
		if (*pp == ctx) {
			*pp = ctx->link;
			break;
		}
	}
	for (i = 0; i < ctx->n; i++)
		answer_free(ctx->answers[i]);
	free(ctx->answers);
	free(ctx);
}

void pg_read_release(struct pg_reads *ctx)
{
	if (--ctx->outstanding)
		return;
	if (ctx->forgotten)
		reads_free(ctx->ps, ctx);
	else
		ctx->done(0, ctx->userdata);
}

struct pg_reads *pg_read_hold(struct pg_store *ps)
{
	struct pg_reads *ctx = ps->reading;

	if (!pg_read_deferred(ps))
		return NULL;
	ctx->outstanding++;
	ctx->sent = true;	/* the run is done again: its reply dropped, its writes refused */
	return ctx;
}

static void answered(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_answer *an = userdata;
	struct pg_reads *ctx = an->ctx;

	an->done = true;
	an->err = err;
	if (!err && !(an->res = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES)))
		an->err = -ENOMEM;
	if (msg)
		an->msg = strdup(msg);
	pg_read_release(ctx);
}

/* Drop the answers from @i on: the run asks something else there. */
static void answers_cut(struct pg_reads *ctx, size_t i)
{
	while (ctx->n > i)
		answer_free(ctx->answers[--ctx->n]);
}

static int answer_send(struct pg_store *ps, struct pg_reads *ctx, const char *sql,
		       const struct pg_args *a, char *key, size_t key_len)
{
	struct pg_answer *an;
	void *n;

	if (ctx->n == ctx->alloc) {
		n = realloc(ctx->answers, (ctx->alloc * 2 + 4) * sizeof(*ctx->answers));
		if (!n)
			return -ENOMEM;
		ctx->answers = n;
		ctx->alloc = ctx->alloc * 2 + 4;
	}
	an = calloc(1, sizeof(*an));
	if (!an)
		return -ENOMEM;
	an->ctx = ctx;
	an->sql = sql;
	an->key = key;
	an->key_len = key_len;
	if (pg_conn_send(ps->conn, sql, a ? a->n : 0, a ? a->v : NULL, PG_CMD_SYNC, answered,
			 an) < 0) {
		an->key = NULL;
		answer_free(an);
		return -ENOMEM;
	}
	ctx->answers[ctx->n++] = an;
	ctx->outstanding++;
	ctx->sent = true;
	return -EINPROGRESS;
}

/* The answer an earlier read of the current run got for the same statement and parameters. */
static struct pg_answer *answer_of_run(const struct pg_reads *ctx, const char *sql,
				       const char *key, size_t key_len)
{
	struct pg_answer *an;
	size_t i;

	for (i = 0; i < ctx->next && i < ctx->n; i++) {
		an = ctx->answers[i];
		if (an->done && an->sql == sql && an->key_len == key_len &&
		    !memcmp(an->key, key, key_len))
			return an;
	}
	return NULL;
}

int pg_read_in_context(struct pg_store *ps, const char *op, const char *sql,
		       const struct pg_args *a, pg_read_fn read, void *userdata)
{
	struct pg_reads *ctx = ps->reading;
	struct pg_answer *an;
	size_t key_len = 0;
	char *key = params_key(a, &key_len);
	int r;

	if (!key)
		return -ENOMEM;
	/* read again in the same run (a handler, then the function it calls): one answer */
	an = answer_of_run(ctx, sql, key, key_len);
	if (an) {
		free(key);
		goto answered;
	}
	an = ctx->next < ctx->n ? ctx->answers[ctx->next] : NULL;
	if (an && (an->sql != sql || an->key_len != key_len || memcmp(an->key, key, key_len))) {
		if (!an->done)
			goto differs_in_flight;
		answers_cut(ctx, ctx->next);
		an = NULL;
	}
	ctx->next++;
	if (!an) {
		r = answer_send(ps, ctx, sql, a, key, key_len);
		if (r != -EINPROGRESS)
			free(key);
		return r;
	}
	free(key);
	if (!an->done)
		return -EINPROGRESS;
answered:
	r = an->err;
	if (!r && read)
		r = read(an->res, userdata);
	if (an->err)
		pg_log_call_error(ps, op, an->err, an->msg);
	return r;
differs_in_flight:
	/* a run that reads differently before its answers came: it runs again anyway */
	free(key);
	ctx->sent = true;
	return -EINPROGRESS;
}

int pg_read_begin(struct store *st, store_done_fn done, void *userdata)
{
	struct pg_store *ps = pg_of(st);
	struct pg_reads *ctx;

	if (!ps->loop)
		return 0;	/* tools: reads wait */
	for (ctx = ps->reads; ctx; ctx = ctx->link)
		if (ctx->userdata == userdata && !ctx->forgotten)
			break;
	if (!ctx) {
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx)
			return -ENOMEM;
		ctx->ps = ps;
		ctx->userdata = userdata;
		ctx->link = ps->reads;
		ps->reads = ctx;
	}
	ctx->done = done;
	ctx->next = 0;
	ctx->sent = false;
	ctx->wrote = false;
	ctx->outer = ps->reading != ctx ? ps->reading : NULL;
	ps->reading = ctx;
	return 0;
}

int pg_read_end(struct store *st)
{
	struct pg_store *ps = pg_of(st);
	struct pg_reads *ctx = ps->reading;

	if (!ctx)
		return 0;
	ps->reading = ctx->outer;
	ctx->outer = NULL;
	if (ctx->sent || ctx->outstanding)
		return 1;
	reads_free(ps, ctx);
	return 0;
}

PGresult *pg_read_answered(const struct pg_store *ps, const char *sql, const struct pg_args *a)
{
	const struct pg_answer *an;
	size_t key_len = 0;
	char *key;

	if (!ps->reading || !(key = params_key(a, &key_len)))
		return NULL;
	an = answer_of_run(ps->reading, sql, key, key_len);
	free(key);
	return an && !an->err ? an->res : NULL;
}

bool pg_read_deferred(const struct pg_store *ps)
{
	return ps->reading && !ps->reading->wrote;
}

int pg_read_writing(struct pg_store *ps, const char *op)
{
	struct pg_reads *ctx = ps->reading;

	if (!ctx)
		return 0;
	if (ctx->sent) {
		/* a caller acting before its reads are in: a bug, but never a write made twice */
		log_error("store: cannot %s: a read before it waits for its answer", op);
		return -EINPROGRESS;
	}
	ctx->wrote = true;
	return 0;
}

bool pg_read_pending(const struct store *st)
{
	const struct pg_store *ps = (const struct pg_store *)st;

	return ps->reading && ps->reading->sent;
}

void pg_reads_forget(struct pg_store *ps, void *userdata)
{
	struct pg_reads *ctx, *next;

	for (ctx = ps->reads; ctx; ctx = next) {
		next = ctx->link;
		if (ctx->userdata != userdata)
			continue;
		if (ps->reading == ctx)
			ps->reading = ctx->outer;
		if (ctx->outstanding)
			ctx->forgotten = true;
		else
			reads_free(ps, ctx);
	}
}

void pg_reads_free(struct pg_store *ps)
{
	while (ps->reads)
		reads_free(ps, ps->reads);
}
