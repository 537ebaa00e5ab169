/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * api.h -- labd's HTTP API (libmicrohttpd driven by the labd loop)
 *
 * JSON over HTTP, on localhost by default (http.listen in labd.conf), with
 * bearer-token authentication when listening on another address.  Only
 * api/ touches libmicrohttpd.  See doc/api.md for the endpoints.
 *
 * api/ owns the HTTP face of labd: the listeners (api.c), who is asking
 * (api_auth.c) and one file per group of endpoints (api_jobs.c, api_log.c,
 * api_devices.c, api_reservations.c, api_sessions.c, api_console.c,
 * api_results.c); api_internal.h is what they share, private to api/.
 * The same server answers LAVA's clients (doc/lava-compat.md): REST at
 * /api/v0.2 (api_lava_rest.c) and XML-RPC at /RPC2 (api_lava_rpc.c, the
 * only user of xmlrpc-c), sharing api_lava.c.
 */
#ifndef LABD_API_H
#define LABD_API_H

struct api;
struct backends;
struct events;
struct http_client;
struct lab;
struct loop;
struct reservations;
struct sched;
struct store;
struct viewers;

/*
 * What the API serves, given at creation (the daemon owns all of it and
 * outlives the API).  The handlers read the store, submit and cancel through
 * the scheduler, and look the boards, the configuration and the users up in
 * @lab each time (a reload replaces them).
 */
struct overlay_files;

struct retention;

struct api_deps {
	struct loop *loop;
	struct store *store;
	struct events *events;		/* job events and log growth, for followers */
	struct sched *sched;		/* submit, check, cancel, runs, queue positions */
	struct reservations *reservations;
	struct viewers *viewers;	/* live consoles */
	const struct lab *lab;		/* boards, configuration, users (board/lab.h) */
	struct backends *backends;	/* results backends, for /metrics (or NULL) */
	struct http_client *http;	/* requests to the lab's other hosts (api_forward.c) */
	struct overlay_files *overlays;	/* running jobs' test overlays, for their boards */
	struct retention *retention;	/* its last run's figures, for /metrics (or NULL) */
};

/**
 * api_new() - start listening
 * @deps: copied
 * @listen: "HOST:PORT" overriding the configuration's http.listen, or NULL
 *
 * Returns 0, -EADDRINUSE, -EINVAL (bad address) or another negative errno.
 */
int api_new(const struct api_deps *deps, const char *listen, struct api **ret);

/** api_free() - stop listening and close every connection; accepts NULL; returns NULL. */
struct api *api_free(struct api *a);

/** api_port() - the TCP port actually bound (useful with port 0). */
int api_port(const struct api *a);

#endif
