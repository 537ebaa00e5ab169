// SPDX-License-Identifier: GPL-2.0-or-later
/* ktap.c -- KTAP/TAP documents in console lines, into results named by their path */
#include "results/ktap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strbuf.h"
#include "results/kmsg.h"

#define KTAP_TAB 8

enum line_kind {
	LINE_OTHER,
	LINE_VERSION,
	LINE_PLAN,
	LINE_RESULT,
	LINE_SUBTEST,
	LINE_BAIL,
};

/* Where a line stands: "# " prefixes first, then the width of its blanks. */
struct key {
	unsigned hashes;
	unsigned indent;
};

struct parsed {
	enum line_kind kind;
	struct key key;
	bool ok;
	long num;
	const char *text;	/* result: description; subtest: name */
	size_t len;
	const char *directive;	/* after the result's '#', or NULL */
	size_t dlen;
	long plan;
	bool plan_skip;
};

/* A result waiting for the name of its subtest; @name is relative to that subtest. */
struct pending {
	char *name;
	const char *result;
	char *directive;
	char *reason;
	const char *error;
	bool suite;
	int64_t start, end;
};

struct level {
	struct key key;
	char *name;		/* from "# Subtest:", or NULL */
	long plan;		/* -1: no plan (yet) */
	bool skip_all;
	long next;		/* number expected next */
	int64_t start;		/* line of the version line */
	int64_t last;		/* line of the last result */
	struct pending *pend;
	size_t n_pend, alloc;
};

struct ktap {
	ktap_result_fn fn;
	void *userdata;
	struct level lv[KTAP_MAX_DEPTH];
	int depth;		/* open levels; 0: no document */
	struct strbuf join;	/* a result line cut by a kernel message */
	bool joining;
	uint64_t seen[KTAP_MAX_SEEN];	/* stamped version lines of past documents */
	size_t n_seen;
	bool replay;		/* in a document printed again (dmesg): ignored */
	struct key replay_key;
};

static const char *const directives[] = { "SKIP", "XFAIL", "TODO", "TIMEOUT", "ERROR" };

int ktap_new(ktap_result_fn fn, void *userdata, struct ktap **ret)
{
	struct ktap *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->fn = fn;
	k->userdata = userdata;
	strbuf_init(&k->join);
	*ret = k;
	return 0;
}

static void pending_release(struct pending *p)
{
	free(p->name);
	free(p->directive);
	free(p->reason);
}

static void level_release(struct level *l)
{
	size_t i;

	for (i = 0; i < l->n_pend; i++)
		pending_release(&l->pend[i]);
	free(l->pend);
	free(l->name);
	memset(l, 0, sizeof(*l));
}

struct ktap *ktap_free(struct ktap *k)
{
	if (!k)
		return NULL;
	while (k->depth > 0)
		level_release(&k->lv[--k->depth]);
	strbuf_release(&k->join);
	free(k);
	return NULL;
}

bool ktap_in_document(const struct ktap *k)
{
	return k->depth > 0;
}

static int key_cmp(struct key a, struct key b)
{
	if (a.hashes != b.hashes)
		return a.hashes < b.hashes ? -1 : 1;
	if (a.indent != b.indent)
		return a.indent < b.indent ? -1 : 1;
	return 0;
}

/* ---- lines ---- */

static bool starts(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - p) >= n && !memcmp(p, word, n);
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Does a "# " prefix at p carry a nested document line? */
static bool carries_keyword(const char *p, const char *end)
{
	static const char *const words[] = { "ok ", "not ok ", "KTAP version ", "TAP version ", "1..",
					     "Bail out!", "# Subtest:" };
	size_t i;

	p = skip_blanks(p, end);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (starts(p, end, words[i]))
			return true;
	return false;
}

