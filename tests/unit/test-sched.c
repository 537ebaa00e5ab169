// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-sched.c -- the scheduler (sched/) with the real store, runner and
 * boards the test plays (runbed.h): what enters the queue, the queue's
 * order (priority, then submission), tags, reservations in the same queue,
 * a board in maintenance, the running jobs' cap, a queued job's cancel and
 * queue timeout, an infrastructure error retried on another board, jobs
 * recovered after labd died (once), and a holder's session boot
 */
#include "runbed.h"
#include "tap.h"

#define SEC(n) ((uint64_t)(n) * USEC_PER_SEC)

static struct bed b;

/* The fixture: boards b1 (tags usb, arm64) and b2 (arm64) of type sim-minimal. */
static int bed_two(void)
{
	int err = bed_init(&b, NULL);

	if (!err)
		err = bed_board(&b, "b1", "sim-minimal", NULL, "tags = [ \"usb\", \"arm64\" ];");
	if (err >= 0)
		err = bed_board(&b, "b2", "sim-minimal", NULL, "tags = [ \"arm64\" ];");
	if (err >= 0)
		err = bed_start(&b);
	return err < 0 ? err : 0;
}

/*
 * A job named @name of @priority with @tags (YAML list) and @keys (job
 * level): it waits on the board's shell prompt "# ", then an interactive
 * step "check" which fails with an infrastructure error when the board
 * answers "DISK ERROR".
 */
static const char *job(const char *name, int priority, const char *tags, const char *keys)
{
	static char text[4096];

	snprintf(text, sizeof(text),
		 "job_name: %s\n"
		 "device_type: sim-minimal\n"
		 "priority: %d\n"
		 "tags: %s\n%s"
		 "timeouts: {job: {hours: 2}, action: {hours: 1}, connection: {hours: 1}}\n"
		 "actions:\n"
		 "- boot: {method: minimal, reset: false, prompts: ['# ']}\n"
		 "- test:\n"
		 "    interactive:\n"
		 "    - name: t\n"
		 "      prompts: ['# ']\n"
		 "      script:\n"
		 "      - {command: check, name: check, successes: [{message: OK}],\n"
		 "         failures: [{message: 'DISK ERROR', exception: InfrastructureError}]}\n",
		 name, priority, tags ? tags : "[]", keys ? keys : "");
	return text;
}

static int64_t submit(const char *name, int priority, const char *tags, const char *keys)
{
	return bed_submit(&b, job(name, priority, tags, keys));
}

/* Job @id's record (a static one, released at the next call). */
static const struct job_record *rec_of(int64_t id)
{
	static struct job_record rec;

	job_record_release(&rec);
	memset(&rec, 0, sizeof(rec));
	if (store_job_get(b.store, id, &rec) < 0)
		printf("# job %lld: not in the store\n", (long long)id);
	return &rec;
}

static const char *state_of(int64_t id)
{
	return job_state_name(rec_of(id)->state);
}

/* The board index job @id runs on (its record's device), or -1. */
static int board_of(int64_t id)
{
	const struct job_record *rec = rec_of(id);
	size_t i;

	for (i = 0; rec->device && i < b.n_boards; i++)
		if (!strcmp(rec->device, b.boards[i].name))
			return (int)i;
	return -1;
}

/* The job running on board @i gets its prompt, its check answered @answer; it ends. */
static bool finish_on(size_t i, const char *answer)
{
	bed_say(&b, i, "\r\n# ");
	if (!bed_typed(&b, i, "check\n"))
		return false;
	bed_say(&b, i, "%s\r\n# ", answer);
	return true;
}

/* Job @id runs (in the store), and on a board. */
static bool runs(int64_t id)
{
	return bed_job_reaches(&b, id, JOB_STATE_RUNNING) && board_of(id) >= 0;
}

/* Higher priority first, then the order of submission. */
TEST(test_sched__queue_order)
{
	int64_t a, low, high1, high2;

	CHECK(bed_two() == 0);
	board_set_admin_state(b.boards[1].board, DEVICE_STATE_MAINTENANCE, "one board for this test");
	a = submit("a", 50, NULL, NULL);
	CHECK(runs(a) && board_of(a) == 0);
	low = submit("low", 10, NULL, NULL);
	high1 = submit("high1", 90, NULL, NULL);
	high2 = submit("high2", 90, NULL, NULL);
	bed_settle(&b);
	CHECK_STR(state_of(low), "queued");
	CHECK_STR(state_of(high1), "queued");
	CHECK(finish_on(0, "OK"));
	CHECK(runs(high1));
	CHECK_STR(state_of(high2), "queued");
	CHECK(finish_on(0, "OK"));
	CHECK(runs(high2));
	CHECK_STR(state_of(low), "queued");
	CHECK(finish_on(0, "OK"));
	CHECK(runs(low));
	CHECK(finish_on(0, "OK"));
	CHECK(bed_job_reaches(&b, low, JOB_STATE_FINISHED));
	CHECK_STR(job_health_name(rec_of(a)->health), "complete");
	bed_free(&b);
}

