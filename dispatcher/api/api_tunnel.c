// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_tunnel.c -- the console of a board another labd host of the lab
 * drives, through this host: the upgrade request (labd's console protocol
 * or a WebSocket) is made again to the board's host, and once that host
 * switched protocols, this host switches too and the bytes go through both
 * ways unchanged, so the two ends speak to each other (a WebSocket's
 * Sec-WebSocket-Key is the client's, the accept value the other host's).
 *
 * libcurl makes the connection in the loop (http_client's connect_only); it
 * has no API for an upgrade (7.88), so the request's head is written here
 * and the answer's status line and headers read, as labctl console does:
 * the HTTP this needs and no more.  An answer other than 101 (401, 403,
 * 404 ...) is given to the client as it came.  Each direction holds at most
 * TUNNEL_BUFFER bytes: a side that does not read stops the other's reading.
 *
 * A tunnel of this host's own (api_tunnel_open(): a telnet port relayed to
 * the board's host, api_telnet.c) is the same connection without a client
 * request: its owner is told of the answer and gives the socket to pass
 * the bytes to (api_tunnel_pump()).
 *
 * A tunnel ends when either side closes, when labd stops, and when the
 * other host was reaped (a stopped host's kernel may keep its connections
 * up): one timer asks the store, without waiting, while there are tunnels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "store/store.h"

#define TUNNEL_BUFFER (64 * 1024)
#define TUNNEL_MAX_HEAD (16 * 1024)
#define TUNNEL_TIMEOUT (10 * USEC_PER_SEC)	/* to connect and switch */
#define TUNNEL_REAP_CHECK (3 * USEC_PER_SEC)	/* whether their hosts were reaped */

/* The client's headers the upgrade request carries again. */
static const char *const upgrade_headers[] = {
	MHD_HTTP_HEADER_AUTHORIZATION, "Sec-WebSocket-Key", "Sec-WebSocket-Version",
	"Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions", MHD_HTTP_HEADER_ORIGIN, NULL,
};
/* The other host's headers a 101 keeps. */
static const char *const switch_headers[] = {
	"Sec-WebSocket-Accept", "Sec-WebSocket-Protocol", NULL,
};

struct tunnel {
	struct api_forwards *set;
	struct tunnel *prev, *next;
	struct api_request *r;	/* until the upgrade, or NULL */
	struct api_listener *listener;
	struct loop *loop;
	char *host;
	/* told once of the answer: switched, refused or failed */
	void (*answered)(struct tunnel *t, void *userdata);
	void *answered_userdata;
	bool answer_given;
	struct http_request *conn;	/* to the other host */
	struct loop_source *conn_io;
	struct loop_source *timer;
	struct strbuf head;		/* the request, then the answer's head */
	size_t sent;
	bool head_sent;
	long status;			/* the other host's answer, once read */
	bool failed;
	char why[256];
	/* after the switch */
	struct MHD_UpgradeResponseHandle *urh;
	int client_fd;			/* -1: only the host's bytes, kept */
	struct loop_source *client_io;
	struct strbuf to_client, to_host;
	api_tunnel_closed_fn closed;	/* of api_tunnel_pump() */
	void *closed_userdata;
};

static void tunnel_free(struct tunnel *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else if (t->set->tunnels == t)
		t->set->tunnels = t->next;
	if (t->next)
		t->next->prev = t->prev;
	loop_source_free(t->conn_io);
	loop_source_free(t->client_io);
	loop_source_free(t->timer);
	http_request_cancel(t->conn);
	if (t->urh) {
		MHD_upgrade_action(t->urh, MHD_UPGRADE_ACTION_CLOSE);
		api_listener_poke(t->listener);
	}
	strbuf_release(&t->head);
	strbuf_release(&t->to_client);
	strbuf_release(&t->to_host);
	free(t->host);
	free(t);
}

/* The answer is in (or the tunnel failed): its owner is told, once. */
static void answer(struct tunnel *t)
{
	if (t->answer_given)
		return;
	t->answer_given = true;
	t->answered(t, t->answered_userdata);
}

/* Before the switch: give up, the handler answers 502 with @why. */
static void fail(struct tunnel *t, const char *why)
{
	if (t->failed || t->answer_given)
		return;
	t->failed = true;
	snprintf(t->why, sizeof(t->why), "%s", why);
	loop_source_free(t->conn_io);
	t->conn_io = NULL;
	loop_timer_set(t->timer, USEC_INFINITY);
	answer(t);
}

/* ---- the bytes both ways, after the switch ---- */

static void set_events(struct tunnel *t)
{
	if (t->client_io)
		loop_io_set_events(t->client_io,
				   (t->to_host.len < TUNNEL_BUFFER ? EPOLLIN : 0) |
					   (t->to_client.len ? EPOLLOUT : 0));
	loop_io_set_events(t->conn_io, (t->to_client.len < TUNNEL_BUFFER ? EPOLLIN : 0) |
					    (t->to_host.len ? EPOLLOUT : 0));
}

/*
 * Either side ended (@why: the host's end, else the client's): the tunnel
 * closes, the last bytes of the host sent on as far as they go at once.
 */
static int tunnel_end(struct tunnel *t, const char *why)
{
	if (why && t->client_fd >= 0 && t->to_client.len)
		send(t->client_fd, t->to_client.buf, t->to_client.len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (t->closed)
		t->closed(t->client_fd, why, t->closed_userdata);
	tunnel_free(t);
	return 0;
}

/* The host's end, said to its owner. */
static int host_end(struct tunnel *t)
{
	char why[128];

	snprintf(why, sizeof(why), "host '%s' closed the connection", t->host);
	return tunnel_end(t, why);
}

static int on_client(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct tunnel *t = ud;
	char buf[16384];
	ssize_t n;

	if (revents & EPOLLOUT && t->to_client.len) {
		n = send(fd, t->to_client.buf, t->to_client.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return tunnel_end(t, NULL);
		if (n > 0)
			strbuf_consume(&t->to_client, (size_t)n);
	}
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR) && t->to_host.len < TUNNEL_BUFFER) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return tunnel_end(t, NULL);
		if (n > 0 && strbuf_add(&t->to_host, buf, (size_t)n) < 0)
			return tunnel_end(t, NULL);
	}
	set_events(t);
	return 0;
}

