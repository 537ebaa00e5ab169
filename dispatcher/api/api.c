// SPDX-License-Identifier: GPL-2.0-or-later
/* api.c -- labd's HTTP API: listeners in the loop, the request life cycle, routing */
#include "api/api.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/version.h"
#include "journal/joblog.h"
#include "store/store.h"

#define API_MAX_LISTENERS 2	/* http.listen and http.unix_socket */
#define API_MAX_SEGMENTS 6	/* "/jobs/12/suites/3/tests" (LAVA's) has 5 */
#define API_MAX_TIMEOUT_MS (24ULL * 3600 * 1000)

/*
 * One libmicrohttpd daemon per listening socket, in "external epoll" mode:
 * its epoll fd sits in labd's loop, MHD_run() runs when it is readable and
 * when the timer armed from MHD_get_timeout() expires.
 */
struct api_listener {
	struct api *api;
	struct MHD_Daemon *mhd;
	struct loop_source *io;
	struct loop_source *timer;
	struct loop_source *poke;	/* a defer: libmicrohttpd runs once at the next turn */
	char *where;		/* "127.0.0.1:8640", "[::1]:8640", "unix:/run/labd.sock" */
	char *unix_path;	/* removed when labd stops */
	bool is_unix;
	bool needs_token;
	int port;
	struct api_conns *conns;	/* limits and request timing (api_conns.c) */
};

struct api {
	struct api_deps d;
	struct api_logs *logs;
	struct api_rpc *rpc;
	struct api_metrics *metrics;	/* api_metrics.c: request counters, loop lag */
	struct api_streams *streams;	/* api_stream.c: Server-Sent Events */
	struct api_ws *ws;		/* api_ws.c: browser consoles */
	struct api_forwards *forwards;	/* api_forward.c: requests another host answers */
	struct api_listener listeners[API_MAX_LISTENERS];
	size_t n_listeners;
	struct api_request *held;	/* answers waiting for the store's commit */
};

static const struct api_route routes[] = {
	{ "GET", "/health", USER_ROLE_NONE, api_health, "ask" },
	{ "GET", "/whoami", USER_ROLE_NONE, api_whoami, "ask" },
	{ "POST", "/tokens", USER_ROLE_ADMIN, api_tokens_create, "make tokens" },
	{ "POST", "/reload", USER_ROLE_ADMIN, api_reload, "reload the lab's configuration" },
	{ "GET", "/queue", USER_ROLE_READER, api_queue_get, "read the queue" },
	{ "GET", "/device-types", USER_ROLE_READER, api_device_types, "list device types" },
	{ "GET", "/stream", USER_ROLE_READER, api_stream_get, "watch the lab" },
	{ "GET", "/overlays/*", USER_ROLE_NONE, api_overlays_get, "download overlay %s" },
	{ "GET", "/jobs", USER_ROLE_READER, api_jobs_list, "list jobs" },
	{ "POST", "/jobs", USER_ROLE_CI, api_jobs_submit, "submit jobs" },
	{ "GET", "/jobs/*", USER_ROLE_READER, api_jobs_show, "read job %s" },
	{ "POST", "/jobs/*/cancel", USER_ROLE_CI, api_jobs_cancel, "cancel job %s" },
	{ "GET", "/jobs/*/log", USER_ROLE_READER, api_log_get, "read the log of job %s" },
	{ "GET", "/jobs/*/labd", USER_ROLE_READER, api_log_labd, "read the log of job %s" },
	{ "GET", "/jobs/*/events", USER_ROLE_READER, api_jobs_events, "read the events of job %s" },
	{ "GET", "/jobs/*/results", USER_ROLE_READER, api_jobs_results,
	  "read the results of job %s" },
	{ "GET", "/jobs/*/junit", USER_ROLE_READER, api_results_junit,
	  "read the results of job %s" },
	{ "GET", "/jobs/*/kcidb", USER_ROLE_READER, api_results_kcidb,
	  "read the results of job %s" },
	{ "GET", "/devices", USER_ROLE_READER, api_devices_list, "list boards" },
	{ "GET", "/devices/*", USER_ROLE_READER, api_devices_show, "read board '%s'" },
	{ "POST", "/devices/*/state", USER_ROLE_ADMIN, api_devices_set_state,
	  "set the state of board '%s'" },
	{ "GET", "/devices/*/console", USER_ROLE_READER, api_console_attach,
	  "watch the console of board '%s'" },
	{ "POST", "/devices/*/release", USER_ROLE_DEVELOPER, api_devices_release,
	  "release board '%s'" },
	{ "POST", "/devices/*/renew", USER_ROLE_DEVELOPER, api_devices_renew,
	  "renew the reservation of board '%s'" },
	{ "POST", "/devices/*/power", USER_ROLE_DEVELOPER, api_devices_power,
	  "power board '%s'" },
	{ "POST", "/devices/*/boot", USER_ROLE_DEVELOPER, api_devices_boot, "boot board '%s'" },
	{ "POST", "/devices/*/telnet", USER_ROLE_DEVELOPER, api_devices_telnet,
	  "open a telnet port to board '%s'" },
	{ "GET", "/devices/*/telnet", USER_ROLE_DEVELOPER, api_devices_telnet_attach,
	  "use the telnet port of board '%s'" },
	{ "GET", "/reservations", USER_ROLE_READER, api_reservations_list, "list reservations" },
	{ "POST", "/reservations", USER_ROLE_DEVELOPER, api_reservations_create,
	  "reserve boards" },
	{ "GET", "/reservations/*", USER_ROLE_READER, api_reservations_show,
	  "read reservation %s" },
	{ "POST", "/reservations/*/cancel", USER_ROLE_DEVELOPER, api_reservations_cancel,
	  "cancel reservation %s" },
	{ NULL, NULL, 0, NULL, NULL },
};

