// SPDX-License-Identifier: GPL-2.0-or-later
/* utf8.c -- strict UTF-8 decoding, invalid bytes replaced by U+FFFD */
#include "results/utf8.h"

#include <errno.h>

#include "core/strbuf.h"

/* Bytes a character starting with @c needs, 0 for a byte that cannot start one. */
static size_t seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

/* Whether @c may follow lead byte @lead as the second byte. */
static bool second_ok(unsigned char lead, unsigned char c)
{
	if ((c & 0xc0) != 0x80)
		return false;
	if (lead == 0xe0)
		return c >= 0xa0;	/* no overlong forms */
	if (lead == 0xed)
		return c <= 0x9f;	/* no surrogates */
	if (lead == 0xf0)
		return c >= 0x90;
	if (lead == 0xf4)
		return c <= 0x8f;	/* nothing above U+10FFFF */
	return true;
}

size_t utf8_char_len(const unsigned char *p, size_t len)
{
	size_t n = seq_len(p[0]), i;

	if (!n || n > len)
		return 0;
	if (n > 1 && !second_ok(p[0], p[1]))
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

bool utf8_is_valid(const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = utf8_char_len(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

size_t utf8_incomplete_tail(const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t back, i;

	for (back = 1; back <= 3 && back <= len; back++) {
		const unsigned char *s = p + len - back;
		size_t need = seq_len(*s);

		if ((*s & 0xc0) == 0x80)
			continue;	/* a continuation byte: look further back */
		if (need <= back)
			return 0;
		if (back > 1 && !second_ok(s[0], s[1]))
			return 0;
		for (i = 2; i < back; i++)
			if ((s[i] & 0xc0) != 0x80)
				return 0;
		return back;
	}
	return 0;
}

/* Whether the character at @p (@n bytes, valid) is allowed under @flags. */
static bool allowed(const unsigned char *p, size_t n, unsigned flags)
{
	if (n == 1 && p[0] < 0x20 && (flags & UTF8_XML))
		return p[0] == '\t' || p[0] == '\n' || p[0] == '\r';
	if (n == 3 && (flags & UTF8_XML) && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
		return false;	/* U+FFFE, U+FFFF */
	return true;
}

long utf8_sanitize(const void *data, size_t len, unsigned flags, size_t max_chars,
		   struct strbuf *out)
{
	const unsigned char *p = data;
	size_t i = 0, chars = 0, n;
	int err = 0;

	while (i < len && !err) {
		if (max_chars && chars >= max_chars)
			break;
		if (p[i] == 0 && (flags & UTF8_DROP_NUL)) {
			i++;
			continue;
		}
		n = utf8_char_len(p + i, len - i);
		if (n && allowed(p + i, n, flags)) {
			err = strbuf_add(out, p + i, n);
			i += n;
		} else {
			err = strbuf_add(out, UTF8_REPLACEMENT, 3);
			i += n ? n : 1;
		}
		chars++;
	}
	return err ? -ENOMEM : (long)i;
}

size_t utf8_tail_start(const void *data, size_t len, size_t max_chars)
{
	const unsigned char *p = data;
	size_t start = len, chars = 0;

	/*
	 * Walk back over whole characters: a byte that is not a continuation
	 * byte starts one.  Stray continuation bytes (each a U+FFFD later) are
	 * undercounted here; utf8_sanitize()'s own limit still holds then.
	 */
	while (start > 0 && chars < max_chars) {
		start--;
		if ((p[start] & 0xc0) != 0x80)
			chars++;
	}
	while (start < len && start > 0 && (p[start] & 0xc0) == 0x80)
		start++;
	return start;
}
