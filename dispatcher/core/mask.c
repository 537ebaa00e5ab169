// SPDX-License-Identifier: GPL-2.0-or-later
/* mask.c -- secrets replaced by "[secret]" in text, JSON and console streams */
#include "core/mask.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strv.h"

struct mask {
	char **secrets;		/* strv */
	size_t maxlen;
};

int mask_new(struct mask **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

struct mask *mask_free(struct mask *m)
{
	if (m) {
		strv_free(m->secrets);
		free(m);
	}
	return NULL;
}

int mask_add(struct mask *m, const char *secret)
{
	size_t len = strlen(secret);

	if (!len || strv_contains(m->secrets, secret))
		return 0;
	if (len > MASK_MAX_SECRET)
		return -E2BIG;
	if (strv_push(&m->secrets, secret) < 0)
		return -ENOMEM;
	if (len > m->maxlen)
		m->maxlen = len;
	return 0;
}

bool mask_empty(const struct mask *m)
{
	return !m || !m->secrets;
}

/* The length of the longest secret at @p, whole within @avail bytes; 0 if none. */
static size_t match_at(const struct mask *m, const char *p, size_t avail)
{
	size_t best = 0, len;

	STRV_FOREACH(s, m->secrets) {
		len = strlen(*s);
		if (len <= avail && len > best && !memcmp(p, *s, len))
			best = len;
	}
	return best;
}

/* Whether the @avail bytes at @p begin a secret longer than them. */
static bool starts_secret(const struct mask *m, const char *p, size_t avail)
{
	STRV_FOREACH(s, m->secrets)
		if (strlen(*s) > avail && !memcmp(p, *s, avail))
			return true;
	return false;
}

/*
 * @len bytes of @buf, masked, into @out.  With @hold, stop where the rest
 * could begin a secret (the next bytes tell).  Returns the bytes consumed.
 */
static size_t mask_bytes(const struct mask *m, const char *buf, size_t len, bool hold,
			 struct strbuf *out)
{
	size_t i = 0, start = 0, k;

	while (i < len) {
		if (hold && len - i < m->maxlen && starts_secret(m, buf + i, len - i))
			break;
		k = match_at(m, buf + i, len - i);
		if (!k) {
			i++;
			continue;
		}
		strbuf_add(out, buf + start, i - start);
		strbuf_addstr(out, MASK_TEXT);
		i += k;
		start = i;
	}
	strbuf_add(out, buf + start, i - start);
	return i;
}

char *mask_text(const struct mask *m, const char *text)
{
	struct strbuf out = STRBUF_INIT;

	if (mask_empty(m))
		return strdup(text);
	mask_bytes(m, text, strlen(text), false, &out);
	return strbuf_detach(&out, NULL);
}

static int mask_object(const struct mask *m, json_t *obj)
{
	const char *key;
	json_t *v, *moved = json_object();
	void *tmp;
	char *k;
	int r = moved ? 0 : -ENOMEM;

	json_object_foreach_safe(obj, tmp, key, v) {
		r = r ?: mask_json(m, v);
		k = mask_text(m, key);
		if (!k)
			r = -ENOMEM;
		else if (strcmp(k, key)) {
			json_object_set(moved, k, v);
			json_object_del(obj, key);
		}
		free(k);
	}
	if (moved && json_object_update(obj, moved) < 0)
		r = -ENOMEM;
	json_decref(moved);
	return r;
}

int mask_json(const struct mask *m, json_t *v)
{
	size_t i;
	json_t *item;
	char *s;
	int r = 0;

	if (mask_empty(m) || !v)
		return 0;
	if (json_is_string(v)) {
		s = mask_text(m, json_string_value(v));
		if (!s)
			return -ENOMEM;
		if (strcmp(s, json_string_value(v)))
			r = json_string_set(v, s) < 0 ? -ENOMEM : 0;
		free(s);
		return r;
	}
	if (json_is_object(v))
		return mask_object(m, v);
	json_array_foreach(v, i, item)
		r = r ?: mask_json(m, item);
	return r;
}

/* ---- streams ---- */

int mask_stream_init(struct mask_stream *s, const struct mask *m)
{
	s->m = m;
	s->held = calloc(1, sizeof(*s->held));
	if (!s->held)
		return -ENOMEM;
	strbuf_init(s->held);
	return 0;
}

void mask_stream_release(struct mask_stream *s)
{
	if (s->held)
		strbuf_release(s->held);
	free(s->held);
	s->held = NULL;
}

size_t mask_stream_pending(const struct mask_stream *s)
{
	return s->held ? s->held->len : 0;
}

int mask_stream_feed(struct mask_stream *s, const void *data, size_t len, struct strbuf *out)
{
	size_t done;

	if (mask_empty(s->m))
		return strbuf_add(out, data, len);
	if (strbuf_add(s->held, data, len) < 0)
		return -ENOMEM;
	done = mask_bytes(s->m, s->held->buf, s->held->len, true, out);
	strbuf_consume(s->held, done);
	return 0;
}

int mask_stream_flush(struct mask_stream *s, struct strbuf *out)
{
	if (!s->held || !s->held->len)
		return 0;
	mask_bytes(s->m, s->held->buf, s->held->len, false, out);
	strbuf_reset(s->held);
	return 0;
}
