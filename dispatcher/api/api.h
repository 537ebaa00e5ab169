/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * api.h -- labd's HTTP API (libmicrohttpd driven by the labd loop)
 *
 * JSON over HTTP, on localhost by default (http.listen in labd.conf), with
 * bearer-token authentication when listening on another address.  Only
 * api*.c touch libmicrohttpd.  See doc/api.md for the endpoints.
 */
#ifndef LABD_API_H
#define LABD_API_H

struct api;
struct daemon;

/**
 * api_new() - start listening
 * @listen: "HOST:PORT" overriding the configuration's http.listen, or NULL
 *
 * Returns 0, -EADDRINUSE, -EINVAL (bad address) or another negative errno.
 */
int api_new(struct daemon *d, const char *listen, struct api **ret);

/** api_free() - stop listening and close every connection; accepts NULL; returns NULL. */
struct api *api_free(struct api *a);

/** api_port() - the TCP port actually bound (useful with port 0). */
int api_port(const struct api *a);

#endif