/*
 * The query parameters each route of routes[] reads, blank-separated; a
 * route not listed takes none.  Any other parameter is answered 400: a typo
 * ("?colour=red", "?format=junit") must not be silently ignored.
 */
static const struct {
	const char *method, *path, *query;
} route_queries[] = {
	{ "GET", "/stream", "job" },
	{ "GET", "/jobs", "state health device device_type submitter limit before after" },
	{ "POST", "/jobs", "filename dry_run strict" },
	{ "GET", "/jobs/*/log", "offset timestamps labd follow tail lines" },
	{ "GET", "/jobs/*/labd", "after" },
	{ "GET", "/jobs/*/events", "after" },
	{ "GET", "/devices", "recent" },
	{ "GET", "/devices/*/console", "replay" },
	{ "GET", "/devices/*/telnet", "watch" },
	{ "GET", "/reservations", "all" },
};

static const char *query_of(const struct api_route *rt)
{
	size_t i;

	for (i = 0; i < sizeof(route_queries) / sizeof(route_queries[0]); i++)
		if (!strcmp(route_queries[i].method, rt->method) &&
		    !strcmp(route_queries[i].path, rt->path))
			return route_queries[i].query;
	return "";
}

/*
 * The routes of routes[] whose first '*' names a board, by handler: for a
 * board of another host of the lab, api_board_elsewhere() answers instead.
 */
static const struct {
	api_handler_fn fn;
	unsigned flags;
	api_handler_fn locate;	/* or, for a board named in the body: api_request.locate */
} board_routes[] = {
	{ api_devices_set_state, API_ROUTE_BOARD, NULL },
	{ api_devices_release, API_ROUTE_BOARD, NULL },
	{ api_devices_renew, API_ROUTE_BOARD, NULL },
	{ api_devices_power, API_ROUTE_BOARD, NULL },
	{ api_devices_boot, API_ROUTE_BOARD, NULL },
	{ api_devices_telnet, API_ROUTE_BOARD_RELAY, NULL },
	{ api_devices_telnet_attach, API_ROUTE_BOARD, NULL },
	{ api_reservations_create, 0, api_reservations_locate },
};

static void set_route(struct api_request *r, const struct api_route *rt)
{
	size_t i;

	for (i = 0; i < sizeof(board_routes) / sizeof(board_routes[0]); i++) {
		if (board_routes[i].fn == rt->fn) {
			r->route_flags = board_routes[i].flags;
			r->locate = board_routes[i].locate;
		}
	}
}

const struct api_route *api_route_at(size_t i, const char **query)
{
	if (i >= sizeof(routes) / sizeof(routes[0]) - 1)
		return NULL;
	*query = query_of(&routes[i]);
	return &routes[i];
}

/* Outside the APIs: Prometheus' /metrics; any other GET is the dashboard (api_web.c). */
static const struct api_route site_routes[] = {
	{ "GET", "/metrics", USER_ROLE_READER, api_metrics_get, "read the metrics" },
	{ NULL, NULL, 0, NULL, NULL },
};
static const struct api_route web_route = {
	"GET", "/", USER_ROLE_NONE, api_web_get, "read the dashboard",
};

/* The APIs one server answers, each with its routes and its way of answering errors. */
static const struct {
	const char *prefix;	/* "" matches every path */
	const struct api_route *routes;
	enum api_style style;
} apis[] = {
	{ API_PREFIX, routes, API_STYLE_JSON },
	{ API_LAVA_PREFIX, api_lava_rest_routes, API_STYLE_DRF },
	{ "", api_lava_rpc_routes, API_STYLE_XMLRPC },
	{ "", site_routes, API_STYLE_JSON },
};

/* ---- helpers for the handlers ---- */

const struct api_deps *api_deps_of(const struct api_request *r)
{
	return &r->listener->api->d;
}

struct api_logs *api_logs_of(const struct api_request *r)
{
	return r->listener->api->logs;
}

struct api_rpc *api_rpc_of(const struct api_request *r)
{
	return r->listener->api->rpc;
}

struct api_metrics *api_metrics_of(const struct api_request *r)
{
	return r->listener->api->metrics;
}

struct api_streams *api_streams_of(const struct api_request *r)
{
	return r->listener->api->streams;
}

struct api_ws *api_ws_of(const struct api_request *r)
{
	return r->listener->api->ws;
}

struct api_forwards *api_forwards_of(const struct api_request *r)
{
	return r->listener->api->forwards;
}

bool api_listener_is_unix(const struct api_listener *l)
{
	return l->is_unix;
}

bool api_listener_needs_token(const struct api_listener *l)
{
	return l->needs_token;
}

