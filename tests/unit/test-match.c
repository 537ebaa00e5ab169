// SPDX-License-Identifier: GPL-2.0-or-later
/* test-match.c -- streaming pattern matching across read boundaries */
#include <string.h>

#include "run/match.h"
#include "tap.h"

static void feed(struct matcher *m, const char *s)
{
	matcher_feed(m, (const uint8_t *)s, strlen(s));
}

TEST(test_match__across_chunks)
{
	struct matcher *m;
	struct match res;

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add(m, "Hit any key to stop autoboot", 1, NULL, 0) == 0);
	feed(m, "U-Boot 2023.01\r\nHit any k");
	CHECK(!matcher_next(m, &res));
	feed(m, "ey to st");
	CHECK(!matcher_next(m, &res));
	feed(m, "op autoboot:  2");
	CHECK(matcher_next(m, &res));
	CHECK_INT(res.id, ==, 1);
	CHECK_INT(res.len, ==, strlen("Hit any key to stop autoboot"));
	CHECK(!matcher_next(m, &res));	/* consumed: cannot match twice */
	matcher_free(m);
}

TEST(test_match__earliest_wins)
{
	struct matcher *m;
	struct match res;

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add(m, "login:", 1, NULL, 0) == 0);
	CHECK(matcher_add(m, "Kernel panic - not syncing", 2, NULL, 0) == 0);
	feed(m, "[ 1.0] Kernel panic - not syncing: VFS\r\nsim login: ");
	CHECK(matcher_next(m, &res));
	CHECK_INT(res.id, ==, 2);
	CHECK(matcher_next(m, &res));
	CHECK_INT(res.id, ==, 1);
	CHECK(!matcher_next(m, &res));
	matcher_free(m);
}

TEST(test_match__patterns_replaced_keep_bytes)
{
	struct matcher *m;
	struct match res;

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add(m, "Linux version [0-9]", 1, NULL, 0) == 0);
	feed(m, "Linux version 6.1.0\r\n...\r\nsim login: ");
	CHECK(matcher_next(m, &res));
	matcher_clear(m);
	CHECK(matcher_add(m, "login: ", 7, NULL, 0) == 0);
	CHECK(matcher_next(m, &res));
	CHECK_INT(res.id, ==, 7);
	CHECK(res.before_len > 0);
	matcher_free(m);
}

TEST(test_match__named_groups)
{
	struct matcher *m;
	struct match res;
	const uint8_t *g;
	size_t len;

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add(m, "(?P<test_case_id>\\w+): (?P<result>PASS|FAIL)", 1, NULL, 0) == 0);
	feed(m, "noise\r\nmytest: PA");
	CHECK(!matcher_next(m, &res));
	feed(m, "SS\r\n");
	CHECK(matcher_next(m, &res));
	CHECK(matcher_group(m, "test_case_id", &g, &len));
	CHECK(len == 6 && !memcmp(g, "mytest", 6));
	CHECK(matcher_group(m, "result", &g, &len));
	CHECK(len == 4 && !memcmp(g, "PASS", 4));
	CHECK(!matcher_group(m, "nope", &g, &len));
	matcher_free(m);
}

TEST(test_match__bad_regex)
{
	struct matcher *m;
	char err[128] = "";

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add(m, "abc(", 1, err, sizeof(err)) < 0);
	CHECK_CONTAINS(err, "offset 4");
	CHECK(match_regex_check("a[b", err, sizeof(err)) < 0);
	CHECK(match_regex_check("a.b", err, sizeof(err)) == 0);
	matcher_free(m);
}

TEST(test_match__binary_and_overflow)
{
	struct matcher *m;
	struct match res;
	uint8_t junk[4096];
	size_t i, len;

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add(m, "=> $", 1, NULL, 0) == 0);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 7 + 0xfb);
	for (i = 0; i < 64; i++)
		CHECK(matcher_feed(m, junk, sizeof(junk)) == 0);
	matcher_window(m, &len);
	CHECK(len <= MATCH_WINDOW_MAX);
	feed(m, "\r\n=> ");
	CHECK(matcher_next(m, &res));
	matcher_free(m);
}

TEST(test_match__literal)
{
	struct matcher *m;
	struct match res;

	CHECK(matcher_new(&m) == 0);
	CHECK(matcher_add_literal(m, "tftp ${kernel_addr_r} Image (1)", 3) == 0);
	feed(m, "=> tftp ${kernel_addr_r} Image (1)\r\n");
	CHECK(matcher_next(m, &res));
	CHECK_INT(res.id, ==, 3);
	matcher_free(m);
}

TEST_LIST(test_match__across_chunks, test_match__earliest_wins,
	  test_match__patterns_replaced_keep_bytes, test_match__named_groups,
	  test_match__bad_regex, test_match__binary_and_overflow, test_match__literal)
