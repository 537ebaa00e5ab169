// SPDX-License-Identifier: GPL-2.0-or-later
/* api_auth.c -- who sends an API request (user, token, Unix peer) and what they may do */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "config/config.h"
#include "core/strv.h"

#define BEARER "Bearer "

/*
 * Who is who, and what they get:
 *
 *   Unix socket   the peer's uid (SO_PEERCRED): the user listing it in `uids`;
 *                 else "uid:N", an admin when uid 0 or when no users are
 *                 configured (labd as it always was), a reader otherwise
 *   bearer token  the user with that token, else one of http.tokens: an
 *                 admin "token:<8 hex>"; a token matching nothing is 401
 *   no token      401 where the listener needs a token; else "anonymous", an
 *                 admin when no users are configured, a reader otherwise
 */

/*
 * Whether @token is one of http.tokens ("sha256:<hex>" of the token, or the
 * token itself).  Hashes are compared in constant time, every entry is
 * looked at, so timing tells nothing about which matched or how closely.
 */
static bool token_valid(char *const *tokens, const char *token,
			unsigned char hash[SHA256_DIGEST_LENGTH])
{
	unsigned char want[SHA256_DIGEST_LENGTH];
	bool found = false;

	SHA256((const unsigned char *)token, strlen(token), hash);
	STRV_FOREACH(t, tokens) {
		if (!strncmp(*t, USERS_HASH_PREFIX, strlen(USERS_HASH_PREFIX))) {
			if (users_parse_hash(*t, want) < 0)
				continue;
		} else {
			SHA256((const unsigned char *)*t, strlen(*t), want);
		}
		if (!CRYPTO_memcmp(want, hash, sizeof(want)))
			found = true;
	}
	return found;
}

static void be_user(struct api_request *r, const struct user *u)
{
	snprintf(r->who.name, sizeof(r->who.name), "%s", u->name);
	r->who.role = u->role;
	r->who.is_user = true;
}

/* Unix socket: the peer's uid; the socket's mode limits who connects. */
static void identify_peer(struct api_request *r, const struct users *users)
{
	const union MHD_ConnectionInfo *ci;
	const struct user *u;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		snprintf(r->who.name, sizeof(r->who.name), "unknown");
		r->who.role = USER_ROLE_NONE;
		return;
	}
	u = users_find_uid(users, cred.uid);
	if (u) {
		be_user(r, u);
		return;
	}
	snprintf(r->who.name, sizeof(r->who.name), "uid:%u", (unsigned)cred.uid);
	r->who.role = !cred.uid || !users_count(users) ? USER_ROLE_ADMIN : USER_ROLE_READER;
}

void api_identify(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	const struct users *users = lab_users(d->lab);
	unsigned char hash[SHA256_DIGEST_LENGTH];
	const struct user *u;
	const char *auth, *token;

	memset(&r->who, 0, sizeof(r->who));
	if (api_listener_is_unix(r->listener)) {
		identify_peer(r, users);
		return;
	}
	auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_AUTHORIZATION);
	snprintf(r->who.name, sizeof(r->who.name), "anonymous");
	if (!auth) {
		r->who.role = users_count(users) ? USER_ROLE_READER : USER_ROLE_ADMIN;
		if (api_listener_needs_token(r->listener))
			r->who.role = USER_ROLE_NONE;
		return;
	}
	token = auth + strlen(BEARER);
	if (strncasecmp(auth, BEARER, strlen(BEARER)) || !*token) {
		r->who.bad_token = true;
		return;
	}
	u = users_find_token(users, token);
	if (u) {
		be_user(r, u);
		return;
	}
	if (!token_valid(lab_current_config(d->lab)->http.tokens, token, hash)) {
		r->who.bad_token = true;
		return;
	}
	snprintf(r->who.name, sizeof(r->who.name), "token:%02x%02x%02x%02x", hash[0], hash[1],
		 hash[2], hash[3]);
	r->who.role = USER_ROLE_ADMIN;
}

static enum MHD_Result reply_401(struct api_request *r, const char *msg)
{
	struct MHD_Response *resp = api_json_response(json_pack("{s:s}", "error", msg));

	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	return api_reply(r, MHD_HTTP_UNAUTHORIZED, resp);
}

/* "user 'alice' (developer) may not <what><why>" */
static int reply_403(struct api_request *r, const char *what, const char *why)
{
	api_reply_error(r, MHD_HTTP_FORBIDDEN, "%s%s%s (%s) may not %s%s",
			r->who.is_user ? "user '" : "'", r->who.name, "'",
			user_role_name(r->who.role), what, why ? why : "");
	return -EACCES;
}

int api_authorize(struct api_request *r, enum user_role need, const char *what)
{
	if (r->who.bad_token) {
		reply_401(r, "invalid token");
		return -EACCES;
	}
	if (r->who.role >= need)
		return 0;
	if (r->who.role == USER_ROLE_NONE) {
		reply_401(r, "this API needs a token: send 'Authorization: Bearer <token>'");
		return -EACCES;
	}
	return reply_403(r, what, NULL);
}

bool api_is_holder(const struct api_request *r, const struct board *b)
{
	const char *holder = board_holder(b);

	return holder && !strcmp(holder, r->who.name);
}

int api_authorize_holder(struct api_request *r, struct board *b, const char *what)
{
	char why[128];

	if (r->who.role == USER_ROLE_ADMIN || api_is_holder(r, b))
		return 0;
	if (board_holder(b))
		snprintf(why, sizeof(why), ": '%s' holds it", board_holder(b));
	else
		snprintf(why, sizeof(why), ": reserve it first (labctl reserve %s)", board_name(b));
	return reply_403(r, what, why);
}

int api_authorize_owner(struct api_request *r, const char *owner, const char *what)
{
	char why[128];

	if (r->who.role == USER_ROLE_ADMIN || (owner && !strcmp(owner, r->who.name)))
		return 0;
	snprintf(why, sizeof(why), ": it belongs to '%s'", owner ? owner : "nobody");
	return reply_403(r, what, why);
}