const char *api_query(const struct api_request *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

bool api_query_bool(const struct api_request *r, const char *key)
{
	const char *v = api_query(r, key);

	return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"));
}

static int parse_int(const char *s, int64_t min, int64_t max, int64_t *ret)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int api_query_int(const struct api_request *r, const char *key, int64_t min, int64_t max,
		  int64_t *ret)
{
	const char *v = api_query(r, key);

	if (!v)
		return 0;
	return parse_int(v, min, max, ret) < 0 ? -EINVAL : 1;
}

int api_param_id(const struct api_request *r, unsigned i, int64_t *ret)
{
	if (i >= API_MAX_PARAMS || !r->params[i])
		return -EINVAL;
	return parse_int(r->params[i], 1, INT64_MAX, ret);
}

json_t *api_time_json(uint64_t usec)
{
	char buf[40];

	if (!usec)
		return json_null();
	joblog_format_time(usec, buf, sizeof(buf));
	return json_string(buf);
}

json_t *api_json_str(const char *s)
{
	json_t *v;
	char *copy, *p;

	if (!s)
		return json_null();
	v = json_string(s);
	if (v)
		return v;
	/* not UTF-8 (a board's output in an error message): keep the ASCII */
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

char *api_base_url(const struct api_request *r)
{
	const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);
	char *url;

	if (!host || !*host || strpbrk(host, " \t\r\n/"))
		host = r->listener->is_unix ? "localhost" : r->listener->where;
	if (asprintf(&url, "http://%s", host) < 0)
		return NULL;
	return url;
}

/* ---- replies ---- */

static void held_unlink(struct api_request *r)
{
	if (!r->held_pprev)
		return;
	*r->held_pprev = r->held_next;
	if (r->held_next)
		r->held_next->held_pprev = r->held_pprev;
	r->held_pprev = NULL;
	r->held_next = NULL;
}

/* The store committed (or failed to): let the held answer go. */
static void on_reply_durable(int err, void *ud)
{
	struct api_request *r = ud;

	held_unlink(r);
	if (err < 0) {
		MHD_destroy_response(r->held);
		r->held_status = r->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		r->held = api_error_response(r, r->held_status,
					     "the store could not commit: try again");
	}
	r->held_ready = true;
	api_resume(r);
}

/* Queue the held answer, after the resumed connection came back to on_request(). */
static enum MHD_Result reply_held(struct api_request *r)
{
	struct MHD_Response *resp = r->held;
	enum MHD_Result ret;

	r->held = NULL;
	r->held_ready = false;
	if (!resp)
		return MHD_NO;
	ret = MHD_queue_response(r->conn, r->held_status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Held while its reads are answered: in api->held, so that api_free() resumes it. */
static void held_link(struct api_request *r)
{
	struct api *a = r->listener->api;

	r->held_next = a->held;
	if (a->held)
		a->held->held_pprev = &r->held_next;
	r->held_pprev = &a->held;
	a->held = r;
}

/* Every read of the handler's run is answered: run it again (on_request()). */
static void on_reads_answered(int err, void *ud)
{
	struct api_request *r = ud;

	held_unlink(r);
	api_resume(r);
}

/*
 * Run the handler; its store reads that go to the database (PostgreSQL) do
 * not wait in the loop: the connection is suspended until their answers are
 * in, and the handler runs again, answered from them (store_read_begin()).
 */
static enum MHD_Result run_reading(struct api_request *r, api_handler_fn fn)
{
	struct store *st = api_deps_of(r)->store;
	enum MHD_Result ret;

	r->reading = true;
	ret = fn(r);
	r->reading = false;
	if (store_read_end(st) <= 0)
		return ret;
	if (!r->answer) {	/* what the dropped run made is made again */
		if (r->ctx_free)
			r->ctx_free(r->ctx);
		r->ctx = NULL;
		r->ctx_free = NULL;
	}
	r->rerun = true;
	held_link(r);
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

/* The answer of a handler that acted (api_answer_after()), made again. */
static enum MHD_Result run_answer(struct api_request *r)
{
	return r->answer(r, r->answer_status, r->answer_id);
}

void api_answer_afresh(struct api_request *r)
{
	struct store *st = api_deps_of(r)->store;

	if (!r->reading)
		return;
	/* the run that acted is done: what follows reads in a context of its own */
	store_read_end(st);
	if (store_read_begin(st, on_reads_answered, r) < 0)
		r->reading = false;	/* out of memory: its reads wait */
}

enum MHD_Result api_answer_after(struct api_request *r, api_answer_fn fn, unsigned status,
				 int64_t id)
{
	r->answer = fn;
	r->answer_status = status;
	r->answer_id = id;
	api_answer_afresh(r);
	return fn(r, status, id);
}

static enum MHD_Result run_handler(struct api_request *r, api_handler_fn fn)
{
	const struct api_deps *d = api_deps_of(r);
	struct store *st = d->store;
	api_handler_fn locate = r->locate;
	enum MHD_Result ret;

	r->rerun = false;
	if (r->answer) {
		fn = run_answer;	/* the handler acted: only its answer runs again */
	} else if ((r->route_flags & (API_ROUTE_BOARD | API_ROUTE_BOARD_RELAY)) && r->params[0] &&
		   !lab_board(d->lab, r->params[0]) && store_host_name(st)) {
		fn = api_board_elsewhere;	/* another host's board: its host answers */
	} else if (locate && !r->located && store_host_name(st)) {
		/* whose the request is, found out in read mode; then acted on here */
		ret = store_read_begin(st, on_reads_answered, r) < 0 ? locate(r) :
									run_reading(r, locate);
		if (!r->located)
			return ret;	/* answered (forwarded), or run again */
	}
	if (store_read_begin(st, on_reads_answered, r) < 0)
		return fn(r);
	return run_reading(r, fn);
}

/* The connection ended (or labd stops) while its answer was held. */
static void held_drop(struct api_request *r)
{
	if (!r->held && !r->held_pprev && !r->rerun)
		return;
	store_forget(api_deps_of(r)->store, r);
	held_unlink(r);
	if (r->held)
		MHD_destroy_response(r->held);
	r->held = NULL;
}

enum MHD_Result api_reply(struct api_request *r, unsigned status, struct MHD_Response *resp)
{
	struct api *a = r->listener->api;
	enum MHD_Result ret;
	int w;

	if (r->reading && store_read_pending(a->d.store)) {
		/* a read of this run went to the database: the run is done again with its answer */
		if (resp)
			MHD_destroy_response(resp);
		return MHD_YES;
	}
	if (!resp)
		return MHD_NO;	/* out of memory: libmicrohttpd closes the connection */
	r->replied = true;
	r->status = status;
	w = store_sync(a->d.store, on_reply_durable, r);
	if (w > 0) {
		r->held = resp;
		r->held_status = status;
		held_link(r);
		MHD_suspend_connection(r->conn);
		return MHD_YES;
	}
	ret = MHD_queue_response(r->conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static int dump_to_strbuf(const char *buf, size_t len, void *ud)
{
	return strbuf_add(ud, buf, len) < 0 ? -1 : 0;
}

struct MHD_Response *api_json_response(json_t *body)
{
	struct strbuf sb = STRBUF_INIT;
	struct MHD_Response *resp = NULL;
	size_t len;
	char *text;

	if (json_dump_callback(body ? body : json_object(), dump_to_strbuf, &sb,
			       JSON_COMPACT | JSON_REAL_PRECISION(15)) ||
	    strbuf_addch(&sb, '\n') < 0) {
		strbuf_release(&sb);
		goto out;
	}
	text = strbuf_detach(&sb, &len);
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		goto out;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
out:
	json_decref(body);
	return resp;
}

enum MHD_Result api_reply_json(struct api_request *r, unsigned status, json_t *body)
{
	return api_reply(r, status, api_json_response(body ? body : json_object()));
}

struct MHD_Response *api_error_response(const struct api_request *r, unsigned status,
					const char *msg)
{
	switch (r->style) {
	case API_STYLE_XMLRPC:
		return api_rpc_fault_response((int)status, msg);
	case API_STYLE_DRF:
		return api_json_response(json_pack("{s:o}", "detail", api_json_str(msg)));
	case API_STYLE_JSON:
		break;
	}
	return api_json_response(json_pack("{s:o}", "error", api_json_str(msg)));
}

enum MHD_Result api_reply_error(struct api_request *r, unsigned status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a shared database that is away: try again later, nothing is wrong here */
	if (status == MHD_HTTP_INTERNAL_SERVER_ERROR && !store_available(api_deps_of(r)->store)) {
		struct MHD_Response *resp;

		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		resp = api_error_response(r, status, msg);
		if (resp)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER,
						STORE_RETRY_AFTER);
		return api_reply(r, status, resp);
	}
	return api_reply(r, status, api_error_response(r, status, msg));
}

static const char *const gone_names[] = { "log", "results and events" };

const char *api_gone_text(const struct job_record *rec, enum api_gone what, char *buf,
			  size_t len)
{
	uint64_t when = what == API_GONE_LOG ? rec->log_removed : rec->history_removed;
	char at[40];

	if (!when)
		return NULL;
	joblog_format_time(when, at, sizeof(at));
	snprintf(buf, len, "the %s of job %lld %s removed on %s (labd.conf retention)",
		 gone_names[what], (long long)rec->id, what == API_GONE_LOG ? "was" : "were", at);
	return buf;
}

bool api_reply_gone(struct api_request *r, const struct job_record *rec, enum api_gone what,
		    enum MHD_Result *ret)
{
	uint64_t when = what == API_GONE_LOG ? rec->log_removed : rec->history_removed;
	char msg[256];

	if (!api_gone_text(rec, what, msg, sizeof(msg)))
		return false;
	if (r->style != API_STYLE_JSON)
		*ret = api_reply_error(r, MHD_HTTP_GONE, "%s", msg);
	else
		*ret = api_reply_json(r, MHD_HTTP_GONE,
				      json_pack("{s:s, s:I, s:s, s:o}", "error", msg, "job",
						(json_int_t)rec->id, "removed", gone_names[what],
						"removed_at", api_time_json(when)));
	return true;
}

enum MHD_Result api_reply_diag(struct api_request *r, unsigned status, const char *error,
			       const struct diag *diag)
{
	json_t *errors = json_array();
	size_t i;

	for (i = 0; i < diag->n; i++)
		json_array_append_new(errors, api_json_str(diag->msgs[i]));
	return api_reply_json(r, status, json_pack("{s:s, s:o}", "error", error, "errors", errors));
}

/* ---- GET /health ---- */

enum MHD_Result api_health(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	const struct lab_config *c = lab_current_config(d->lab);
	const char *refused = lab_refused_reload(d->lab);
	int64_t running = 0, canceling = 0, queued = 0;
	size_t n_boards;
	json_t *o;

	lab_boards(d->lab, &n_boards);
	if (store_job_count(d->store, JOB_STATE_RUNNING, &running) < 0 ||
	    store_job_count(d->store, JOB_STATE_CANCELING, &canceling) < 0 ||
	    store_job_count(d->store, JOB_STATE_QUEUED, &queued) < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the queue");
	/* a refused reload leaves the lab running what the files no longer say: degraded */
	o = json_pack("{s:s, s:s, s:o, s:I, s:I, s:I}", "status", refused ? "degraded" : "ok",
		      "version", LABD_VERSION, "lab", api_json_str(c->lab_name), "boards",
		      (json_int_t)n_boards, "running", (json_int_t)(running + canceling), "queued",
		      (json_int_t)queued);
	if (refused)
		json_object_set_new(o, "reasons", json_pack("[s+]", "the last reload was refused: ",
							    refused));
	return api_reply_json(r, MHD_HTTP_OK, o);
}

/* ---- routing ---- */

/* Whether @pattern ("/jobs/ * /log") matches the path segments; fills @params. */
static bool route_matches(const char *pattern, char *const *segs, int n, const char **params)
{
	const char *p = pattern;
	int i, np = 0;

	memset(params, 0, API_MAX_PARAMS * sizeof(*params));
	for (i = 0; i < n; i++) {
		size_t len;

		if (*p != '/')
			return false;
		len = strcspn(++p, "/");
		if (len == 1 && *p == '*') {
			if (np == API_MAX_PARAMS)
				return false;
			params[np++] = segs[i];
		} else if (strlen(segs[i]) != len || strncmp(p, segs[i], len)) {
			return false;
		}
		p += len;
	}
	return !*p;
}

static int split_path(char *path, char **segs)
{
	char *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(path, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (n == API_MAX_SEGMENTS)
			return -1;
		segs[n++] = tok;
	}
	return n;
}

static enum MHD_Result reply_405(struct api_request *r, const char *allow)
{
	struct MHD_Response *resp = api_error_response(r, MHD_HTTP_METHOD_NOT_ALLOWED,
						       "method not allowed");

	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	return api_reply(r, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
}

/* The role check, with what the route does for the 403 message. */
static int authorize(struct api_request *r, const struct api_route *rt)
{
	char what[256];

	/* rt->what is one of the formats of routes[], with at most one %s */
	snprintf(what, sizeof(what), rt->what, r->params[0] ? r->params[0] : "");
	return api_authorize(r, rt->role, what);
}

/* Whether @url is below @prefix ("" is above every path). */
static bool below(const char *url, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(url, prefix, n) && (!n || url[n] == '/' || !url[n]);
}

/* The route of @method and the segments in @rt (NULL-ended); fills @allow with the others. */
static const struct api_route *find_route(const struct api_route *rt, const char *method,
					  char *const *segs, int n, const char **params,
					  char *allow, size_t len)
{
	for (; n >= 0 && rt->method; rt++) {
		if (!route_matches(rt->path, segs, n, params))
			continue;
		if (!strcmp(rt->method, method))
			return rt;
		snprintf(allow + strlen(allow), len - strlen(allow), "%s%s", *allow ? ", " : "",
			 rt->method);
	}
	return NULL;
}

struct query_check {
	const char *known;	/* blank-separated */
	const char *unknown;	/* the first parameter not in it */
};

static enum MHD_Result find_unknown(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct query_check *q = cls;
	size_t n = strlen(key);
	const char *p;

	for (p = strstr(q->known, key); n && p; p = strstr(p + 1, key))
		if ((p == q->known || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return MHD_YES;
	q->unknown = key;
	return MHD_NO;
}

/* 400 for a query parameter @rt does not read (route_queries[]). */
static int check_query(struct api_request *r, const struct api_route *rt)
{
	struct query_check q = { query_of(rt), NULL };

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, find_unknown, &q);
	if (!q.unknown)
		return 0;
	api_reply_error(r, MHD_HTTP_BAD_REQUEST, "unknown query parameter '%s'; %s%s",
			q.unknown, *q.known ? "this endpoint takes: " : "this endpoint takes none",
			q.known);
	return -EINVAL;
}

/* Find the route of @r: answers 404, 405, 401, 403 or 400 itself and returns NULL. */
static const struct api_route *route(struct api_request *r, enum MHD_Result *ret)
{
	const char *method = strcmp(r->method, "HEAD") ? r->method : "GET";
	char *segs[API_MAX_SEGMENTS], allow[64] = "";
	const struct api_route *found = NULL;
	const char *params[API_MAX_PARAMS];
	size_t i;
	int n;

	*ret = MHD_YES;
	for (i = 0; !found && i < sizeof(apis) / sizeof(apis[0]); i++) {
		if (!below(r->url, apis[i].prefix))
			continue;
		free(r->path);
		r->path = strdup(r->url + strlen(apis[i].prefix));
		n = r->path ? split_path(r->path, segs) : -1;
		found = find_route(apis[i].routes, method, segs, n, params, allow, sizeof(allow));
		if (found || *allow || *apis[i].prefix)
			r->style = apis[i].style;
		if (*allow || *apis[i].prefix)
			break;
	}
	if (found) {
		memcpy(r->params, params, sizeof(params));
		set_route(r, found);
	}
	if (!found && !*allow && !below(r->url, "/api") && !strcmp(method, "GET")) {
		found = &web_route;
		r->style = API_STYLE_JSON;
	}
	if (!found && *allow)
		*ret = reply_405(r, allow);
	else if (!found && i == sizeof(apis) / sizeof(apis[0]))
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND,
				       "no such endpoint: API paths start with '%s/'", API_PREFIX);
	else if (!found)
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "no such endpoint '%s'", r->url);
	else if (authorize(r, found) < 0)
		found = NULL;
	else if (found >= routes && found < routes + sizeof(routes) / sizeof(routes[0]) &&
		 check_query(r, found) < 0)
		found = NULL;
	return found;
}

/* The prefix of the API @url is below, for the request counters ("" outside them). */
static const char *route_prefix(const char *url)
{
	size_t i;

	for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
		if (*apis[i].prefix && below(url, apis[i].prefix))
			return apis[i].prefix;
	return "";
}

/* ---- the request life cycle ---- */

struct api_request_state {
	struct api_request req;
	const struct api_route *route;
	bool too_large;		/* the body went beyond API_MAX_BODY */
};

/* 503 to an anonymous request on a connection on probation (api_conns.c). */
static enum MHD_Result reply_busy(struct api_request *r)
{
	struct MHD_Response *resp = api_json_response(json_pack("{s:s}", "error",
		"too many connections from your address or without a token; try again later"));

	if (resp) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	}
	return api_reply(r, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
}

static enum MHD_Result add_length(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	size_t *total = cls;

	*total += strlen(key) + (value ? strlen(value) + 1 : 0);
	return MHD_YES;
}

/* 414 or 431 for a URL or header fields beyond labd's limits; MHD_YES when within. */
static enum MHD_Result check_sizes(struct api_request *r)
{
	size_t url = strlen(r->url), headers = 0;

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_length, &url);
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, add_length, &headers);
	if (url > API_MAX_URL)
		return api_reply_error(r, MHD_HTTP_URI_TOO_LONG, "URL longer than %d bytes",
				       API_MAX_URL);
	if (headers > API_MAX_HEADERS)
		return api_reply_error(r, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
				       "header fields larger than %d bytes", API_MAX_HEADERS);
	return MHD_YES;
}

/* First call for a request: the headers are in.  Refuse what cannot succeed now. */
static enum MHD_Result request_begin(struct api_listener *l, struct MHD_Connection *conn,
				     const char *url, const char *method, void **req_cls)
{
	struct api_request_state *st = calloc(1, sizeof(*st));
	struct api_request *r;
	enum MHD_Result ret;
	const char *len;

	if (!st)
		return MHD_NO;
	r = &st->req;
	r->listener = l;
	r->conn = conn;
	r->url = url;
	r->method = method;
	strbuf_init(&r->body);
	*req_cls = st;
	api_identify(r);
	if (!api_conns_admit(conn, api_authenticated(r)))
		ret = reply_busy(r);
	else if ((ret = check_sizes(r)) == MHD_YES && !r->replied)
		st->route = route(r, &ret);
	if (r->replied || !st->route) {
		api_conns_received(conn);	/* answered: the rest is not waited for */
		return ret;
	}
	len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (len && strtoull(len, NULL, 10) > API_MAX_BODY) {
		api_conns_received(conn);
		return api_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE,
				       "request body larger than %d bytes", API_MAX_BODY);
	}
	return MHD_YES;
}

/*
 * A body without Content-Length (chunked) that grows too large is read and
 * dropped to its end, then answered 413 (libmicrohttpd answers only once the
 * request is complete); the time a request may take (api_conns.c) bounds it.
 */
static enum MHD_Result request_body(struct api_request_state *st, const char *data, size_t len)
{
	struct api_request *r = &st->req;

	if (st->too_large || r->body.len + len > API_MAX_BODY) {
		st->too_large = true;
		strbuf_release(&r->body);
		return MHD_YES;
	}
	if (strbuf_add(&r->body, data, len) < 0)
		return MHD_NO;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct api_request_state *st = *req_cls;
	size_t len;

	if (!st)
		return request_begin(cls, conn, url, method, req_cls);
	if (*upload_size) {
		len = *upload_size;
		*upload_size = 0;
		return request_body(st, upload, len);
	}
	if (st->req.held_ready)
		return reply_held(&st->req);
	if (st->req.rerun)
		return run_handler(&st->req, st->route->fn);
	if (st->req.replied || !st->route)
		return MHD_YES;
	if (st->too_large)
		return api_reply_error(&st->req, MHD_HTTP_CONTENT_TOO_LARGE,
				       "request body larger than %d bytes", API_MAX_BODY);
	api_conns_received(conn);
	return run_handler(&st->req, st->route->fn);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct api_request_state *st = *req_cls;

	api_conns_done(conn);
	if (!st)
		return;
	if (st->req.pending && st->req.pending_gone)
		st->req.pending_gone(&st->req);
	held_drop(&st->req);
	api_metrics_count(st->req.listener->api->metrics, st->route ? st->route->path : NULL,
			  route_prefix(st->req.url), st->req.status);
	api_log_request_done(&st->req);
	if (st->req.ctx_free)
		st->req.ctx_free(st->req.ctx);
	api_stream_request_done(&st->req);
	strbuf_release(&st->req.body);
	free(st->req.path);
	free(st);
	*req_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct api_listener *l = cls;

	api_conns_notify(l->conns, conn, socket_context, toe);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct api_listener *l = cls;
	char msg[512];
	size_t len;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '.'))
		msg[--len] = '\0';
	log_debug("api '%s': libmicrohttpd: %s", l->where, msg);
}

/* ---- libmicrohttpd in the loop ---- */

static void run_mhd(struct api_listener *l)
{
	MHD_UNSIGNED_LONG_LONG ms;

	MHD_run(l->mhd);
	if (MHD_get_timeout(l->mhd, &ms) != MHD_YES)
		loop_timer_set(l->timer, USEC_INFINITY);
	else
		loop_timer_set_rel(l->timer, (ms < API_MAX_TIMEOUT_MS ? ms : API_MAX_TIMEOUT_MS) *
						     USEC_PER_MSEC);
}

static int on_mhd_ready(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	run_mhd(ud);
	return 0;
}

static int on_mhd_timer(struct loop_source *s, uint64_t now, void *ud)
{
	run_mhd(ud);
	return 0;
}

static int on_mhd_poked(struct loop_source *s, void *ud)
{
	run_mhd(ud);
	return 0;
}

/*
 * A defer, not a timer set to now: the connections resumed during one loop
 * turn (an event sent to every stream) cost one MHD_run() and no timerfd
 * syscall.
 */
void api_listener_poke(struct api_listener *l)
{
	if (l->poke)
		loop_defer_again(l->poke);
}

void api_resume(struct api_request *r)
{
	MHD_resume_connection(r->conn);
	api_listener_poke(r->listener);
}

/* ---- listening sockets ---- */

static int parse_port(const char *s, int *ret)
{
	int64_t v;

	if (parse_int(s, 0, 65535, &v) < 0)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

/* "HOST:PORT", "[IPV6]:PORT" (literal addresses, or localhost) or "unix:/PATH". */
static int parse_address(const char *text, struct sockaddr_storage *ss, socklen_t *ret_len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM };
	const char *colon = strrchr(text, ':');
	struct addrinfo *ai;
	char host[INET6_ADDRSTRLEN + 8];
	size_t hlen;
	int port;

	memset(ss, 0, sizeof(*ss));
	if (!strncmp(text, "unix:", 5)) {
		struct sockaddr_un *sun = (struct sockaddr_un *)ss;

		if (text[5] != '/' || strlen(text + 5) >= sizeof(sun->sun_path))
			return -EINVAL;
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, text + 5);
		*ret_len = sizeof(*sun);
		return 0;
	}
	if (!colon || colon == text || parse_port(colon + 1, &port) < 0)
		return -EINVAL;
	hlen = (size_t)(colon - text);
	if (text[0] == '[') {
		if (hlen < 3 || text[hlen - 1] != ']')
			return -EINVAL;
		text++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, hlen);
	host[hlen] = '\0';
	if (getaddrinfo(strcmp(host, "localhost") ? host : "127.0.0.1", NULL, &hints, &ai))
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*ret_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
		       (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127);
	return ss->ss_family == AF_UNIX;
}

