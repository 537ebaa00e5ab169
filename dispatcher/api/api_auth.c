// SPDX-License-Identifier: GPL-2.0-or-later
/* api_auth.c -- who sends an API request (user, token, Unix peer) and what they may do */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "config/config.h"
#include "core/strv.h"
#include "store/store.h"

#define BEARER "Bearer "
#define TOKEN "Token "		/* LAVA's REST clients (Django REST Framework's scheme) */
#define BASIC "Basic "		/* XML-RPC clients: base64 of "user:token" */
#define BASIC_MAX 512		/* bytes of decoded user:token */
#define WS_TOKEN "labd-token."	/* a browser's WebSocket: the token as a subprotocol */
#define WS_TOKEN_MAX 256

/*
 * Who is who, and what they get:
 *
 *   Unix socket   the peer's uid (SO_PEERCRED): the user listing it in `uids`;
 *                 else "uid:N", an admin when uid 0 or when no users are
 *                 configured (labd as it always was), a reader otherwise
 *   bearer token  the user with that token, else one of http.tokens: an
 *                 admin "token:<8 hex>"; a token matching nothing is 401
 *                 ("Authorization: Token <token>", LAVA's REST scheme, is
 *                 the same; "Basic base64(user:token)", XML-RPC's, also
 *                 needs the user to be the token's, unless it is one of
 *                 http.tokens)
 *   forwarded     the identity another host of the lab vouches for with
 *                 the lab's secret (api_forward_identity()); refused (401)
 *                 when not signed with it
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

/*
 * A token made through the API (POST /tokens), kept in the store: every host
 * of a lab on PostgreSQL knows it (store_token_find() answers at once).
 */
static bool stored_token(struct api_request *r, const char *token, const char *user)
{
	unsigned char hash[SHA256_DIGEST_LENGTH];
	char text[sizeof(USERS_HASH_PREFIX) + 2 * SHA256_DIGEST_LENGTH];
	struct token_record rec = { 0 };
	enum user_role role;
	bool ok;

	api_token_hash(token, hash, text, sizeof(text));
	if (store_token_find(api_deps_of(r)->store, text, &rec) < 0)
		return false;
	ok = user_role_from_name(rec.role, &role) == 0 && (!user || !strcmp(user, rec.user));
	if (ok) {
		snprintf(r->who.name, sizeof(r->who.name), "%s", rec.user);
		r->who.role = role;
		r->who.is_user = true;
	}
	token_record_release(&rec);
	return ok;
}

void api_token_hash(const char *token, unsigned char *hash, char *text,
		    size_t len)
{
	size_t i, off;

	SHA256((const unsigned char *)token, strlen(token), hash);
	off = (size_t)snprintf(text, len, "%s", USERS_HASH_PREFIX);
	for (i = 0; i < SHA256_DIGEST_LENGTH && off + 2 < len; i++, off += 2)
		snprintf(text + off, len - off, "%02x", hash[i]);
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

static bool starts_with(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

/*
 * The token of an Authorization header, and for Basic the user it names
 * (*ret_user, else NULL); NULL for a header that is none of the schemes.
 * Basic credentials are decoded into @buf.
 */
static const char *header_token(const char *auth, unsigned char *buf, const char **ret_user)
{
	const char *b64 = auth + strlen(BASIC);
	size_t len = strlen(b64);
	char *colon;
	int n;

	*ret_user = NULL;
	if (starts_with(auth, BEARER))
		return auth + strlen(BEARER);
	if (starts_with(auth, TOKEN))
		return auth + strlen(TOKEN);
	if (!starts_with(auth, BASIC) || !len || len % 4 || len / 4 * 3 >= BASIC_MAX)
		return NULL;
	n = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)len);
	if (n < 0)
		return NULL;
	n -= (b64[len - 1] == '=') + (b64[len - 2] == '=');	/* padding decodes as zeros */
	buf[n] = '\0';
	colon = memchr(buf, ':', (size_t)n);
	if (!colon || strlen((char *)buf) != (size_t)n)
		return NULL;
	*colon = '\0';
	*ret_user = (const char *)buf;
	return colon + 1;
}

/*
 * A browser cannot set headers on a WebSocket: its token comes as the
 * subprotocol "labd-token.<token>" of Sec-WebSocket-Protocol (api_ws.c),
 * made into "Bearer <token>" in @buf.  NULL when there is none.
 */
static const char *ws_token(struct api_request *r, char *buf, size_t size)
{
	const char *p = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						    "Sec-WebSocket-Protocol");
	size_t n;

	p = p ? strstr(p, WS_TOKEN) : NULL;
	if (!p)
		return NULL;
	p += strlen(WS_TOKEN);
	n = strcspn(p, " ,\t");
	if (n + strlen(BEARER) >= size)
		n = size - strlen(BEARER) - 1;
	snprintf(buf, size, BEARER "%.*s", (int)n, p);
	return buf;
}

