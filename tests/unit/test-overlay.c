// SPDX-License-Identifier: GPL-2.0-or-later
/* test-overlay.c -- dispatcher/overlay/overlay.c: archives read back by cpio and tar */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlay/overlay.h"
#include "core/strbuf.h"
#include "tap.h"

static char tmp[256];

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "%s/labd-overlay.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		abort();
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

/* All the output of a shell command. */
static char *sh_out(const char *fmt, const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	char cmd[4096], buf[1024];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	f = popen(cmd, "r");
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (f)
		pclose(f);
	return strbuf_detach(&sb, NULL);
}

/* A tar as `git archive` writes one: directories first, a script, a symlink. */
static void make_tree_tar(const char *tar)
{
	sh("set -e; d=%s.d; mkdir -p $d/automated/linux/smoke; cd $d;"
	   "printf 'metadata: {name: smoke}\\n' > automated/linux/smoke/smoke.yaml;"
	   "printf '#!/bin/sh\\necho hi\\n' > automated/linux/smoke/smoke.sh; chmod 755 automated/linux/smoke/smoke.sh;"
	   "ln -s smoke.sh automated/linux/smoke/link.sh; tar -cf %s .", tar, tar);
}

TEST(test_overlay__cpio_for_a_ramdisk)
{
	char path[512], tree[512], *out;
	struct overlay_import *imp;
	struct strbuf cap = STRBUF_INIT;
	struct overlay *o;
	int r;

	setup();
	snprintf(path, sizeof(path), "%s/overlay.cpio.gz", tmp);
	snprintf(tree, sizeof(tree), "%s/tree.tar", tmp);
	make_tree_tar(tree);
	CHECK_INT(overlay_open(path, OVERLAY_CPIO_GZ, &o), ==, 0);
	CHECK_INT(overlay_add_file(o, "lava-7/bin/lava-test-case", 0755, "#!/bin/sh\n", 10), ==, 0);
	CHECK_INT(overlay_add_dir(o, "lava-7/tests/", 0755), ==, 0);
	CHECK_INT(overlay_import_open(o, tree, "lava-7/tests/0_smoke/", &imp), ==, 0);
	overlay_import_capture(imp, "automated/linux/smoke/smoke.yaml", 1000, &cap);
	while ((r = overlay_import_step(imp, 1)) == 1)
		;
	CHECK_INT(r, ==, 0);
	CHECK(overlay_import_captured(imp));
	CHECK_STR(cap.buf, "metadata: {name: smoke}\n");
	overlay_import_free(imp);
	CHECK_INT(overlay_close(o), ==, 0);
	/* every parent before its children, once; modes kept */
	out = sh_out("cd %s && zcat %s | cpio -itv --quiet 2>&1 | awk '{print $1, $NF}'", tmp, path);
	CHECK_STR(out, "drwxr-xr-x lava-7\n"
		       "drwxr-xr-x lava-7/bin\n"
		       "-rwxr-xr-x lava-7/bin/lava-test-case\n"
		       "drwxr-xr-x lava-7/tests\n"
		       "drwxr-xr-x lava-7/tests/0_smoke\n"
		       "drwxr-xr-x lava-7/tests/0_smoke/automated\n"
		       "drwxr-xr-x lava-7/tests/0_smoke/automated/linux\n"
		       "drwxr-xr-x lava-7/tests/0_smoke/automated/linux/smoke\n"
		       "lrwxrwxrwx smoke.sh\n"
		       "-rwxr-xr-x lava-7/tests/0_smoke/automated/linux/smoke/smoke.sh\n"
		       "-rw-r--r-- lava-7/tests/0_smoke/automated/linux/smoke/smoke.yaml\n");
	free(out);
	out = sh_out("zcat %s | cpio -i --quiet --to-stdout lava-7/tests/0_smoke/automated/linux/smoke/smoke.sh%s",
		     path, "");
	CHECK_STR(out, "#!/bin/sh\necho hi\n");
	free(out);
	strbuf_release(&cap);
	sh("rm -rf %s%s", tmp, "");
}

