// SPDX-License-Identifier: GPL-2.0-or-later
/* job_doc.c -- a job document under validation: paths, lines, diagnostics, typed getters */
#include "job/job_doc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "job/job.h"

/* Longest user text quoted in a message. */
#define JOB_DOC_QUOTE_MAX 100

int job_doc_init(struct job_doc *doc, const char *file)
{
	memset(doc, 0, sizeof(*doc));
	doc->file = file;
	strbuf_init(&doc->path);
	doc->lines = json_object();
	doc->aliases = json_object();
	if (!doc->lines || !doc->aliases) {
		json_decref(doc->lines);
		json_decref(doc->aliases);
		return -ENOMEM;
	}
	return 0;
}

int job_doc_nomem(struct job_doc *doc)
{
	doc->err = -ENOMEM;
	return -ENOMEM;
}

/* Paths and lines */

size_t job_doc_enter(struct job_doc *doc, const char *key)
{
	size_t mark = doc->path.len;

	if ((mark && strbuf_addch(&doc->path, '.') < 0) || strbuf_addstr(&doc->path, key) < 0)
		job_doc_nomem(doc);
	return mark;
}

size_t job_doc_enter_index(struct job_doc *doc, size_t i)
{
	size_t mark = doc->path.len;

	if (strbuf_addf(&doc->path, "[%zu]", i) < 0)
		job_doc_nomem(doc);
	return mark;
}

void job_doc_leave(struct job_doc *doc, size_t mark)
{
	strbuf_remove(&doc->path, mark, doc->path.len - mark);
}

void job_doc_set_line(struct job_doc *doc, const char *path, int line)
{
	if (json_object_set_new(doc->lines, path, json_integer(line)) < 0)
		job_doc_nomem(doc);
}

void job_doc_set_alias(struct job_doc *doc, const char *path, const char *original)
{
	if (json_object_set_new(doc->aliases, path, json_string(original)) < 0)
		job_doc_nomem(doc);
}

/* Where the last component of @path's first @end bytes starts ('.' or '['); 0 if at 0. */
static size_t job_doc_last(const char *path, size_t end)
{
	while (end > 0 && path[end - 1] != '.' && path[end - 1] != '[')
		end--;
	return end ? end - 1 : 0;
}

/*
 * Rewrite @path when one of its prefixes (longest first) was placed by an
 * alias: "b.x[1]" with the alias "b" -> "a" becomes "a.x[1]".
 */
static bool job_doc_unalias(const json_t *aliases, struct strbuf *path)
{
	struct strbuf p = STRBUF_INIT;
	size_t end = path->len;
	const char *orig;
	char save;

	for (;;) {
		save = path->buf[end];
		path->buf[end] = '\0';
		orig = json_string_value(json_object_get(aliases, path->buf));
		path->buf[end] = save;
		if (orig)
			break;
		end = job_doc_last(path->buf, end);
		if (!end)
			return false;
	}
	if (strbuf_addstr(&p, orig) < 0 || strbuf_add(&p, path->buf + end, path->len - end) < 0) {
		strbuf_release(&p);
		return false;
	}
	strbuf_release(path);
	*path = p;
	return true;
}

/* Drop the last component of @path; false at the root. */
static bool job_doc_parent(struct strbuf *path)
{
	if (!path->len)
		return false;
	strbuf_remove(path, job_doc_last(path->buf, path->len), path->len);
	return true;
}

int job_doc_path_line(const json_t *lines, const json_t *aliases, const char *path)
{
	struct strbuf p = STRBUF_INIT;
	int hops = 0, line = 0;
	json_t *v;

	if (!lines || strbuf_addstr(&p, path) < 0)
		return 0;
	for (;;) {
		v = json_object_get(lines, p.buf);
		if (json_is_integer(v)) {
			line = (int)json_integer_value(v);
			break;
		}
		if (hops < JOB_DOC_MAX_HOPS && aliases && p.len && job_doc_unalias(aliases, &p)) {
			hops++;
			continue;
		}
		if (!job_doc_parent(&p))
			break;
	}
	strbuf_release(&p);
	return line;
}

