// SPDX-License-Identifier: GPL-2.0-or-later
/* overlay.c -- the test overlay archive, written with libarchive as entries come */
#include "overlay/overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>

#include "core/strbuf.h"

struct overlay {
	struct archive *a;
	char *path;
	int fd;
	json_t *dirs;		/* directories added: a set of paths */
	time_t mtime;
	uint64_t bytes;
	int err;
	struct strbuf error;
};

struct overlay_import {
	struct overlay *o;
	struct archive *in;
	char *path;
	char *prefix;
	bool in_data;		/* copying the current entry's data */
	char *capture_name;
	size_t capture_max;
	struct strbuf *capture;
	bool capturing;
	bool captured;
	char buf[OVERLAY_IMPORT_CHUNK];
};

static int fail(struct overlay *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct overlay *o, int err, const char *fmt, ...)
{
	va_list ap;

	if (o->err)
		return o->err;
	o->err = err;
	va_start(ap, fmt);
	strbuf_vaddf(&o->error, fmt, ap);
	va_end(ap);
	return err;
}

/* libarchive's failure of @a as an error of @o. */
static int fail_archive(struct overlay *o, struct archive *a, const char *what)
{
	int e = archive_errno(a);

	return fail(o, e > 0 ? -e : -EIO, "cannot %s '%s': %s", what, o->path,
		    archive_error_string(a) ? archive_error_string(a) : "libarchive error");
}

const char *overlay_error(const struct overlay *o)
{
	return o->error.buf;
}

uint64_t overlay_bytes(const struct overlay *o)
{
	return o->bytes;
}

static void overlay_free(struct overlay *o)
{
	if (o->a)
		archive_write_free(o->a);
	if (o->fd >= 0)
		close(o->fd);
	json_decref(o->dirs);
	strbuf_release(&o->error);
	free(o->path);
	free(o);
}

static int setup_writer(struct overlay *o, enum overlay_format fmt)
{
	char opt[64];
	int r;

	o->a = archive_write_new();
	if (!o->a)
		return -ENOMEM;
	r = fmt == OVERLAY_CPIO_GZ ? archive_write_set_format_cpio_newc(o->a) :
				     archive_write_set_format_pax_restricted(o->a);
	if (r == ARCHIVE_OK)
		r = archive_write_add_filter_gzip(o->a);
	snprintf(opt, sizeof(opt), "gzip:compression-level=%d,gzip:!timestamp", OVERLAY_GZIP_LEVEL);
	if (r == ARCHIVE_OK)
		r = archive_write_set_options(o->a, opt);
	if (r == ARCHIVE_OK)
		r = archive_write_set_bytes_in_last_block(o->a, 1);
	if (r == ARCHIVE_OK)
		r = archive_write_open_fd(o->a, o->fd);
	return r == ARCHIVE_OK ? 0 : fail_archive(o, o->a, "write");
}

int overlay_open(const char *path, enum overlay_format fmt, struct overlay **ret)
{
	struct overlay *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return -ENOMEM;
	strbuf_init(&o->error);
	o->fd = -1;
	o->mtime = time(NULL);
	o->path = strdup(path);
	o->dirs = json_object();
	if (!o->path || !o->dirs) {
		overlay_free(o);
		return -ENOMEM;
	}
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		err = -errno;
		overlay_free(o);
		return err;
	}
	err = setup_writer(o, fmt);
	if (err < 0) {
		unlink(path);
		overlay_free(o);
		return err;
	}
	*ret = o;
	return 0;
}

/* Write an entry's header; @size of data follows for regular files. */
static int write_header(struct overlay *o, const char *path, mode_t type, mode_t perm,
			int64_t size, const char *target)
{
	struct archive_entry *e;
	int r;

	if (o->err)
		return o->err;
	e = archive_entry_new();
	if (!e)
		return fail(o, -ENOMEM, "out of memory");
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm & 07777);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, o->mtime, 0);
	archive_entry_set_nlink(e, type == AE_IFDIR ? 2 : 1);
	archive_entry_set_size(e, type == AE_IFREG ? size : 0);	/* cpio wants one */
	if (target)
		archive_entry_set_symlink(e, target);
	r = archive_write_header(o->a, e);
	archive_entry_free(e);
	return r == ARCHIVE_OK || r == ARCHIVE_WARN ? 0 : fail_archive(o, o->a, "write");
}