static int on_host(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct tunnel *t = ud;
	char buf[16384];
	ssize_t n;

	if (revents & EPOLLOUT && t->to_host.len) {
		n = http_request_send(t->conn, t->to_host.buf, t->to_host.len);
		if (n < 0 && n != -EAGAIN)
			return host_end(t);
		if (n > 0)
			strbuf_consume(&t->to_host, (size_t)n);
	}
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR) && t->to_client.len < TUNNEL_BUFFER) {
		n = http_request_recv(t->conn, buf, sizeof(buf));
		if (n == 0 || (n < 0 && n != -EAGAIN))
			return host_end(t);
		if (n > 0 && strbuf_add(&t->to_client, buf, (size_t)n) < 0)
			return host_end(t);
	}
	set_events(t);
	return 0;
}

/* The bytes both ways between @fd (or only the host's, kept: -1) and the host. */
static int pump(struct tunnel *t, int fd)
{
	int err = 0;

	t->client_fd = fd;
	if (fd >= 0)
		err = loop_add_io(t->loop, &t->client_io, fd, 0, on_client, t);
	t->conn_io = loop_source_free(t->conn_io);
	if (!err)
		err = loop_add_io(t->loop, &t->conn_io, http_request_fd(t->conn), 0, on_host, t);
	if (err < 0)
		return err;
	if (t->client_io)
		loop_source_set_description(t->client_io, "console-tunnel");
	set_events(t);
	return 0;
}

/* libmicrohttpd sent the 101: the client's socket is the tunnel's. */
static void on_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls,
			const char *extra_in, size_t extra_in_size, MHD_socket sock,
			struct MHD_UpgradeResponseHandle *urh)
{
	struct tunnel *t = cls;

