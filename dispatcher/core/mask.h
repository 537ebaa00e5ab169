/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mask.h -- secrets replaced by "[secret]" wherever labd writes
 *
 * A job's secrets (and the passwords it types at login prompts) must never
 * reach a file, the store, an event, a backend or the API.  A struct mask
 * holds those strings; everything labd writes on behalf of the job goes
 * through it:
 *
 *   mask_text()   one string (a log line, a result name, an error message)
 *   mask_json()   every string of a JSON value, in place (event data)
 *   mask_stream   console bytes as they arrive in pieces: a secret cut in two
 *                 by a read is still found.  Bytes that could be the start
 *                 of a secret are held back until the next piece tells, or
 *                 until mask_stream_flush() (the caller's timer, or the end).
 *
 * Matching is on bytes, leftmost first, the longest secret at a position
 * winning.  Empty strings are ignored.
 */
#ifndef LABD_MASK_H
#define LABD_MASK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct mask;
struct strbuf;

#define MASK_TEXT "[secret]"
#define MASK_MAX_SECRET 4096	/* bytes of one secret */

/** mask_new() - an empty mask, freed with mask_free(). */
int mask_new(struct mask **ret);

/** mask_free() - accepts NULL; returns NULL. */
struct mask *mask_free(struct mask *m);

/** mask_add() - mask @secret too (copied); -E2BIG beyond MASK_MAX_SECRET. */
int mask_add(struct mask *m, const char *secret);

/** mask_empty() - whether there is nothing to mask (NULL is empty). */
bool mask_empty(const struct mask *m);

/** mask_text() - @text with every secret replaced (a new string, caller frees). */
char *mask_text(const struct mask *m, const char *text);

/** mask_json() - replace the secrets in every string (and key) of @v, in place. */
int mask_json(const struct mask *m, json_t *v);

struct mask_stream {
	const struct mask *m;
	struct strbuf *held;	/* bytes that may start a secret */
};

/** mask_stream_init() - a stream over @m (borrowed; it must outlive the stream). */
int mask_stream_init(struct mask_stream *s, const struct mask *m);
void mask_stream_release(struct mask_stream *s);

/**
 * mask_stream_feed() - @len bytes more; what is known to be clear of secrets
 * (or masked) is appended to @out, possibly nothing.
 */
int mask_stream_feed(struct mask_stream *s, const void *data, size_t len, struct strbuf *out);

/** mask_stream_pending() - bytes held back. */
size_t mask_stream_pending(const struct mask_stream *s);

/** mask_stream_flush() - append what was held back to @out (it was no secret). */
int mask_stream_flush(struct mask_stream *s, struct strbuf *out);

#endif