/* HMAC-SHA256 of a forwarded identity with the lab's @secret, in hex (@hex: 65 bytes). */
static int forward_mac(const char *secret, long long when, const char *user, const char *role,
		       const char *method, const char *path, char *hex)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	char *msg;
	int n;

	n = asprintf(&msg, "labd-forward-1\n%lld\n%s\n%s\n%s\n%s", when, user, role, method,
		     path);
	if (n < 0)
		return -ENOMEM;
	if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)msg, (size_t)n, mac,
		  &len) || len != SHA256_DIGEST_LENGTH) {
		free(msg);
		return -EIO;
	}
	free(msg);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	return 0;
}

int api_forward_identity(struct store *st, const struct api_identity *who, const char *method,
			 const char *path, struct api_forward_id *ret)
{
	const char *secret = store_lab_secret(st);
	const char *role = user_role_name(who->role);
	long long now = (long long)time(NULL);
	char hex[2 * SHA256_DIGEST_LENGTH + 1];
	int err;

	if (!secret)
		return -ENOENT;
	err = forward_mac(secret, now, who->name, role, method, path, hex);
	if (err < 0)
		return err;
	snprintf(ret->user, sizeof(ret->user), "%s: %s", API_FWD_USER_HEADER, who->name);
	snprintf(ret->role, sizeof(ret->role), "%s: %s", API_FWD_ROLE_HEADER, role);
	snprintf(ret->auth, sizeof(ret->auth), "%s: %lld.%s", API_FWD_AUTH_HEADER, now, hex);
	return 0;
}

/* Whether the forwarded identity of @r's headers is signed with the lab's secret. */
static bool forward_valid(struct api_request *r, const char *user, const char *role,
			  const char *auth)
{
	const char *secret = store_lab_secret(api_deps_of(r)->store);
	char hex[2 * SHA256_DIGEST_LENGTH + 1], *end;
	long long when, now = (long long)time(NULL);

	if (!secret || !user || !role || !auth || strlen(user) >= API_IDENTITY_MAX)
		return false;
	when = strtoll(auth, &end, 10);
	if (*end != '.' || strlen(end + 1) != sizeof(hex) - 1 || when < now - API_FWD_MAX_SKEW ||
	    when > now + API_FWD_MAX_SKEW)
		return false;
	if (forward_mac(secret, when, user, role, r->method, r->url, hex) < 0)
		return false;
	return !CRYPTO_memcmp(hex, end + 1, sizeof(hex) - 1);
}

/*
 * A request another host forwarded with the identity it established: true
 * when it says so (r->who is then that identity, or bad_forward).
 */
static bool identify_forwarded(struct api_request *r, const struct users *users)
{
	const char *user, *role, *auth;
	enum user_role rl;

	user = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, API_FWD_USER_HEADER);
	role = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, API_FWD_ROLE_HEADER);
	auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, API_FWD_AUTH_HEADER);
	if (!user && !role && !auth)
		return false;
	if (!forward_valid(r, user, role, auth) || user_role_from_name(role, &rl) < 0) {
		snprintf(r->who.name, sizeof(r->who.name), "anonymous");
		r->who.bad_token = r->who.bad_forward = true;
		return true;
	}
	snprintf(r->who.name, sizeof(r->who.name), "%s", user);
	r->who.role = rl;
	r->who.is_user = users_find_name(users, user) != NULL;
	return true;
}

void api_identify(struct api_request *r)
{
	char ws_auth[sizeof(BEARER) + WS_TOKEN_MAX];
	const struct api_deps *d = api_deps_of(r);
	const struct users *users = lab_users(d->lab);
	unsigned char hash[SHA256_DIGEST_LENGTH];
	unsigned char basic[BASIC_MAX];
	const char *auth, *token, *user;
	const struct user *u;

	memset(&r->who, 0, sizeof(r->who));
	if (api_listener_is_unix(r->listener)) {
		identify_peer(r, users);
		return;
	}
	if (identify_forwarded(r, users))
		return;
	auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_AUTHORIZATION);
	if (!auth)
		auth = ws_token(r, ws_auth, sizeof(ws_auth));
	snprintf(r->who.name, sizeof(r->who.name), "anonymous");
	if (!auth) {
		r->who.anonymous = true;
		r->who.role = users_count(users) ? USER_ROLE_READER : USER_ROLE_ADMIN;
		if (api_listener_needs_token(r->listener))
			r->who.role = USER_ROLE_NONE;
		return;
	}
	token = header_token(auth, basic, &user);
	r->who.basic = user != NULL;
	u = token && *token ? users_find_token(users, token) : NULL;
	if (u && (!user || !strcmp(user, u->name)))
		be_user(r, u);
	else if (!u && token && *token && stored_token(r, token, user))
		;	/* a user of a token made through the API */
	else if (!u && token && *token &&
		 token_valid(lab_current_config(d->lab)->http.tokens, token, hash))
		snprintf(r->who.name, sizeof(r->who.name), "token:%02x%02x%02x%02x", hash[0],
			 hash[1], hash[2], hash[3]);
	else
		r->who.bad_token = true;
	if (!r->who.bad_token && !r->who.is_user)
		r->who.role = USER_ROLE_ADMIN;
	OPENSSL_cleanse(basic, sizeof(basic));
}

