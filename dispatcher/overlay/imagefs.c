// SPDX-License-Identifier: GPL-2.0-or-later
/* imagefs.c -- an archive written into an ext2/3/4 image by libext2fs, in a child process */
#include "overlay/imagefs.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <archive.h>
#include <archive_entry.h>
#include <ext2fs/ext2fs.h>

#include "core/worker.h"

#define IMAGEFS_CHUNK 65536	/* bytes copied at once */
#define IMAGEFS_DEPTH 64	/* directories of one name; symbolic links followed at once */

extern char **environ;

struct imagefs_write {
	imagefs_fn fn;
	void *userdata;
	struct worker *worker;
	const char *image, *archive, *prefix;	/* for the child, during the start */
	int flags;
};

/* ---- the child ---- */

struct fsw {
	ext2_filsys fs;
	int out;
	uint64_t files, bytes;
	time_t mtime;		/* of the entry being written */
};

static int say_error(struct fsw *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int say_error(struct fsw *f, const char *fmt, ...)
{
	va_list ap;

	dprintf(f->out, "error ");
	va_start(ap, fmt);
	vdprintf(f->out, fmt, ap);
	va_end(ap);
	dprintf(f->out, "\n");
	return -EIO;
}

static int fs_error(struct fsw *f, const char *what, const char *name, errcode_t e)
{
	return say_error(f, "%s '%s' in the image: %s", what, name, error_message(e));
}

/* Link @ino as @name in @dir, growing the directory when it is full. */
static errcode_t link_in(ext2_filsys fs, ext2_ino_t dir, const char *name, ext2_ino_t ino,
			 int type)
{
	errcode_t e = ext2fs_link(fs, dir, name, ino, type);

	if (e == EXT2_ET_DIR_NO_SPACE && !(e = ext2fs_expand_dir(fs, dir)))
		e = ext2fs_link(fs, dir, name, ino, type);
	return e;
}

/* @ino, or what it links to when it is a symbolic link (relative to @dir); its inode. */
static errcode_t resolve(ext2_filsys fs, ext2_ino_t dir, ext2_ino_t *ino,
			 struct ext2_inode *inode)
{
	errcode_t e = ext2fs_read_inode(fs, *ino, inode);

	if (!e && LINUX_S_ISLNK(inode->i_mode) &&
	    !(e = ext2fs_follow_link(fs, EXT2_ROOT_INO, dir, *ino, ino)))
		e = ext2fs_read_inode(fs, *ino, inode);
	return e;
}

/* A new directory @name in @dir, mode @mode, owned by root. */
static errcode_t make_dir(struct fsw *f, ext2_ino_t dir, const char *name, mode_t mode,
			  ext2_ino_t *ret)
{
	struct ext2_inode inode;
	errcode_t e = ext2fs_mkdir(f->fs, dir, 0, name);

	if (e == EXT2_ET_DIR_NO_SPACE && !(e = ext2fs_expand_dir(f->fs, dir)))
		e = ext2fs_mkdir(f->fs, dir, 0, name);
	if (!e)
		e = ext2fs_lookup(f->fs, dir, name, (int)strlen(name), NULL, ret);
	if (!e)
		e = ext2fs_read_inode(f->fs, *ret, &inode);
	if (e)
		return e;
	inode.i_mode = LINUX_S_IFDIR | (mode & 07777);
	inode.i_uid = inode.i_gid = 0;
	return ext2fs_write_inode(f->fs, *ret, &inode);
}

/* The directory @name of @dir, made when missing, a link to one followed. */
static int enter(struct fsw *f, ext2_ino_t *dir, const char *name, mode_t mode)
{
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t e = ext2fs_lookup(f->fs, *dir, name, (int)strlen(name), NULL, &ino);

	if (e == EXT2_ET_FILE_NOT_FOUND) {
		e = make_dir(f, *dir, name, mode, &ino);
		if (e)
			return fs_error(f, "cannot make directory", name, e);
		*dir = ino;
		return 0;
	}
	if (!e)
		e = resolve(f->fs, *dir, &ino, &inode);
	if (e)
		return fs_error(f, "cannot open", name, e);
	if (!LINUX_S_ISDIR(inode.i_mode))
		return say_error(f, "'%s' is not a directory in the image", name);
	*dir = ino;
	return 0;
}

/* Remove the file or link @name (inode @ino) of @dir; a directory is an error. */
static int remove_entry(struct fsw *f, ext2_ino_t dir, const char *name, ext2_ino_t ino)
{
	struct ext2_inode inode;
	errcode_t e = ext2fs_read_inode(f->fs, ino, &inode);

	if (!e && LINUX_S_ISDIR(inode.i_mode))
		return say_error(f, "'%s' is a directory in the image: not replaced by a file", name);
	if (!e)
		e = ext2fs_unlink(f->fs, dir, name, ino, 0);
	if (e)
		return fs_error(f, "cannot replace", name, e);
	if (inode.i_links_count)
		inode.i_links_count--;
	if (!inode.i_links_count) {
		if (ext2fs_inode_has_valid_blocks2(f->fs, &inode) &&
		    (e = ext2fs_punch(f->fs, ino, &inode, NULL, 0, ~0ULL)))
			return fs_error(f, "cannot free the blocks of", name, e);
		inode.i_dtime = (__u32)time(NULL);
		ext2fs_inode_alloc_stats2(f->fs, ino, -1, 0);
	}
	e = ext2fs_write_inode(f->fs, ino, &inode);
	return e ? fs_error(f, "cannot replace", name, e) : 0;
}

/* A new empty regular file @name of @dir, linked, owned by root. */
static errcode_t new_file(struct fsw *f, ext2_ino_t dir, const char *name, mode_t mode,
			  ext2_ino_t *ret)
{
	struct ext2_inode inode;
	ext2_extent_handle_t h;
	errcode_t e = ext2fs_new_inode(f->fs, dir, LINUX_S_IFREG | 0644, NULL, ret);

	if (!e)
		e = link_in(f->fs, dir, name, *ret, EXT2_FT_REG_FILE);
	if (e)
		return e;
	ext2fs_inode_alloc_stats2(f->fs, *ret, +1, 0);
	memset(&inode, 0, sizeof(inode));
	inode.i_mode = LINUX_S_IFREG | (mode & 07777);
	inode.i_links_count = 1;
	inode.i_atime = inode.i_ctime = inode.i_mtime = (__u32)f->mtime;
	if (ext2fs_has_feature_extents(f->fs->super)) {
		e = ext2fs_extent_open2(f->fs, *ret, &inode, &h);	/* sets its header */
		if (e)
			return e;
		ext2fs_extent_free(h);
	}
	return ext2fs_write_new_inode(f->fs, *ret, &inode);
}

/* The data of the current entry of @a into file @ino. */
static int copy_data(struct fsw *f, struct archive *a, ext2_ino_t ino, const char *name)
{
	static char buf[IMAGEFS_CHUNK];
	ext2_file_t file;
	unsigned int done;
	la_ssize_t n;
	errcode_t e = ext2fs_file_open(f->fs, ino, EXT2_FILE_WRITE, &file);

	if (e)
		return fs_error(f, "cannot open", name, e);
	while (!e && (n = archive_read_data(a, buf, sizeof(buf))) > 0) {
		for (la_ssize_t at = 0; !e && at < n; at += done)
			e = ext2fs_file_write(file, buf + at, (unsigned int)(n - at), &done);
		f->bytes += (uint64_t)n;
	}
	if (!e && n < 0) {
		ext2fs_file_close(file);
		return say_error(f, "cannot read '%s' from the archive: %s", name,
				 archive_error_string(a));
	}
	if (!e)
		e = ext2fs_file_close(file);
	else
		ext2fs_file_close(file);
	return e ? fs_error(f, "cannot write", name, e) : 0;
}

/* One entry, @name in directory @dir (both resolved). */
static int put_leaf(struct fsw *f, struct archive *a, struct archive_entry *ent, ext2_ino_t dir,
		    const char *name)
{
	mode_t type = archive_entry_filetype(ent), mode = archive_entry_perm(ent);
	ext2_ino_t ino;
	errcode_t e;

	if (type == AE_IFDIR)
		return enter(f, &dir, name, mode);
	e = ext2fs_lookup(f->fs, dir, name, (int)strlen(name), NULL, &ino);
	if (!e && remove_entry(f, dir, name, ino) < 0)
		return -EIO;
	f->files++;
	if (type == AE_IFLNK) {
		e = ext2fs_symlink(f->fs, dir, 0, name, archive_entry_symlink(ent));
		if (e == EXT2_ET_DIR_NO_SPACE && !(e = ext2fs_expand_dir(f->fs, dir)))
			e = ext2fs_symlink(f->fs, dir, 0, name, archive_entry_symlink(ent));
		return e ? fs_error(f, "cannot make link", name, e) : 0;
	}
	e = new_file(f, dir, name, mode, &ino);
	if (e)
		return fs_error(f, "cannot make file", name, e);
	return copy_data(f, a, ino, name);
}

/* Whether the entry is one this writer takes: a name without "..", a plain type. */
static int check_entry(struct fsw *f, struct archive_entry *ent, const char *path)
{
	mode_t type = archive_entry_filetype(ent);

	if (!strcmp(path, "..") || !strncmp(path, "../", 3) || strstr(path, "/../") ||
	    (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
		return say_error(f, "'%s': names with '..' are refused", path);
	if (archive_entry_hardlink(ent))
		return say_error(f, "'%s': hard links are refused", path);
	if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return say_error(f, "'%s': only files, directories and symbolic links are taken",
				 path);
	return 0;
}

/* An archive entry at @prefix/<its name>. */
static int put_entry(struct fsw *f, struct archive *a, struct archive_entry *ent,
		     const char *prefix)
{
	const char *name = archive_entry_pathname(ent);
	char path[PATH_MAX], *comp, *next;
	ext2_ino_t dir = EXT2_ROOT_INO;
	int depth = 0;

	while (name && (*name == '/' || !strncmp(name, "./", 2)))
		name += *name == '/' ? 1 : 2;
	if (!name || !*name || !strcmp(name, "."))
		return 0;	/* the root itself */
	if (check_entry(f, ent, name) < 0)
		return -EIO;
	if (snprintf(path, sizeof(path), "%s/%s", prefix, name) >= (int)sizeof(path))
		return say_error(f, "'%s': name too long", name);
	f->mtime = archive_entry_mtime(ent);
	for (comp = path; *comp == '/'; comp++)
		;
	while ((next = strchr(comp, '/'))) {
		*next++ = '\0';
		while (*next == '/')
			next++;
		if (!*next)
			break;	/* "dir/": the directory itself */
		if (*comp && strcmp(comp, ".") && (++depth > IMAGEFS_DEPTH ||
						   enter(f, &dir, comp, 0755) < 0))
			return depth > IMAGEFS_DEPTH ? say_error(f, "'%s': too deep", name) : -EIO;
		comp = next;
	}
	return put_leaf(f, a, ent, dir, comp);
}

/* Replace @image by a copy of itself (it shares its data with a cache entry). */
static int copy_image(struct fsw *f, const char *image)
{
	char tmp[PATH_MAX];
	char *argv[] = { "cp", "--sparse=always", "--", (char *)image, tmp, NULL };
	int status = -1;
	pid_t pid;

	snprintf(tmp, sizeof(tmp), "%s.copy", image);
	if (posix_spawnp(&pid, "cp", NULL, NULL, argv, environ) ||
	    waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		unlink(tmp);
		return say_error(f, "cannot copy '%s' before writing it (cp failed)", image);
	}
	if (rename(tmp, image) < 0)
		return say_error(f, "cannot replace '%s' by its copy: %s", image, strerror(errno));
	return 0;
}

/* Every entry of the archive into the open image. */
static int put_archive(struct fsw *f, const char *archive, const char *prefix)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ent;
	int r = 0, ar;

	if (!a)
		return say_error(f, "out of memory");
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	if (archive_read_open_filename(a, archive, IMAGEFS_CHUNK) != ARCHIVE_OK) {
		r = say_error(f, "cannot read '%s': %s", archive, archive_error_string(a));
		archive_read_free(a);
		return r;
	}
	while (!r && (ar = archive_read_next_header(a, &ent)) == ARCHIVE_OK)
		r = put_entry(f, a, ent, prefix);
	if (!r && ar != ARCHIVE_EOF)
		r = say_error(f, "cannot read '%s': %s", archive, archive_error_string(a));
	archive_read_free(a);
	return r;
}

static int child_main(int out, void *arg)
{
	const struct imagefs_write *w = arg;
	struct fsw f = { .out = out };
	errcode_t e;
	int r;

	if ((w->flags & IMAGEFS_COPY) && copy_image(&f, w->image) < 0)
		return 1;
	e = ext2fs_open(w->image, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &f.fs);
	if (e) {
		say_error(&f, "'%s' is not an ext2/3/4 file system image: %s", w->image,
			  error_message(e));
		return 1;
	}
	if (ext2fs_has_feature_journal_needs_recovery(f.fs->super)) {
		say_error(&f, "the journal of '%s' needs recovery: it was not unmounted cleanly",
			  w->image);
		ext2fs_close_free(&f.fs);
		return 1;
	}
	e = ext2fs_read_bitmaps(f.fs);
	r = e ? fs_error(&f, "cannot read the bitmaps of", w->image, e) :
		put_archive(&f, w->archive, w->prefix);
	e = ext2fs_close_free(&f.fs);	/* writes the bitmaps and the superblock */
	if (!r && e)
		r = fs_error(&f, "cannot write", w->image, e);
	if (r)
		return 1;
	dprintf(out, "ok %llu %llu\n", (unsigned long long)f.files, (unsigned long long)f.bytes);
	return 0;
}

/* ---- the parent, in the loop ---- */

static void on_done(struct worker *wk, int status, const char *last, void *userdata)
{
	struct imagefs_write *w = userdata;
	unsigned long long files = 0, bytes = 0;

	if (status == 0 && sscanf(last, "ok %llu %llu", &files, &bytes) == 2)
		w->fn(w, 0, NULL, files, bytes, w->userdata);
	else if (!strncmp(last, "error ", 6))
		w->fn(w, -EIO, last + 6, 0, 0, w->userdata);
	else
		w->fn(w, -EIO, "the image writer died", 0, 0, w->userdata);
}

static const struct worker_ops imagefs_ops = { .done = on_done };

int imagefs_write_start(struct loop *l, const char *image, const char *archive,
			const char *prefix, int flags, imagefs_fn fn, void *userdata,
			struct imagefs_write **ret)
{
	struct imagefs_write *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->userdata = userdata;
	w->image = image;
	w->archive = archive;
	w->prefix = prefix && strcmp(prefix, "/") ? prefix : "";
	w->flags = flags;
	r = worker_start(l, child_main, w, &imagefs_ops, w, &w->worker);
	w->image = w->archive = w->prefix = NULL;
	if (r < 0) {
		free(w);
		return r;
	}
	*ret = w;
	return 0;
}

struct imagefs_write *imagefs_write_free(struct imagefs_write *w)
{
	if (!w)
		return NULL;
	worker_free(w->worker);
	free(w);
	return NULL;
}
