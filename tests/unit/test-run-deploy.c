// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-run-deploy.c -- the deploy actions (action_deploy.c, deploy_cache.c,
 * action_deploy_sdmux.c, image_writer.c) run by the real runner
 * (runbed.h): artifacts staged in the job's TFTP or image directory with
 * their substitution variables, checksums, file URLs outside the artifact
 * directory, decompression by a child process, the size limit, an
 * unreachable server, the download cache, and an image written to an SD
 * card through the fake SD-mux and read back
 */
#include <sys/stat.h>

#include "job/job.h"
#include "run/deploy_cache.h"
#include "runbed.h"
#include "tap.h"

static struct bed b;

static const char types[] =
	"device_type = { name = \"bed-sdcard\"; extends = \"sim-minimal\";\n"
	"  deploy_methods = [ \"sdmux\", \"tftp\" ]; };\n";

/* bed_sh() - shell command @cmd in the bed's directory: 0 when it succeeded. */
static int bed_sh(const char *cmd)
{
	char line[1024];

	snprintf(line, sizeof(line), "cd '%s' && %s", b.dir, cmd);
	return system(line) == 0 ? 0 : -EIO;
}

/* The fixture: one sim-uboot board (an SD card too), two artifacts, labd.conf's @conf. */
static int bed_one(const char *type, const char *conf)
{
	char sdmux[512];
	int err = bed_init(&b, conf);

	snprintf(sdmux, sizeof(sdmux), "sdmux = { driver = \"fake\"; disk = \"%s/card\"; "
		 "log = \"%s/sdmux.log\"; };", b.dir, b.dir);
	if (!err)
		err = bed_file(&b, "devices/01-bed.conf", types);
	if (!err)
		err = bed_file(&b, "card", "");
	if (!err)
		err = bed_file(&b, "artifacts/Image", "ARM64 kernel image\n");
	if (!err)
		err = bed_sh("printf 'a ramdisk\\n' | gzip -c >artifacts/initrd.gz");
	if (!err)
		err = bed_board(&b, "b1", type, NULL, sdmux);
	if (err >= 0)
		err = bed_start(&b);
	return err < 0 ? err : 0;
}

/* A deploy to @to of @artifacts (YAML, ARTIFACTS for the bed's directory), then @more. */
static const char *job(const char *to, const char *artifacts, const char *more)
{
	static char text[8192];
	char art[4096], *p;
	size_t n = 0;

	for (p = (char *)artifacts; *p && n + 256 < sizeof(art);) {
		if (!strncmp(p, "ARTIFACTS", 9)) {
			n += (size_t)snprintf(art + n, sizeof(art) - n, "%s/artifacts", b.dir);
			p += 9;
		} else {
			art[n++] = *p++;
		}
	}
	art[n] = '\0';
	snprintf(text, sizeof(text),
		 "job_name: deploy\n"
		 "device_type: %s\n"
		 "timeouts: {job: {minutes: 30}, action: {minutes: 10}, connection: {minutes: 2}}\n"
		 "actions:\n"
		 "- deploy:\n"
		 "    to: %s\n%s%s",
		 b.boards[0].type, to, art, more ? more : "");
	return text;
}

/* An u-boot boot typing the variables the deploy set, and stopping at its prompt. */
static const char show_vars[] =
	"- boot:\n"
	"    method: bootloader\n"
	"    bootloader: u-boot\n"
	"    commands: ['echo {KERNEL} {RAMDISK}']\n"
	"    prompts: ['=> ']\n";

/* The bootloader typed @want as the first command (after its interrupt and prompt). */
static bool typed_vars(const char *want)
{
	const char *line;

	if (!bed_powered_on(&b, 0, 1))
		return false;
	bed_say(&b, 0, "Hit any key to stop autoboot:  2 ");
	if (!bed_typed(&b, 0, " \n"))
		return false;
	bed_say(&b, 0, "\r\n=> ");
	line = bed_line(&b, 0);
	if (!line || strcmp(line, want)) {
		printf("# typed '%s', not '%s'\n", line ? line : "(nothing)", want);
		return false;
	}
	bed_say(&b, 0, "%s\r\n=> ", line);
	return true;
}

