// SPDX-License-Identifier: GPL-2.0-or-later
/* fileurl.c -- file:// URLs below the lab's artifact_dir */
#include "core/fileurl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool path_below(const char *path, const char *root)
{
	size_t n = strlen(root);

	return !strncmp(path, root, n) && (path[n] == '/' || !path[n]);
}

int file_url_check(const char *url, const char *root)
{
	const char *path = url + 7;
	char *real;
	int err;

	if (strncmp(url, "file://", 7))
		return 0;
	if (!root)
		return -EPERM;
	real = realpath(path, NULL);
	if (!real && errno == ENOENT && path_below(path, root) && !strstr(path, "/.."))
		return -ENOENT;
	err = real && path_below(real, root) ? 0 : -EPERM;
	free(real);
	return err;
}
