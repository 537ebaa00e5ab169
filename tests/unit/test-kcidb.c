// SPDX-License-Identifier: GPL-2.0-or-later
/* test-kcidb.c -- KCIDB documents from hand-made reports: fields, statuses, paths, schema */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/strbuf.h"
#include "core/strv.h"
#include "results/kcidb.h"
#include "results/report.h"
#include "results/utf8.h"
#include "tap.h"

/* A finished job of two results; the caller frees with report_free(). */
static struct report *sample(void)
{
	static const char tail[] = "[    3.1] Run /init\r\n\xff\xfe bad \0nul\r\nsim login: ";
	struct report *r = calloc(1, sizeof(*r));

	r->job_id = 42;
	r->lab = strdup("test-lab");
	r->name = strdup("boot test");
	r->device = strdup("sim-01");
	r->device_type = strdup("sim-uboot");
	r->health = JOB_HEALTH_COMPLETE;
	r->submitted = 1764700000000000ULL;
	r->started = 1764700001000000ULL;
	r->ended = 1764700048300000ULL;
	r->attempt = 1;
	strv_push(&r->phases, "power-on");
	strv_push(&r->phases, "kernel-start");
	strv_push(&r->phases, "shell");
	r->log_tail = malloc(sizeof(tail));
	memcpy(r->log_tail, tail, sizeof(tail));
	r->log_tail_len = sizeof(tail) - 1;
	r->log_url = strdup("http://lab.example.org:8640/api/v1/jobs/42/log");
	r->metadata = json_pack("{s:{s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s}, s:[s, s]}}", "kcidb",
				"checkout", "id", "abc123", "git_repository_url",
				"https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git",
				"git_commit_hash", "0123456789abcdef0123456789abcdef01234567",
				"tree_name", "mainline", "build", "architecture", "arm64",
				"config_name", "defconfig", "compatible", "hardkernel,odroid-n2",
				"amlogic,g12b");
	r->results = calloc(3, sizeof(*r->results));
	r->n_results = 3;
	r->results[0] = (struct report_result){ strdup("kunit"),
		strdup("list-kunit-test.list test/add:1"), strdup("fail"), .log_start = 3,
		.log_end = 4, .excerpt = strdup("# EXPECTATION FAILED\n"), .excerpt_len = 21 };
	r->results[1] = (struct report_result){ strdup("kernel-messages"), strdup("oops"),
		strdup("fail"), .extra = json_pack("{s:s, s:s}", "first_line", "Unable to handle",
						   "excerpt", "Oops: 0000 [#1]\n") };
	r->results[2] = (struct report_result){ strdup("smoke"), strdup("boot-time"), strdup("pass"),
		.has_measurement = true, .measurement = 3.25, .units = strdup("s") };
	return r;
}

static const json_t *test_by_path(const json_t *doc, const char *path)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(doc, "tests"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "path")), path))
			return t;
	return NULL;
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

TEST(test_kcidb__document)
{
	struct report *r = sample();
	struct strbuf why = STRBUF_INIT;
	const json_t *boot, *t;
	json_t *doc;

	CHECK(kcidb_build(r, "my-lab", &doc) == -EINVAL);
	CHECK(kcidb_build(r, "test_lab", &doc) == 0);
	if (kcidb_check(doc, &why) < 0)
		printf("# %s\n", why.buf);
	CHECK(kcidb_check(doc, &why) == 0);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "version"), "minor")), ==, 3);
	CHECK_STR(str(json_array_get(json_object_get(doc, "checkouts"), 0), "id"), "test_lab:abc123");
	CHECK_STR(str(json_array_get(json_object_get(doc, "builds"), 0), "checkout_id"),
		  "test_lab:abc123");
	CHECK_STR(str(json_array_get(json_object_get(doc, "builds"), 0), "architecture"), "arm64");
	boot = test_by_path(doc, "boot");
	CHECK(boot);
	CHECK_STR(str(boot, "id"), "test_lab:job-42.boot");
	CHECK_STR(str(boot, "build_id"), "test_lab:job-42");
	CHECK_STR(str(boot, "status"), "PASS");
	CHECK_STR(str(boot, "start_time"), "2025-12-02T18:26:41.000000+00:00");
	CHECK(json_real_value(json_object_get(boot, "duration")) > 47.29);
	CHECK_STR(str(json_object_get(boot, "misc"), "runtime"), "test-lab");
	CHECK_STR(str(json_object_get(json_object_get(boot, "environment"), "misc"), "board"),
		  "sim-01");
	CHECK_INT(json_array_size(json_object_get(json_object_get(boot, "environment"),
						  "compatible")), ==, 2);
	/* the excerpt is valid UTF-8 without NUL */
	CHECK(strstr(str(boot, "log_excerpt"), UTF8_REPLACEMENT UTF8_REPLACEMENT " bad nul"));
	t = test_by_path(doc, "boot.kunit.list-kunit-test.list_test_add_1");
	CHECK(t);
	CHECK_STR(str(t, "status"), "FAIL");
	CHECK_STR(str(t, "log_excerpt"), "# EXPECTATION FAILED\n");
	t = test_by_path(doc, "boot.kernel-messages.oops");
	CHECK(t);
	CHECK_STR(str(t, "log_excerpt"), "Oops: 0000 [#1]\n");
	t = test_by_path(doc, "boot.smoke.boot-time");
	CHECK(t);
	CHECK_STR(str(json_object_get(t, "number"), "unit"), "s");
	json_decref(doc);
	strbuf_release(&why);
	report_free(r);
}

