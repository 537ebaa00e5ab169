/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_client.h -- HTTP requests inside the event loop (libcurl multi)
 *
 * One http_client per daemon drives every outgoing request: power control
 * through pdudaemon, artifact downloads, results backends.  Sockets and the
 * timeout of libcurl's multi interface are registered with the loop, so no
 * request ever blocks the daemon.
 *
 * Protocol:
 *  1. fill a struct http_request_opts (only url is required);
 *  2. http_request_start() returns at once;
 *  3. done(req, resp, ud) is called exactly once from the loop, unless the
 *     request was cancelled first; @resp and the request are freed after it
 *     returns (do not keep pointers to them).
 *
 * Transport failures (connection refused, timeout, size limit) have
 * resp->status == 0 and resp->error set; HTTP errors have their status.
 */
#ifndef LABD_HTTP_CLIENT_H
#define LABD_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct http_client;
struct http_request;

#define HTTP_DEFAULT_MAX_BODY (16 * 1024 * 1024)

struct http_response {
	long status;		/* HTTP status, 0 on transport failure */
	const char *body;	/* NUL-terminated; empty when streamed to ->data */
	size_t body_len;
	const char *error;	/* transport error text, or NULL */
	int err;		/* 0, or negative errno for the transport failure */
	uint64_t bytes;		/* body bytes received (also when streamed) */
};

struct http_request_opts {
	const char *method;	/* default "GET", "POST" when a body is given */
	const char *url;
	const char *const *headers;	/* NULL-terminated "Name: value" list */
	const void *body;	/* copied */
	size_t body_len;
	uint64_t timeout;	/* whole request, usec; 0 = 60 s */
	uint64_t connect_timeout;	/* usec; 0 = 10 s */
	uint64_t max_size;	/* body limit; 0 = HTTP_DEFAULT_MAX_BODY; over it: -EFBIG */
	const char *unix_socket;	/* connect through this AF_UNIX path */
	/**
	 * optional: stream the body here instead of collecting it; return 0
	 * (taken), < 0 to abort, or HTTP_DATA_PAUSE: @buf is not taken, the
	 * transfer stops until http_request_unpause() gives it again
	 */
	int (*data)(const void *buf, size_t len, void *userdata);
	/**
	 * optional: the final response's status line and headers are in (a
	 * redirect followed is not), before its body; http_request_header()
	 * reads them meanwhile.  Return < 0 to abort.
	 */
	int (*head)(struct http_request *req, long status, void *userdata);
	/**
	 * connect only (TCP, TLS or the Unix socket), for a protocol of the
	 * caller's own after an HTTP upgrade: done is called once connected
	 * (status 0, err 0) and the request stays, the connection's, until
	 * http_request_cancel(): http_request_fd(), _send(), _recv(); with TCP
	 * keepalive probes (HTTP_KEEPALIVE_*), so that a peer that vanished
	 * (its machine down, the network cut) ends the connection in minutes
	 */
	bool connect_only;
	/** a HEAD request: the answer's status and headers, no body (method ignored) */
	bool no_body;
};

#define HTTP_KEEPALIVE_IDLE 30L		/* seconds idle before the first probe */
#define HTTP_KEEPALIVE_INTERVAL 10L	/* seconds between probes (the kernel's count of them) */

#define HTTP_DATA_PAUSE 1		/* from ->data: give me this again later */
#define HTTP_NO_TIMEOUT UINT64_MAX	/* ->timeout: the request may last forever */

typedef void (*http_done_fn)(struct http_request *req, const struct http_response *resp,
			     void *userdata);

int http_client_new(struct loop *l, struct http_client **ret);

/** http_client_free() - cancel every request (no callbacks) and free; returns NULL. */
struct http_client *http_client_free(struct http_client *c);

/**
 * http_request_start() - start a request
 * @ret: optional handle for http_request_cancel(); valid until done runs
 */
int http_request_start(struct http_client *c, const struct http_request_opts *o,
		       http_done_fn done, void *userdata, struct http_request **ret);

/**
 * http_request_header() - header @name of the response, from opts.head on
 * (the last one when repeated), or NULL; valid until the next call to the
 * request's callbacks
 */
const char *http_request_header(struct http_request *r, const char *name);

/**
 * http_request_unpause() - go on with a transfer whose ->data returned
 * HTTP_DATA_PAUSE; ->data may be called from inside this call.
 */
void http_request_unpause(struct http_request *r);

/** http_request_fd() - the socket of a connect_only request, to watch in the loop, or -1. */
int http_request_fd(struct http_request *r);

/** http_request_send() - bytes sent (> 0), -EAGAIN, or -EIO (connect_only). */
ssize_t http_request_send(struct http_request *r, const void *buf, size_t len);

/** http_request_recv() - bytes received (> 0), 0 at the end, -EAGAIN, -EIO (connect_only). */
ssize_t http_request_recv(struct http_request *r, void *buf, size_t len);

/** http_request_cancel() - abort; the done callback is not called. Accepts NULL. */
void http_request_cancel(struct http_request *r);

/** http_client_active() - number of requests in flight. */
unsigned http_client_active(const struct http_client *c);

#endif
