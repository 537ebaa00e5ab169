// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job_redact.c -- a job's text as labd stores it: its secrets and passwords out
 *
 * The values of `secrets` and of every boot's auto_login.password are
 * replaced by "[secret]".  In YAML, the bytes of each such scalar (where an
 * alias points: at its anchor) are replaced in the text itself, so the
 * stored definition keeps its layout and comments, as LAVA echoes it in
 * callbacks.  JSON, and YAML with a duplicate key (whose first value would
 * stay in the text), are written again from the parsed document, as JSON
 * (which YAML readers read too).
 */
#include "job/job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job_doc.h"

#define MASK_REDACTED "[secret]"
#define REDACTED "\"" MASK_REDACTED "\""	/* a scalar anywhere in YAML */

/* Paths of the values to redact, in @doc's tree. */
static int secret_paths(const json_t *root, char ***ret)
{
	const json_t *actions = json_object_get(root, "actions"), *a;
	struct strbuf p = STRBUF_INIT;
	const char *key;
	json_t *v;
	size_t i;
	int r = 0;

	json_object_foreach((json_t *)json_object_get(root, "secrets"), key, v) {
		strbuf_reset(&p);
		strbuf_addf(&p, "secrets.%s", key);
		r = r ?: strv_push(ret, p.buf);
	}
	json_array_foreach(actions, i, a) {
		if (!json_object_get(json_object_get(json_object_get(a, "boot"), "auto_login"),
				     "password"))
			continue;
		strbuf_reset(&p);
		strbuf_addf(&p, "actions[%zu].boot.auto_login.password", i);
		r = r ?: strv_push(ret, p.buf);
	}
	strbuf_release(&p);
	return r;
}

static int span_cmp(const void *a, const void *b)
{
	const size_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Narrow a scalar's span to its value: an anchor ("&pw ") before it stays
 * (aliases name it), and so do the line breaks ending a block scalar.
 */
static void value_span(const char *text, size_t *start, size_t *end)
{
	while (*start < *end && text[*start] == '&') {
		while (*start < *end && !strchr(" \t\r\n", text[*start]))
			(*start)++;
		while (*start < *end && strchr(" \t\r\n", text[*start]))
			(*start)++;
	}
	while (*end > *start && strchr("\r\n", text[*end - 1]) && strchr("|>", text[*start]))
		(*end)--;
}

/* Replace the (sorted, distinct) byte spans of @text by the redacted scalar. */
static char *splice(const char *text, size_t len, size_t (*spans)[2], size_t n, size_t *ret_len)
{
	struct strbuf out = STRBUF_INIT;
	size_t i, at = 0, start, end;

	qsort(spans, n, sizeof(*spans), span_cmp);
	for (i = 0; i < n; i++) {
		if (spans[i][0] < at || spans[i][1] > len)
			continue;	/* the same anchor reached twice */
		start = spans[i][0];
		end = spans[i][1];
		value_span(text, &start, &end);
		strbuf_add(&out, text + at, start - at);
		strbuf_addstr(&out, REDACTED);
		at = end;
	}
	strbuf_add(&out, text + at, len - at);
	return strbuf_detach(&out, ret_len);
}

/* @root (taken) with the secret values replaced, written as JSON. */
static int redact_tree(json_t *root, char **ret, size_t *ret_len)
{
	const char *key;
	json_t *v;
	size_t i;
	int r = root ? 0 : -EINVAL;

	json_object_foreach(json_object_get(root, "secrets"), key, v)
		json_object_set_new(json_object_get(root, "secrets"), key, json_string(MASK_REDACTED));
	json_array_foreach(json_object_get(root, "actions"), i, v) {
		json_t *login = json_object_get(json_object_get(v, "boot"), "auto_login");

		if (json_object_get(login, "password"))
			json_object_set_new(login, "password", json_string(MASK_REDACTED));
	}
	*ret = r ? NULL : json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!r && !*ret)
		r = -ENOMEM;
	if (!r)
		*ret_len = strlen(*ret);
	json_decref(root);
	return r;
}

static int redact_yaml(const char *text, size_t len, char **ret, size_t *ret_len)
{
	size_t (*spans)[2] = NULL, n = 0;
	struct diag diag = DIAG_INIT;
	char **paths = NULL;
	struct job_doc doc;
	int r = job_doc_init(&doc, "job");

	if (r < 0)
		return r;
	doc.spans = json_object();
	r = doc.spans ? job_yaml_load(&doc, text, len, false) : -ENOMEM;
	if (!r && doc.n_warnings) {
		/* duplicate keys: an earlier value (a password given twice) is in
		 * the text but not in the tree, so the tree is written instead */
		r = redact_tree(json_incref(doc.root), ret, ret_len);
		job_doc_finish(&doc, &diag);
		diag_release(&diag);
		return r;
	}
	if (!r)
		r = secret_paths(doc.root, &paths);
	spans = calloc(strv_length(paths) + 1, sizeof(*spans));
	if (!r && !spans)
		r = -ENOMEM;
	STRV_FOREACH(p, paths) {
		const json_t *s = job_doc_path_value(doc.spans, doc.aliases, *p);

		if (!r && !s)
			r = -EINVAL;	/* not a scalar of the text: keep nothing */
		if (r)
			break;
		spans[n][0] = (size_t)json_integer_value(json_array_get(s, 0));
		spans[n++][1] = (size_t)json_integer_value(json_array_get(s, 1));
	}
	if (!r)
		*ret = splice(text, len, spans, n, ret_len);
	if (!r && !*ret)
		r = -ENOMEM;
	free(spans);
	strv_free(paths);
	job_doc_finish(&doc, &diag);	/* frees the tree */
	diag_release(&diag);
	return r;
}

static int redact_json(const char *text, size_t len, char **ret, size_t *ret_len)
{
	return redact_tree(json_loadb(text, len, 0, NULL), ret, ret_len);
}

int job_redact(const struct job *job, const char *text, size_t len, enum job_format fmt,
	       char **ret, size_t *ret_len)
{
	size_t i;
	bool any = job->secrets.n > 0;

	for (i = 0; i < job->n_actions && !any; i++)
		any = job->actions[i].kind == JOB_ACTION_BOOT &&
		      job->actions[i].boot.auto_login.password;
	if (!any) {
		*ret = strndup(text, len);
		*ret_len = len;
		return *ret ? 0 : -ENOMEM;
	}
	return fmt == JOB_FORMAT_JSON ? redact_json(text, len, ret, ret_len) :
					redact_yaml(text, len, ret, ret_len);
}
