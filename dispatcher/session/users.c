// SPDX-License-Identifier: GPL-2.0-or-later
/* users.c -- labd.conf's `users`: names, roles, token hashes and uids */
#include "session/users.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "config/config.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/strv.h"

#define USERS_MAX_UID 4294967294LL	/* (uid_t)-1 means "no uid" */

struct users {
	struct user *v;
	size_t n;
};

static const char *const role_names[] = {
	[USER_ROLE_NONE] = "none",
	[USER_ROLE_READER] = "reader",
	[USER_ROLE_CI] = "ci",
	[USER_ROLE_DEVELOPER] = "developer",
	[USER_ROLE_ADMIN] = "admin",
};

const char *user_role_name(enum user_role role)
{
	return (unsigned)role <= USER_ROLE_ADMIN ? role_names[role] : "none";
}

int user_role_from_name(const char *name, enum user_role *ret)
{
	unsigned i;

	for (i = USER_ROLE_READER; i <= USER_ROLE_ADMIN; i++) {
		if (!strcmp(name, role_names[i])) {
			*ret = (enum user_role)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int users_parse_hash(const char *text, unsigned char ret[USERS_HASH_LEN])
{
	unsigned char out[USERS_HASH_LEN];
	const char *hex = text + strlen(USERS_HASH_PREFIX);
	size_t i;

	if (strncmp(text, USERS_HASH_PREFIX, strlen(USERS_HASH_PREFIX)) ||
	    strlen(hex) != 2 * USERS_HASH_LEN)
		return -EINVAL;
	for (i = 0; i < USERS_HASH_LEN; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	memcpy(ret, out, sizeof(out));
	return 0;
}

static bool name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (!n || n > USERS_MAX_NAME)
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    !strchr("._-@", c))
			return false;
	}
	return true;
}

static void user_release(struct user *u)
{
	free(u->name);
	free(u->hashes);
	free(u->uids);
}

struct users *users_free(struct users *u)
{
	size_t i;

	if (!u)
		return NULL;
	for (i = 0; i < u->n; i++)
		user_release(&u->v[i]);
	free(u->v);
	free(u);
	return NULL;
}

size_t users_count(const struct users *u)
{
	return u ? u->n : 0;
}

/* ---- loading ---- */

static int parse_tokens(const config_setting_t *g, struct user *u, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(g, "tokens");
	char **tokens = NULL;
	size_t i = 0;
	int r;

	r = cfg_get_strv(g, "tokens", false, &tokens, diag);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	u->hashes = calloc(strv_length(tokens) + 1, sizeof(*u->hashes));
	if (!u->hashes) {
		strv_free(tokens);
		return -ENOMEM;
	}
	STRV_FOREACH(t, tokens) {
		if (users_parse_hash(*t, u->hashes[i]) == 0) {
			i++;
			continue;
		}
		r = diag_add(diag, cfg_file(s), cfg_line(s),
			     "tokens of user '%s' must be hashed: 'sha256:' and 64 hex digits (labctl token-hash TOKEN)",
			     u->name);
	}
	u->n_hashes = i;
	strv_free(tokens);
	return r;
}

static int parse_uid(const config_setting_t *s, const char *user, uid_t *ret, struct diag *diag)
{
	long long v;

	if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"uids of user '%s' must be integers, not %s", user, cfg_type_name(s));
	v = config_setting_get_int64(s);
	if (v < 0 || v > USERS_MAX_UID)
		return diag_add(diag, cfg_file(s), cfg_line(s), "invalid uid %lld of user '%s'", v,
				user);
	*ret = (uid_t)v;
	return 0;
}

static int parse_uids(const config_setting_t *g, struct user *u, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(g, "uids");
	bool one;
	int i, n, r = 0;

	if (!s)
		return 0;
	one = config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64;
	if (!one && !config_setting_is_aggregate(s))
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"'uids' must be a list of integers, not %s", cfg_type_name(s));
	n = one ? 1 : config_setting_length(s);
	u->uids = calloc((size_t)n + 1, sizeof(*u->uids));
	if (!u->uids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const config_setting_t *e = one ? s : config_setting_get_elem(s, (unsigned)i);

		if (parse_uid(e, u->name, &u->uids[u->n_uids], diag) < 0)
			r = -EINVAL;
		else
			u->n_uids++;
	}
	return r;
}

