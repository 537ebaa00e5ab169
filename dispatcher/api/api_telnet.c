// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_telnet.c -- a held board's telnet port asked of a host that does not
 * drive the board: POST /devices/{name}/telnet opens a loopback port on
 * this host (a relay port of telnetd.h: the same check of the client's uid)
 * and passes each client's bytes, unchanged, to the board's host through a
 * tunnel (api_tunnel.c: GET /devices/{name}/telnet upgraded to
 * labd-telnet), where it is a client of the board's own port (a viewer:
 * telnet's IAC and break, its input logged).  Both hosts' ports open and
 * close together: a watch, one more such tunnel (?watch=1), lives as long
 * as this port.  The board's host sends the reason on it when its port
 * closes (the reservation ended) and closes it; it also ends when that host
 * goes away, or once it was reaped (api_tunnel.c).  Either way this host
 * closes its port and its clients, telling them why.  The tunnels carry the
 * identity of the user who opened the port, vouched for with the lab's
 * secret (api_forward_identity()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "api/api_internal.h"
#include "core/log.h"
#include "session/telnetd.h"
#include "store/store.h"

/* A client of the port, relayed. */
struct relay_client {
	struct api_telnet *rt;
	struct relay_client *prev, *next;
	struct tunnel *t;	/* NULL once it ended */
	int fd;
};

struct api_telnet {
	struct api_forwards *set;
	struct api_telnet *prev, *next;
	const struct api_deps *d;
	char *board, *host;
	char *path;		/* of the board's host's GET .../telnet, for the identity */
	char *url, *watch_url;	/* the same at the board's host, and its watch's */
	struct api_identity who;
	struct telnetd *port;
	struct tunnel *watch;
	struct api_request *r;	/* the POST, until the watch answers */
	bool open;		/* the watch switched: the port is the board's port's */
	struct relay_client *clients;
};

/* ---- the clients ---- */

/* Close @c's socket, telling it @why (or not: NULL), and forget it. */
static void client_close(struct relay_client *c, const char *why)
{
	char msg[512];
	int n;

	if (why) {
		n = snprintf(msg, sizeof(msg), "\r\nlabd: %s\r\n", why);
		send(c->fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1,
		     MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		c->rt->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

/* @c's tunnel ended (@why: the board's host closed it). */
static void client_closed(int fd, const char *why, void *ud)
{
	struct relay_client *c = ud;

	c->t = NULL;	/* freed after this */
	client_close(c, why);
}

/* The "error" of a JSON refusal @body, in @buf. */
static const char *refusal_text(const char *body, size_t len, char *buf, size_t size)
{
	json_t *doc = json_loadb(body, len, 0, NULL);
	const char *e = json_string_value(json_object_get(doc, "error"));

	snprintf(buf, size, "%s", e ? e : "refused");
	json_decref(doc);
	return buf;
}

static void client_answered(struct tunnel *t, void *ud)
{
	struct relay_client *c = ud;
	const char *body;
	char why[384], text[256];
	size_t len;
	long status = api_tunnel_status(t, &body, &len);

	if (status == 101 && !api_tunnel_pump(t, c->fd, client_closed, c))
		return;
	if (status == 101)
		snprintf(why, sizeof(why), "cannot relay to host '%s'", c->rt->host);
	else if (status)
		snprintf(why, sizeof(why), "host '%s' refused: %s", c->rt->host,
			 refusal_text(body, len, text, sizeof(text)));
	else
		snprintf(why, sizeof(why), "cannot reach host '%s': %.*s", c->rt->host, (int)len,
			 body);
	c->t = NULL;
	api_tunnel_free(t);
	client_close(c, why);
}

/* A tunnel to the board's host at @url, as rt->who. */
static int tunnel_to(struct api_telnet *rt, const char *url,
		     void (*answered)(struct tunnel *t, void *ud), void *ud, struct tunnel **ret)
{
	struct api_forward_id id;
	char headers[sizeof(id) + 8];
	struct api_tunnel_params p = {
		.host = rt->host, .url = url, .upgrade = API_TELNET_UPGRADE, .headers = headers,
		.answered = answered, .userdata = ud,
	};
	int err = api_forward_identity(rt->d->store, &rt->who, "GET", rt->path, &id);

	if (err < 0)
		return err == -ENOENT ? -ENOKEY : err;	/* no lab secret: not -ENOENT, no URL */
	snprintf(headers, sizeof(headers), "%s\r\n%s\r\n%s\r\n", id.user, id.role, id.auth);
	return api_tunnel_open(rt->set, rt->d, &p, ret);
}

/* telnetd's relay: a client let in on this host's port (closed, told why, on failure). */
static int relay_accept(int fd, void *ud)
{
	static const char oom[] = "labd: out of memory\r\n";
	struct api_telnet *rt = ud;
	struct relay_client *c = calloc(1, sizeof(*c));
	char why[256];
	int err;

	if (!c) {
		send(fd, oom, strlen(oom), MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return -ENOMEM;
	}
	c->rt = rt;
	c->fd = fd;
	c->next = rt->clients;
	if (c->next)
		c->next->prev = c;
	rt->clients = c;
	err = tunnel_to(rt, rt->url, client_answered, c, &c->t);
	if (err < 0) {
		snprintf(why, sizeof(why), "cannot reach host '%s': %s", rt->host, strerror(-err));
		client_close(c, why);
	}
	return err;
}

/* ---- the port ---- */

static void relay_free(struct api_telnet *rt, const char *why)
{
	struct relay_client *c;

	if (rt->prev)
		rt->prev->next = rt->next;
	else if (rt->set->telnets == rt)
		rt->set->telnets = rt->next;
	if (rt->next)
		rt->next->prev = rt->prev;
	while ((c = rt->clients)) {
		api_tunnel_free(c->t);
		client_close(c, why);
	}
	api_tunnel_free(rt->watch);
	if (rt->port)
		log_info("board '%s': telnet port %d, relayed to host '%s', closed: %s", rt->board,
			 telnetd_port(rt->port), rt->host, why ? why : "closed");
	telnetd_free(rt->port, why);
	free(rt->board);
	free(rt->host);
	free(rt->path);
	free(rt->url);
	free(rt->watch_url);
	free(rt);
}

/* The watch ended: the board's port closed (the reason sent), or its host went away. */
static void watch_closed(int fd, const char *why, void *ud)
{
	struct api_telnet *rt = ud;
	char reason[256];
	size_t len;
	const char *got = api_tunnel_received(rt->watch, &len);

	if (len)
		snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(got, "\r\n"), got);
	else
		snprintf(reason, sizeof(reason), "%s", why ? why : "closed");
	rt->watch = NULL;	/* freed after this */
	relay_free(rt, reason);
}

/* The port here, once the board's host agreed. */
static int relay_listen(struct api_telnet *rt)
{
	struct telnetd_deps td = {
		.loop = rt->d->loop, .viewers = rt->d->viewers, .lab = rt->d->lab,
		.relay = relay_accept, .relay_userdata = rt,
	};

	return telnetd_new_relay(&td, rt->board, rt->who.name, &rt->port);
}

static void watch_answered(struct tunnel *t, void *ud)
{
	struct api_telnet *rt = ud;
	const char *body;
	size_t len;

	if (api_tunnel_status(t, &body, &len) == 101 && !relay_listen(rt) &&
	    !api_tunnel_pump(t, -1, watch_closed, rt))
		rt->open = true;
	if (rt->r)
		api_resume(rt->r);	/* the handler answers: the port, or why not */
	else if (!rt->open)
		relay_free(rt, NULL);
}

/* A URL at @base of @path (its segments encoded) and @query (or NULL). */
static char *url_of(const char *base, const char *path, const char *query)
{
	CURLU *u = curl_url();
	char *url = NULL, *ret = NULL;

	if (u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_PATH, path, CURLU_URLENCODE) == CURLUE_OK &&
	    (!query || curl_url_set(u, CURLUPART_QUERY, query, 0) == CURLUE_OK) &&
	    curl_url_get(u, CURLUPART_URL, &url, 0) == CURLUE_OK)
		ret = strdup(url);
	curl_free(url);
	curl_url_cleanup(u);
	return ret;
}

static int relay_start(struct api_telnet *rt, const char *base)
{
	if (asprintf(&rt->path, API_PREFIX "/devices/%s/telnet", rt->board) < 0) {
		rt->path = NULL;
		return -ENOMEM;
	}
	rt->url = url_of(base, rt->path, NULL);
	rt->watch_url = url_of(base, rt->path, "watch=1");
	if (!rt->url || !rt->watch_url)
		return -ENOMEM;
	return tunnel_to(rt, rt->watch_url, watch_answered, rt, &rt->watch);
}

static int relay_new(struct api_request *r, const char *board, const char *host,
		     struct api_telnet **ret)
{
	struct api_telnet *rt = calloc(1, sizeof(*rt));
	char *base = NULL;
	int err = rt ? store_host_url(api_deps_of(r)->store, host, &base) : -ENOMEM;

	if (rt) {
		rt->set = api_forwards_of(r);
		rt->d = api_deps_of(r);
		rt->who = r->who;
		rt->board = strdup(board);
		rt->host = strdup(host);
	}
	if (!err && (!rt->board || !rt->host))
		err = -ENOMEM;
	if (!err)
		err = relay_start(rt, base);
	free(base);
	if (err < 0) {
		if (rt)
			relay_free(rt, NULL);
		return err;
	}
	rt->next = rt->set->telnets;
	if (rt->next)
		rt->next->prev = rt;
	rt->set->telnets = rt;
	*ret = rt;
	return 0;
}

/* ---- the request ---- */

static void request_gone(struct api_request *r)
{
	struct api_telnet *rt = r->pending;

	r->pending = NULL;
	rt->r = NULL;
	if (!rt->open)
		relay_free(rt, NULL);
}

static enum MHD_Result reply_port(struct api_request *r, struct api_telnet *rt)
{
	return api_reply_json(r, MHD_HTTP_OK,
			      json_pack("{s:s, s:s, s:i, s:s}", "board", rt->board, "host",
					"127.0.0.1", "port", telnetd_port(rt->port), "relayed_to",
					rt->host));
}

static struct api_telnet *find(struct api_forwards *set, const char *board, const char *who)
{
	struct api_telnet *rt;

	for (rt = set->telnets; rt; rt = rt->next)
		if (!strcmp(rt->board, board) && !strcmp(rt->who.name, who))
			return rt;
	return NULL;
}

enum MHD_Result api_telnet_relay(struct api_request *r, const char *board, const char *host)
{
	struct api_telnet *rt = find(api_forwards_of(r), board, r->who.name);
	int err;

	if (rt && rt->open)
		return reply_port(r, rt);
	if (rt)
		return api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
				       "the telnet port to '%s' is being opened: try again", board);
	err = relay_new(r, board, host, &rt);
	if (err == -ENOENT)
		return api_reply_error(r, MHD_HTTP_BAD_GATEWAY,
				       "host '%s' of this lab has no API address (store.url)", host);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot open a telnet port to '%s': %s", board,
				       strerror(-err));
	rt->r = r;
	r->pending = rt;
	r->pending_gone = request_gone;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

bool api_telnet_relaying(const struct api_request *r)
{
	return r->pending && r->pending_gone == request_gone;
}

/* Not switched: the board's host's refusal as it came, or 502. */
static enum MHD_Result reply_refusal(struct api_request *r, struct api_telnet *rt)
{
	struct MHD_Response *resp;
	const char *body = "closed";
	size_t len = 6;
	long status = rt->watch ? api_tunnel_status(rt->watch, &body, &len) : 0;

	if (status == 101)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot open a telnet port to '%s' here", rt->board);
	if (!status)
		return api_reply_error(r, MHD_HTTP_BAD_GATEWAY,
				       "host '%s' did not open the telnet port: %.*s", rt->host,
				       (int)len, body);
	resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	return api_reply(r, (unsigned)status, resp);
}

enum MHD_Result api_telnet_answer(struct api_request *r)
{
	struct api_telnet *rt = r->pending;
	enum MHD_Result ret;

	r->pending = NULL;
	rt->r = NULL;
	if (rt->open)
		return reply_port(r, rt);
	ret = reply_refusal(r, rt);
	relay_free(rt, NULL);
	return ret;
}

void api_telnets_shutdown(struct api_forwards *set)
{
	struct api_telnet *rt, *next;

	for (rt = set ? set->telnets : NULL; rt; rt = next) {
		next = rt->next;
		if (!rt->r)	/* one still opening is answered as its watch fails */
			relay_free(rt, "labd is stopping");
	}
}

void api_telnets_free(struct api_forwards *set)
{
	while (set && set->telnets)
		relay_free(set->telnets, NULL);
}
