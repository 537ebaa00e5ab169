// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config_error.c -- a libconfig read error told with its file's full path and its cause
 *
 * libconfig says "syntax error" or "cannot open include file", and names an
 * included file the way the @include line spelt it.  This reads the file
 * around the reported line to say which include could not be opened (its
 * resolved path and why), or what is wrong in the syntax: a bracket or a
 * string never closed, a bracket closing the wrong one, a missing value; at
 * least the text of the line.  It only reads brackets, quotes and comments:
 * libconfig parses the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_priv.h"
#include "core/diag.h"
#include "core/strbuf.h"

#define MAX_DEPTH 64		/* brackets followed; deeper ones are not told apart */
#define MAX_SHOWN 80		/* bytes of a line quoted in a message */
#define MAX_TEXT (4 << 20)	/* bytes of a file read to find the cause */

/* @file as an absolute, normalized path when it exists (else joined to @dir); caller frees. */
static char *resolve(const char *file, const char *dir)
{
	char *joined = NULL, *real;

	if (file[0] != '/' && asprintf(&joined, "%s/%s", dir, file) < 0)
		return NULL;
	real = realpath(joined ? joined : file, NULL);
	if (real) {
		free(joined);
		return real;
	}
	return joined ? joined : strdup(file);
}

/* The whole text of @path (NUL-terminated), or NULL. */
static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0 && sb.len < MAX_TEXT)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	return strbuf_detach(&sb, NULL);
}

/* Line @line (1-based) of @text, without its end; *@len its length; NULL past the end. */
static const char *line_at(const char *text, int line, size_t *len)
{
	const char *p = text;

	for (; line > 1 && p; line--) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return NULL;
	*len = strcspn(p, "\n");
	while (*len && (p[*len - 1] == '\r' || p[*len - 1] == ' ' || p[*len - 1] == '\t'))
		(*len)--;
	while (*len && (*p == ' ' || *p == '\t')) {
		p++;
		(*len)--;
	}
	return p;
}

/* The name an `@include "NAME"` line includes, into @out. */
static bool include_name(const char *line, size_t len, char *out, size_t size)
{
	const char *q = memchr(line, '"', len), *e;

	if (len < 8 || strncmp(line, "@include", 8) || !q)
		return false;
	e = memchr(q + 1, '"', len - (size_t)(q + 1 - line));
	if (!e || (size_t)(e - q - 1) >= size)
		return false;
	memcpy(out, q + 1, (size_t)(e - q - 1));
	out[e - q - 1] = '\0';
	return true;
}

struct scan {
	char open[MAX_DEPTH];	/* brackets still open */
	int open_line[MAX_DEPTH];
	int depth;
	int line;
	int string_line;	/* a string opened there is still open at the end, or 0 */
	char cause[256];	/* the first bracket mistake */
};

static char closer_of(char c)
{
	return c == '{' ? '}' : c == '[' ? ']' : ')';
}

static void scan_bracket(struct scan *s, char c)
{
	if (strchr("{[(", c)) {
		if (s->depth < MAX_DEPTH) {
			s->open[s->depth] = c;
			s->open_line[s->depth] = s->line;
		}
		s->depth++;
		return;
	}
	if (s->cause[0])
		return;
	if (!s->depth)
		snprintf(s->cause, sizeof(s->cause), "'%c' at line %d closes nothing", c, s->line);
	else if (s->depth <= MAX_DEPTH && closer_of(s->open[s->depth - 1]) != c)
		snprintf(s->cause, sizeof(s->cause), "'%c' at line %d does not close the '%c' of line %d",
			 c, s->line, s->open[s->depth - 1], s->open_line[s->depth - 1]);
	if (s->depth)
		s->depth--;
}

/* Follow brackets and strings through @text, skipping comments. */
static void scan_text(struct scan *s, const char *p)
{
	for (s->line = 1; *p; p++) {
		if (*p == '\n') {
			s->line++;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			p += strcspn(p, "\n") - 1;
		} else if (p[0] == '/' && p[1] == '*') {
			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				s->line += *p == '\n';
			if (!*p)
				return;
			p++;
		} else if (*p == '"') {
			s->string_line = s->line;
			for (p++; *p && *p != '"' && *p != '\n'; p++)
				p += p[0] == '\\' && p[1];
			if (*p != '"')
				return;	/* strings end on their line */
			s->string_line = 0;
		} else if (strchr("{[()]}", *p)) {
			scan_bracket(s, *p);
		}
	}
}

/* Whether @l has an '=' (or ':') followed by no value: the line's end, ';', ',' or a closer. */
static bool lacks_value(const char *l, size_t len)
{
	const char *end = l + len, *p;

	for (; (p = memchr(l, '=', (size_t)(end - l))) || (p = memchr(l, ':', (size_t)(end - l)));
	     l = p) {
		for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
			;
		if (p == end || strchr(";,}])", *p))
			return true;
	}
	return false;
}

/* Why @text has a syntax error at @line, into @cause. */
static void syntax_cause(const char *text, int line, char *cause, size_t size)
{
	struct scan s = { 0 };
	const char *l;
	size_t len = 0;

	scan_text(&s, text);
	if (s.string_line)
		snprintf(cause, size, "the string opened at line %d is not closed on its line",
			 s.string_line);
	else if (s.cause[0])
		snprintf(cause, size, "%s", s.cause);
	else if (s.depth > 0 && s.depth <= MAX_DEPTH)
		snprintf(cause, size, "the '%c' opened at line %d is never closed",
			 s.open[s.depth - 1], s.open_line[s.depth - 1]);
	else if ((l = line_at(text, line, &len)) && len && lacks_value(l, len))
		snprintf(cause, size, "a value is missing after '=' in '%.*s'",
			 (int)(len < MAX_SHOWN ? len : MAX_SHOWN), l);
	else if (l && len)
		snprintf(cause, size, "unexpected text in '%.*s'",
			 (int)(len < MAX_SHOWN ? len : MAX_SHOWN), l);
	else
		snprintf(cause, size, "unexpected end of file");
}

int config_report_read_error(const config_t *cf, const char *path, const char *include_dir,
			     struct diag *diag)
{
	const char *what = config_error_text(cf), *efile = config_error_file(cf), *l;
	int line = config_error_line(cf), r, err;
	char *file = resolve(efile ? efile : path, include_dir), *text, *inc = NULL;
	char name[PATH_MAX], cause[512];
	size_t len;

	if (!file)
		return -ENOMEM;
	text = slurp(file);
	if (!what)
		what = "cannot read the file";
	l = text ? line_at(text, line, &len) : NULL;
	if (strstr(what, "include") && l && include_name(l, len, name, sizeof(name)) &&
	    (inc = resolve(name, include_dir))) {
		int fd = open(inc, O_RDONLY | O_CLOEXEC);

		err = errno;
		if (fd >= 0)
			close(fd);
		if (fd < 0)
			r = diag_add(diag, file, line, "cannot open include file '%s': %s", inc,
				     strerror(err));
		else
			r = diag_add(diag, file, line, "cannot include file '%s'", inc);
	} else if (strstr(what, "syntax") && text) {
		syntax_cause(text, line, cause, sizeof(cause));
		r = diag_add(diag, file, line, "%s: %s", what, cause);
	} else {
		r = diag_add(diag, file, line, "%s", what);
	}
	free(inc);
	free(text);
	free(file);
	return r;
}