/* A job's tags choose the board; tags no board has are refused at submission. */
TEST(test_sched__tags)
{
	int64_t usb, any;

	CHECK(bed_two() == 0);
	usb = submit("usb", 50, "[usb]", NULL);
	CHECK(runs(usb));
	CHECK_INT(board_of(usb), ==, 0);
	any = submit("any", 50, "[arm64]", NULL);
	CHECK(runs(any));
	CHECK_INT(board_of(any), ==, 1);
	CHECK(submit("none", 50, "[riscv]", NULL) < 0);	/* "no board ... with tags [riscv]" */
	CHECK(submit("x", 50, "[usb, riscv]", NULL) < 0);
	bed_free(&b);
}

/* What the lab cannot run is refused before it is queued, with the reason. */
TEST(test_sched__submit_refused)
{
	struct diag diag = DIAG_INIT;
	const char *bad = "job_name: x\ndevice_type: nope\ntimeouts: {job: {minutes: 1}}\n"
			  "actions:\n- boot: {method: minimal, prompts: ['# ']}\n";
	int64_t id = 0;
	char *why;

	CHECK(bed_two() == 0);
	CHECK(sched_submit(b.sched, bad, strlen(bad), "bad.yaml", JOB_FORMAT_AUTO, NULL, &id,
			   &diag) == -EINVAL);
	why = diag_join(&diag);
	CHECK_CONTAINS(why, "bad.yaml: unknown device type 'nope' in this lab");
	free(why);
	diag_release(&diag);
	bad = "job_name: x\ndevice_type: sim-minimal\ntimeouts: {job: {minutes: 1}}\n"
	      "actions:\n- boot: {method: u-boot, commands: ramdisk, prompts: ['# ']}\n";
	CHECK(sched_submit(b.sched, bad, strlen(bad), "bad.yaml", JOB_FORMAT_AUTO, NULL, &id,
			   &diag) == -EINVAL);
	why = diag_join(&diag);
	CHECK_CONTAINS(why, "u-boot");
	free(why);
	diag_release(&diag);
	CHECK(sched_check_job(b.sched, job("ok", 50, NULL, NULL), strlen(job("ok", 50, NULL, NULL)),
			      "ok.yaml", JOB_FORMAT_AUTO, false, &diag, NULL) == 0);
	diag_release(&diag);
	bed_free(&b);
}

/* A reservation waits in the same queue as jobs: granted when its turn comes. */
TEST(test_sched__reservation_beside_jobs)
{
	struct reservation_record res = {
		.holder = "alice", .device_type = "sim-minimal", .priority = 50,
		.duration = SEC(600), .state = RESERVATION_WAITING,
	};
	int64_t a, after;

	CHECK(bed_two() == 0);
	board_set_admin_state(b.boards[1].board, DEVICE_STATE_MAINTENANCE, "one board");
	a = submit("a", 50, NULL, NULL);
	CHECK(runs(a));
	res.submitted = loop_realtime(b.loop);
	CHECK(store_reservation_insert(b.store, &res) == 0);
	sched_reservation_queued(b.sched, &res);
	bed_advance(&b, SEC(1));
	after = submit("after", 50, NULL, NULL);
	bed_settle(&b);
	CHECK_INT(b.n_granted, ==, 0);	/* the board is busy */
	CHECK(finish_on(0, "OK"));
	CHECK(bed_job_reaches(&b, a, JOB_STATE_FINISHED));
	bed_settle(&b);
	CHECK_INT(b.n_granted, ==, 1);	/* before the job submitted after it */
	CHECK_INT(b.granted[0], ==, res.id);
	CHECK_STR(b.granted_to[0], "b1");
	CHECK_STR(state_of(after), "queued");
	bed_free(&b);
}

/* A board in maintenance takes nothing; back to idle, it claims what waits. */
TEST(test_sched__maintenance)
{
	int64_t id;

	CHECK(bed_two() == 0);
	board_set_admin_state(b.boards[0].board, DEVICE_STATE_MAINTENANCE, "new cable");
	id = submit("usb", 50, "[usb]", NULL);
	bed_advance(&b, SEC(60));
	CHECK_STR(state_of(id), "queued");
	board_set_admin_state(b.boards[0].board, DEVICE_STATE_IDLE, NULL);
	CHECK(runs(id));
	bed_free(&b);
}

/* At the running jobs' cap free boards claim nothing; a run's end lets the next start. */
TEST(test_sched__max_running)
{
	int64_t one, two;

	CHECK(bed_two() == 0);
	sched_set_max_running(b.sched, 1);
	one = submit("one", 50, NULL, NULL);
	CHECK(runs(one));
	two = submit("two", 50, NULL, NULL);
	bed_advance(&b, SEC(10));
	CHECK_STR(state_of(two), "queued");
	CHECK_INT(sched_running(b.sched), ==, 1);
	CHECK(finish_on((size_t)board_of(one), "OK"));
	CHECK(runs(two));
	bed_free(&b);
}