	t->urh = urh;
	t->r = NULL;	/* the request lives on, but the tunnel no longer needs it */
	if (strbuf_add(&t->to_host, extra_in, extra_in_size) < 0 || pump(t, sock) < 0)
		tunnel_free(t);
}

int api_tunnel_pump(struct tunnel *t, int fd, api_tunnel_closed_fn closed, void *userdata)
{
	t->closed = closed;
	t->closed_userdata = userdata;
	return t->status == 101 ? pump(t, fd) : -EINVAL;
}

const char *api_tunnel_received(const struct tunnel *t, size_t *len)
{
	*len = t->to_client.len;
	return t->to_client.len ? t->to_client.buf : "";
}

/* ---- connecting and switching ---- */

static const char *head_value(const struct tunnel *t, const char *name, char *buf, size_t len);

/* A refusal's body (after its head, in to_client) is all in. */
static bool body_complete(const struct tunnel *t)
{
	char v[32];

	return head_value(t, "Content-Length", v, sizeof(v)) &&
	       t->to_client.len >= strtoull(v, NULL, 10);
}

/* The other host's answer: its head read; 101 or not, the handler answers now. */
static void read_answer(struct tunnel *t)
{
	char buf[4096];
	char *end;
	ssize_t n;

	while ((n = http_request_recv(t->conn, buf, sizeof(buf))) > 0) {
		if (strbuf_add(&t->head, buf, (size_t)n) < 0) {
			fail(t, "out of memory");
			return;
		}
	}
	end = t->head.len ? strstr(t->head.buf, "\r\n\r\n") : NULL;
	if (!end && (n == 0 || (n < 0 && n != -EAGAIN) || t->head.len > TUNNEL_MAX_HEAD)) {
		fail(t, "no answer to the upgrade");
		return;
	}
	if (!end && t->status)
		return;
	if (end && !t->status) {
		if (sscanf(t->head.buf, "HTTP/%*s %ld", &t->status) != 1) {
			fail(t, "a malformed answer to the upgrade");
			return;
		}
		/* the rest, after the head, is the other side's first bytes */
		strbuf_add(&t->to_client, end + 4, t->head.len - (size_t)(end + 4 - t->head.buf));
		t->head.len = (size_t)(end + 4 - t->head.buf);
		t->head.buf[t->head.len] = '\0';
	}
	if (t->status == 101 || n == 0 || n == -EIO || body_complete(t)) {
		loop_io_set_events(t->conn_io, 0);
		loop_timer_set(t->timer, USEC_INFINITY);
		answer(t);
	}
}

static int on_conn_io(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct tunnel *t = ud;
	ssize_t n;

	if (!t->head_sent) {
		n = http_request_send(t->conn, t->head.buf + t->sent, t->head.len - t->sent);
		if (n < 0 && n != -EAGAIN) {
			fail(t, "the connection closed");
			return 0;
		}
		t->sent += n > 0 ? (size_t)n : 0;
		if (t->sent == t->head.len) {
			t->head_sent = true;
			strbuf_reset(&t->head);
			loop_io_set_events(s, EPOLLIN);
		}
		return 0;
	}
	read_answer(t);
	return 0;
}

static void on_connected(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct tunnel *t = ud;
	int fd;

	if (resp->err) {
		t->conn = NULL;	/* freed by the client after this */
		fail(t, resp->error ? resp->error : strerror(-resp->err));
		return;
	}
	fd = http_request_fd(req);
	if (fd < 0 || loop_add_io(t->loop, &t->conn_io, fd, EPOLLOUT, on_conn_io, t) < 0) {
		fail(t, "no socket");
		return;
	}
	loop_source_set_description(t->conn_io, "console-tunnel-host");
}

static int on_timeout(struct loop_source *s, uint64_t now, void *ud)
{
	fail(ud, "no switch in time");
	return 0;
}

