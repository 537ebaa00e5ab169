// SPDX-License-Identifier: GPL-2.0-or-later
/* test-logzst.c -- compressed job logs: the seekable format, reads at any offset, joblog over it */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "journal/joblog.h"
#include "journal/logzst.h"
#include "tap.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/test-logzst-XXXXXX");
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

static bool exists(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* @len bytes of log-like text with some binary, the same for a given @seed. */
static char *make_text(size_t len, unsigned seed)
{
	char *p = malloc(len);
	size_t i;

	for (i = 0; p && i < len; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (seed >> 16) % 61 == 0 ? '\n' : (seed >> 16) % 97 == 0 ?
			(char)(seed >> 8) : "abcdefgh [ ] 0123 ok:"[(seed >> 16) % 21];
	}
	return p;
}

static int write_file(const char *name, const char *data, size_t len)
{
	char path[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

TEST(test_logzst__reads_at_any_offset)
{
	size_t len = 3 * LOGZST_FRAME + 12345, i;
	static const uint64_t offs[] = { 0, 1, LOGZST_FRAME - 1, LOGZST_FRAME, 2 * LOGZST_FRAME + 7,
					 100, 3 * LOGZST_FRAME + 12344 };
	char *text = make_text(len, 7), *buf = malloc(len), path[256];
	struct logzst *z = NULL;
	ssize_t n;
	size_t got = 0;

	make_dir();
	CHECK(text && buf);
	CHECK(write_file("console.log", text, len) == 0);
	snprintf(path, sizeof(path), "%s/console.log", dir);
	CHECK(logzst_compress(path, 3) == 0);
	CHECK(!exists("console.log") && exists("console.log.zst"));
	strcat(path, LOGZST_SUFFIX);
	CHECK(logzst_open(path, &z) == 0);
	CHECK_INT(logzst_size(z), ==, len);
	while ((n = logzst_pread(z, buf + got, 7000, got)) > 0)	/* on and on */
		got += (size_t)n;
	CHECK_INT(n, ==, 0);
	CHECK_INT(got, ==, len);
	CHECK(!memcmp(buf, text, len));
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {	/* back and forth */
		n = logzst_pread(z, buf, 10, offs[i]);
		CHECK_INT(n, >, 0);
		CHECK(!memcmp(buf, text + offs[i], (size_t)n));
	}
	CHECK_INT(logzst_pread(z, buf, 10, len), ==, 0);
	logzst_close(z);
	free(text);
	free(buf);
	remove_dir();
}

TEST(test_logzst__empty_and_not_seekable)
{
	struct logzst *z = NULL;
	char path[256], buf[4];

	make_dir();
	CHECK(write_file("labd.log", "", 0) == 0);
	snprintf(path, sizeof(path), "%s/labd.log", dir);
	CHECK(logzst_compress(path, 3) == 0);
	strcat(path, LOGZST_SUFFIX);
	CHECK(logzst_open(path, &z) == 0);
	CHECK_INT(logzst_size(z), ==, 0);
	CHECK_INT(logzst_pread(z, buf, sizeof(buf), 0), ==, 0);
	logzst_close(z);
	CHECK(write_file("x.zst", "not zstd at all, not at all", 27) == 0);
	snprintf(path, sizeof(path), "%s/x.zst", dir);
	CHECK_INT(logzst_open(path, &z), ==, -EINVAL);
	snprintf(path, sizeof(path), "%s/none", dir);
	CHECK_INT(logzst_compress(path, 3), ==, -ENOENT);
	remove_dir();
}

/* A job log renders, ranges and reads the same before and after compression. */
TEST(test_logzst__joblog_reads_compressed)
{
	static const char *const names[] = { JOBLOG_CONSOLE, JOBLOG_INDEX, JOBLOG_LABD };
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT, r1 = STRBUF_INIT,
		      r2 = STRBUF_INIT;
	size_t len = LOGZST_FRAME + 5000, i;
	char *text = make_text(len, 3), path[256];
	struct joblog *jl;
	uint64_t size;
	int64_t lines;

	make_dir();
	CHECK(joblog_open(dir, &jl) == 0);
	for (i = 0; i < len; i += 1000)
		CHECK(joblog_console(jl, 1000000 + i, text + i, len - i < 1000 ? len - i : 1000) == 0);
	CHECK(joblog_msg(jl, 2000000, "info", "done") == 0);
	joblog_close(jl);
	CHECK(joblog_render(dir, JOBLOG_RENDER_TIMESTAMPS | JOBLOG_RENDER_LABD, &before) == 0);
	CHECK(joblog_line_range(dir, 5, 20, &r1) == 0);
	size = joblog_file_size(dir, JOBLOG_CONSOLE);
	lines = joblog_line_count(dir);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		CHECK(logzst_compress(path, 1) == 0);
		CHECK(!exists(names[i]));
	}
	CHECK(joblog_render(dir, JOBLOG_RENDER_TIMESTAMPS | JOBLOG_RENDER_LABD, &after) == 0);
	CHECK_INT(after.len, ==, before.len);
	CHECK(!memcmp(after.buf, before.buf, before.len));
	CHECK(joblog_line_range(dir, 5, 20, &r2) == 0);
	CHECK_INT(r2.len, ==, r1.len);
	CHECK(!memcmp(r1.buf, r2.buf, r1.len));
	CHECK_INT(joblog_file_size(dir, JOBLOG_CONSOLE), ==, size);
	CHECK_INT(joblog_line_count(dir), ==, lines);
	strbuf_release(&before);
	strbuf_release(&after);
	strbuf_release(&r1);
	strbuf_release(&r2);
	free(text);
	remove_dir();
}

TEST_LIST(test_logzst__reads_at_any_offset, test_logzst__empty_and_not_seekable,
	  test_logzst__joblog_reads_compressed);
