// SPDX-License-Identifier: GPL-2.0-or-later
/* job_test.c -- the test action of a job: interactive scripts, monitors, test definitions */
#include "job/job_walk.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strv.h"

/*
 * A test action holds exactly one of:
 *
 *	interactive: [{name, prompts: [regex], echo: discard,
 *		       script: [{command, name, wait_for_prompt,
 *				 successes: [{message}], failures: [{message, exception, error}]}]}]
 *	monitors: [{name, start, end, pattern, fixupdict: {raw: pass|fail|skip|unknown}}]
 *	definitions: [{from: inline | url | git, name, path, repository, parameters
 *		       (or params), expected, lava-signal: stdout | kmsg, skip_install,
 *		       git: revision, branch, history, shallow}]
 *
 * Result patterns (monitors, and parse.pattern of a test definition) must name
 * the groups test_case_id and result, as LAVA requires.  Test definitions come
 * inline (the whole "Lava-Test Test Definition 1.0" document, checked here and
 * kept as JSON for the runner), from a URL, or from a git repository: `path`
 * names the definition inside it, and the repository's tree at `revision`
 * (a commit, tag or branch; else `branch`; else its default branch) goes to
 * the board with it (the run steps call the repository's scripts).  Which
 * repositories a lab fetches is the admin's choice (git_allow in labd.conf,
 * checked by job_check_git_allow()).
 */

#define TEST_TESTDEF_FORMAT "Lava-Test Test Definition 1.0"
#define TEST_MAX_NAME 100
#define TEST_MAX_GIT_REF 255

typedef int test_item_fn(struct job_doc *doc, const json_t *item, void *ret);

