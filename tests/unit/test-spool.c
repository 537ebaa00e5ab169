// SPDX-License-Identifier: GPL-2.0-or-later
/* test-spool.c -- append, read, acknowledge, bounds, restart and torn records */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "core/strbuf.h"
#include "results/backends/spool.h"
#include "tap.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/test-spool-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	strcat(dir, "/sp");
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %.*s", (int)(strlen(dir) - 3), dir);
	if (system(cmd))
		abort();
}

static int count_segments(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".seg"))
			n++;
	if (d)
		closedir(d);
	return n;
}

/* Records are joined with '|' in the strbuf passed as userdata. */
static int collect(const void *data, size_t len, void *ud)
{
	struct strbuf *sb = ud;

	if (sb->len)
		strbuf_addch(sb, '|');
	strbuf_add(sb, data, len);
	return 0;
}

static int read_all(struct spool *sp, uint64_t *pos, struct strbuf *out)
{
	strbuf_reset(out);
	return spool_read(sp, pos, 1 << 30, collect, out);
}

TEST(test_spool__append_read_ack)
{
	struct strbuf out = STRBUF_INIT;
	struct spool *sp;
	uint64_t pos;

	make_dir();
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK_INT(spool_head(sp), ==, spool_tail(sp));
	CHECK(spool_append(sp, "one", 3) == 0);
	CHECK(spool_append(sp, "two\0bin", 7) == 0);
	CHECK(spool_append(sp, "three", 5) == 0);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 3);
	CHECK_INT(out.len, ==, 3 + 1 + 7 + 1 + 5);
	CHECK(!memcmp(out.buf, "one|two\0bin|three", out.len));
	CHECK_INT(pos, ==, spool_tail(sp));
	/* a batch limited by size: the first record always, then what fits */
	pos = spool_head(sp);
	strbuf_reset(&out);
	CHECK_INT(spool_read(sp, &pos, 5, collect, &out), ==, 1);
	CHECK_STR(out.buf, "one");
	CHECK(spool_ack(sp, pos) == 0);
	CHECK(spool_ack(sp, spool_tail(sp) + 1) == -EINVAL);
	sp = spool_close(sp);
	/* after a restart only the unacknowledged records come again */
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 2);
	CHECK(!memcmp(out.buf, "two\0bin|three", out.len));
	CHECK(spool_ack(sp, pos) == 0);
	CHECK(spool_append(sp, "four", 4) == 0);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 1);
	CHECK_STR(out.buf, "four");
	spool_close(sp);
	strbuf_release(&out);
	remove_dir();
}

TEST(test_spool__bounded_and_segments_deleted)
{
	struct strbuf all = STRBUF_INIT;
	char rec[1000];
	struct spool *sp;
	uint64_t pos;
	int i, n = 0, err = 0;

	make_dir();
	memset(rec, 'x', sizeof(rec));
	CHECK(spool_open(dir, 10000, &sp) == -EINVAL);
	CHECK(spool_open(dir, SPOOL_MIN_BYTES, &sp) == 0);
	for (i = 0; i < 1000 && !err; i++) {
		err = spool_append(sp, rec, sizeof(rec));
		n += !err;
	}
	CHECK_INT(err, ==, -ENOSPC);
	CHECK_INT(n, ==, SPOOL_MIN_BYTES / (sizeof(rec) + SPOOL_HEADER));
	CHECK(spool_size(sp) <= SPOOL_MIN_BYTES);
	CHECK(count_segments() > 1);
	CHECK(spool_append(sp, rec, SPOOL_MAX_RECORD + 1) == -E2BIG);
	/* delivering everything frees the space */
	pos = spool_head(sp);
	CHECK(spool_ack_frees(sp, spool_tail(sp)));
	CHECK_INT(spool_read(sp, &pos, 1 << 30, collect, &all), ==, n);
	strbuf_release(&all);
	CHECK(spool_ack(sp, pos) == 0);
	CHECK(count_segments() <= 1);
	CHECK(spool_size(sp) < SPOOL_MIN_BYTES / 4);
	CHECK(spool_append(sp, rec, sizeof(rec)) == 0);
	spool_close(sp);
	remove_dir();
}

TEST(test_spool__torn_record_dropped)
{
	struct strbuf out = STRBUF_INIT;
	char path[128];
	struct spool *sp;
	uint64_t pos, tail;
	int fd;

	make_dir();
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK(spool_append(sp, "whole", 5) == 0);
	CHECK(spool_append(sp, "torn-record", 11) == 0);
	tail = spool_tail(sp);
	sp = spool_close(sp);
	/* cut the last record in the middle, as a crash during write(2) could */
	snprintf(path, sizeof(path), "%s/%016x.seg", dir, 0);
	CHECK(truncate(path, (off_t)tail - 4) == 0);
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK_INT(spool_dropped(sp), ==, SPOOL_HEADER + 11 - 4);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 1);
	CHECK_STR(out.buf, "whole");
	/* appending goes on after the last whole record */
	CHECK(spool_append(sp, "next", 4) == 0);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 2);
	CHECK_STR(out.buf, "whole|next");
	sp = spool_close(sp);
	/* a flipped payload byte fails the checksum */
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, "W", 1, SPOOL_HEADER + 5 + SPOOL_HEADER) == 1);
	close(fd);
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK_INT(spool_dropped(sp), ==, SPOOL_HEADER + 4);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 1);
	CHECK_STR(out.buf, "whole");
	spool_close(sp);
	strbuf_release(&out);
	remove_dir();
}

