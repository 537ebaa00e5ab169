// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-run-test.c -- the test actions run by the real runner on a board the
 * test plays (runbed.h): interactive steps (action_test_interactive.c:
 * successes, failures, exceptions, an echo skipped, a prompt that comes
 * back early, a step's timeout), monitors (action_test_monitors.c: results
 * from patterns, a fixupdict, a monitor that never starts), LAVA test
 * definitions typed into the shell (action_test_definitions.c: helpers,
 * script, signals, expected cases missing, lava-test-raise, a definition
 * that never ends), and KTAP results seen anywhere on the console
 */
#include "runbed.h"
#include "tap.h"

#define SEC(n) ((uint64_t)(n) * USEC_PER_SEC)

static struct bed b;

/* The fixture: one board of type sim-minimal. */
static int bed_one(void)
{
	int err = bed_init(&b, NULL);

	if (!err)
		err = bed_board(&b, "b1", "sim-minimal", NULL, NULL);
	if (err >= 0)
		err = bed_start(&b);
	return err < 0 ? err : 0;
}

/* A job: a boot to the shell prompt "# " of a board already on, then the test action @test. */
static const char *job(const char *test)
{
	static char text[8192];

	snprintf(text, sizeof(text),
		 "job_name: tests\n"
		 "device_type: sim-minimal\n"
		 "timeouts: {job: {minutes: 30}, action: {minutes: 10}, connection: {minutes: 2}}\n"
		 "actions:\n"
		 "- boot: {method: minimal, reset: false, prompts: ['# ']}\n"
		 "- test:\n%s",
		 test);
	return text;
}

/* Submit @test's job and bring it to its test action: the board shows its prompt. */
static int64_t at_test(const char *test)
{
	int64_t id = bed_submit(&b, job(test));

	if (id < 0 || !bed_job_reaches(&b, id, JOB_STATE_RUNNING))
		return -1;
	bed_say(&b, 0, "# ");
	return id;
}

/* Whether job @id's results are exactly @want ("suite.name=result\n" each). */
static int results_are(int64_t id, const char *want)
{
	char *got = bed_results(&b, id);
	int ok = !strcmp(got, want);

	if (!ok)
		printf("# results:\n%s# not:\n%s", got, want);
	free(got);
	return ok;
}

/* The board answers the command typed next with @answer. */
static bool answer(const char *cmd, const char *answer)
{
	const char *line = bed_line(&b, 0);

	if (!line || strcmp(line, cmd)) {
		printf("# typed '%s', not '%s'\n", line ? line : "(nothing)", cmd);
		return false;
	}
	bed_say(&b, 0, "%s\r\n%s", line, answer);
	return true;
}

static const char interactive[] =
	"    interactive:\n"
	"    - name: smoke\n"
	"      prompts: ['# ']\n"
	"      script:\n"
	"      - {command: uname, name: uname, successes: [{message: Linux}],\n"
	"         failures: [{message: 'command not found'}]}\n"
	"      - {command: 'cat /nope', name: cat, successes: [{message: root}],\n"
	"         failures: [{message: 'No such file'}]}\n"
	"      - {command: 'true', name: quiet}\n"
	"      - {command: 'dmesg -n 1'}\n"
	"      - {command: ls, name: early, successes: [{message: bin}]}\n";

/* Successes, failures, a step with nothing to wait for but the prompt, an early prompt. */
TEST(test_run_test__interactive)
{
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test(interactive)) > 0);
	CHECK(answer("uname", "Linux\r\n# "));
	CHECK(answer("cat /nope", "cat: /nope: No such file or directory\r\n# "));
	CHECK(answer("true", "# "));
	CHECK(answer("dmesg -n 1", "# "));
	CHECK(answer("ls", "etc\r\n# "));	/* the prompt, without "bin": failed */
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(results_are(id, "smoke.uname=pass\nsmoke.cat=fail\nsmoke.quiet=pass\n"
			  "smoke.early=fail\n"));
	bed_free(&b);
}

