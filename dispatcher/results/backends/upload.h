/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * upload.h -- deliver a backend's spool over HTTP: batches, retries, backoff
 *
 * One upload drains one spool (spool.h) to one URL.  The backend appends
 * records with upload_append() (never spool_append() directly: the upload
 * keeps an index of what waits), and composes each request body from the
 * records upload_take() hands it (ops->compose).
 *
 * Order: every record belongs to a stream (ops->stream: for a backend, the
 * job).  Up to max_in_flight requests are in flight at once, one per
 * channel; a stream always goes through the same channel (its spool slot,
 * stream % SPOOL_SLOTS, modulo max_in_flight), in spool order, one request at
 * a time.  So a stream's next batch is sent only once its previous one was
 * answered, and a receiver gets every stream in order, whatever the answers'
 * order; records of streams on different channels may arrive in any order.
 *
 * Then, by the answer:
 *
 *   2xx             the records are acknowledged (ops->accepted first)
 *   4xx but 408/429 the receiver refuses them: ops->rejected reports it, and
 *                   the records are acknowledged all the same (never retried)
 *   anything else   (transport error, timeout, 408, 429, 5xx) the same records
 *                   are sent again after a delay: 0.5 s doubling up to
 *                   retry_max_ms (UPLOAD_BACKOFF_MAX by default), each delay
 *                   drawn between half and all of it (jitter), so a crowd of
 *                   labds does not retry in step; no channel sends meanwhile
 *
 * Exactly once: acknowledgements are stored per spool slot
 * (spool_ack_slots()), so a restarted labd sends again only the records no
 * answer covered, whichever channels were answered first.
 *
 * Batching: upload_kick() after appending sends a channel's records at once
 * when at least batch_bytes of them wait, else when the oldest of them has
 * waited batch_ms.  Everything runs in the loop through http_client.
 */
#ifndef LABD_UPLOAD_H
#define LABD_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results/backends/spool.h"

struct backend;
struct backend_stats;
struct http_response;
struct strbuf;
struct upload;

#define UPLOAD_BACKOFF_MIN (500 * 1000ULL)		/* usec */
#define UPLOAD_BACKOFF_MAX (30 * 1000000ULL)		/* default longest delay */
#define UPLOAD_RETRY_MAX_MS_MIN 100			/* bounds of a configured one, ms */
#define UPLOAD_RETRY_MAX_MS_MAX (3600 * 1000)
#define UPLOAD_TIMEOUT (30 * 1000000ULL)		/* one request */
#define UPLOAD_MAX_REPORTED_BODY 512			/* bytes of a refusal quoted in logs */
#define UPLOAD_MAX_IN_FLIGHT SPOOL_SLOTS		/* bound of max_in_flight */

/* A request as ops->request may change it (strings borrowed until the request starts). */
struct upload_request {
	const char *method;		/* "POST" by default */
	const char *url;		/* upload_opts' by default */
	const char *const *headers;	/* NULL-terminated "Name: value"; by default the
					 * content type and the token of upload_opts */
};

struct upload_ops {
	/**
	 * required: append the body of the next request to @body, taking its
	 * records with upload_take(); returns 0, -EAGAIN when it cannot be
	 * composed yet (nothing is sent, and nothing counted as a failure: the
	 * backend calls upload_kick() once it can), or another negative errno
	 * (nothing is sent, retried after a backoff)
	 */
	int (*compose)(struct upload *u, struct strbuf *body, void *ud);
	/** optional: the stream of record @data (e.g. its job); NULL: one stream */
	uint64_t (*stream)(const void *data, size_t len, void *ud);
	/** optional: records are about to be acknowledged; @frees: a spool segment goes */
	void (*acking)(struct upload *u, bool frees, void *ud);
	/** optional: the receiver took a request's records (upload_batch()) with a 2xx @resp */
	void (*accepted)(struct upload *u, const struct http_response *resp, void *ud);
	/** required: the receiver refused a request's records (upload_batch()) with a 4xx @resp */
	void (*rejected)(struct upload *u, const struct http_response *resp, void *ud);
	/**
	 * optional: right after compose, the method, URL and headers of its
	 * request, when they come from its records (a notify callback's own
	 * URL); returns 0, or a negative errno (retried after a backoff)
	 */
	int (*request)(struct upload *u, struct upload_request *req, void *ud);
};

struct upload_opts {
	const char *url;
	const char *token;		/* sent as "Authorization: Bearer <token>", or NULL */
	const char *content_type;	/* default "application/json" */
	size_t batch_bytes;		/* 0: send every record at once */
	uint64_t batch_ms;
	uint64_t retry_max_ms;		/* longest delay between retries; 0: UPLOAD_BACKOFF_MAX */
	unsigned max_in_flight;		/* requests at once, 1 .. UPLOAD_MAX_IN_FLIGHT; 0: 1 */
};

/**
 * upload_new() - deliver @sp for backend @b (its loop and HTTP client)
 *
 * Strings are copied.  Reads the records @sp still holds to deliver them
 * (those of a previous labd).  Returns 0, -EINVAL (max_in_flight too large),
 * -ENOMEM or the error of reading @sp.
 */
int upload_new(struct backend *b, struct spool *sp, const struct upload_opts *o,
	       const struct upload_ops *ops, void *ud, struct upload **ret);

/** upload_free() - cancel the requests in flight (their records stay spooled); accepts NULL. */
struct upload *upload_free(struct upload *u);

/**
 * upload_append() - spool one record to be delivered
 *
 * Returns 0 or the error of spool_append() (-ENOSPC: the spool is full),
 * -ENOMEM.  Call upload_kick() once done appending.
 */
int upload_append(struct upload *u, const void *data, size_t len);

/** upload_kick() - records were appended (or are waiting since a start): send when due. */
void upload_kick(struct upload *u);

/**
 * upload_take() - from ops->compose only: hand the next waiting records of
 * the channel being composed to @fn, which adds them to the body
 * @max_bytes: stop before a record that would make the payloads exceed this;
 *	the first record is always taken
 *
 * As with spool_read(), @fn returns 0 to go on, > 0 to stop after its
 * record, < 0 to fail.  Every record handed over is part of the request.
 * A record found corrupt is skipped (it is lost, and logged).  Returns the
 * number of records handed over, or a negative errno.
 */
int upload_take(struct upload *u, size_t max_bytes, spool_record_fn fn, void *ud);

/**
 * upload_batch() - from ops->accepted and ops->rejected only: hand the
 * records of the answered request to @fn again
 *
 * Returns the number of records, or the negative value @fn returned.
 */
int upload_batch(struct upload *u, spool_record_fn fn, void *ud);

/** upload_busy() - whether records are waiting or a request is in flight. */
bool upload_busy(const struct upload *u);

/** upload_failing() - whether the last attempt failed (the receiver is down). */
bool upload_failing(const struct upload *u);

/**
 * upload_stats() - the spool's size and the delivery lag: how long records
 * have waited since the last delivery made progress (0 when none waits).
 */
void upload_stats(const struct upload *u, struct backend_stats *ret);

#endif
