// SPDX-License-Identifier: GPL-2.0-or-later
/* sqlite_tokens.c -- the tokens table: API tokens made through the API (their hashes) */
#include "store/sqlite_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_COLUMNS "hash, user, role, created, created_by"

enum { COL_HASH, COL_USER, COL_ROLE, COL_CREATED, COL_CREATED_BY };

#define TEXT(c, field) { c, offsetof(struct token_record, field) }
static const struct sqlite_text token_texts[] = {
	TEXT(COL_HASH, hash),
	TEXT(COL_USER, user),
	TEXT(COL_ROLE, role),
	TEXT(COL_CREATED_BY, created_by),
};
#undef TEXT

const struct sqlite_sql sqlite_tokens_sql[] = {
	{ STMT_TOKEN_ADD, "INSERT INTO tokens (" TOKEN_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5)" },
	{ STMT_TOKEN_FIND, "SELECT " TOKEN_COLUMNS " FROM tokens WHERE hash = ?1" },
	{ STMT_TOKEN_LIST, "SELECT " TOKEN_COLUMNS " FROM tokens ORDER BY created, hash" },
	{ 0, NULL },
};

static int token_read(struct sqlite_store *sq, sqlite3_stmt *s, void *p)
{
	struct token_record *rec = p;

	rec->created = (uint64_t)sqlite3_column_int64(s, COL_CREATED);
	return sqlite_read_texts(s, rec, token_texts, ARRAY_SIZE(token_texts));
}

static const struct sqlite_reader token_reader = { &store_token_rows, token_read };

int sqlite_token_add(struct store *st, const struct token_record *rec)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_TOKEN_ADD];
	int r;

	sqlite_write(sq);
	if (sqlite3_bind_text(s, 1, rec->hash, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 2, rec->user, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(s, 3, rec->role, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(s, 4, (int64_t)rec->created) ||
	    sqlite3_bind_text(s, 5, rec->created_by, -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "add a token");
	if (sqlite3_step(s) != SQLITE_DONE &&
	    sqlite3_extended_errcode(sq->db) == SQLITE_CONSTRAINT_PRIMARYKEY) {
		sqlite_reset(s);
		return -EEXIST;
	}
	sqlite_reset(s);
	r = sqlite3_errcode(sq->db);
	return r == SQLITE_OK || r == SQLITE_DONE ? 0 : sqlite_error(sq, "add a token");
}

int sqlite_token_find(struct store *st, const char *hash, struct token_record *ret)
{
	struct sqlite_store *sq = sqlite_of(st);
	sqlite3_stmt *s = sq->stmt[STMT_TOKEN_FIND];

	if (sqlite3_bind_text(s, 1, hash, -1, SQLITE_STATIC))
		return sqlite_fail(sq, s, "find a token");
	return sqlite_read_one(sq, s, "find a token", &token_reader, ret);
}

int sqlite_token_list(struct store *st, struct store_rows *rows)
{
	struct sqlite_store *sq = sqlite_of(st);

	return sqlite_read_rows(sq, sq->stmt[STMT_TOKEN_LIST], "list tokens", &token_reader,
				rows);
}