const json_t *job_doc_path_value(const json_t *map, const json_t *aliases, const char *path)
{
	struct strbuf p = STRBUF_INIT;
	const json_t *v = NULL;
	int hops = 0;

	if (!map || strbuf_addstr(&p, path) < 0)
		return NULL;
	while (!(v = json_object_get(map, p.buf)) && hops++ < JOB_DOC_MAX_HOPS && aliases &&
	       p.len && job_doc_unalias(aliases, &p))
		;
	strbuf_release(&p);
	return v;
}

int job_doc_line(const struct job_doc *doc, const char *key)
{
	struct strbuf p = STRBUF_INIT;
	int line;

	if (!key)
		return job_doc_path_line(doc->lines, doc->aliases, doc->path.buf);
	if (strbuf_addf(&p, "%s%s%s", doc->path.buf, doc->path.len ? "." : "", key) < 0)
		return job_doc_path_line(doc->lines, doc->aliases, doc->path.buf);
	line = job_doc_path_line(doc->lines, doc->aliases, p.buf);
	strbuf_release(&p);
	return line;
}

/* Diagnostics */

static int job_doc_add_msg(struct job_doc *doc, enum job_doc_level level, int line, char *text)
{
	struct job_doc_msg *m;
	size_t alloc;

	if (!text)
		return job_doc_nomem(doc);
	if (doc->n_msgs == doc->alloc_msgs) {
		alloc = doc->alloc_msgs ? doc->alloc_msgs * 2 : 16;
		m = realloc(doc->msgs, alloc * sizeof(*m));
		if (!m) {
			free(text);
			return job_doc_nomem(doc);
		}
		doc->msgs = m;
		doc->alloc_msgs = alloc;
	}
	m = &doc->msgs[doc->n_msgs];
	m->line = line;
	m->seq = doc->n_msgs++;
	m->level = level;
	m->text = text;
	doc->n_errors += level == JOB_DOC_ERROR;
	doc->n_warnings += level == JOB_DOC_WARNING;
	return level == JOB_DOC_ERROR ? -EINVAL : 0;
}

/* "PATH: cause" at the line of the current path's @key. */
static int job_doc_vadd(struct job_doc *doc, enum job_doc_level level, const char *key,
			const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	if (doc->path.len)
		strbuf_addf(&sb, "%s: ", doc->path.buf);
	strbuf_vaddf(&sb, fmt, ap);
	return job_doc_add_msg(doc, level, job_doc_line(doc, key), strbuf_detach(&sb, NULL));
}

int job_doc_error(struct job_doc *doc, const char *key, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = job_doc_vadd(doc, JOB_DOC_ERROR, key, fmt, ap);
	va_end(ap);
	return r;
}

int job_doc_warn(struct job_doc *doc, const char *key, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = job_doc_vadd(doc, JOB_DOC_WARNING, key, fmt, ap);
	va_end(ap);
	return r;
}

int job_doc_note(struct job_doc *doc, const char *key, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = job_doc_vadd(doc, JOB_DOC_NOTE, key, fmt, ap);
	va_end(ap);
	return r;
}

int job_doc_error_at(struct job_doc *doc, int line, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return job_doc_add_msg(doc, JOB_DOC_ERROR, line, strbuf_detach(&sb, NULL));
}

int job_doc_warn_at(struct job_doc *doc, int line, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return job_doc_add_msg(doc, JOB_DOC_WARNING, line, strbuf_detach(&sb, NULL));
}

