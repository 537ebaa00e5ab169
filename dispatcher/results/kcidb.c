// SPDX-License-Identifier: GPL-2.0-or-later
/* kcidb.c -- a finished job as a KCIDB v5.3 document: checkout, build, boot test and children */
#include "results/kcidb.h"

#define PCRE2_CODE_UNIT_WIDTH 8

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <pcre2.h>

#include "core/strbuf.h"
#include "results/report.h"
#include "results/utf8.h"

#define ID_PATTERN "^[a-z0-9_]+:"
#define PATH_PATTERN "^([a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*)?$"
#define DATE_PATTERN "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"
#define COMPATIBLE_PATTERN "^[^ ]+(,[^ ]+)*$"
#define PATH_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define KCIDB_MAX_ID_SUFFIX 16

enum field_type { F_STRING, F_BOOL, F_NUMBER, F_OBJECT, F_STRINGS };

/* A KCIDB field labd copies from a job's metadata, with its schema pattern. */
struct field {
	const char *name;
	enum field_type type;
	const char *pattern;	/* or NULL */
};

static const struct field checkout_fields[] = {
	{ "tree_name", F_STRING, NULL },
	{ "git_repository_url", F_STRING, "^https://" },
	{ "git_repository_branch", F_STRING, NULL },
	{ "git_repository_branch_tip", F_BOOL, NULL },
	{ "git_commit_hash", F_STRING, "^[0-9a-f]{40}$" },
	{ "git_commit_name", F_STRING, NULL },
	{ "git_commit_tags", F_STRINGS, NULL },
	{ "git_commit_message", F_STRING, NULL },
	{ "patchset_hash", F_STRING, "^$|^[0-9a-f]{64}$" },
	{ "comment", F_STRING, NULL },
	{ "start_time", F_STRING, DATE_PATTERN },
	{ "log_url", F_STRING, "^[a-z][a-z0-9+.-]*:" },
	{ "valid", F_BOOL, NULL },
	{ "misc", F_OBJECT, NULL },
	{ NULL, 0, NULL },
};

static const struct field build_fields[] = {
	{ "comment", F_STRING, NULL },
	{ "start_time", F_STRING, DATE_PATTERN },
	{ "duration", F_NUMBER, NULL },
	{ "architecture", F_STRING, "^[a-z0-9_]*$" },
	{ "command", F_STRING, NULL },
	{ "compiler", F_STRING, NULL },
	{ "config_name", F_STRING, NULL },
	{ "config_url", F_STRING, "^[a-z][a-z0-9+.-]*:" },
	{ "log_url", F_STRING, "^[a-z][a-z0-9+.-]*:" },
	{ "status", F_STRING, "^(FAIL|ERROR|MISS|PASS|DONE|SKIP)$" },
	{ "misc", F_OBJECT, NULL },
	{ NULL, 0, NULL },
};

static const char *const checkout_keys[] = {
	"id", "origin", "tree_name", "git_repository_url", "git_repository_branch",
	"git_repository_branch_tip", "git_commit_hash", "git_commit_name", "git_commit_tags",
	"git_commit_message", "patchset_hash", "comment", "start_time", "log_url", "valid",
	"misc", NULL,
};

static const char *const build_keys[] = {
	"id", "origin", "checkout_id", "comment", "start_time", "duration", "architecture",
	"command", "compiler", "config_name", "config_url", "log_url", "status", "misc", NULL,
};

static const char *const test_keys[] = {
	"id", "origin", "build_id", "path", "status", "comment", "start_time", "duration",
	"environment", "log_url", "log_excerpt", "number", "misc", NULL,
};

/* ---- small helpers ---- */

static bool matches(const char *pattern, const char *s, size_t len)
{
	pcre2_match_data *md;
	pcre2_code *code;
	PCRE2_SIZE off;
	int err, r = -1;

	code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off,
			     NULL);
	md = code ? pcre2_match_data_create_from_pattern(code, NULL) : NULL;
	if (md)
		r = pcre2_match(code, (PCRE2_SPTR)s, len, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(code);
	return r >= 0;
}

