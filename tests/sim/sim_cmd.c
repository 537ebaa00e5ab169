// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_cmd.c -- simboard: variables, command lists (; && ||), quoting and $expansion */
#include "sim.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index of name in e, or -(insertion point) - 1 when absent. */
static int env_find(const struct sim_env *e, const char *name)
{
	int lo = 0, hi = e->n - 1, mid, c;

	while (lo <= hi) {
		mid = (lo + hi) / 2;
		c = strcmp(e->v[mid].name, name);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -lo - 1;
}

const char *sim_env_get(const struct sim_env *e, const char *name)
{
	int i = env_find(e, name);

	return i >= 0 ? e->v[i].value : NULL;
}

/* Set name to value, or delete it when value is NULL. */
int sim_env_set(struct sim_env *e, const char *name, const char *value)
{
	int i = env_find(e, name);
	char *v, *n;

	if (!value) {
		if (i >= 0) {
			free(e->v[i].name);
			free(e->v[i].value);
			memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
			e->n--;
		}
		return 0;
	}
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	if (i >= 0) {
		free(e->v[i].value);
		e->v[i].value = v;
		return 0;
	}
	if (e->n == e->cap) {
		int cap = e->cap ? e->cap * 2 : 16;
		struct sim_var *nv = realloc(e->v, cap * sizeof(*nv));

		if (!nv)
			goto nomem;
		e->v = nv;
		e->cap = cap;
	}
	n = strdup(name);
	if (!n)
		goto nomem;
	i = -i - 1;
	memmove(&e->v[i + 1], &e->v[i], (e->n - i) * sizeof(*e->v));
	e->v[i].name = n;
	e->v[i].value = v;
	e->n++;
	return 0;
nomem:
	free(v);
	return -ENOMEM;
}

void sim_env_clear(struct sim_env *e)
{
	int i;

	for (i = 0; i < e->n; i++) {
		free(e->v[i].name);
		free(e->v[i].value);
	}
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
}

int sim_env_copy(struct sim_env *dst, const struct sim_env *src)
{
	int i, ret;

	sim_env_clear(dst);
	for (i = 0; i < src->n; i++) {
		ret = sim_env_set(dst, src->v[i].name, src->v[i].value);
		if (ret)
			return ret;
	}
	return 0;
}

void sim_cmd_clear(struct board *b)
{
	int i;

	for (i = 0; i < b->cmdq.n; i++)
		free(b->cmdq.cmd[i]);
	b->cmdq.n = b->cmdq.pos = 0;
}

static int cmdq_insert(struct sim_cmdq *q, int at, const char *s, size_t len, char sep)
{
	char *cmd;

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!len)
		return 0;
	if (q->n == q->cap) {
		int cap = q->cap ? q->cap * 2 : 8;
		char **nc = realloc(q->cmd, cap * sizeof(*nc));
		char *ns;

		if (!nc)
			return -ENOMEM;
		q->cmd = nc;
		ns = realloc(q->sep, cap);
		if (!ns)
			return -ENOMEM;
		q->sep = ns;
		q->cap = cap;
	}
	cmd = strndup(s, len);
	if (!cmd)
		return -ENOMEM;
	memmove(&q->cmd[at + 1], &q->cmd[at], (q->n - at) * sizeof(*q->cmd));
	memmove(&q->sep[at + 1], &q->sep[at], q->n - at);
	q->cmd[at] = cmd;
	q->sep[at] = sep;
	q->n++;
	return 1;
}

/*
 * Split text at ; && || and newlines outside quotes and insert the commands
 * at position at.  Returns how many were inserted, or a negative errno.
 */
static int cmdq_split(struct sim_cmdq *q, int at, const char *text)
{
	const char *s = text, *start = text;
	char quote = 0, sep = ';';
	int n = 0, ret;

	for (;; s++) {
		char c = *s, next_sep = 0;
		size_t skip = 1;

		if (c && quote) {
			if (c == quote)
				quote = 0;
			else if (c == '\\' && quote == '"' && s[1])
				s++;
			continue;
		}
		if (c == '\'' || c == '"') {
			quote = c;
			continue;
		}
		if (c == '\\' && s[1]) {
			s++;
			continue;
		}
		if (c == '#' && (s == text || isspace((unsigned char)s[-1]))) {
			/* a comment ends the line (a script's lines go on after it) */
			const char *eol = strchr(s, '\n');

			ret = cmdq_insert(q, at + n, start, s - start, sep);
			if (ret < 0)
				return ret;
			n += ret;
			if (!eol)
				return n;
			sep = ';';
			s = eol;
			start = s + 1;
			continue;
		}
		if (c == ';' || c == '\n' || c == '\r')
			next_sep = ';';
		else if ((c == '&' || c == '|') && s[1] == c)
			next_sep = c, skip = 2;
		else if (c)
			continue;
		ret = cmdq_insert(q, at + n, start, s - start, sep);
		if (ret < 0)
			return ret;
		n += ret;
		if (!c)
			return n;
		sep = next_sep;
		s += skip - 1;
		start = s + 1;
	}
}

