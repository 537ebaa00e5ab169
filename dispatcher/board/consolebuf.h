/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * consolebuf.h -- a board's recent console output and its live subscribers
 *
 * Every byte a board prints goes through its consolebuf: a fixed-size ring
 * (the scrollback replayed to someone attaching to the console) and a list of
 * subscribers called synchronously with each chunk (the log writer, the job
 * runner, console viewers).  Subscribers must not block: a slow network
 * viewer buffers on its own, with a bound, and drops itself when it falls
 * too far behind (so a slow viewer never slows the board or the others).
 * A subscriber may unsubscribe itself or others from inside its callback.
 */
#ifndef LABD_CONSOLEBUF_H
#define LABD_CONSOLEBUF_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct consolebuf;
struct consolebuf_sub;

#define CONSOLEBUF_DEFAULT_SIZE (64 * 1024)

typedef void (*consolebuf_fn)(const uint8_t *data, size_t len, void *userdata);

int consolebuf_new(size_t size, struct consolebuf **ret);

/** consolebuf_free() - free the ring and every subscription; accepts NULL; returns NULL. */
struct consolebuf *consolebuf_free(struct consolebuf *cb);

/** consolebuf_append() - store @data in the ring and hand it to every subscriber. */
void consolebuf_append(struct consolebuf *cb, const uint8_t *data, size_t len);

/** consolebuf_tail() - append the last @max bytes of the ring to @out. */
int consolebuf_tail(const struct consolebuf *cb, size_t max, struct strbuf *out);

/** consolebuf_total() - bytes appended since creation. */
uint64_t consolebuf_total(const struct consolebuf *cb);

/** consolebuf_subscribe() - call @fn with every later chunk; @ret for unsubscribing. */
int consolebuf_subscribe(struct consolebuf *cb, consolebuf_fn fn, void *userdata,
			 struct consolebuf_sub **ret);

/** consolebuf_unsubscribe() - stop a subscription; accepts NULL; returns NULL. */
struct consolebuf_sub *consolebuf_unsubscribe(struct consolebuf_sub *sub);

#endif
