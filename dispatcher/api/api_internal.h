/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * api_internal.h -- what the api*.c files share: requests, identities, replies
 *
 * api.c owns the listeners and the request life cycle: it collects the body
 * (at most API_MAX_BODY bytes), identifies the client (api_auth.c), finds the
 * route and calls its handler once the whole request arrived.  A handler
 * answers exactly once through one of the api_reply_*() functions and returns
 * what they return.  Handlers run on the loop thread and must not block.
 *
 * Every handler (GET or POST) runs inside a read context of the store
 * (store_read_begin()): a read that goes to the database (PostgreSQL) fails
 * with -EINPROGRESS, the connection is suspended, and the handler runs again
 * once the answers are in, answered from them.  So a handler reads first
 * and acts (writes, cancels, powers) only after every read succeeded: a run
 * whose read failed returns before acting (its answer is dropped).  After
 * acting, an answer that reads again (the job as canceled) is made through
 * api_answer_after(), so that only the answer runs again, never the act.
 *
 * Only api/ includes this header (and microhttpd.h).
 */
#ifndef LABD_API_INTERNAL_H
#define LABD_API_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "api/api.h"
#include "board/lab.h"
#include "core/strbuf.h"
#include "job/job.h"
#include "core/jobstate.h"
#include "session/users.h"

struct api;
struct api_listener;
struct api_logs;
struct api_rpc;
struct api_metrics;
struct api_streams;
struct api_ws;
struct board;
struct diag;
struct job_record;
struct store;

#define API_PREFIX "/api/v1"
#define API_LAVA_PREFIX "/api/v0.2"		/* LAVA's REST API (api_lava_rest.c) */
#define API_MAX_BODY JOB_MAX_SIZE		/* bytes of a request body */
#define API_MAX_CONNECTIONS 512			/* per listener, followers included */
#define API_MAX_ANONYMOUS 256			/* not authenticated, before probation */
#define API_MAX_PER_CLIENT 32			/* per client address, before probation */
#define API_CONNECTION_TIMEOUT 60		/* seconds a client may stay silent */
#define API_REQUEST_TIMEOUT 30			/* seconds to send a whole request */
#define API_PROBATION_TIMEOUT 5			/* ... on probation (api_conns.c) */
#define API_MAX_HEADERS (16 * 1024)		/* bytes of a request's header fields */
#define API_MAX_URL (8 * 1024)			/* bytes of a request's URL */
/*
 * libmicrohttpd's memory per connection: the request's line and header fields
 * (up to API_MAX_URL + API_MAX_HEADERS, t4100 sends both at once), then the
 * buffer a response is sent from; bodies pass through it in pieces.  It zeroes
 * the whole pool after every request, and maps a pool above 32 KiB afresh for
 * each connection (every page faulted in again): 256 KiB cost a new connection
 * 0.2 ms of labd's CPU, 32 KiB (malloc'ed, reused) 0.06 ms.
 */
#define API_MEMORY_LIMIT (32 * 1024)
#define API_LISTEN_BACKLOG 64
#define API_MAX_LIST 1000			/* ?limit= of the job list */
#define API_DEFAULT_LIST 100
#define API_MAX_PARAMS 2			/* '*' segments of a route */
#define API_IDENTITY_MAX 64

/*
 * Who sent a request: a configured user ("alice"), "token:<8 hex digits of
 * its hash>" (http.tokens), "uid:1000" or "root" (Unix socket), "anonymous".
 * Roles are users.h's; what each may do is decided in api_auth.c.
 */
struct api_identity {
	char name[API_IDENTITY_MAX];
	enum user_role role;
	bool is_user;		/* a user of labd.conf's `users` */
	bool bad_token;		/* a token was given and matched none */
	bool basic;		/* it came as HTTP Basic user:token (XML-RPC clients) */
	bool anonymous;		/* no credentials at all (TCP without Authorization) */
	bool bad_forward;	/* an identity said forwarded, not signed with the lab's secret */
};

/*
 * How a request's errors are answered, by the API it addresses: labd's own
 * {"error": ...}; LAVA's REST API (Django REST Framework) {"detail": ...};
 * XML-RPC (/RPC2) a <fault> with the HTTP status as faultCode.
 */
enum api_style {
	API_STYLE_JSON,
	API_STYLE_DRF,
	API_STYLE_XMLRPC,
};

struct api_request;

/* An answer made after the handler acted (api_answer_after()): @status, about @id. */
typedef enum MHD_Result (*api_answer_fn)(struct api_request *r, unsigned status, int64_t id);

