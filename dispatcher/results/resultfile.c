// SPDX-License-Identifier: GPL-2.0-or-later
/* resultfile.c -- write a result document to a temporary file and rename it in place */
#include "results/resultfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int resultfile_write(const char *path, const void *data, size_t len)
{
	const char *p = data;
	char *tmp;
	int fd, err = 0;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	while (len && !err) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno != EINTR)
			err = -errno;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out_free:
	free(tmp);
	return err;
}

int resultfile_mkdir(const char *dir)
{
	char *p = strdup(dir), *s;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		err = -errno;
	free(p);
	return err;
}
