// SPDX-License-Identifier: GPL-2.0-or-later
/* test-ramdisk.c -- dispatcher/overlay/ramdisk.c, checked by u-boot-tools' mkimage and cpio */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "overlay/ramdisk.h"
#include "tap.h"

static char tmp[256];

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "%s/labd-ramdisk.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		abort();
}

static char *sh_out(const char *fmt, const char *a)
{
	struct strbuf sb = STRBUF_INIT;
	char cmd[2048], buf[1024];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), fmt, a, a, a, a);
	f = popen(cmd, "r");
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (f)
		pclose(f);
	return strbuf_detach(&sb, NULL);
}

/* The archive follows the ramdisk byte for byte (the kernel reads both; cpio(1) stops at the first). */
TEST(test_ramdisk__plain_append)
{
	char rd[512], extra[512], err[256], *out;

	setup();
	snprintf(rd, sizeof(rd), "%s/initrd.cpio.gz", tmp);
	snprintf(extra, sizeof(extra), "%s/overlay.cpio.gz", tmp);
	free(sh_out("cd %s && mkdir -p a/bin b/lava-1/bin && echo init > a/init && echo helper > b/lava-1/bin/h"
		    " && (cd a && find . | cpio -o -H newc --quiet | gzip > ../initrd.cpio.gz)"
		    " && (cd b && find . | cpio -o -H newc --quiet | gzip > ../overlay.cpio.gz)"
		    " && ln initrd.cpio.gz cached", tmp));
	CHECK_INT(ramdisk_append(rd, extra, false, err, sizeof(err)), ==, 0);
	out = sh_out("cd %s && cat cached overlay.cpio.gz | cmp - initrd.cpio.gz && echo same;"
		     " zcat cached | cpio -t --quiet | grep -c lava", tmp);
	CHECK_STR(out, "same\n0\n");	/* and the hard-linked cache copy is untouched */
	free(out);
	free(sh_out("rm -rf %s", tmp));
}

TEST(test_ramdisk__uboot_header)
{
	char rd[512], extra[512], err[256], *out;

	if (system("command -v mkimage >/dev/null"))
		TEST_SKIP("no mkimage (apt-get install u-boot-tools)");
	setup();
	snprintf(rd, sizeof(rd), "%s/initrd.uimg", tmp);
	snprintf(extra, sizeof(extra), "%s/extra", tmp);
	free(sh_out("cd %s && printf hello > d && printf world > extra &&"
		    " mkimage -A arm64 -O linux -T ramdisk -C none -n labd-test -d d initrd.uimg >/dev/null", tmp));
	CHECK(ramdisk_has_uboot_header(rd));
	CHECK_INT(ramdisk_append(rd, extra, true, err, sizeof(err)), ==, 0);
	/* mkimage only lists an image whose CRCs hold */
	out = sh_out("cd %s && mkimage -l initrd.uimg | grep -E 'Image Name|Data Size|Image Type'", tmp);
	CHECK_STR(out, "Image Name:   labd-test\n"
		       "Image Type:   AArch64 Linux RAMDisk Image (uncompressed)\n"
		       "Data Size:    10 Bytes = 0.01 KiB = 0.00 MiB\n");
	free(out);
	out = sh_out("cd %s && tail -c +65 initrd.uimg", tmp);
	CHECK_STR(out, "helloworld");
	free(out);
	/* header: u-boot said, but there is none */
	CHECK_INT(ramdisk_append(extra, extra, true, err, sizeof(err)), ==, -EINVAL);
	CHECK_STR(err, "the ramdisk has no U-Boot header (header: u-boot)");
	CHECK_INT(ramdisk_append("/nonexistent", extra, false, err, sizeof(err)), ==, -ENOENT);
	CHECK_STR(err, "cannot open '/nonexistent': No such file or directory");
	free(sh_out("rm -rf %s", tmp));
}

TEST_LIST(test_ramdisk__plain_append, test_ramdisk__uboot_header);
