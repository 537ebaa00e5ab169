// SPDX-License-Identifier: GPL-2.0-or-later
/* test-image_writer.c -- writing and verifying card images from a child process */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/loop.h"
#include "run/image_writer.h"
#include "tap.h"

#define WAIT_MAX (20 * USEC_PER_SEC)
#define IMAGE_SIZE (9 * 1024 * 1024 + 123)	/* three chunks, the last one short */

struct fixture {
	struct loop *loop;
	struct image_writer *w;
	char dir[64], img[128], card[128];
	int done, err;
	char msg[512];
	int writes, verifies;
	uint64_t last;
};

static void on_progress(struct image_writer *w, const char *phase, uint64_t done,
			uint64_t total, void *userdata)
{
	struct fixture *f = userdata;

	if (!strcmp(phase, "write"))
		f->writes++;
	else
		f->verifies++;
	f->last = done;
}

static void on_done(struct image_writer *w, int err, const char *msg, void *userdata)
{
	struct fixture *f = userdata;

	f->done++;
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
}

static const struct image_writer_ops ops = { .progress = on_progress, .done = on_done };

static int fixture_init(struct fixture *f)
{
	char cmd[512];

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-image-writer.XXXXXX");
	if (!mkdtemp(f->dir) || loop_new(&f->loop) < 0)
		return -EIO;
	snprintf(f->img, sizeof(f->img), "%s/image.img", f->dir);
	snprintf(f->card, sizeof(f->card), "%s/card", f->dir);
	snprintf(cmd, sizeof(cmd), "head -c %d /dev/urandom > %s && : > %s", IMAGE_SIZE, f->img,
		 f->card);
	return system(cmd) == 0 ? 0 : -EIO;
}

static void fixture_release(struct fixture *f)
{
	char cmd[128];

	f->w = image_writer_free(f->w);
	f->loop = loop_free(f->loop);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		printf("# cannot remove '%s'\n", f->dir);
}

static int wait_done(struct fixture *f)
{
	uint64_t end = now_monotonic() + WAIT_MAX;

	while (!f->done && now_monotonic() < end)
		loop_run_once(f->loop, 100 * USEC_PER_MSEC);
	return f->done == 1 ? 0 : -ETIMEDOUT;
}

/* sha256sum of @path, as sha256sum prints it. */
static const char *sha256_of(const char *path)
{
	static char hex[65];
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
	p = popen(cmd, "r");
	if (!p || !fgets(hex, sizeof(hex), p))
		hex[0] = '\0';
	if (p)
		pclose(p);
	return hex;
}

TEST(test_image_writer__writes_and_verifies)
{
	struct fixture f;
	char cmd[300];

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(image_writer_start(f.loop, f.img, f.card, &ops, &f, &f.w), ==, 0);
	CHECK_INT(wait_done(&f), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(f.msg, sha256_of(f.img));
	CHECK_INT(f.writes, ==, 3);
	CHECK_INT(f.verifies, ==, 3);
	CHECK_INT(f.last, ==, IMAGE_SIZE);
	snprintf(cmd, sizeof(cmd), "cmp -s %s %s", f.img, f.card);
	CHECK_INT(system(cmd), ==, 0);
	fixture_release(&f);
}

TEST(test_image_writer__card_missing)
{
	struct fixture f;
	char dst[160];

	CHECK_INT(fixture_init(&f), ==, 0);
	snprintf(dst, sizeof(dst), "%s/nosuch/card", f.dir);
	CHECK_INT(image_writer_start(f.loop, f.img, dst, &ops, &f, &f.w), ==, 0);
	CHECK_INT(wait_done(&f), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_CONTAINS(f.msg, "cannot open '");
	CHECK_CONTAINS(f.msg, "/nosuch/card': No such file or directory");
	fixture_release(&f);
}

TEST(test_image_writer__read_back_fails)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	/* Everything written to /dev/null vanishes: nothing reads back. */
	CHECK_INT(image_writer_start(f.loop, f.img, "/dev/null", &ops, &f, &f.w), ==, 0);
	CHECK_INT(wait_done(&f), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "reading '/dev/null' back failed: No data available");
	fixture_release(&f);
}

TEST(test_image_writer__image_missing)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(image_writer_start(f.loop, "/nonexistent.img", f.card, &ops, &f, &f.w), ==,
		  -ENOENT);
	fixture_release(&f);
}

TEST(test_image_writer__free_kills_the_child)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(image_writer_start(f.loop, f.img, f.card, &ops, &f, &f.w), ==, 0);
	f.w = image_writer_free(f.w);
	loop_run_once(f.loop, 100 * USEC_PER_MSEC);
	CHECK_INT(f.done, ==, 0);
	fixture_release(&f);
}

TEST_LIST(test_image_writer__writes_and_verifies, test_image_writer__card_missing,
	  test_image_writer__read_back_fails, test_image_writer__image_missing,
	  test_image_writer__free_kills_the_child);