/* A string without NUL (KCIDB strings match "^[^\\0]*$"). */
static bool is_valid_string(const json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

int kcidb_origin_valid(const char *origin)
{
	return origin && matches(KCIDB_ORIGIN_PATTERN, origin, strlen(origin));
}

/* Console bytes as a KCIDB string: valid UTF-8, no NUL, the last @max characters. */
static json_t *text_json(const char *data, size_t len, size_t max_chars)
{
	struct strbuf sb = STRBUF_INIT;
	size_t start = max_chars ? utf8_tail_start(data, len, max_chars) : 0;
	json_t *s = NULL;

	if (utf8_sanitize(data + start, len - start, UTF8_DROP_NUL, max_chars, &sb) >= 0)
		s = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return s;
}

static json_t *time_json(uint64_t usec)
{
	char buf[48];

	report_time(usec, buf, sizeof(buf));
	return json_string(buf);
}

/* "<origin>:<id>" for an id given without origin prefix; the id as it is otherwise. */
static json_t *id_json(const char *origin, const json_t *given, const char *fallback)
{
	const char *id = is_valid_string(given) ? json_string_value(given) : NULL;
	char buf[1024];

	if (id && *id && matches(ID_PATTERN, id, strlen(id)))
		return json_string(id);
	snprintf(buf, sizeof(buf), "%s:%s", origin, id && *id ? id : fallback);
	return json_string(buf);
}

static bool field_ok(const struct field *f, const json_t *v)
{
	size_t i;
	json_t *e;

	switch (f->type) {
	case F_STRING:
		return is_valid_string(v) &&
		       (!f->pattern || matches(f->pattern, json_string_value(v), json_string_length(v)));
	case F_BOOL:
		return json_is_boolean(v);
	case F_NUMBER:
		return json_is_number(v);
	case F_OBJECT:
		return json_is_object(v);
	case F_STRINGS:
		if (!json_is_array(v))
			return false;
		json_array_foreach(v, i, e)
			if (!is_valid_string(e))
				return false;
		return true;
	}
	return false;
}

/* Copy the fields of @src that the schema knows and that are valid into @dst. */
static void copy_fields(json_t *dst, const json_t *src, const struct field *fields)
{
	const struct field *f;

	for (f = fields; f->name; f++) {
		json_t *v = json_object_get(src, f->name);

		if (v && field_ok(f, v))
			json_object_set(dst, f->name, v);
	}
}

/* ---- paths and statuses ---- */

int kcidb_path_append(struct strbuf *path, const char *name)
{
	const char *p = name;
	int err = 0;

	while (*p && !err) {
		size_t n = strcspn(p, ".");
		size_t i;

		if (n) {
			if (path->len)
				err = strbuf_addch(path, '.');
			for (i = 0; i < n && !err; i++)
				err = strbuf_addch(path, strchr(PATH_CHARS, p[i]) ? p[i] : '_');
		}
		p += n;
		if (*p == '.')
			p++;
	}
	return err;
}

const char *kcidb_result_status(const char *result)
{
	if (!strcmp(result, "pass"))
		return "PASS";
	if (!strcmp(result, "fail"))
		return "FAIL";
	if (!strcmp(result, "skip"))
		return "SKIP";
	return "ERROR";
}

const char *kcidb_boot_status(const struct report *r)
{
	switch (r->health) {
	case JOB_HEALTH_UNKNOWN:
		return NULL;
	case JOB_HEALTH_COMPLETE:
		return "PASS";
	case JOB_HEALTH_CANCELED:
		return report_reached(r, "shell") ? "PASS" : "ERROR";
	case JOB_HEALTH_INCOMPLETE:
		break;
	}
	if (report_reached(r, "shell"))
		return "PASS";
	switch (r->error_type) {
	case ERROR_JOB:
		return report_reached(r, "kernel-start") ? "FAIL" : "MISS";
	case ERROR_TEST:
		return "ERROR";
	default:
		return "MISS";
	}
}

/* ---- checkout and build ---- */

/* Adds the checkout and build (unless the metadata names a foreign build); the build id. */
static json_t *add_build(json_t *doc, const struct report *r, const char *origin)
{
	const json_t *meta = json_object_get(r->metadata, "kcidb");
	const json_t *mco = json_object_get(meta, "checkout"), *mb = json_object_get(meta, "build");
	json_t *checkout, *build, *build_id;
	char fallback[64];

	snprintf(fallback, sizeof(fallback), "job-%lld", (long long)r->job_id);
	build_id = json_object_get(meta, "build_id");
	if (is_valid_string(build_id) && json_string_length(build_id))
		return id_json(origin, build_id, fallback);
	checkout = json_pack("{s:o, s:s}", "id", id_json(origin, json_object_get(mco, "id"), fallback),
			     "origin", origin);
	build = json_pack("{s:o, s:s, s:O}", "id", id_json(origin, json_object_get(mb, "id"), fallback),
			  "origin", origin, "checkout_id", json_object_get(checkout, "id"));
	if (!checkout || !build) {
		json_decref(checkout);
		json_decref(build);
		return NULL;
	}
	copy_fields(checkout, mco, checkout_fields);
	copy_fields(build, mb, build_fields);
	build_id = json_incref(json_object_get(build, "id"));
	json_array_append_new(json_object_get(doc, "checkouts"), checkout);
	json_array_append_new(json_object_get(doc, "builds"), build);
	return build_id;
}

/* ---- tests ---- */

static json_t *environment(const struct report *r)
{
	const json_t *compat = json_object_get(json_object_get(r->metadata, "kcidb"), "compatible");
	json_t *env = json_pack("{s:s+, s:{s:s, s:s*, s:s, s:s, s:I}}", "comment", "board ",
				r->device ? r->device : "(none)", "misc", "platform", r->device_type,
				"board", r->device, "device_type", r->device_type, "lab", r->lab,
				"job_id", (json_int_t)r->job_id);
	const json_t *c;
	size_t i;

	if (!env || !json_is_array(compat))
		return env;
	json_array_foreach(compat, i, c)
		if (!is_valid_string(c) ||
		    !matches(COMPATIBLE_PATTERN, json_string_value(c), json_string_length(c)))
			return env;
	json_object_set(env, "compatible", (json_t *)compat);
	return env;
}

static json_t *boot_test(const struct report *r, const char *origin, json_t *build_id)
{
	const char *status = kcidb_boot_status(r);
	char id[256];
	json_t *t;

	snprintf(id, sizeof(id), "%s:job-%lld.boot", origin, (long long)r->job_id);
	t = json_pack("{s:s, s:s, s:O, s:s, s:o, s:{s:s, s:s, s:s*, s:s, s:s, s:s, s:s*, s:i}}",
		      "id", id, "origin", origin, "build_id", build_id, "path", "boot",
		      "environment", environment(r), "misc", "runtime", r->lab, "lab", r->lab,
		      "board", r->device, "device_type", r->device_type, "health",
		      job_health_name(r->health), "error_type", error_type_name(r->error_type),
		      "error_msg", r->error_msg, "attempt", r->attempt);
	if (!t)
		return NULL;
	if (status)
		json_object_set_new(t, "status", json_string(status));
	if (r->started)
		json_object_set_new(t, "start_time", time_json(r->started));
	if (r->started && r->ended >= r->started)
		json_object_set_new(t, "duration", json_real((double)(r->ended - r->started) / 1e6));
	if (r->log_url)
		json_object_set_new(t, "log_url", json_string(r->log_url));
	if (r->log_tail_len)
		json_object_set_new(t, "log_excerpt",
				    text_json(r->log_tail, r->log_tail_len, KCIDB_MAX_EXCERPT));
	return t;
}

static void set_excerpt(json_t *t, const struct report_result *res)
{
	const char *kexcerpt = json_string_value(json_object_get(res->extra, "excerpt"));

	if (kexcerpt && *kexcerpt)
		json_object_set_new(t, "log_excerpt",
				    text_json(kexcerpt, strlen(kexcerpt), KCIDB_MAX_EXCERPT));
	else if (res->excerpt_len)
		json_object_set_new(t, "log_excerpt",
				    text_json(res->excerpt, res->excerpt_len, KCIDB_MAX_EXCERPT));
}

/* The id of a child: "<origin>:job-<J>.<path>", "#2", "#3" ... when the path repeats. */
static void child_id(const json_t *tests, const char *base, char *buf, size_t len)
{
	unsigned n = 1;
	bool taken;

	snprintf(buf, len, "%s", base);
	do {
		size_t i;
		json_t *t;

		taken = false;
		json_array_foreach(tests, i, t)
			if (!strcmp(json_string_value(json_object_get(t, "id")), buf))
				taken = true;
		if (taken)
			snprintf(buf, len, "%s#%u", base, ++n);
	} while (taken);
}

static json_t *child_test(const struct report *r, const struct report_result *res,
			  const char *origin, json_t *build_id, const json_t *tests)
{
	struct strbuf path = STRBUF_INIT;
	char base[1024], id[1024 + KCIDB_MAX_ID_SUFFIX];
	json_t *t;

	strbuf_addstr(&path, "boot");
	kcidb_path_append(&path, *res->suite ? res->suite : "results");
	kcidb_path_append(&path, *res->name ? res->name : "unnamed");
	snprintf(base, sizeof(base), "%s:job-%lld.%s", origin, (long long)r->job_id, path.buf);
	child_id(tests, base, id, sizeof(id));
	t = json_pack("{s:s, s:s, s:O, s:s, s:s, s:{s:o, s:o, s:s, s:s}}", "id", id, "origin",
		      origin, "build_id", build_id, "path", path.buf, "status",
		      kcidb_result_status(res->result), "misc", "suite",
		      text_json(res->suite, strlen(res->suite), 0), "name",
		      text_json(res->name, strlen(res->name), 0), "result", res->result, "runtime",
		      r->lab);
	strbuf_release(&path);
	if (!t)
		return NULL;
	if (r->log_url)
		json_object_set_new(t, "log_url", json_string(r->log_url));
	if (res->log_start > 0)
		json_object_set_new(json_object_get(t, "misc"), "log_lines",
				    json_pack("[I, I]", (json_int_t)res->log_start,
					      (json_int_t)res->log_end));
	if (res->has_measurement)
		json_object_set_new(t, "number", json_pack("{s:f}", "value", res->measurement));
	if (res->has_measurement && res->units && *res->units)
		json_object_set_new(json_object_get(t, "number"), "unit",
				    text_json(res->units, strlen(res->units), 0));
	set_excerpt(t, res);
	return t;
}

static int add_tests(json_t *doc, const struct report *r, const char *origin, json_t *build_id)
{
	json_t *tests = json_object_get(doc, "tests");
	size_t i;

	if (json_array_append_new(tests, boot_test(r, origin, build_id)) < 0)
		return -ENOMEM;
	for (i = 0; i < r->n_results; i++)
		if (json_array_append_new(tests, child_test(r, &r->results[i], origin, build_id,
							    tests)) < 0)
			return -ENOMEM;
	return 0;
}

int kcidb_build(const struct report *r, const char *origin, json_t **ret)
{
	json_t *doc, *build_id;
	int err;

	if (!kcidb_origin_valid(origin))
		return -EINVAL;
	doc = json_pack("{s:{s:i, s:i}, s:[], s:[], s:[]}", "version", "major", KCIDB_MAJOR,
			"minor", KCIDB_MINOR, "checkouts", "builds", "tests");
	if (!doc)
		return -ENOMEM;
	build_id = add_build(doc, r, origin);
	err = build_id ? add_tests(doc, r, origin, build_id) : -ENOMEM;
	json_decref(build_id);
	if (err < 0) {
		json_decref(doc);
		return err;
	}
	if (!json_array_size(json_object_get(doc, "checkouts"))) {
		json_object_del(doc, "checkouts");
		json_object_del(doc, "builds");
	}
	*ret = doc;
	return 0;
}

/* ---- checking ---- */

static int problem(struct strbuf *why, const char *what, const char *key, const json_t *obj)
{
	const char *id = json_string_value(json_object_get(obj, "id"));

	strbuf_addf(why, "%s '%s'%s%s", what, key, id ? " in " : "", id ? id : "");
	return -EINVAL;
}

/* No null and no NUL in any string, anywhere in @v. */
static int check_values(const json_t *v, struct strbuf *why)
{
	const char *key;
	json_t *e;
	size_t i;

	if (json_is_null(v))
		return problem(why, "null value", "", NULL);
	if (json_is_string(v) && !is_valid_string(v))
		return problem(why, "NUL in a string", "", NULL);
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, e)
			if (check_values(e, why) < 0)
				return -EINVAL;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (check_values(e, why) < 0)
				return -EINVAL;
	}
	return 0;
}

