// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_forward.c -- a request answered by another labd host of the lab: a
 * job's console log lives on the host that ran it, so a host asked for it
 * sends the same request there (libcurl multi in the loop, core/http_client.h)
 * and streams the answer back as it comes, a followed log included.
 *
 * The request's connection is suspended until the other host's status line
 * and headers are in; the handler then runs again (api_resume()) and answers
 * with them and a body read from a buffer the transfer fills.  The buffer is
 * bounded: libcurl is paused when it holds FWD_BUFFER_MAX bytes the client
 * did not take yet, and goes on as the client takes them.  With nothing to
 * send, the client's connection is suspended until more arrives.  A request
 * that came forwarded (FORWARDED_HEADER) is never forwarded again.  One call
 * of an XML-RPC system.multicall is sent alone (api_forward_call()), its
 * answer collected whole and handed to the caller, not streamed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "api/api_internal.h"
#include "board/lab.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "sched/sched.h"
#include "store/store.h"

#define FWD_BUFFER_MAX (256 * 1024)	/* bytes received, not yet sent: then pause */
#define FWD_BLOCK (32 * 1024)		/* libmicrohttpd's buffer of the answer */
#define FWD_CONNECT_TIMEOUT (5 * USEC_PER_SEC)

/* The other host's headers an answer keeps (the log's sizes, errors' hints). */
static const char *const kept_headers[] = {
	MHD_HTTP_HEADER_CONTENT_TYPE, MHD_HTTP_HEADER_CACHE_CONTROL,
	MHD_HTTP_HEADER_RETRY_AFTER, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
	MHD_HTTP_HEADER_CONTENT_DISPOSITION, "X-Log-Size", "X-Log-Lines",
	"X-Log-First-Line", NULL,
};

struct forward {
	struct api_forwards *set;
	struct forward *prev, *next;
	struct api_request *r;
	struct http_request *req;	/* NULL once the transfer ended */
	char *host;			/* the other host's name, for errors */
	struct MHD_Response *resp;	/* made from the head, until queued */
	long status;
	bool head;			/* the head arrived */
	bool replied;			/* the answer is queued */
	bool ended;			/* the transfer ended (err says how) */
	bool suspended;			/* the client's connection waits for bytes */
	bool paused;			/* libcurl waits for room in out */
	bool closed;			/* labd stops */
	int err;
	char *error;			/* the transfer's error before the head */
	struct strbuf out;
	size_t out_pos;
	/* a call answered whole (api_forward_call()): told, instead of streamed */
	api_call_done_fn call_done;
	void *call_ud;
};


/* ---- the client's side ---- */

static void wake(struct forward *f)
{
	if (!f->suspended)
		return;
	f->suspended = false;
	api_resume(f->r);
}

/* Room in out again: let a paused transfer go on (it may fill out at once). */
static void make_room(struct forward *f)
{
	if (f->out_pos == f->out.len) {
		strbuf_reset(&f->out);
		f->out_pos = 0;
	}
	if (f->paused && f->req && f->out.len - f->out_pos < FWD_BUFFER_MAX / 2) {
		f->paused = false;
		http_request_unpause(f->req);
	}
}

static ssize_t forward_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct forward *f = cls;
	size_t n = f->out.len - f->out_pos;

	if (f->closed)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (n) {
		n = n < max ? n : max;
		memcpy(buf, f->out.buf + f->out_pos, n);
		f->out_pos += n;
		make_room(f);
		return (ssize_t)n;
	}
	make_room(f);
	if (f->out.len)
		return forward_read(cls, pos, buf, max);
	if (f->ended)
		return f->err ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
	f->suspended = true;
	MHD_suspend_connection(f->r->conn);
	return 0;
}

/* ---- the other host's side ---- */

static int on_head(struct http_request *req, long status, void *ud)
{
	struct forward *f = ud;
	const char *v;
	size_t i;

	f->resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, FWD_BLOCK, forward_read, f,
						    NULL);
	if (!f->resp)
		return -ENOMEM;
	for (i = 0; kept_headers[i]; i++)
		if ((v = http_request_header(req, kept_headers[i])))
			MHD_add_response_header(f->resp, kept_headers[i], v);
	f->status = status;
	f->head = true;
	api_resume(f->r);	/* suspended since api_forward(): the handler answers now */
	return 0;
}

