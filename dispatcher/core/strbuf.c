// SPDX-License-Identifier: GPL-2.0-or-later
/* strbuf.c -- growable byte buffers */
#include "core/strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb)
{
	sb->alloc = 0;
	sb->len = 0;
	sb->buf = strbuf_slopbuf;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
	char *res;

	if (!sb->alloc && strbuf_grow(sb, 0) < 0)
		return NULL;
	res = sb->buf;
	if (ret_len)
		*ret_len = sb->len;
	strbuf_init(sb);
	return res;
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need, alloc;
	char *p;

	if (extra > SIZE_MAX - sb->len - 1)
		return -ENOMEM;
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < need)
		alloc = alloc < SIZE_MAX / 2 ? alloc * 2 : need;
	p = realloc(sb->alloc ? sb->buf : NULL, alloc);
	if (!p)
		return -ENOMEM;
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = alloc;
	return 0;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	int r = strbuf_grow(sb, len);

	if (r < 0)
		return r;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_addstr(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	return strbuf_add(sb, &ch, 1);
}

int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n, r;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	r = strbuf_grow(sb, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

void strbuf_remove(struct strbuf *sb, size_t pos, size_t len)
{
	if (pos >= sb->len)
		return;
	if (len > sb->len - pos)
		len = sb->len - pos;
	memmove(sb->buf + pos, sb->buf + pos + len, sb->len - pos - len);
	sb->len -= len;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

void strbuf_consume(struct strbuf *sb, size_t len)
{
	strbuf_remove(sb, 0, len);
}