bool api_authenticated(const struct api_request *r)
{
	return !r->who.bad_token && strcmp(r->who.name, "anonymous");
}

/* "user 'alice' (developer) may not <what><why>" */
static int deny_403(const struct api_request *r, const char *what, const char *why,
		    struct api_denial *d)
{
	d->status = MHD_HTTP_FORBIDDEN;
	snprintf(d->msg, sizeof(d->msg), "%s%s%s (%s) may not %s%s",
		 r->who.is_user ? "user '" : "'", r->who.name, "'", user_role_name(r->who.role),
		 what, why ? why : "");
	return -EACCES;
}

int api_check(const struct api_request *r, enum user_role need, const char *what,
	      struct api_denial *d)
{
	static const char *const how[] = {
		[API_STYLE_JSON] = "send 'Authorization: Bearer <token>'",
		[API_STYLE_DRF] = "send 'Authorization: Token <token>'",
		[API_STYLE_XMLRPC] = "authenticate with user and token (http://USER:TOKEN@HOST/RPC2)",
	};

	d->status = MHD_HTTP_UNAUTHORIZED;
	if (r->who.bad_forward) {
		snprintf(d->msg, sizeof(d->msg), "a forwarded identity not vouched for by a host "
			 "of this lab");
		return -EACCES;
	}
	if (r->who.bad_token) {
		snprintf(d->msg, sizeof(d->msg), "invalid token");
		return -EACCES;
	}
	if (r->who.role >= need)
		return 0;
	/* no credentials: authenticating may help (LAVA's "Authentication ... required") */
	if (r->who.role == USER_ROLE_NONE || r->who.anonymous) {
		snprintf(d->msg, sizeof(d->msg), "this API needs a token: %s", how[r->style]);
		return -EACCES;
	}
	return deny_403(r, what, NULL, d);
}

enum MHD_Result api_reply_denial(struct api_request *r, const struct api_denial *d)
{
	static const char *const schemes[] = {
		[API_STYLE_JSON] = "Bearer",
		[API_STYLE_DRF] = "Token",
		[API_STYLE_XMLRPC] = "Basic realm=\"XML-RPC Authentication token\"",
	};
	struct MHD_Response *resp = api_error_response(r, d->status, d->msg);

	if (resp && d->status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, schemes[r->style]);
	return api_reply(r, d->status, resp);
}

int api_authorize(struct api_request *r, enum user_role need, const char *what)
{
	struct api_denial d;

	if (!api_check(r, need, what, &d))
		return 0;
	api_reply_denial(r, &d);
	return -EACCES;
}

bool api_is_holder(const struct api_request *r, const struct board *b)
{
	const char *holder = board_holder(b);

	return holder && !strcmp(holder, r->who.name);
}

int api_authorize_holder(struct api_request *r, struct board *b, const char *what)
{
	struct api_denial d;
	char why[128];

	if (r->who.role == USER_ROLE_ADMIN || api_is_holder(r, b))
		return 0;
	if (board_holder(b))
		snprintf(why, sizeof(why), ": '%s' holds it", board_holder(b));
	else
		snprintf(why, sizeof(why), ": reserve it first (labctl reserve %s)", board_name(b));
	deny_403(r, what, why, &d);
	api_reply_denial(r, &d);
	return -EACCES;
}

int api_check_owner(const struct api_request *r, const char *owner, const char *what,
		    struct api_denial *d)
{
	char why[128];

	if (r->who.role == USER_ROLE_ADMIN || (owner && !strcmp(owner, r->who.name)))
		return 0;
	snprintf(why, sizeof(why), ": it belongs to '%s'", owner ? owner : "nobody");
	return deny_403(r, what, why, d);
}

int api_authorize_owner(struct api_request *r, const char *owner, const char *what)
{
	struct api_denial d;

	if (!api_check_owner(r, owner, what, &d))
		return 0;
	api_reply_denial(r, &d);
	return -EACCES;
}