static int job_doc_msg_cmp(const void *a, const void *b)
{
	const struct job_doc_msg *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One message into @d, its level in front of warnings and notes. */
static int job_doc_put(struct job_doc *doc, struct diag *d, const struct job_doc_msg *m)
{
	static const char *const prefix[] = { "", "warning: ", "note: " };

	if (!d)
		return 0;
	return diag_add(d, doc->file, m->line, "%s%s", prefix[m->level], m->text) == -ENOMEM ?
		       -ENOMEM : 0;
}

int job_doc_finish(struct job_doc *doc, struct diag *diag)
{
	struct diag *out = doc->n_errors ? diag : doc->notices;
	int r = doc->err;
	size_t i;

	if (doc->n_msgs)
		qsort(doc->msgs, doc->n_msgs, sizeof(*doc->msgs), job_doc_msg_cmp);
	for (i = 0; i < doc->n_msgs; i++) {
		if (!r && i < JOB_DOC_MAX_MSGS)
			r = job_doc_put(doc, out, &doc->msgs[i]);
		free(doc->msgs[i].text);
	}
	if (!r && doc->n_msgs > JOB_DOC_MAX_MSGS && out &&
	    diag_add(out, doc->file, 0, "%zu more problems not shown",
		     doc->n_msgs - JOB_DOC_MAX_MSGS) == -ENOMEM)
		r = -ENOMEM;
	if (!r && doc->n_errors)
		r = -EINVAL;
	free(doc->msgs);
	doc->msgs = NULL;
	doc->n_msgs = doc->alloc_msgs = doc->n_errors = 0;
	json_decref(doc->root);
	json_decref(doc->lines);
	json_decref(doc->aliases);
	json_decref(doc->spans);
	doc->root = doc->lines = doc->aliases = NULL;
	strbuf_release(&doc->path);
	return r;
}

/* Shape: depth and size after alias expansion */

static int job_doc_count(const json_t *v, int depth, size_t *nodes)
{
	const char *key;
	json_t *child;
	size_t i;
	int r = 0;

	if (++*nodes > JOB_DOC_MAX_NODES)
		return -E2BIG;
	if (depth >= JOB_DOC_MAX_DEPTH && (json_is_object(v) || json_is_array(v)))
		return -ELOOP;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, child)
			if ((r = job_doc_count(child, depth + 1, nodes)) < 0)
				break;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child)
			if ((r = job_doc_count(child, depth + 1, nodes)) < 0)
				break;
	}
	return r;
}

int job_doc_check_shape(struct job_doc *doc)
{
	size_t nodes = 0;
	int r = job_doc_count(doc->root, 0, &nodes);

	if (r == -E2BIG)
		return job_doc_error_at(doc, 0, "more than %d values (aliases count each time they "
					"are used)", JOB_DOC_MAX_NODES);
	if (r == -ELOOP)
		return job_doc_error_at(doc, 0, "values nested deeper than %d levels",
					JOB_DOC_MAX_DEPTH);
	return 0;
}

/* Checks and typed getters */

const char *job_doc_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		break;
	}
	return "null";
}

static const char *job_doc_wanted(json_type type)
{
	switch (type) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "a number";
	}
}

static const struct job_doc_key *job_doc_find_key(const struct job_doc_key *keys,
						  const char *name)
{
	for (; keys->name; keys++)
		if (!strcmp(keys->name, name))
			return keys;
	return NULL;
}

int job_doc_check_keys(struct job_doc *doc, const json_t *obj, const struct job_doc_key *keys,
		       const struct job_doc_key *more)
{
	const struct job_doc_key *k;
	const char *key;
	json_t *v;
	int r = 0;

	json_object_foreach((json_t *)obj, key, v) {
		k = job_doc_find_key(keys, key);
		if (!k && more)
			k = job_doc_find_key(more, key);
		if (!k)
			r = job_doc_error(doc, key, "unknown key '%.*s'", JOB_DOC_QUOTE_MAX, key);
		else if (k->status == JOB_KEY_UNSUPPORTED)
			r = job_doc_error(doc, key, "unsupported key '%s': %s", key, k->reason);
		else if (k->status == JOB_KEY_IGNORED)
			job_doc_note(doc, key, "'%s' ignored: %s", key, k->reason);
	}
	return r;
}

int job_doc_get(struct job_doc *doc, const json_t *obj, const char *key, json_type type,
		bool required, json_t **ret)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		if (required)
			return job_doc_error(doc, NULL, "missing required key '%s'", key);
		return 0;
	}
	if (json_typeof(v) != type && !(type == JSON_TRUE && json_is_boolean(v)) &&
	    !(type == JSON_REAL && json_is_number(v)))
		return job_doc_error(doc, key, "'%s' must be %s, not %s", key,
				     job_doc_wanted(type), job_doc_type_name(v));
	if ((json_is_array(v) && json_array_size(v) > JOB_DOC_MAX_ITEMS) ||
	    (json_is_object(v) && json_object_size(v) > JOB_DOC_MAX_ITEMS))
		return job_doc_error(doc, key, "'%s' has more than %d entries", key,
				     JOB_DOC_MAX_ITEMS);
	*ret = v;
	return 1;
}