static enum MHD_Result add_header(struct tunnel *t, const struct api_request *r,
				  const char *name)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);

	if (v && !strpbrk(v, "\r\n"))
		strbuf_addf(&t->head, "%s: %s\r\n", name, v);
	return MHD_YES;
}

/* The head of an upgrade to @upgrade at @url, from host @me, up to its header fields. */
static int head_start(struct tunnel *t, const char *url, const char *upgrade, const char *me)
{
	char *target = NULL, *host = NULL;
	int err;

	err = api_forward_url_parts(url, &target, &host);
	if (err < 0)
		return err;
	strbuf_addf(&t->head, "GET %s HTTP/1.1\r\nHost: %s\r\n", target, host);
	strbuf_addf(&t->head, "Connection: Upgrade\r\nUpgrade: %s\r\n", upgrade);
	strbuf_addf(&t->head, "%s: %s\r\n", API_FORWARDED_HEADER, me ? me : "labd");
	free(target);
	free(host);
	return 0;
}

/* The upgrade request again, to @url (the other host's, same path and query). */
static int upgrade_request(struct tunnel *t, const struct api_request *r, const char *url)
{
	const char *upgrade = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_UPGRADE);
	struct api_forward_id id;
	size_t i;
	int err;

	err = head_start(t, url, upgrade && !strpbrk(upgrade, "\r\n") ? upgrade : "websocket",
			 store_host_name(api_deps_of(r)->store));
	if (err < 0)
		return err;
	for (i = 0; upgrade_headers[i]; i++)
		add_header(t, r, upgrade_headers[i]);
	if (api_vouch(r, &id))
		strbuf_addf(&t->head, "%s\r\n%s\r\n%s\r\n", id.user, id.role, id.auth);
	return strbuf_addstr(&t->head, "\r\n");
}

static void tunnel_gone(struct api_request *r)
{
	struct tunnel *t = r->pending;

	r->pending = NULL;
	tunnel_free(t);
}

/* Connect to @url, the head made: the answer comes to t->answered. */
static int tunnel_start(struct tunnel *t, struct http_client *http, const char *url)
{
	struct http_request_opts o = {
		.url = url, .connect_only = true, .connect_timeout = TUNNEL_TIMEOUT,
	};
	int err;

	err = loop_add_timer(t->loop, &t->timer, loop_now(t->loop) + TUNNEL_TIMEOUT, on_timeout,
			     t);
	if (!err)
		err = http_request_start(http, &o, on_connected, t, &t->conn);
	return err;
}

static struct tunnel *tunnel_new(struct api_forwards *set, struct loop *loop, const char *host)
{
	struct tunnel *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->set = set;
	t->loop = loop;
	t->client_fd = -1;
	strbuf_init(&t->head);
	strbuf_init(&t->to_client);
	strbuf_init(&t->to_host);
	t->host = strdup(host);
	if (!t->host) {
		free(t);
		return NULL;
	}
	return t;
}

static void tunnel_link(struct tunnel *t)
{
	t->next = t->set->tunnels;
	if (t->next)
		t->next->prev = t;
	t->set->tunnels = t;
	if (!loop_timer_is_armed(t->set->reap_timer))	/* whether its host is reaped */
		loop_timer_set_rel(t->set->reap_timer, TUNNEL_REAP_CHECK);
}

/* An API tunnel's answer: the request's handler gives it. */
static void resume_request(struct tunnel *t, void *userdata)
{
	if (t->r)
		api_resume(t->r);
}

enum MHD_Result api_tunnel(struct api_request *r, const char *host, const char *base_url)
{
	struct tunnel *t = tunnel_new(api_forwards_of(r), api_deps_of(r)->loop, host);
	char *url = api_forward_url(r, base_url);
	int err = t && url ? 0 : -ENOMEM;

