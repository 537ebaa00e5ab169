// SPDX-License-Identifier: GPL-2.0-or-later
/* test-consolebuf.c -- scrollback ring and subscribers */
#include <string.h>

#include "board/consolebuf.h"
#include "core/strbuf.h"
#include "tap.h"

static struct strbuf got_a = STRBUF_INIT, got_b = STRBUF_INIT;
static struct consolebuf_sub *sub_b;

static void on_a(const uint8_t *d, size_t len, void *ud)
{
	strbuf_add(&got_a, d, len);
	if (ud)
		sub_b = consolebuf_unsubscribe(sub_b);	/* drop another mid-dispatch */
}

static void on_b(const uint8_t *d, size_t len, void *ud)
{
	strbuf_add(&got_b, d, len);
}

TEST(test_consolebuf__ring_wraps)
{
	struct consolebuf *cb;
	struct strbuf out = STRBUF_INIT;

	CHECK(consolebuf_new(8, &cb) == 0);
	consolebuf_append(cb, (const uint8_t *)"abcde", 5);
	CHECK(consolebuf_tail(cb, 100, &out) == 0);
	CHECK_STR(out.buf, "abcde");
	consolebuf_append(cb, (const uint8_t *)"fghijk", 6);
	strbuf_reset(&out);
	CHECK(consolebuf_tail(cb, 100, &out) == 0);
	CHECK_STR(out.buf, "defghijk");
	strbuf_reset(&out);
	CHECK(consolebuf_tail(cb, 3, &out) == 0);
	CHECK_STR(out.buf, "ijk");
	consolebuf_append(cb, (const uint8_t *)"0123456789XY", 12);
	strbuf_reset(&out);
	CHECK(consolebuf_tail(cb, 100, &out) == 0);
	CHECK_STR(out.buf, "456789XY");
	CHECK_INT(consolebuf_total(cb), ==, 23);
	strbuf_release(&out);
	consolebuf_free(cb);
}

TEST(test_consolebuf__subscribers)
{
	struct consolebuf *cb;
	struct consolebuf_sub *a, *a2;

	CHECK(consolebuf_new(64, &cb) == 0);
	CHECK(consolebuf_subscribe(cb, on_a, NULL, &a) == 0);
	CHECK(consolebuf_subscribe(cb, on_b, NULL, &sub_b) == 0);
	consolebuf_append(cb, (const uint8_t *)"one", 3);
	CHECK(consolebuf_subscribe(cb, on_a, (void *)1, &a2) == 0);
	a = consolebuf_unsubscribe(a);
	consolebuf_append(cb, (const uint8_t *)"two", 3);	/* b, then a2 drops b */
	consolebuf_append(cb, (const uint8_t *)"three", 5);
	CHECK_STR(got_a.buf, "onetwothree");
	CHECK_STR(got_b.buf, "onetwo");
	consolebuf_free(cb);
	strbuf_release(&got_a);
	strbuf_release(&got_b);
}

TEST_LIST(test_consolebuf__ring_wraps, test_consolebuf__subscribers)