static int parse_user(const config_setting_t *g, struct user *u, struct diag *diag)
{
	static const char *const keys[] = { "name", "role", "tokens", "uids", NULL };
	const char *name = NULL, *role = NULL;
	int r;

	if (!config_setting_is_group(g))
		return diag_add(diag, cfg_file(g), cfg_line(g), "a user must be a group, not %s",
				cfg_type_name(g));
	r = cfg_check_keys(g, keys, diag);
	if (cfg_get_string(g, "name", true, &name, diag) < 0)
		return -EINVAL;
	if (!name_ok(name))
		return diag_add(diag, cfg_file(g), cfg_line(g),
				"invalid user name '%s': up to %d letters, digits, '.', '_', '-' and '@'",
				name, USERS_MAX_NAME);
	u->name = strdup(name);
	if (!u->name)
		return -ENOMEM;
	if (cfg_get_string(g, "role", true, &role, diag) < 0)
		r = -EINVAL;
	else if (user_role_from_name(role, &u->role) < 0)
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "unknown role '%s' of user '%s' (known: reader, ci, developer, admin)",
			     role, name);
	if (parse_tokens(g, u, diag) < 0)
		r = -EINVAL;
	if (parse_uids(g, u, diag) < 0)
		r = -EINVAL;
	return r;
}

/* Names, token hashes and uids each belong to one user. */
static int check_unique(const config_setting_t *list, const struct users *u, size_t i,
			struct diag *diag)
{
	const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
	const struct user *a = &u->v[i], *b;
	size_t j, k, l;
	int r = 0;

	for (j = 0; j < i; j++) {
		b = &u->v[j];
		if (a->name && b->name && !strcmp(a->name, b->name))
			r = diag_add(diag, cfg_file(g), cfg_line(g), "duplicate user '%s'", a->name);
		for (k = 0; k < a->n_hashes; k++)
			for (l = 0; l < b->n_hashes; l++)
				if (!memcmp(a->hashes[k], b->hashes[l], USERS_HASH_LEN))
					r = diag_add(diag, cfg_file(g), cfg_line(g),
						     "users '%s' and '%s' share a token", b->name,
						     a->name);
		for (k = 0; k < a->n_uids; k++)
			for (l = 0; l < b->n_uids; l++)
				if (a->uids[k] == b->uids[l])
					r = diag_add(diag, cfg_file(g), cfg_line(g),
						     "users '%s' and '%s' share uid %u", b->name,
						     a->name, (unsigned)a->uids[k]);
	}
	return r;
}

int users_load(const struct lab_config *c, struct users **ret, struct diag *diag)
{
	const config_setting_t *list = config_setting_get_member(c->root, "users");
	struct users *u = calloc(1, sizeof(*u));
	size_t i, n;
	int r = 0;

	if (!u)
		return -ENOMEM;
	if (list && !config_setting_is_list(list)) {
		r = diag_add(diag, cfg_file(list), cfg_line(list),
			     "'users' must be a list of groups, not %s", cfg_type_name(list));
		goto err_free;
	}
	n = list ? (size_t)config_setting_length(list) : 0;
	u->v = calloc(n + 1, sizeof(*u->v));
	if (!u->v) {
		r = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < n; i++) {
		int e = parse_user(config_setting_get_elem(list, (unsigned)i), &u->v[i], diag);

		u->n++;
		if (e == -ENOMEM) {
			r = e;
			goto err_free;
		}
		/* what did parse is checked too: every problem in one round */
		if (check_unique(list, u, i, diag) < 0 || e < 0)
			r = -EINVAL;
	}
	if (r < 0)
		goto err_free;
	*ret = u;
	return 0;

err_free:
	users_free(u);
	return r;
}

int users_check(const struct lab_config *c, struct diag *diag)
{
	struct users *u = NULL;
	int r = users_load(c, &u, diag);

	users_free(u);
	return r;
}

/* ---- lookups ---- */

const struct user *users_find_token(const struct users *u, const char *token)
{
	unsigned char hash[SHA256_DIGEST_LENGTH];
	const struct user *found = NULL;
	size_t i, j;

	if (!u || !token)
		return NULL;
	SHA256((const unsigned char *)token, strlen(token), hash);
	for (i = 0; i < u->n; i++)
		for (j = 0; j < u->v[i].n_hashes; j++)
			if (!CRYPTO_memcmp(u->v[i].hashes[j], hash, sizeof(hash)))
				found = &u->v[i];
	return found;
}

const struct user *users_find_uid(const struct users *u, uid_t uid)
{
	size_t i, j;

	for (i = 0; u && i < u->n; i++)
		for (j = 0; j < u->v[i].n_uids; j++)
			if (u->v[i].uids[j] == uid)
				return &u->v[i];
	return NULL;
}

const struct user *users_find_name(const struct users *u, const char *name)
{
	size_t i;

	for (i = 0; u && name && i < u->n; i++)
		if (!strcmp(u->v[i].name, name))
			return &u->v[i];
	return NULL;
}