static int on_data(const void *buf, size_t len, void *ud)
{
	struct forward *f = ud;

	if (f->out.len - f->out_pos >= FWD_BUFFER_MAX) {
		f->paused = true;
		return HTTP_DATA_PAUSE;
	}
	if (strbuf_add(&f->out, buf, len) < 0)
		return -ENOMEM;
	if (f->replied)
		wake(f);
	return 0;
}

static void on_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct forward *f = ud;

	f->req = NULL;
	f->ended = true;
	f->err = resp->err;
	if (resp->err && !f->head)
		f->error = strdup(resp->error ? resp->error : strerror(-resp->err));
	if (resp->err && f->head)
		log_warning("the answer of host '%s' to %s %s was cut: %s", f->host, f->r->method,
			    f->r->url, resp->error ? resp->error : strerror(-resp->err));
	if (!f->head)
		api_resume(f->r);	/* the handler answers the error */
	else
		wake(f);
}

/* ---- the request ---- */

static void forward_free(void *ctx)
{
	struct forward *f = ctx;

	if (f->prev)
		f->prev->next = f->next;
	else
		f->set->list = f->next;
	if (f->next)
		f->next->prev = f->prev;
	http_request_cancel(f->req);
	if (f->resp)
		MHD_destroy_response(f->resp);
	strbuf_release(&f->out);
	free(f->error);
	free(f->host);
	free(f);
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	char *arg;
	int ok;

	if (asprintf(&arg, "%s%s%s", key, value ? "=" : "", value ? value : "") < 0)
		return MHD_NO;
	ok = curl_url_set(cls, CURLUPART_QUERY, arg, CURLU_APPENDQUERY | CURLU_URLENCODE) ==
	     CURLUE_OK;
	free(arg);
	return ok ? MHD_YES : MHD_NO;
}

/* The other host's URL of the request: its base, the same path and query. */
char *api_forward_url(const struct api_request *r, const char *base)
{
	CURLU *u = curl_url();
	char *url = NULL, *ret = NULL;

	if (u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_PATH, r->url, CURLU_URLENCODE) == CURLUE_OK &&
	    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_arg, u) >= 0 &&
	    curl_url_get(u, CURLUPART_URL, &url, 0) == CURLUE_OK)
		ret = strdup(url);
	curl_free(url);
	curl_url_cleanup(u);
	return ret;
}

bool api_vouch(const struct api_request *r, struct api_forward_id *id)
{
	return api_listener_is_unix(r->listener) &&
	       !api_forward_identity(api_deps_of(r)->store, &r->who, r->method, r->url, id);
}

/* The answer of a call forwarded whole: the forward is done, its caller told. */
static void on_call_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct forward *f = ud;
	api_call_done_fn done = f->call_done;
	struct api_request *r = f->r;
	void *call_ud = f->call_ud;

	f->req = NULL;
	forward_free(f);
	done(r, resp, call_ud);
}

/* @body to @url as @f's request would go (its method, Authorization, and who forwards it). */
static int start_transfer(struct forward *f, const char *url, const void *body, size_t len)
{
	const struct api_request *r = f->r;
	const char *auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_AUTHORIZATION);
	char h_auth[1024], h_fwd[128];
	struct api_forward_id id;
	const char *headers[6] = { h_fwd, NULL, NULL, NULL, NULL, NULL };
	struct http_request_opts o = {
		.method = r->method, .url = url, .headers = headers,
		.body = len ? body : NULL, .body_len = len,
		.timeout = r->forward_timeout ? r->forward_timeout : HTTP_NO_TIMEOUT,
		.connect_timeout = FWD_CONNECT_TIMEOUT,
		.max_size = UINT64_MAX, .data = on_data, .head = on_head,
	};
	const char *me = store_host_name(api_deps_of(r)->store);
	size_t n = 1;

	if (f->call_done) {
		o.timeout = API_FORWARD_ACT_TIMEOUT;
		o.max_size = 0;	/* the default bound: collected whole */
		o.data = NULL;
		o.head = NULL;
	}
	snprintf(h_fwd, sizeof(h_fwd), "%s: %s", API_FORWARDED_HEADER, me ? me : "labd");
	if (auth && strlen(auth) < sizeof(h_auth) - 32) {
		snprintf(h_auth, sizeof(h_auth), "Authorization: %s", auth);
		headers[n++] = h_auth;
	}
	if (api_vouch(r, &id)) {	/* the headers end at the first NULL */
		headers[n++] = id.user;
		headers[n++] = id.role;
		headers[n++] = id.auth;
	}
	return http_request_start(api_deps_of(r)->http, &o, f->call_done ? on_call_done : on_done,
				  f, &f->req);
}

