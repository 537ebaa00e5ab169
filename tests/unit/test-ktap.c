// SPDX-License-Identifier: GPL-2.0-or-later
/* test-ktap.c -- the KTAP/TAP parser on the fixtures of tests/data/ktap/ and on made-up damage */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "results/ktap.h"
#include "tap.h"

/* Every result as one line: "name result [directive] ['reason'] [!error] [suite] @start-end". */
static struct strbuf got = STRBUF_INIT;
static int counts[3];	/* pass, fail, skip */

static void record(const struct ktap_result *r, void *ud)
{
	strbuf_addf(&got, "%s %s", r->name, r->result);
	if (r->directive)
		strbuf_addf(&got, " %s", r->directive);
	if (r->reason)
		strbuf_addf(&got, " '%s'", r->reason);
	if (r->error)
		strbuf_addf(&got, " !%s", r->error);
	if (r->suite)
		strbuf_addstr(&got, " suite");
	strbuf_addf(&got, " @%lld-%lld\n", (long long)r->line_start, (long long)r->line_end);
	counts[!strcmp(r->result, "fail") ? 1 : !strcmp(r->result, "skip") ? 2 : 0]++;
}

static struct ktap *begin(void)
{
	struct ktap *k;

	strbuf_reset(&got);
	memset(counts, 0, sizeof(counts));
	return ktap_new(record, NULL, &k) ? NULL : k;
}

static const char *run_lines(const char *const *lines)
{
	struct ktap *k = begin();
	int64_t n = 0;

	for (; *lines; lines++)
		ktap_feed(k, *lines, strlen(*lines), ++n);
	ktap_flush(k);
	ktap_free(k);
	return got.buf;
}

/* Feed tests/data/ktap/@name line by line ('\r' removed, as the runner does). */
static const char *run_fixture(const char *name)
{
	const char *top = getenv("LABD_TOP");
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int64_t n = 0;
	struct ktap *k = begin();
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/ktap/%s", top ? top : ".", name);
	f = fopen(path, "r");
	if (!f || !k) {
		printf("# cannot open '%s'\n", path);
		return "";
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		ktap_feed(k, line, (size_t)len, ++n);
	}
	ktap_flush(k);
	ktap_free(k);
	free(line);
	fclose(f);
	return got.buf;
}

TEST(test_ktap__kunit_serial_with_timestamps)
{
	CHECK_STR(run_fixture("01-kunit-serial-with-timestamps.txt"),
		  "example.example_simple_test pass @5-9\n"
		  "example.example_skip_test skip SKIP 'this test should be skipped' @10-10\n"
		  "example.example_params_test.example_value_3 pass @12-13\n"
		  "example.example_params_test.example_value_2 pass @14-14\n"
		  "example.example_params_test.example_value_1 pass @15-15\n"
		  "example.example_params_test.example_value_0 skip SKIP 'unsupported param value 0' @16-16\n"
		  "example.example_params_test pass suite @11-18\n"
		  "example pass suite @4-22\n"
		  "list-kunit-test.list_test_list_init pass @24-26\n"
		  "list-kunit-test.list_test_list_add fail @27-31\n"
		  "list-kunit-test fail suite @23-33\n");
	CHECK_INT(counts[0], ==, 7);
	CHECK_INT(counts[1], ==, 2);
	CHECK_INT(counts[2], ==, 2);
}

TEST(test_ktap__kselftest_runner)
{
	CHECK_STR(run_fixture("02-kselftest-runner-serial.txt"),
		  "selftests.size.get_size.get_runtime_memory_use pass @6-7\n"
		  "selftests.size.get_size pass suite @5-11\n"
		  "selftests.breakpoints.step_after_suspend_test skip SKIP suite @13-15\n"
		  "selftests.net.fcnal-test_sh fail TIMEOUT '300 seconds' @16-21\n");
}

