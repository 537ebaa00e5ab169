// SPDX-License-Identifier: GPL-2.0-or-later
/* http_client.c -- libcurl multi interface driven by the labd event loop */
#include "core/http_client.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <curl/curl.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"

/*
 * libcurl sends a body in chunks of its upload buffer (64 KiB by default),
 * one chunk per call from the loop.  In a busy loop (hundreds of consoles,
 * 64 events per epoll_wait) every chunk waits for its turn, so a 1 MiB body
 * took 300 ms and more.  A buffer as large as the body (at most libcurl's
 * limit of 2 MiB) sends it with one write when the socket takes it.
 */
#define HTTP_UPLOAD_CHUNK (64 * 1024)
#define HTTP_UPLOAD_CHUNK_MAX (2 * 1024 * 1024)

struct http_client {
	struct loop *loop;
	CURLM *multi;
	struct loop_source *timer;
	struct loop_source *now;	/* libcurl's timeout of 0: at once, not next iteration */
	struct http_request *requests;	/* in flight, doubly linked */
	unsigned active;
};

struct http_request {
	struct http_client *client;
	CURL *easy;
	struct curl_slist *headers;
	char *body;
	struct strbuf resp;
	uint64_t max_size;
	uint64_t received;
	int (*data)(const void *buf, size_t len, void *userdata);
	int (*head)(struct http_request *req, long status, void *userdata);
	int data_err;
	bool connect_only;
	bool connected;		/* connect_only: out of the multi, the caller's */
	http_done_fn done;
	void *userdata;
	char errbuf[CURL_ERROR_SIZE];
	struct http_request *prev, *next;
};

/* A curl socket registered with the loop. */
struct http_socket {
	struct http_client *client;
	struct loop_source *src;
	curl_socket_t fd;
};

static void check_finished(struct http_client *c);

static int on_socket_event(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct http_client *c = ud;
	int mask = 0, running;

	if (revents & EPOLLIN)
		mask |= CURL_CSELECT_IN;
	if (revents & EPOLLOUT)
		mask |= CURL_CSELECT_OUT;
	if (revents & (EPOLLERR | EPOLLHUP))
		mask |= CURL_CSELECT_ERR;
	curl_multi_socket_action(c->multi, fd, mask, &running);
	check_finished(c);
	return 0;
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct http_client *c = userp;
	struct http_socket *hs = socketp;
	uint32_t events = 0;

	if (what == CURL_POLL_REMOVE) {
		if (hs) {
			loop_source_free(hs->src);
			free(hs);
			curl_multi_assign(c->multi, fd, NULL);
		}
		return 0;
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		events |= EPOLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		events |= EPOLLOUT;
	if (!hs) {
		hs = calloc(1, sizeof(*hs));
		if (!hs)
			return -1;
		hs->client = c;
		hs->fd = fd;
		if (loop_add_io(c->loop, &hs->src, fd, events, on_socket_event, c) < 0) {
			free(hs);
			return -1;
		}
		loop_source_set_description(hs->src, "http-client");
		curl_multi_assign(c->multi, fd, hs);
		return 0;
	}
	loop_io_set_events(hs->src, events);
	return 0;
}

static int on_timer(struct loop_source *s, uint64_t now, void *ud)
{
	struct http_client *c = ud;
	int running;

	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_finished(c);
	return 0;
}

static int on_now(struct loop_source *s, void *ud)
{
	return on_timer(s, 0, ud);
}

/*
 * A request just added asks for a timeout of 0 (libcurl starts it from
 * there): a defer runs it after the current callback, where the timerfd
 * would wait for the next epoll_wait(), behind every other ready source.
 */
static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct http_client *c = userp;

	if (timeout_ms == 0) {
		loop_timer_set(c->timer, USEC_INFINITY);
		loop_defer_again(c->now);
	} else if (timeout_ms < 0) {
		loop_timer_set(c->timer, USEC_INFINITY);
	} else {
		loop_timer_set_rel(c->timer, (uint64_t)timeout_ms * USEC_PER_MSEC);
	}
	return 0;
}