/* Insert the commands of text right after the running one (U-Boot "run"). */
int sim_cmd_splice(struct board *b, const char *text)
{
	return cmdq_split(&b->cmdq, b->cmdq.pos, text);
}

/* Commands run in a row without waiting: more means "run" loops on itself. */
#define CMD_RUN_MAX	10000

/* Run commands until one goes asynchronous or the list is done. */
static void cmd_run(struct board *b)
{
	static char buf[SIM_LINE_MAX * 4];
	char *argv[SIM_MAX_ARGS + 1];
	struct sim_cmdq *q = &b->cmdq;
	int argc, ret, ran = 0;

	while (q->pos < q->n) {
		char sep = q->sep[q->pos];
		const char *cmd = q->cmd[q->pos++];

		if ((sep == '&' && b->status) || (sep == '|' && !b->status))
			continue;
		if (++ran > CMD_RUN_MAX) {
			sim_puts(b, "## Error: too many commands in a row, giving up\r\n");
			b->status = 1;
			break;
		}
		if (b->stage == STAGE_SHELL)
			sim_redirect(b, q->cmd[q->pos - 1]);
		argc = sim_words(b, cmd, argv, SIM_MAX_ARGS, buf, sizeof(buf));
		ret = argc ? b->exec(b, argc, argv) : b->status;
		b->redir = NULL;
		b->redir_null = false;
		if (ret == CMD_ASYNC || ret == CMD_GONE)
			return;
		b->status = ret;
	}
	sim_cmd_clear(b);
	b->prompt_fn(b);
}

/* Run a command line typed at a prompt (or U-Boot's bootcmd). */
void sim_cmd_line(struct board *b, const char *line)
{
	sim_cmd_clear(b);
	b->in = IN_BUSY;
	if (cmdq_split(&b->cmdq, 0, line) < 0)
		sim_puts(b, "out of memory\r\n");
	cmd_run(b);
}

/* An asynchronous command finished with status. */
void sim_cmd_done(struct board *b, int status)
{
	b->status = status;
	cmd_run(b);
}

/* Ctrl-C while a command runs: stop it and the rest of the line. */
void sim_cmd_abort(struct board *b)
{
	sim_cancel(b);
	sim_cmd_clear(b);
	b->stream_until = 0;
	b->spew_left = 0;
	b->talen = 0;
	if (b->stage == STAGE_UBOOT) {
		sim_puts(b, "\r\nAbort\r\n");
		b->status = 1;
	} else {
		sim_puts(b, "^C\r\n");
		b->status = 130;
	}
	b->prompt_fn(b);
}

static const char *lookup(struct board *b, const char *name, char *tmp, size_t size)
{
	if (!strcmp(name, "?")) {
		snprintf(tmp, size, "%d", b->status);
		return tmp;
	}
	return sim_env_get(b->stage == STAGE_UBOOT ? &b->uenv : &b->senv, name);
}

/* Expand $name, ${name} or $? at *sp into the output; advances *sp. */
static void expand(struct board *b, const char **sp, char **op, char *end)
{
	const char *s = *sp + 1, *val;
	char name[128], tmp[32];
	size_t n = 0;

	if (*s == '?') {
		name[n++] = *s++;
	} else if (*s == '{') {
		for (s++; *s && *s != '}'; s++)
			if (n + 1 < sizeof(name))
				name[n++] = *s;
		if (*s == '}')
			s++;
	} else {
		for (; isalnum((unsigned char)*s) || *s == '_'; s++)
			if (n + 1 < sizeof(name))
				name[n++] = *s;
	}
	name[n] = '\0';
	*sp = s;
	val = lookup(b, name, tmp, sizeof(tmp));
	for (; val && *val && *op < end; val++)
		*(*op)++ = *val;
}

static long long arith_expr(struct board *b, const char **sp);

static void skip_blanks(const char **sp)
{
	while (isspace((unsigned char)**sp))
		(*sp)++;
}