static bool parse_num(const char **pp, const char *end, long *ret)
{
	const char *p = *pp;
	long n = 0;

	if (p >= end || !isdigit((unsigned char)*p))
		return false;
	for (; p < end && isdigit((unsigned char)*p) && n < 1000000000L; p++)
		n = n * 10 + (*p - '0');
	*pp = p;
	*ret = n;
	return true;
}

static const char *trim_end(const char *p, const char *end)
{
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

/* "ok N [- ]description [# directive]" after "ok"/"not ok" and one blank. */
static void parse_result(const char *p, const char *end, struct parsed *out)
{
	const char *hash;

	if (!parse_num(&p, end, &out->num) || (p < end && *p != ' '))
		return;
	p = skip_blanks(p, end);
	if (starts(p, end, "- "))
		p += 2;
	hash = memchr(p, '#', (size_t)(end - p));
	out->text = p;
	out->len = (size_t)(trim_end(p, hash ? hash : end) - p);
	if (hash) {
		out->directive = skip_blanks(hash + 1, end);
		out->dlen = (size_t)(trim_end(out->directive, end) - out->directive);
	}
	out->kind = LINE_RESULT;
}

static void classify(const char *p, const char *end, struct parsed *out)
{
	if (starts(p, end, "KTAP version ") || starts(p, end, "TAP version ")) {
		out->kind = LINE_VERSION;
	} else if (starts(p, end, "1..")) {
		p += 3;
		if (!parse_num(&p, end, &out->plan))
			return;
		out->plan_skip = memmem(p, (size_t)(end - p), "SKIP", 4) ||
				 memmem(p, (size_t)(end - p), "skip", 4);
		out->kind = LINE_PLAN;
	} else if (starts(p, end, "ok ")) {
		out->ok = true;
		parse_result(p + 3, end, out);
	} else if (starts(p, end, "not ok ")) {
		parse_result(p + 7, end, out);
	} else if (starts(p, end, "# Subtest:")) {
		out->text = skip_blanks(p + 10, end);
		out->len = (size_t)(trim_end(out->text, end) - out->text);
		out->kind = LINE_SUBTEST;
	} else if (starts(p, end, "Bail out!")) {
		out->kind = LINE_BAIL;
	}
}

static void parse_line(const char *line, size_t len, struct parsed *out)
{
	const char *p = line, *end = line + len;
	size_t n = kmsg_timestamp_len(line, len);

	memset(out, 0, sizeof(*out));
	out->plan = -1;
	if (n)
		p += n + (n < len && line[n] == ' ');
	for (;;) {
		for (; p < end && (*p == ' ' || *p == '\t'); p++)
			out->key.indent = *p == '\t' ? (out->key.indent / KTAP_TAB + 1) * KTAP_TAB :
				out->key.indent + 1;
		if (end - p < 2 || p[0] != '#' || p[1] != ' ' || !carries_keyword(p + 2, end))
			break;
		out->key.hashes++;
		p += 2;
	}
	classify(p, end, out);
}

/* ---- names and results ---- */

/* Append @s sanitized (runs outside [A-Za-z0-9_-] become '_', trimmed) to @out. */
static void add_component(struct strbuf *out, const char *s, size_t len)
{
	size_t start = out->len, i;
	bool bad = false;

	for (i = 0; i < len && out->len - start < KTAP_MAX_NAME; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isalnum(c) || c == '-' || c == '_') {
			if (bad && out->len > start)
				strbuf_addch(out, '_');
			strbuf_addch(out, c);
			bad = false;
		} else {
			bad = true;
		}
	}
}

/* The relative name of a result: its description, or test_<num>. */
static char *result_name(const char *text, size_t len, long num)
{
	struct strbuf sb = STRBUF_INIT;
	const char *colon;

	if (len > 11 && !memcmp(text, "selftests: ", 11)) {
		/* kselftest runner: "selftests: collection: test" */
		while ((colon = memmem(text, len, ": ", 2))) {
			size_t before = sb.len;

			add_component(&sb, text, (size_t)(colon - text));
			if (sb.len > before)
				strbuf_addch(&sb, '.');
			len -= (size_t)(colon + 2 - text);
			text = colon + 2;
		}
	}
	add_component(&sb, text, len);
	if (!sb.len || sb.buf[sb.len - 1] == '.')
		strbuf_addf(&sb, "test_%ld", num);
	return strbuf_detach(&sb, NULL);
}

