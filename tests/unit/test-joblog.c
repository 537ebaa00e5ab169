// SPDX-License-Identifier: GPL-2.0-or-later
/* test-joblog.c -- byte-exact console logs, line index, labd lines, rendering */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "journal/joblog.h"
#include "tap.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/test-joblog-XXXXXX");
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

TEST(test_joblog__byte_exact_and_lines)
{
	static const char bin[] = "bad \xff\xfe utf8\0nul\r\n";
	static const char merged[] = "\n# labd: 1970-01-01T00:00:03.500000Z input L3 "
				     "setenv a 'b'\\r\\n\n[1970-01-01T00:00:04.000000Z] => \n";
	struct joblog *jl;
	struct strbuf out = STRBUF_INIT;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	CHECK_INT(joblog_line(jl), ==, 1);
	CHECK(joblog_console(jl, 1000000, "U-Boot\r\nHit any", 15) == 0);
	CHECK_INT(joblog_line(jl), ==, 2);
	CHECK(joblog_console(jl, 2000000, " key\r\n", 6) == 0);
	CHECK_INT(joblog_line(jl), ==, 3);
	CHECK(joblog_console(jl, 3000000, bin, sizeof(bin) - 1) == 0);
	CHECK(joblog_msg(jl, 3500000, "input", "setenv a 'b'\r\n") == 0);
	CHECK(joblog_console(jl, 4000000, "=> ", 3) == 0);
	CHECK_INT(joblog_line(jl), ==, 4);
	CHECK(joblog_render(dir, 0, &out) == 0);
	CHECK_INT(out.len, ==, 15 + 6 + sizeof(bin) - 1 + 3);
	CHECK(!memcmp(out.buf + 21, bin, sizeof(bin) - 1));
	strbuf_reset(&out);
	CHECK(joblog_line_range(dir, 2, 3, &out) == 0);
	CHECK_INT(out.len, ==, 13 + sizeof(bin) - 1);
	CHECK(!memcmp(out.buf, "Hit any key\r\n", 13));
	strbuf_reset(&out);
	CHECK(joblog_render(dir, JOBLOG_RENDER_TIMESTAMPS | JOBLOG_RENDER_LABD, &out) == 0);
	CHECK_CONTAINS(out.buf, "[1970-01-01T00:00:01.000000Z] U-Boot\r\n");
	CHECK_CONTAINS(out.buf, "[1970-01-01T00:00:01.000000Z] Hit any key");
	CHECK(memmem(out.buf, out.len, merged, sizeof(merged) - 1));
	jl = joblog_close(jl);
	strbuf_release(&out);
	remove_dir();
}

TEST(test_joblog__resume)
{
	struct joblog *jl;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	CHECK(joblog_console(jl, 1, "a\nb\nc", 5) == 0);
	jl = joblog_close(jl);
	CHECK(joblog_open(dir, &jl) == 0);
	CHECK_INT(joblog_line(jl), ==, 3);	/* "c" continues */
	CHECK(joblog_console(jl, 2, "d\ne", 3) == 0);
	CHECK_INT(joblog_line(jl), ==, 4);
	CHECK_INT(joblog_console_size(jl), ==, 8);
	jl = joblog_close(jl);
	remove_dir();
}

TEST(test_joblog__rotate)
{
	struct joblog *jl;
	char big[1000];

	make_dir();
	memset(big, 'x', sizeof(big));
	CHECK(joblog_open(dir, &jl) == 0);
	CHECK(joblog_console(jl, 1, big, sizeof(big)) == 0);
	CHECK(joblog_rotate_if_larger(jl, 2000) == 0);
	CHECK_INT(joblog_console_size(jl), ==, 1000);
	CHECK(joblog_rotate_if_larger(jl, 500) == 0);
	CHECK_INT(joblog_console_size(jl), ==, 0);
	CHECK_INT(joblog_file_size(dir, "console.log.1"), ==, 1000);
	jl = joblog_close(jl);
	remove_dir();
}

/*
 * labd lines go between console lines: one written while a line is in
 * progress waits for its end (--follow printed it inside the line), or is
 * given after a line break when told to.
 */
