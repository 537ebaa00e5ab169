// SPDX-License-Identifier: GPL-2.0-or-later
/* kv.c -- small ordered string maps */
#include "core/kv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static ssize_t kv_find(const struct kv *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return (ssize_t)i;
	return -1;
}

int kv_set(struct kv *m, const char *key, const char *val)
{
	ssize_t i = kv_find(m, key);
	char *v = strdup(val), *k, **nk, **nv;

	if (!v)
		return -ENOMEM;
	if (i >= 0) {
		free(m->vals[i]);
		m->vals[i] = v;
		return 0;
	}
	k = strdup(key);
	nk = realloc(m->keys, (m->n + 1) * sizeof(*nk));
	if (nk)
		m->keys = nk;
	nv = realloc(m->vals, (m->n + 1) * sizeof(*nv));
	if (nv)
		m->vals = nv;
	if (!k || !nk || !nv) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	m->keys[m->n] = k;
	m->vals[m->n] = v;
	m->n++;
	return 0;
}

const char *kv_get(const struct kv *m, const char *key)
{
	ssize_t i = kv_find(m, key);

	return i >= 0 ? m->vals[i] : NULL;
}

int kv_merge(struct kv *dst, const struct kv *src)
{
	size_t i;
	int r;

	for (i = 0; i < src->n; i++) {
		r = kv_set(dst, src->keys[i], src->vals[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

void kv_release(struct kv *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->keys[i]);
		free(m->vals[i]);
	}
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->n = 0;
}
