// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_tokens.c -- POST /tokens: an admin makes a token for a user, kept in
 * the store (its SHA-256 only), so that on a lab of several hosts sharing
 * PostgreSQL it authenticates on every host (api_auth.c looks it up)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "api/api_internal.h"
#include "session/users.h"
#include "store/store.h"

#define TOKEN_BYTES 24		/* random bytes of a token, as hex */

/* A user name as labd.conf's: 1 to USERS_MAX_NAME letters, digits, '.', '_', '-', '@'. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	return n && n <= USERS_MAX_NAME &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@") == n;
}

static uint64_t realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* {"user": NAME, "role": ROLE}: answers 400 itself. */
static int parse(struct api_request *r, const char **user, enum user_role *role, json_t **doc,
		 enum MHD_Result *ret)
{
	json_error_t jerr;
	const char *u, *ro;

	*doc = json_loadb(r->body.buf, r->body.len, 0, &jerr);
	if (json_unpack_ex(*doc, &jerr, JSON_STRICT, "{s:s, s:s}", "user", &u, "role", &ro) < 0) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "expected {\"user\": NAME, \"role\": ROLE}: %s", jerr.text);
		return -EINVAL;
	}
	if (!valid_name(u)) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'user' must be 1 to %d letters, digits, '.', '_', '-' or '@'",
				       USERS_MAX_NAME);
		return -EINVAL;
	}
	if (user_role_from_name(ro, role) < 0 || *role == USER_ROLE_NONE) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'role' must be reader, ci, developer or admin");
		return -EINVAL;
	}
	*user = u;
	return 0;
}

enum MHD_Result api_tokens_create(struct api_request *r)
{
	unsigned char raw[TOKEN_BYTES], hash[SHA256_DIGEST_LENGTH];
	char token[2 * TOKEN_BYTES + 1], text[80];
	struct token_record rec = { 0 };
	enum MHD_Result ret;
	enum user_role role;
	const char *user;
	json_t *doc;
	size_t i;
	int err;

	if (parse(r, &user, &role, &doc, &ret) < 0) {
		json_decref(doc);
		return ret;
	}
	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw)) {
		json_decref(doc);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "no random bytes");
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, sizeof(token) - 2 * i, "%02x", raw[i]);
	OPENSSL_cleanse(raw, sizeof(raw));
	api_token_hash(token, hash, text, sizeof(text));
	rec = (struct token_record){ text, (char *)user, (char *)user_role_name(role),
				     realtime_usec(), r->who.name };
	err = store_token_add(api_deps_of(r)->store, &rec);
	if (err < 0) {
		json_decref(doc);
		OPENSSL_cleanse(token, sizeof(token));
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot keep the token: %s", strerror(-err));
	}
	ret = api_reply_json(r, MHD_HTTP_CREATED,
			     json_pack("{s:s, s:s, s:s, s:s}", "token", token, "user", user, "role",
				       user_role_name(role), "hash", text));
	OPENSSL_cleanse(token, sizeof(token));
	json_decref(doc);
	return ret;
}