TEST(test_kcidb__foreign_build_and_bad_metadata)
{
	struct report *r = sample();
	struct strbuf why = STRBUF_INIT;
	json_t *doc;

	json_decref(r->metadata);
	r->metadata = json_pack("{s:{s:s, s:{s:s}}}", "kcidb", "build_id", "maestro:68a1f0c2",
				"checkout", "git_commit_hash", "short");
	CHECK(kcidb_build(r, "test_lab", &doc) == 0);
	CHECK(!json_object_get(doc, "checkouts"));
	CHECK_STR(str(test_by_path(doc, "boot"), "build_id"), "maestro:68a1f0c2");
	CHECK(kcidb_check(doc, &why) == 0);
	json_decref(doc);
	/* an invalid field is left out, not sent */
	json_decref(r->metadata);
	r->metadata = json_pack("{s:{s:{s:s, s:s}}}", "kcidb", "checkout", "git_commit_hash",
				"short", "git_repository_url", "git://example.org/x.git");
	CHECK(kcidb_build(r, "test_lab", &doc) == 0);
	CHECK(!json_object_get(json_array_get(json_object_get(doc, "checkouts"), 0),
			       "git_commit_hash"));
	CHECK(!json_object_get(json_array_get(json_object_get(doc, "checkouts"), 0),
			       "git_repository_url"));
	/* the checker catches what the schema would refuse */
	json_object_set_new(json_array_get(json_object_get(doc, "tests"), 0), "path",
			    json_string("boot/login"));
	CHECK(kcidb_check(doc, &why) == -EINVAL);
	CHECK_CONTAINS(why.buf, "path");
	json_decref(doc);
	strbuf_release(&why);
	report_free(r);
}

TEST(test_kcidb__boot_status)
{
	struct report *r = sample();

	CHECK_STR(kcidb_boot_status(r), "PASS");
	r->health = JOB_HEALTH_INCOMPLETE;
	r->error_type = ERROR_TEST;
	CHECK_STR(kcidb_boot_status(r), "PASS");	/* the shell was reached */
	r->phases = strv_free(r->phases);
	strv_push(&r->phases, "kernel-start");
	r->error_type = ERROR_JOB;
	CHECK_STR(kcidb_boot_status(r), "FAIL");
	r->error_type = ERROR_INFRASTRUCTURE;
	CHECK_STR(kcidb_boot_status(r), "MISS");
	r->phases = strv_free(r->phases);
	r->error_type = ERROR_JOB;
	CHECK_STR(kcidb_boot_status(r), "MISS");
	r->health = JOB_HEALTH_CANCELED;
	CHECK_STR(kcidb_boot_status(r), "ERROR");
	r->health = JOB_HEALTH_UNKNOWN;
	CHECK(kcidb_boot_status(r) == NULL);
	CHECK_STR(kcidb_result_status("unknown"), "ERROR");
	CHECK_STR(kcidb_result_status("skip"), "SKIP");
	report_free(r);
}

TEST(test_kcidb__paths_and_excerpt_limit)
{
	struct strbuf p = STRBUF_INIT;
	struct report *r = sample();
	struct strbuf why = STRBUF_INIT;
	json_t *doc;
	size_t i, chars = 0;
	const char *ex;

	kcidb_path_append(&p, "boot");
	kcidb_path_append(&p, "..kselftest.net:ipv6 test..");
	CHECK_STR(p.buf, "boot.kselftest.net_ipv6_test");
	/* 20000 three-byte characters: the excerpt keeps the last 16384, whole */
	free(r->log_tail);
	r->log_tail_len = 60000 + 1;
	r->log_tail = malloc(r->log_tail_len);
	for (i = 0; i < 20000; i++)
		memcpy(r->log_tail + 1 + 3 * i, "\xe2\x82\xac", 3);
	r->log_tail[0] = 'x';
	CHECK(kcidb_build(r, "test_lab", &doc) == 0);
	CHECK(kcidb_check(doc, &why) == 0);
	ex = str(test_by_path(doc, "boot"), "log_excerpt");
	CHECK(utf8_is_valid(ex, strlen(ex)));
	for (i = 0; ex[i]; i++)
		chars += ((unsigned char)ex[i] & 0xc0) != 0x80;
	CHECK_INT(chars, ==, KCIDB_MAX_EXCERPT);
	json_decref(doc);
	strbuf_release(&p);
	strbuf_release(&why);
	report_free(r);
}

TEST(test_kcidb__schema)
{
	char dir[] = "/tmp/test-kcidb-XXXXXX", path[64], cmd[512];
	const char *top = getenv("LABD_TOP");
	struct report *r = sample();
	json_t *doc;

	if (access("/usr/bin/python3", X_OK) ||
	    system("/usr/bin/python3 -c 'import jsonschema' 2>/dev/null"))
		TEST_SKIP("python3-jsonschema is not installed");
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/doc.json", dir);
	CHECK(kcidb_build(r, "test_lab", &doc) == 0);
	CHECK(json_dump_file(doc, path, 0) == 0);
	snprintf(cmd, sizeof(cmd), "%s/tests/helper/kcidb-validate.py %s", top ? top : ".", path);
	CHECK(system(cmd) == 0);
	json_decref(doc);
	unlink(path);
	rmdir(dir);
	report_free(r);
}

TEST_LIST(test_kcidb__document, test_kcidb__foreign_build_and_bad_metadata,
	  test_kcidb__boot_status, test_kcidb__paths_and_excerpt_limit, test_kcidb__schema);
