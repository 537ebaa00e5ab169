// SPDX-License-Identifier: GPL-2.0-or-later
/* rootfs_resolve.c -- where an archive entry lands in a tree, never outside it */
#include "rootfs/rootfs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int rootfs_normalize(const char *name, struct strbuf *out)
{
	const char *p = name;

	strbuf_reset(out);
	if (*p == '/')
		return -EPERM;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && !strncmp(p, "..", 2))
			return -EINVAL;
		if (n && !(n == 1 && *p == '.')) {
			if ((out->len && strbuf_addch(out, '/') < 0) || strbuf_add(out, p, n) < 0)
				return -ENOMEM;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return 0;
}

int rootfs_resolver_open(struct rootfs_resolver *rs, const char *tree)
{
	memset(rs, 0, sizeof(*rs));
	strbuf_init(&rs->cached_in);
	strbuf_init(&rs->cached_out);
	rs->tree_fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rs->tree_fd < 0)
		return -errno;
	rs->tree_real = realpath(tree, NULL);
	if (!rs->tree_real) {
		int err = -errno;

		close(rs->tree_fd);
		rs->tree_fd = -1;
		return err;
	}
	rs->tree_len = strlen(rs->tree_real);
	return 0;
}

void rootfs_resolver_close(struct rootfs_resolver *rs)
{
	if (rs->tree_fd >= 0)
		close(rs->tree_fd);
	rs->tree_fd = -1;
	free(rs->tree_real);
	rs->tree_real = NULL;
	strbuf_release(&rs->cached_in);
	strbuf_release(&rs->cached_out);
}

void rootfs_resolver_forget(struct rootfs_resolver *rs)
{
	rs->cached = false;
}

/* The directory @path of the tree, opened with its links resolved below the tree. */
static int open_beneath(const struct rootfs_resolver *rs, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, rs->tree_fd, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* The real path of @fd, relative to the tree, into @out. */
static int relative_of(const struct rootfs_resolver *rs, int fd, struct strbuf *out)
{
	char proc[64], real[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, real, sizeof(real) - 1);
	if (n < 0)
		return -errno;
	real[n] = '\0';
	if (strncmp(real, rs->tree_real, rs->tree_len) ||
	    (real[rs->tree_len] && real[rs->tree_len] != '/'))
		return -EXDEV;	/* cannot happen with RESOLVE_BENEATH */
	return strbuf_addstr(out, real + rs->tree_len + (real[rs->tree_len] == '/'));
}

/*
 * The first @len bytes of @path, directories only: the longest part that
 * exists resolved, the rest as written (it will be made).
 */
static int resolve_dirs(const struct rootfs_resolver *rs, const char *path, size_t len,
			struct strbuf *out, char *why, size_t whylen)
{
	char *head = strndup(path, len);
	size_t cut = len;
	int fd = -ENOENT, err = 0;

	if (!head)
		return -ENOMEM;
	while (cut) {
		head[cut] = '\0';
		fd = open_beneath(rs, head);
		if (fd >= 0 || fd == -EXDEV || fd == -ELOOP || fd == -ENOMEM)
			break;
		while (cut && path[cut - 1] != '/')
			cut--;
		if (cut)
			cut--;	/* drop the '/' too */
	}
	if (fd == -EXDEV || fd == -ELOOP) {
		snprintf(why, whylen, "'%s' goes through a symbolic link that %s", head,
			 fd == -EXDEV ? "leaves the tree" : "loops");
		err = fd;
	} else if (fd >= 0) {
		err = relative_of(rs, fd, out);
		close(fd);
	}
	if (!err && cut < len)
		err = strbuf_addf(out, "%s%.*s", out->len ? "/" : "", (int)(len - cut - !!cut),
				  path + cut + !!cut);
	free(head);
	return err;
}

int rootfs_resolve(struct rootfs_resolver *rs, const char *path, bool dir, struct strbuf *out,
		   char *why, size_t whylen)
{
	const char *slash = strrchr(path, '/');
	size_t len = dir ? strlen(path) : slash ? (size_t)(slash - path) : 0;
	int err;

	strbuf_reset(out);
	if (!len)
		return dir ? 0 : strbuf_addstr(out, path);
	if (!dir && rs->cached && rs->cached_in.len == len && !memcmp(rs->cached_in.buf, path, len)) {
		err = strbuf_add(out, rs->cached_out.buf, rs->cached_out.len);
	} else {
		err = resolve_dirs(rs, path, len, out, why, whylen);
		if (err < 0)
			return err;
		rs->cached = false;
		if (!dir) {
			strbuf_reset(&rs->cached_in);
			strbuf_reset(&rs->cached_out);
			rs->cached = !strbuf_add(&rs->cached_in, path, len) &&
				     !strbuf_add(&rs->cached_out, out->buf, out->len);
		}
	}
	if (!err && !dir)
		err = strbuf_addf(out, "%s%s", out->len ? "/" : "", slash + 1);
	return err;
}
