/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * match.h -- streaming PCRE2 matching on console bytes
 *
 * A matcher holds a window of console bytes not yet consumed and a set of
 * patterns (PCRE2, byte mode: serial consoles carry arbitrary bytes).  Bytes
 * are fed as they arrive, in chunks of any size; a pattern matches across
 * chunk boundaries.  matcher_next() finds the earliest match of any pattern
 * in the window (ties go to the pattern added first), the way expect does,
 * and consumes the window up to the end of that match, so a stale prompt
 * already matched cannot match twice.
 *
 * Each pattern remembers where in the window it could still start a match
 * (PCRE2 partial matching), so feeding n bytes costs O(n), not O(window).
 * The window is bounded (MATCH_WINDOW_MAX): the oldest bytes are dropped.
 *
 * Patterns can be replaced at any time (matcher_clear + matcher_add) without
 * losing buffered bytes: the login prompt that arrived in the same read as
 * the kernel banner is still there when the next wait starts.
 */
#ifndef LABD_MATCH_H
#define LABD_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MATCH_WINDOW_MAX (64 * 1024)
#define MATCH_WINDOW_KEEP (16 * 1024)	/* bytes kept when the window overflows */

struct matcher;

struct match {
	int id;			/* the id given to matcher_add() */
	const uint8_t *text;	/* the matched bytes; valid until the next call on the matcher */
	size_t len;
	const uint8_t *before;	/* the unconsumed bytes before the match (e.g. command output) */
	size_t before_len;
};

int matcher_new(struct matcher **ret);
struct matcher *matcher_free(struct matcher *m);

/**
 * matcher_add() - add a pattern
 * @id: returned in struct match when this pattern matches
 * @err: on -EINVAL, a message like "missing closing parenthesis at offset 4"
 */
int matcher_add(struct matcher *m, const char *regex, int id, char *err, size_t errlen);

/** matcher_add_literal() - add a pattern matching @text exactly. */
int matcher_add_literal(struct matcher *m, const char *text, int id);

/** matcher_clear() - remove every pattern; buffered bytes stay. */
void matcher_clear(struct matcher *m);

/** matcher_count() - number of patterns. */
size_t matcher_count(const struct matcher *m);

/** matcher_feed() - append console bytes to the window. */
int matcher_feed(struct matcher *m, const uint8_t *data, size_t len);

/**
 * matcher_next() - find and consume the earliest match
 *
 * Returns true and fills @ret, or false when no pattern matches the window.
 */
bool matcher_next(struct matcher *m, struct match *ret);

/**
 * matcher_group() - a named group of the last match ("result", "test_case_id")
 *
 * Returns true and sets @ret/@len (borrowed, valid until the next call on the
 * matcher) when the group exists and took part in the match.
 */
bool matcher_group(struct matcher *m, const char *name, const uint8_t **ret, size_t *len);

/** matcher_flush() - drop every buffered byte (e.g. after a power cycle). */
void matcher_flush(struct matcher *m);

/** matcher_window() - the unconsumed bytes (borrowed). */
const uint8_t *matcher_window(const struct matcher *m, size_t *len);

/** match_regex_check() - whether @regex compiles; message in @err. */
int match_regex_check(const char *regex, char *err, size_t errlen);

/** match_regex_escape() - @text with PCRE2 metacharacters quoted; caller frees. */
char *match_regex_escape(const char *text);

#endif
