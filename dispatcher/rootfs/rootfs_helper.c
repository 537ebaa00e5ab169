// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rootfs_helper.c -- `labd rootfs-helper`: the child that unpacks an archive
 * into a tree (libarchive) and removes trees, so that labd's loop never does
 *
 * unpack: the archive comes on fd 3 (a pipe the loop feeds from a download,
 * or a file), in any compression libarchive reads; tar formats only.  Each
 * entry's name is normalized (refused when absolute or with ".."), cut to
 * the `--prefix` directory, put below `--into`, and resolved inside the tree
 * (rootfs_resolve()); libarchive then writes it with every SECURE flag
 * set, so nothing lands outside the tree whatever the archive says.
 * Owners (numeric, as the archive has them: the board's accounts, not this
 * host's), modes, times, hard and symbolic links, device nodes, ACLs,
 * extended attributes and file capabilities are kept; without root's rights
 * files belong to labd's user and device nodes are left out.  The archive
 * is read to its end (the loop hashes all of it).
 *
 * The loop reads what it prints: "progress BYTES" every
 * ROOTFS_PROGRESS_STEP of file data, "warning TEXT" (the first few),
 * then "done BYTES ENTRIES DEVICES_SKIPPED", or "error archive|lab REASON".
 */
#include "rootfs/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "core/strbuf.h"
#include "rootfs/rootfs_internal.h"

#define HELPER_IN_FD 3
#define HELPER_BLOCK 65536
#define HELPER_WARNINGS_SHOWN 5
#define HELPER_NFTW_FDS 64

struct unpack {
	struct archive *in;
	struct archive *out;
	struct rootfs_resolver rs;
	struct strbuf prefix;		/* normalized, "" for none */
	struct strbuf into;		/* resolved, "" for the tree itself */
	struct strbuf rel;		/* a name, normalized and cut to the prefix */
	struct strbuf full;		/* and put below --into */
	struct strbuf path;		/* where the entry is written */
	struct strbuf link;		/* where a hard link's target is */
	bool privileged;
	uint64_t bytes;
	uint64_t next_report;
	uint64_t entries;
	uint64_t devices_skipped;
	uint64_t warnings;
};

/* Errors of the lab's side (disk, rights), as opposed to the archive's. */
static bool lab_errno(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == ENOMEM ||
	       e == EMFILE || e == ENFILE;
}

static int fail(bool lab, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(bool lab, const char *fmt, ...)
{
	va_list ap;

	printf("error %s ", lab ? "lab" : "archive");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return 1;
}

bool rootfs_have_privileges(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	/* CAP_CHOWN (0), CAP_DAC_OVERRIDE (1), CAP_FOWNER (3), CAP_MKNOD (27) */
	return (eff & 0xbULL) == 0xbULL && (eff & (1ULL << 27));
}

static void warn(struct unpack *u, const char *what, struct archive *a)
{
	if (u->warnings++ < HELPER_WARNINGS_SHOWN)
		printf("warning %s: %s\n", what, archive_error_string(a) ?: "?");
}

#define PLACED 0		/* place(): write the entry there */
#define OUTSIDE_PREFIX (-1)	/* place(): skip it */

/*
 * The entry @name as a path of the tree: normalized into @rel, cut to the
 * prefix, put below `--into`, resolved into @out.  Returns PLACED,
 * OUTSIDE_PREFIX, or the exit status of a refusal (> 0).
 */
static int place(struct unpack *u, const char *name, bool dir, struct strbuf *rel,
		 struct strbuf *out)
{
	struct strbuf *full = &u->full;
	size_t n = u->prefix.len;
	char why[512];
	int err = rootfs_normalize(name, rel);

	if (err == -EPERM)
		return fail(false, "archive entry '%.300s' has an absolute path: refused", name);
	if (err == -EINVAL)
		return fail(false, "archive entry '%.300s' has a '..' in its path: refused", name);
	if (err < 0)
		return fail(true, "out of memory");
	if (n && (strncmp(rel->buf, u->prefix.buf, n) || (rel->buf[n] && rel->buf[n] != '/')))
		return OUTSIDE_PREFIX;
	strbuf_consume(rel, n + (n && rel->buf[n] == '/'));
	strbuf_reset(full);
	if (strbuf_addf(full, "%s%s%s", u->into.buf, u->into.len && rel->len ? "/" : "",
			rel->buf) < 0)
		return fail(true, "out of memory");
	err = rootfs_resolve(&u->rs, full->buf, dir, out, why, sizeof(why));
	if (err == -ENOMEM)
		return fail(true, "out of memory");
	if (err < 0)
		return fail(false, "archive entry '%.300s': %s: refused", name, why);
	return PLACED;
}

/* A write error: the disk's (lab) or the archive's, with the entry's name. */
static int write_failed(struct archive *a, const char *name)
{
	const char *text = archive_error_string(a);
	int e = archive_errno(a);
	bool say_errno = e > 0 && (!text || !strstr(text, strerror(e)));

	return fail(lab_errno(e), "cannot write '%.300s': %s%s%s", name, text ? text : "",
		    say_errno && text ? ": " : "", say_errno ? strerror(e) : "");
}

/* The entry's data, block by block (sparse files stay sparse). */
static int copy_data(struct unpack *u, struct archive_entry *e)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	la_ssize_t w;
	int r;

	while ((r = archive_read_data_block(u->in, &buf, &len, &off)) == ARCHIVE_OK) {
		w = archive_write_data_block(u->out, buf, len, off);
		if (w != ARCHIVE_OK)
			return write_failed(u->out, archive_entry_pathname(e));
		u->bytes += len;
		if (u->bytes >= u->next_report) {
			printf("progress %" PRIu64 "\n", u->bytes);
			fflush(stdout);
			u->next_report = u->bytes + ROOTFS_PROGRESS_STEP;
		}
	}
	if (r != ARCHIVE_EOF)
		return fail(false, "corrupt or truncated archive, at '%.300s': %s",
			    archive_entry_pathname(e), archive_error_string(u->in) ?: "?");
	return 0;
}

/* Rename @e to where it lands (and its hard link target): PLACED, OUTSIDE_PREFIX, or > 0. */
static int place_entry(struct unpack *u, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e), *hardlink = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);
	int r;

	if (!name)
		return fail(false, "an archive entry has no name");
	r = place(u, name, type == AE_IFDIR, &u->rel, &u->path);
	if (r != PLACED)
		return r;
	if (!u->path.len && type != AE_IFDIR)
		return fail(false, "archive entry '%.300s' would replace the tree itself", name);
	if (hardlink) {
		r = place(u, hardlink, false, &u->rel, &u->link);
		if (r == OUTSIDE_PREFIX)
			return fail(false, "archive entry '%.300s' is a hard link to '%.300s', "
				    "outside the prefix", name, hardlink);
		if (r != PLACED)
			return r;
		archive_entry_set_hardlink(e, u->link.buf);
	}
	archive_entry_set_pathname(e, u->path.len ? u->path.buf : ".");
	return PLACED;
}