TEST(test_overlay__tar_for_download)
{
	char path[512], tree[512], *out;
	struct overlay_import *imp;
	struct overlay *o;
	char longname[300] = "lava-7";
	int i;

	setup();
	snprintf(path, sizeof(path), "%s/overlay.tar.gz", tmp);
	snprintf(tree, sizeof(tree), "%s/tree.tar", tmp);
	make_tree_tar(tree);
	CHECK_INT(overlay_open(path, OVERLAY_TAR_GZ, &o), ==, 0);
	for (i = 0; i < 5; i++)	/* longer than ustar's 255: pax */
		strcat(longname, "/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	strcat(longname, "/f");
	CHECK_INT(overlay_add_file(o, longname, 0644, "x", 1), ==, 0);
	CHECK_INT(overlay_import_open(o, tree, "lava-7/tests/1_t/", &imp), ==, 0);
	CHECK_INT(overlay_import_step(imp, 1 << 20), ==, 0);
	overlay_import_free(imp);
	CHECK_INT(overlay_bytes(o), >, 30);
	CHECK_INT(overlay_close(o), ==, 0);
	CHECK_INT(sh("mkdir %s/x && cd %s/x", tmp, tmp), ==, 0);
	CHECK_INT(sh("cd %s/x && busybox tar -xzf %s", tmp, path), ==, 0);
	out = sh_out("cd %s/x && sh lava-7/tests/1_t/automated/linux/smoke/link.sh && find lava-7 -name f | wc -L%s",
		     tmp, "");
	CHECK_STR(out, "hi\n263\n");
	free(out);
	sh("rm -rf %s%s", tmp, "");
}

TEST(test_overlay__refusals)
{
	char path[512], evil[512];
	struct overlay_import *imp;
	struct overlay *o;

	setup();
	snprintf(path, sizeof(path), "%s/overlay.cpio.gz", tmp);
	snprintf(evil, sizeof(evil), "%s/evil.tar", tmp);
	sh("cd %s && mkdir -p a && echo x > a/f && tar -cf %s a/f --transform 's,^a/f,a/../../etc/f,'", tmp, evil);
	CHECK_INT(overlay_open(path, OVERLAY_CPIO_GZ, &o), ==, 0);
	CHECK_INT(overlay_import_open(o, evil, "lava-1/", &imp), ==, 0);
	CHECK_INT(overlay_import_step(imp, 1 << 20), ==, -EINVAL);
	CHECK(strstr(overlay_error(o), "a/../../etc/f' of '"));
	CHECK(strstr(overlay_error(o), "leaves its directory"));
	overlay_import_free(imp);
	CHECK_INT(overlay_close(o), ==, -EINVAL);
	CHECK(access(path, F_OK) < 0);

	/* a capture larger than allowed */
	snprintf(evil, sizeof(evil), "%s/big.tar", tmp);
	sh("cd %s && head -c 5000 /dev/zero > big && tar -cf %s big", tmp, evil);
	CHECK_INT(overlay_open(path, OVERLAY_TAR_GZ, &o), ==, 0);
	CHECK_INT(overlay_import_open(o, evil, "", &imp), ==, 0);
	{
		struct strbuf cap = STRBUF_INIT;

		overlay_import_capture(imp, "big", 1000, &cap);
		CHECK_INT(overlay_import_step(imp, 1 << 20), ==, -E2BIG);
		strbuf_release(&cap);
	}
	overlay_import_free(imp);
	overlay_abort(o);
	CHECK(access(path, F_OK) < 0);
	/* not an archive */
	CHECK_INT(overlay_open(path, OVERLAY_TAR_GZ, &o), ==, 0);
	CHECK(overlay_import_open(o, "/nonexistent.tar", "", &imp) < 0);
	CHECK(strstr(overlay_error(o), "cannot read '/nonexistent.tar'"));
	overlay_abort(o);
	sh("rm -rf %s%s", tmp, "");
}

TEST_LIST(test_overlay__cpio_for_a_ramdisk, test_overlay__tar_for_download, test_overlay__refusals);