/* The parents of @path ("a/b/c": a, a/b), added once. */
static int add_parents(struct overlay *o, const char *path)
{
	char *copy = strdup(path), *slash;
	int err = 0;

	if (!copy)
		return fail(o, -ENOMEM, "out of memory");
	for (slash = strchr(copy, '/'); slash && !err; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (*copy && !json_object_get(o->dirs, copy)) {
			err = write_header(o, copy, AE_IFDIR, 0755, 0, NULL);
			if (!err && json_object_set_new(o->dirs, copy, json_true()) < 0)
				err = fail(o, -ENOMEM, "out of memory");
		}
		*slash = '/';
	}
	free(copy);
	return err;
}

int overlay_add_dir(struct overlay *o, const char *path, mode_t mode)
{
	size_t len = strlen(path);
	char *copy;
	int err;

	while (len && path[len - 1] == '/')
		len--;
	copy = strndup(path, len);
	if (!copy)
		return fail(o, -ENOMEM, "out of memory");
	err = *copy && !json_object_get(o->dirs, copy) ? add_parents(o, copy) : 0;
	if (!err && *copy && !json_object_get(o->dirs, copy)) {
		err = write_header(o, copy, AE_IFDIR, mode, 0, NULL);
		if (!err && json_object_set_new(o->dirs, copy, json_true()) < 0)
			err = fail(o, -ENOMEM, "out of memory");
	}
	free(copy);
	return err;
}

/* Data of the entry whose header was just written. */
static int write_data(struct overlay *o, const void *data, size_t len)
{
	la_ssize_t n;

	if (o->err)
		return o->err;
	if (!len)
		return 0;
	n = archive_write_data(o->a, data, len);
	if (n < 0 || (size_t)n != len)
		return fail_archive(o, o->a, "write");
	o->bytes += len;
	return 0;
}

int overlay_add_file(struct overlay *o, const char *path, mode_t mode, const void *data,
		     size_t len)
{
	int err = add_parents(o, path);

	if (!err)
		err = write_header(o, path, AE_IFREG, mode, (int64_t)len, NULL);
	return err ? err : write_data(o, data, len);
}

int overlay_add_symlink(struct overlay *o, const char *path, const char *target)
{
	int err = add_parents(o, path);

	return err ? err : write_header(o, path, AE_IFLNK, 0777, 0, target);
}

int overlay_close(struct overlay *o)
{
	int err = o->err;

	if (!err && archive_write_close(o->a) != ARCHIVE_OK)
		err = fail_archive(o, o->a, "finish");
	if (!err && fsync(o->fd) < 0)
		err = -errno;
	if (err)
		unlink(o->path);
	overlay_free(o);
	return err;
}

void overlay_abort(struct overlay *o)
{
	if (!o)
		return;
	unlink(o->path);
	overlay_free(o);
}

/* ---- importing another archive ---- */

int overlay_import_open(struct overlay *o, const char *path, const char *prefix,
			struct overlay_import **ret)
{
	struct overlay_import *imp = calloc(1, sizeof(*imp));

	if (!imp)
		return fail(o, -ENOMEM, "out of memory");
	imp->o = o;
	imp->path = strdup(path);
	imp->prefix = strdup(prefix);
	imp->in = archive_read_new();
	if (!imp->path || !imp->prefix || !imp->in) {
		overlay_import_free(imp);
		return fail(o, -ENOMEM, "out of memory");
	}
	archive_read_support_filter_all(imp->in);
	archive_read_support_format_tar(imp->in);
	archive_read_support_format_cpio(imp->in);
	if (archive_read_open_filename(imp->in, path, OVERLAY_IMPORT_CHUNK) != ARCHIVE_OK) {
		int e = archive_errno(imp->in);

		fail(o, e > 0 ? -e : -EIO, "cannot read '%s': %s", path,
		     archive_error_string(imp->in));
		overlay_import_free(imp);
		return o->err;
	}
	*ret = imp;
	return 0;
}

void overlay_import_capture(struct overlay_import *imp, const char *name, size_t max,
			    struct strbuf *out)
{
	free(imp->capture_name);
	imp->capture_name = strdup(name);
	imp->capture_max = max;
	imp->capture = out;
}

