/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * utf8.h -- console bytes made into valid text for JSON and XML documents
 *
 * Consoles send anything: NUL, escape sequences, line noise, cut multi-byte
 * characters.  labd keeps those bytes exactly (joblog.h); documents built
 * from them (KCIDB, JUnit, the HTTP backend's text) need valid UTF-8, and XML
 * 1.0 also bans most C0 controls.  These helpers decode UTF-8 strictly (no
 * overlong forms, no surrogates, nothing above U+10FFFF) and replace each
 * byte that is not part of a valid character with U+FFFD.
 */
#ifndef LABD_UTF8_H
#define LABD_UTF8_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

#define UTF8_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

enum utf8_flags {
	UTF8_DROP_NUL = 1 << 0,		/* leave NUL out (KCIDB strings ban it) */
	UTF8_XML = 1 << 1,		/* replace C0 controls other than TAB, LF, CR,
					 * and U+FFFE/U+FFFF (not allowed in XML 1.0) */
};

/**
 * utf8_char_len() - length of the valid character @p starts with, 0 when the
 * byte at @p does not start one that fits in @len bytes.
 */
size_t utf8_char_len(const unsigned char *p, size_t len);

/** utf8_is_valid() - whether all @len bytes are valid UTF-8. */
bool utf8_is_valid(const void *data, size_t len);

/**
 * utf8_incomplete_tail() - how many bytes at the end of @data (0..3) start a
 * character that more bytes could still complete.
 */
size_t utf8_incomplete_tail(const void *data, size_t len);

/**
 * utf8_sanitize() - append @data to @out as valid UTF-8
 * @max_chars: stop before the character that would exceed this many
 *	characters (code points) appended; 0 = no limit
 *
 * Returns the number of input bytes consumed (all of @len unless the limit
 * stopped it), or -ENOMEM.
 */
long utf8_sanitize(const void *data, size_t len, unsigned flags, size_t max_chars,
		   struct strbuf *out);

/**
 * utf8_tail_start() - where to start in @data to keep its last @max_chars
 * characters, on a character boundary.
 */
size_t utf8_tail_start(const void *data, size_t len, size_t max_chars);

#endif