static const char *directive_name(const struct parsed *r)
{
	size_t i, n;

	if (!r->directive)
		return NULL;
	for (n = 0; n < r->dlen && r->directive[n] != ' ' && r->directive[n] != '\t'; n++)
		;
	for (i = 0; i < sizeof(directives) / sizeof(directives[0]); i++)
		if (n == strlen(directives[i]) && !strncasecmp(r->directive, directives[i], n))
			return directives[i];
	return NULL;
}

static const char *result_of(const struct parsed *r, const char *directive)
{
	if (directive && !strcmp(directive, "SKIP"))
		return "skip";
	return r->ok ? "pass" : "fail";
}

static void emit(struct ktap *k, const struct pending *p)
{
	struct ktap_result res = {
		.name = p->name,
		.result = p->result,
		.directive = p->directive,
		.reason = p->reason,
		.error = p->error,
		.suite = p->suite,
		.line_start = p->start,
		.line_end = p->end,
	};
	const char *c;

	for (c = p->name; (c = strchr(c, '.')); c++)
		res.depth++;
	if (k->fn)
		k->fn(&res, k->userdata);
}

/* A result of level @i: reported now at the outermost level, else kept. Takes @p's strings. */
static void deliver(struct ktap *k, int i, struct pending *p)
{
	struct level *l = &k->lv[i];
	struct pending *grown;

	if (i == 0 || l->n_pend >= KTAP_MAX_PENDING) {
		if (i == 0)
			emit(k, p);
		pending_release(p);
		return;
	}
	if (l->n_pend == l->alloc) {
		grown = realloc(l->pend, (l->alloc ? l->alloc * 2 : 16) * sizeof(*grown));
		if (!grown) {
			pending_release(p);
			return;
		}
		l->pend = grown;
		l->alloc = l->alloc ? l->alloc * 2 : 16;
	}
	l->pend[l->n_pend++] = *p;
}

/* A result labd made up (truncated, missing) for level @i. */
static void deliver_made_up(struct ktap *k, int i, char *name, const char *error, int64_t start,
			    int64_t end)
{
	struct pending p = { .name = name, .result = "fail", .error = error, .start = start,
			     .end = end };

	if (name)
		deliver(k, i, &p);
}

/* ---- documents printed again ---- */

