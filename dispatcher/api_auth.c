// SPDX-License-Identifier: GPL-2.0-or-later
/* api_auth.c -- who sends an API request (bearer token or Unix peer), and the access check */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "api_internal.h"
#include "config.h"
#include "daemon.h"
#include "strv.h"

#define BEARER "Bearer "
#define TOKEN_HASH_PREFIX "sha256:"

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

static bool hex_decode(const char *hex, unsigned char *out, size_t n)
{
	size_t i;

	if (strlen(hex) != 2 * n)
		return false;
	for (i = 0; i < n; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

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
		if (!strncmp(*t, TOKEN_HASH_PREFIX, strlen(TOKEN_HASH_PREFIX))) {
			if (!hex_decode(*t + strlen(TOKEN_HASH_PREFIX), want, sizeof(want)))
				continue;
		} else {
			SHA256((const unsigned char *)*t, strlen(*t), want);
		}
		if (!CRYPTO_memcmp(want, hash, sizeof(want)))
			found = true;
	}
	return found;
}

/* Unix socket: the peer's uid (SO_PEERCRED); the socket's mode limits who connects. */
static void identify_peer(struct api_request *r)
{
	const union MHD_ConnectionInfo *ci;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		snprintf(r->who.name, sizeof(r->who.name), "unknown");
		r->who.role = API_ROLE_NONE;
		return;
	}
	snprintf(r->who.name, sizeof(r->who.name), "uid:%u", (unsigned)cred.uid);
	r->who.role = API_ROLE_ADMIN;	/* until labd.conf `users` maps uids to roles */
}

void api_identify(struct api_request *r)
{
	const struct lab_config *c = daemon_config(api_daemon(r));
	unsigned char hash[SHA256_DIGEST_LENGTH];
	const char *auth, *token;

	memset(&r->who, 0, sizeof(r->who));
	if (api_listener_is_unix(r->listener)) {
		identify_peer(r);
		return;
	}
	auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_AUTHORIZATION);
	if (!auth) {
		snprintf(r->who.name, sizeof(r->who.name), "anonymous");
		r->who.role = API_ROLE_ADMIN;	/* loopback without require_token */
		if (api_listener_needs_token(r->listener))
			r->who.role = API_ROLE_NONE;
		return;
	}
	token = auth + strlen(BEARER);
	if (strncasecmp(auth, BEARER, strlen(BEARER)) || !*token ||
	    !token_valid(c->http.tokens, token, hash)) {
		snprintf(r->who.name, sizeof(r->who.name), "anonymous");
		r->who.bad_token = true;
		r->who.role = API_ROLE_NONE;
		return;
	}
	snprintf(r->who.name, sizeof(r->who.name), "token:%02x%02x%02x%02x", hash[0], hash[1],
		 hash[2], hash[3]);
	r->who.role = API_ROLE_ADMIN;	/* until tokens carry roles */
}

static enum MHD_Result reply_401(struct api_request *r, const char *msg)
{
	struct MHD_Response *resp = api_json_response(json_pack("{s:s}", "error", msg));

	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	return api_reply(r, MHD_HTTP_UNAUTHORIZED, resp);
}

int api_authorize(struct api_request *r, enum api_role need)
{
	if (r->who.bad_token) {
		reply_401(r, "invalid token");
		return -EACCES;
	}
	if (r->who.role >= need)
		return 0;
	if (r->who.role == API_ROLE_NONE)
		reply_401(r, "this API needs a token: send 'Authorization: Bearer <token>'");
	else
		api_reply_error(r, MHD_HTTP_FORBIDDEN, "'%s' may not do this", r->who.name);
	return -EACCES;
}
