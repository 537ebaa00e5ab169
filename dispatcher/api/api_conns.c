// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_conns.c -- who holds the API's connections: limits per client, a
 * reserve for authenticated users, and the total time to send a request
 *
 * libmicrohttpd closes a connection that stays silent (API_CONNECTION_TIMEOUT)
 * and refuses any beyond API_MAX_CONNECTIONS, so 256 clients trickling one
 * byte every two seconds used to hold every slot.  This keeps, per TCP
 * listener, a record of each connection (libmicrohttpd's socket context):
 *
 *  - a request must arrive whole (headers and body) within
 *    API_REQUEST_TIMEOUT of the connection's start or of the end of its
 *    previous request, however steadily its bytes trickle; a connection
 *    serving a response (a followed log, an upgraded console) is not timed;
 *  - a connection is on probation when its client address already holds
 *    API_MAX_PER_CLIENT connections, or when API_MAX_ANONYMOUS connections
 *    admitted without probation have not authenticated yet: its first
 *    request must carry a valid token (else 503) and arrive within
 *    API_PROBATION_TIMEOUT;
 *  - near the hard limit, the oldest connection on probation still waiting
 *    for its request is closed to make room.
 * A connection is closed by shutting its socket down: libmicrohttpd sees the
 * end of the stream and closes it in its next run.  The Unix socket listener
 * (local users, file permissions) is only timed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "api/api_internal.h"
#include "core/log.h"
#include "core/loop.h"

#define SWEEP_INTERVAL (500 * USEC_PER_MSEC)
#define EVICT_HEADROOM 16	/* free slots kept below API_MAX_CONNECTIONS */

struct api_conn {
	struct api_conns *conns;
	struct api_conn *prev, *next;
	struct MHD_Connection *conn;
	int fd;
	struct sockaddr_storage peer;
	uint64_t since;		/* start, or end of the last request (monotonic usec) */
	bool receiving;		/* a request is due or arriving */
	bool authenticated;	/* a request with a valid token came */
	bool probation;
	bool anonymous;		/* counted in n_anonymous */
	bool closing;		/* shut down by us */
};

static int api_conns_sweep(struct loop_source *s, uint64_t now, void *ud);

struct api_conns {
	struct loop *loop;
	struct loop_source *sweep;
	const char *where;
	bool is_unix;
	struct api_conn *list;	/* newest first */
	size_t n, n_anonymous;
};

int api_conns_new(struct loop *loop, const char *where, bool is_unix, struct api_conns **ret)
{
	struct api_conns *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->where = where;
	c->is_unix = is_unix;
	err = loop_add_timer(loop, &c->sweep, USEC_INFINITY, api_conns_sweep, c);
	if (err < 0) {
		free(c);
		return err;
	}
	*ret = c;
	return 0;
}

struct api_conns *api_conns_free(struct api_conns *c)
{
	if (!c)
		return NULL;
	/* libmicrohttpd closed every connection before (MHD_stop_daemon) */
	loop_source_free(c->sweep);
	free(c);
	return NULL;
}

/* Same client: the same IP address (any port); Unix peers are one client. */
static bool same_client(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return true;
}

static size_t client_count(const struct api_conns *c, const struct sockaddr_storage *peer)
{
	const struct api_conn *e;
	size_t n = 0;

	for (e = c->list; e; e = e->next)
		n += !e->closing && same_client(&e->peer, peer);
	return n;
}

static void conn_close(struct api_conn *e, const char *why)
{
	if (e->closing)
		return;
	e->closing = true;
	log_debug("api '%s': closing a connection: %s", e->conns->where, why);
	shutdown(e->fd, SHUT_RDWR);
}

/* Near the hard limit: close the oldest connection on probation still waiting. */
static void make_room(struct api_conns *c)
{
	struct api_conn *e, *oldest = NULL;

	if (c->n + EVICT_HEADROOM < API_MAX_CONNECTIONS)
		return;
	for (e = c->list; e; e = e->next)
		if (e->probation && e->receiving && !e->closing)
			oldest = e;
	if (oldest)
		conn_close(oldest, "room for a new connection");
}

static void conn_started(struct api_conns *c, struct MHD_Connection *conn, void **ctx)
{
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn,
		MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *addr = MHD_get_connection_info(conn,
		MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct api_conn *e = calloc(1, sizeof(*e));

	*ctx = e;
	if (!e || !fd)
		return;	/* untracked: libmicrohttpd's own timeout still applies */
	e->conns = c;
	e->conn = conn;
	e->fd = fd->connect_fd;
	/* a Unix socket's peer address is shorter than an IP one: not kept */
	if (addr && addr->client_addr && (addr->client_addr->sa_family == AF_INET ||
					  addr->client_addr->sa_family == AF_INET6))
		memcpy(&e->peer, addr->client_addr,
		       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
								  sizeof(struct sockaddr_in));
	e->since = loop_now(c->loop);
	e->receiving = true;
	if (!c->is_unix) {
		make_room(c);
		e->probation = client_count(c, &e->peer) >= API_MAX_PER_CLIENT ||
			       c->n_anonymous >= API_MAX_ANONYMOUS;
		e->anonymous = !e->probation;
		c->n_anonymous += e->anonymous;
	}
	e->next = c->list;
	if (e->next)
		e->next->prev = e;
	c->list = e;
	c->n++;
	if (!loop_timer_is_armed(c->sweep))
		loop_timer_set_rel(c->sweep, SWEEP_INTERVAL);
}

static void conn_closed(struct api_conns *c, struct api_conn *e)
{
	if (!e)
		return;
	if (e->conns) {
		if (e->prev)
			e->prev->next = e->next;
		else
			c->list = e->next;
		if (e->next)
			e->next->prev = e->prev;
		c->n--;
		c->n_anonymous -= e->anonymous;
	}
	free(e);
}

void api_conns_notify(struct api_conns *c, struct MHD_Connection *conn, void **ctx,
		      enum MHD_ConnectionNotificationCode code)
{
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		conn_started(c, conn, ctx);
	else
		conn_closed(c, *ctx);
}

static struct api_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(conn,
		MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct api_conn *e = i ? i->socket_context : NULL;

	return e && e->conns ? e : NULL;
}

bool api_conns_admit(struct MHD_Connection *conn, bool authenticated)
{
	struct api_conn *e = conn_of(conn);

	if (!e)
		return true;
	if (authenticated && !e->authenticated) {
		e->authenticated = true;
		e->conns->n_anonymous -= e->anonymous;
		e->anonymous = false;
	}
	if (e->authenticated || !e->probation)
		return true;
	e->closing = true;	/* answered 503, then closed by libmicrohttpd */
	return false;
}

void api_conns_received(struct MHD_Connection *conn)
{
	struct api_conn *e = conn_of(conn);

	if (e)
		e->receiving = false;
}

void api_conns_done(struct MHD_Connection *conn)
{
	struct api_conn *e = conn_of(conn);

	if (!e)
		return;
	e->receiving = true;	/* the next request on this connection is due */
	e->since = loop_now(e->conns->loop);
}

static int api_conns_sweep(struct loop_source *s, uint64_t now, void *ud)
{
	struct api_conns *c = ud;
	struct api_conn *e;
	uint64_t limit;

	for (e = c->list; e; e = e->next) {
		limit = e->probation ? API_PROBATION_TIMEOUT : API_REQUEST_TIMEOUT;
		if (e->receiving && !e->closing && now - e->since > limit * USEC_PER_SEC)
			conn_close(e, e->probation ? "no authenticated request in time" :
						     "the request took too long to arrive");
	}
	if (c->list)
		loop_timer_set_rel(c->sweep, SWEEP_INTERVAL);
	return 0;
}