/* One entry: placed, written, its data copied, finished.  0 or an exit status. */
static int unpack_entry(struct unpack *u, struct archive_entry *e)
{
	mode_t type = archive_entry_filetype(e);
	int r = place_entry(u, e);

	if (r > 0)
		return r;
	if (r == OUTSIDE_PREFIX)
		return archive_read_data_skip(u->in) == ARCHIVE_OK ? 0 :
		       fail(false, "corrupt or truncated archive: %s", archive_error_string(u->in));
	if ((type == AE_IFCHR || type == AE_IFBLK) && !u->privileged) {
		u->devices_skipped++;
		return archive_read_data_skip(u->in) == ARCHIVE_OK ? 0 :
		       fail(false, "corrupt or truncated archive: %s", archive_error_string(u->in));
	}
	if (type == AE_IFLNK)
		rootfs_resolver_forget(&u->rs);
	r = archive_write_header(u->out, e);
	if (r == ARCHIVE_WARN)
		warn(u, archive_entry_pathname(e), u->out);
	else if (r != ARCHIVE_OK)
		return write_failed(u->out, archive_entry_pathname(e));
	if (archive_entry_size(e) > 0 && (r = copy_data(u, e)))
		return r;
	r = archive_write_finish_entry(u->out);
	if (r == ARCHIVE_WARN && !lab_errno(archive_errno(u->out)))
		warn(u, archive_entry_pathname(e), u->out);
	else if (r != ARCHIVE_OK)
		return write_failed(u->out, archive_entry_pathname(e));
	u->entries++;
	return 0;
}

/* Read what is left of fd 3: the loop hashes the whole download. */
static void drain_input(void)
{
	char buf[HELPER_BLOCK];

	while (read(HELPER_IN_FD, buf, sizeof(buf)) > 0)
		;
}

static int unpack_entries(struct unpack *u)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(u->in, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		r = unpack_entry(u, e);
		if (r)
			return r;
	}
	if (r != ARCHIVE_EOF)
		return fail(false, "corrupt or truncated archive: %s",
			    archive_error_string(u->in) ?: "?");
	if (!u->entries && !u->devices_skipped)
		return fail(false, "the archive holds nothing%s%s%s", u->prefix.len ?
			    " below the prefix '" : "", u->prefix.buf, u->prefix.len ? "'" : "");
	if (archive_write_close(u->out) != ARCHIVE_OK)
		return write_failed(u->out, "the tree's directories");
	drain_input();
	printf("done %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", u->bytes, u->entries,
	       u->devices_skipped);
	return 0;
}

/* libarchive's two ends: any compression, tar formats; the disk with every guard on. */
static int open_archives(struct unpack *u)
{
	int flags = ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_ACL |
		    ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_UNLINK | ARCHIVE_EXTRACT_SPARSE |
		    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
		    ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;

	u->in = archive_read_new();
	u->out = archive_write_disk_new();
	if (!u->in || !u->out)
		return fail(true, "out of memory");
	if (u->privileged)
		flags |= ARCHIVE_EXTRACT_OWNER;
	/* no lookup functions: owners stay the archive's numbers, the board's accounts */
	archive_write_disk_set_options(u->out, flags);
	archive_read_support_filter_all(u->in);
	archive_read_support_format_tar(u->in);
	if (archive_read_open_fd(u->in, HELPER_IN_FD, HELPER_BLOCK) != ARCHIVE_OK)
		return fail(false, "corrupt or truncated archive: %s",
			    archive_error_string(u->in) ?: "?");
	return 0;
}