/* A number, a variable (with or without $), a sign or a parenthesis. */
static long long arith_factor(struct board *b, const char **sp)
{
	const char *s;
	char name[128], tmp[32];
	const char *val;
	long long v;
	size_t n = 0;

	skip_blanks(sp);
	s = *sp;
	if (*s == '-' || *s == '+') {
		*sp = s + 1;
		v = arith_factor(b, sp);
		return *s == '-' ? -v : v;
	}
	if (*s == '(') {
		*sp = s + 1;
		v = arith_expr(b, sp);
		skip_blanks(sp);
		if (**sp == ')')
			(*sp)++;
		return v;
	}
	if (isdigit((unsigned char)*s))
		return strtoll(s, (char **)sp, 0);
	if (*s == '$')
		s++;
	while ((isalnum((unsigned char)*s) || *s == '_' || *s == '?') && n + 1 < sizeof(name))
		name[n++] = *s++;
	name[n] = '\0';
	*sp = s;
	val = n ? lookup(b, name, tmp, sizeof(tmp)) : NULL;
	return val ? strtoll(val, NULL, 0) : 0;
}

static long long arith_term(struct board *b, const char **sp)
{
	long long v = arith_factor(b, sp), r;
	char op;

	for (;;) {
		skip_blanks(sp);
		op = **sp;
		if (op != '*' && op != '/' && op != '%')
			return v;
		(*sp)++;
		r = arith_factor(b, sp);
		if (op == '*')
			v *= r;
		else if (r)	/* division by zero gives 0 rather than an error */
			v = op == '/' ? v / r : v % r;
		else
			v = 0;
	}
}

static long long arith_expr(struct board *b, const char **sp)
{
	long long v = arith_term(b, sp);
	char op;

	for (;;) {
		skip_blanks(sp);
		op = **sp;
		if (op != '+' && op != '-')
			return v;
		(*sp)++;
		v = op == '+' ? v + arith_term(b, sp) : v - arith_term(b, sp);
	}
}

/* $((EXPR)): integer arithmetic with + - * / % and parentheses. */
static void arith(struct board *b, const char **sp, char **op, char *end)
{
	const char *s = *sp + 3, *e;
	char expr[256], num[32];
	int depth = 0;
	size_t i;

	for (e = s; *e; e++) {
		if (*e == '(')
			depth++;
		else if (*e == ')' && depth)
			depth--;
		else if (*e == ')' && e[1] == ')')
			break;
	}
	snprintf(expr, sizeof(expr), "%.*s", (int)(e - s), s);
	*sp = *e ? e + 2 : e;
	s = expr;
	snprintf(num, sizeof(num), "%lld", arith_expr(b, &s));
	for (i = 0; num[i] && *op < end; i++)
		*(*op)++ = num[i];
}

static bool starts_var(const char *s)
{
	return s[0] == '$' && (s[1] == '?' || s[1] == '{' || s[1] == '_' ||
			       isalpha((unsigned char)s[1]) || (s[1] == '(' && s[2] == '('));
}

/*
 * Split a command into words: whitespace separates, 'single' quotes keep
 * everything, "double" quotes and bare words expand variables, a backslash
 * escapes the next character.  Words are stored in buf.  Returns argc.
 */
int sim_words(struct board *b, const char *s, char **argv, int max, char *buf, size_t size)
{
	char *o = buf, *end = buf + size - 1;
	char quote = 0;
	bool in_word = false;
	int argc = 0;

	while (*s) {
		if (!quote && isspace((unsigned char)*s)) {
			if (in_word && o < end + 1)
				*o++ = '\0';
			in_word = false;
			s++;
			continue;
		}
		if (!in_word) {
			if (argc == max || o >= end)
				break;
			argv[argc++] = o;
			in_word = true;
		}
		if (quote == '\'') {
			if (*s == '\'')
				quote = 0;
			else if (o < end)
				*o++ = *s;
			s++;
		} else if (*s == '\\' && s[1]) {
			if (quote == '"' && !strchr("\"\\$`", s[1]) && o < end)
				*o++ = '\\';
			if (o < end)
				*o++ = s[1];
			s += 2;
		} else if (!quote && (*s == '\'' || *s == '"')) {
			quote = *s++;
		} else if (quote == '"' && *s == '"') {
			quote = 0;
			s++;
		} else if (starts_var(s) && s[1] == '(') {
			arith(b, &s, &o, end);
		} else if (starts_var(s)) {
			expand(b, &s, &o, end);
		} else {
			if (o < end)
				*o++ = *s;
			s++;
		}
	}
	if (in_word)
		*o = '\0';
	argv[argc] = NULL;
	return argc;
}
