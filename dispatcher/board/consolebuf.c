// SPDX-License-Identifier: GPL-2.0-or-later
/* consolebuf.c -- scrollback ring and fan-out of a board's console bytes */
#include "board/consolebuf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

struct consolebuf_sub {
	struct consolebuf *cb;
	consolebuf_fn fn;
	void *userdata;
	bool dead;
	struct consolebuf_sub *next;
};

struct consolebuf {
	uint8_t *ring;
	size_t size;
	size_t head;		/* next write position */
	uint64_t total;
	struct consolebuf_sub *subs;
	unsigned dispatching;
};

int consolebuf_new(size_t size, struct consolebuf **ret)
{
	struct consolebuf *cb = calloc(1, sizeof(*cb));

	if (!cb || !size)
		goto err_free;
	cb->ring = malloc(size);
	if (!cb->ring)
		goto err_free;
	cb->size = size;
	*ret = cb;
	return 0;

err_free:
	free(cb);
	return size ? -ENOMEM : -EINVAL;
}

/* Unlink subscriptions marked dead once nobody iterates the list. */
static void reap_subs(struct consolebuf *cb)
{
	struct consolebuf_sub **pp = &cb->subs;

	while (*pp) {
		struct consolebuf_sub *s = *pp;

		if (s->dead) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

struct consolebuf *consolebuf_free(struct consolebuf *cb)
{
	if (!cb)
		return NULL;
	while (cb->subs) {
		struct consolebuf_sub *s = cb->subs;

		cb->subs = s->next;
		free(s);
	}
	free(cb->ring);
	free(cb);
	return NULL;
}

static void ring_store(struct consolebuf *cb, const uint8_t *data, size_t len)
{
	size_t first;

	if (len > cb->size) {
		data += len - cb->size;
		len = cb->size;
	}
	first = cb->size - cb->head < len ? cb->size - cb->head : len;
	memcpy(cb->ring + cb->head, data, first);
	memcpy(cb->ring, data + first, len - first);
	cb->head = (cb->head + len) % cb->size;
}

void consolebuf_append(struct consolebuf *cb, const uint8_t *data, size_t len)
{
	struct consolebuf_sub *s;

	if (!len)
		return;
	ring_store(cb, data, len);
	cb->total += len;
	cb->dispatching++;
	for (s = cb->subs; s; s = s->next)
		if (!s->dead)
			s->fn(data, len, s->userdata);
	if (--cb->dispatching == 0)
		reap_subs(cb);
}

int consolebuf_tail(const struct consolebuf *cb, size_t max, struct strbuf *out)
{
	size_t have = cb->total < cb->size ? (size_t)cb->total : cb->size;
	size_t n = max < have ? max : have;
	size_t start = (cb->head + cb->size - n) % cb->size;
	size_t first = cb->size - start < n ? cb->size - start : n;
	int r;

	r = strbuf_add(out, cb->ring + start, first);
	if (!r)
		r = strbuf_add(out, cb->ring, n - first);
	return r;
}

uint64_t consolebuf_total(const struct consolebuf *cb)
{
	return cb->total;
}

int consolebuf_subscribe(struct consolebuf *cb, consolebuf_fn fn, void *userdata,
			 struct consolebuf_sub **ret)
{
	struct consolebuf_sub *s = calloc(1, sizeof(*s)), **pp;

	if (!s)
		return -ENOMEM;
	s->cb = cb;
	s->fn = fn;
	s->userdata = userdata;
	/* append at the end: the log writer subscribed first sees bytes first */
	for (pp = &cb->subs; *pp; pp = &(*pp)->next)
		;
	*pp = s;
	if (ret)
		*ret = s;
	return 0;
}

struct consolebuf_sub *consolebuf_unsubscribe(struct consolebuf_sub *sub)
{
	if (!sub)
		return NULL;
	sub->dead = true;
	if (!sub->cb->dispatching)
		reap_subs(sub->cb);
	return NULL;
}