/* --into: resolved below the tree, made when missing (as an archive's directory is). */
static int make_into(struct unpack *u, const char *into)
{
	struct strbuf rel = STRBUF_INIT;
	char why[512] = "";
	int err = rootfs_normalize(into + strspn(into, "/"), &rel);

	for (size_t i = 0; !err && rel.len && i <= rel.len; i++) {
		if (rel.buf[i] != '/' && rel.buf[i])
			continue;
		rel.buf[i] = '\0';
		err = rootfs_resolve(&u->rs, rel.buf, true, &u->into, why, sizeof(why));
		if (!err && mkdir(u->into.buf, 0755) < 0 && errno != EEXIST)
			err = -errno;
		if (i < rel.len)
			rel.buf[i] = '/';
	}
	strbuf_release(&rel);
	if (err == -EXDEV || err == -ELOOP)
		return fail(false, "cannot unpack into '%.300s': %s", into, why);
	if (err < 0)
		return fail(lab_errno(-err), "cannot make '%.300s' in the tree: %s", into,
			    strerror(-err));
	return 0;
}

static void unpack_release(struct unpack *u)
{
	if (u->in)
		archive_read_free(u->in);
	if (u->out)
		archive_write_free(u->out);
	rootfs_resolver_close(&u->rs);
	strbuf_release(&u->prefix);
	strbuf_release(&u->into);
	strbuf_release(&u->rel);
	strbuf_release(&u->full);
	strbuf_release(&u->path);
	strbuf_release(&u->link);
}

/* unpack --tree DIR [--into SUBDIR] [--prefix PREFIX] */
static int unpack_main(int argc, char **argv)
{
	const char *tree = NULL, *into = NULL, *prefix = NULL;
	struct unpack u = { .privileged = rootfs_have_privileges() };
	int i, err, r;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tree"))
			tree = argv[i + 1];
		else if (!strcmp(argv[i], "--into"))
			into = argv[i + 1];
		else if (!strcmp(argv[i], "--prefix"))
			prefix = argv[i + 1];
		else
			break;
	}
	if (i != argc || !tree)
		return fail(true, "usage: rootfs-helper unpack --tree DIR [--into DIR] [--prefix DIR]") + 1;
	strbuf_init(&u.prefix);
	strbuf_init(&u.into);
	strbuf_init(&u.rel);
	strbuf_init(&u.full);
	strbuf_init(&u.path);
	strbuf_init(&u.link);
	umask(0);
	err = chdir(tree) < 0 ? -errno : rootfs_resolver_open(&u.rs, ".");
	if (err < 0)
		r = fail(true, "cannot open the tree '%.300s': %s", tree, strerror(-err));
	else if (prefix && rootfs_normalize(prefix, &u.prefix) < 0)
		r = fail(false, "the prefix '%.300s' must be a relative path without '..'", prefix);
	else
		r = (into ? make_into(&u, into) : 0) ?: open_archives(&u) ?: unpack_entries(&u);
	unpack_release(&u);
	fflush(stdout);
	return r;
}

/* ---- remove ---- */

static int remove_err;
static char remove_path[512];

/* Without root's rights a directory without write permission cannot be emptied. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (flag == FTW_D && (st->st_mode & 0700) != 0700)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (remove(path) < 0 && errno != ENOENT && !remove_err) {
		remove_err = errno;
		snprintf(remove_path, sizeof(remove_path), "%s", path);
	}
	return 0;
}

/* remove DIR: all of it, on its own file system only (nothing mounted in it is touched). */
static int remove_main(int argc, char **argv)
{
	struct stat st;

	if (argc != 2)
		return fail(true, "usage: rootfs-helper remove DIR") + 1;
	if (lstat(argv[1], &st) < 0)
		return errno == ENOENT ? 0 : fail(true, "cannot remove '%.300s': %s", argv[1],
						   strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(true, "cannot remove '%.300s': not a directory", argv[1]);
	if (!rootfs_have_privileges())
		nftw(argv[1], open_up, HELPER_NFTW_FDS, FTW_PHYS | FTW_MOUNT);
	if (nftw(argv[1], remove_one, HELPER_NFTW_FDS, FTW_PHYS | FTW_MOUNT | FTW_DEPTH) < 0 &&
	    !remove_err) {
		remove_err = errno;
		snprintf(remove_path, sizeof(remove_path), "%s", argv[1]);
	}
	if (remove_err)
		return fail(true, "cannot remove '%s': %s", remove_path, strerror(remove_err));
	return 0;
}

int rootfs_helper_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "unpack"))
		return unpack_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "remove"))
		return remove_main(argc - 1, argv + 1);
	fprintf(stderr, "usage: labd %s unpack|remove ...: labd's own helper, not for people\n",
		ROOTFS_HELPER_COMMAND);
	return 2;
}
