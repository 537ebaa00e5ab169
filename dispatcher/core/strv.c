// SPDX-License-Identifier: GPL-2.0-or-later
/* strv.c -- NULL-terminated string vectors */
#include "core/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int strv_consume(char ***v, char *s)
{
	size_t n = strv_length(*v);
	char **nv;

	if (!s)
		return -ENOMEM;
	nv = realloc(*v, (n + 2) * sizeof(*nv));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int strv_push(char ***v, const char *s)
{
	return strv_consume(v, strdup(s));
}

bool strv_contains(char *const *v, const char *s)
{
	STRV_FOREACH(p, v)
		if (!strcmp(*p, s))
			return true;
	return false;
}

int strv_copy(char *const *v, char ***ret)
{
	char **n = NULL;

	STRV_FOREACH(p, v) {
		if (strv_push(&n, *p) < 0) {
			strv_free(n);
			return -ENOMEM;
		}
	}
	*ret = n;
	return 0;
}

char *strv_join(char *const *v, const char *sep)
{
	struct strbuf sb = STRBUF_INIT;

	STRV_FOREACH(p, v) {
		if (p != v)
			strbuf_addstr(&sb, sep);
		strbuf_addstr(&sb, *p);
	}
	return strbuf_detach(&sb, NULL);
}

char **strv_free(char **v)
{
	STRV_FOREACH(p, v)
		free(*p);
	free(v);
	return NULL;
}
