// SPDX-License-Identifier: GPL-2.0-or-later
/* job_yaml.c -- the YAML front end of the job parser: libyaml events to a jansson tree and lines */
#include "job/job_doc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/*
 * Scalars are resolved as LAVA's loader (PyYAML, YAML 1.1) resolves them, for
 * the types a job can hold:
 *
 *	plain ~, null, Null, NULL, empty		null
 *	plain true/false, yes/no, on/off (3 cases)	boolean
 *	plain 12, -3, 1_000, 0x1F, 0o17, 017, 0b101	integer
 *	plain 1.5, -.5, 2.0e3 (with a '.')		number
 *	anything quoted, or tagged !!str		string
 *
 * Left as strings (PyYAML converts them, no job needs them): sexagesimal 1:30,
 * timestamps, .inf and .nan.  Anchors, aliases and merge keys (<<) work; an
 * alias inside the node it names is rejected, as are other tags and a second
 * document.  The event API lets the nesting limit stop a hostile document
 * early; the value budget counts nodes as they are read.
 */

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"
#define YAML_NUMBER_MAX 80	/* longest integer or number text, '_' excluded */
#define YAML_MAX_DUPLICATES 20	/* then give up: each one costs a sweep of the lines */

struct yaml_frame {
	json_t *node;		/* mapping (object) or sequence (array) being filled */
	size_t path_len;	/* length of its path */
	char *key;		/* mapping: key waiting for its value */
	bool merge;		/* the waiting key is '<<' */
	bool merging;		/* this node is a merge value, owned here, not attached */
	char *anchor;		/* anchor to register when the node ends */
};

struct yaml_builder {
	struct job_doc *doc;
	bool lines_only;
	struct strbuf path;	/* path of the innermost open node */
	struct yaml_frame stack[JOB_DOC_MAX_DEPTH];
	int depth;
	json_t *root;
	json_t *anchor_values;	/* name -> value, once the node is complete */
	json_t *anchor_paths;	/* name -> path of the node */
	int documents;
	int duplicates;
	size_t nodes;
};

/* Report a problem at @mark; silent when only lines are wanted. */
static int yaml_error(struct yaml_builder *b, const yaml_mark_t *mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int yaml_error(struct yaml_builder *b, const yaml_mark_t *mark, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int r;

	if (b->lines_only)
		return -EINVAL;
	va_start(ap, fmt);
	r = strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (r < 0)
		return job_doc_nomem(b->doc);
	r = job_doc_error_at(b->doc, (int)mark->line + 1, "%s", sb.buf);
	strbuf_release(&sb);
	return r;
}

/* Scalar resolution */

static bool yaml_is_null(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* 1 true, 0 false, -1 not a boolean */
static int yaml_bool(const char *s)
{
	static const char *const words[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on",
					     "On", "ON", "false", "False", "FALSE", "no", "No",
					     "NO", "off", "Off", "OFF" };
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(s, words[i]))
			return i < 9;
	return -1;
}

static bool yaml_is_digit(char c, int base)
{
	switch (base) {
	case 16:
		return isxdigit((unsigned char)c);
	case 8:
		return c >= '0' && c <= '7';
	case 2:
		return c == '0' || c == '1';
	}
	return isdigit((unsigned char)c);
}

/* 1 and @ret set, 0 not an integer, -ERANGE too large */
static int yaml_int(const char *s, long long *ret)
{
	char buf[YAML_NUMBER_MAX + 1];
	unsigned long long u;
	int base = 10;
	bool neg = false;
	size_t n = 0;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
		base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
		s += 2;
	} else if (s[0] == '0' && s[1]) {
		base = 8;
		s++;
	} else if (!isdigit((unsigned char)*s)) {
		return 0;
	}
	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (!yaml_is_digit(*s, base))
			return 0;
		if (n == YAML_NUMBER_MAX)
			return -ERANGE;
		buf[n++] = *s;
	}
	if (!n)
		return 0;
	buf[n] = '\0';
	errno = 0;
	u = strtoull(buf, NULL, base);
	if (errno || u > (unsigned long long)LLONG_MAX + neg)
		return -ERANGE;
	*ret = neg ? -(long long)(u - 1) - 1 : (long long)u;
	return 1;
}

