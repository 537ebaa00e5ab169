// SPDX-License-Identifier: GPL-2.0-or-later
/* test-lava-signals.c -- LAVA signals in console lines, with kernel messages cut into them */
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"
#include "results/lava_signals.h"
#include "tap.h"

/* Every signal as one line: "KIND name result [meas units] @start-end". */
static struct strbuf got = STRBUF_INIT;

static void record(const struct lava_signal *s, void *ud)
{
	strbuf_addf(&got, "%s", lava_signal_kind_name(s->kind));
	if (s->kind == LAVA_SIGNAL_INVALID)
		strbuf_addf(&got, " [%s]", s->raw);
	if (s->name)
		strbuf_addf(&got, " %s", s->name);
	if (s->uuid)
		strbuf_addf(&got, " %s", s->uuid);
	if (s->result)
		strbuf_addf(&got, " %s", s->result);
	if (s->has_measurement)
		strbuf_addf(&got, " %g", s->measurement);
	if (s->units)
		strbuf_addf(&got, " %s", s->units);
	if (s->reference)
		strbuf_addf(&got, " %s", s->reference);
	if (s->message)
		strbuf_addf(&got, " '%s'", s->message);
	strbuf_addf(&got, " @%lld-%lld\n", (long long)s->line_start, (long long)s->line_end);
}

/* Feed @lines (NULL-terminated), numbered from 1, and flush. */
static const char *scan(const char *const *lines)
{
	struct lava_signals *ls;
	int64_t n = 0;

	strbuf_reset(&got);
	if (lava_signals_new(record, NULL, &ls))
		return NULL;
	for (; *lines; lines++)
		lava_signals_feed(ls, *lines, strlen(*lines), ++n);
	lava_signals_flush(ls);
	lava_signals_free(ls);
	return got.buf;
}

TEST(test_lava_signals__testcase)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=boot RESULT=pass>",
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=latency RESULT=pass MEASUREMENT=1.5 UNITS=ms>",
		"<LAVA_SIGNAL_TESTCASE RESULT=FAIL TEST_CASE_ID=order>",
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=odd RESULT=maybe MEASUREMENT=abc>",
		NULL,
	};

	CHECK_STR(scan(in), "TESTCASE boot pass @1-1\n"
			    "TESTCASE latency pass 1.5 ms @2-2\n"
			    "TESTCASE order fail @3-3\n"
			    "TESTCASE odd unknown @4-4\n");
}

TEST(test_lava_signals__every_kind)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_STARTRUN 0_smoke 5a7e-11>",
		"<LAVA_SIGNAL_TESTSET START network>",
		"<LAVA_SIGNAL_STARTTC ping>",
		"PING 10.0.2.2: 56 data bytes",
		"<LAVA_SIGNAL_ENDTC ping>",
		"<LAVA_SIGNAL_TESTSET STOP>",
		"<LAVA_SIGNAL_TESTREFERENCE cve-1 pass https://example.org/cve-1>",
		"<LAVA_SIGNAL_TESTFEEDBACK 0_smoke>",
		"<LAVA_SIGNAL_TESTRAISE disk full>",
		"<LAVA_SIGNAL_ENDRUN 0_smoke 5a7e-11>",
		NULL,
	};

	CHECK_STR(scan(in), "STARTRUN 0_smoke 5a7e-11 @1-1\n"
			    "TESTSET START network @2-2\n"
			    "STARTTC ping @3-3\n"
			    "ENDTC ping @5-5\n"
			    "TESTSET STOP @6-6\n"
			    "TESTREFERENCE cve-1 pass https://example.org/cve-1 @7-7\n"
			    "OTHER @8-8\n"
			    "TESTRAISE 'disk full' @9-9\n"
			    "ENDRUN 0_smoke 5a7e-11 @10-10\n");
}

TEST(test_lava_signals__anywhere_in_a_line)
{
	const char *const in[] = {
		"root@sim:~# <LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=pass>",
		"<LAVA_SIGNAL_STARTTC b><LAVA_SIGNAL_ENDTC b> trailing <LAVA_SIGNAL_TESTCASE TEST_CASE_ID=b RESULT=skip>",
		"no signal <LAVA_SIGNAL here",
		NULL,
	};

	CHECK_STR(scan(in), "TESTCASE a pass @1-1\n"
			    "STARTTC b @2-2\n"
			    "ENDTC b @2-2\n"
			    "TESTCASE b skip @2-2\n");
}

