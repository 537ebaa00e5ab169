// SPDX-License-Identifier: GPL-2.0-or-later
/* testdef.c -- LAVA test definitions, and the shell commands that run them on a board */
#include "job/testdef.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/diag.h"
#include "core/kv.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/job_doc.h"

#define SHELL_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"

/* ---- definitions ---- */

struct testdef *testdef_free(struct testdef *td)
{
	if (!td)
		return NULL;
	free(td->suite);
	free(td->name);
	strv_free(td->install);
	strv_free(td->deps);
	strv_free(td->steps);
	kv_release(&td->params);
	free(td->pattern);
	kv_release(&td->fixupdict);
	strv_free(td->expected);
	free(td);
	return NULL;
}

/* A scalar as the shell sees it: "3", "true", "1.5", "" for null. */
static char *scalar_text(const json_t *v)
{
	char *s = NULL;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v) && asprintf(&s, "%lld", (long long)json_integer_value(v)) < 0)
		return NULL;
	if (json_is_real(v) && asprintf(&s, "%g", json_real_value(v)) < 0)
		return NULL;
	if (json_is_boolean(v))
		return strdup(json_is_true(v) ? "true" : "false");
	if (json_is_null(v))
		return strdup("");
	return s;
}

/* @key.steps of @doc: a list of strings (required when @required). */
static int load_steps(const json_t *doc, const char *key, bool required, char ***ret, char *err,
		      size_t errlen)
{
	const json_t *sect = json_object_get(doc, key), *steps, *v;
	size_t i;

	steps = json_object_get(sect, "steps");
	if (!steps && !required)
		return 0;	/* (an install section may hold only deps) */
	if (!json_is_array(steps) || json_array_size(steps) > TESTDEF_MAX_STEPS) {
		snprintf(err, errlen, "'%s.steps' must be a list of at most %d commands", key,
			 TESTDEF_MAX_STEPS);
		return -EINVAL;
	}
	json_array_foreach(steps, i, v) {
		char *s = json_is_object(v) || json_is_array(v) ? NULL : scalar_text(v);

		if (!s) {
			snprintf(err, errlen, "'%s.steps[%zu]' must be a command", key, i);
			return -EINVAL;
		}
		if (strv_consume(ret, s) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* install.deps: package names; install's other sections labd does not implement. */
static int load_deps(const json_t *doc, char ***ret, char *err, size_t errlen)
{
	static const char *const refused[] = { "keys", "sources", "git-repos", NULL };
	const json_t *install = json_object_get(doc, "install"), *deps, *v;
	size_t i;

	for (i = 0; refused[i]; i++) {
		if (json_object_get(install, refused[i])) {
			snprintf(err, errlen, "'install.%s' is not supported: install from install.steps%s",
				 refused[i], strcmp(refused[i], "git-repos") ? "" :
				 ", or give the repository as a test definition from git");
			return -EINVAL;
		}
	}
	deps = json_object_get(install, "deps");
	if (!deps)
		return 0;
	if (!json_is_array(deps)) {
		snprintf(err, errlen, "'install.deps' must be a list of package names");
		return -EINVAL;
	}
	json_array_foreach(deps, i, v) {
		if (!json_is_string(v) || !*json_string_value(v) || *json_string_value(v) == '-') {
			snprintf(err, errlen, "'install.deps[%zu]' must be a package name", i);
			return -EINVAL;
		}
		if (strv_push(ret, json_string_value(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* {NAME: scalar} into @kv (later calls override earlier ones). */
static int load_params(const json_t *map, struct kv *kv, char *err, size_t errlen)
{
	const char *name;
	json_t *v;
	char *s;
	int r;

	json_object_foreach((json_t *)map, name, v) {
		if (!*name || isdigit((unsigned char)*name) ||
		    strspn(name, SHELL_NAME_CHARS) != strlen(name)) {
			snprintf(err, errlen, "invalid parameter name '%.100s'", name);
			return -EINVAL;
		}
		s = json_is_object(v) || json_is_array(v) ? NULL : scalar_text(v);
		if (!s) {
			snprintf(err, errlen, "parameter '%.100s' must be a scalar", name);
			return -EINVAL;
		}
		r = kv_set(kv, name, s);
		free(s);
		if (r < 0)
			return r;
	}
	return 0;
}

/* parse: {pattern, fixupdict}; fixupdict values are LAVA's words in any case. */
static int load_parse(struct testdef *td, const json_t *parse, char *err, size_t errlen)
{
	static const char *const words[] = { "pass", "fail", "skip", "unknown" };
	const json_t *pat = json_object_get(parse, "pattern"), *v;
	const char *raw;
	size_t i;

	if (pat && !json_is_string(pat)) {
		snprintf(err, errlen, "'parse.pattern' must be a string");
		return -EINVAL;
	}
	if (pat && !(td->pattern = strdup(json_string_value(pat))))
		return -ENOMEM;
	json_object_foreach((json_t *)json_object_get(parse, "fixupdict"), raw, v) {
		const char *word = json_is_string(v) ? json_string_value(v) : "";

		for (i = 0; i < 4 && strcasecmp(word, words[i]); i++)
			;
		if (i == 4) {
			snprintf(err, errlen, "'parse.fixupdict.%.100s' must be pass, fail, skip or unknown",
				 raw);
			return -EINVAL;
		}
		if (kv_set(&td->fixupdict, raw, words[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int load(struct testdef *td, const json_t *doc, const struct job_testdef *jt, char *err,
		size_t errlen)
{
	const json_t *meta = json_object_get(doc, "metadata");
	const char *format = json_string_value(json_object_get(meta, "format"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	int r;

	if (!json_is_object(doc) || !format || strcmp(format, TESTDEF_FORMAT) || !name) {
		snprintf(err, errlen, "not a '%s' document with metadata.format and metadata.name",
			 TESTDEF_FORMAT);
		return -EINVAL;
	}
	if (!(td->name = strdup(name)))
		return -ENOMEM;
	td->kmsg = jt->kmsg;
	td->skip_install = jt->skip_install;
	r = load_steps(doc, "install", false, &td->install, err, errlen);
	if (!r)
		r = load_deps(doc, &td->deps, err, errlen);
	if (!r)
		r = load_steps(doc, "run", true, &td->steps, err, errlen);
	if (!r && json_is_object(json_object_get(doc, "params")))
		r = load_params(json_object_get(doc, "params"), &td->params, err, errlen);
	if (!r)
		r = kv_merge(&td->params, &jt->parameters);
	if (!r && json_object_get(doc, "parse"))
		r = load_parse(td, json_object_get(doc, "parse"), err, errlen);
	if (!r)
		r = strv_copy(jt->expected, &td->expected);
	return r;
}

int testdef_from_json(const json_t *doc, const struct job_testdef *jt, unsigned index,
		      struct testdef **ret, char *err, size_t errlen)
{
	struct testdef *td = calloc(1, sizeof(*td));
	int r;

	if (!td)
		return -ENOMEM;
	r = asprintf(&td->suite, "%u_%s", index, jt->name) < 0 ? -ENOMEM : 0;
	if (!r)
		r = load(td, doc, jt, err, errlen);
	if (r < 0) {
		testdef_free(td);
		return r;
	}
	*ret = td;
	return 0;
}

int testdef_parse_yaml(const char *text, size_t len, const char *name, json_t **ret, char *err,
		       size_t errlen)
{
	struct diag diag = DIAG_INIT;
	struct job_doc doc;
	json_t *root;
	int r;

	if (len > TESTDEF_MAX_SIZE) {
		snprintf(err, errlen, "'%s' is larger than %d bytes", name, TESTDEF_MAX_SIZE);
		return -E2BIG;
	}
	r = job_doc_init(&doc, name);
	if (r < 0)
		return r;
	r = job_yaml_load(&doc, text, len, false);
	if (!r)
		r = job_doc_check_shape(&doc);
	root = r ? NULL : json_incref(doc.root);
	if (job_doc_finish(&doc, &diag) < 0 && !r)
		r = -EINVAL;
	if (r < 0) {
		snprintf(err, errlen, "%s", diag.n ? diag.msgs[0] : "not a YAML document");
		json_decref(root);
		diag_release(&diag);
		return r == -ENOMEM ? r : -EINVAL;
	}
	diag_release(&diag);
	*ret = root;
	return 0;
}

const char *testdef_result(const struct testdef *td, const char *raw)
{
	static const char *const known[] = { "pass", "fail", "skip", "unknown" };
	const char *v = kv_get(&td->fixupdict, raw);
	size_t i;

	if (v)
		return v;
	for (i = 0; i < 4; i++)
		if (!strcasecmp(raw, known[i]))
			return known[i];
	return "unknown";
}

/* ---- what is typed ---- */

#define SIGNAL_MARK "<LAVA_SIGNAL"

/*
 * @s in single quotes for sh; TAB becomes a blank (line editors complete on
 * TAB).  A signal marker in @s is typed as "<LAVA_SIGNAL''_": the shell joins
 * the two quoted words, and its echo of the input is no signal.
 */
void testdef_quote(struct strbuf *sb, const char *s, size_t len)
{
	const size_t mark = sizeof(SIGNAL_MARK) - 1;
	size_t i;

	strbuf_addch(sb, '\'');
	for (i = 0; i < len; i++) {
		if (s[i] == '\'')
			strbuf_addstr(sb, "'\\''");
		else if (len - i > mark && s[i + mark] == '_' && !memcmp(s + i, SIGNAL_MARK, mark)) {
			strbuf_addstr(sb, SIGNAL_MARK "''");
			i += mark - 1;
		} else
			strbuf_addch(sb, s[i] == '\t' ? ' ' : s[i]);
	}
	strbuf_addch(sb, '\'');
}

struct file_writer {
	const char *path;
	char ***cmds;
	struct strbuf cmd;	/* "printf '%s\n' 'a' 'b'" being filled */
	bool started;		/* the file was created (next writes append) */
	int err;
};

/* Finish the command in progress: redirect it into the file. */
static void writer_flush(struct file_writer *w)
{
	if (!w->cmd.len)
		return;
	strbuf_addf(&w->cmd, " %s %s", w->started ? ">>" : ">", w->path);
	w->started = true;
	if (strv_push(w->cmds, w->cmd.buf) < 0)
		w->err = -ENOMEM;
	strbuf_reset(&w->cmd);
}

/* One piece of a line; @newline: the piece ends the line. */
static void writer_piece(struct file_writer *w, const char *s, size_t len, bool newline)
{
	struct strbuf q = STRBUF_INIT;
	size_t room = TESTDEF_MAX_COMMAND - strlen(w->path) - 5;

	testdef_quote(&q, s, len);
	if (w->cmd.len && (!newline || w->cmd.len + 1 + q.len > room))
		writer_flush(w);
	if (!w->cmd.len)
		strbuf_addstr(&w->cmd, newline ? "printf '%s\\n'" : "printf '%s'");
	strbuf_addch(&w->cmd, ' ');
	strbuf_add(&w->cmd, q.buf, q.len);
	if (!newline)
		writer_flush(w);
	strbuf_release(&q);
}

/* Add the lines of @text (split at '\n'); lines too long for a command go in pieces. */
static void writer_text(struct file_writer *w, const char *text)
{
	size_t room = (TESTDEF_MAX_COMMAND - strlen(w->path)) / 5;	/* worst case quoting */
	const char *end;
	size_t len;

	do {
		end = strchrnul(text, '\n');
		len = (size_t)(end - text);
		if (len && text[len - 1] == '\r')
			len--;
		while (len > room) {
			writer_piece(w, text, room, false);
			text += room;
			len -= room;
		}
		writer_piece(w, text, len, true);
		text = *end ? end + 1 : end;
	} while (*text);
}

static int write_file(const char *path, const char *const *lines, char ***cmds)
{
	struct file_writer w = { .path = path, .cmds = cmds, .cmd = STRBUF_INIT };

	for (; *lines; lines++)
		writer_text(&w, *lines);
	writer_flush(&w);
	strbuf_release(&w.cmd);
	return w.err;
}

int testdef_setup_commands(const char *dir, char ***ret)
{
	char **cmds = NULL, *path = NULL;
	struct strbuf chmod = STRBUF_INIT;
	const struct testdef_helper *helpers;
	size_t i, n;
	int r = 0;

	helpers = testdef_helpers(&n);
	if (asprintf(&path, "mkdir -p %s/bin", dir) < 0 || strv_consume(&cmds, path) < 0)
		r = -ENOMEM;
	strbuf_addstr(&chmod, "chmod +x");
	for (i = 0; !r && i < n; i++) {
		if (asprintf(&path, "%s/bin/%s", dir, helpers[i].name) < 0) {
			r = -ENOMEM;
			break;
		}
		r = write_file(path, helpers[i].lines, &cmds);
		strbuf_addf(&chmod, " %s", path);
		free(path);
	}
	if (!r)
		r = strv_push(&cmds, chmod.buf);
	strbuf_release(&chmod);
	if (r < 0) {
		strv_free(cmds);
		return r;
	}
	*ret = cmds;
	return 0;
}

/* How install.deps are installed, by the deploy's os (LAVA's names). */
static const struct {
	const char *os;
	const char *install;
	const char *update;
} installers[] = {
	{ "debian", "DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends",
	  "apt-get -q update" },
	{ "ubuntu", "DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends",
	  "apt-get -q update" },
	{ "fedora", "dnf -y install", NULL },
	{ "centos", "yum -y install", NULL },
};

/* The line installing install.deps: with the os's package manager, once more after
 * refreshing its lists; a failure raises.  Without a known one, a note. */
static int deps_line(const struct testdef *td, const char *os, char ***lines)
{
	struct strbuf pkgs = STRBUF_INIT, sb = STRBUF_INIT;
	size_t i;
	int r;

	STRV_FOREACH(p, td->deps) {
		strbuf_addch(&pkgs, ' ');
		testdef_quote(&pkgs, *p, strlen(*p));
	}
	for (i = 0; os && i < sizeof(installers) / sizeof(installers[0]); i++)
		if (!strcmp(os, installers[i].os))
			break;
	if (!os || i == sizeof(installers) / sizeof(installers[0]))
		strbuf_addf(&sb, "echo 'labd: no package manager known for os %s: install.deps not installed:'%s",
			    os ? os : "(none given)", pkgs.buf);
	else if (installers[i].update)
		strbuf_addf(&sb, "%s%s || { %s && %s%s; } || lava-test-raise 'cannot install install.deps'",
			    installers[i].install, pkgs.buf, installers[i].update,
			    installers[i].install, pkgs.buf);
	else
		strbuf_addf(&sb, "%s%s || lava-test-raise 'cannot install install.deps'",
			    installers[i].install, pkgs.buf);
	r = strv_push(lines, sb.buf);
	strbuf_release(&pkgs);
	strbuf_release(&sb);
	return r;
}

/* The lines of the script: environment, install section, STARTRUN, run steps. */
static int script_lines(const struct testdef *td, const struct testdef_script *sc,
			char ***lines)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int r;

	strbuf_addf(&sb, "export PATH=%s/bin:$PATH", sc->dir);
	r = strv_push(lines, sb.buf);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "export TESTRUN_ID=%s", td->suite);
	r = r ?: strv_push(lines, sb.buf);
	if (td->kmsg)
		r = r ?: strv_push(lines, "export LAVA_SIGNAL=kmsg");
	strbuf_reset(&sb);
	if (sc->storage) {
		strbuf_addstr(&sb, "export LAVA_STORAGE_INFO=");
		testdef_quote(&sb, sc->storage, strlen(sc->storage));
		r = r ?: strv_push(lines, sb.buf);
		strbuf_reset(&sb);
	}
	if (sc->testdir) {
		strbuf_addstr(&sb, "cd ");
		testdef_quote(&sb, sc->testdir, strlen(sc->testdir));
		r = r ?: strv_push(lines, sb.buf);
	}
	for (i = 0; !r && i < td->params.n; i++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "export %s=", td->params.keys[i]);
		testdef_quote(&sb, td->params.vals[i], strlen(td->params.vals[i]));
		r = strv_push(lines, sb.buf);
	}
	if (td->deps && !(td->skip_install & TESTDEF_SKIP_DEPS))
		r = r ?: deps_line(td, sc->os, lines);
	if (!(td->skip_install & TESTDEF_SKIP_STEPS))
		STRV_FOREACH(s, td->install)
			r = r ?: strv_push(lines, *s);
	strbuf_reset(&sb);
	if (td->kmsg)	/* through the kernel's log, as the helpers' signals */
		strbuf_addf(&sb, "sh %s/bin/labd-signal STARTRUN %s %s", sc->dir, td->suite,
			    sc->uuid);
	else
		strbuf_addf(&sb, "echo \"<LAVA_SIGNAL\"\"_STARTRUN %s %s>\"", td->suite, sc->uuid);
	r = r ?: strv_push(lines, sb.buf);
	STRV_FOREACH(s, td->steps)
		r = r ?: strv_push(lines, *s);
	strbuf_release(&sb);
	return r;
}

int testdef_script_commands(const struct testdef *td, const struct testdef_script *sc,
			    char ***ret)
{
	char **lines = NULL, **cmds = NULL, *path = NULL;
	int r = script_lines(td, sc, &lines);

	if (!r && asprintf(&path, "%s/%s.sh", sc->dir, td->suite) < 0)
		r = -ENOMEM;
	if (!r)
		r = write_file(path, (const char *const *)lines, &cmds);
	free(path);
	strv_free(lines);
	if (r < 0) {
		strv_free(cmds);
		return r;
	}
	*ret = cmds;
	return 0;
}

char *testdef_script_text(const struct testdef *td, const struct testdef_script *sc)
{
	char **lines = NULL, *text;

	if (strv_push(&lines, "#!/bin/sh") < 0 || script_lines(td, sc, &lines) < 0 ||
	    strv_push(&lines, "") < 0) {
		strv_free(lines);
		return NULL;
	}
	text = strv_join(lines, "\n");
	strv_free(lines);
	return text;
}

int testdef_file_commands(const char *path, const char *const *lines, char ***ret)
{
	int r = write_file(path, lines, ret);

	if (r < 0)
		*ret = strv_free(*ret);
	return r;
}

char *testdef_run_command(const struct testdef *td, const char *script, const char *uuid)
{
	char *cmd;

	if (asprintf(&cmd, "sh %s; echo \"<LAVA_SIGNAL\"\"_ENDRUN %s %s>\"", script, td->suite,
		     uuid) < 0)
		return NULL;
	return cmd;
}

char *testdef_storage_info(const struct kv *storage_info)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int r = 0;

	for (i = 0; i < storage_info->n && !r; i++)
		r = strbuf_addf(&sb, "%s%s=%s", i ? " " : "", storage_info->keys[i],
				storage_info->vals[i]);
	if (r < 0 || !sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}