/* 1 and @ret set, 0 not a number, -ERANGE too large */
static int yaml_real(const char *s, double *ret)
{
	char buf[YAML_NUMBER_MAX + 1], *end;
	bool dot = false, digit = false;
	size_t n = 0;
	double d;

	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (!strchr("0123456789.eE+-", *s) || n == YAML_NUMBER_MAX)
			return 0;
		dot |= *s == '.';
		digit |= isdigit((unsigned char)*s) != 0;
		buf[n++] = *s;
	}
	buf[n] = '\0';
	if (!dot || !digit || !(isdigit((unsigned char)buf[0]) || strchr(".+-", buf[0])))
		return 0;
	d = strtod(buf, &end);
	if (*end)
		return 0;
	if (isinf(d))
		return -ERANGE;
	*ret = d;
	return 1;
}

/* The value of a plain scalar; NULL with *err set when it cannot be represented. */
static json_t *yaml_resolve(const char *s, int *err)
{
	long long i = 0;
	double d = 0;
	int r;

	if (yaml_is_null(s))
		return json_null();
	r = yaml_bool(s);
	if (r >= 0)
		return json_boolean(r);
	r = yaml_int(s, &i);
	if (r > 0)
		return json_integer(i);
	if (!r)
		r = yaml_real(s, &d);
	if (r > 0)
		return json_real(d);
	if (r < 0) {
		*err = r;
		return NULL;
	}
	return json_string(s);
}

static json_t *yaml_scalar(struct yaml_builder *b, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	size_t len = ev->data.scalar.length;
	int err = -ENOMEM;
	json_t *v;

	if (b->lines_only)
		return json_null();
	if (memchr(s, '\0', len)) {
		yaml_error(b, &ev->start_mark, "NUL characters are not allowed");
		return NULL;
	}
	if (tag && strcmp(tag, "!") && strcmp(tag, YAML_TAG_PREFIX "str") &&
	    strcmp(tag, YAML_TAG_PREFIX "int") && strcmp(tag, YAML_TAG_PREFIX "float") &&
	    strcmp(tag, YAML_TAG_PREFIX "bool") && strcmp(tag, YAML_TAG_PREFIX "null")) {
		yaml_error(b, &ev->start_mark, "unsupported YAML tag '%s'", tag);
		return NULL;
	}
	if ((!tag && ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) ||
	    (tag && (!strcmp(tag, "!") || !strcmp(tag, YAML_TAG_PREFIX "str"))))
		return json_stringn(s, len);
	v = yaml_resolve(s, &err);
	if (!v && err == -ERANGE)
		yaml_error(b, &ev->start_mark, "number '%.100s' is out of range", s);
	else if (!v)
		job_doc_nomem(b->doc);
	return v;
}

/* Tree building */

static struct yaml_frame *yaml_top(struct yaml_builder *b)
{
	return b->depth ? &b->stack[b->depth - 1] : NULL;
}

/* Append the path component of the next value of the innermost node. */
static int yaml_push_path(struct yaml_builder *b)
{
	struct yaml_frame *top = yaml_top(b);

	if (!top)
		return 0;
	if (json_is_array(top->node))
		return strbuf_addf(&b->path, "[%zu]", json_array_size(top->node));
	return strbuf_addf(&b->path, "%s%s", top->path_len ? "." : "", top->key);
}

static void yaml_pop_path(struct yaml_builder *b)
{
	struct yaml_frame *top = yaml_top(b);

	strbuf_remove(&b->path, top ? top->path_len : 0, b->path.len);
}

static int yaml_count(struct yaml_builder *b, const yaml_mark_t *mark)
{
	if (++b->nodes <= JOB_DOC_MAX_NODES)
		return 0;
	return yaml_error(b, mark, "more than %d values", JOB_DOC_MAX_NODES);
}

static int yaml_set_anchor(struct yaml_builder *b, const char *anchor, json_t *value)
{
	if (!anchor)
		return 0;
	if (json_object_set_new(b->anchor_paths, anchor, json_string(b->path.buf)) < 0 ||
	    (value && json_object_set(b->anchor_values, anchor, value) < 0))
		return job_doc_nomem(b->doc);
	return 0;
}

