// SPDX-License-Identifier: GPL-2.0-or-later
/* deploy_cache.c -- cache keys and paths for downloads, safe artifact file names */
#include "run/deploy_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "job/job.h"

#define DEPLOY_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+"

bool deploy_cache_wanted(const struct job_artifact *a)
{
	return a->sha256sum && strncmp(a->url, "file://", 7);
}

int deploy_cache_key(const char *url, const char *sha256, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(ctx, url, strlen(url)) && EVP_DigestUpdate(ctx, "\n", 1) &&
	     EVP_DigestUpdate(ctx, sha256 ? sha256 : "", sha256 ? strlen(sha256) : 0) &&
	     EVP_DigestFinal_ex(ctx, md, &len);
	EVP_MD_CTX_free(ctx);
	if (!ok || len * 2 != DEPLOY_CACHE_KEY_LEN)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	return 0;
}

int deploy_cache_path(const char *state_dir, const struct job_artifact *a, char **ret)
{
	char key[DEPLOY_CACHE_KEY_LEN + 1], *dir;
	int r = deploy_cache_key(a->url, a->sha256sum, key);

	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", state_dir, DEPLOY_CACHE_DIR) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		free(dir);
		return r;
	}
	r = asprintf(ret, "%s/%s", dir, key) < 0 ? -ENOMEM : 0;
	free(dir);
	return r;
}

char *deploy_cache_tmp_path(const char *entry)
{
	static unsigned long counter;
	char *tmp;

	if (asprintf(&tmp, "%s.tmp.%ld.%lu", entry, (long)getpid(), ++counter) < 0)
		return NULL;
	return tmp;
}

char *deploy_file_name(const struct job_artifact *a)
{
	const char *u = a->url, *end = u + strcspn(u, "?#"), *slash = u, *p;
	char *name;
	size_t i;

	for (p = u; p < end; p++)
		if (*p == '/')
			slash = p + 1;
	name = slash < end ? strndup(slash, (size_t)(end - slash)) : strdup(a->label);
	for (i = 0; name && name[i]; i++)
		if (!strchr(DEPLOY_NAME_CHARS, name[i]))
			name[i] = '_';
	if (name && (name[0] == '.' || !name[0])) {
		free(name);
		name = strdup(a->label);
	}
	return name;
}

char *deploy_decompressed_name(const char *name, const char *compression)
{
	static const struct {
		const char *compression, *suffix;
	} suffixes[] = {
		{ "gz", ".gz" }, { "xz", ".xz" }, { "bz2", ".bz2" }, { "zstd", ".zst" },
		{ "zstd", ".zstd" }, { "zip", ".zip" },
	};
	size_t n = strlen(name), i, len;
	char *out;

	if (!strcmp(compression, "gz") && n > 4 && !strcmp(name + n - 4, ".tgz"))
		return asprintf(&out, "%.*s.tar", (int)(n - 4), name) < 0 ? NULL : out;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		len = strlen(suffixes[i].suffix);
		if (!strcmp(compression, suffixes[i].compression) && n > len &&
		    !strcmp(name + n - len, suffixes[i].suffix))
			return strndup(name, n - len);
	}
	return asprintf(&out, "%s.out", name) < 0 ? NULL : out;
}
