/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strbuf.h -- growable byte buffers
 *
 * Invariants: `buf` is never NULL and is always NUL-terminated at buf[len]
 * (the terminator is not counted), so a strbuf holding text can be passed to
 * any C string function.  It may also hold arbitrary bytes, including NULs.
 * A strbuf initialised with STRBUF_INIT or strbuf_init() allocates nothing
 * until something is added.  Functions that grow the buffer return 0 or
 * -ENOMEM and leave the contents unchanged on failure.
 */
#ifndef LABD_STRBUF_H
#define LABD_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { .alloc = 0, .len = 0, .buf = strbuf_slopbuf }

/** strbuf_init() - make @sb empty without allocating. */
void strbuf_init(struct strbuf *sb);

/** strbuf_release() - free the contents and re-initialise @sb. */
void strbuf_release(struct strbuf *sb);

/** strbuf_detach() - take the buffer; the caller frees it with free(3). Never NULL on success. */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);

/** strbuf_grow() - make room for @extra more bytes. */
int strbuf_grow(struct strbuf *sb, size_t extra);

/** strbuf_reset() - set the length to 0, keeping the allocation. */
void strbuf_reset(struct strbuf *sb);

int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_addstr(struct strbuf *sb, const char *s);
int strbuf_addch(struct strbuf *sb, int c);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);

/** strbuf_remove() - drop @len bytes at @pos. */
void strbuf_remove(struct strbuf *sb, size_t pos, size_t len);

/** strbuf_consume() - drop the first @len bytes (consumed input). */
void strbuf_consume(struct strbuf *sb, size_t len);

#endif