TEST(test_joblog__labd_lines_between_console_lines)
{
	struct joblog *jl;
	struct joblog_reader *rd;
	struct strbuf out = STRBUF_INIT;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	CHECK(joblog_reader_new(dir, JOBLOG_RENDER_LABD, 0, false, &rd) == 0);
	CHECK(joblog_console(jl, 1, "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=false-one RESULT", 51) == 0);
	CHECK(joblog_msg(jl, 2, "result", "false-one fail") == 0);
	CHECK_INT(joblog_reader_fill(rd, &out, 4096, JOBLOG_FILL_WAIT), ==, 51);
	CHECK(joblog_reader_waiting(rd));
	CHECK(joblog_console(jl, 3, "=fail>\r\nnext", 12) == 0);
	CHECK(joblog_reader_fill(rd, &out, 4096, JOBLOG_FILL_WAIT) > 0);
	CHECK(!joblog_reader_waiting(rd));
	CHECK(joblog_msg(jl, 4, "info", "waiting") == 0);
	CHECK(joblog_reader_fill(rd, &out, 4096, JOBLOG_FILL_WAIT) == 0);
	CHECK(joblog_reader_waiting(rd));
	CHECK(joblog_reader_fill(rd, &out, 4096, JOBLOG_FILL_NOW) > 0);
	CHECK(joblog_console(jl, 5, " line\n", 6) == 0);
	CHECK(joblog_reader_fill(rd, &out, 4096, JOBLOG_FILL_END) > 0);
	CHECK_STR(out.buf, "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=false-one RESULT=fail>\r\n"
			   "# labd: 1970-01-01T00:00:00.000002Z result L1 false-one fail\n"
			   "next\n"
			   "# labd: 1970-01-01T00:00:00.000004Z info L2 waiting\n"
			   " line\n");
	strbuf_reset(&out);
	CHECK(joblog_render(dir, JOBLOG_RENDER_LABD, &out) == 0);
	CHECK_STR(out.buf, "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=false-one RESULT=fail>\r\n"
			   "# labd: 1970-01-01T00:00:00.000002Z result L1 false-one fail\n"
			   "next line\n"
			   "# labd: 1970-01-01T00:00:00.000004Z info L2 waiting\n");
	rd = joblog_reader_free(rd);
	jl = joblog_close(jl);
	strbuf_release(&out);
	remove_dir();
}

/* A large log is rendered in pieces of bounded size, the same text as a whole. */
TEST(test_joblog__reader_bounded)
{
	struct joblog *jl;
	struct joblog_reader *rd;
	struct strbuf whole = STRBUF_INIT, pieces = STRBUF_INIT;
	char line[200];
	int i, r, fills = 0;
	size_t before;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	for (i = 0; i < 20000; i++) {
		int n = snprintf(line, sizeof(line), "[%8d.000000] console line %d %s\r\n", i, i,
				 i % 7 ? "" : "and a longer tail to vary the lengths of the lines");

		CHECK(joblog_console(jl, (uint64_t)i * 1000, line, (size_t)n) == 0);
		if (i % 100 == 0)
			CHECK(joblog_msg(jl, (uint64_t)i * 1000 + 1, "info", "at line %d", i) == 0);
	}
	/* one console line far longer than a piece */
	for (i = 0; i < 5000; i++)
		CHECK(joblog_console(jl, 30000000, "0123456789", 10) == 0);
	CHECK(joblog_render(dir, JOBLOG_RENDER_LABD | JOBLOG_RENDER_TIMESTAMPS, &whole) == 0);
	CHECK(joblog_reader_new(dir, JOBLOG_RENDER_LABD | JOBLOG_RENDER_TIMESTAMPS, 0, true,
				&rd) == 0);
	do {
		before = pieces.len;
		r = joblog_reader_fill(rd, &pieces, 8192, JOBLOG_FILL_END);
		CHECK_INT(pieces.len - before, <=, 8192 + JOBLOG_MAX_MSG + 64);
		fills++;
	} while (r > 0);
	CHECK_INT(r, ==, 0);
	CHECK_INT(fills, >, 100);
	CHECK_INT(pieces.len, ==, whole.len);
	CHECK(!memcmp(pieces.buf, whole.buf, whole.len));
	CHECK_CONTAINS(whole.buf, "[1970-01-01T00:00:00.100000Z] [     100.000000] console line 100 \r\n"
				  "# labd: 1970-01-01T00:00:00.100001Z info L101 at line 100\n");
	rd = joblog_reader_free(rd);
	jl = joblog_close(jl);
	strbuf_release(&whole);
	strbuf_release(&pieces);
	remove_dir();
}

TEST_LIST(test_joblog__byte_exact_and_lines, test_joblog__resume, test_joblog__rotate,
	  test_joblog__labd_lines_between_console_lines, test_joblog__reader_bounded)