	if (!err) {
		t->r = r;
		t->listener = r->listener;
		t->answered = resume_request;
		err = upgrade_request(t, r, url);
	}
	if (!err)
		err = tunnel_start(t, api_deps_of(r)->http, url);
	free(url);
	if (err < 0) {
		if (t)
			tunnel_free(t);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot reach host '%s': %s", host, strerror(-err));
	}
	tunnel_link(t);
	r->pending = t;
	r->pending_gone = tunnel_gone;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

int api_tunnel_open(struct api_forwards *set, const struct api_deps *d,
		    const struct api_tunnel_params *p, struct tunnel **ret)
{
	struct tunnel *t = tunnel_new(set, d->loop, p->host);
	int err = t ? 0 : -ENOMEM;

	if (!err) {
		t->answered = p->answered;
		t->answered_userdata = p->userdata;
		err = head_start(t, p->url, p->upgrade, store_host_name(d->store));
	}
	if (!err && p->headers)
		err = strbuf_addstr(&t->head, p->headers);
	if (!err)
		err = strbuf_addstr(&t->head, "\r\n");
	if (!err)
		err = tunnel_start(t, d->http, p->url);
	if (err < 0) {
		if (t)
			tunnel_free(t);
		return err;
	}
	tunnel_link(t);
	*ret = t;
	return 0;
}

long api_tunnel_status(const struct tunnel *t, const char **body, size_t *len)
{
	if (t->failed || !t->status) {
		*body = t->failed ? t->why : "closed";
		*len = strlen(*body);
		return 0;
	}
	*body = t->to_client.len ? t->to_client.buf : "";
	*len = t->to_client.len;
	return t->status;
}

void api_tunnel_free(struct tunnel *t)
{
	if (t)
		tunnel_free(t);
}

bool api_tunneling(const struct api_request *r)
{
	return r->pending && r->pending_gone == tunnel_gone;
}

bool api_tunnel_wanted(const struct api_request *r)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
}

/* Not switched: the other host's answer as it came (its status, type and body). */
static enum MHD_Result relay_refusal(struct api_request *r, struct tunnel *t)
{
	const char *type = strcasestr(t->head.buf, "\r\nContent-Type:");
	struct MHD_Response *resp;
	char ctype[128] = "application/json";

	if (type)
		sscanf(type + 15, " %127[^\r\n]", ctype);
	resp = MHD_create_response_from_buffer(t->to_client.len, t->to_client.buf,
					       MHD_RESPMEM_MUST_COPY);
	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	return api_reply(r, (unsigned)t->status, resp);
}

/* The value of header @name in the answer's head, copied to @buf, or NULL. */
static const char *head_value(const struct tunnel *t, const char *name, char *buf, size_t len)
{
	const char *h;
	size_t n = strlen(name);

	for (h = strstr(t->head.buf, "\r\n"); h; h = strstr(h + 2, "\r\n"))
		if (!strncasecmp(h + 2, name, n) && h[2 + n] == ':') {
			h += 3 + n + strspn(h + 3 + n, " \t");
			snprintf(buf, len, "%.*s", (int)strcspn(h, "\r\n"), h);
			return buf;
		}
	return NULL;
}

enum MHD_Result api_tunnel_answer(struct api_request *r)
{
	struct tunnel *t = r->pending;
	struct MHD_Response *resp;
	char v[256];
	size_t i;