bool overlay_import_captured(const struct overlay_import *imp)
{
	return imp->captured;
}

struct overlay_import *overlay_import_free(struct overlay_import *imp)
{
	if (!imp)
		return NULL;
	if (imp->in)
		archive_read_free(imp->in);
	free(imp->path);
	free(imp->prefix);
	free(imp->capture_name);
	free(imp);
	return NULL;
}

static int fail_read(struct overlay_import *imp)
{
	int e = archive_errno(imp->in);

	return fail(imp->o, e > 0 ? -e : -EIO, "cannot read '%s': %s", imp->path,
		    archive_error_string(imp->in) ? archive_error_string(imp->in) : "libarchive error");
}

/* @name without "./" and leading '/'; NULL if it climbs out with "..". */
static const char *clean_name(const char *name)
{
	const char *p;

	while (!strncmp(name, "./", 2) || *name == '/')
		name += *name == '/' ? 1 : 2;
	for (p = name; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
		if (!strncmp(p, "..", 2) && (p[2] == '/' || !p[2]))
			return NULL;
	return name;
}

/* The header of the next entry, copied; sets imp->in_data for file data. */
static int import_header(struct overlay_import *imp, struct archive_entry *e)
{
	struct overlay *o = imp->o;
	const char *name = clean_name(archive_entry_pathname(e));
	mode_t type = archive_entry_filetype(e);
	struct strbuf path = STRBUF_INIT;
	int err = 0;

	if (!name)
		return fail(o, -EINVAL, "'%s' of '%s' leaves its directory", archive_entry_pathname(e),
			    imp->path);
	if (archive_entry_hardlink(e))
		return fail(o, -EINVAL, "'%s' of '%s' is a hard link: not supported", name, imp->path);
	strbuf_addf(&path, "%s%s", imp->prefix, name);
	if (type == AE_IFDIR)
		err = overlay_add_dir(o, path.buf, archive_entry_perm(e));
	else if (type == AE_IFLNK)
		err = overlay_add_symlink(o, path.buf, archive_entry_symlink(e));
	else if (type == AE_IFREG) {
		err = add_parents(o, path.buf);
		if (!err)
			err = write_header(o, path.buf, AE_IFREG, archive_entry_perm(e),
					   archive_entry_size(e), NULL);
		imp->in_data = !err;
		imp->capturing = imp->capture_name && !strcmp(name, imp->capture_name);
	} else if (*name)
		err = fail(o, -EINVAL, "'%s' of '%s' is not a file, directory or symbolic link",
			   name, imp->path);
	strbuf_release(&path);
	return err;
}

/* Up to one chunk of the current entry's data; 0 at its end. */
static ssize_t import_data(struct overlay_import *imp)
{
	la_ssize_t n = archive_read_data(imp->in, imp->buf, sizeof(imp->buf));
	int err;

	if (n < 0)
		return fail_read(imp);
	if (!n) {
		imp->in_data = false;
		imp->captured = imp->captured || imp->capturing;
		imp->capturing = false;
		return 0;
	}
	if (imp->capturing) {
		if (imp->capture->len + (size_t)n > imp->capture_max)
			return fail(imp->o, -E2BIG, "'%s' of '%s' is larger than %zu bytes",
				    imp->capture_name, imp->path, imp->capture_max);
		strbuf_add(imp->capture, imp->buf, (size_t)n);
	}
	err = write_data(imp->o, imp->buf, (size_t)n);
	return err ? err : n;
}

int overlay_import_step(struct overlay_import *imp, size_t budget)
{
	struct archive_entry *e;
	ssize_t n;
	int r;

	while (budget) {
		if (imp->o->err)
			return imp->o->err;
		if (imp->in_data) {
			n = import_data(imp);
			if (n < 0)
				return (int)n;
			budget -= (size_t)n < budget ? (size_t)n : budget;
			continue;
		}
		r = archive_read_next_header(imp->in, &e);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return fail_read(imp);
		r = import_header(imp, e);
		if (r < 0)
			return r;
		budget -= OVERLAY_ENTRY_COST < budget ? OVERLAY_ENTRY_COST : budget;
	}
	return 1;
}