/* Copy the entries of the mapping @src (at @src_path) that @dst lacks. */
static int yaml_merge_one(struct yaml_builder *b, json_t *dst, const json_t *src,
			  const char *src_path)
{
	struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
	const char *key;
	json_t *v;
	int r = 0;

	json_object_foreach((json_t *)src, key, v) {
		if (json_object_get(dst, key))
			continue;
		strbuf_reset(&from);
		strbuf_reset(&to);
		if (json_object_set(dst, key, v) < 0 ||
		    strbuf_addf(&from, "%s.%s", src_path, key) < 0 ||
		    strbuf_addf(&to, "%s%s%s", b->path.buf, b->path.len ? "." : "", key) < 0) {
			r = job_doc_nomem(b->doc);
			break;
		}
		job_doc_set_alias(b->doc, to.buf, from.buf);
	}
	strbuf_release(&from);
	strbuf_release(&to);
	return r;
}

/* A merge key's value @v, placed at @src_path, into the innermost mapping. */
static int yaml_merge(struct yaml_builder *b, json_t *v, const char *src_path,
		      const yaml_mark_t *mark)
{
	struct strbuf item = STRBUF_INIT;
	json_t *dst = yaml_top(b)->node, *m;
	size_t i;
	int r = 0;

	if (json_is_object(v))
		return yaml_merge_one(b, dst, v, src_path);
	if (!json_is_array(v))
		return yaml_error(b, mark, "merge key '<<' needs a mapping or a list of mappings");
	json_array_foreach(v, i, m) {
		if (!json_is_object(m)) {
			r = yaml_error(b, mark, "merge key '<<' needs a mapping or a list of mappings");
			break;
		}
		strbuf_reset(&item);
		if (strbuf_addf(&item, "%s[%zu]", src_path, i) < 0) {
			r = job_doc_nomem(b->doc);
			break;
		}
		r = yaml_merge_one(b, dst, m, item.buf);
		if (r < 0)
			break;
	}
	strbuf_release(&item);
	return r;
}

/*
 * Place the complete value @v (a reference is taken over) as the next value
 * of the innermost node.  @alias: path of the original when @v is an alias.
 */
static int yaml_place(struct yaml_builder *b, json_t *v, const yaml_event_t *ev,
		      const char *anchor, const char *alias)
{
	struct yaml_frame *top = yaml_top(b);
	size_t mark = b->path.len;
	int r = 0;

	if (!v)
		return b->doc->err ? b->doc->err : -EINVAL;
	if (yaml_push_path(b) < 0) {
		json_decref(v);
		return job_doc_nomem(b->doc);
	}
	if (!top || json_is_array(top->node))
		job_doc_set_line(b->doc, b->path.buf, (int)ev->start_mark.line + 1);
	if (b->doc->spans && ev->type == YAML_SCALAR_EVENT &&
	    json_object_set_new(b->doc->spans, b->path.buf,
				json_pack("[I,I]", (json_int_t)ev->start_mark.index,
					  (json_int_t)ev->end_mark.index)) < 0)
		r = job_doc_nomem(b->doc);
	if (alias)
		job_doc_set_alias(b->doc, b->path.buf, alias);
	r = yaml_set_anchor(b, anchor, v);
	if (!top) {
		b->root = v;
	} else if (json_is_array(top->node)) {
		r = json_array_append_new(top->node, v) < 0 ? job_doc_nomem(b->doc) : r;
	} else if (top->merge) {
		strbuf_remove(&b->path, mark, b->path.len);
		r = r ? r : yaml_merge(b, v, alias ? alias : "", &ev->start_mark);
		json_decref(v);
	} else {
		r = json_object_set_new(top->node, top->key, v) < 0 ? job_doc_nomem(b->doc) : r;
	}
	if (top && json_is_object(top->node)) {
		free(top->key);
		top->key = NULL;
	}
	strbuf_remove(&b->path, mark, b->path.len);
	return r;
}

/* Drop the lines below the current path: its value is about to be replaced. */
static void yaml_forget_lines(struct yaml_builder *b)
{
	size_t len = b->path.len;
	const char *key;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(b->doc->lines, tmp, key, v)
		if (!strncmp(key, b->path.buf, len) && (key[len] == '.' || key[len] == '['))
			json_object_del(b->doc->lines, key);
}