/* A queued job canceled never runs; one whose queue timeout passed is canceled. */
TEST(test_sched__cancel_and_queue_timeout)
{
	int64_t a, c, t;

	CHECK(bed_two() == 0);
	board_set_admin_state(b.boards[1].board, DEVICE_STATE_MAINTENANCE, "one board");
	a = submit("a", 50, NULL, NULL);
	CHECK(runs(a));
	c = submit("c", 50, NULL, NULL);
	t = bed_submit(&b, "job_name: t\ndevice_type: sim-minimal\n"
			   "timeouts: {job: {minutes: 30}, queue: {minutes: 5}}\n"
			   "actions:\n- boot: {method: minimal, reset: false, prompts: ['# ']}\n");
	CHECK(t > 0);
	CHECK(sched_cancel(b.sched, c, "not needed") == 0);
	CHECK(bed_job_reaches(&b, c, JOB_STATE_FINISHED));
	CHECK_STR(job_health_name(rec_of(c)->health), "canceled");
	CHECK(bed_job_reaches(&b, t, JOB_STATE_FINISHED));
	CHECK_STR(job_health_name(rec_of(t)->health), "canceled");
	CHECK_CONTAINS(rec_of(t)->error_msg, "queue");
	CHECK_STR(state_of(a), "running");
	CHECK(sched_cancel(b.sched, 999, NULL) == -ENOENT);
	bed_free(&b);
}

static bool second_attempt_runs(struct bed *bed, void *ud)
{
	const struct job_record *rec = rec_of(*(int64_t *)ud);

	return rec->attempt == 2 && rec->state == JOB_STATE_RUNNING;
}

/* An infrastructure error: the job runs again, on the other board, as attempt 2. */
TEST(test_sched__infrastructure_retry_elsewhere)
{
	int first, second;
	int64_t id;
	char *ev;

	CHECK(bed_two() == 0);
	id = submit("retried", 50, NULL, "infrastructure_retries: 1\n");
	CHECK(runs(id));
	first = board_of(id);
	CHECK(finish_on((size_t)first, "DISK ERROR"));
	CHECK(bed_until(&b, second_attempt_runs, &id));
	second = board_of(id);
	CHECK_INT(second, ==, 1 - first);
	CHECK_INT(rec_of(id)->attempt, ==, 2);
	CHECK_STR(rec_of(id)->last_error, "DISK ERROR");
	CHECK(finish_on((size_t)second, "DISK ERROR"));	/* no retry left */
	CHECK(bed_job_reaches(&b, id, JOB_STATE_FINISHED));
	CHECK_STR(error_type_name(rec_of(id)->error_type), "infrastructure");
	ev = bed_events(&b, id);
	CHECK_CONTAINS(ev, "requeued ");
	free(ev);
	bed_free(&b);
}

/* labd died while a job ran: requeued once at the next start; a second time, finished. */
TEST(test_sched__recovery)
{
	int64_t id;

	CHECK(bed_two() == 0);
	id = submit("survivor", 50, "[usb]", NULL);
	CHECK(runs(id));
	bed_stop(&b);	/* labd dies */
	CHECK(bed_start(&b) == 0);
	CHECK(runs(id));
	CHECK_INT(rec_of(id)->attempt, ==, 2);
	CHECK(rec_of(id)->recovered);
	bed_stop(&b);	/* and again */
	CHECK(bed_start(&b) == 0);
	CHECK(bed_job_reaches(&b, id, JOB_STATE_FINISHED));
	CHECK_STR(job_health_name(rec_of(id)->health), "incomplete");
	CHECK_CONTAINS(rec_of(id)->error_msg, "labd stopped while the job ran");
	bed_free(&b);
}

/* A holder's boot on its board: started at once, its tests skipped, the board left on. */
TEST(test_sched__session_boot)
{
	const char *text = job("session", 50, NULL, NULL);
	struct diag diag = DIAG_INIT;
	char *power;
	int64_t id = 0;

	CHECK(bed_two() == 0);
	CHECK(sched_boot_session(b.sched, b.boards[1].board, text, strlen(text), "s.yaml",
				 JOB_FORMAT_AUTO, "alice", &id, &diag) == 0);
	diag_release(&diag);
	CHECK(runs(id));
	CHECK_INT(board_of(id), ==, 1);
	bed_say(&b, 1, "# ");
	CHECK(bed_job_reaches(&b, id, JOB_STATE_FINISHED));
	CHECK_STR(job_health_name(rec_of(id)->health), "complete");
	CHECK(bed_labd_says(&b, id, "skipped: the shell goes to the board's holder"));
	CHECK(bed_labd_says(&b, id, "board left as it is for its holder"));
	power = bed_power_log(&b, 1);
	CHECK_STR(power, "");	/* never switched */
	free(power);
	CHECK(sched_boot_session(b.sched, b.boards[1].board, text, strlen(text), "s.yaml",
				 JOB_FORMAT_AUTO, "alice", &id, &diag) == 0);
	diag_release(&diag);
	bed_free(&b);
}

TEST_LIST(test_sched__queue_order, test_sched__tags, test_sched__submit_refused,
	  test_sched__reservation_beside_jobs, test_sched__maintenance, test_sched__max_running,
	  test_sched__cancel_and_queue_timeout, test_sched__infrastructure_retry_elsewhere,
	  test_sched__recovery, test_sched__session_boot);