static void forward_link(struct api_forwards *set, struct forward *f)
{
	f->set = set;
	f->next = set->list;
	if (f->next)
		f->next->prev = f;
	set->list = f;
}

enum MHD_Result api_forward(struct api_request *r, const char *host, const char *base_url)
{
	struct api_forwards *set = api_forwards_of(r);
	struct forward *f = calloc(1, sizeof(*f));
	char *url = api_forward_url(r, base_url);
	int err = f && url ? 0 : -ENOMEM;

	if (!err && !(f->host = strdup(host)))
		err = -ENOMEM;
	if (!err) {
		f->r = r;
		strbuf_init(&f->out);
		err = start_transfer(f, url, r->body.buf, r->body.len);
	}
	free(url);
	if (err < 0) {
		if (f)
			free(f->host);
		free(f);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot ask host '%s': %s", host, strerror(-err));
	}
	forward_link(set, f);
	r->ctx = f;
	r->ctx_free = forward_free;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

int api_forward_call(struct api_request *r, const char *host, const void *body, size_t len,
		     api_call_done_fn done, void *ud, struct forward **ret)
{
	struct forward *f = NULL;
	char *base = NULL, *url = NULL;
	int err;

	if (api_forwarded(r))
		return -ELOOP;
	err = store_host_url(api_deps_of(r)->store, host, &base);
	if (!err && (!(url = api_forward_url(r, base)) || !(f = calloc(1, sizeof(*f))) ||
		     !(f->host = strdup(host))))
		err = -ENOMEM;
	if (!err) {
		f->r = r;
		f->call_done = done;
		f->call_ud = ud;
		strbuf_init(&f->out);
		err = start_transfer(f, url, body, len);
	}
	free(base);
	free(url);
	if (err < 0) {
		if (f)
			free(f->host);
		free(f);
		return err;
	}
	forward_link(api_forwards_of(r), f);
	*ret = f;
	return 0;
}

void api_forward_call_cancel(struct forward *f)
{
	if (f)
		forward_free(f);
}

bool api_forwarding(const struct api_request *r)
{
	return (r->ctx && r->ctx_free == forward_free) || api_tunneling(r);
}

enum MHD_Result api_forward_answer(struct api_request *r)
{
	struct forward *f = r->ctx;
	struct MHD_Response *resp;

	if (api_tunneling(r))
		return api_tunnel_answer(r);
	resp = f->resp;
	if (f->replied)
		return MHD_YES;	/* resumed for the body: libmicrohttpd reads on */
	if (!f->head)
		return api_reply_error(r, MHD_HTTP_BAD_GATEWAY, "host '%s' did not answer: %s",
				       f->host, f->error ? f->error : "closed");
	f->resp = NULL;
	f->replied = true;
	return api_reply(r, (unsigned)f->status, resp);
}

bool api_elsewhere(struct api_request *r, const char *host, enum MHD_Result *ret)
{
	struct store *st = api_deps_of(r)->store;
	const char *me = store_host_name(st);
	char *url = NULL;
	int err;

	if (!host || !me || !strcmp(host, me) || api_forwarded(r))
		return false;
	err = store_host_url(st, host, &url);
	if (err == -ENOTCONN)
		*ret = api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
				       "the store is not reachable: try again");
	else if (err < 0)
		*ret = api_reply_error(r, MHD_HTTP_BAD_GATEWAY,
				       "host '%s' of this lab has no API address (store.url)", host);
	else if (api_tunnel_wanted(r))
		*ret = api_tunnel(r, host, url);
	else
		*ret = api_forward(r, host, url);
	free(url);
	return true;
}

enum MHD_Result api_job_forward(struct api_request *r, int64_t id, const char *host)
{
	enum MHD_Result ret;

	r->forward_timeout = API_FORWARD_ACT_TIMEOUT;	/* a cancel, not a followed log */
	if (api_elsewhere(r, host, &ret))
		return ret;
	/* it came forwarded, and the job went on to another host meanwhile */
	return api_reply_error(r, MHD_HTTP_CONFLICT,
			       "job %lld runs on host '%s' of this lab, not on the host asked: "
			       "try again", (long long)id, host);
}