int job_doc_get_str(struct job_doc *doc, const json_t *obj, const char *key, bool required,
		    const char **ret)
{
	json_t *v;
	int r = job_doc_get(doc, obj, key, JSON_STRING, required, &v);

	if (r <= 0)
		return r;
	if (required && !json_string_length(v))
		return job_doc_error(doc, key, "'%s' must not be empty", key);
	*ret = json_string_value(v);
	return 1;
}

int job_doc_dup_str(struct job_doc *doc, const json_t *obj, const char *key, bool required,
		    char **ret)
{
	const char *s;
	char *dup;
	int r = job_doc_get_str(doc, obj, key, required, &s);

	if (r <= 0)
		return r;
	dup = strdup(s);
	if (!dup)
		return job_doc_nomem(doc);
	*ret = dup;
	return 1;
}

int job_doc_get_int(struct job_doc *doc, const json_t *obj, const char *key, long long min,
		    long long max, long long *ret)
{
	json_t *v;
	int r = job_doc_get(doc, obj, key, JSON_INTEGER, false, &v);

	if (r <= 0)
		return r;
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return job_doc_error(doc, key, "'%s' must be between %lld and %lld, not %lld", key,
				     min, max, (long long)json_integer_value(v));
	*ret = json_integer_value(v);
	return 1;
}

int job_doc_get_bool(struct job_doc *doc, const json_t *obj, const char *key, bool *ret)
{
	json_t *v;
	int r = job_doc_get(doc, obj, key, JSON_TRUE, false, &v);

	if (r <= 0)
		return r;
	*ret = json_is_true(v);
	return 1;
}

/* A list of strings, each a valid regex if @regex. */
static int job_doc_strv(struct job_doc *doc, const json_t *obj, const char *key, bool regex,
			char ***ret)
{
	char **v = NULL;
	json_t *list, *item;
	size_t i, mark;
	int r = job_doc_get(doc, obj, key, JSON_ARRAY, false, &list);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, key);
	json_array_foreach(list, i, item) {
		size_t m = job_doc_enter_index(doc, i);

		if (!json_is_string(item))
			r = job_doc_error(doc, NULL, "must be a string, not %s",
					  job_doc_type_name(item));
		else if (regex && job_doc_regex(doc, NULL, json_string_value(item), NULL) < 0)
			r = -EINVAL;
		else if (r > 0 && strv_push(&v, json_string_value(item)) < 0)
			r = job_doc_nomem(doc);
		job_doc_leave(doc, m);
	}
	job_doc_leave(doc, mark);
	if (r <= 0) {
		strv_free(v);
		return r;
	}
	*ret = v;
	return 1;
}

int job_doc_get_strv(struct job_doc *doc, const json_t *obj, const char *key, char ***ret)
{
	return job_doc_strv(doc, obj, key, false, ret);
}

int job_doc_get_regexv(struct job_doc *doc, const json_t *obj, const char *key, char ***ret)
{
	return job_doc_strv(doc, obj, key, true, ret);
}

int job_doc_regex(struct job_doc *doc, const char *key, const char *re, pcre2_code **ret)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE offset;
	pcre2_code *code;
	int err;

	code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &offset, NULL);
	if (!code) {
		if (err == PCRE2_ERROR_NOMEMORY)
			return job_doc_nomem(doc);
		pcre2_get_error_message(err, msg, sizeof(msg));
		return job_doc_error(doc, key, "invalid regex '%.*s'%s%s%s: %s at offset %zu",
				     JOB_DOC_QUOTE_MAX, re, key ? " in '" : "", key ? key : "",
				     key ? "'" : "", (char *)msg, (size_t)offset);
	}
	if (ret)
		*ret = code;
	else
		pcre2_code_free(code);
	return 0;
}

int job_doc_get_regex(struct job_doc *doc, const json_t *obj, const char *key, bool required,
		      char **ret)
{
	const char *s;
	char *dup;
	int r = job_doc_get_str(doc, obj, key, required, &s);

	if (r <= 0)
		return r;
	if (job_doc_regex(doc, key, s, NULL) < 0)
		return -EINVAL;
	dup = strdup(s);
	if (!dup)
		return job_doc_nomem(doc);
	*ret = dup;
	return 1;
}

static const struct {
	const char *name;
	uint64_t usec;
} job_doc_units[] = {
	{ "days", 24 * 3600 * 1000000ULL },
	{ "hours", 3600 * 1000000ULL },
	{ "minutes", 60 * 1000000ULL },
	{ "seconds", 1000000ULL },
};