/* A socket file left by a labd that died is removed; a live one is in use. */
static int remove_stale_socket(const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, err = 0;

	if (lstat(sun->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0 || errno == EAGAIN)
		err = -EADDRINUSE;
	else if (unlink(sun->sun_path) < 0 && errno != ENOENT)
		err = -errno;
	close(fd);
	return err;
}

static int open_socket(const struct sockaddr_storage *ss, socklen_t len, int *ret_fd)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)ss;
	int fd, one = 1, err = 0;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (ss->ss_family == AF_UNIX)
		err = remove_stale_socket(sun);
	else if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		err = -errno;
	if (!err && ss->ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		err = -errno;
	if (!err && bind(fd, (const struct sockaddr *)ss, len) < 0)
		err = -errno;
	if (!err && ss->ss_family == AF_UNIX && chmod(sun->sun_path, 0660) < 0)
		err = -errno;
	if (!err && listen(fd, API_LISTEN_BACKLOG) < 0)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	*ret_fd = fd;
	return 0;
}

/* Hand @fd to a new libmicrohttpd daemon and put it in the loop. */
static int start_mhd(struct api_listener *l, int fd)
{
	struct loop *loop = l->api->d.loop;
	const union MHD_DaemonInfo *info;
	char desc[300];
	int err;

	l->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE |
				  MHD_USE_ERROR_LOG,
				  0, NULL, NULL, on_request, l,
				  MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)API_MAX_CONNECTIONS,
				  MHD_OPTION_CONNECTION_TIMEOUT,
				  (unsigned int)API_CONNECTION_TIMEOUT,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)API_MEMORY_LIMIT,
				  MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, l,
				  MHD_OPTION_END);
	if (!l->mhd) {
		close(fd);
		return -EIO;
	}
	info = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info)
		return -EIO;
	err = loop_add_io(loop, &l->io, info->epoll_fd, EPOLLIN, on_mhd_ready, l);
	if (!err)
		err = loop_add_timer(loop, &l->timer, USEC_INFINITY, on_mhd_timer, l);
	if (!err)
		err = loop_add_defer(loop, &l->poke, on_mhd_poked, l);
	if (err < 0)
		return err;
	snprintf(desc, sizeof(desc), "api:%s", l->where);
	loop_source_set_description(l->io, desc);
	loop_source_set_description(l->timer, desc);
	loop_source_set_description(l->poke, desc);
	info = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_BIND_PORT);
	l->port = info ? info->port : 0;
	return 0;
}

