// SPDX-License-Identifier: GPL-2.0-or-later
/* test-lava-results.c -- a report as LAVA's suites and cases: the lava suite, YAML, JSON */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "results/lava_results.h"
#include "results/report.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "tap.h"

static struct report *sample(enum job_health health, enum error_type type)
{
	struct report *r = calloc(1, sizeof(*r));

	r->job_id = 42;
	r->health = health;
	r->error_type = type;
	r->error_msg = type ? strdup("test definition '1_ltp.v2' raised an error: boom") : NULL;
	r->started = 1764700001000000ULL;
	r->ended = health ? 1764700048300000ULL : 0;
	strv_push(&r->phases, "power-on");
	strv_push(&r->phases, "kernel-start");
	strv_push(&r->phases, "login-prompt");
	strv_push(&r->phases, "shell");
	strv_push(&r->stages, "auto-login-action");
	strv_push(&r->stages, "0_smoke");
	strv_push(&r->stages_done, "0_smoke");
	strv_push(&r->stages, "1_ltp.v2");
	strv_push(&r->testdefs, "0_smoke");
	strv_push(&r->testdefs, "1_ltp.v2");
	strv_push(&r->testdefs, "2_never");
	r->results = calloc(5, sizeof(*r->results));
	r->n_results = 5;
	r->results[0] = (struct report_result){ strdup("0_smoke"), strdup("pwd"), strdup("pass"),
		.extra = json_pack("{s:s}", "set", "basic"), .created = 1764700010000000ULL };
	r->results[1] = (struct report_result){ strdup("kernel-messages"), strdup("warning"),
		strdup("fail"), .extra = json_pack("{s:s}", "first_line", "WARNING: at x.c:1") };
	r->results[2] = (struct report_result){ strdup("1_ltp.v2"), strdup("mm: \"x\""),
		strdup("fail"), .has_measurement = true, .measurement = 12, .units = strdup("MB/s"),
		.log_start = 3, .log_end = 4 };
	r->results[3] = (struct report_result){ strdup("ktap"), strdup("a.b"), strdup("skip"), .log_start = 0 };
	r->results[4] = (struct report_result){ strdup("0_smoke"), strdup("12"), strdup("unknown"), .log_start = 0 };
	return r;
}

static const struct lava_case *find(const struct lava_results *lr, const char *suite,
				    const char *name)
{
	size_t i;

	for (i = 0; i < lr->n_cases; i++)
		if (!strcmp(lr->suites[lr->cases[i].suite], suite) &&
		    !strcmp(lr->cases[i].name, name))
			return &lr->cases[i];
	return NULL;
}