int http_client_new(struct loop *l, struct http_client **ret)
{
	static bool global_done;
	struct http_client *c;
	int r;

	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT))
			return -EIO;
		global_done = true;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = l;
	c->multi = curl_multi_init();
	if (!c->multi) {
		free(c);
		return -ENOMEM;
	}
	r = loop_add_timer(l, &c->timer, USEC_INFINITY, on_timer, c);
	if (!r)
		r = loop_add_defer(l, &c->now, on_now, c);
	if (r < 0) {
		loop_source_free(c->timer);
	loop_source_free(c->now);
		curl_multi_cleanup(c->multi);
		free(c);
		return r;
	}
	loop_source_set_description(c->timer, "http-client-timer");
	loop_source_set_description(c->now, "http-client-now");
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	*ret = c;
	return 0;
}

static void request_unlink(struct http_request *r)
{
	struct http_client *c = r->client;

	if (r->prev)
		r->prev->next = r->next;
	else
		c->requests = r->next;
	if (r->next)
		r->next->prev = r->prev;
	c->active--;
}

static void request_free(struct http_request *r)
{
	curl_multi_remove_handle(r->client->multi, r->easy);
	curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	free(r->body);
	strbuf_release(&r->resp);
	free(r);
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct http_request *r = ud;
	size_t len = size * nmemb;

	if (r->received + len > r->max_size) {
		r->data_err = -EFBIG;
		return 0;
	}
	if (r->data) {
		int e = r->data(ptr, len, r->userdata);

		if (e == HTTP_DATA_PAUSE)
			return CURL_WRITEFUNC_PAUSE;
		if (e < 0) {
			r->data_err = e;
			return 0;
		}
		r->received += len;
		return len;
	}
	r->received += len;
	if (strbuf_add(&r->resp, ptr, len) < 0) {
		r->data_err = -ENOMEM;
		return 0;
	}
	return len;
}

/* The end of a response's head (its empty line): tell ->head of the final one. */
static size_t header_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct http_request *r = ud;
	size_t len = size * nmemb;
	long status = 0;
	int e;

	if (len > 2 || (len && ptr[0] != '\r' && ptr[0] != '\n'))
		return len;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || (status < 400 && status >= 300 && http_request_header(r, "Location")))
		return len;	/* 1xx, or a redirect libcurl follows */
	e = r->head(r, status, r->userdata);
	if (e < 0) {
		r->data_err = e;
		return 0;
	}
	return len;
}

const char *http_request_header(struct http_request *r, const char *name)
{
	struct curl_header *h = NULL;

	if (curl_easy_header(r->easy, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h)
		return NULL;
	return h->value;
}

void http_request_unpause(struct http_request *r)
{
	curl_easy_pause(r->easy, CURLPAUSE_CONT);
}

static int curl_code_to_errno(CURLcode code)
{
	switch (code) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_FILE_COULDNT_READ_FILE:
		return -ENOENT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

static void finish_request(struct http_request *r, CURLcode code)
{
	struct http_response resp = { 0 };
	char limit[64];
	long status = 0;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	resp.body = r->resp.buf;
	resp.body_len = r->resp.len;
	resp.bytes = r->received;
	if (code == CURLE_OK) {
		resp.status = status;
	} else if (r->data_err) {
		resp.err = r->data_err;
		if (r->data_err == -EFBIG) {
			snprintf(limit, sizeof(limit), "larger than the limit of %llu bytes",
				 (unsigned long long)r->max_size);
			resp.error = limit;
		} else {
			resp.error = strerror(-r->data_err);
		}
	} else {
		resp.err = curl_code_to_errno(code);
		resp.error = r->errbuf[0] ? r->errbuf : curl_easy_strerror(code);
	}
	request_unlink(r);
	if (r->connect_only && code == CURLE_OK) {
		/* the caller's until cancelled; it stays in the multi, whose
		 * connection cache has the connection (curl_easy_send/recv) */
		r->connected = true;
		r->done(r, &resp, r->userdata);
		return;
	}
	r->done(r, &resp, r->userdata);
	request_free(r);
}

int http_request_fd(struct http_request *r)
{
	curl_socket_t fd = CURL_SOCKET_BAD;

	if (!r->connected || curl_easy_getinfo(r->easy, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK)
		return -1;
	return fd == CURL_SOCKET_BAD ? -1 : (int)fd;
}

ssize_t http_request_send(struct http_request *r, const void *buf, size_t len)
{
	size_t n = 0;
	CURLcode res = curl_easy_send(r->easy, buf, len, &n);

	if (res == CURLE_AGAIN)
		return -EAGAIN;
	return res == CURLE_OK ? (ssize_t)n : -EIO;
}

ssize_t http_request_recv(struct http_request *r, void *buf, size_t len)
{
	size_t n = 0;
	CURLcode res = curl_easy_recv(r->easy, buf, len, &n);

	if (res == CURLE_AGAIN)
		return -EAGAIN;
	return res == CURLE_OK ? (ssize_t)n : -EIO;
}

static void check_finished(struct http_client *c)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(c->multi, &left))) {
		struct http_request *r = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r)
			finish_request(r, msg->data.result);
	}
}

