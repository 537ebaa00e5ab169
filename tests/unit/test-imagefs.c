// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-imagefs.c -- archives written into ext4 images without a mount: a root
 * with merged /usr (lib -> usr/lib), files replaced, links kept, hostile
 * archives and images that are no ext file system refused.  The images are
 * made with e2fsprogs' mke2fs -d and read back with debugfs, e2fsck checks them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/strbuf.h"
#include "overlay/imagefs.h"
#include "tap.h"

#define WAIT_MAX (30 * USEC_PER_SEC)

struct fixture {
	struct loop *loop;
	struct imagefs_write *w;
	char dir[64], img[128], tar[128];
	int done, err;
	char msg[512];
	uint64_t files, bytes;
};

static void on_done(struct imagefs_write *w, int err, const char *msg, uint64_t files,
		    uint64_t bytes, void *userdata)
{
	struct fixture *f = userdata;

	f->done++;
	f->err = err;
	f->files = files;
	f->bytes = bytes;
	snprintf(f->msg, sizeof(f->msg), "%s", msg ? msg : "");
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int r;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	r = system(sb.buf);
	strbuf_release(&sb);
	return r == 0 ? 0 : -EIO;
}

/* e2fsprogs' tools live in /usr/sbin, which a package build's PATH may leave out. */
static void path_with_sbin(void)
{
	const char *path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
	char buf[4096];

	if (strstr(path, "/usr/sbin"))
		return;
	snprintf(buf, sizeof(buf), "%s:/usr/sbin:/sbin", path);
	setenv("PATH", buf, 1);
}

/* A root like Debian's (lib -> usr/lib, an etc/hostname), an ext4 image of it, a tarball. */
static int fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	path_with_sbin();
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-imagefs.XXXXXX");
	if (!mkdtemp(f->dir) || loop_new(&f->loop) < 0)
		return -EIO;
	snprintf(f->img, sizeof(f->img), "%s/rootfs.ext4", f->dir);
	snprintf(f->tar, sizeof(f->tar), "%s/overlay.tar.gz", f->dir);
	return sh("cd %s && mkdir -p root/usr/lib root/etc root/bin && ln -s usr/lib root/lib && "
		  "echo guest >root/etc/hostname && echo old >root/bin/tool && "
		  "mke2fs -q -t ext4 -d root %s 16M >/dev/null && "
		  "mkdir -p ov/lava-42/bin ov/lib/modules/6.1/kernel ov/etc ov/bin && "
		  "printf '#!/bin/sh\\necho hi\\n' >ov/lava-42/bin/lava-test-case && "
		  "chmod 755 ov/lava-42/bin/lava-test-case && "
		  "head -c 300000 /dev/urandom >ov/lib/modules/6.1/kernel/big.ko && "
		  "echo new >ov/bin/tool && ln -s lava-test-case ov/lava-42/bin/link && "
		  "tar -C ov -czf %s --owner=1000 --group=1000 .", f->dir, f->img, f->tar);
}

static void fixture_release(struct fixture *f)
{
	f->w = imagefs_write_free(f->w);
	f->loop = loop_free(f->loop);
	if (sh("rm -rf '%s'", f->dir) < 0)
		printf("# cannot remove '%s'\n", f->dir);
}

static int write_and_wait(struct fixture *f, const char *archive, const char *prefix, int flags)
{
	uint64_t end = now_monotonic() + WAIT_MAX;

	f->done = 0;
	if (imagefs_write_start(f->loop, f->img, archive, prefix, flags, on_done, f, &f->w) < 0)
		return -EIO;
	while (!f->done && now_monotonic() < end)
		loop_run_once(f->loop, 100 * USEC_PER_MSEC);
	f->w = imagefs_write_free(f->w);
	return f->done == 1 ? 0 : -ETIMEDOUT;
}

/* debugfs -R "@req" on the image, its stdout into @out. */
static int debugfs(struct fixture *f, const char *req, struct strbuf *out)
{
	char buf[4096];
	FILE *p;
	size_t n;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "debugfs -R '%s' %s 2>/dev/null", req, f->img);
	p = popen(cmd, "r");
	if (!p)
		return -EIO;
	strbuf_reset(out);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		strbuf_add(out, buf, n);
	return pclose(p) == 0 ? 0 : -EIO;
}