/* The example of the issue: a whole printk record inside the signal's keyword. */
TEST(test_lava_signals__kernel_message_cuts_keyword)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_TESTCA[   12.3456] random: crng init done",
		"SE TEST_CASE_ID=rng RESULT=pass>",
		NULL,
	};

	CHECK_STR(scan(in), "TESTCASE rng pass @1-2\n");
}

/* Cut inside a value; the kernel message holds a '>' that must not close the signal. */
TEST(test_lava_signals__kernel_message_cuts_value)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=mem[  101.000042] audit: type=1400 op=\"x->y\" comm=\"sh\"",
		"ory-bandwidth RESULT=pass MEASUREMENT=812.5[  101.000099][    T1] usb 1-1: new device",
		" UNITS=MB/s>",
		NULL,
	};

	CHECK_STR(scan(in), "TESTCASE memory-bandwidth pass 812.5 MB/s @1-3\n");
}

/* A kernel message on its own line between the two halves (it began with a newline). */
TEST(test_lava_signals__kernel_line_between_halves)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=x",
		"[    5.000001] EXT4-fs (mmcblk0p2): mounted filesystem",
		"[    5.000002] systemd[1]: Started Journal Service.",
		" RESULT=fail>",
		NULL,
	};

	CHECK_STR(scan(in), "TESTCASE x fail @1-4\n");
}

/* A kernel message without newline before the signal, and one right after it. */
TEST(test_lava_signals__kernel_message_around)
{
	const char *const in[] = {
		"[    7.1] clk: Disabling unused clocks<LAVA_SIGNAL_ENDTC t1>",
		"<LAVA_SIGNAL_ENDTC t2>[    7.2] mmc0: new card",
		NULL,
	};

	CHECK_STR(scan(in), "ENDTC t1 @1-1\nENDTC t2 @2-2\n");
}

/* A signal never closed: abandoned when a new one starts, or after the line limit. */
TEST(test_lava_signals__abandoned)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=lost RES^C",
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=next RESULT=pass>",
		"<LAVA_SIGNAL_ENDRUN 0_x",
		"1", "2", "3", "4", "5", "6", "7", "8",
		"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=after RESULT=pass>",
		"<LAVA_SIGNAL_STARTTC dangling",
		NULL,
	};

	CHECK_STR(scan(in), "INVALID [LAVA_SIGNAL_TESTCASE TEST_CASE_ID=lost RES^C] @1-2\n"
			    "TESTCASE next pass @2-2\n"
			    "INVALID [LAVA_SIGNAL_ENDRUN 0_x1234567] @3-10\n"
			    "TESTCASE after pass @12-12\n"
			    "INVALID [LAVA_SIGNAL_STARTTC dangling] @13-13\n");
}

TEST(test_lava_signals__malformed)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_TESTCASE RESULT=pass>",
		"<LAVA_SIGNAL_STARTTC>",
		"<LAVA_SIGNAL_lowercase x>",
		"<LAVA_SIGNAL_TESTSET MAYBE x>",
		NULL,
	};

	CHECK_STR(scan(in), "INVALID [LAVA_SIGNAL_TESTCASE RESULT=pass] @1-1\n"
			    "INVALID [LAVA_SIGNAL_STARTTC] @2-2\n"
			    "INVALID [LAVA_SIGNAL_lowercase x] @3-3\n"
			    "OTHER @4-4\n");
}

/* Two kernel messages cut the same signal, one of them in the LAVA_SIGNAL_ prefix itself. */
TEST(test_lava_signals__cut_twice)
{
	const char *const in[] = {
		"<LAVA_SIGNAL_[    0.000001] a",
		"START[    0.000002] b",
		"RUN 1_ktap 42>",
		"<LAVA_SI[    0.000003] c",
		"GNAL_ENDRUN 1_ktap 42>",
		"<L[    0.000004] not a signal after all",
		"ok",
		NULL,
	};

	CHECK_STR(scan(in), "STARTRUN 1_ktap 42 @1-3\nENDRUN 1_ktap 42 @4-5\n");
}

TEST_LIST(test_lava_signals__testcase, test_lava_signals__every_kind,
	  test_lava_signals__anywhere_in_a_line, test_lava_signals__kernel_message_cuts_keyword,
	  test_lava_signals__kernel_message_cuts_value, test_lava_signals__kernel_line_between_halves,
	  test_lava_signals__kernel_message_around, test_lava_signals__abandoned,
	  test_lava_signals__malformed, test_lava_signals__cut_twice);
