/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kv.h -- small ordered string maps (substitution variables, parameters)
 *
 * Linear search: these maps hold tens of entries.  Keys are unique; setting
 * an existing key replaces its value.  KV_INIT is a valid empty map.
 */
#ifndef LABD_KV_H
#define LABD_KV_H

#include <stddef.h>
#include <sys/types.h>

struct kv {
	char **keys;
	char **vals;
	size_t n;
};

#define KV_INIT { NULL, NULL, 0 }

/** kv_set() - set @key to a copy of @val. Returns 0 or -ENOMEM. */
int kv_set(struct kv *m, const char *key, const char *val);

/** kv_get() - the value of @key or NULL; borrowed. */
const char *kv_get(const struct kv *m, const char *key);

/** kv_merge() - set every entry of @src in @dst (src wins). */
int kv_merge(struct kv *dst, const struct kv *src);

/** kv_release() - free everything; @m is empty afterwards. */
void kv_release(struct kv *m);

#endif
