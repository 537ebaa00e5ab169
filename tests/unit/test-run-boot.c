// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-run-boot.c -- the runner (run/run.c, run_io.c) and the minimal boot
 * (action_boot_minimal.c, boot_login.c) on a board the test plays
 * (runbed.h): the login, a kernel panic, a bad login, a reset, each wait's
 * timeout, the action's and the job's timeouts, failure_retry, timeout
 * skip, a failing power switch, a vanishing console, a cancel, and the
 * power-off at the end whatever happened
 */
#include "runbed.h"
#include "tap.h"

#define SEC(n) ((uint64_t)(n) * USEC_PER_SEC)
#define MIN(n) (60 * SEC(n))

static struct bed b;

/*
 * The fixture: a bed of one board of type sim-minimal (power cycles wait
 * 0.2 s) with @power (NULL: the fake driver), started.
 */
static int bed_one(const char *power)
{
	int err = bed_init(&b, NULL);

	if (!err)
		err = bed_board(&b, "b1", "sim-minimal", power, NULL);
	if (err >= 0)
		err = bed_start(&b);
	return err;
}

/*
 * A minimal boot job: timeouts job 30 min, action 10, connection 2 unless
 * @timeouts replaces them; @keys are added to the boot action, @more
 * actions follow.
 */
static const char *job(const char *timeouts, const char *keys, const char *more)
{
	static char text[4096];

	snprintf(text, sizeof(text),
		 "job_name: minimal boot\n"
		 "device_type: sim-minimal\n"
		 "timeouts: %s\n"
		 "actions:\n"
		 "- boot:\n"
		 "    method: minimal\n"
		 "    auto_login: {login_prompt: 'login:', username: root}\n"
		 "    prompts: ['root@sim:~# ']\n%s%s",
		 timeouts ? timeouts :
		 "{job: {minutes: 30}, action: {minutes: 10}, connection: {minutes: 2}}",
		 keys ? keys : "", more ? more : "");
	return text;
}

/* The board boots to its login prompt once it was powered on @n times in all. */
static bool boots_to_login(unsigned n)
{
	if (!bed_powered_on(&b, 0, n))
		return false;
	bed_say(&b, 0, "[    0.000000] Linux version 6.1.0-sim (gcc 12)\r\n"
		"[    1.000000] Run /init as init process\r\nsim login: ");
	return true;
}

/* ... then logs root in and shows its prompt. */
static bool logs_in(void)
{
	if (!bed_typed(&b, 0, "root\n"))
		return false;
	bed_say(&b, 0, "root\r\nroot@sim:~# ");
	return true;
}

/* Whether board 0's power operations were @want. */
static int power_was(const char *want)
{
	char *log = bed_power_log(&b, 0);
	int ok = !strcmp(log, want);

	if (!ok)
		printf("# power: '%s', not '%s'\n", log, want);
	free(log);
	return ok;
}

/* Power-cycled, login with password, a login command, the shell: complete, then off. */
TEST(test_run_boot__minimal_login)
{
	int64_t id;
	char *log, *labd;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, "job_name: login\ndevice_type: sim-minimal\ntimeouts: {job: {minutes: 5}}\n"
			    "actions:\n"
			    "- boot:\n    method: minimal\n    prompts: ['root@sim:~# ']\n"
			    "    auto_login: {login_prompt: 'login:', username: root,\n"
			    "      password_prompt: 'Password:', password: s3cret,\n"
			    "      login_commands: [stty -echo]}\n");
	CHECK(id > 0);
	CHECK(bed_job_reaches(&b, id, JOB_STATE_RUNNING));
	CHECK(boots_to_login(1));
	CHECK(bed_typed(&b, 0, "root\n"));
	bed_say(&b, 0, "root\r\nPassword: ");
	CHECK(bed_typed(&b, 0, "s3cret\n"));
	bed_say(&b, 0, "\r\nroot@sim:~# ");
	CHECK(bed_typed(&b, 0, "stty -echo\n"));
	bed_say(&b, 0, "stty -echo\r\nroot@sim:~# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(power_was("off\non\noff\n"));	/* the cycle, then off at the end */
	log = bed_job_file(&b, id, "console.log");
	CHECK_CONTAINS(log, "sim login: ");
	free(log);
	labd = bed_labd_log(&b, id);
	CHECK_CONTAINS(labd, "power-on at 0.000 s");
	CHECK_CONTAINS(labd, " login-prompt at ");
	CHECK_CONTAINS(labd, " shell at ");
	CHECK(!strstr(labd, "s3cret"));		/* the password is masked where labd logs it */
	free(labd);
	bed_free(&b);
}