TEST(test_spool__survives_sigkill)
{
	struct strbuf out = STRBUF_INIT;
	struct spool *sp;
	uint64_t pos;
	pid_t pid;
	int status;

	make_dir();
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (spool_open(dir, 1 << 20, &sp) || spool_append(sp, "a", 1) ||
		    spool_append(sp, "b", 1) || spool_ack(sp, SPOOL_HEADER + 1) ||
		    spool_append(sp, "c", 1))
			_exit(1);
		kill(getpid(), SIGKILL);
		_exit(2);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status));
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	pos = spool_head(sp);
	CHECK_INT(read_all(sp, &pos, &out), ==, 2);
	CHECK_STR(out.buf, "b|c");
	spool_close(sp);
	strbuf_release(&out);
	remove_dir();
}

static int collect_one(const void *data, size_t len, void *ud)
{
	strbuf_reset(ud);
	strbuf_add(ud, data, len);
	return 7;
}

/* An ack file as labd wrote it before slots: the position, then its checksum. */
static int write_old_ack(uint64_t pos)
{
	unsigned char rec[16], md[SHA256_DIGEST_LENGTH];
	uint64_t le = htole64(pos);
	char path[128];
	int fd, r;

	memcpy(rec, &le, 8);
	SHA256(rec, 8, md);
	memcpy(rec + 8, md, 8);
	snprintf(path, sizeof(path), "%s/ack", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	r = write(fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec) ? 0 : -EIO;
	close(fd);
	return r;
}

/* Slots acknowledged out of order: each keeps its position across a restart. */
TEST(test_spool__slots)
{
	struct strbuf out = STRBUF_INIT;
	uint64_t pos[SPOOL_SLOTS] = { 0 }, second, tail;
	struct spool *sp;
	char path[128];

	make_dir();
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK(spool_append(sp, "a0", 2) == 0);
	second = spool_tail(sp);
	CHECK(spool_append(sp, "b1", 2) == 0);
	CHECK(spool_append(sp, "c0", 2) == 0);
	tail = spool_tail(sp);
	CHECK_INT(spool_read_at(sp, second, collect_one, &out), ==, 7);
	CHECK_STR(out.buf, "b1");
	CHECK(spool_read_at(sp, second + 1, collect_one, &out) < 0);
	CHECK(spool_read_at(sp, tail, collect_one, &out) == -EINVAL);
	/* slot 1 delivered everything, slot 0 only its first record */
	pos[1] = tail;
	pos[0] = second;
	CHECK(!spool_ack_slots_frees(sp, pos));
	CHECK(spool_ack_slots(sp, pos) == 0);
	CHECK_INT(spool_head(sp), ==, 0);	/* slots 2.. delivered nothing */
	pos[1] = tail + 1;
	CHECK(spool_ack_slots(sp, pos) == -EINVAL);
	sp = spool_close(sp);
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK_INT(spool_slot_pos(sp, 0), ==, second);
	CHECK_INT(spool_slot_pos(sp, 1), ==, tail);
	CHECK_INT(spool_slot_pos(sp, 2), ==, 0);
	CHECK(spool_ack(sp, second) == 0);
	CHECK_INT(spool_head(sp), ==, second);
	CHECK_INT(spool_slot_pos(sp, 1), ==, tail);	/* never goes back */
	sp = spool_close(sp);
	/* the ack file of an older labd: one position for every slot */
	CHECK(write_old_ack(tail) == 0);
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK_INT(spool_slot_pos(sp, 0), ==, tail);
	CHECK_INT(spool_head(sp), ==, tail);
	sp = spool_close(sp);
	/* a torn one: nothing is trusted, everything is sent again */
	snprintf(path, sizeof(path), "%s/ack", dir);
	CHECK(truncate(path, 12) == 0);
	CHECK(spool_open(dir, 1 << 20, &sp) == 0);
	CHECK_INT(spool_head(sp), ==, 0);
	spool_close(sp);
	strbuf_release(&out);
	remove_dir();
}

TEST_LIST(test_spool__append_read_ack, test_spool__bounded_and_segments_deleted,
	  test_spool__torn_record_dropped, test_spool__survives_sigkill, test_spool__slots);