/* FNV-1a of a stamped version line: the same document printed again has the same one. */
static uint64_t line_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	while (len--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* Is the document this version line starts one printed before?  Remembers it if not. */
static bool printed_before(struct ktap *k, const char *line, size_t len)
{
	size_t i, n = k->n_seen < KTAP_MAX_SEEN ? k->n_seen : KTAP_MAX_SEEN;
	uint64_t h;

	if (!kmsg_timestamp_len(line, len))
		return false;
	h = line_hash(line, len);
	for (i = 0; i < n; i++)
		if (k->seen[i] == h)
			return true;
	k->seen[k->n_seen++ % KTAP_MAX_SEEN] = h;
	return false;
}

/* ---- levels ---- */

static void open_level(struct ktap *k, struct key key, int64_t lineno)
{
	struct level *l;

	if (k->depth == KTAP_MAX_DEPTH)
		return;
	l = &k->lv[k->depth++];
	memset(l, 0, sizeof(*l));
	l->key = key;
	l->plan = -1;
	l->next = 1;
	l->start = l->last = lineno;
}

/* Report the tests @l's plan announced that never came, as results of @l. */
static void report_missing(struct ktap *k, int i, int64_t lineno)
{
	struct level *l = &k->lv[i];
	char *name;
	long n;

	if (l->skip_all || l->plan < l->next)
		return;
	for (n = l->next; n <= l->plan && n < l->next + KTAP_MAX_MISSING; n++) {
		if (asprintf(&name, "test_%ld", n) < 0)
			return;
		deliver_made_up(k, i, name, "missing", lineno, lineno);
	}
}

/*
 * Close the innermost level (not the outermost): its results move up to its
 * parent under @name (NULL: its result line never came, it is truncated).
 */
static void close_level(struct ktap *k, const char *name, int64_t lineno)
{
	struct level *l = &k->lv[k->depth - 1], *parent = l - 1;
	char *own = NULL, *full;
	size_t i;

	report_missing(k, k->depth - 1, lineno);
	if (name)
		own = strdup(name);
	else if (l->name)
		own = strdup(l->name);
	else if (asprintf(&own, "test_%ld", parent->next) < 0)
		own = NULL;
	for (i = 0; own && i < l->n_pend; i++) {
		if (asprintf(&full, "%s.%s", own, l->pend[i].name) < 0)
			continue;
		free(l->pend[i].name);
		l->pend[i].name = full;
		deliver(k, k->depth - 2, &l->pend[i]);
		memset(&l->pend[i], 0, sizeof(l->pend[i]));
	}
	if (!name) {
		deliver_made_up(k, k->depth - 2, own, "truncated", l->start, lineno);
		parent->next++;
		parent->last = lineno;
		own = NULL;
	}
	free(own);
	level_release(l);
	k->depth--;
}

/* Close every level: the document ended (or a new one begins). */
static void close_document(struct ktap *k, int64_t lineno)
{
	while (k->depth > 1)
		close_level(k, NULL, lineno);
	if (k->depth) {
		report_missing(k, 0, lineno);
		level_release(&k->lv[0]);
		k->depth = 0;
	}
}

/* The level a line with @key belongs to: the innermost with that key, else -1. */
static int level_of(const struct ktap *k, struct key key)
{
	int i;

	for (i = k->depth - 1; i >= 0; i--)
		if (!key_cmp(k->lv[i].key, key))
			return i;
	return -1;
}

/* A line of a deeper key than every open level opens a subtest; returns its level or -1. */
static int level_or_child(struct ktap *k, struct key key, int64_t lineno)
{
	int i = level_of(k, key);

	if (i >= 0 || !k->depth)
		return i;
	if (key_cmp(key, k->lv[k->depth - 1].key) <= 0 || k->depth == KTAP_MAX_DEPTH)
		return -1;
	open_level(k, key, lineno);
	return k->depth - 1;
}

/* A subtest's version line (a deeper key than the document's). */
static void on_version(struct ktap *k, struct key key, int64_t lineno)
{
	int i;

	for (i = k->depth - 1; i > 0 && key_cmp(key, k->lv[i].key) <= 0; i--)
		;
	while (k->depth - 1 > i)
		close_level(k, NULL, lineno);
	open_level(k, key, lineno);
}

static void on_result(struct ktap *k, const struct parsed *r, int64_t lineno)
{
	int i = level_or_child(k, r->key, lineno);
	const char *directive = directive_name(r);
	struct pending p = { .result = result_of(r, directive), .end = lineno };
	struct level *l;

	if (i < 0)
		return;
	l = &k->lv[i];
	p.name = result_name(r->text, r->len, r->num);
	while (k->depth - 1 > i + 1)
		close_level(k, NULL, lineno);
	p.start = l->last + (l->last < lineno);
	if (k->depth - 1 == i + 1) {
		p.start = k->lv[i + 1].start;
		p.suite = true;
		close_level(k, p.name, lineno);
	}
	p.directive = directive ? strdup(directive) : NULL;
	if (directive && r->dlen > strlen(directive))
		p.reason = strndup(skip_blanks(r->directive + strlen(directive),
					       r->directive + r->dlen),
				   r->dlen - strlen(directive));
	if (p.reason && !*p.reason) {
		free(p.reason);
		p.reason = NULL;
	}
	deliver(k, i, &p);
	l->next = r->num + 1;
	l->last = lineno;
}

static void on_plan(struct ktap *k, const struct parsed *r, int64_t lineno)
{
	int i = level_or_child(k, r->key, lineno);

	if (i < 0)
		return;
	k->lv[i].plan = r->plan;
	k->lv[i].skip_all = r->plan_skip || !r->plan;
}

static void on_subtest(struct ktap *k, const struct parsed *r, int64_t lineno)
{
	int i = level_or_child(k, r->key, lineno);
	struct level *l;

	if (i <= 0)
		return;
	l = &k->lv[i];
	if (!l->name && l->next == 1)
		l->name = result_name(r->text, r->len, 0);
}

/* Output that ends every document: the kernel died or the board goes down. */
static bool is_end_of_tests(const char *line, size_t len)
{
	return kmsg_classify(line, len) == KMSG_PANIC || memmem(line, len, "] reboot: ", 10) ||
	       (len > 8 && !memcmp(line, "reboot: ", 8));
}

/* A result whose description holds a kernel timestamp was cut by a printk record. */
static bool cut_by_kernel(struct ktap *k, const char *line, size_t len, const struct parsed *r)
{
	const char *p, *end;

	/* only a result has text: r->text is NULL for other lines (no NULL + 0) */
	if (r->kind != LINE_RESULT || k->joining || !r->text)
		return false;
	end = r->directive ? r->directive + r->dlen : r->text + r->len;
	for (p = r->text; p < end && (p = memchr(p, '[', (size_t)(end - p))); p++) {
		if (!kmsg_timestamp_len(p, (size_t)(line + len - p)))
			continue;
		strbuf_reset(&k->join);
		strbuf_add(&k->join, line, (size_t)(p - line));
		k->joining = true;
		return true;
	}
	return false;
}

/* A version line that starts a new outermost document (not a subtest). */
static bool starts_document(const struct ktap *k, struct key key)
{
	if (k->replay)
		return key_cmp(key, k->replay_key) <= 0;
	return !k->depth || key_cmp(key, k->lv[0].key) <= 0;
}

static void feed_parsed(struct ktap *k, const char *line, size_t len, int64_t lineno)
{
	struct parsed r;

	parse_line(line, len, &r);
	if (r.kind == LINE_VERSION && starts_document(k, r.key)) {
		close_document(k, lineno);
		k->replay = printed_before(k, line, len);
		k->replay_key = r.key;
		if (!k->replay)
			open_level(k, r.key, lineno);
		return;
	}
	if (k->replay)
		return;
	if (r.kind == LINE_VERSION) {
		on_version(k, r.key, lineno);
		return;
	}
	if (!k->depth)
		return;
	if (cut_by_kernel(k, line, len, &r))
		return;
	if (r.kind == LINE_RESULT)
		on_result(k, &r, lineno);
	else if (r.kind == LINE_PLAN)
		on_plan(k, &r, lineno);
	else if (r.kind == LINE_SUBTEST)
		on_subtest(k, &r, lineno);
	else if (r.kind == LINE_OTHER && is_end_of_tests(line, len))
		close_document(k, lineno);
}

void ktap_feed(struct ktap *k, const char *line, size_t len, int64_t lineno)
{
	if (!k->joining) {
		feed_parsed(k, line, len, lineno);
		return;
	}
	strbuf_add(&k->join, line, len);
	feed_parsed(k, k->join.buf, k->join.len, lineno);
	k->joining = false;
}

void ktap_flush(struct ktap *k)
{
	int64_t last = k->depth ? k->lv[k->depth - 1].last : 0;

	k->joining = false;
	close_document(k, last);
}