struct api_request {
	struct api_listener *listener;
	struct MHD_Connection *conn;
	const char *method;
	const char *url;
	struct strbuf body;
	bool replied;
	unsigned status;	/* of the answer, for the request counters */
	struct api_identity who;
	char *path;		/* copy of the URL path, split at '/' for params */
	const char *params[API_MAX_PARAMS];	/* segments matched by '*' */
	enum api_style style;
	void *stream;		/* a log follower (api_log.c), or NULL */
	/* a handler's own state for the request's lifetime (a streamed
	 * response), freed with ctx_free() when the request ends */
	void *ctx;
	void (*ctx_free)(void *ctx);
	void *sse;		/* a Server-Sent Events client (api_stream.c), or NULL */
	/* an operation the handler waits for with the connection suspended */
	void *pending;
	void (*pending_gone)(struct api_request *r);	/* the connection ended first */
	/* the answer, held (connection suspended) until the store committed (api_reply()) */
	struct MHD_Response *held;
	unsigned held_status;
	bool held_ready;
	struct api_request *held_next, **held_pprev;
	/* a run whose store reads complete later (store_read_begin()): run again */
	bool reading;		/* inside the handler's run: api_reply() drops a pending run's answer */
	bool rerun;		/* suspended until the answers are in, then run again */
	/* the handler acted: what runs again is this answer (api_answer_after()) */
	api_answer_fn answer;
	unsigned answer_status;
	int64_t answer_id;
	unsigned route_flags;	/* of its route: API_ROUTE_* */
	/* usec a request forwarded to another host may take (api_job_forward()); 0: forever */
	uint64_t forward_timeout;
	/*
	 * Of a route whose board is named in the body (a shared store): run
	 * first, in read mode, it answers for a board of another host
	 * (api_board_forwarded()) or sets located; the handler then acts here.
	 */
	enum MHD_Result (*locate)(struct api_request *r);
	bool located;
};

typedef enum MHD_Result (*api_handler_fn)(struct api_request *r);

struct api_route {
	const char *method;
	const char *path;	/* below its API's prefix; '*' matches one segment */
	enum user_role role;
	api_handler_fn fn;
	const char *what;	/* for "may not ...": a format of the first '*' segment */
};

/*
 * api_request.route_flags (api.c's board_routes[]): the first '*' segment names a board.  When it is none of
 * this host's but another host of the lab (a shared store) has it, the
 * request is answered by api_board_elsewhere() instead of the handler:
 * forwarded to that host (API_ROUTE_BOARD), or, for a loopback telnet port
 * (API_ROUTE_BOARD_RELAY), one of this host's relayed there (api_telnet.c).
 */
#define API_ROUTE_BOARD 0x1
#define API_ROUTE_BOARD_RELAY 0x2

/**
 * api_route_at() - route @i of labd's own API (API_PREFIX), for its
 * reference (doc/api.md is checked against them); NULL past the last.
 * @query: the query parameters it takes, blank-separated ("" for none)
 */
const struct api_route *api_route_at(size_t i, const char **query);

/* ---- api.c: listeners, replies and request helpers ---- */

/** api_deps_of() - what the API serves (api.h): store, scheduler, lab ... */
const struct api_deps *api_deps_of(const struct api_request *r);
struct api_logs *api_logs_of(const struct api_request *r);
struct api_rpc *api_rpc_of(const struct api_request *r);
struct api_metrics *api_metrics_of(const struct api_request *r);
struct api_streams *api_streams_of(const struct api_request *r);
struct api_ws *api_ws_of(const struct api_request *r);
bool api_listener_is_unix(const struct api_listener *l);
bool api_listener_needs_token(const struct api_listener *l);

/** api_listener_poke() - run libmicrohttpd soon (after resuming a connection). */
void api_listener_poke(struct api_listener *l);

/** api_reply_json() - answer @status with @body (reference stolen; NULL: "{}"). */
enum MHD_Result api_reply_json(struct api_request *r, unsigned status, json_t *body);

/**
 * api_reply_error() - answer an error in the request's style: {"error":
 * "<message>"}, {"detail": "<message>"} (LAVA's REST API) or an XML-RPC
 * fault whose code is @status.
 */