static int listener_start(struct api *a, const char *where)
{
	const struct lab_config *c = lab_current_config(a->d.lab);
	struct api_listener *l = &a->listeners[a->n_listeners];
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = -1, err;

	if (parse_address(where, &ss, &len) < 0) {
		log_error("invalid listen address '%s': use HOST:PORT, [IPV6]:PORT or unix:/PATH",
			  where);
		return -EINVAL;
	}
	err = open_socket(&ss, len, &fd);
	if (err < 0) {
		log_error("cannot listen on '%s': %s", where, strerror(-err));
		return err;
	}
	a->n_listeners++;	/* from here listener_stop() cleans up */
	l->api = a;
	l->is_unix = ss.ss_family == AF_UNIX;
	l->needs_token = !l->is_unix && (c->http.require_token || !is_loopback(&ss));
	l->where = strdup(where);
	if (l->is_unix)
		l->unix_path = strdup(((struct sockaddr_un *)&ss)->sun_path);
	if (!l->where || (l->is_unix && !l->unix_path)) {
		close(fd);
		return -ENOMEM;
	}
	err = api_conns_new(l->api->d.loop, l->where, l->is_unix, &l->conns);
	if (err < 0) {
		close(fd);
		return err;
	}
	err = start_mhd(l, fd);
	if (err < 0) {
		log_error("cannot serve the API on '%s': %s", where, strerror(-err));
		return err;
	}
	if (l->needs_token && !c->http.tokens && !users_count(lab_users(a->d.lab)))
		log_warning("api '%s' needs a token but no token is configured: all is refused",
			    where);
	if (l->is_unix)
		log_info("api listening on '%s'", where);
	else
		log_info("api listening on '%s' (port %d)%s", where, l->port,
			 l->needs_token ? ", token required" : "");
	return 0;
}

