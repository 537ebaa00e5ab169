/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fileurl.h -- file:// URLs jobs may name: only below the lab's artifact_dir
 */
#ifndef LABD_FILEURL_H
#define LABD_FILEURL_H

#include <stdbool.h>

/** path_below() - whether @path is @root or inside it (as text: resolve first). */
bool path_below(const char *path, const char *root);

/**
 * file_url_check() - whether a job may read @url from the lab host
 *
 * Returns 0 for a URL that is not file://, or a file:// one whose file,
 * links resolved, is below @root; -EPERM when @root is NULL (the lab allows
 * none) or the file is elsewhere; -ENOENT when its path is plainly below
 * @root (no "..": whether files exist elsewhere is nobody's business) but
 * the file is missing.
 */
int file_url_check(const char *url, const char *root);

#endif
