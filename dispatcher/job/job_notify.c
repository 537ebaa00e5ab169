// SPDX-License-Identifier: GPL-2.0-or-later
/* job_notify.c -- the notify block of a job: LAVA's HTTP callbacks */
#include "job/job_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 *	notify:
 *	  criteria: {status: running | finished | complete | incomplete | canceled | all}
 *	  callback: {url, method: GET | POST, token, header, dataset, content-type}
 *	  callbacks: [{...}, ...]		(either form, as LAVA)
 *
 * url: http:// or https://, with LAVA's {ID}-style placeholders.  method
 * defaults to GET, header to "Authorization", dataset to minimal (minimal |
 * logs | results | all), content-type to urlencoded (urlencoded | json).
 * token is what LAVA calls it: the *name* of a token; labd looks it up in
 * labd.conf's notify_tokens and sends the name itself when it is not there,
 * as LAVA sends the literal string.  Email and IRC recipients, job
 * comparisons and dependency queries are refused with their reason.
 */

#define NOTIFY_MAX_HEADER 100

static const struct job_doc_key notify_keys[] = {
	{ "criteria", JOB_KEY_KNOWN, NULL },
	{ "callback", JOB_KEY_KNOWN, NULL },
	{ "callbacks", JOB_KEY_KNOWN, NULL },
	{ "verbosity", JOB_KEY_IGNORED, "only shapes email and IRC messages, which labd does not send" },
	{ "recipients", JOB_KEY_UNSUPPORTED,
	  "email and IRC notifications are not supported: use an HTTP callback" },
	{ "compare", JOB_KEY_UNSUPPORTED, "labd does not compare a job with earlier ones" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key criteria_keys[] = {
	{ "status", JOB_KEY_KNOWN, NULL },
	{ "type", JOB_KEY_UNSUPPORTED,
	  "regression and progression need a comparison with earlier jobs, which labd does not make" },
	{ "dependency_query", JOB_KEY_UNSUPPORTED,
	  "labd does not compare a job with earlier ones" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key callback_keys[] = {
	{ "url", JOB_KEY_KNOWN, NULL },
	{ "method", JOB_KEY_KNOWN, NULL },
	{ "token", JOB_KEY_KNOWN, NULL },
	{ "header", JOB_KEY_KNOWN, NULL },
	{ "dataset", JOB_KEY_KNOWN, NULL },
	{ "content-type", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

/* @key of @obj, one of @names (NULL-terminated): its index into *@ret. */
static int notify_walk_enum(struct job_doc *doc, const json_t *obj, const char *key,
			    const char *const *names, const char *list, int *ret)
{
	const char *s;
	int i, r = job_doc_get_str(doc, obj, key, false, &s);

	if (r <= 0)
		return r;
	for (i = 0; names[i]; i++) {
		if (!strcmp(s, names[i])) {
			*ret = i;
			return 1;
		}
	}
	return job_doc_error(doc, key, "unsupported %s '%.100s' (supported: %s)", key, s, list);
}

static int notify_walk_criteria(struct job_doc *doc, const json_t *obj, struct job_notify *n)
{
	static const char *const statuses[] = {
		[NOTIFY_RUNNING] = "running", [NOTIFY_FINISHED] = "finished",
		[NOTIFY_COMPLETE] = "complete", [NOTIFY_INCOMPLETE] = "incomplete",
		[NOTIFY_CANCELED] = "canceled", [NOTIFY_ALL] = "all", NULL,
	};
	json_t *c;
	size_t mark;
	int status = NOTIFY_FINISHED, r = job_doc_get(doc, obj, "criteria", JSON_OBJECT, true, &c);

	if (r <= 0)
		return -EINVAL;
	mark = job_doc_enter(doc, "criteria");
	r = job_doc_check_keys(doc, c, criteria_keys, NULL);
	if (!json_object_get(c, "status"))
		r = job_doc_error(doc, NULL, "missing required key 'status'");
	else if (notify_walk_enum(doc, c, "status", statuses,
				  "running, finished, complete, incomplete, canceled, all", &status) < 0)
		r = -EINVAL;
	n->status = (enum notify_status)status;
	job_doc_leave(doc, mark);
	return r;
}

/* An http(s) URL without blanks or control characters. */
static int notify_walk_url(struct job_doc *doc, const json_t *obj, char **ret)
{
	const char *url, *p;
	int r = job_doc_get_str(doc, obj, "url", true, &url);

	if (r <= 0)
		return -EINVAL;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return job_doc_error(doc, "url", "unsupported callback URL '%.100s' (supported: http://, https://)",
				     url);
	if (strlen(url) > JOB_DOC_MAX_URL)
		return job_doc_error(doc, "url", "'url' is longer than %d bytes", JOB_DOC_MAX_URL);
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return job_doc_error(doc, "url", "'url' must not contain blanks or control characters");
	return job_doc_dup_str(doc, obj, "url", true, ret) < 0 ? -EINVAL : 0;
}

/* A value sent in an HTTP header: no line breaks or control characters. */
static int notify_walk_header_text(struct job_doc *doc, const json_t *obj, const char *key,
				   bool name, char **ret)
{
	const char *s, *p;
	int r = job_doc_get_str(doc, obj, key, false, &s);

	if (r <= 0)
		return r;
	if (name && !job_doc_is_name(s, NOTIFY_MAX_HEADER, "-_"))
		return job_doc_error(doc, key, "invalid header name '%.100s': use up to %d letters, digits, '-' and '_'",
				     s, NOTIFY_MAX_HEADER);
	for (p = s; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return job_doc_error(doc, key, "'%s' must not contain control characters", key);
	return job_doc_dup_str(doc, obj, key, false, ret) < 0 ? -EINVAL : 1;
}

static int notify_walk_callback(struct job_doc *doc, const json_t *obj, struct job_callback *cb)
{
	static const char *const methods[] = { "GET", "POST", NULL };
	static const char *const datasets[] = {
		[NOTIFY_DATASET_MINIMAL] = "minimal", [NOTIFY_DATASET_LOGS] = "logs",
		[NOTIFY_DATASET_RESULTS] = "results", [NOTIFY_DATASET_ALL] = "all", NULL,
	};
	static const char *const types[] = { "urlencoded", "json", NULL };
	int method = 0, dataset = NOTIFY_DATASET_MINIMAL, type = 0;
	int r = job_doc_check_keys(doc, obj, callback_keys, NULL);

	cb->line = job_doc_line(doc, NULL);
	if (notify_walk_url(doc, obj, &cb->url) < 0)
		r = -EINVAL;
	if (notify_walk_enum(doc, obj, "method", methods, "GET, POST", &method) < 0)
		r = -EINVAL;
	if (notify_walk_enum(doc, obj, "dataset", datasets, "minimal, logs, results, all",
			     &dataset) < 0)
		r = -EINVAL;
	if (notify_walk_enum(doc, obj, "content-type", types, "urlencoded, json", &type) < 0)
		r = -EINVAL;
	if (notify_walk_header_text(doc, obj, "token", false, &cb->token) < 0)
		r = -EINVAL;
	if (notify_walk_header_text(doc, obj, "header", true, &cb->header) < 0)
		r = -EINVAL;
	cb->post = method == 1;
	cb->dataset = (enum notify_dataset)dataset;
	cb->json = type == 1;
	return r;
}

/* callback: {...} or callbacks: [{...}, ...] */
static int notify_walk_callbacks(struct job_doc *doc, const json_t *obj, struct job_notify *n)
{
	json_t *one = json_object_get(obj, "callback"), *list = NULL, *item;
	size_t i, count, mark;
	int r = 0;

	if (one && json_object_get(obj, "callbacks"))
		return job_doc_error(doc, "callbacks", "give 'callback' or 'callbacks', not both");
	if (!one && job_doc_get(doc, obj, "callbacks", JSON_ARRAY, false, &list) < 0)
		return -EINVAL;
	if (one && !json_is_object(one))
		return job_doc_error(doc, "callback", "'callback' must be a mapping, not %s",
				     job_doc_type_name(one));
	count = one ? 1 : json_array_size(list);
	if (count > JOB_MAX_CALLBACKS)
		return job_doc_error(doc, "callbacks", "more than %d callbacks", JOB_MAX_CALLBACKS);
	if (!count)
		return 0;
	n->callbacks = calloc(count, sizeof(*n->callbacks));
	if (!n->callbacks)
		return job_doc_nomem(doc);
	n->n_callbacks = count;
	if (one) {
		mark = job_doc_enter(doc, "callback");
		r = notify_walk_callback(doc, one, &n->callbacks[0]);
		job_doc_leave(doc, mark);
		return r;
	}
	mark = job_doc_enter(doc, "callbacks");
	json_array_foreach(list, i, item) {
		size_t m = job_doc_enter_index(doc, i);

		if (!json_is_object(item))
			r = job_doc_error(doc, NULL, "must be a mapping, not %s", job_doc_type_name(item));
		else if (notify_walk_callback(doc, item, &n->callbacks[i]) < 0)
			r = -EINVAL;
		job_doc_leave(doc, m);
	}
	job_doc_leave(doc, mark);
	return r;
}

int job_notify_parse(struct job_doc *doc, const json_t *obj, struct job_notify *ret)
{
	json_t *n;
	size_t mark;
	int r = job_doc_get(doc, obj, "notify", JSON_OBJECT, false, &n);

	if (r <= 0)
		return r < 0 ? -EINVAL : 0;
	mark = job_doc_enter(doc, "notify");
	r = job_doc_check_keys(doc, n, notify_keys, NULL);
	if (notify_walk_criteria(doc, n, ret) < 0)
		r = -EINVAL;
	if (notify_walk_callbacks(doc, n, ret) < 0)
		r = -EINVAL;
	job_doc_leave(doc, mark);
	return r < 0 ? -EINVAL : 0;
}

void job_notify_release(struct job_notify *n)
{
	size_t i;

	for (i = 0; i < n->n_callbacks; i++) {
		free(n->callbacks[i].url);
		free(n->callbacks[i].token);
		free(n->callbacks[i].header);
	}
	free(n->callbacks);
	memset(n, 0, sizeof(*n));
}