enum MHD_Result api_reply_canceled(struct api_request *r, const struct job_record *rec,
				   unsigned status, json_t *body)
{
	if (!sched_runs_elsewhere(api_deps_of(r)->sched, rec))
		return api_reply_json(r, status, body);
	json_decref(body);
	return api_job_forward(r, rec->id, rec->host);
}

bool api_board_forwarded(struct api_request *r, const char *board, bool relay,
			 enum MHD_Result *ret)
{
	const struct api_deps *d = api_deps_of(r);
	const char *me = store_host_name(d->store);
	struct device_record rec = { 0 };
	bool there = true;
	int err;

	if (!me || lab_board(d->lab, board) || api_forwarded(r))
		return false;
	err = store_device_get(d->store, board, &rec);
	if (err == -EINPROGRESS)	/* this run's answer is dropped: run again with it */
		*ret = api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "reading");
	else if (err == -ENOTCONN)
		*ret = api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
				       "the store is not reachable: try again");
	else if (err < 0 || !rec.host || !strcmp(rec.host, me))
		there = false;
	else if (relay)
		*ret = api_telnet_relay(r, board, rec.host);
	else
		there = api_elsewhere(r, rec.host, ret);
	device_record_release(&rec);
	return there;
}

enum MHD_Result api_board_elsewhere(struct api_request *r)
{
	enum MHD_Result ret;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (api_telnet_relaying(r))
		return api_telnet_answer(r);
	if (!api_board_forwarded(r, r->params[0], r->route_flags & API_ROUTE_BOARD_RELAY, &ret))
		ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
	return ret;
}

bool api_forwarded(const struct api_request *r)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, API_FORWARDED_HEADER);
}

int api_forward_url_parts(const char *url, char **target, char **host)
{
	char *path = NULL, *query = NULL, *name = NULL, *port = NULL;
	CURLU *u = curl_url();
	int err = -EINVAL;

	*target = *host = NULL;
	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &name, 0) == CURLUE_OK) {
		curl_url_get(u, CURLUPART_QUERY, &query, 0);
		curl_url_get(u, CURLUPART_PORT, &port, 0);
		err = asprintf(target, "%s%s%s", path, query ? "?" : "", query ? query : "") < 0 ||
		      asprintf(host, "%s%s%s", name, port ? ":" : "", port ? port : "") < 0 ?
			      -ENOMEM : 0;
	}
	curl_free(path);
	curl_free(query);
	curl_free(name);
	curl_free(port);
	curl_url_cleanup(u);
	return err;
}

/* ---- the set ---- */

int api_forwards_new(const struct api_deps *d, struct api_forwards **ret)
{
	struct api_forwards *set = calloc(1, sizeof(*set));
	int err = set ? 0 : -ENOMEM;

	if (!err) {
		set->store = d->store;
		err = api_tunnels_start(set, d->loop);
	}
	if (err < 0) {
		api_forwards_free(set);
		return err;
	}
	*ret = set;
	return 0;
}

/* labd stops: a call forwarded whole ends, its caller told. */
static void call_shutdown(struct forward *f)
{
	struct http_response resp = { .err = -ESHUTDOWN, .error = "labd stops", .body = "" };
	api_call_done_fn done = f->call_done;
	struct api_request *r = f->r;
	void *ud = f->call_ud;

	forward_free(f);
	done(r, &resp, ud);
}

void api_forwards_shutdown(struct api_forwards *set)
{
	struct forward *f, *next;

	api_telnets_shutdown(set);
	api_tunnels_shutdown(set);
	for (f = set ? set->list : NULL; f; f = next) {
		next = f->next;
		if (f->call_done) {
			call_shutdown(f);
			continue;
		}
		f->closed = true;
		http_request_cancel(f->req);
		f->req = NULL;
		f->ended = true;
		f->err = -ESHUTDOWN;
		if (!f->head)
			api_resume(f->r);
		else
			wake(f);
	}
}

struct api_forwards *api_forwards_free(struct api_forwards *set)
{
	if (!set)
		return NULL;
	while (set->list)
		forward_free(set->list);
	api_telnets_free(set);
	if (set->store)
		store_read_later_forget(set->store, set);	/* a reap check's reads */
	loop_source_free(set->reap_timer);
	free(set);
	return NULL;
}