/* TFTP: checksums checked, the ramdisk decompressed, {KERNEL} and {RAMDISK} as boards see them. */
TEST(test_run_deploy__tftp)
{
	char path[512], *ramdisk;
	int64_t id;

	CHECK(bed_one("sim-uboot", NULL) == 0);
	id = bed_submit(&b, job("tftp",
				"    kernel:\n      url: file://ARTIFACTS/Image\n"
				"      sha256sum: b35ca8905e46f91a78faf94b2faad35e3cb0787a07bad5fc3389ac7b7421089e\n"
				"      md5sum: 9d1e6dc6822a3c1e86cd95d40841c9e2\n"
				"    ramdisk: {url: 'file://ARTIFACTS/initrd.gz', compression: gz}\n",
				show_vars));
	CHECK(id > 0);
	CHECK(typed_vars("echo 1/Image 1/initrd"));
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	snprintf(path, sizeof(path), "%s/state/tftp/1/initrd", b.dir);
	ramdisk = bed_read(path);
	CHECK_STR(ramdisk, "a ramdisk\n");
	free(ramdisk);
	CHECK(bed_labd_says(&b, id, "decompressed "));
	CHECK(bed_labd_says(&b, id, "sha256 b35ca8905e46f91a78faf94b2faad35e3cb0787a07bad5fc3389ac7b7421089e"));
	bed_free(&b);
}

