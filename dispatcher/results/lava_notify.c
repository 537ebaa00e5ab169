// SPDX-License-Identifier: GPL-2.0-or-later
/* lava_notify.c -- a LAVA notify callback's body (create_job_data), its URL and form encoding */
#include "results/lava_notify.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/strbuf.h"
#include "results/lava_log.h"
#include "results/lava_results.h"
#include "store/store.h"

/* Python's str() of an aware UTC datetime: "2026-01-01 12:00:00.123456+00:00", or "None". */
static json_t *py_time(uint64_t usec)
{
	/* room for any int's digits: gcc -O0 does not know the fields of tm are small */
	char buf[96], frac[16] = "";
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;

	if (!usec)
		return json_string("None");
	gmtime_r(&t, &tm);
	if (usec % 1000000)
		snprintf(frac, sizeof(frac), ".%06u", (unsigned)(usec % 1000000));
	snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d%s+00:00", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	return json_string(buf);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The whole YAML log, or its first LAVA_NOTIFY_MAX_LOG bytes (whole records). */
static json_t *whole_log(const char *dir)
{
	struct strbuf out = STRBUF_INIT;
	struct lava_log *lg = NULL;
	json_t *v = NULL;
	long n = 0;

	if (lava_log_open(dir, NULL, true, &lg) < 0)
		return NULL;
	while (out.len < LAVA_NOTIFY_MAX_LOG &&
	       (n = lava_log_read(lg, LAVA_LOG_CHUNK, 0, &out)) > 0)
		;
	lava_log_close(lg);
	if (n >= 0)
		v = json_stringn(out.buf, out.len);
	strbuf_release(&out);
	return v;
}

int lava_notify_add_log(json_t *data, const char *log_dir)
{
	return json_object_set_new(data, "log", whole_log(log_dir)) < 0 ? -ENOMEM : 0;
}

json_t *lava_notify_data(const struct job_record *rec, const json_t *metadata,
			 const char *log_dir, const struct lava_results *results)
{
	int status = lava_job_status(rec->state, rec->health);
	json_t *meta = metadata ? json_incref((json_t *)metadata) : json_object(), *o;
	char lower[32];
	size_t i;

	snprintf(lower, sizeof(lower), "%s", lava_job_status_name(status));
	for (i = 0; lower[i]; i++)
		lower[i] = (char)tolower((unsigned char)lower[i]);
	o = json_pack("{s:I, s:i, s:s, s:i, s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:s, s:s, s:i,"
		      " s:o, s:o, s:o, s:o, s:b}",
		      "id", (json_int_t)rec->id, "status", status, "status_string", lower,
		      "state", lava_job_state_int(rec->state), "state_string",
		      lava_job_state_name(rec->state), "health", lava_job_health_int(rec->health),
		      "health_string", lava_job_health_name(rec->health),
		      "submit_time", py_time(rec->submitted), "start_time", py_time(rec->started),
		      "end_time", py_time(rec->ended),
		      "submitter_username", str_or_null(rec->submitter),
		      "submitter_email", "", "failure_comment", "", "priority", rec->priority,
		      "description", str_or_null(rec->name),
		      "actual_device_id", str_or_null(rec->device),
		      "definition", str_or_null(rec->definition),
		      "metadata", meta, "health_check", 0);
	if (o && log_dir && lava_notify_add_log(o, log_dir) < 0)
		o = (json_decref(o), NULL);
	if (o && results && json_object_set_new(o, "results", lava_results_callback(results)) < 0)
		o = (json_decref(o), NULL);
	return o;
}

/* A scalar field as text: "42", "complete". */
static void add_scalar(struct strbuf *sb, const json_t *v)
{
	if (json_is_string(v))
		strbuf_addstr(sb, json_string_value(v));
	else if (json_is_integer(v))
		strbuf_addf(sb, "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		strbuf_addstr(sb, json_is_true(v) ? "True" : "False");
}

char *lava_notify_url(const char *url, const json_t *data)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = url, *close;
	char field[64];
	size_t n, i;

	while (*p) {
		const json_t *v;

		close = *p == '{' ? strchr(p, '}') : NULL;
		n = close ? (size_t)(close - p - 1) : 0;
		if (!n || n >= sizeof(field)) {
			strbuf_addch(&out, *p++);
			continue;
		}
		for (i = 0; i < n; i++)
			field[i] = (char)tolower((unsigned char)p[1 + i]);
		field[n] = '\0';
		v = json_object_get(data, field);
		if (!v || json_is_object(v) || json_is_array(v)) {
			strbuf_addch(&out, *p++);
			continue;
		}
		add_scalar(&out, v);
		p = close + 1;
	}
	return strbuf_detach(&out, NULL);
}

char *lava_notify_urlencoded(const json_t *data)
{
	struct strbuf out = STRBUF_INIT, val = STRBUF_INIT;
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)data, key, v) {
		char *k, *e, *text = NULL;

		strbuf_reset(&val);
		if (json_is_object(v) || json_is_array(v))
			text = json_dumps(v, JSON_COMPACT);
		else
			add_scalar(&val, v);
		k = curl_easy_escape(NULL, key, 0);
		e = curl_easy_escape(NULL, text ? text : val.buf, 0);
		if (k && e)
			strbuf_addf(&out, "%s%s=%s", out.len ? "&" : "", k, e);
		curl_free(k);
		curl_free(e);
		free(text);
	}
	strbuf_release(&val);
	return strbuf_detach(&out, NULL);
}