static int yaml_on_key(struct yaml_builder *b, const yaml_event_t *ev)
{
	struct yaml_frame *top = yaml_top(b);
	const char *s = (const char *)ev->data.scalar.value;
	size_t mark = b->path.len;
	json_t *first;

	if (memchr(s, '\0', ev->data.scalar.length))
		return yaml_error(b, &ev->start_mark, "NUL characters are not allowed");
	top->key = strdup(s);
	if (!top->key)
		return job_doc_nomem(b->doc);
	top->merge = !b->lines_only && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		     !strcmp(s, "<<");
	if (yaml_push_path(b) < 0)
		return job_doc_nomem(b->doc);
	/* The last value wins, as LAVA's loader (PyYAML) keeps it: a warning. */
	first = json_object_get(b->doc->lines, b->path.buf);
	if (!top->merge && first) {
		if (++b->duplicates > YAML_MAX_DUPLICATES)
			return yaml_error(b, &ev->start_mark, "more than %d duplicate keys",
					  YAML_MAX_DUPLICATES);
		job_doc_warn_at(b->doc, (int)ev->start_mark.line + 1,
				"duplicate key '%.100s' (also at line %d): the value of line %d is used, as LAVA's loader keeps the last",
				s, (int)json_integer_value(first), (int)ev->start_mark.line + 1);
		yaml_forget_lines(b);
	}
	job_doc_set_line(b->doc, b->path.buf, (int)ev->start_mark.line + 1);
	strbuf_remove(&b->path, mark, b->path.len);
	return 0;
}

static int yaml_on_scalar(struct yaml_builder *b, const yaml_event_t *ev)
{
	struct yaml_frame *top = yaml_top(b);

	if (yaml_count(b, &ev->start_mark) < 0)
		return -EINVAL;
	if (top && json_is_object(top->node) && !top->key)
		return yaml_on_key(b, ev);
	return yaml_place(b, yaml_scalar(b, ev), ev, (const char *)ev->data.scalar.anchor, NULL);
}

static int yaml_on_alias(struct yaml_builder *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	struct yaml_frame *top = yaml_top(b);
	json_t *v = json_object_get(b->anchor_values, name);
	const char *orig = json_string_value(json_object_get(b->anchor_paths, name));

	if (yaml_count(b, &ev->start_mark) < 0)
		return -EINVAL;
	if (top && json_is_object(top->node) && !top->key)
		return yaml_error(b, &ev->start_mark, "alias '*%.100s' cannot be a key", name);
	if (!v && orig)
		return yaml_error(b, &ev->start_mark,
				  "alias '*%.100s' is inside the node it names", name);
	if (!v)
		return yaml_error(b, &ev->start_mark, "unknown alias '*%.100s'", name);
	return yaml_place(b, json_incref(v), ev, NULL, orig);
}

static bool yaml_container_tag_ok(const char *tag, bool mapping)
{
	return !tag || !strcmp(tag, "!") ||
	       !strcmp(tag, mapping ? YAML_TAG_PREFIX "map" : YAML_TAG_PREFIX "seq");
}

static int yaml_on_start(struct yaml_builder *b, const yaml_event_t *ev, bool mapping)
{
	const char *tag = (const char *)(mapping ? ev->data.mapping_start.tag :
					 ev->data.sequence_start.tag);
	const char *anchor = (const char *)(mapping ? ev->data.mapping_start.anchor :
					    ev->data.sequence_start.anchor);
	struct yaml_frame *top = yaml_top(b), *f;
	json_t *node;

	if (yaml_count(b, &ev->start_mark) < 0)
		return -EINVAL;
	if (top && json_is_object(top->node) && !top->key)
		return yaml_error(b, &ev->start_mark, "mapping keys must be scalars");
	if (b->depth == JOB_DOC_MAX_DEPTH)
		return yaml_error(b, &ev->start_mark, "values nested deeper than %d levels",
				  JOB_DOC_MAX_DEPTH);
	if (!b->lines_only && !yaml_container_tag_ok(tag, mapping))
		return yaml_error(b, &ev->start_mark, "unsupported YAML tag '%s'", tag);
	node = mapping ? json_object() : json_array();
	if (!node || yaml_push_path(b) < 0) {
		json_decref(node);
		return job_doc_nomem(b->doc);
	}
	if (!top || json_is_array(top->node))
		job_doc_set_line(b->doc, b->path.buf, (int)ev->start_mark.line + 1);
	f = &b->stack[b->depth++];
	memset(f, 0, sizeof(*f));
	f->node = node;
	f->path_len = b->path.len;
	f->merging = top && json_is_object(top->node) && top->merge;
	if (anchor && (!(f->anchor = strdup(anchor)) || yaml_set_anchor(b, anchor, NULL) < 0))
		return job_doc_nomem(b->doc);
	if (!top)
		b->root = json_incref(node);
	else if (json_is_array(top->node))
		return json_array_append(top->node, node) < 0 ? job_doc_nomem(b->doc) : 0;
	else if (!f->merging)
		return json_object_set(top->node, top->key, node) < 0 ? job_doc_nomem(b->doc) : 0;
	return 0;
}