static int check_str(const json_t *o, const char *key, const char *pattern, bool required,
		     struct strbuf *why)
{
	const json_t *v = json_object_get(o, key);

	if (!v)
		return required ? problem(why, "missing", key, o) : 0;
	if (!json_is_string(v) ||
	    (pattern && !matches(pattern, json_string_value(v), json_string_length(v))))
		return problem(why, "invalid", key, o);
	return 0;
}

static size_t count_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static int check_object(const json_t *o, const char *const *keys, const char *parent,
			struct strbuf *why)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o))
		return problem(why, "not an object:", parent ? parent : "checkout", NULL);
	json_object_foreach((json_t *)o, key, v) {
		const char *const *k;

		for (k = keys; *k && strcmp(*k, key); k++)
			;
		if (!*k && key[0] != '_')
			return problem(why, "unknown key", key, o);
	}
	if (check_str(o, "id", ID_PATTERN, true, why) < 0 ||
	    check_str(o, "origin", KCIDB_ORIGIN_PATTERN, true, why) < 0 ||
	    (parent && check_str(o, parent, ID_PATTERN, true, why) < 0) ||
	    check_str(o, "start_time", DATE_PATTERN, false, why) < 0 ||
	    check_str(o, "status", "^(FAIL|ERROR|MISS|PASS|DONE|SKIP)$", false, why) < 0 ||
	    check_str(o, "path", PATH_PATTERN, false, why) < 0 ||
	    check_str(o, "log_excerpt", NULL, false, why) < 0)
		return -EINVAL;
	v = json_object_get(o, "log_excerpt");
	if (v && count_chars(json_string_value(v)) > KCIDB_MAX_EXCERPT)
		return problem(why, "too long", "log_excerpt", o);
	v = json_object_get(o, "duration");
	if (v && !json_is_number(v))
		return problem(why, "invalid", "duration", o);
	return 0;
}