TEST(test_imagefs__overlay_into_a_merged_usr_root)
{
	struct strbuf out = STRBUF_INIT;
	struct fixture f;

	CHECK(fixture_init(&f) == 0);
	CHECK(write_and_wait(&f, f.tar, "/", 0) == 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK(f.files == 4 && f.bytes >= 300000);
	/* lib/modules went through the link into usr/lib, the link stayed */
	CHECK(debugfs(&f, "stat /usr/lib/modules/6.1/kernel/big.ko", &out) == 0);
	CHECK_CONTAINS(out.buf, "Size: 300000");
	CHECK_CONTAINS(out.buf, "User:     0   Group:     0");
	CHECK(debugfs(&f, "stat /lib", &out) == 0);
	CHECK_CONTAINS(out.buf, "Type: symlink");
	CHECK(debugfs(&f, "cat /bin/tool", &out) == 0);
	CHECK_STR(out.buf, "new\n");
	CHECK(debugfs(&f, "stat /lava-42/bin/lava-test-case", &out) == 0);
	CHECK_CONTAINS(out.buf, "Mode:  0755");
	CHECK(debugfs(&f, "stat /lava-42/bin/link", &out) == 0);
	CHECK_CONTAINS(out.buf, "Fast link dest: \"lava-test-case\"");
	CHECK(debugfs(&f, "cat /etc/hostname", &out) == 0);
	CHECK_STR(out.buf, "guest\n");
	/* the file system is consistent: the replaced file's blocks were freed */
	CHECK(sh("e2fsck -fn %s >/dev/null 2>&1", f.img) == 0);
	/* a second time over the same image: everything replaced again */
	CHECK(write_and_wait(&f, f.tar, "", 0) == 0 && f.err == 0);
	CHECK(sh("e2fsck -fn %s >/dev/null 2>&1", f.img) == 0);
	strbuf_release(&out);
	fixture_release(&f);
}

TEST(test_imagefs__a_prefix_and_the_cache_link_broken)
{
	struct strbuf out = STRBUF_INIT;
	char cached[160];
	struct stat st;
	struct fixture f;

	CHECK(fixture_init(&f) == 0);
	snprintf(cached, sizeof(cached), "%s/cached.ext4", f.dir);
	CHECK(link(f.img, cached) == 0);
	CHECK(write_and_wait(&f, f.tar, "usr", IMAGEFS_COPY) == 0 && f.err == 0);
	CHECK(stat(f.img, &st) == 0 && st.st_nlink == 1);
	CHECK(debugfs(&f, "stat /usr/lib/modules/6.1/kernel/big.ko", &out) == 0);
	CHECK_CONTAINS(out.buf, "Size: 300000");
	/* the cache's file is as it was */
	CHECK(sh("debugfs -R 'stat /usr/lava-42' %s 2>&1 | grep -q 'File not found'", cached) == 0);
	strbuf_release(&out);
	fixture_release(&f);
}

TEST(test_imagefs__refusals)
{
	struct fixture f;
	char bad[160];

	CHECK(fixture_init(&f) == 0);
	snprintf(bad, sizeof(bad), "%s/bad.tar", f.dir);
	CHECK(sh("cd %s && echo x >x && tar -cf %s -P --transform 's|^x|../../x|' x", f.dir,
		 bad) == 0);
	CHECK(write_and_wait(&f, bad, "", 0) == 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_CONTAINS(f.msg, "'../../x': names with '..' are refused");
	CHECK(sh("cd %s && rm -rf e && mkdir -p e && echo x >e/etc && tar -C e -cf %s etc", f.dir,
		 bad) == 0);
	CHECK(write_and_wait(&f, bad, "", 0) == 0);
	CHECK_CONTAINS(f.msg, "'etc' is a directory in the image: not replaced by a file");
	/* not an ext file system */
	CHECK(sh("head -c 1048576 /dev/zero >%s", f.img) == 0);
	CHECK(write_and_wait(&f, f.tar, "", 0) == 0);
	CHECK_CONTAINS(f.msg, "is not an ext2/3/4 file system image");
	fixture_release(&f);
}

TEST_LIST(test_imagefs__overlay_into_a_merged_usr_root, test_imagefs__a_prefix_and_the_cache_link_broken,
	  test_imagefs__refusals);
