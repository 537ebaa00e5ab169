// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config_lint.c -- warnings about board files that are valid but probably do
 * not say what their author meant
 *
 * libconfig joins adjacent string literals, as C does: in a command list
 *
 *	ramdisk = ( "dhcp"
 *		    "setenv serverip {SERVER_IP}", ... );
 *
 * the missing comma makes one command "dhcpsetenv serverip ...", which the
 * bootloader rejects at boot time.  libconfig keeps no trace of the join (a
 * setting's line is where the parser stood after it), so the source text is
 * read again: a small scanner finds every place where a string literal
 * follows another with only blanks or comments between them, and the value
 * they make.  A long command wrapped on purpose has a blank where its pieces
 * meet ("console=ttyS0 " "root=..."); only joins without one are kept.  A command whose value and place match one of them gets a
 * warning naming the line of the second literal.  Each file is scanned once.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_priv.h"
#include "core/diag.h"
#include "core/strbuf.h"

#define LINT_MAX_FILE (4 << 20)		/* larger board files are not scanned */

/* One run of joined literals in a file. */
struct lint_join {
	int first_line;		/* where the first literal starts */
	int line;		/* where the second one starts */
	char *value;		/* the joined, unescaped value */
};

struct lint_file {
	char *path;
	struct lint_join *joins;
	size_t n;
};

struct config_lint {
	struct diag *warnings;
	struct lint_file *files;
	size_t n_files;
};

/* A scanner over a file's text. */
struct scan {
	const char *p, *end;
	int line;
};

static void advance(struct scan *s)
{
	if (*s->p == '\n')
		s->line++;
	s->p++;
}

/* Skip blanks and comments (#, //, and C comments). */
static void skip_blank(struct scan *s)
{
	while (s->p < s->end) {
		if (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n') {
			advance(s);
		} else if (*s->p == '#' || (*s->p == '/' && s->p + 1 < s->end && s->p[1] == '/')) {
			while (s->p < s->end && *s->p != '\n')
				advance(s);
		} else if (*s->p == '/' && s->p + 1 < s->end && s->p[1] == '*') {
			for (advance(s), advance(s); s->p < s->end; advance(s))
				if (*s->p == '*' && s->p + 1 < s->end && s->p[1] == '/')
					break;
			if (s->p < s->end) {
				advance(s);
				advance(s);
			}
		} else {
			return;
		}
	}
}

/* The escape at @s->p (after the backslash), as libconfig reads it, appended to @sb. */
static int unescape(struct scan *s, struct strbuf *sb)
{
	static const char from[] = "\\\"fnrt", to[] = "\\\"\f\n\r\t";
	const char *e = s->p < s->end ? strchr(from, *s->p) : NULL;
	unsigned int v;

	if (e && *e) {
		advance(s);
		return strbuf_addch(sb, to[e - from]);
	}
	if (s->p + 2 < s->end && *s->p == 'x' && sscanf(s->p + 1, "%2x", &v) == 1) {
		s->p += 3;
		return strbuf_addch(sb, (char)v);
	}
	return strbuf_addch(sb, '\\');
}

/* The string literal at @s->p (at its opening quote), unescaped, appended to @sb. */
static int literal(struct scan *s, struct strbuf *sb)
{
	int err = 0;

	for (advance(s); s->p < s->end && *s->p != '"' && !err;) {
		if (*s->p == '\\') {
			advance(s);
			err = unescape(s, sb);
		} else {
			err = strbuf_addch(sb, *s->p);
			advance(s);
		}
	}
	if (s->p < s->end)
		advance(s);	/* the closing quote */
	return err;
}

static int add_join(struct lint_file *f, int first_line, int line, struct strbuf *value)
{
	struct lint_join *j = realloc(f->joins, (f->n + 1) * sizeof(*j));

	if (!j)
		return -ENOMEM;
	f->joins = j;
	j[f->n] = (struct lint_join){ first_line, line, strbuf_detach(value, NULL) };
	if (!j[f->n].value)
		return -ENOMEM;
	f->n++;
	return 0;
}

/* Every run of adjacent literals in @text. */
static int scan_text(struct lint_file *f, const char *text, size_t len)
{
	struct scan s = { text, text + len, 1 };
	struct strbuf v = STRBUF_INIT;
	int err = 0;

	while (!err && (skip_blank(&s), s.p < s.end)) {
		int first = s.line, second = 0;

		if (*s.p != '"') {
			advance(&s);
			continue;
		}
		bool tight = false;

		strbuf_reset(&v);
		err = literal(&s, &v);
		while (!err && (skip_blank(&s), s.p < s.end && *s.p == '"')) {
			size_t at = v.len;

			second = second ? second : s.line;
			err = literal(&s, &v);
			if (at && at < v.len && !isspace((unsigned char)v.buf[at - 1]) &&
			    !isspace((unsigned char)v.buf[at]))
				tight = true;
		}
		if (!err && tight)
			err = add_join(f, first, second, &v);
	}
	strbuf_release(&v);
	return err;
}

/* The text of @in, up to LINT_MAX_FILE bytes. */
static int read_text(FILE *in, struct strbuf *sb)
{
	char buf[8192];
	size_t n;

	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (sb->len + n > LINT_MAX_FILE || strbuf_add(sb, buf, n) < 0)
			return -ENOMEM;
	return 0;
}

/* The joins of @path, scanned on first use. */
static int file_joins(struct config_lint *l, const char *path, struct lint_file **ret)
{
	struct lint_file *f;
	struct strbuf text = STRBUF_INIT;
	FILE *in;
	size_t i;
	int err = 0;

	for (i = 0; i < l->n_files; i++)
		if (!strcmp(l->files[i].path, path)) {
			*ret = &l->files[i];
			return 0;
		}
	f = realloc(l->files, (l->n_files + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	l->files = f;
	f = &l->files[l->n_files];
	*f = (struct lint_file){ strdup(path), NULL, 0 };
	if (!f->path)
		return -ENOMEM;
	l->n_files++;
	*ret = f;
	in = fopen(path, "r");
	if (!in)
		return 0;	/* it was read a moment ago: nothing to say */
	err = read_text(in, &text);
	fclose(in);
	if (!err)
		err = scan_text(f, text.buf ? text.buf : "", text.len);
	strbuf_release(&text);
	return err == -ENOMEM ? err : 0;
}

int config_lint_new(struct diag *warnings, struct config_lint **ret)
{
	*ret = calloc(1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	(*ret)->warnings = warnings;
	return 0;
}

struct config_lint *config_lint_free(struct config_lint *l)
{
	size_t i, j;

	if (!l)
		return NULL;
	for (i = 0; i < l->n_files; i++) {
		for (j = 0; j < l->files[i].n; j++)
			free(l->files[i].joins[j].value);
		free(l->files[i].joins);
		free(l->files[i].path);
	}
	free(l->files);
	free(l);
	return NULL;
}

int config_lint_joined(struct config_lint *l, const config_setting_t *e, const char *what)
{
	const char *path = config_setting_source_file(e), *value = config_setting_get_string(e);
	int line = config_setting_source_line(e);
	const struct lint_join *hit = NULL;
	struct lint_file *f;
	size_t i;
	int err;

	if (!l || !path || !value)
		return 0;
	err = file_joins(l, path, &f);
	if (err < 0)
		return err;
	/* the run of literals ending closest before the element's line */
	for (i = 0; i < f->n; i++)
		if (f->joins[i].line <= line && !strcmp(f->joins[i].value, value) &&
		    (!hit || f->joins[i].line > hit->line))
			hit = &f->joins[i];
	if (!hit)
		return 0;
	err = diag_add(l->warnings, path, hit->line,
		       "%s: '%s' is two strings the config parser joined (from line %d): is a comma missing between them?",
		       what, value, hit->first_line);
	return err == -ENOMEM ? err : 0;
}