/* tmpfs: the files stay on the host, {KERNEL} is their absolute path. */
TEST(test_run_deploy__tmpfs)
{
	char want[512];
	int64_t id;

	CHECK(bed_one("sim-uboot", NULL) == 0);
	id = bed_submit(&b, job("tmpfs", "    kernel: {url: 'file://ARTIFACTS/Image'}\n", show_vars));
	snprintf(want, sizeof(want), "echo %s/state/jobs/1/images/Image {RAMDISK}", b.dir);
	/* no ramdisk deployed: the line is not typed at all */
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "Hit any key to stop autoboot:  2 ");
	CHECK(bed_typed(&b, 0, " \n"));
	bed_say(&b, 0, "\r\n=> ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);

	CHECK(bed_one("sim-uboot", NULL) == 0);
	id = bed_submit(&b, job("tmpfs", "    kernel: {url: 'file://ARTIFACTS/Image'}\n"
				"    ramdisk: {url: 'file://ARTIFACTS/initrd.gz'}\n", show_vars));
	snprintf(want, sizeof(want), "echo %s/state/jobs/1/images/Image %s/state/jobs/1/images/initrd.gz",
		 b.dir, b.dir);
	CHECK(typed_vars(want));
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* A checksum that does not match: the lab's problem (a corrupt download), infrastructure. */
TEST(test_run_deploy__checksum_mismatch)
{
	int64_t id;

	CHECK(bed_one("sim-uboot", NULL) == 0);
	id = bed_submit(&b, job("tftp",
				"    kernel:\n      url: file://ARTIFACTS/Image\n"
				"      sha256sum: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n",
				NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "sha256 mismatch: got b35ca890"));
	bed_free(&b);
}

/* File URLs: below the artifact directory only; a missing file is the job's error. */
TEST(test_run_deploy__file_urls)
{
	int64_t id;

	CHECK(bed_one("sim-uboot", NULL) == 0);
	id = bed_submit(&b, job("tftp", "    kernel: {url: 'file:///etc/passwd'}\n", NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "': not below the lab's artifact directory"));
	id = bed_submit(&b, job("tftp", "    kernel: {url: 'file://ARTIFACTS/../labd.conf'}\n", NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "': not below the lab's artifact directory"));
	id = bed_submit(&b, job("tftp", "    kernel: {url: 'file://ARTIFACTS/nothing'}\n", NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "no such file"));
	bed_free(&b);
}

/* A corrupt compressed file: the decompressor's complaint is the reason. */
TEST(test_run_deploy__bad_compression)
{
	int64_t id;

	CHECK(bed_one("sim-uboot", NULL) == 0);
	id = bed_submit(&b, job("tftp", "    kernel: {url: 'file://ARTIFACTS/Image', compression: gz}\n",
				NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "not in gzip format"));
	bed_free(&b);
}

/* Bigger than the lab's max_artifact_size; a server that does not answer. */
TEST(test_run_deploy__size_limit_and_unreachable)
{
	int64_t id;

	CHECK(bed_one("sim-uboot", "max_artifact_size = 10;") == 0);
	id = bed_submit(&b, job("tftp", "    kernel: {url: 'file://ARTIFACTS/Image'}\n", NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "larger than the lab's max_artifact_size of 10 bytes"));
	id = bed_submit(&b, job("tftp", "    kernel: {url: 'http://127.0.0.1:1/Image'}\n", NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "http://127.0.0.1:1/Image"));
	bed_free(&b);
}

/*
 * An artifact with a sha256sum is taken from the download cache when it is
 * there (as an earlier job left it): the server is not asked.
 */
TEST(test_run_deploy__cache)
{
	static const char sum[] = "b35ca8905e46f91a78faf94b2faad35e3cb0787a07bad5fc3389ac7b7421089e";
	struct job_artifact art = { .label = "kernel", .url = "http://127.0.0.1:1/Image",
				    .sha256sum = (char *)sum };
	char text[512], *entry = NULL, *labd, path[512];
	FILE *f;
	int64_t id;

	CHECK(bed_one("sim-uboot", NULL) == 0);
	CHECK(deploy_cache_path(b.cfg->state_dir, &art, &entry) == 0);
	CHECK((f = fopen(entry, "w")) && fputs("ARM64 kernel image\n", f) >= 0 && fclose(f) == 0);
	free(entry);
	snprintf(text, sizeof(text), "    kernel: {url: '%s', sha256sum: '%s'}\n", art.url, sum);
	id = bed_submit(&b, job("tftp", text, NULL));
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	snprintf(path, sizeof(path), "%s/state/tftp/1/Image", b.dir);
	labd = bed_read(path);
	CHECK_STR(labd, "ARM64 kernel image\n");
	free(labd);
	CHECK(bed_labd_says(&b, id, "kernel: http://127.0.0.1:1/Image is in the download cache"));
	bed_free(&b);
}

/* deploy to: sdmux: board off, card to the host, image written and verified, card back. */
TEST(test_run_deploy__sdmux)
{
	char path[512], *mux;
	int64_t id;

	CHECK(bed_one("bed-sdcard", NULL) == 0);
	CHECK(bed_sh("head -c 3000000 /dev/urandom >artifacts/card.img") == 0);
	id = bed_submit(&b, job("sdmux", "    images:\n      image: {url: 'file://ARTIFACTS/card.img'}\n",
				"- boot:\n    method: minimal\n    prompts: ['# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(bed_sh("cmp -s card artifacts/card.img") == 0);	/* the card holds the image */
	snprintf(path, sizeof(path), "%s/sdmux.log", b.dir);
	mux = bed_read(path);
	CHECK(mux && strstr(mux, " b1 host\n") && strstr(mux, " b1 dut\n") &&
	      strstr(mux, " b1 host\n") < strstr(mux, " b1 dut\n"));
	free(mux);
	CHECK(bed_labd_says(&b, id, "sdmux: image written and verified"));
	bed_free(&b);
}

TEST_LIST(test_run_deploy__tftp, test_run_deploy__tmpfs, test_run_deploy__checksum_mismatch,
	  test_run_deploy__file_urls, test_run_deploy__bad_compression,
	  test_run_deploy__size_limit_and_unreachable, test_run_deploy__cache,
	  test_run_deploy__sdmux);