static void yaml_frame_release(struct yaml_frame *f)
{
	json_decref(f->node);
	free(f->key);
	free(f->anchor);
	memset(f, 0, sizeof(*f));
}

static int yaml_on_end(struct yaml_builder *b, const yaml_event_t *ev)
{
	struct yaml_frame f = b->stack[--b->depth], *top = yaml_top(b);
	int r = 0;

	if (f.anchor && json_object_set(b->anchor_values, f.anchor, f.node) < 0)
		r = job_doc_nomem(b->doc);
	if (f.merging && !r) {
		char *src = strdup(b->path.buf);

		yaml_pop_path(b);
		r = src ? yaml_merge(b, f.node, src, &ev->start_mark) : job_doc_nomem(b->doc);
		free(src);
	} else {
		yaml_pop_path(b);
	}
	if (top && json_is_object(top->node)) {
		free(top->key);
		top->key = NULL;
	}
	yaml_frame_release(&f);
	return r;
}

static int yaml_on_event(struct yaml_builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->documents++)
			return yaml_error(b, &ev->start_mark, "only one YAML document is allowed");
		return 0;
	case YAML_SCALAR_EVENT:
		return yaml_on_scalar(b, ev);
	case YAML_ALIAS_EVENT:
		return yaml_on_alias(b, ev);
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		return yaml_on_start(b, ev, ev->type == YAML_MAPPING_START_EVENT);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		return yaml_on_end(b, ev);
	default:
		return 0;
	}
}

/* Report what libyaml could not parse. */
static int yaml_parse_error(struct yaml_builder *b, const yaml_parser_t *p, const char *text,
			    size_t len)
{
	const char *ctx = p->context ? p->context : "";
	size_t i, line = 1;

	if (p->error == YAML_MEMORY_ERROR)
		return job_doc_nomem(b->doc);
	if (b->lines_only)
		return -EINVAL;
	if (p->error == YAML_READER_ERROR) {
		for (i = 0; i < p->problem_offset && i < len; i++)
			line += text[i] == '\n';
		return job_doc_error_at(b->doc, (int)line, "invalid YAML: %s", p->problem);
	}
	return job_doc_error_at(b->doc, (int)p->problem_mark.line + 1,
				"invalid YAML: %s%s%s (column %zu)", p->problem ? p->problem : "error",
				*ctx ? " " : "", ctx, p->problem_mark.column + 1);
}

static int yaml_build(struct yaml_builder *b, const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	int r = 0;

	if (!yaml_parser_initialize(&parser))
		return job_doc_nomem(b->doc);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && !r) {
		if (!yaml_parser_parse(&parser, &ev)) {
			r = yaml_parse_error(b, &parser, text, len);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		r = yaml_on_event(b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return r;
}

int job_yaml_load(struct job_doc *doc, const char *text, size_t len, bool lines_only)
{
	struct yaml_builder b = { .doc = doc, .lines_only = lines_only };
	int r;

	strbuf_init(&b.path);
	b.anchor_values = json_object();
	b.anchor_paths = json_object();
	if (!b.anchor_values || !b.anchor_paths)
		r = job_doc_nomem(doc);
	else
		r = yaml_build(&b, text, len);
	while (b.depth)
		yaml_frame_release(&b.stack[--b.depth]);
	if (!r && !lines_only)
		doc->root = b.root;
	else
		json_decref(b.root);
	json_decref(b.anchor_values);
	json_decref(b.anchor_paths);
	strbuf_release(&b.path);
	return r;
}
