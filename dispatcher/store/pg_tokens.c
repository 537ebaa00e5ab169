// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_tokens.c -- API tokens on PostgreSQL, known to every host of the lab
 *
 * A request is authenticated before anything else, so a token is never
 * looked for in the database from the loop: each host keeps every token
 * (a few per user: a small table), loaded at open and loaded again, without
 * waiting, whenever another host NOTIFYs PG_CHANNEL_TOKENS after adding
 * one.  A token this host adds is kept at once.  Without a loop (tools)
 * the lookups are queries.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define TOKEN_COLUMNS "hash, user_name, role, created, created_by"

enum { TCOL_HASH, TCOL_USER, TCOL_ROLE, TCOL_CREATED, TCOL_CREATED_BY };

static const struct pg_text token_texts[] = {
	{ TCOL_HASH, offsetof(struct token_record, hash) },
	{ TCOL_USER, offsetof(struct token_record, user) },
	{ TCOL_ROLE, offsetof(struct token_record, role) },
	{ TCOL_CREATED_BY, offsetof(struct token_record, created_by) },
};

static const char sql_add[] =
	"INSERT INTO tokens (" TOKEN_COLUMNS ") VALUES ($1, $2, $3, $4, $5)";
static const char sql_find[] = "SELECT " TOKEN_COLUMNS " FROM tokens WHERE hash = $1";
static const char sql_list[] = "SELECT " TOKEN_COLUMNS " FROM tokens ORDER BY created, hash";
static const char sql_notify[] = "SELECT pg_notify('" PG_CHANNEL_TOKENS "', $1)";

static int token_read(PGresult *res, int row, void *p)
{
	struct token_record *rec = p;

	rec->created = (uint64_t)pg_int(res, row, TCOL_CREATED);
	return pg_read_texts(res, row, rec, token_texts, ARRAY_SIZE(token_texts));
}

static const struct pg_reader token_reader = { &store_token_rows, token_read };

/* ---- the tokens kept ---- */

static int keep_copy(struct pg_store *ps, const struct token_record *rec)
{
	struct token_record *k = store_rows_add(&ps->tokens);

	if (!k)
		return -ENOMEM;
	k->created = rec->created;
	if (!(k->hash = strdup(rec->hash)) || !(k->user = strdup(rec->user)) ||
	    !(k->role = strdup(rec->role)) ||
	    (rec->created_by && !(k->created_by = strdup(rec->created_by))))
		return -ENOMEM;	/* released with the rows */
	return 0;
}

/* The answer of a load: it replaces what was kept. */
static void loaded(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;
	struct store_rows rows = { .type = &store_token_rows };
	struct pg_rows_read rr = { &token_reader, &rows };

	ps->tokens_loading = false;
	if (err || pg_read_rows(res, &rr) < 0) {
		if (err != -ENOTCONN)
			log_error("cannot read the lab's tokens: %s", msg ? msg : "out of memory");
		return;
	}
	store_rows_release(&ps->tokens);
	ps->tokens = rows;
}

void pg_tokens_reload(struct pg_store *ps)
{
	if (ps->tokens_loading || !ps->loop)
		return;
	if (pg_conn_send(ps->conn, sql_list, 0, NULL, PG_CMD_SYNC, loaded, ps) == 0)
		ps->tokens_loading = true;
}

int pg_tokens_load(struct pg_store *ps)
{
	ps->tokens.type = &store_token_rows;
	if (!ps->loop)
		return 0;
	return pg_list(ps, "read the lab's tokens", sql_list, NULL, &token_reader, &ps->tokens);
}

void pg_tokens_free(struct pg_store *ps)
{
	store_rows_release(&ps->tokens);
}

/* ---- the ops ---- */

int pg_token_add(struct store *st, const struct token_record *rec)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };
	struct token_record found = { 0 };
	int r;

	if (ps->loop && pg_token_find(st, rec->hash, &found) == 0) {
		token_record_release(&found);
		return -EEXIST;
	}
	pg_arg_text(&a, rec->hash);
	pg_arg_text(&a, rec->user);
	pg_arg_text(&a, rec->role);
	pg_arg_int(&a, (int64_t)rec->created);
	pg_arg_text(&a, rec->created_by);
	r = pg_write_notify(ps, "add a token", sql_add, &a, NULL, NULL, sql_notify, rec->user);
	if (!r && ps->loop)
		r = keep_copy(ps, rec);
	return r;
}

int pg_token_find(struct store *st, const char *hash, struct token_record *ret)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };
	size_t i;

	if (!ps->loop) {
		pg_arg_text(&a, hash);
		return pg_get(ps, "find a token", sql_find, &a, &token_reader, ret);
	}
	for (i = 0; i < ps->tokens.n; i++) {
		const struct token_record *k = store_rows_at(&ps->tokens, i);
		struct token_record c = { 0 };

		if (strcmp(k->hash, hash))
			continue;
		c.created = k->created;
		if (!(c.hash = strdup(k->hash)) || !(c.user = strdup(k->user)) ||
		    !(c.role = strdup(k->role)) ||
		    (k->created_by && !(c.created_by = strdup(k->created_by)))) {
			token_record_release(&c);
			return -ENOMEM;
		}
		*ret = c;
		return 0;
	}
	return -ENOENT;
}

int pg_token_list(struct store *st, struct store_rows *rows)
{
	return pg_list(pg_of(st), "list tokens", sql_list, NULL, &token_reader, rows);
}