TEST(test_ktap__directives_and_nesting)
{
	CHECK_STR(run_fixture("03-ktap-v1-directives-nesting.txt"),
		  "gpio.gpio_probe pass @4-5\n"
		  "gpio.gpio_irq_edge pass XFAIL 'edge IRQs are not wired on this board' @6-6\n"
		  "gpio.gpio_irq_level fail TODO 'level IRQ handling is known broken' @7-7\n"
		  "gpio.gpio_stress fail TIMEOUT '30 seconds' @8-9\n"
		  "gpio.gpio_sysfs fail ERROR '/sys/class/gpio is missing' @10-10\n"
		  "gpio fail suite @3-12\n"
		  "i2c skip SKIP 'no I2C controller described in the device tree' suite @13-15\n");
}

TEST(test_ktap__panic_truncates)
{
	CHECK_STR(run_fixture("04-kunit-panic-truncated.txt"),
		  "fs-tests.fs_mount pass @4-6\n"
		  "fs-tests.fs_umount pass @7-7\n"
		  "fs-tests pass suite @3-8\n"
		  "mm-tests.mm_alloc pass @10-12\n"
		  "mm-tests.mm_param.order_0 pass @14-15\n"
		  "mm-tests.mm_param fail !truncated @13-18\n"
		  "mm-tests.test_3 fail !missing @18-18\n"
		  "mm-tests.test_4 fail !missing @18-18\n"
		  "mm-tests fail !truncated @9-18\n"
		  "test_3 fail !missing @18-18\n");
}

TEST(test_ktap__reboot_and_cut_lines)
{
	CHECK_STR(run_fixture("05-reboot-twice-and-cut-lines.txt"),
		  "first-boot.only_test pass @5-6\n"
		  "first-boot pass suite @4-7\n"
		  "second-boot.cut_test skip SKIP 'not on this board' @13-16\n"
		  "second-boot.the_last_one fail @17-17\n"
		  "second-boot pass suite @12-18\n"
		  "tabbed.alpha pass @21-21\n"
		  "tabbed.beta pass @22-22\n"
		  "tabbed pass suite @20-24\n"
		  "after-the-replay pass @33-34\n");
}

/* No document, no results; results outside documents and stray plans are ignored. */
TEST(test_ktap__outside_documents)
{
	const char *const in[] = {
		"ok 1 not in a document",
		"1..3",
		"root@sim:~# echo 'KTAP version 1'",
		NULL,
	};

	CHECK_STR(run_lines(in), "");
}

/* A skip-all plan, a plan of 0, no-name results and a missing top-level result. */
TEST(test_ktap__plans_and_names)
{
	const char *const in[] = {
		"KTAP version 1",
		"1..3",
		"ok 1 # XFAIL no name given",
		"  KTAP version 1",
		"  1..0 # SKIP nothing to do here",
		"ok 2 empty # SKIP nothing to do here",
		"not ok 3 - weird:name/with spaces",
		"KTAP version 1",
		"1..2",
		"ok 1 first",
		NULL,
	};

	CHECK_STR(run_lines(in), "test_1 pass XFAIL 'no name given' @2-3\n"
				 "empty skip SKIP 'nothing to do here' suite @4-6\n"
				 "weird_name_with_spaces fail @7-7\n"
				 "first pass @9-10\n"
				 "test_2 fail !missing @10-10\n");
}

/*
 * Empty lines and lines without text inside a document (fuzzing found NULL + 0
 * on "TAP version \n\n" under UBSan); a result with no description at all.
 */
TEST(test_ktap__empty_lines)
{
	const char *const in[] = {
		"TAP version ",
		"",
		"KTAP version 1",
		"",
		"1..2",
		"ok 1",
		"",
		"not ok 2 #",
		"",
		NULL,
	};
	struct ktap *k = begin();

	CHECK(k);
	ktap_feed(k, "", 0, 1);
	ktap_free(k);
	CHECK_STR(run_lines(in), "test_1 pass @4-6\ntest_2 fail @7-8\n");
}

TEST_LIST(test_ktap__empty_lines, test_ktap__kunit_serial_with_timestamps, test_ktap__kselftest_runner,
	  test_ktap__directives_and_nesting, test_ktap__panic_truncates,
	  test_ktap__reboot_and_cut_lines, test_ktap__outside_documents, test_ktap__plans_and_names);
