/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * upload.h -- deliver a backend's spool over HTTP: batches, retries, backoff
 *
 * One upload drains one spool (spool.h) to one URL, one POST at a time, in
 * spool order, so what a receiver gets is ordered as it was spooled.  The
 * backend composes each request body from records at the spool's head
 * (ops->compose).  Then, by the answer:
 *
 *   2xx             the records are acknowledged (ops->accepted first)
 *   4xx but 408/429 the receiver refuses them: ops->rejected reports it, and
 *                   the records are acknowledged all the same (never retried)
 *   anything else   (transport error, timeout, 408, 429, 5xx) the same records
 *                   are sent again after a delay: 0.5 s doubling up to
 *                   retry_max_ms (UPLOAD_BACKOFF_MAX by default), each delay
 *                   drawn between half and all of it (jitter), so a crowd of
 *                   labds does not retry in step
 *
 * Batching: upload_kick() after appending sends at once when at least
 * batch_bytes are waiting, else when the oldest waiting record is batch_ms
 * old.  Everything runs in the loop through http_client.
 */
#ifndef LABD_UPLOAD_H
#define LABD_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct backend;
struct http_response;
struct spool;
struct strbuf;
struct upload;

#define UPLOAD_BACKOFF_MIN (500 * 1000ULL)		/* usec */
#define UPLOAD_BACKOFF_MAX (30 * 1000000ULL)		/* default longest delay */
#define UPLOAD_RETRY_MAX_MS_MIN 100			/* bounds of a configured one, ms */
#define UPLOAD_RETRY_MAX_MS_MAX (3600 * 1000)
#define UPLOAD_TIMEOUT (30 * 1000000ULL)		/* one request */
#define UPLOAD_MAX_REPORTED_BODY 512			/* bytes of a refusal quoted in logs */

struct upload_ops {
	/**
	 * required: append the body of the next request to @body, reading the
	 * spool from *@pos on and moving *@pos past what it took; returns 0,
	 * or a negative errno (nothing is sent, retried after a backoff)
	 */
	int (*compose)(struct upload *u, uint64_t *pos, struct strbuf *body, void *ud);
	/** optional: records [@start, @end) are about to be acknowledged */
	void (*acking)(struct upload *u, uint64_t end, void *ud);
	/** optional: the receiver took records [@start, @end) with a 2xx @resp */
	void (*accepted)(struct upload *u, const struct http_response *resp, uint64_t start,
			 uint64_t end, void *ud);
	/** required: the receiver refused records [@start, @end) with a 4xx @resp */
	void (*rejected)(struct upload *u, const struct http_response *resp, uint64_t start,
			 uint64_t end, void *ud);
};

struct upload_opts {
	const char *url;
	const char *token;		/* sent as "Authorization: Bearer <token>", or NULL */
	const char *content_type;	/* default "application/json" */
	size_t batch_bytes;		/* 0: send every record at once */
	uint64_t batch_ms;
	uint64_t retry_max_ms;		/* longest delay between retries; 0: UPLOAD_BACKOFF_MAX */
};

/** upload_new() - deliver @sp for backend @b (its loop and HTTP client); strings are copied. */
int upload_new(struct backend *b, struct spool *sp, const struct upload_opts *o,
	       const struct upload_ops *ops, void *ud, struct upload **ret);

/** upload_free() - cancel the request in flight (its records stay spooled); accepts NULL. */
struct upload *upload_free(struct upload *u);

/** upload_kick() - records were appended (or are waiting since a start): send when due. */
void upload_kick(struct upload *u);

/** upload_busy() - whether records are waiting or a request is in flight. */
bool upload_busy(const struct upload *u);

/** upload_failing() - whether the last attempt failed (the receiver is down). */
bool upload_failing(const struct upload *u);

#endif