/* Run a python check on @text (YAML on stdin): prints what the script prints. */
static int python(const char *script, const struct strbuf *text, char *out, size_t len)
{
	char path[] = "/tmp/test-lava-results-XXXXXX", cmd[4096];
	FILE *f, *p;
	int fd = mkstemp(path), ok;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fwrite(text->buf, 1, text->len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load("
		 "open(sys.argv[1])); %s' %s", script, path);
	p = popen(cmd, "r");
	ok = p && fgets(out, (int)len, p) != NULL;
	if (p)
		ok = pclose(p) == 0 && ok;
	unlink(path);
	out[strcspn(out, "\n")] = '\0';
	return ok ? 0 : -1;
}

TEST(test_lava_results__suites_and_lava_cases)
{
	struct report *r = sample(JOB_HEALTH_INCOMPLETE, ERROR_TEST);
	struct lava_results *lr;
	const struct lava_case *c;
	char *suites;

	CHECK(lava_results_build(r, NULL, &lr) == 0);
	suites = strv_join(lr->suites, ",");
	CHECK_STR(suites, "0_smoke,1_ltp.v2,ktap,lava");
	free(suites);
	CHECK(lava_results_suite(lr, "kernel-messages") == -1);
	CHECK((c = find(lr, "lava", "job")) && !strcmp(c->result, "fail"));
	CHECK_STR(json_string_value(json_object_get(c->metadata, "error_type")), "Test");
	CHECK_CONTAINS(json_string_value(json_object_get(c->metadata, "error_msg")), "boom");
	CHECK((c = find(lr, "lava", "auto-login-action")) && !strcmp(c->result, "pass"));
	CHECK((c = find(lr, "lava", "login-action")) && !strcmp(c->result, "pass"));
	CHECK((c = find(lr, "lava", "kernel-messages")) && !strcmp(c->result, "fail"));
	CHECK_STR(json_string_value(json_object_get(json_array_get(
			  json_object_get(c->metadata, "extra"), 0), "message")),
		  "WARNING: at x.c:1");
	CHECK((c = find(lr, "lava", "0_smoke")) && !strcmp(c->result, "pass"));
	CHECK((c = find(lr, "lava", "1_ltp.v2")) && !strcmp(c->result, "fail"));
	CHECK(!find(lr, "lava", "2_never"));	/* never started: no result, as in LAVA */
	CHECK((c = find(lr, "0_smoke", "pwd")) && c->id == 1);
	CHECK_STR(json_string_value(json_object_get(c->metadata, "set")), "basic");
	CHECK_STR(json_string_value(json_object_get(c->metadata, "definition")), "0_smoke");
	CHECK_INT(lr->n_cases, ==, 4 + 6);
	lava_results_free(lr);
	report_free(r);

	/* a complete job: every definition passed, no login failure; running: no job case */
	r = sample(JOB_HEALTH_COMPLETE, ERROR_NONE);
	CHECK(lava_results_build(r, NULL, &lr) == 0);
	CHECK((c = find(lr, "lava", "2_never")) && !strcmp(c->result, "pass"));
	CHECK((c = find(lr, "lava", "job")) && !strcmp(c->result, "pass"));
	CHECK(!json_object_get(c->metadata, "error_type"));
	lava_results_free(lr);
	report_free(r);
	r = sample(JOB_HEALTH_UNKNOWN, ERROR_NONE);
	CHECK(lava_results_build(r, NULL, &lr) == 0);
	CHECK(!find(lr, "lava", "job") && !find(lr, "lava", "0_smoke"));
	CHECK(find(lr, "lava", "auto-login-action"));
	lava_results_free(lr);
	report_free(r);
}

/*
 * A job that failed before its board was powered (a download): the job case
 * with its error, and nothing for the login or the test definitions, which
 * never ran; one that failed in the bootloader has no login case either.
 */
TEST(test_lava_results__only_what_ran)
{
	struct report *r = sample(JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE);
	size_t n_results = r->n_results;
	struct lava_results *lr;
	const struct lava_case *c;

	free(r->error_msg);
	r->error_msg = strdup("download of 'http://x/Image' failed: HTTP 404");
	r->phases = strv_free(r->phases);
	r->stages = strv_free(r->stages);
	r->stages_done = strv_free(r->stages_done);
	r->n_results = 0;	/* none recorded */
	CHECK(lava_results_build(r, NULL, &lr) == 0);
	CHECK_INT(lr->n_cases, ==, 1);
	CHECK((c = find(lr, "lava", "job")) && !strcmp(c->result, "fail"));
	CHECK_STR(json_string_value(json_object_get(c->metadata, "error_type")), "Infrastructure");
	CHECK_STR(json_string_value(json_object_get(c->metadata, "error_msg")),
		  "download of 'http://x/Image' failed: HTTP 404");
	lava_results_free(lr);
	strv_push(&r->phases, "power-on");
	strv_push(&r->phases, "bootloader-prompt");
	CHECK(lava_results_build(r, NULL, &lr) == 0);
	CHECK(!find(lr, "lava", "auto-login-action") && !find(lr, "lava", "0_smoke"));
	lava_results_free(lr);
	strv_push(&r->stages, "auto-login-action");
	CHECK(lava_results_build(r, NULL, &lr) == 0);
	CHECK((c = find(lr, "lava", "auto-login-action")) && !strcmp(c->result, "fail"));
	lava_results_free(lr);
	r->n_results = n_results;	/* freed with the report */
	report_free(r);
}

/* What lavacli, squad and KernelCI's callback handler load from the YAML. */
TEST(test_lava_results__export_yaml)
{
	struct report *r = sample(JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE);
	struct strbuf yaml = STRBUF_INIT;
	struct lava_results *lr;
	char out[1024];

	CHECK(lava_results_build(r, NULL, &lr) == 0);
	CHECK(lava_results_export_yaml(lr, -1, 0, 0, &yaml) == 0);
	CHECK(python("print(len(d), all(isinstance(v, str) for c in d for k, v in c.items() "
		     "if k != \"metadata\"), d[0][\"job\"], d[0][\"id\"], d[0][\"metadata\"][\"set\"], "
		     "d[1][\"name\"], d[1][\"measurement\"], d[1][\"unit\"], d[1][\"log_start_line\"], "
		     "d[3][\"name\"], d[3][\"log_end_line\"], d[4][\"url\"], d[4][\"logged\"])",
		     &yaml, out, sizeof(out)) == 0);
	CHECK_STR(out, "10 True 42 1 basic mm: \"x\" 12.0000000000 MB/s 3 12 None "
		       "/results/42/lava/job 2025-12-02 18:27:28.300000+00:00");
	strbuf_reset(&yaml);
	CHECK(lava_results_export_yaml(lr, lava_results_suite(lr, "0_smoke"), 1, 5, &yaml) == 0);
	CHECK(python("print(len(d), d[0][\"name\"], d[0][\"suite\"])", &yaml, out,
		     sizeof(out)) == 0);
	CHECK_STR(out, "1 12 0_smoke");
	strbuf_reset(&yaml);
	CHECK(lava_results_export_yaml(lr, lava_results_suite(lr, "0_smoke"), 5, 5, &yaml) == 0);
	CHECK_STR(yaml.buf, "[]\n");
	strbuf_reset(&yaml);
	CHECK(lava_results_suites_yaml(lr, &yaml) == 0);
	CHECK(python("print(d[3])", &yaml, out, sizeof(out)) == 0);
	CHECK_STR(out, "{'name': 'lava', 'job': '42', 'id': '4'}");
	lava_results_free(lr);
	report_free(r);
	strbuf_release(&yaml);
}

TEST(test_lava_results__json)
{
	struct report *r = sample(JOB_HEALTH_COMPLETE, ERROR_NONE);
	struct lava_results *lr;
	const struct lava_case *c;
	json_t *o, *cb;

	CHECK(lava_results_build(r, NULL, &lr) == 0);
	c = find(lr, "1_ltp.v2", "mm: \"x\"");
	CHECK(c);
	o = lava_case_json(lr, c, "http://lab");
	CHECK(o);
	CHECK_STR(json_string_value(json_object_get(o, "measurement")), "12.0000000000");
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "MB/s");
	CHECK_INT(json_integer_value(json_object_get(o, "suite")), ==, 2);
	CHECK_INT(json_integer_value(json_object_get(o, "start_log_line")), ==, 3);
	CHECK(json_is_null(json_object_get(o, "test_set")));
	CHECK_STR(json_string_value(json_object_get(o, "resource_uri")),
		  "http://lab/api/v0.2/jobs/42/tests/2/");
	CHECK_CONTAINS(json_string_value(json_object_get(o, "metadata")), "units: \"MB/s\"\n");
	json_decref(o);
	o = lava_suite_json(lr, 3, "http://lab");
	CHECK_STR(json_string_value(json_object_get(o, "name")), "lava");
	CHECK_STR(json_string_value(json_object_get(o, "resource_uri")),
		  "http://lab/api/v0.2/jobs/42/suites/4/");
	json_decref(o);
	cb = lava_results_callback(lr);
	CHECK(cb && json_object_size(cb) == 4);
	CHECK_CONTAINS(json_string_value(json_object_get(cb, "lava")), "name: \"job\"");
	json_decref(cb);
	lava_results_free(lr);
	report_free(r);
}

TEST_LIST(test_lava_results__suites_and_lava_cases, test_lava_results__only_what_ran, test_lava_results__export_yaml,
	  test_lava_results__json);