static const struct job_doc_key job_doc_timeout_keys[] = {
	{ "days", JOB_KEY_KNOWN, NULL },
	{ "hours", JOB_KEY_KNOWN, NULL },
	{ "minutes", JOB_KEY_KNOWN, NULL },
	{ "seconds", JOB_KEY_KNOWN, NULL },
	{ "skip", JOB_KEY_KNOWN, NULL },	/* an action's only: job_doc_get_timeout_skip() */
	{ NULL, 0, NULL },
};

int job_doc_get_timeout(struct job_doc *doc, const json_t *obj, const char *key, uint64_t *ret)
{
	return job_doc_get_timeout_skip(doc, obj, key, ret, NULL);
}

int job_doc_get_timeout_skip(struct job_doc *doc, const json_t *obj, const char *key,
			     uint64_t *ret, bool *skip)
{
	uint64_t total = 0;
	long long n;
	json_t *t;
	size_t i, mark;
	int bad = 0, r = job_doc_get(doc, obj, key, JSON_OBJECT, false, &t);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, key);
	r = job_doc_check_keys(doc, t, job_doc_timeout_keys, NULL) < 0 ? -EINVAL : 1;
	if (!skip && json_object_get(t, "skip"))
		bad = job_doc_error(doc, "skip", "'skip' only applies to the timeout of an action");
	else if (skip && job_doc_get_bool(doc, t, "skip", skip) < 0)
		bad = -EINVAL;
	for (i = 0; i < sizeof(job_doc_units) / sizeof(job_doc_units[0]); i++) {
		n = 0;
		if (job_doc_get_int(doc, t, job_doc_units[i].name, 0,
				    (long long)(JOB_MAX_TIMEOUT / job_doc_units[i].usec), &n) < 0)
			r = -EINVAL;
		total += (uint64_t)n * job_doc_units[i].usec;
	}
	if (r > 0 && !total)
		r = job_doc_error(doc, NULL, "timeout must be longer than 0 seconds");
	else if (r > 0 && total > JOB_MAX_TIMEOUT)
		r = job_doc_error(doc, NULL, "timeout must be at most %llu seconds",
				  JOB_MAX_TIMEOUT / 1000000ULL);
	if (bad)
		r = bad;
	job_doc_leave(doc, mark);
	if (r > 0)
		*ret = total;
	return r;
}

bool job_doc_is_name(const char *s, size_t max, const char *punct)
{
	const char *p;

	if (!*s || strlen(s) > max)
		return false;
	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(punct, *p))
			return false;
	return true;
}

static const char *const job_doc_url_schemes[] = { "http://", "https://", "file:///", NULL };

int job_doc_get_url(struct job_doc *doc, const json_t *obj, const char *key, char **ret)
{
	const char *url, *p;
	size_t i;
	int r = job_doc_get_str(doc, obj, key, true, &url);

	if (r <= 0)
		return r;
	if (strlen(url) > JOB_DOC_MAX_URL)
		return job_doc_error(doc, key, "'%s' is longer than %d bytes", key, JOB_DOC_MAX_URL);
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return job_doc_error(doc, key, "'%s' must not contain blanks or control "
					     "characters", key);
	for (i = 0; job_doc_url_schemes[i]; i++)
		if (!strncmp(url, job_doc_url_schemes[i], strlen(job_doc_url_schemes[i])))
			break;
	if (!job_doc_url_schemes[i])
		return job_doc_error(doc, key, "unsupported URL '%.*s' (supported: http://, "
				     "https://, file:///)", JOB_DOC_QUOTE_MAX, url);
	return job_doc_dup_str(doc, obj, key, true, ret);
}

/* The shortest text that reads back as @d. */
static char *job_doc_real_str(double d)
{
	char buf[64];
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", prec, d);
	return strdup(buf);
}

char *job_doc_scalar_str(const json_t *v)
{
	char *s = NULL;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strdup(json_string_value(v));
	case JSON_INTEGER:
		if (asprintf(&s, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) < 0)
			return NULL;
		return s;
	case JSON_REAL:
		return job_doc_real_str(json_real_value(v));
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	default:
		return strdup("");
	}
}
