/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rootfs_internal.h -- what the helper's files share (rootfs_helper.c, the
 * child's program, and rootfs_resolve.c, where an entry lands in a tree)
 */
#ifndef LABD_ROOTFS_INTERNAL_H
#define LABD_ROOTFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strbuf.h"

/*
 * Paths inside a tree, as the helper writes them: every directory of an
 * entry's path is resolved below the tree by the kernel (openat2 with
 * RESOLVE_BENEATH), following the tree's own relative symbolic links
 * (merged /usr: lib -> usr/lib) and refusing any that leaves the tree.  The
 * result names only real directories, so libarchive, which refuses to write
 * through a symbolic link, writes exactly there.
 */
struct rootfs_resolver {
	int tree_fd;			/* O_PATH of the tree */
	char *tree_real;		/* its canonical path */
	size_t tree_len;
	struct strbuf cached_in;	/* the last parent resolved ... */
	struct strbuf cached_out;	/* ... and what it resolved to */
	bool cached;
};

/** rootfs_resolver_open() - resolve below the directory @tree: 0 or a negative errno. */
int rootfs_resolver_open(struct rootfs_resolver *rs, const char *tree);

void rootfs_resolver_close(struct rootfs_resolver *rs);

/** rootfs_resolver_forget() - a symbolic link was written: resolved parents may change. */
void rootfs_resolver_forget(struct rootfs_resolver *rs);

/**
 * rootfs_resolve() - where the entry @path lands in the tree
 * @path: relative, normalized (rootfs_normalize())
 * @dir: the entry is a directory: an existing directory it names through
 *	 the tree's links is that directory (a link is never replaced by one)
 * @out: the path relative to the tree, every directory of it a real one
 *	 (the part that does not exist yet as written), "" for the tree itself
 *
 * Returns 0, or -EXDEV / -ELOOP with the reason in @why.
 */
int rootfs_resolve(struct rootfs_resolver *rs, const char *path, bool dir, struct strbuf *out,
		   char *why, size_t whylen);

/**
 * rootfs_normalize() - an archive's entry name as a relative path without
 * ".", "" or trailing components ("./usr//lib/" -> "usr/lib", "./" -> "")
 * Returns 0, -EPERM for an absolute name, -EINVAL for one with "..".
 */
int rootfs_normalize(const char *name, struct strbuf *out);

#endif
