/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * users.h -- the people and robots of labd.conf's `users` list, and their roles
 *
 *   users = (
 *	{ name = "alice"; role = "developer"; tokens = [ "sha256:<64 hex>" ]; uids = [ 1000 ]; },
 *	{ name = "gitlab"; role = "ci"; tokens = [ "sha256:<64 hex>" ]; }
 *   );
 *
 * A user is found by a bearer token (only its SHA-256 is in the file:
 * `labctl token-hash TOKEN` or `printf %s TOKEN | sha256sum`) or, on the
 * Unix socket, by the peer's uid.  Roles, weakest first, each allowing what
 * the ones before it allow:
 *
 *   reader     read jobs, logs, results, boards, reservations; watch consoles
 *   ci         submit jobs, cancel its own
 *   developer  reserve boards; on the boards it holds: type on the console,
 *              power, boot, telnet
 *   admin      everything, on every board and job
 *
 * The API decides who is who and what each role may do (api_auth.c); this
 * module only reads the list.  Names are unique, up to USERS_MAX_NAME bytes of
 * letters, digits, '.', '_', '-' and '@'; a token hash or a uid belongs to
 * one user only.  Everything is checked at load, with "FILE:LINE: cause".
 */
#ifndef LABD_USERS_H
#define LABD_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct diag;
struct lab_config;
struct users;

#define USERS_MAX_NAME 32
#define USERS_HASH_LEN 32		/* SHA-256 */
#define USERS_HASH_PREFIX "sha256:"

enum user_role {
	USER_ROLE_NONE,		/* not authenticated: only GET /health */
	USER_ROLE_READER,
	USER_ROLE_CI,
	USER_ROLE_DEVELOPER,
	USER_ROLE_ADMIN,
};

struct user {
	char *name;
	enum user_role role;
	unsigned char (*hashes)[USERS_HASH_LEN];	/* of the tokens */
	size_t n_hashes;
	uid_t *uids;
	size_t n_uids;
};

/**
 * users_load() - read the `users` list of @c (absent: no users)
 *
 * Returns 0 with the list (free with users_free()), -EINVAL with every
 * problem in @diag, or -ENOMEM.
 */
int users_load(const struct lab_config *c, struct users **ret, struct diag *diag);

/** users_check() - users_load() for `labd check-config`: the problems, nothing kept. */
int users_check(const struct lab_config *c, struct diag *diag);

/** users_free() - accepts NULL; returns NULL. */
struct users *users_free(struct users *u);

/** users_count() - how many users are configured (0 for NULL). */
size_t users_count(const struct users *u);

/**
 * users_find_token() - the user of bearer token @token, or NULL
 *
 * Every hash of every user is compared in constant time, so timing tells
 * nothing about which matched or how closely.
 */
const struct user *users_find_token(const struct users *u, const char *token);

/** users_find_uid() - the user listing @uid in its uids, or NULL. */
const struct user *users_find_uid(const struct users *u, uid_t uid);

/** users_find_name() - the user called @name, or NULL. */
const struct user *users_find_name(const struct users *u, const char *name);

/**
 * users_parse_hash() - "sha256:<64 hex digits>" into its 32 bytes
 *
 * Returns 0, or -EINVAL when @text is not of that form.
 */
int users_parse_hash(const char *text, unsigned char ret[USERS_HASH_LEN]);

/** user_role_name() - "reader", "ci", "developer", "admin" ("none" for USER_ROLE_NONE). */
const char *user_role_name(enum user_role role);

/** user_role_from_name() - 0, or -EINVAL for an unknown name. */
int user_role_from_name(const char *name, enum user_role *ret);

#endif
