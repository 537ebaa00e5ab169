/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * overlay_files.h -- overlays boards may download from labd's HTTP server
 *
 * A board told to fetch its test overlay (transfer_overlay) has no API
 * token: it downloads GET /api/v1/overlays/<name> without one.  Names are
 * 128 random bits in hex plus the file's suffix, registered by the job that
 * built the overlay and removed when the job ends, so only the board the
 * job told can find it, and only while the job runs.
 */
#ifndef LABD_OVERLAY_FILES_H
#define LABD_OVERLAY_FILES_H

struct overlay_files;

int overlay_files_new(struct overlay_files **ret);

/** overlay_files_set_port() - the TCP port labd's HTTP API listens on (0: none). */
void overlay_files_set_port(struct overlay_files *f, unsigned port);

/** overlay_files_port() - the TCP port boards reach the API at; 0: none (a Unix socket). */
unsigned overlay_files_port(const struct overlay_files *f);

/** overlay_files_free() - accepts NULL; returns NULL. */
struct overlay_files *overlay_files_free(struct overlay_files *f);

/**
 * overlay_files_add() - serve the file @path (borrowed name copied) under a new
 * name "<32 hex digits><suffix>", returned in @ret_name (caller frees).
 */
int overlay_files_add(struct overlay_files *f, const char *path, const char *suffix,
		      char **ret_name);

/** overlay_files_remove() - stop serving @name; accepts NULL and unknown names. */
void overlay_files_remove(struct overlay_files *f, const char *name);

/** overlay_files_path() - the file served as @name (borrowed), or NULL. */
const char *overlay_files_path(const struct overlay_files *f, const char *name);

#endif
