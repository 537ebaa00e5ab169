// SPDX-License-Identifier: GPL-2.0-or-later
/* test-lava-log.c -- labd's log files read as LAVA's YAML log: order, seeking, growth */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/joblog.h"
#include "results/lava_log.h"
#include "core/strbuf.h"
#include "tap.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/test-lava-log-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		abort();
}

/* Every record from @start, in chunks of @max bytes. */
static int read_all(bool complete, uint64_t start, size_t max, struct strbuf *out)
{
	struct lava_log *lg;
	long n, total = 0;

	if (lava_log_open(dir, NULL, complete, &lg) < 0 || lava_log_seek(lg, start) < 0)
		return -1;
	while ((n = lava_log_read(lg, max, 0, out)) > 0)
		total += n;
	lava_log_close(lg);
	return n < 0 ? -1 : (int)total;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A job's log: console lines, labd lines between them, a result, an unfinished line. */
static void write_log(struct joblog *jl)
{
	joblog_msg(jl, 500000, "info", "job 7 on sim-01");
	joblog_console(jl, 1000000, "U-Boot 2023.01\r\nHit any", 23);
	joblog_msg(jl, 1500000, "input", "setenv a 'b'\r\n");
	joblog_console(jl, 2000000, " key\r\n=> boot\n", 14);
	joblog_msg(jl, 2500000, "phase", "kernel-start at 1.000 s");
	joblog_msg(jl, 2600000, "result", "0_smoke.v1.2.linux-pwd: pass (1.5 s)");
	joblog_msg(jl, 2700000, "result", "kernel-messages.oops: fail");
	joblog_msg(jl, 2800000, "something", "new kind");
	joblog_console(jl, 3000000, "caf\xc3\xa9 \xff\t\x1b[0m", 12);
}

TEST(test_lava_log__records)
{
	static const char want[] =
		"- {\"dt\": \"1970-01-01T00:00:00.500000\", \"lvl\": \"info\", \"msg\": \"job 7 on sim-01\"}\n"
		"- {\"dt\": \"1970-01-01T00:00:01.000000\", \"lvl\": \"target\", \"msg\": \"U-Boot 2023.01\\r\"}\n"
		"- {\"dt\": \"1970-01-01T00:00:01.000000\", \"lvl\": \"target\", \"msg\": \"Hit any key\\r\"}\n"
		"- {\"dt\": \"1970-01-01T00:00:01.500000\", \"lvl\": \"input\", \"msg\": \"setenv a 'b'\\r\\n\"}\n"
		"- {\"dt\": \"1970-01-01T00:00:02.000000\", \"lvl\": \"target\", \"msg\": \"=> boot\"}\n"
		"- {\"dt\": \"1970-01-01T00:00:02.500000\", \"lvl\": \"info\", \"msg\": \"kernel-start at 1.000 s\"}\n"
		"- {\"dt\": \"1970-01-01T00:00:02.600000\", \"lvl\": \"results\", \"msg\": {\"definition\": \"0_smoke\", "
		"\"case\": \"v1.2.linux-pwd\", \"result\": \"pass\", \"measurement\": 1.5, \"units\": \"s\"}}\n"
		"- {\"dt\": \"1970-01-01T00:00:02.700000\", \"lvl\": \"results\", \"msg\": {\"definition\": \"kernel-messages\", "
		"\"case\": \"oops\", \"result\": \"fail\"}}\n"
		"- {\"dt\": \"1970-01-01T00:00:02.800000\", \"lvl\": \"debug\", \"msg\": \"new kind\"}\n";
	static const char last[] =
		"- {\"dt\": \"1970-01-01T00:00:03.000000\", \"lvl\": \"target\", \"msg\": \"caf\\xE9 \\uFFFD\\t\\e[0m\"}\n";
	struct strbuf out = STRBUF_INIT;
	struct joblog *jl;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	write_log(jl);
	/* the last console line has no '\n': not read until the log is complete */
	CHECK_INT(read_all(false, 0, LAVA_LOG_CHUNK, &out), ==, 9);
	CHECK_STR(out.buf, want);
	strbuf_reset(&out);
	CHECK_INT(read_all(true, 0, LAVA_LOG_CHUNK, &out), ==, 10);
	CHECK(!strncmp(out.buf, want, strlen(want)));
	CHECK_STR(out.buf + strlen(want), last);
	jl = joblog_close(jl);
	strbuf_release(&out);
	remove_dir();
}

/* Any start, any chunk size: the same records as one read of everything. */
TEST(test_lava_log__seek_and_chunks)
{
	struct strbuf all = STRBUF_INIT, part = STRBUF_INIT;
	struct joblog *jl;
	const char *p;
	uint64_t i;
	int n;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	write_log(jl);
	n = read_all(true, 0, LAVA_LOG_CHUNK, &all);
	CHECK_INT(n, ==, 10);
	for (i = 0; i <= 11; i++) {
		strbuf_reset(&part);
		CHECK_INT(read_all(true, i, 1, &part), ==, i <= 10 ? 10 - i : 0);
		for (p = all.buf, n = 0; n < (int)i && p; n++) {
			p = strchr(p, '\n');
			p = p ? p + 1 : NULL;
		}
		CHECK_STR(part.buf, p ? p : "");
	}
	jl = joblog_close(jl);
	strbuf_release(&all);
	strbuf_release(&part);
	remove_dir();
}

/* A follower polling a growing log sees each record once, in place. */
TEST(test_lava_log__growing)
{
	struct strbuf all = STRBUF_INIT, polled = STRBUF_INIT;
	struct lava_log *lg;
	struct joblog *jl;
	uint64_t seen = 0;
	int i;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	for (i = 0; i < 50; i++) {
		char buf[64];
		int len = snprintf(buf, sizeof(buf), "line %d%s", i, i % 3 ? "\n" : "");

		joblog_console(jl, 1000000 + (uint64_t)i, buf, (size_t)len);
		if (i % 7 == 0)
			joblog_msg(jl, 1000000 + (uint64_t)i, "info", "step %d", i);
		/* a new reader each time, from what it saw: lavacli's polling */
		CHECK(lava_log_open(dir, NULL, false, &lg) == 0);
		CHECK(lava_log_seek(lg, seen) == 0);
		while (lava_log_read(lg, 100, 0, &polled) > 0)
			;
		CHECK(lava_log_at_end(lg));
		seen = lava_log_index(lg);
		lava_log_close(lg);
		CHECK_INT(count_lines(polled.buf), ==, seen);
	}
	CHECK(lava_log_open(dir, NULL, true, &lg) == 0);
	CHECK(lava_log_seek(lg, seen) == 0);
	while (lava_log_read(lg, 100, 0, &polled) > 0)
		;
	lava_log_close(lg);
	CHECK_INT(read_all(true, 0, LAVA_LOG_CHUNK, &all), ==, 33 + 8);
	CHECK_STR(polled.buf, all.buf);
	jl = joblog_close(jl);
	strbuf_release(&all);
	strbuf_release(&polled);
	remove_dir();
}

/* Limits: records per read, a huge line cut, the chunk size. */
TEST(test_lava_log__limits)
{
	struct strbuf out = STRBUF_INIT;
	struct lava_log *lg;
	struct joblog *jl;
	char *big = malloc(LAVA_LOG_MAX_LINE + 5000);

	CHECK(big);
	memset(big, 'x', LAVA_LOG_MAX_LINE + 5000);
	big[LAVA_LOG_MAX_LINE + 4999] = '\n';
	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	joblog_console(jl, 1, "a\nb\nc\n", 6);
	joblog_console(jl, 2, big, LAVA_LOG_MAX_LINE + 5000);
	free(big);
	CHECK(lava_log_open(dir, NULL, true, &lg) == 0);
	CHECK_INT(lava_log_read(lg, LAVA_LOG_CHUNK, 2, &out), ==, 2);
	CHECK_INT(lava_log_index(lg), ==, 2);
	CHECK(!lava_log_at_end(lg));
	strbuf_reset(&out);
	CHECK_INT(lava_log_read(lg, 10, 0, &out), ==, 1);	/* "c": past 10 bytes */
	strbuf_reset(&out);
	CHECK_INT(lava_log_read(lg, 10, 0, &out), ==, 1);
	CHECK_INT(out.len, <, LAVA_LOG_MAX_LINE + 200);
	CHECK_CONTAINS(out.buf, "xx [labd: 4999 bytes cut]\"}\n");
	strbuf_reset(&out);
	CHECK_INT(lava_log_read(lg, 10, 0, &out), ==, 0);
	CHECK(lava_log_at_end(lg));
	CHECK_INT(out.len, ==, 0);
	lava_log_close(lg);
	jl = joblog_close(jl);
	strbuf_release(&out);
	remove_dir();
}

TEST(test_lava_log__suites_and_lines)
{
	static char *suites[] = { "0_smoke.v1.2", NULL };
	struct strbuf out = STRBUF_INIT;
	int64_t lines[] = { 0, 1, 2, 3, 4 };
	struct lava_log *lg;
	struct joblog *jl;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	write_log(jl);
	CHECK(lava_log_open(dir, suites, true, &lg) == 0);
	CHECK(lava_log_read(lg, 1 << 20, 0, &out) == 10);
	CHECK_CONTAINS(out.buf, "{\"definition\": \"0_smoke.v1.2\", \"case\": \"linux-pwd\"");
	lava_log_close(lg);
	/* line 1 is record 1 (after a labd line): YAML line 2; line 3 follows the input */
	CHECK(lava_log_map_lines(dir, lines, 5) == 0);
	CHECK_INT(lines[0], ==, 0);
	CHECK_INT(lines[1], ==, 2);
	CHECK_INT(lines[2], ==, 3);
	CHECK_INT(lines[3], ==, 5);
	CHECK_INT(lines[4], ==, 10);
	jl = joblog_close(jl);
	strbuf_release(&out);
	remove_dir();
}

TEST(test_lava_log__empty)
{
	struct strbuf out = STRBUF_INIT;
	int64_t line = 3;

	make_dir();
	CHECK_INT(read_all(true, 0, 100, &out), ==, 0);
	CHECK_INT(out.len, ==, 0);
	CHECK(lava_log_map_lines(dir, &line, 1) == 0);
	CHECK_INT(line, ==, 3);
	strbuf_release(&out);
	remove_dir();
}

TEST(test_joblog__parse_labd)
{
	struct joblog_labd_line l;
	struct strbuf text = STRBUF_INIT;
	static const char line[] = "2026-12-03T10:00:01.250000Z input L12  two\\r\\n\\x1b\\\\";

	CHECK(joblog_parse_labd(line, strlen(line), &l, &text) == 0);
	CHECK_INT(l.ts, ==, 1796292001250000ULL);
	CHECK_STR(l.kind, "input");
	CHECK_INT(l.line, ==, 12);
	CHECK_STR(text.buf, " two\r\n\x1b\\");
	CHECK(joblog_parse_labd("garbage", 7, &l, &text) == -EINVAL);
	CHECK(joblog_parse_labd(line, 34, &l, &text) == -EINVAL);
	strbuf_release(&text);
}

TEST_LIST(test_lava_log__records, test_lava_log__seek_and_chunks, test_lava_log__growing,
	  test_lava_log__limits, test_lava_log__suites_and_lines, test_lava_log__empty,
	  test_joblog__parse_labd);