/* What the board printed before the cycle's "on" is not this boot's: it is not matched. */
TEST(test_run_boot__output_before_power_on_ignored)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(bed_job_reaches(&b, id, JOB_STATE_RUNNING));
	bed_say(&b, 0, "old boot\r\nsim login: ");	/* before power-on */
	CHECK(bed_powered_on(&b, 0, 1));
	bed_advance(&b, SEC(1));
	CHECK(!bed_has_typed(&b, &(struct bed_wait_text){ &b.boards[0], "root" }));
	CHECK(boots_to_login(1));
	CHECK(logs_in());
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* No login prompt: the connection timeout of the wait ends the job (the job's error). */
TEST(test_run_boot__login_prompt_timeout)
{
	uint64_t t0;
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(bed_powered_on(&b, 0, 1));
	t0 = loop_now(b.loop);
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "timed out waiting for the login prompt"));
	CHECK_INT((loop_now(b.loop) - t0) / USEC_PER_SEC, ==, 120);	/* connection: 2 min */
	CHECK(power_was("off\non\noff\n"));
	bed_free(&b);
}

/* A panic fails the boot once its report ended (or after a grace time); it is a result. */
TEST(test_run_boot__kernel_panic)
{
	int64_t id;
	char *res;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(boots_to_login(1));
	CHECK(bed_typed(&b, 0, "root\n"));
	bed_say(&b, 0, "[    2.000000] Kernel panic - not syncing: Attempted to kill init!\r\n"
		"[    2.000001] CPU: 0 PID: 1 Comm: init\r\n");
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "kernel panic: Kernel panic - not syncing"));
	res = bed_results(&b, id);
	CHECK_CONTAINS(res, "kernel-messages.");
	CHECK_CONTAINS(res, "=fail");
	free(res);
	bed_free(&b);
}

/* "Login incorrect" fails the job at once; a U-Boot banner after the kernel is a reset. */
TEST(test_run_boot__bad_login_and_reset)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(boots_to_login(1));
	CHECK(bed_typed(&b, 0, "root\n"));
	bed_say(&b, 0, "\r\nLogin incorrect\r\nsim login: ");
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "login failed"));

	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(boots_to_login(2));
	bed_say(&b, 0, "\r\n\r\nU-Boot 2023.01 (Jan 01 2023)\r\n");
	CHECK(bed_job_ends(&b, id, "incomplete", "job", "the board reset unexpectedly: 'U-Boot 2023.0'"));
	bed_free(&b);
}

/* The action's timeout is shorter than the wait's: the action times out (a boot: job). */
TEST(test_run_boot__action_timeout)
{
	uint64_t t0;
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	t0 = loop_now(b.loop);
	id = bed_submit(&b, job("{job: {minutes: 30}, action: {minutes: 1}, connection: {minutes: 5}}",
				NULL, NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "job",
			       "boot-minimal timed out: timeouts.action (60 s) ran out in auto-login-action"));
	CHECK_INT((loop_now(b.loop) - t0) / USEC_PER_SEC, ==, 60);
	bed_free(&b);
}

/* The job's timeout ends it, before the action's and the wait's ending with it. */
TEST(test_run_boot__job_timeout)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job("{job: {minutes: 3}, action: {minutes: 3}, connection: {minutes: 3}}",
				NULL, NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "job",
			       "the job timed out: timeouts.job (180 s) ran out"));
	CHECK(power_was("off\non\noff\n"));
	CHECK(bed_labd_says(&b, id, "board powered off"));
	bed_free(&b);
}

