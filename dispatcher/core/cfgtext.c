// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cfgtext.c -- the files libconfig would read for one config file, checked first
 *
 * libconfig 1.5's scanner exits the process ("input in flex scanner failed",
 * exit 2) when a file it opened for an @include cannot be read: a directory,
 * which a NUL byte in the directive makes of any name (the name ends at the
 * NUL: `@include "<NUL>x"` names the include directory itself).  labd
 * check-config died so, a SIGHUP reload would have taken the running labd
 * with it, and labctl died so on its own config file.  libconfig 1.5 has no
 * include hook (config_set_include_func() came with 1.7), so the file and
 * every file its @include lines name, at any depth, are checked before
 * libconfig reads any: a file with a NUL byte, an @include of a directory or
 * of anything but a regular file (a FIFO would block the loop) is refused
 * with "FILE:LINE: cause".
 *
 * An @include is found as libconfig's scanner finds one: `@include` at the
 * start of a line after blanks, blanks, then a quoted name in which `\\` and
 * `\"` stand for `\` and `"` and any other backslash is dropped; the name is
 * relative to the include directory (labd.conf's, the board file's, labctl's
 * config file's), also in an included file and also when it starts with '/'.
 * Lines inside a comment or a string are taken too: that checks a file
 * libconfig may not read, never misses one it reads.  A name not closed in
 * its file is refused: in an included file libconfig would go on with the
 * text that follows the including @include, and open a name made of both.
 * A file that cannot be opened is left to libconfig, which says so (labd:
 * config_report_read_error()).  Each file (inode) is read once: an include
 * cycle ends, libconfig refuses it as too deep.  Messages name an included
 * file by its real path, worked out only for a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfgtext.h"
#include "core/diag.h"
#include "core/strbuf.h"

/* A file found, known by its inode: a file named two ways is read once. */
struct text_file {
	char *path;
	dev_t dev;
	ino_t ino;
};

struct text_walk {
	const char *dir;	/* the include directory */
	struct text_file *files;	/* the files found, checked in this order */
	size_t n_files;
	size_t cur;		/* the one being checked; 0 is the top one */
	struct diag *diag;
	int err;		/* -EINVAL once something was reported */
};

/* A text being scanned for @include lines. */
struct text_cursor {
	const char *p;
	const char *end;
	int line;
};

/* The whole of @path into @sb: 0 or -errno. */
static int read_all(const char *path, struct strbuf *sb)
{
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0 && !err)
		err = strbuf_add(sb, buf, (size_t)n);
	if (n < 0 && !err)
		err = -errno;
	close(fd);
	return err;
}

/* The line of the first NUL byte of @text, 0 when it has none. */
static int nul_line(const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	int line = 1;

	if (!nul)
		return 0;
	for (; text < nul; text++)
		line += *text == '\n';
	return line;
}

/* Skip the blanks at @c; whether there was one. */
static bool skip_blanks(struct text_cursor *c)
{
	const char *p = c->p;

	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
	return c->p > p;
}

enum include_line {
	NO_INCLUDE,
	INCLUDE,		/* its name is complete */
	INCLUDE_OPEN,		/* its name runs to the end of the file */
};

/*
 * At a line's start: whether it is an @include, its name into @name and @c
 * past the closing quote (else @c somewhere on the line, or at the end).
 */
static enum include_line include_at(struct text_cursor *c, struct strbuf *name, int *err)
{
	static const char directive[] = "@include";
	size_t n = sizeof(directive) - 1;

	skip_blanks(c);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, directive, n))
		return NO_INCLUDE;
	c->p += n;
	if (!skip_blanks(c) || c->p == c->end || *c->p != '"')
		return NO_INCLUDE;
	c->p++;
	strbuf_reset(name);
	for (; c->p < c->end && *c->p != '"'; c->p++) {
		if (*c->p == '\\' && ++c->p == c->end)
			break;
		c->line += *c->p == '\n';
		if (!*err)
			*err = strbuf_addch(name, *c->p);
	}
	return c->p++ < c->end ? INCLUDE : INCLUDE_OPEN;
}

