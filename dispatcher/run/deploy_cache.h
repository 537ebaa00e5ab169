/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deploy_cache.h -- the lab's shared download cache, and artifact file names
 *
 * Artifacts that a job gives with a sha256sum are kept in
 * <state_dir>/cache/<key>, where the key is the SHA-256 of the URL and the
 * checksum: the same URL with the same checksum is the same bytes, whoever
 * asks, so the next job hard-links (or copies) the file instead of
 * downloading it.  Artifacts without a checksum are never cached: what a URL
 * serves may change.  file:// URLs are not cached either (they are local).
 *
 * A download into the cache is written to a temporary name in the cache
 * directory (deploy_cache_tmp_path()) and renamed to the entry only once its
 * checksum matched, so a reader never sees a partial or wrong file, and two
 * jobs fetching the same URL at the same time each rename a complete file
 * over the other's.  Entries are never modified in place, so hard links into
 * job directories are safe.  Eviction is the admin's (any file may be
 * deleted at any time: it is downloaded again).
 */
#ifndef LABD_DEPLOY_CACHE_H
#define LABD_DEPLOY_CACHE_H

#include <stdbool.h>
#include <stddef.h>

struct job_artifact;

#define DEPLOY_CACHE_DIR "cache"	/* below state_dir */
#define DEPLOY_CACHE_KEY_LEN 64		/* hex digits of a key */

/** deploy_cache_wanted() - whether @a is cached: a sha256sum, and not a file:// URL. */
bool deploy_cache_wanted(const struct job_artifact *a);

/**
 * deploy_cache_key() - the key of @url with @sha256 (may be NULL) into @out
 * (DEPLOY_CACHE_KEY_LEN + 1 bytes): hex SHA-256 of "<url>\n<sha256>".
 * Returns 0 or -ENOMEM.
 */
int deploy_cache_key(const char *url, const char *sha256, char *out);

/**
 * deploy_cache_path() - <state_dir>/cache/<key> for @a, and make the cache
 * directory.  Returns 0, -ENOMEM or the mkdir error; *@ret to be freed.
 */
int deploy_cache_path(const char *state_dir, const struct job_artifact *a, char **ret);

/** deploy_cache_tmp_path() - a unique temporary name next to @entry; NULL on ENOMEM. */
char *deploy_cache_tmp_path(const char *entry);

/**
 * deploy_file_name() - a safe file name for @a: the last path component of
 * its URL (query and fragment removed), every character outside
 * [A-Za-z0-9._+-] replaced by '_'; the label when that is empty or starts
 * with a dot.  NULL on ENOMEM.
 */
char *deploy_file_name(const struct job_artifact *a);

/**
 * deploy_decompressed_name() - @name without the suffix of @compression
 * (".gz", ".xz"; also ".tgz" -> ".tar"), or @name + ".out" when it has none.
 * NULL on ENOMEM.
 */
char *deploy_decompressed_name(const char *name, const char *compression);

#endif
