// SPDX-License-Identifier: GPL-2.0-or-later
/* test-deploy-cache.c -- cache keys, cache paths and artifact file names of deploys */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/job.h"
#include "run/deploy_cache.h"
#include "tap.h"

#define SHA_A "0c9509f29ba6872423482954ef135db50f0e70ebdbbcaf4a81526590b18a1c45"
#define SHA_B "cc1934d60d297b40db096e28b7914bae1f806593f8bd2b7c7bac956130b6ecd9"

/* Whether the file name of @url (label @label) is @want; prints it when not. */
static int name_is(const char *url, const char *label, const char *want)
{
	struct job_artifact a = { .url = (char *)url, .label = (char *)label };
	char *got = deploy_file_name(&a);
	int ok = got && !strcmp(got, want);

	if (!ok)
		printf("#   '%s' -> '%s', expected '%s'\n", url, got ? got : "(null)", want);
	free(got);
	return ok;
}

static int decompressed_is(const char *name, const char *comp, const char *want)
{
	char *got = deploy_decompressed_name(name, comp);
	int ok = got && !strcmp(got, want);

	if (!ok)
		printf("#   '%s' (%s) -> '%s', expected '%s'\n", name, comp, got ? got : "(null)",
		       want);
	free(got);
	return ok;
}

TEST(test_deploy_cache__key_is_sha256_of_url_and_checksum)
{
	char k1[DEPLOY_CACHE_KEY_LEN + 1], k2[DEPLOY_CACHE_KEY_LEN + 1];

	/* printf 'http://x/Image\n' | sha256sum */
	CHECK_INT(deploy_cache_key("http://x/Image", NULL, k1), ==, 0);
	CHECK_STR(k1, "5069dbba7d0e84ec1e8572448d8e9b9ee1df96fdea7706c24b4ec90b50a936c8");
	CHECK_INT(strlen(k1), ==, DEPLOY_CACHE_KEY_LEN);
	CHECK_INT(deploy_cache_key("http://x/Image", SHA_A, k2), ==, 0);
	CHECK(strcmp(k1, k2));
	CHECK_INT(deploy_cache_key("http://x/Image", SHA_B, k1), ==, 0);
	CHECK(strcmp(k1, k2));
	CHECK_INT(deploy_cache_key("http://y/Image", SHA_A, k1), ==, 0);
	CHECK(strcmp(k1, k2));
	CHECK_INT(deploy_cache_key("http://x/Image", SHA_A, k1), ==, 0);
	CHECK_STR(k1, k2);
	CHECK_INT(strspn(k1, "0123456789abcdef"), ==, DEPLOY_CACHE_KEY_LEN);
}

TEST(test_deploy_cache__key_known_value)
{
	char k[DEPLOY_CACHE_KEY_LEN + 1];

	/* printf 'u\nc' | sha256sum */
	CHECK_INT(deploy_cache_key("u", "c", k), ==, 0);
	CHECK_STR(k, "f83e30bab19727a0baa8f3310891dcd0f7fdb9cbea7154c6905cc4aac96e0c9d");
}

TEST(test_deploy_cache__wanted_only_with_checksum_and_not_file)
{
	struct job_artifact a = { .url = "http://h/Image", .label = "kernel" };

	CHECK(!deploy_cache_wanted(&a));
	a.sha256sum = SHA_A;
	CHECK(deploy_cache_wanted(&a));
	a.url = "file:///srv/artifacts/Image";
	CHECK(!deploy_cache_wanted(&a));
}

TEST(test_deploy_cache__path_makes_the_directory)
{
	char dir[] = "/tmp/test-deploy-cache.XXXXXX", *path = NULL, *tmp, *other, key[65];
	struct job_artifact a = { .url = "https://h/a.dtb", .label = "dtb", .sha256sum = SHA_B };
	struct stat st;

	CHECK(mkdtemp(dir));
	CHECK_INT(deploy_cache_path(dir, &a, &path), ==, 0);
	CHECK_INT(deploy_cache_key(a.url, a.sha256sum, key), ==, 0);
	CHECK(!strncmp(path, dir, strlen(dir)));
	CHECK_STR(strrchr(path, '/') + 1, key);
	*strrchr(path, '/') = '\0';
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK(S_ISDIR(st.st_mode));
	*(path + strlen(path)) = '/';
	tmp = deploy_cache_tmp_path(path);
	CHECK(tmp && !strncmp(tmp, path, strlen(path)) && strstr(tmp, ".tmp."));
	other = deploy_cache_tmp_path(path);
	CHECK(other && strcmp(tmp, other));
	free(other);
	free(tmp);
	*strrchr(path, '/') = '\0';
	rmdir(path);		/* <dir>/cache */
	rmdir(dir);
	free(path);
}

TEST(test_deploy_cache__file_names_are_sanitized)
{
	CHECK(name_is("http://h/a/b/Image", "kernel", "Image"));
	CHECK(name_is("http://h/Image.gz?token=x#frag", "kernel", "Image.gz"));
	CHECK(name_is("http://h/my%20file;rm -rf", "kernel", "my_20file_rm_-rf"));
	CHECK(name_is("http://h/dir/", "ramdisk", "ramdisk"));
	CHECK(name_is("http://h/..", "dtb", "dtb"));
	CHECK(name_is("http://h/.hidden", "dtb", "dtb"));
	CHECK(name_is("file:///srv/a/../../etc/passwd", "kernel", "passwd"));
	CHECK(name_is("http://h/initrd.cpio.gz", "ramdisk", "initrd.cpio.gz"));
}

TEST(test_deploy_cache__decompressed_names)
{
	CHECK(decompressed_is("Image.gz", "gz", "Image"));
	CHECK(decompressed_is("rootfs.ext4.xz", "xz", "rootfs.ext4"));
	CHECK(decompressed_is("modules.tgz", "gz", "modules.tar"));
	CHECK(decompressed_is("Image", "gz", "Image.out"));
	CHECK(decompressed_is("Image.xz", "gz", "Image.xz.out"));
	CHECK(decompressed_is(".gz", "gz", ".gz.out"));
}

TEST_LIST(test_deploy_cache__key_is_sha256_of_url_and_checksum, test_deploy_cache__key_known_value,
	  test_deploy_cache__wanted_only_with_checksum_and_not_file,
	  test_deploy_cache__path_makes_the_directory, test_deploy_cache__file_names_are_sanitized,
	  test_deploy_cache__decompressed_names);