/* Queue @path (taken) unless it was found already. */
static int add_file(struct text_walk *w, char *path, const struct stat *st)
{
	struct text_file *files;
	size_t i;

	for (i = 0; i < w->n_files; i++) {
		if (w->files[i].dev == st->st_dev && w->files[i].ino == st->st_ino) {
			free(path);
			return 0;
		}
	}
	files = realloc(w->files, (w->n_files + 1) * sizeof(*files));
	if (!files) {
		free(path);
		return -ENOMEM;
	}
	files[w->n_files++] = (struct text_file){ path, st->st_dev, st->st_ino };
	w->files = files;
	return 0;
}

/*
 * Report "FILE:LINE: cause" about the file being checked: an included one
 * by its real path (libconfig's name for it is the include directory's).
 */
static int report(struct text_walk *w, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int report(struct text_walk *w, int line, const char *fmt, ...)
{
	const char *path = w->files[w->cur].path;
	char *real = w->cur ? realpath(path, NULL) : NULL;
	va_list ap;

	va_start(ap, fmt);
	w->err = diag_addv(w->diag, real ? real : path, line, fmt, ap);
	va_end(ap);
	free(real);
	return w->err;
}

/* The include @name at @line: refused, or queued when not found yet. */
static int check_include(struct text_walk *w, int line, const char *name)
{
	char *joined = NULL, *real;
	struct stat st;
	int err;

	if (asprintf(&joined, "%s/%s", w->dir, name) < 0)
		return -ENOMEM;
	if (stat(joined, &st) < 0) {
		free(joined);
		return 0;	/* libconfig cannot open it, and says so */
	}
	if (S_ISREG(st.st_mode))
		return add_file(w, joined, &st);
	real = realpath(joined, NULL);
	err = report(w, line, "cannot include '%s': %s", real ? real : joined,
		     S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	free(real);
	free(joined);
	return err == -EINVAL ? 0 : err;
}

/* Check the file w->cur and queue what it includes. */
static int check_file(struct text_walk *w)
{
	struct strbuf text = STRBUF_INIT, name = STRBUF_INIT;
	struct text_cursor c;
	enum include_line kind;
	int err = read_all(w->files[w->cur].path, &text), line;

	if (err < 0)
		goto out;	/* libconfig cannot read it, and says so */
	line = nul_line(text.buf, text.len);
	if (line) {
		err = report(w, line, "a NUL byte: not a text file");
		goto out;
	}
	c = (struct text_cursor){ text.buf, text.buf + text.len, 1 };
	while (c.p < c.end && !err) {
		line = c.line;
		kind = include_at(&c, &name, &err);
		if (kind == INCLUDE && !err)
			err = check_include(w, line, name.buf);
		else if (kind == INCLUDE_OPEN && !err)
			err = report(w, line, "the name of this @include is never closed");
		while (c.p < c.end && *c.p++ != '\n')
			;
		c.line++;
	}
out:
	strbuf_release(&text);
	strbuf_release(&name);
	return err == -ENOMEM ? err : 0;
}

int cfg_check_text(const char *path, const char *include_dir, struct diag *diag)
{
	struct text_walk w = { .dir = include_dir, .diag = diag };
	char *top = strdup(path);
	struct stat st;
	size_t i;
	int err;

	if (!top)
		return -ENOMEM;
	if (stat(path, &st) < 0)
		st = (struct stat){ 0 };	/* libconfig cannot read it, and says so */
	err = add_file(&w, top, &st);
	for (w.cur = 0; !err && w.cur < w.n_files; w.cur++)
		err = check_file(&w);
	for (i = 0; i < w.n_files; i++)
		free(w.files[i].path);
	free(w.files);
	return err < 0 ? err : w.err;
}