/* A failure naming an exception ends the job with its type; a timeout fails the action. */
TEST(test_run_test__interactive_exception_and_timeout)
{
	int64_t id;
	uint64_t t0;

	CHECK(bed_one() == 0);
	CHECK((id = at_test("    interactive:\n    - name: t\n      prompts: ['# ']\n      script:\n"
			    "      - {command: mount, name: mount, failures: [{message: 'read-only',\n"
			    "         exception: InfrastructureError, error: 'the disk is read-only'}]}\n")) > 0);
	CHECK(answer("mount", "/dev/sda on / type ext4 (ro) read-only\r\n# "));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "the disk is read-only"));
	CHECK(results_are(id, "t.mount=fail\n"));

	CHECK((id = at_test("    interactive:\n    - name: t\n      prompts: ['# ']\n      script:\n"
			    "      - {command: sleep, name: slow, successes: [{message: done}]}\n")) > 0);
	CHECK(bed_typed(&b, 0, "sleep\n"));
	t0 = loop_now(b.loop);
	CHECK(bed_job_ends(&b, id, "incomplete", "test", "interactive test 't': timed out waiting for an answer to 'sleep': "
			       "timeouts.connection (120 s) ran out"));
	CHECK_INT((loop_now(b.loop) - t0) / USEC_PER_SEC, ==, 120);
	CHECK(results_are(id, "t.slow=fail\n"));
	bed_free(&b);
}

/* echo_discard: the command's echo is skipped before its answer is looked for. */
TEST(test_run_test__interactive_echo_discard)
{
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test("    interactive:\n    - name: t\n      prompts: ['# ']\n"
			    "      echo: discard\n      script:\n"
			    "      - {command: 'echo PASS', name: e, successes: [{message: PASS}],\n"
			    "         failures: [{message: echo}]}\n")) > 0);
	CHECK(bed_typed(&b, 0, "echo PASS\n"));
	bed_say(&b, 0, "echo PASS\r\n");	/* the echo alone: "PASS" in it is not the answer */
	bed_say(&b, 0, "PASS\r\n# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(results_are(id, "t.e=pass\n"));
	bed_free(&b);
}

static const char monitors[] =
	"    monitors:\n"
	"    - name: selftest\n"
	"      start: 'SELFTEST BEGIN'\n"
	"      end: 'SELFTEST END'\n"
	"      pattern: '(?P<test_case_id>\\w+): (?P<result>OK|KO|skip)( (?P<measurement>[0-9.]+) (?P<units>ms))?'\n"
	"      fixupdict: {OK: pass, KO: fail}\n";

/* Monitors: results from a region of the output, mapped through the fixupdict. */
TEST(test_run_test__monitors)
{
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test(monitors)) > 0);
	bed_say(&b, 0, "\r\nmem: OK\r\n");	/* before the start: not a result */
	bed_say(&b, 0, "SELFTEST BEGIN\r\nmem: OK 12.5 ms\r\nflash: KO\r\nusb: skip\r\n");
	bed_say(&b, 0, "SELFTEST END\r\n");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(results_are(id, "selftest.mem=pass\nselftest.flash=fail\nselftest.usb=skip\n"));
	bed_free(&b);

	CHECK(bed_one() == 0);
	CHECK((id = at_test(monitors)) > 0);
	CHECK(bed_job_ends(&b, id, "incomplete", "test", "monitor 'selftest': timed out waiting for 'SELFTEST BEGIN'"));
	bed_free(&b);
}

static const char definitions[] =
	"    definitions:\n"
	"    - from: inline\n"
	"      name: smoke\n"
	"      path: inline/smoke.yaml\n"
	"      expected: [hello, world, never]\n"
	"      repository:\n"
	"        metadata: {format: Lava-Test Test Definition 1.0, name: smoke}\n"
	"        run: {steps: [lava-test-case hello --result pass]}\n"
	"        parse: {pattern: '^(?P<test_case_id>\\w+): (?P<result>pass|fail)$'}\n";