/* Copy the body to send; a large one goes out in one chunk (HTTP_UPLOAD_CHUNK). */
static int set_body(struct http_request *r, const void *body, size_t len)
{
	size_t chunk = len < HTTP_UPLOAD_CHUNK_MAX ? len : HTTP_UPLOAD_CHUNK_MAX;

	r->body = malloc(len ? len : 1);
	if (!r->body)
		return -ENOMEM;
	memcpy(r->body, body, len);
	curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (chunk > HTTP_UPLOAD_CHUNK)
		curl_easy_setopt(r->easy, CURLOPT_UPLOAD_BUFFERSIZE, (long)chunk);
	return 0;
}

static int request_setup(struct http_request *r, const struct http_request_opts *o)
{
	CURL *e = r->easy;
	uint64_t timeout = o->timeout ? o->timeout : 60 * USEC_PER_SEC;
	uint64_t ctimeout = o->connect_timeout ? o->connect_timeout : 10 * USEC_PER_SEC;

	for (const char *const *h = o->headers; h && *h; h++) {
		struct curl_slist *n = curl_slist_append(r->headers, *h);

		if (!n)
			return -ENOMEM;
		r->headers = n;
	}
	if (o->body && set_body(r, o->body, o->body_len) < 0)
		return -ENOMEM;
	if (o->no_body)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	else if (o->method)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, o->method);
	curl_easy_setopt(e, CURLOPT_URL, o->url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
			 timeout == HTTP_NO_TIMEOUT ? 0L : (long)(timeout / USEC_PER_MSEC));
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(ctimeout / USEC_PER_MSEC));
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https,file");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_USERAGENT, "labd");
	if (o->unix_socket)
		curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, o->unix_socket);
	if (o->connect_only) {
		curl_easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L);
		/* a tunnel lives long: a peer gone without a word is found out */
		curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, HTTP_KEEPALIVE_IDLE);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, HTTP_KEEPALIVE_INTERVAL);
	}
	if (o->head) {
		curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
		curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	}
	return 0;
}

int http_request_start(struct http_client *c, const struct http_request_opts *o,
		       http_done_fn done, void *userdata, struct http_request **ret)
{
	struct http_request *r;
	int err;

	if (!o->url || !done)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->client = c;
	r->done = done;
	r->userdata = userdata;
	r->data = o->data;
	r->head = o->head;
	r->connect_only = o->connect_only;
	r->max_size = o->max_size ? o->max_size : HTTP_DEFAULT_MAX_BODY;
	strbuf_init(&r->resp);
	r->easy = curl_easy_init();
	if (!r->easy) {
		free(r);
		return -ENOMEM;
	}
	err = request_setup(r, o);
	if (!err && curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
		err = -ENOMEM;
	if (err) {
		curl_easy_cleanup(r->easy);
		curl_slist_free_all(r->headers);
		free(r->body);
		free(r);
		return err;
	}
	r->next = c->requests;
	if (c->requests)
		c->requests->prev = r;
	c->requests = r;
	c->active++;
	if (ret)
		*ret = r;
	return 0;
}

void http_request_cancel(struct http_request *r)
{
	if (!r)
		return;
	if (!r->connected)
		request_unlink(r);
	request_free(r);
}

unsigned http_client_active(const struct http_client *c)
{
	return c->active;
}

struct http_client *http_client_free(struct http_client *c)
{
	if (!c)
		return NULL;
	while (c->requests)
		http_request_cancel(c->requests);
	curl_multi_cleanup(c->multi);
	loop_source_free(c->timer);
	loop_source_free(c->now);
	free(c);
	return NULL;
}
