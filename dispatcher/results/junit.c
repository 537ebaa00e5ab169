// SPDX-License-Identifier: GPL-2.0-or-later
/* junit.c -- a finished job as JUnit XML: a boot suite and one suite per result suite */
#include "results/junit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "core/strbuf.h"
#include "results/kcidb.h"
#include "results/report.h"
#include "results/utf8.h"

struct counts {
	unsigned tests, failures, errors, skipped;
};

int junit_escape(struct strbuf *out, const char *data, size_t len)
{
	struct strbuf clean = STRBUF_INIT;
	size_t i;
	int err = 0;

	if (utf8_sanitize(data, len, UTF8_XML, 0, &clean) < 0)
		return -ENOMEM;
	for (i = 0; i < clean.len && !err; i++) {
		switch (clean.buf[i]) {
		case '&':
			err = strbuf_addstr(out, "&amp;");
			break;
		case '<':
			err = strbuf_addstr(out, "&lt;");
			break;
		case '>':
			err = strbuf_addstr(out, "&gt;");
			break;
		case '"':
			err = strbuf_addstr(out, "&quot;");
			break;
		case '\'':
			err = strbuf_addstr(out, "&apos;");
			break;
		case '\r':
			err = strbuf_addstr(out, "&#13;");
			break;
		default:
			err = strbuf_addch(out, clean.buf[i]);
		}
	}
	strbuf_release(&clean);
	return err;
}

static void esc(struct strbuf *out, const char *s)
{
	junit_escape(out, s ? s : "", s ? strlen(s) : 0);
}

/* An attribute value: also keeps TAB and LF, which parsers would normalise to blanks. */
static void attr(struct strbuf *out, const char *name, const char *value)
{
	struct strbuf v = STRBUF_INIT;
	size_t i;

	esc(&v, value);
	strbuf_addf(out, " %s=\"", name);
	for (i = 0; i < v.len; i++) {
		if (v.buf[i] == '\n')
			strbuf_addstr(out, "&#10;");
		else if (v.buf[i] == '\t')
			strbuf_addstr(out, "&#9;");
		else
			strbuf_addch(out, v.buf[i]);
	}
	strbuf_addch(out, '"');
	strbuf_release(&v);
}

/* The last JUNIT_MAX_TEXT bytes of @data as element text. */
static void text(struct strbuf *out, const char *data, size_t len)
{
	size_t start;

	if (!len)
		return;	/* @data may be NULL: an empty log */
	start = utf8_tail_start(data, len, JUNIT_MAX_TEXT);
	junit_escape(out, data + start, len - start);
}

static void counts_attrs(struct strbuf *out, const struct counts *c)
{
	strbuf_addf(out, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\"", c->tests,
		    c->failures, c->errors, c->skipped);
}

static double job_seconds(const struct report *r)
{
	return r->started && r->ended >= r->started ? (double)(r->ended - r->started) / 1e6 : 0;
}

/* ---- the boot suite ---- */

static void count_boot(const struct report *r, struct counts *c)
{
	const char *st = kcidb_boot_status(r);

	c->tests++;
	if (!st)
		c->skipped++;
	else if (!strcmp(st, "FAIL"))
		c->failures++;
	else if (strcmp(st, "PASS"))
		c->errors++;
}

static void property(struct strbuf *out, const char *name, const char *value)
{
	if (!value)
		return;
	strbuf_addstr(out, "      <property");
	attr(out, "name", name);
	attr(out, "value", value);
	strbuf_addstr(out, "/>\n");
}

static void boot_properties(struct strbuf *out, const struct report *r)
{
	char id[32];

	snprintf(id, sizeof(id), "%lld", (long long)r->job_id);
	strbuf_addstr(out, "    <properties>\n");
	property(out, "job_id", id);
	property(out, "job_name", r->name);
	property(out, "board", r->device);
	property(out, "device_type", r->device_type);
	property(out, "health", job_health_name(r->health));
	if (r->health == JOB_HEALTH_INCOMPLETE)
		property(out, "error_type", error_type_name(r->error_type));
	property(out, "error_msg", r->error_msg);
	property(out, "log_url", r->log_url);
	strbuf_addstr(out, "    </properties>\n");
}