static int check_list(const json_t *doc, const char *name, const char *const *keys,
		      const char *parent, struct strbuf *why)
{
	const json_t *list = json_object_get(doc, name), *o;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list))
		return problem(why, "not a list:", name, NULL);
	json_array_foreach(list, i, o)
		if (check_object(o, keys, parent, why) < 0)
			return -EINVAL;
	return 0;
}

int kcidb_check(const json_t *doc, struct strbuf *why)
{
	const json_t *version = json_object_get(doc, "version");
	static const char *const top[] = { "version", "checkouts", "builds", "tests", "issues",
					   "incidents", NULL };
	const char *key;
	json_t *v;

	if (!json_is_object(doc))
		return problem(why, "not an object:", "document", NULL);
	json_object_foreach((json_t *)doc, key, v) {
		const char *const *k;

		for (k = top; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			return problem(why, "unknown top-level key", key, NULL);
	}
	if (json_integer_value(json_object_get(version, "major")) != KCIDB_MAJOR ||
	    json_integer_value(json_object_get(version, "minor")) > KCIDB_MINOR)
		return problem(why, "unsupported", "version", NULL);
	if (check_values(doc, why) < 0 ||
	    check_list(doc, "checkouts", checkout_keys, NULL, why) < 0 ||
	    check_list(doc, "builds", build_keys, "checkout_id", why) < 0 ||
	    check_list(doc, "tests", test_keys, "build_id", why) < 0)
		return -EINVAL;
	return 0;
}