/* failure_retry: the first attempt times out, the action runs again from its start. */
TEST(test_run_boot__failure_retry)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, "    failure_retry: 2\n", NULL));
	CHECK(bed_powered_on(&b, 0, 1));
	CHECK(boots_to_login(2));	/* the first wait timed out, the board cycled again */
	CHECK(logs_in());
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(power_was("off\non\noff\non\noff\n"));
	CHECK(bed_labd_says(&b, id, "action 1 (boot-minimal) failed: timed out waiting for the login "
				    "prompt: timeouts.connection (120 s) ran out"));
	CHECK(bed_labd_says(&b, id, "action 1 of 1: boot-minimal (retry)"));
	bed_free(&b);
}

/* timeout: {skip: true}: the action's timeout moves on to the next action. */
TEST(test_run_boot__timeout_skip)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job("{job: {minutes: 30}, action: {minutes: 10}, connection: {minutes: 5}}",
				"    timeout: {minutes: 1, skip: true}\n",
				"- boot:\n    method: minimal\n    reset: false\n"
				"    prompts: ['root@sim:~# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_advance(&b, SEC(61));
	bed_say(&b, 0, "root@sim:~# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(power_was("off\non\noff\n"));	/* reset: false, no second cycle */
	CHECK(bed_labd_says(&b, id, "actions[0].boot.timeout (60 s) ran out in auto-login-action of "
				    "action 1 (boot-minimal); the board printed nothing: skipped (timeout skip)"));
	bed_free(&b);
}

/* A power switch that fails: infrastructure error, the board is taken out (bad). */
TEST(test_run_boot__power_fails)
{
	int64_t id;

	CHECK(bed_one("power = { driver = \"fake\"; fail = \"on\"; };") == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "power control failed: fake power on"));
	CHECK_STR(device_state_name(board_state(b.boards[0].board)), "bad");
	bed_free(&b);
}

/* A board without power control: not reset, and left on at the end. */
TEST(test_run_boot__no_power_control)
{
	int64_t id;

	CHECK(bed_one("") == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(bed_job_reaches(&b, id, JOB_STATE_RUNNING));
	bed_settle(&b);
	bed_say(&b, 0, "sim login: ");
	CHECK(logs_in());
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(bed_labd_says(&b, id, "board has no power control: not resetting it"));
	CHECK(bed_labd_says(&b, id, "board has no power control: left as it is"));
	bed_free(&b);
}

/* The console goes away mid-boot: infrastructure error, the board is bad. */
TEST(test_run_boot__console_vanishes)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(boots_to_login(1));
	loop_source_free(b.boards[0].src);	/* the test stops being the board */
	b.boards[0].src = NULL;
	close(b.boards[0].pty);
	close(b.boards[0].slave);
	b.boards[0].pty = b.boards[0].slave = -1;
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "console vanished"));
	CHECK_STR(device_state_name(board_state(b.boards[0].board)), "bad");
	bed_free(&b);
}

/* A cancel while the board boots: canceled, the board powered off. */
TEST(test_run_boot__cancel)
{
	int64_t id;

	CHECK(bed_one(NULL) == 0);
	id = bed_submit(&b, job(NULL, NULL, NULL));
	CHECK(boots_to_login(1));
	CHECK(bed_typed(&b, 0, "root\n"));
	CHECK(sched_cancel(b.sched, id, "the test is done with it") == 0);
	CHECK(bed_job_ends(&b, id, "canceled", NULL, "the test is done with it"));
	CHECK(power_was("off\non\noff\n"));
	CHECK(sched_cancel(b.sched, id, "again") == -EALREADY);
	bed_free(&b);
}

TEST_LIST(test_run_boot__minimal_login, test_run_boot__output_before_power_on_ignored,
	  test_run_boot__login_prompt_timeout, test_run_boot__kernel_panic,
	  test_run_boot__bad_login_and_reset, test_run_boot__action_timeout,
	  test_run_boot__job_timeout, test_run_boot__failure_retry, test_run_boot__timeout_skip,
	  test_run_boot__power_fails, test_run_boot__no_power_control,
	  test_run_boot__console_vanishes, test_run_boot__cancel);