enum MHD_Result api_reply_error(struct api_request *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What retention removed of a finished job (journal/retention.h). */
enum api_gone {
	API_GONE_LOG,		/* its console log */
	API_GONE_HISTORY,	/* its results and events */
};

/**
 * api_gone_text() - "the log of job 5 was removed on <time> (labd.conf
 * retention)" into @buf, or NULL when @rec still has @what.
 */
const char *api_gone_text(const struct job_record *rec, enum api_gone what, char *buf,
			  size_t len);

/**
 * api_reply_gone() - answer 410 Gone when retention removed @what of @rec:
 * {"error": <api_gone_text()>, "job": 5, "removed": "log" or "results and
 * events", "removed_at": <time>} (LAVA's APIs: their error shape).  Returns
 * true with *@ret set when it answered, false when @rec still has @what.
 */
bool api_reply_gone(struct api_request *r, const struct job_record *rec, enum api_gone what,
		    enum MHD_Result *ret);

/** api_error_response() - the response api_reply_error() sends, or NULL (ENOMEM). */
struct MHD_Response *api_error_response(const struct api_request *r, unsigned status,
					const char *msg);

/** api_reply_diag() - answer {"error": @error, "errors": [every message of @diag]}. */
enum MHD_Result api_reply_diag(struct api_request *r, unsigned status, const char *error,
			       const struct diag *diag);

/** api_json_response() - a JSON response of @body (reference stolen), or NULL (ENOMEM). */
struct MHD_Response *api_json_response(json_t *body);

/**
 * api_reply() - queue @resp (a reference is dropped, also on failure)
 *
 * Every answer leaves once the store has committed what the request (and
 * anything before it) wrote: a job's id only once the job is durable.  When
 * the store has a commit pending (store_sync()), the connection is suspended
 * with the answer held and resumed after the commit; a failed commit turns
 * the answer into a 503.
 */
enum MHD_Result api_reply(struct api_request *r, unsigned status, struct MHD_Response *resp);

/**
 * api_answer_after() - answer with @fn(@r, @status, @id) once the handler
 * acted: @fn reads what the act changed (a job canceled, a reservation made)
 * in a read context of its own, and when those reads go to the database, the
 * request is suspended and @fn alone runs again with their answers, not the
 * handler that acted (r->ctx is kept for it).  @fn only reads and answers,
 * or acts in steps of its own, each in a context of its own
 * (api_answer_afresh()) and done once: a step whose reads went to the
 * database acted on nothing, it is the one run again (an XML-RPC
 * system.multicall, one call a step).  Returns what @fn returns.
 */
enum MHD_Result api_answer_after(struct api_request *r, api_answer_fn fn, unsigned status,
				 int64_t id);

/**
 * api_answer_afresh() - in an answer of api_answer_after(): what was read
 * so far was all answered (the store read nothing pending), what follows
 * reads in a read context of its own, so that only it runs again when its
 * reads go to the database.
 */
void api_answer_afresh(struct api_request *r);

/** api_query() - the query argument @key, or NULL. */
const char *api_query(const struct api_request *r, const char *key);

/** api_query_bool() - "1", "true" or "yes"; false when absent. */
bool api_query_bool(const struct api_request *r, const char *key);

/**
 * api_query_int() - the integer query argument @key within [@min, @max]
 *
 * Returns 1 (stored in @ret), 0 when absent (@ret untouched) or -EINVAL.
 */
int api_query_int(const struct api_request *r, const char *key, int64_t min, int64_t max,
		  int64_t *ret);

/** api_param_id() - the positive job id in path segment @i; -EINVAL otherwise. */
int api_param_id(const struct api_request *r, unsigned i, int64_t *ret);

/** api_time_json() - realtime usec as an ISO-8601 UTC string, 0 as null. */
json_t *api_time_json(uint64_t usec);

/** api_json_str() - a JSON string of @s (bytes that are not UTF-8 become '?'); NULL: null. */
json_t *api_json_str(const char *s);

/** api_base_url() - "http://HOST" of the request (Host header), caller frees. */
char *api_base_url(const struct api_request *r);

/* ---- api_conns.c: who holds the connections (see there) ---- */

struct api_conns;
struct loop;

/** api_conns_new() - connection records of the listener at @where (borrowed). */
int api_conns_new(struct loop *loop, const char *where, bool is_unix, struct api_conns **ret);
/** api_conns_free() - after libmicrohttpd closed every connection; returns NULL. */
struct api_conns *api_conns_free(struct api_conns *c);
/** api_conns_notify() - libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION, passed on. */
void api_conns_notify(struct api_conns *c, struct MHD_Connection *conn, void **ctx,
		      enum MHD_ConnectionNotificationCode code);
/**
 * api_conns_admit() - a request's headers came (@authenticated: with a valid
 * token); false when its connection is on probation and it is anonymous: the
 * caller answers 503 and the connection is closed.
 */
bool api_conns_admit(struct MHD_Connection *conn, bool authenticated);
/** api_conns_received() - the request arrived whole (or was answered early): no longer timed. */
void api_conns_received(struct MHD_Connection *conn);
/** api_conns_done() - the request ended: the connection's next request is timed from now. */
void api_conns_done(struct MHD_Connection *conn);

/* ---- api_auth.c: who is asking, and may they ---- */

/** api_identify() - fill r->who from the connection and its Authorization header. */
void api_identify(struct api_request *r);

/*
 * A request one host of a lab forwards to another (api_forward.c, api_tunnel.c)
 * may carry the identity the first host established (a Unix socket's peer,
 * which the other host cannot see): the user's name and role, the time, and
 * an HMAC-SHA256 of them, the request's method and path with the lab's
 * secret (store_lab_secret()).  The other host takes it as the request's
 * identity when the HMAC is right and the time within API_FWD_MAX_SKEW of
 * its own; any of these headers otherwise makes the request 401.
 */
#define API_FWD_USER_HEADER "X-Labd-Forwarded-User"
#define API_FWD_ROLE_HEADER "X-Labd-Forwarded-Role"
#define API_FWD_AUTH_HEADER "X-Labd-Forwarded-Auth"	/* "<unix time>.<hex HMAC>" */
#define API_FWD_MAX_SKEW 300				/* seconds */

/* The three header lines ("Name: value") of a forwarded identity. */
struct api_forward_id {
	char user[API_IDENTITY_MAX + 32];
	char role[64];
	char auth[128];
};

/**
 * api_forward_identity() - the headers vouching for @who on a request of
 * @method to @path (without its query) forwarded to another host.  Returns
 * 0, or -ENOENT without a lab secret (one host).
 */
int api_forward_identity(struct store *st, const struct api_identity *who, const char *method,
			 const char *path, struct api_forward_id *ret);

/** api_authenticated() - whether r->who came with a valid token (or a Unix socket peer). */
bool api_authenticated(const struct api_request *r);

/* Why a request may not do something: 401 (no or a bad token) or 403, and why. */
struct api_denial {
	unsigned status;
	char msg[384];
};

/**
 * api_check() - the role check of every request: may r->who act with @need?
 * @what: what it would do, for the 403 message ("submit jobs")
 *
 * Returns 0, or -EACCES with @d filled.  api_authorize() answers @d at once;
 * XML-RPC methods answer it as a fault.
 */
int api_check(const struct api_request *r, enum user_role need, const char *what,
	      struct api_denial *d);

/** api_check_owner() - api_authorize_owner()'s check, without answering. */
int api_check_owner(const struct api_request *r, const char *owner, const char *what,
		    struct api_denial *d);

/** api_reply_denial() - answer @d in the request's style (401 with WWW-Authenticate). */
enum MHD_Result api_reply_denial(struct api_request *r, const struct api_denial *d);

/**
 * api_authorize() - the role check of every request (api.c calls it with the
 * route's role and what the route does: "set the state of board 'sim-01'")
 *
 * Returns 0 when r->who may act with @need; otherwise answers 401 (no or a
 * wrong token) or 403 ("user 'alice' (developer) may not <what>") and
 * returns -EACCES.
 */
int api_authorize(struct api_request *r, enum user_role need, const char *what);

/**
 * api_authorize_holder() - a developer acts only on a board it holds (an
 * admin on any board): 0, or answers 403 and returns -EACCES.
 * @what: "power board 'sim-01'"
 */
int api_authorize_holder(struct api_request *r, struct board *b, const char *what);

/**
 * api_authorize_owner() - jobs and reservations are their owner's (and any
 * admin's): 0 when @owner is r->who, or answers 403 and returns -EACCES.
 */
int api_authorize_owner(struct api_request *r, const char *owner, const char *what);

/** api_is_holder() - whether r->who holds @b (admins do not, unless they reserved it). */
bool api_is_holder(const struct api_request *r, const struct board *b);

/** api_resume() - the operation of a suspended request finished: run its handler again. */
void api_resume(struct api_request *r);

/* ---- handlers ---- */

enum MHD_Result api_health(struct api_request *r);
/* api_reload.c */
enum MHD_Result api_reload(struct api_request *r);

/* api_jobs.c */
enum MHD_Result api_jobs_submit(struct api_request *r);
enum MHD_Result api_jobs_list(struct api_request *r);
enum MHD_Result api_jobs_show(struct api_request *r);
enum MHD_Result api_jobs_cancel(struct api_request *r);
enum MHD_Result api_jobs_events(struct api_request *r);
enum MHD_Result api_jobs_results(struct api_request *r);

/* api_results.c */
enum MHD_Result api_results_junit(struct api_request *r);
enum MHD_Result api_results_kcidb(struct api_request *r);

/* api_overlays.c */
enum MHD_Result api_overlays_get(struct api_request *r);

/* api_devices.c */
/**
 * api_token_hash() - @token's SHA-256 in @hash and as "sha256:<hex>" in
 * @text (@len bytes; 72 are enough), the form the store keeps (api_auth.c).
 */
void api_token_hash(const char *token, unsigned char *hash, char *text, size_t len);

/** POST /tokens: a new token for a user, kept in the store (api_tokens.c). */
enum MHD_Result api_tokens_create(struct api_request *r);

/** api_board_json() - a board as GET /devices shows it (new reference). */
json_t *api_board_json(const struct api_deps *d, const struct board *b);
enum MHD_Result api_devices_list(struct api_request *r);
enum MHD_Result api_devices_show(struct api_request *r);
enum MHD_Result api_devices_set_state(struct api_request *r);
/**
 * api_board_set_state() - r->who takes board @b out (maintenance) or puts it
 * back (idle); the reason says who: 0, or -EINVAL (another state).
 */
int api_board_set_state(struct api_request *r, struct board *b, enum device_state s,
			const char *reason);

/* api_reservations.c: reservations, release and renew */
enum MHD_Result api_reservations_list(struct api_request *r);
enum MHD_Result api_reservations_create(struct api_request *r);
/** api_reservations_locate() - a reservation of another host's board: that host answers. */
enum MHD_Result api_reservations_locate(struct api_request *r);
enum MHD_Result api_reservations_show(struct api_request *r);
enum MHD_Result api_reservations_cancel(struct api_request *r);
enum MHD_Result api_devices_release(struct api_request *r);
enum MHD_Result api_devices_renew(struct api_request *r);

/* api_sessions.c: what a holder does with its board: power, boot, telnet */
enum MHD_Result api_devices_power(struct api_request *r);
enum MHD_Result api_devices_boot(struct api_request *r);
enum MHD_Result api_devices_telnet(struct api_request *r);
/*
 * GET /devices/{name}/telnet with "Upgrade: labd-telnet": a client of the
 * board's telnet port that comes through another host of the lab
 * (api_telnet.c), its bytes telnet's; with ?watch=1, that host's watch of
 * the port, which gets one line, the reason, when the port closes.
 */
#define API_TELNET_UPGRADE "labd-telnet"
enum MHD_Result api_devices_telnet_attach(struct api_request *r);

/**
 * api_sessions_shutdown() - before the listeners stop: close every console
 * viewer and answer every request waiting for a power operation, since
 * libmicrohttpd must get its upgraded and suspended connections back.
 */
void api_sessions_shutdown(const struct api_deps *d);

/* api_console.c: the live console over an upgraded connection (doc/console.md) */
enum MHD_Result api_console_attach(struct api_request *r);

/* ---- api_lava_rest.c, api_lava_rpc.c: LAVA's APIs for LAVA's clients (doc/lava-compat.md) ---- */

/* Routes below API_LAVA_PREFIX, and the /RPC2 route; both end with a NULL method. */
extern const struct api_route api_lava_rest_routes[];
extern const struct api_route api_lava_rpc_routes[];

/** api_rpc_new() - the XML-RPC method registry (one per API). */
int api_rpc_new(struct api_rpc **ret);

/** api_rpc_free() - accepts NULL; returns NULL. */
struct api_rpc *api_rpc_free(struct api_rpc *rpc);

/** api_rpc_fault_response() - an XML-RPC fault response {faultCode, faultString}, or NULL. */
struct MHD_Response *api_rpc_fault_response(int code, const char *msg);
/* api_ws.c: the same console in a browser, over a WebSocket */
int api_ws_new(const struct api_deps *d, struct api_ws **ret);
/** api_ws_shutdown() - close every browser console (before the listeners stop). */
void api_ws_shutdown(struct api_ws *set);
struct api_ws *api_ws_free(struct api_ws *set);
/** api_upgrade_asked() - whether @r asks to switch to @proto ("Connection: Upgrade"). */
bool api_upgrade_asked(struct api_request *r, const char *proto);
/**
 * api_upgraded_closer() - the userdata of api_upgraded_close(), a
 * viewer_close_fn closing the upgraded socket of @urh, or NULL (out of
 * memory: closed already).
 */
void *api_upgraded_closer(struct api_request *r, struct MHD_UpgradeResponseHandle *urh);
void api_upgraded_close(int fd, void *userdata);

/** api_ws_wanted() - whether @r asks for a WebSocket ("Upgrade: websocket"). */
bool api_ws_wanted(struct api_request *r);
/** api_ws_console() - answer 101 and bridge the WebSocket to a viewer of @b. */
enum MHD_Result api_ws_console(struct api_request *r, struct board *b);

/* ---- api_forward.c: a request another host of the lab answers (api_forward.c) ---- */

struct api_telnet;
struct forward;
struct http_response;
struct tunnel;

/*
 * What this host forwards: requests streamed (api_forward.c), consoles
 * tunneled (api_tunnel.c), telnet ports relayed (api_telnet.c).
 */
struct api_forwards {
	struct forward *list;
	struct tunnel *tunnels;
	struct api_telnet *telnets;
	struct store *store;
	/* while there are tunnels: whether their hosts were reaped (api_tunnel.c) */
	struct loop_source *reap_timer;
	bool reap_checking;	/* a check's reads are on their way */
};

#define API_FORWARDED_HEADER "X-Labd-Forwarded-By"	/* the host that forwarded it */

/**
 * api_forward() - answer @r with what @host (its API at @base_url) answers
 * to the same request: method, path, query, body and Authorization, the
 * answer streamed back as it comes.  The connection is suspended until the
 * other host's head is in; the handler is then called again and answers
 * with api_forward_answer() (check api_forwarding() first).
 */
enum MHD_Result api_forward(struct api_request *r, const char *host, const char *base_url);
/* The answer of a call api_forward_call() sent (resp->body: whole; resp->err: none came). */
typedef void (*api_call_done_fn)(struct api_request *r, const struct http_response *resp,
				 void *ud);
/**
 * api_forward_call() - send @body, a request of @r's kind (its method and
 * path, Authorization, API_FORWARDED_HEADER), to @host, another host of the
 * lab, its answer collected whole within API_FORWARD_ACT_TIMEOUT: one call
 * of an XML-RPC system.multicall that @host acts on (a cancel of a job it
 * runs).  @done(@r, resp, @ud) is called once from the loop (resp->err
 * -ESHUTDOWN when labd stops first), unless api_forward_call_cancel(*@ret)
 * first; the caller suspends @r meanwhile and resumes it from @done.
 * Returns 0, -ELOOP (@r came forwarded: not forwarded again), -EINPROGRESS
 * (@host's address is being read: a read context's run, done again),
 * -ENOTCONN (the store is away), -ENOENT (@host has no API address) or
 * -ENOMEM.
 */
int api_forward_call(struct api_request *r, const char *host, const void *body, size_t len,
		     api_call_done_fn done, void *ud, struct forward **ret);
/** api_forward_call_cancel() - drop a call api_forward_call() sent; accepts NULL. */
void api_forward_call_cancel(struct forward *f);
/** api_forwarding() - whether @r is being forwarded: its handler calls api_forward_answer(). */
bool api_forwarding(const struct api_request *r);
/** api_forward_answer() - the other host's answer, or 502 when it did not give one. */
enum MHD_Result api_forward_answer(struct api_request *r);
/**
 * api_forward_url() - @base_url with @r's path and query (caller frees), or NULL.
 * api_forward_url_parts() - of a URL, "PATH?QUERY" and "HOST:PORT" (caller frees both).
 */
char *api_forward_url(const struct api_request *r, const char *base_url);
int api_forward_url_parts(const char *url, char **target, char **host);

/*
 * api_tunnel.c: an upgrade request (the console: labd's protocol or a
 * WebSocket) made again to @host at @base_url; once it switched, this host
 * switches too and passes the bytes both ways.  api_elsewhere() starts it
 * for a request that asks for an upgrade (api_tunnel_wanted()); the
 * handler answers with api_forward_answer() as for a forward.
 */
bool api_tunnel_wanted(const struct api_request *r);
enum MHD_Result api_tunnel(struct api_request *r, const char *host, const char *base_url);
bool api_tunneling(const struct api_request *r);
enum MHD_Result api_tunnel_answer(struct api_request *r);
/**
 * api_tunnels_start() - the timer of @set that ends the tunnels to a host
 * once it was reaped (a stopped host's kernel may keep them open), armed
 * while there are tunnels; 0 or a negative errno.
 * api_tunnels_shutdown() - labd stops: every tunnel ends, its clients told.
 */
int api_tunnels_start(struct api_forwards *set, struct loop *loop);
void api_tunnels_shutdown(struct api_forwards *set);

/* What a tunnel of this host's own asks of another host (api_tunnel_open()). */
struct api_tunnel_params {
	const char *host;	/* the other host's name, for errors */
	const char *url;	/* the URL of the upgrade request there */
	const char *upgrade;	/* the protocol asked ("labd-telnet") */
	const char *headers;	/* more header lines, each ending in CRLF, or NULL */
	/* the answer is in: api_tunnel_status() says which; may free the tunnel */
	void (*answered)(struct tunnel *t, void *userdata);
	void *userdata;
};

/* The tunnel ended (@why: the host's end, or NULL: the client's); it is freed after. */
typedef void (*api_tunnel_closed_fn)(int fd, const char *why, void *userdata);

/** api_tunnel_open() - connect to p->host and ask for the upgrade; 0 or a negative errno. */
int api_tunnel_open(struct api_forwards *set, const struct api_deps *d,
		    const struct api_tunnel_params *p, struct tunnel **ret);
/**
 * api_tunnel_status() - the answer: 101 (switched), another status (refused,
 * @body its body) or 0 (failed, @body why).
 */
long api_tunnel_status(const struct tunnel *t, const char **body, size_t *len);
/**
 * api_tunnel_pump() - once switched, pass the bytes both ways between @fd
 * and the other host (@fd -1: keep what it sends, api_tunnel_received())
 * until either ends: then @closed, and the tunnel is freed.
 */
int api_tunnel_pump(struct tunnel *t, int fd, api_tunnel_closed_fn closed, void *userdata);
const char *api_tunnel_received(const struct tunnel *t, size_t *len);
/** api_tunnel_free() - close it (not calling its closed function); accepts NULL. */
void api_tunnel_free(struct tunnel *t);

/*
 * api_telnet.c: POST /devices/{name}/telnet for @board of @host, another
 * host of the lab: a loopback port on this host relayed to the board's
 * port there, open as long as that one is (the answer once that host
 * agreed; its refusal as it came).  The handler answers with
 * api_telnet_answer() when api_telnet_relaying().
 */
enum MHD_Result api_telnet_relay(struct api_request *r, const char *board, const char *host);
bool api_telnet_relaying(const struct api_request *r);
enum MHD_Result api_telnet_answer(struct api_request *r);
/** api_telnets_shutdown() - close the relayed ports (labd stops); api_telnets_free() the rest. */
void api_telnets_shutdown(struct api_forwards *set);
void api_telnets_free(struct api_forwards *set);

/**
 * api_elsewhere() - whether what @r asks lives on @host, another host of the
 * lab (NULL: this one), and was answered there: true with @ret what the
 * handler returns (the forward started, or an error answered)
 */
bool api_elsewhere(struct api_request *r, const char *host, enum MHD_Result *ret);
/**
 * api_job_forward() - the answer to @r, which acts on the run of job @id
 * (a cancel), when @host, another host of the lab, runs it
 * (sched_cancel()'s -EREMOTE): the same request forwarded there, its
 * answer that host's (api_forwarding(), api_forward_answer() when the
 * handler runs again; 502 naming it when it does not answer within
 * API_FORWARD_ACT_TIMEOUT).  A request that came forwarded is not
 * forwarded again: 409 (the job moved on).
 */
#define API_FORWARD_ACT_TIMEOUT (30ULL * 1000 * 1000)	/* usec */
enum MHD_Result api_job_forward(struct api_request *r, int64_t id, const char *host);
/**
 * api_reply_canceled() - the answer to a cancel of job @rec, read back after
 * it was written: forwarded to the host that started it meanwhile (the store
 * left it to that host, sched_runs_elsewhere()), else @status with @body
 * (stolen).
 */
enum MHD_Result api_reply_canceled(struct api_request *r, const struct job_record *rec,
				   unsigned status, json_t *body);
/**
 * api_board_forwarded() - whether @board is a board of another host of the
 * lab (none of this one's): true with @ret the answer, that host's
 * (forwarded) or, @relay, a telnet port of this host relayed there
 * (api_telnet_relay()); false for a board of this host or of none.  Its
 * store read may complete later (a run in read mode, api.c).
 */
bool api_board_forwarded(struct api_request *r, const char *board, bool relay,
			 enum MHD_Result *ret);
/**
 * api_board_elsewhere() - the answer to @r for board params[0] of another
 * host (api_request.route_flags): forwarded there, a telnet port relayed there, 404
 * when no host has it.  Its store reads may complete later (a GET's run, api.c).
 */
enum MHD_Result api_board_elsewhere(struct api_request *r);
/**
 * api_vouch() - the headers of @r's identity for the host it is forwarded
 * to, when that host cannot tell it (a Unix socket's peer): true with @id.
 */
bool api_vouch(const struct api_request *r, struct api_forward_id *id);
/** api_forwarded() - whether @r came forwarded by another host (it is not forwarded again). */
bool api_forwarded(const struct api_request *r);
/** api_forwards_new() - the set, of @d's store and loop; 0 or a negative errno. */
int api_forwards_new(const struct api_deps *d, struct api_forwards **ret);
/** api_forwards_shutdown() - end every forwarded request (before the listeners stop). */
void api_forwards_shutdown(struct api_forwards *set);
struct api_forwards *api_forwards_free(struct api_forwards *set);
struct api_forwards *api_forwards_of(const struct api_request *r);

/* ---- api_log.c: console logs, whole or followed live ---- */

enum MHD_Result api_log_get(struct api_request *r);
enum MHD_Result api_log_labd(struct api_request *r);

/** api_logs_new() - start watching job logs and events for followers. */
int api_logs_new(const struct api_deps *d, struct api_logs **ret);

/**
 * api_logs_shutdown() - end every follower: their streams stop with an
 * error at the next read.  Suspended connections are resumed, as
 * libmicrohttpd requires before its daemon stops.
 */
void api_logs_shutdown(struct api_logs *logs);

/** api_logs_free() - after the listeners stopped; accepts NULL; returns NULL. */
struct api_logs *api_logs_free(struct api_logs *logs);

/** api_log_request_done() - the connection of @r is gone: forget its follower. */
void api_log_request_done(struct api_request *r);

/* ---- api_queue.c: the queue per device type (GET /queue, /device-types, /metrics) ---- */

#define DEVICE_STATE_COUNT (DEVICE_STATE_BAD + 1)

/** What one device type has: its boards by state and its queue. */
struct api_type_stat {
	const char *name;		/* borrowed from the configuration */
	size_t boards[DEVICE_STATE_COUNT];	/* by enum device_state */
	size_t console_down;
	int64_t queued;			/* jobs waiting for a board of the type */
	uint64_t oldest;		/* submission time (realtime usec) of the oldest, or 0 */
	int64_t reservations;		/* reservations waiting for one */
	uint64_t oldest_reservation;	/* ... the oldest's submission time, or 0 */
};

struct api_type_stats {
	struct api_type_stat *types;	/* every configured type, by name */
	size_t n;
};

/** api_type_stats_collect() - one pass over the boards and the queue; -ENOMEM, -EIO. */
int api_type_stats_collect(const struct api_deps *d, struct api_type_stats *ret);
void api_type_stats_release(struct api_type_stats *s);

#define API_MAX_RECENT 100	/* GET /devices?recent=N */

/** api_board_recent() - the last @n finished jobs of board @name: [{"id", "health", "fail"}...]. */
json_t *api_board_recent(const struct api_deps *d, const char *name, unsigned n);

/**
 * api_job_waiting() - what queued job @rec waits for: {"position", "boards":
 * [{"name", "state", "job", "holder", "reason"}] (those of its type and
 * tags), "text": "position 2 in the 'sim-uboot' queue; sim-01 runs job 31"}
 */
json_t *api_job_waiting(const struct api_deps *d, const struct job_record *rec);
enum MHD_Result api_queue_get(struct api_request *r);
enum MHD_Result api_device_types(struct api_request *r);
enum MHD_Result api_whoami(struct api_request *r);

/* ---- api_metrics.c: GET /metrics (Prometheus' text format) ---- */

int api_metrics_new(const struct api_deps *d, struct api_metrics **ret);
struct api_metrics *api_metrics_free(struct api_metrics *m);

/**
 * api_metrics_count() - one request answered: @route is the route's pattern
 * below @prefix ("/jobs/ *"), NULL when no route matched; @status 0 when
 * nothing was answered (the client went away).
 */
void api_metrics_count(struct api_metrics *m, const char *route, const char *prefix,
		       unsigned status);
enum MHD_Result api_metrics_get(struct api_request *r);

/* ---- api_web.c: the dashboard's files ---- */

enum MHD_Result api_web_get(struct api_request *r);

/* ---- api_stream.c: GET /stream, the lab's changes as Server-Sent Events ---- */

int api_streams_new(const struct api_deps *d, struct api_streams **ret);
/** api_streams_shutdown() - end every stream (resumes their connections). */
void api_streams_shutdown(struct api_streams *s);
struct api_streams *api_streams_free(struct api_streams *s);
enum MHD_Result api_stream_get(struct api_request *r);
void api_stream_request_done(struct api_request *r);

#endif