static void listener_stop(struct api_listener *l)
{
	l->io = loop_source_free(l->io);
	l->timer = loop_source_free(l->timer);
	l->poke = loop_source_free(l->poke);
	if (l->mhd)
		MHD_stop_daemon(l->mhd);
	l->mhd = NULL;
	l->conns = api_conns_free(l->conns);
	if (l->unix_path)
		unlink(l->unix_path);
	free(l->unix_path);
	free(l->where);
}

int api_new(const struct api_deps *deps, const char *listen, struct api **ret)
{
	const struct lab_config *c = lab_current_config(deps->lab);
	struct api *a = calloc(1, sizeof(*a));
	char *unix_where = NULL;
	int err;

	if (!a)
		return -ENOMEM;
	a->d = *deps;
	err = api_logs_new(&a->d, &a->logs);
	if (!err)
		err = api_rpc_new(&a->rpc);
	if (!err)
		err = api_metrics_new(&a->d, &a->metrics);
	if (!err)
		err = api_streams_new(&a->d, &a->streams);
	if (!err)
		err = api_ws_new(&a->d, &a->ws);
	if (!err)
		err = api_forwards_new(&a->d, &a->forwards);
	if (!err)
		err = listener_start(a, listen ? listen : c->http.listen);
	if (!err && c->http.unix_socket) {
		if (asprintf(&unix_where, "unix:%s", c->http.unix_socket) < 0)
			unix_where = NULL;
		err = unix_where ? listener_start(a, unix_where) : -ENOMEM;
		free(unix_where);
	}
	if (err < 0) {
		api_free(a);
		return err;
	}
	*ret = a;
	return 0;
}

struct api *api_free(struct api *a)
{
	size_t i;

	if (!a)
		return NULL;
	api_logs_shutdown(a->logs);
	api_streams_shutdown(a->streams);
	api_ws_shutdown(a->ws);
	api_forwards_shutdown(a->forwards);
	api_sessions_shutdown(&a->d);
	/* libmicrohttpd wants its suspended connections back: the held answers go unsent */
	while (a->held) {
		struct api_request *r = a->held;

		held_drop(r);
		MHD_resume_connection(r->conn);
	}
	for (i = 0; i < a->n_listeners; i++)
		listener_stop(&a->listeners[i]);
	api_logs_free(a->logs);
	api_rpc_free(a->rpc);
	api_streams_free(a->streams);
	api_ws_free(a->ws);
	api_forwards_free(a->forwards);
	api_metrics_free(a->metrics);
	free(a);
	return NULL;
}

int api_port(const struct api *a)
{
	size_t i;

	for (i = 0; a && i < a->n_listeners; i++)
		if (!a->listeners[i].is_unix)
			return a->listeners[i].port;
	return 0;
}