static void boot_case(struct strbuf *out, const struct report *r)
{
	const char *st = kcidb_boot_status(r);
	const char *msg = r->error_msg ? r->error_msg : "boot failed";
	char cls[512];

	snprintf(cls, sizeof(cls), "%s.%s", r->lab, r->device ? r->device : r->device_type);
	strbuf_addstr(out, "    <testcase");
	attr(out, "classname", cls);
	strbuf_addf(out, " name=\"boot\" time=\"%.3f\">\n", job_seconds(r));
	if (!st) {
		strbuf_addstr(out, "      <skipped message=\"the job has not finished\"/>\n");
	} else if (strcmp(st, "PASS")) {
		strbuf_addf(out, "      <%s", !strcmp(st, "FAIL") ? "failure" : "error");
		attr(out, "message", msg);
		attr(out, "type", st);
		strbuf_addstr(out, ">");
		text(out, r->log_tail, r->log_tail_len);
		strbuf_addf(out, "</%s>\n", !strcmp(st, "FAIL") ? "failure" : "error");
	}
	strbuf_addstr(out, "    </testcase>\n");
}

static void boot_suite(struct strbuf *out, const struct report *r)
{
	struct counts c = { 0 };
	char ts[32] = "";

	count_boot(r, &c);
	strbuf_addstr(out, "  <testsuite name=\"boot\"");
	counts_attrs(out, &c);
	strbuf_addf(out, " time=\"%.3f\"", job_seconds(r));
	if (r->started) {
		time_t t = (time_t)(r->started / 1000000);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		attr(out, "timestamp", ts);
	}
	attr(out, "hostname", r->device ? r->device : "");
	strbuf_addstr(out, ">\n");
	boot_properties(out, r);
	boot_case(out, r);
	strbuf_addstr(out, "  </testsuite>\n");
}

/* ---- result suites ---- */

static void count_result(const struct report_result *res, struct counts *c)
{
	c->tests++;
	if (!strcmp(res->result, "fail"))
		c->failures++;
	else if (!strcmp(res->result, "skip"))
		c->skipped++;
	else if (strcmp(res->result, "pass"))
		c->errors++;
}

static void result_text(struct strbuf *out, const struct report_result *res)
{
	const char *kexcerpt = json_string_value(json_object_get(res->extra, "excerpt"));

	if (kexcerpt && *kexcerpt)
		text(out, kexcerpt, strlen(kexcerpt));
	else if (res->excerpt_len)
		text(out, res->excerpt, res->excerpt_len);
}

static void result_case(struct strbuf *out, const struct report_result *res)
{
	const char *first = json_string_value(json_object_get(res->extra, "first_line"));
	bool fail = !strcmp(res->result, "fail");

	strbuf_addstr(out, "    <testcase");
	attr(out, "classname", res->suite);
	attr(out, "name", res->name);
	strbuf_addstr(out, ">\n");
	if (fail || (strcmp(res->result, "pass") && strcmp(res->result, "skip"))) {
		strbuf_addf(out, "      <%s", fail ? "failure" : "error");
		attr(out, "message", first ? first : fail ? "failed" : "no result");
		attr(out, "type", res->result);
		strbuf_addstr(out, ">");
		result_text(out, res);
		strbuf_addf(out, "</%s>\n", fail ? "failure" : "error");
	} else if (!strcmp(res->result, "skip")) {
		strbuf_addstr(out, "      <skipped/>\n");
	}
	if (res->has_measurement) {
		strbuf_addf(out, "      <system-out>measurement: %g ", res->measurement);
		esc(out, res->units);
		strbuf_addstr(out, "</system-out>\n");
	}
	strbuf_addstr(out, "    </testcase>\n");
}

static bool suite_seen_before(const struct report *r, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(r->results[j].suite, r->results[i].suite))
			return true;
	return false;
}

static void result_suite(struct strbuf *out, const struct report *r, const char *suite)
{
	struct counts c = { 0 };
	size_t i;

	for (i = 0; i < r->n_results; i++)
		if (!strcmp(r->results[i].suite, suite))
			count_result(&r->results[i], &c);
	strbuf_addstr(out, "  <testsuite");
	attr(out, "name", suite);
	counts_attrs(out, &c);
	strbuf_addstr(out, ">\n");
	for (i = 0; i < r->n_results; i++)
		if (!strcmp(r->results[i].suite, suite))
			result_case(out, &r->results[i]);
	strbuf_addstr(out, "  </testsuite>\n");
}

int junit_build(const struct report *r, struct strbuf *out)
{
	struct counts c = { 0 };
	char name[512];
	size_t i;

	count_boot(r, &c);
	for (i = 0; i < r->n_results; i++)
		count_result(&r->results[i], &c);
	snprintf(name, sizeof(name), "%s job %lld", r->lab, (long long)r->job_id);
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	attr(out, "name", name);
	counts_attrs(out, &c);
	strbuf_addf(out, " time=\"%.3f\">\n", job_seconds(r));
	boot_suite(out, r);
	for (i = 0; i < r->n_results; i++)
		if (!suite_seen_before(r, i))
			result_suite(out, r, r->results[i].suite);
	return strbuf_addstr(out, "</testsuites>\n");
}