static const struct job_doc_key test_keys[] = {
	{ "definitions", JOB_KEY_KNOWN, NULL },
	{ "interactive", JOB_KEY_KNOWN, NULL },
	{ "monitors", JOB_KEY_KNOWN, NULL },
	{ "name", JOB_KEY_IGNORED, "results are named by their test definitions" },
	{ "docker", JOB_KEY_UNSUPPORTED,
	  "tests run on the board, not in a container on the lab host" },
	/* keys of LAVA's docker test shell */
	{ "wait", JOB_KEY_UNSUPPORTED, "docker test shells are not supported: tests run on the board" },
	{ "results", JOB_KEY_UNSUPPORTED, "docker test shells are not supported: tests run on the board" },
	{ "services", JOB_KEY_UNSUPPORTED, "containers on the lab host are not supported" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key interactive_keys[] = {
	{ "name", JOB_KEY_KNOWN, NULL },
	{ "prompts", JOB_KEY_KNOWN, NULL },
	{ "echo", JOB_KEY_KNOWN, NULL },
	{ "script", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

static const struct job_doc_key step_keys[] = {
	{ "command", JOB_KEY_KNOWN, NULL },
	{ "name", JOB_KEY_KNOWN, NULL },
	{ "successes", JOB_KEY_KNOWN, NULL },
	{ "failures", JOB_KEY_KNOWN, NULL },
	{ "wait_for_prompt", JOB_KEY_KNOWN, NULL },
	{ "lava-send", JOB_KEY_UNSUPPORTED, "multinode jobs are not supported" },
	{ "lava-sync", JOB_KEY_UNSUPPORTED, "multinode jobs are not supported" },
	{ "lava-wait", JOB_KEY_UNSUPPORTED, "multinode jobs are not supported" },
	{ "lava-wait-all", JOB_KEY_UNSUPPORTED, "multinode jobs are not supported" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key pattern_keys[] = {
	{ "message", JOB_KEY_KNOWN, NULL },
	{ "exception", JOB_KEY_KNOWN, NULL },
	{ "error", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

static const struct job_doc_key monitor_keys[] = {
	{ "name", JOB_KEY_KNOWN, NULL },
	{ "start", JOB_KEY_KNOWN, NULL },
	{ "end", JOB_KEY_KNOWN, NULL },
	{ "pattern", JOB_KEY_KNOWN, NULL },
	{ "fixupdict", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

static const struct job_doc_key definition_keys[] = {
	{ "from", JOB_KEY_KNOWN, NULL },
	{ "name", JOB_KEY_KNOWN, NULL },
	{ "path", JOB_KEY_KNOWN, NULL },
	{ "repository", JOB_KEY_KNOWN, NULL },
	{ "parameters", JOB_KEY_KNOWN, NULL },
	{ "expected", JOB_KEY_KNOWN, NULL },
	{ "lava-signal", JOB_KEY_KNOWN, NULL },
	{ "params", JOB_KEY_KNOWN, NULL },
	{ "branch", JOB_KEY_KNOWN, NULL },
	{ "revision", JOB_KEY_KNOWN, NULL },
	{ "history", JOB_KEY_KNOWN, NULL },
	{ "shallow", JOB_KEY_IGNORED, "labd keeps full mirrors of repositories and ships only the tree" },
	{ "skip_install", JOB_KEY_KNOWN, NULL },
	{ "compression", JOB_KEY_UNSUPPORTED, "a test definition URL must point to the YAML file" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key testdef_keys[] = {
	{ "metadata", JOB_KEY_KNOWN, NULL },
	{ "run", JOB_KEY_KNOWN, NULL },
	{ "install", JOB_KEY_KNOWN, NULL },
	{ "parse", JOB_KEY_KNOWN, NULL },
	{ "params", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

static const struct job_doc_key steps_keys[] = {
	{ "steps", JOB_KEY_KNOWN, NULL },
	{ "deps", JOB_KEY_KNOWN, NULL },
	{ "git-repos", JOB_KEY_UNSUPPORTED,
	  "give the repository as a test definition 'from: git', or clone it in install.steps" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key parse_keys[] = {
	{ "pattern", JOB_KEY_KNOWN, NULL },
	{ "fixupdict", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

/* Helpers */

/*
 * The list of mappings @key of @obj (required unless @optional, then it may
 * also be empty): @fn fills item i of the array *@ret of @size-byte items.
 * *@ret and *@n are set as soon as the array exists, for the release.
 */
static int test_walk_list(struct job_doc *doc, const json_t *obj, const char *key, bool optional,
			  size_t size, test_item_fn *fn, void **ret, size_t *n)
{
	json_t *list, *item;
	size_t i, mark;
	char *items;
	int r = job_doc_get(doc, obj, key, JSON_ARRAY, !optional, &list);

	if (r <= 0)
		return optional ? r : -EINVAL;
	if (!json_array_size(list))
		return optional ? 0 : job_doc_error(doc, key, "'%s' must not be empty", key);
	items = calloc(json_array_size(list), size);
	if (!items)
		return job_doc_nomem(doc);
	*ret = items;
	*n = json_array_size(list);
	r = 0;
	mark = job_doc_enter(doc, key);
	json_array_foreach(list, i, item) {
		size_t m = job_doc_enter_index(doc, i);

		if (!json_is_object(item))
			r = job_doc_error(doc, NULL, "must be a mapping, not %s", job_doc_type_name(item));
		else if (fn(doc, item, items + i * size) < 0)
			r = -EINVAL;
		job_doc_leave(doc, m);
	}
	job_doc_leave(doc, mark);
	return r;
}

/* A suite name: it names result files and URLs. */
static int test_walk_name(struct job_doc *doc, const json_t *obj, char **ret)
{
	if (job_doc_dup_str(doc, obj, "name", true, ret) <= 0)
		return -EINVAL;
	if (!job_doc_is_name(*ret, TEST_MAX_NAME, "-_."))
		return job_doc_error(doc, "name", "invalid name '%.100s': use up to %d letters, digits, '-', '_' and '.'",
				     *ret, TEST_MAX_NAME);
	return 0;
}

/* A result pattern: a regex with the groups test_case_id and result. */
static int test_walk_pattern(struct job_doc *doc, const json_t *obj, bool required, char **ret)
{
	static const char *const groups[] = { "test_case_id", "result" };
	pcre2_code *code;
	const char *s;
	size_t i;
	int r = job_doc_get_str(doc, obj, "pattern", required, &s);

	if (r <= 0)
		return r;
	if (job_doc_regex(doc, "pattern", s, &code) < 0)
		return -EINVAL;
	for (i = 0; i < 2; i++)
		if (pcre2_substring_number_from_name(code, (PCRE2_SPTR)groups[i]) < 0)
			r = job_doc_error(doc, "pattern", "'pattern' must capture '%s' with (?P<%s>...)",
					  groups[i], groups[i]);
	pcre2_code_free(code);
	if (r < 0)
		return r;
	if (ret && !(*ret = strdup(s)))
		return job_doc_nomem(doc);
	return 1;
}

static int test_walk_fixupdict(struct job_doc *doc, const json_t *obj, struct kv *ret)
{
	static const char *const results[] = { "pass", "fail", "skip", "unknown" };
	const char *raw, *res;
	json_t *map, *v;
	size_t i, mark;
	int r = job_doc_get(doc, obj, "fixupdict", JSON_OBJECT, false, &map);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "fixupdict");
	json_object_foreach(map, raw, v) {
		/* LAVA's own definitions write PASS, UNKNOWN ...: compare without case,
		 * store the canonical lowercase name */
		res = json_string_value(v);
		for (i = 0; res && i < 4 && strcasecmp(res, results[i]); i++)
			;
		if (!res || i == 4)
			r = job_doc_error(doc, raw, "'%.100s' must map to pass, fail, skip or unknown", raw);
		else if (kv_set(ret, raw, results[i]) < 0)
			r = job_doc_nomem(doc);
	}
	job_doc_leave(doc, mark);
	return r;
}

/* Interactive tests */

static int test_walk_match(struct job_doc *doc, const json_t *item, void *ret)
{
	static const char *const exceptions[] = { "InfrastructureError", "JobError", "TestError" };
	struct job_interactive_pattern *p = ret;
	size_t i;
	int r = job_doc_check_keys(doc, item, pattern_keys, NULL);

	if (job_doc_get_regex(doc, item, "message", true, &p->message) <= 0)
		r = -EINVAL;
	if (job_doc_dup_str(doc, item, "error", false, &p->error) < 0)
		r = -EINVAL;
	if (job_doc_dup_str(doc, item, "exception", false, &p->exception) > 0) {
		for (i = 0; i < 3 && strcmp(p->exception, exceptions[i]); i++)
			;
		if (i == 3)
			r = job_doc_error(doc, "exception", "unsupported exception '%.100s' (supported: InfrastructureError, JobError, TestError)",
					  p->exception);
	}
	return r;
}

static int test_walk_step(struct job_doc *doc, const json_t *item, void *ret)
{
	struct job_interactive_step *s = ret;
	json_t *cmd = json_object_get(item, "command");
	int r = job_doc_check_keys(doc, item, step_keys, NULL);

	s->line = job_doc_line(doc, NULL);
	s->wait_for_prompt = true;
	if (cmd && !json_is_null(cmd) &&
	    job_doc_dup_str(doc, item, "command", false, &s->command) < 0)
		r = -EINVAL;
	if (job_doc_dup_str(doc, item, "name", false, &s->name) < 0)
		r = -EINVAL;
	if (job_doc_get_bool(doc, item, "wait_for_prompt", &s->wait_for_prompt) < 0)
		r = -EINVAL;
	if (test_walk_list(doc, item, "successes", true, sizeof(*s->successes), test_walk_match,
			   (void **)&s->successes, &s->n_successes) < 0)
		r = -EINVAL;
	if (test_walk_list(doc, item, "failures", true, sizeof(*s->failures), test_walk_match,
			   (void **)&s->failures, &s->n_failures) < 0)
		r = -EINVAL;
	return r;
}

static int test_walk_interactive(struct job_doc *doc, const json_t *item, void *ret)
{
	struct job_interactive *t = ret;
	const char *echo;
	int r = job_doc_check_keys(doc, item, interactive_keys, NULL);

	t->line = job_doc_line(doc, NULL);
	if (test_walk_name(doc, item, &t->name) < 0)
		r = -EINVAL;
	if (job_doc_get_regexv(doc, item, "prompts", &t->prompts) < 0)
		r = -EINVAL;
	else if (!t->prompts)
		r = job_doc_error(doc, "prompts", "'prompts' must list at least one prompt");
	if (job_doc_get_str(doc, item, "echo", false, &echo) > 0) {
		if (strcmp(echo, "discard"))
			r = job_doc_error(doc, "echo", "unsupported echo '%.100s' (supported: discard)", echo);
		t->echo_discard = true;
	}
	if (test_walk_list(doc, item, "script", false, sizeof(*t->steps), test_walk_step,
			   (void **)&t->steps, &t->n_steps) < 0)
		r = -EINVAL;
	return r;
}

/* Monitors */

static int test_walk_monitor(struct job_doc *doc, const json_t *item, void *ret)
{
	struct job_monitor *m = ret;
	int r = job_doc_check_keys(doc, item, monitor_keys, NULL);

	m->line = job_doc_line(doc, NULL);
	if (test_walk_name(doc, item, &m->name) < 0)
		r = -EINVAL;
	if (job_doc_get_regex(doc, item, "start", true, &m->start) <= 0)
		r = -EINVAL;
	if (job_doc_get_regex(doc, item, "end", true, &m->end) <= 0)
		r = -EINVAL;
	if (test_walk_pattern(doc, item, true, &m->pattern) <= 0)
		r = -EINVAL;
	if (test_walk_fixupdict(doc, item, &m->fixupdict) < 0)
		r = -EINVAL;
	return r;
}

/* Test definitions */

/* {NAME: scalar}: NAME becomes a shell variable. */
static int test_walk_params(struct job_doc *doc, const json_t *obj, const char *key,
			    struct kv *ret)
{
	const char *name;
	json_t *map, *v;
	char *s;
	size_t mark;
	int r = job_doc_get(doc, obj, key, JSON_OBJECT, false, &map);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, key);
	json_object_foreach(map, name, v) {
		if (!job_doc_is_name(name, TEST_MAX_NAME, "_") || isdigit((unsigned char)*name)) {
			r = job_doc_error(doc, name, "invalid parameter name '%.100s': use letters, digits and '_'", name);
			continue;
		}
		if (json_is_object(v) || json_is_array(v)) {
			r = job_doc_error(doc, name, "parameter '%s' must be a string, number or boolean, not %s",
					  name, job_doc_type_name(v));
			continue;
		}
		s = job_doc_scalar_str(v);
		if (!s || kv_set(ret, name, s) < 0)
			r = job_doc_nomem(doc);
		free(s);
	}
	job_doc_leave(doc, mark);
	return r;
}

/* A mapping @key of @obj holding a list of strings 'steps' (required if @required). */
static int test_walk_steps(struct job_doc *doc, const json_t *obj, const char *key, bool required)
{
	char **steps = NULL;
	json_t *sub;
	size_t mark;
	int r = job_doc_get(doc, obj, key, JSON_OBJECT, required, &sub);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, key);
	r = job_doc_check_keys(doc, sub, steps_keys, NULL);
	if (job_doc_get_strv(doc, sub, "steps", &steps) < 0)
		r = -EINVAL;
	strv_free(steps);
	steps = NULL;
	if (job_doc_get_strv(doc, sub, "deps", &steps) < 0)
		r = -EINVAL;
	else if (required && !json_object_get(sub, "steps"))
		r = job_doc_error(doc, NULL, "missing required key 'steps'");
	strv_free(steps);
	job_doc_leave(doc, mark);
	return r;
}

static int test_walk_testdef_meta(struct job_doc *doc, const json_t *def)
{
	const char *format, *s;
	json_t *meta;
	size_t mark;
	int r = job_doc_get(doc, def, "metadata", JSON_OBJECT, true, &meta);

	if (r <= 0)
		return -EINVAL;
	mark = job_doc_enter(doc, "metadata");
	r = 0;
	if (job_doc_get_str(doc, meta, "format", true, &format) > 0 &&
	    strcmp(format, TEST_TESTDEF_FORMAT))
		r = job_doc_error(doc, "format", "unsupported test definition format '%.100s' (supported: '%s')",
				  format, TEST_TESTDEF_FORMAT);
	if (job_doc_get_str(doc, meta, "name", true, &s) <= 0)
		r = -EINVAL;
	if (job_doc_get_str(doc, meta, "description", false, &s) < 0)
		r = -EINVAL;
	job_doc_leave(doc, mark);
	return r;
}

/* An inline "Lava-Test Test Definition 1.0" document. */
static int test_walk_testdef(struct job_doc *doc, const json_t *def)
{
	struct kv fixup = KV_INIT;
	json_t *parse;
	size_t mark;
	int r = job_doc_check_keys(doc, def, testdef_keys, NULL);

	if (test_walk_testdef_meta(doc, def) < 0)
		r = -EINVAL;
	if (test_walk_steps(doc, def, "run", true) < 0)
		r = -EINVAL;
	if (test_walk_steps(doc, def, "install", false) < 0)
		r = -EINVAL;
	if (test_walk_params(doc, def, "params", &fixup) < 0)
		r = -EINVAL;
	kv_release(&fixup);
	if (job_doc_get(doc, def, "parse", JSON_OBJECT, false, &parse) > 0) {
		mark = job_doc_enter(doc, "parse");
		if (job_doc_check_keys(doc, parse, parse_keys, NULL) < 0)
			r = -EINVAL;
		if (test_walk_pattern(doc, parse, false, NULL) < 0)
			r = -EINVAL;
		if (test_walk_fixupdict(doc, parse, &fixup) < 0)
			r = -EINVAL;
		kv_release(&fixup);
		job_doc_leave(doc, mark);
	}
	return r;
}

/* A git revision or branch name: passed to git as one argument, never as an option. */
static int test_walk_git_ref(struct job_doc *doc, const json_t *item, const char *key, char **ret)
{
	json_t *v = json_object_get(item, key);
	const char *p;
	char *s;

	if (!v)
		return 0;
	/* LAVA jobs give commit ids and numeric tags (2023.01) unquoted */
	if (!json_is_string(v) && !json_is_number(v))
		return job_doc_error(doc, key, "'%s' must be a string, not %s", key,
				     job_doc_type_name(v));
	s = job_doc_scalar_str(v);
	if (!s)
		return job_doc_nomem(doc);
	for (p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || strchr("~^:?*[\\", *p))
			break;
	if (!*s || *s == '-' || *p || strlen(s) > TEST_MAX_GIT_REF) {
		job_doc_error(doc, key, "invalid %s '%.100s': a commit, tag or branch name of 1 to %d characters, not starting with '-', without blanks or any of ~^:?*[\\",
			      key, s, TEST_MAX_GIT_REF);
		free(s);
		return -EINVAL;
	}
	*ret = s;
	return 1;
}

/* A path inside the repository: relative, without "..". */
static int test_walk_git_path(struct job_doc *doc, const json_t *item, char **ret)
{
	const char *s;
	int r = job_doc_get_str(doc, item, "path", true, &s);

	if (r <= 0)
		return -EINVAL;
	if (*s == '/' || !strcmp(s, "..") || !strncmp(s, "../", 3) || strstr(s, "/../") ||
	    (strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/..")) || strlen(s) > 4096)
		return job_doc_error(doc, "path", "'path' must be a file of the repository, relative to its top, without '..'");
	return job_doc_dup_str(doc, item, "path", true, ret) < 0 ? -EINVAL : 0;
}

/* A repository git can fetch from the lab host: http(s)://, git:// or file:///. */
static int test_walk_git_url(struct job_doc *doc, const json_t *item, char **ret)
{
	static const char *const schemes[] = { "https://", "http://", "git://", "file:///", NULL };
	const char *url, *p;
	size_t i;
	int r = job_doc_get_str(doc, item, "repository", true, &url);

	if (r <= 0)
		return -EINVAL;
	for (i = 0; schemes[i] && strncmp(url, schemes[i], strlen(schemes[i])); i++)
		;
	if (!schemes[i])
		return job_doc_error(doc, "repository", "unsupported repository '%.100s' (supported: https://, http://, git://, file:///; labd holds no ssh keys)",
				     url);
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return job_doc_error(doc, "repository", "'repository' must not contain blanks or control characters");
	if (strlen(url) > JOB_DOC_MAX_URL)
		return job_doc_error(doc, "repository", "'repository' is longer than %d bytes",
				     JOB_DOC_MAX_URL);
	return job_doc_dup_str(doc, item, "repository", true, ret) < 0 ? -EINVAL : 0;
}

static int test_walk_git(struct job_doc *doc, const json_t *item, struct job_testdef *t)
{
	int r = test_walk_git_url(doc, item, &t->url);

	if (test_walk_git_path(doc, item, &t->path) < 0)
		r = -EINVAL;
	if (test_walk_git_ref(doc, item, "revision", &t->revision) < 0)
		r = -EINVAL;
	if (test_walk_git_ref(doc, item, "branch", &t->branch) < 0)
		r = -EINVAL;
	t->history = true;
	if (job_doc_get_bool(doc, item, "history", &t->history) < 0)
		r = -EINVAL;
	return r;
}

static int test_walk_source(struct job_doc *doc, const json_t *item, struct job_testdef *t)
{
	json_t *repo;
	size_t mark;
	int r;

	if (t->source == TESTDEF_GIT)
		return test_walk_git(doc, item, t);
	if (t->source == TESTDEF_URL)
		return job_doc_get_url(doc, item, "repository", &t->url) <= 0 ? -EINVAL : 0;
	if (job_doc_get(doc, item, "repository", JSON_OBJECT, true, &repo) <= 0)
		return -EINVAL;
	mark = job_doc_enter(doc, "repository");
	r = test_walk_testdef(doc, repo);
	job_doc_leave(doc, mark);
	t->definition = json_deep_copy(repo);
	return t->definition ? r : job_doc_nomem(doc);
}

/*
 * skip_install: true | false | [deps, steps, keys, sources, git-repos, all].
 * keys, sources and git-repos name install sections labd refuses anyway.
 */
static int test_walk_skip_install(struct job_doc *doc, const json_t *item, unsigned *ret)
{
	static const char *const parts[] = { "deps", "steps", "keys", "sources", "git-repos", "all" };
	static const unsigned bits[] = { TESTDEF_SKIP_DEPS, TESTDEF_SKIP_STEPS, 0, 0, 0,
					 TESTDEF_SKIP_ALL };
	json_t *v = json_object_get(item, "skip_install"), *p;
	size_t i, k;
	bool b;

	if (!v || json_is_boolean(v)) {
		if (job_doc_get_bool(doc, item, "skip_install", &b) > 0 && b)
			*ret = TESTDEF_SKIP_ALL;
		return 0;
	}
	if (!json_is_array(v))
		return job_doc_error(doc, "skip_install", "'skip_install' must be a boolean or a list of deps, steps, keys, sources, git-repos, all");
	json_array_foreach(v, i, p) {
		for (k = 0; k < 6 && !(json_is_string(p) && !strcmp(json_string_value(p), parts[k])); k++)
			;
		if (k == 6)
			return job_doc_error(doc, "skip_install", "'skip_install' must be a boolean or a list of deps, steps, keys, sources, git-repos, all");
		*ret |= bits[k];
	}
	return 0;
}

/* The keys only a git definition reads. */
static int test_walk_only_git(struct job_doc *doc, const json_t *item)
{
	static const char *const keys[] = { "revision", "branch", "history", "shallow", NULL };
	int r = 0;

	for (size_t i = 0; keys[i]; i++)
		if (json_object_get(item, keys[i]))
			r = job_doc_error(doc, keys[i], "'%s' only applies to test definitions from git",
					  keys[i]);
	return r;
}

static int test_walk_definition(struct job_doc *doc, const json_t *item, void *ret)
{
	struct job_testdef *t = ret;
	const char *signal;
	int r;

	t->line = job_doc_line(doc, NULL);
	if (job_doc_dup_str(doc, item, "from", true, &t->from) <= 0)
		return -EINVAL;
	if (!strcmp(t->from, "git"))
		t->source = TESTDEF_GIT;
	else if (!strcmp(t->from, "url"))
		t->source = TESTDEF_URL;
	else if (!strcmp(t->from, "inline"))
		t->source = TESTDEF_INLINE;
	else
		return job_doc_error(doc, "from", "unsupported test definition source '%.100s' (supported: git, inline, url)",
				     t->from);
	r = job_doc_check_keys(doc, item, definition_keys, NULL);
	if (t->source != TESTDEF_GIT)
		r = test_walk_only_git(doc, item) < 0 ? -EINVAL : r;
	if (test_walk_name(doc, item, &t->name) < 0)
		r = -EINVAL;
	if (t->source != TESTDEF_GIT && job_doc_dup_str(doc, item, "path", false, &t->path) < 0)
		r = -EINVAL;
	if (test_walk_source(doc, item, t) < 0)
		r = -EINVAL;
	if (json_object_get(item, "params") && json_object_get(item, "parameters"))
		r = job_doc_error(doc, "params", "give 'parameters' or 'params', not both");
	if (test_walk_params(doc, item, "parameters", &t->parameters) < 0 ||
	    test_walk_params(doc, item, "params", &t->parameters) < 0)
		r = -EINVAL;
	if (job_doc_get_strv(doc, item, "expected", &t->expected) < 0)
		r = -EINVAL;
	if (test_walk_skip_install(doc, item, &t->skip_install) < 0)
		r = -EINVAL;
	if (job_doc_get_str(doc, item, "lava-signal", false, &signal) > 0) {
		if (!strcmp(signal, "kmsg"))
			t->kmsg = true;
		else if (strcmp(signal, "stdout"))
			r = job_doc_error(doc, "lava-signal", "unsupported lava-signal '%.100s' (supported: stdout, kmsg)",
					  signal);
	}
	return r;
}

int job_test_parse(struct job_doc *doc, const json_t *obj, struct job_test *ret)
{
	int r = job_doc_check_keys(doc, obj, test_keys, job_action_keys);
	int n = !!json_object_get(obj, "definitions") + !!json_object_get(obj, "interactive") +
		!!json_object_get(obj, "monitors");

	if (n != 1)
		return job_doc_error(doc, NULL, "a test action takes exactly one of 'definitions', 'interactive' or 'monitors'");
	if (json_object_get(obj, "interactive")) {
		ret->kind = TEST_KIND_INTERACTIVE;
		if (test_walk_list(doc, obj, "interactive", false, sizeof(*ret->interactive),
				   test_walk_interactive, (void **)&ret->interactive,
				   &ret->n_interactive) < 0)
			r = -EINVAL;
	} else if (json_object_get(obj, "monitors")) {
		ret->kind = TEST_KIND_MONITORS;
		if (test_walk_list(doc, obj, "monitors", false, sizeof(*ret->monitors), test_walk_monitor,
				   (void **)&ret->monitors, &ret->n_monitors) < 0)
			r = -EINVAL;
	} else {
		ret->kind = TEST_KIND_DEFINITIONS;
		if (test_walk_list(doc, obj, "definitions", false, sizeof(*ret->definitions),
				   test_walk_definition, (void **)&ret->definitions,
				   &ret->n_definitions) < 0)
			r = -EINVAL;
	}
	return r < 0 ? -EINVAL : 0;
}

/* Release */

static void test_patterns_free(struct job_interactive_pattern *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(p[i].message);
		free(p[i].exception);
		free(p[i].error);
	}
	free(p);
}

static void test_interactive_release(struct job_interactive *t)
{
	size_t i;

	for (i = 0; i < t->n_steps; i++) {
		free(t->steps[i].name);
		free(t->steps[i].command);
		test_patterns_free(t->steps[i].successes, t->steps[i].n_successes);
		test_patterns_free(t->steps[i].failures, t->steps[i].n_failures);
	}
	free(t->steps);
	free(t->name);
	strv_free(t->prompts);
}

static void test_monitor_release(struct job_monitor *m)
{
	free(m->name);
	free(m->start);
	free(m->end);
	free(m->pattern);
	kv_release(&m->fixupdict);
}

static void test_testdef_release(struct job_testdef *t)
{
	free(t->name);
	free(t->from);
	free(t->path);
	json_decref(t->definition);
	free(t->url);
	free(t->revision);
	free(t->branch);
	kv_release(&t->parameters);
	strv_free(t->expected);
}

void job_test_release(struct job_test *t)
{
	size_t i;

	for (i = 0; i < t->n_interactive; i++)
		test_interactive_release(&t->interactive[i]);
	for (i = 0; i < t->n_monitors; i++)
		test_monitor_release(&t->monitors[i]);
	for (i = 0; i < t->n_definitions; i++)
		test_testdef_release(&t->definitions[i]);
	free(t->interactive);
	free(t->monitors);
	free(t->definitions);
	memset(t, 0, sizeof(*t));
}