/*
 * The board's shell: every command answered with its prompt until the
 * definition's run command, answered with @output (signals) and a prompt.
 * The commands typed before it in @n.
 */
static bool shell_until_run(const char *output, unsigned *n)
{
	const char *line;

	for (*n = 0; (line = bed_line(&b, 0)); (*n)++) {
		if (!strncmp(line, "sh /tmp/labd-", 13)) {
			bed_say(&b, 0, "%s\r\n%s# ", line, output);
			return true;
		}
		bed_say(&b, 0, "\r\n# ");
	}
	return false;
}

/* A definition typed in, run, its signals and parse pattern read; an expected case missing. */
TEST(test_run_test__definitions)
{
	unsigned typed;
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test(definitions)) > 0);
	CHECK(shell_until_run("<LAVA_SIGNAL_STARTRUN 0_smoke 1_0>\r\n"
			      "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=hello RESULT=pass>\r\n"
			      "world: fail\r\n"
			      "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=extra RESULT=skip>\r\n"
			      "<LAVA_SIGNAL_ENDRUN 0_smoke 1_0>\r\n", &typed));
	CHECK_INT(typed, >, 5);	/* the helpers, the script: one command per prompt */
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(results_are(id, "0_smoke.hello=pass\n0_smoke.world=fail\n0_smoke.extra=skip\n"
			  "0_smoke.never=fail\n"));
	CHECK(bed_labd_says(&b, id, "test definition '0_smoke' finished: 4 test cases"));
	bed_free(&b);
}

/* lava-test-raise ends the definition and the job (the test's error). */
TEST(test_run_test__definitions_raise)
{
	unsigned typed;
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test(definitions)) > 0);
	CHECK(shell_until_run("<LAVA_SIGNAL_STARTRUN 0_smoke 1_0>\r\n"
			      "<LAVA_SIGNAL_TESTRAISE the network is down>\r\n", &typed));
	CHECK(bed_job_ends(&b, id, "incomplete", "test",
		   "test definition '0_smoke' raised an error: the network is down"));
	bed_free(&b);
}

/* A definition that never ends: failed before the action's timeout, naming its last line. */
TEST(test_run_test__definitions_timeout)
{
	unsigned typed;
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test(definitions)) > 0);
	CHECK(shell_until_run("<LAVA_SIGNAL_STARTRUN 0_smoke 1_0>\r\nstill working\r\n", &typed));
	CHECK(bed_job_ends(&b, id, "incomplete", "test",
		   "test definition '0_smoke' did not finish in time: timeouts.action (10 min) "
			       "ran out in test-definitions"));
	bed_free(&b);
}

/* KTAP anywhere on the console is read into results, while any action runs. */
TEST(test_run_test__ktap)
{
	int64_t id;

	CHECK(bed_one() == 0);
	CHECK((id = at_test(interactive)) > 0);
	bed_say(&b, 0, "\r\nKTAP version 1\r\n1..2\r\n  KTAP version 1\r\n  1..1\r\n"
		"  ok 1 test_a\r\nok 1 suite_a\r\nnot ok 2 suite_b\r\n");
	CHECK(answer("uname", "Linux\r\n# "));
	CHECK(answer("cat /nope", "root\r\n# "));
	CHECK(answer("true", "# "));
	CHECK(answer("dmesg -n 1", "# "));
	CHECK(answer("ls", "bin\r\n# "));
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(results_are(id, "ktap.suite_a.test_a=pass\nktap.suite_a=pass\nktap.suite_b=fail\n"
			  "smoke.uname=pass\nsmoke.cat=pass\nsmoke.quiet=pass\nsmoke.early=pass\n"));
	bed_free(&b);
}

TEST_LIST(test_run_test__interactive, test_run_test__interactive_exception_and_timeout,
	  test_run_test__interactive_echo_discard, test_run_test__monitors,
	  test_run_test__definitions, test_run_test__definitions_raise,
	  test_run_test__definitions_timeout, test_run_test__ktap);
