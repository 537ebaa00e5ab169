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

TEST_LIST(test_joblog__byte_exact_and_lines, test_joblog__resume, test_joblog__rotate)