	if (t->failed || !t->status) {
		enum MHD_Result ret = api_reply_error(r, MHD_HTTP_BAD_GATEWAY,
						      "host '%s' did not open the console: %s",
						      t->host, t->failed ? t->why : "closed");
		tunnel_gone(r);
		return ret;
	}
	if (t->status != 101) {
		enum MHD_Result ret = relay_refusal(r, t);

		tunnel_gone(r);
		return ret;
	}
	r->pending = NULL;	/* the tunnel's own from the upgrade on */
	resp = MHD_create_response_for_upgrade(on_upgraded, t);
	if (!resp) {
		tunnel_free(t);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE,
				head_value(t, "Upgrade", v, sizeof(v)) ? v : "websocket");
	for (i = 0; switch_headers[i]; i++)
		if (head_value(t, switch_headers[i], v, sizeof(v)))
			MHD_add_response_header(resp, switch_headers[i], v);
	return api_reply(r, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
}

/* End the tunnels to @host (NULL: every one), their owners or clients told @why: how many. */
static unsigned tunnels_end(struct api_forwards *set, const char *host, const char *why)
{
	struct tunnel *t, *next;
	unsigned n = 0;

	/* what a tunnel's owner does when told may free others: from the first again */
	for (t = set ? set->tunnels : NULL; t; t = next) {
		next = t->next;
		if (host && strcmp(t->host, host))
			continue;
		if (!t->answer_given) {
			fail(t, why);	/* a request's handler answers, then frees it */
			next = set->tunnels;
			n++;
		} else if (!t->r) {
			tunnel_end(t, why);
			next = set->tunnels;
			n++;
		}
	}
	return n;
}

void api_tunnels_shutdown(struct api_forwards *set)
{
	tunnels_end(set, NULL, "labd stops");
}

/* ---- the hosts reaped ---- */

/*
 * A host stopped while its kernel still answers (SIGSTOP, a hung labd)
 * keeps its tunnels' connections open after another host reaped it and
 * ended its reservations.  While there are tunnels, one timer of the set
 * asks the store every TUNNEL_REAP_CHECK whether the hosts they go to were
 * reaped (reads that never wait in the loop: store_read_later()), and the
 * tunnels to a reaped host end, telling why.
 */
struct reap_check {
	struct api_forwards *set;
	char **hosts;	/* the tunnels' hosts when the check began */
};

static void reap_check_free(void *userdata)
{
	struct reap_check *c = userdata;

	if (c->set)
		c->set->reap_checking = false;
	strv_free(c->hosts);
	free(c);
}

/* The tunnels to @host end: it was reaped. */
static void host_reaped(struct api_forwards *set, const char *host)
{
	char why[192];
	unsigned n;

	snprintf(why, sizeof(why),
		 "host '%s' stopped renewing its lease and was reaped (its reservations ended)",
		 host);
	n = tunnels_end(set, host, why);
	if (n)
		log_warning("host '%s' was reaped: its %u tunnel(s) from this host closed", host, n);
}

/* Run again by store_read_later() until every answer is in, then acts. */
static void reap_check(void *userdata)
{
	struct reap_check *c = userdata;
	char **reaped = NULL;
	bool yes;

	STRV_FOREACH(h, c->hosts)
		if (!store_host_reaped(c->set->store, *h, &yes) && yes &&
		    strv_push(&reaped, *h) < 0)
			goto cleanup;	/* no memory: the next check */
	if (store_read_pending(c->set->store))
		goto cleanup;
	STRV_FOREACH(h, reaped)
		host_reaped(c->set, *h);
cleanup:
	strv_free(reaped);
}

static int on_reap_timer(struct loop_source *s, uint64_t now, void *ud)
{
	struct api_forwards *set = ud;
	struct reap_check *c;
	struct tunnel *t;

	if (!set->tunnels)
		return 0;	/* armed again by the next tunnel (tunnel_link()) */
	loop_timer_set(s, now + TUNNEL_REAP_CHECK);
	if (set->reap_checking)
		return 0;	/* the last check's answers are not all in yet */
	c = calloc(1, sizeof(*c));
	if (!c)
		return 0;
	for (t = set->tunnels; t; t = t->next)
		if (!strv_contains(c->hosts, t->host) && strv_push(&c->hosts, t->host) < 0) {
			reap_check_free(c);
			return 0;
		}
	c->set = set;
	set->reap_checking = true;
	store_read_later(set->store, set, reap_check, reap_check_free, c);
	return 0;
}

int api_tunnels_start(struct api_forwards *set, struct loop *loop)
{
	int err = loop_add_timer(loop, &set->reap_timer, USEC_INFINITY, on_reap_timer, set);

	if (!err)
		loop_source_set_description(set->reap_timer, "tunnels-reaped");
	return err;
}
