// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-store-queue.c -- the queue through the store interface: claims by
 * free boards, a reservation's place, the counts per device type, the job
 * list's cursors, and the batching of writes with store_sync().  On
 * PostgreSQL too when LABD_TEST_PG is set (tests/t1060-store-pg.sh).
 */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/strbuf.h"
#include "store/store.h"
#include "storebed.h"
#include "tap.h"

/* What one claim took: a copy of what the completion saw. */
struct took {
	int calls;
	int err;
	enum store_claimed_kind kind;
	int64_t id;
	char name[32];
	char device[32];
	uint64_t started, until;
	enum job_state state;
	enum reservation_state rstate;
};

static void on_claim(int err, const struct store_claimed *c, void *ud)
{
	struct took *t = ud;

	t->calls++;
	t->err = err;
	if (err < 0)
		return;
	t->kind = c->kind;
	if (c->kind == STORE_CLAIMED_JOB) {
		t->id = c->job.id;
		snprintf(t->name, sizeof(t->name), "%s", c->job.name);
		snprintf(t->device, sizeof(t->device), "%s", c->job.device);
		t->started = c->job.started;
		t->state = c->job.state;
	} else if (c->kind == STORE_CLAIMED_RESERVATION) {
		t->id = c->reservation.id;
		snprintf(t->name, sizeof(t->name), "%s", c->reservation.holder);
		snprintf(t->device, sizeof(t->device), "%s", c->reservation.device);
		t->started = c->reservation.started;
		t->until = c->reservation.until;
		t->rstate = c->reservation.state;
	}
}

/* Claim for board @board of type @type with tags @tags (JSON) at @when. */
static struct took claim(struct store *st, const char *board, const char *type, const char *tags,
			 uint64_t when)
{
	struct store_claim_req req = { .board = board, .device_type = type, .tags = tags,
				       .when = when };
	struct took t = { 0 };

	if (store_claim(st, &req, on_claim, &t) < 0)
		t.err = -1000;
	if (t.calls != 1)
		t.err = -2000;
	return t;
}

static int64_t job(struct store *st, const char *name, const char *type, const char *tags,
		   int priority, uint64_t submitted)
{
	struct job_record rec = {
		.name = (char *)name, .device_type = (char *)type, .tags = (char *)tags,
		.priority = priority, .submitted = submitted, .definition = "x", .format = "yaml",
		.retries_left = 1,
	};

	return store_job_insert(st, &rec) < 0 ? -1 : rec.id;
}

static int64_t reservation(struct store *st, const char *holder, const char *type,
			   const char *board, int priority, uint64_t submitted)
{
	struct reservation_record rec = {
		.holder = (char *)holder, .device_type = (char *)type, .board = (char *)board,
		.priority = priority, .submitted = submitted, .duration = 100,
	};

	return store_reservation_insert(st, &rec) < 0 ? -1 : rec.id;
}

/* Queue order, device types, tags, a job before a reservation on a tie. */
TEST(test_queue__claim_order)
{
	struct store *st = open_new("claim.db");
	struct took t;
	int64_t r1;

	CHECK(st);
	CHECK(job(st, "low", "sim", NULL, 10, 1) > 0);
	CHECK(job(st, "high-late", "sim", NULL, 90, 5) > 0);
	CHECK(job(st, "high-early", "sim", NULL, 90, 4) > 0);
	CHECK(job(st, "other-type", "qemu", NULL, 100, 1) > 0);
	CHECK(job(st, "needs-usb", "sim", "[\"usb\"]", 95, 1) > 0);
	r1 = reservation(st, "alice", "sim", NULL, 90, 5);
	CHECK(r1 > 0);

	/* a board without usb skips the job that needs it */
	t = claim(st, "sim-01", "sim", "[\"sim\"]", 1000);
	CHECK_INT(t.err, ==, 0);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_JOB);
	CHECK_STR(t.name, "high-early");
	CHECK_STR(t.device, "sim-01");
	CHECK_INT(t.state, ==, JOB_STATE_RUNNING);
	CHECK_INT(t.started, ==, 1000);
	t = claim(st, "sim-02", "sim", "[\"sim\",\"usb\"]", 1001);
	CHECK_STR(t.name, "needs-usb");
	/* same priority and time: the job first, then the reservation */
	t = claim(st, "sim-03", "sim", NULL, 1002);
	CHECK_STR(t.name, "high-late");
	t = claim(st, "sim-03", "sim", NULL, 1003);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_RESERVATION);
	CHECK_INT(t.id, ==, r1);
	CHECK_STR(t.device, "sim-03");
	CHECK_INT(t.rstate, ==, RESERVATION_ACTIVE);
	CHECK_INT(t.until, ==, 1103);
	t = claim(st, "sim-04", "sim", NULL, 1004);
	CHECK_STR(t.name, "low");
	t = claim(st, "sim-04", "sim", NULL, 1005);
	CHECK_INT(t.err, ==, 0);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_NONE);
	t = claim(st, "qemu-01", "qemu", NULL, 1006);
	CHECK_STR(t.name, "other-type");
	store_close(st);
}

/* A reservation of a board by name, a requeued job's avoided board, session jobs. */
TEST(test_queue__claim_board_avoid_session)
{
	struct store *st = open_new("claim2.db");
	struct job_record rec = { .name = "session", .device_type = "sim", .priority = 100,
				  .definition = "x", .session = true };
	struct reservation_record res;
	struct took t;
	int64_t j, r;

	CHECK(st);
	CHECK(store_job_insert(st, &rec) == 0);
	r = reservation(st, "bob", "sim", "sim-02", 80, 1);
	j = job(st, "flaky", "sim", NULL, 50, 2);
	CHECK(r > 0 && j > 0);
	t = claim(st, "sim-01", "sim", NULL, 10);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_JOB);
	CHECK_INT(t.id, ==, j);
	CHECK(store_job_requeue(st, j, false, "power failed") == 0);
	/* not on the board it failed on, unless no other board of its type exists */
	t = claim(st, "sim-01", "sim", NULL, 20);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_NONE);
	{
		struct store_claim_req req = { .board = "sim-01", .device_type = "sim",
					       .when = 21, .lone = true };
		struct took lone = { 0 };

		CHECK(store_claim(st, &req, on_claim, &lone) == 0);
		CHECK_INT(lone.kind, ==, STORE_CLAIMED_JOB);
		CHECK_INT(lone.id, ==, j);
		CHECK(store_job_requeue(st, j, false, "power failed again") == 0);
	}
	t = claim(st, "sim-02", "sim", NULL, 30);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_RESERVATION);
	CHECK_INT(t.id, ==, r);
	CHECK(store_reservation_get(st, r, &res) == 0);
	CHECK_INT(res.state, ==, RESERVATION_ACTIVE);
	CHECK_STR(res.device, "sim-02");
	CHECK_INT(res.until, ==, 130);
	reservation_record_release(&res);
	t = claim(st, "sim-02", "sim", NULL, 40);
	CHECK_INT(t.id, ==, j);
	/* after a crash (recovered) no board is avoided */
	CHECK(store_job_requeue(st, j, true, "labd stopped") == 0);
	t = claim(st, "sim-02", "sim", NULL, 50);
	CHECK_INT(t.id, ==, j);
	/* the session job was never taken */
	t = claim(st, "sim-03", "sim", NULL, 60);
	CHECK_INT(t.kind, ==, STORE_CLAIMED_NONE);
	CHECK(store_claim(st, &(struct store_claim_req){ .board = "x" }, on_claim, &t) == -EINVAL);
	store_close(st);
}

TEST(test_queue__position)
{
	struct store *st = open_new("position.db");
	int64_t r1, r2, r3, pos;

	CHECK(st);
	CHECK(job(st, "a", "sim", NULL, 50, 1) > 0);
	r1 = reservation(st, "alice", "sim", NULL, 50, 1);
	CHECK(job(st, "b", "sim", NULL, 50, 2) > 0);
	CHECK(job(st, "c", "sim", NULL, 90, 3) > 0);
	CHECK(job(st, "other", "qemu", NULL, 90, 1) > 0);
	r2 = reservation(st, "bob", "sim", NULL, 50, 1);
	r3 = reservation(st, "carol", "sim", NULL, 10, 0);
	CHECK(store_queue_position(st, r1, &pos) == 0);
	CHECK_INT(pos, ==, 3);	/* c (priority), a (a job on a tie), then r1 */
	CHECK(store_queue_position(st, r2, &pos) == 0);
	CHECK_INT(pos, ==, 4);	/* same time as r1, a later id */
	CHECK(store_queue_position(st, r3, &pos) == 0);
	CHECK_INT(pos, ==, 6);
	CHECK(store_reservation_end(st, r1, 5, "canceled") == 0);
	CHECK(store_queue_position(st, r1, &pos) == -ENOENT);
	CHECK(store_queue_position(st, r2, &pos) == 0);
	CHECK_INT(pos, ==, 3);
	CHECK(store_queue_position(st, 999, &pos) == -ENOENT);
	store_close(st);
}

/* A queued job's place: the jobs and reservations a board of its type takes before it. */
TEST(test_queue__job_position)
{
	struct store *st = open_new("job-position.db");
	int64_t a, b, c, q, pos;

	CHECK(st);
	a = job(st, "a", "sim", NULL, 50, 1);
	CHECK(reservation(st, "alice", "sim", NULL, 50, 1) > 0);	/* after a: same time */
	b = job(st, "b", "sim", NULL, 50, 2);
	c = job(st, "c", "sim", NULL, 90, 3);
	q = job(st, "other", "qemu", NULL, 90, 1);
	CHECK(reservation(st, "bob", "sim", NULL, 10, 0) > 0);	/* low priority: last */
	CHECK(store_job_position(st, c, &pos) == 0);
	CHECK_INT(pos, ==, 1);
	CHECK(store_job_position(st, a, &pos) == 0);
	CHECK_INT(pos, ==, 2);
	CHECK(store_job_position(st, b, &pos) == 0);
	CHECK_INT(pos, ==, 4);	/* c, a, alice's reservation, then b */
	CHECK(store_job_position(st, q, &pos) == 0);
	CHECK_INT(pos, ==, 1);
	CHECK(store_job_start(st, c, "sim-01", 10) == 0);
	CHECK(store_job_position(st, c, &pos) == -ENOENT);
	CHECK(store_job_position(st, b, &pos) == 0);
	CHECK_INT(pos, ==, 3);
	CHECK(store_job_position(st, 999, &pos) == -ENOENT);
	store_close(st);
}

struct summary {
	int n;
	char type[4][16];
	int64_t queued[4];
	uint64_t oldest[4];
	int64_t reservations[4];
	uint64_t oldest_reservation[4];
};

static int seen_summary(const struct queue_record *rec, void *ud)
{
	struct summary *s = ud;

	if (s->n < 4) {
		snprintf(s->type[s->n], sizeof(s->type[0]), "%s", rec->device_type);
		s->queued[s->n] = rec->queued;
		s->oldest[s->n] = rec->oldest;
		s->reservations[s->n] = rec->reservations;
		s->oldest_reservation[s->n] = rec->oldest_reservation;
	}
	s->n++;
	return 0;
}

/* Counts kept by the database follow every change of state. */
TEST(test_queue__counts_and_summary)
{
	struct store *st = open_new("counts.db");
	struct job_filter f = { .state = JOB_STATE_QUEUED, .device_type = "sim" };
	struct summary s = { 0 };
	int64_t a, b, n;

	CHECK(st);
	a = job(st, "a", "sim", NULL, 50, 7);
	b = job(st, "b", "sim", NULL, 50, 5);
	CHECK(job(st, "c", "qemu", NULL, 50, 9) > 0);
	CHECK(store_job_count(st, JOB_STATE_QUEUED, &n) == 0);
	CHECK_INT(n, ==, 3);
	CHECK(store_job_count_matching(st, &f, &n) == 0);
	CHECK_INT(n, ==, 2);
	CHECK(store_job_start(st, a, "sim-01", 10) == 0);
	CHECK(store_job_count(st, JOB_STATE_RUNNING, &n) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(store_job_count_matching(st, &f, &n) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(store_job_finish(st, a, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL, 20) == 0);
	CHECK(store_job_count(st, JOB_STATE_RUNNING, &n) == 0);
	CHECK_INT(n, ==, 0);
	CHECK(store_job_count(st, JOB_STATE_FINISHED, &n) == 0);
	CHECK_INT(n, ==, 1);
	f = (struct job_filter){ .state = -1 };
	CHECK(store_job_count_matching(st, &f, &n) == 0);
	CHECK_INT(n, ==, 3);
	CHECK(store_queue_summary(st, seen_summary, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK_STR(s.type[0], "qemu");
	CHECK_INT(s.queued[0], ==, 1);
	CHECK_STR(s.type[1], "sim");
	CHECK_INT(s.queued[1], ==, 1);
	CHECK_INT(s.oldest[1], ==, 5);
	CHECK(store_job_start(st, b, "sim-01", 30) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_queue_summary(st, seen_summary, &s) == 0);
	CHECK_INT(s.n, ==, 1);
	/* waiting reservations are counted too, a type with only them included */
	CHECK(reservation(st, "alice", "sim", NULL, 50, 40) > 0);
	CHECK(reservation(st, "bob", "sim", NULL, 50, 35) > 0);
	CHECK(reservation(st, "carol", "x86", NULL, 50, 45) > 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_queue_summary(st, seen_summary, &s) == 0);
	CHECK_INT(s.n, ==, 3);
	CHECK_STR(s.type[0], "qemu");
	CHECK_INT(s.reservations[0], ==, 0);
	CHECK_STR(s.type[1], "sim");
	CHECK_INT(s.queued[1], ==, 0);
	CHECK_INT(s.reservations[1], ==, 2);
	CHECK_INT(s.oldest_reservation[1], ==, 35);
	CHECK_STR(s.type[2], "x86");
	CHECK_INT(s.queued[2], ==, 0);
	CHECK_INT(s.reservations[2], ==, 1);
	store_close(st);
}

/* Pages below and above a cursor, with and without filters. */
TEST(test_queue__list_cursors)
{
	struct store *st = open_new("cursor.db");
	struct job_filter f = { .state = -1, .limit = 3 };
	struct seen s = { 0 };
	int i;

	CHECK(st);
	for (i = 1; i <= 10; i++)
		CHECK(job(st, i % 2 ? "odd" : "even", i % 2 ? "sim" : "qemu", NULL, 50, i) == i);
	f.before_id = 8;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 3 && s.ids[0] == 7 && s.ids[1] == 6 && s.ids[2] == 5);
	/* the page above 4, still newest first */
	memset(&s, 0, sizeof(s));
	f.before_id = 0;
	f.after_id = 4;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 3 && s.ids[0] == 7 && s.ids[1] == 6 && s.ids[2] == 5);
	memset(&s, 0, sizeof(s));
	f.device_type = "sim";
	f.after_id = 2;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 3 && s.ids[0] == 7 && s.ids[1] == 5 && s.ids[2] == 3);
	memset(&s, 0, sizeof(s));
	f.after_id = 0;
	f.before_id = 3;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == 1);
	f.limit = STORE_JOB_LIST_MAX + 1;
	CHECK(store_job_list(st, &f, seen_job, &s) == -EINVAL);
	f.limit = 0;
	f.after_id = -1;
	CHECK(store_job_list(st, &f, seen_job, &s) == -EINVAL);
	store_close(st);
}

struct synced {
	int calls;
	int err;
};

static void on_synced(int err, void *ud)
{
	struct synced *s = ud;

	s->calls++;
	s->err = err;
}

/* Jobs committed so far, as another connection sees them. */
static int committed_jobs(const char *dir)
{
	char path[200];
	sqlite3 *db;
	sqlite3_stmt *s;
	int n = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_SQLITE_FILE);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT count(*) FROM jobs", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			n = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return n;
}

/* With a loop, an iteration's writes commit together at the next one. */
TEST(test_queue__batch_and_sync)
{
	const char *dir = state_dir("batch.db");
	struct synced a = { 0 }, b = { 0 }, gone = { 0 };
	struct store_params p = { .state_dir = dir };
	struct diag diag = DIAG_INIT;
	struct store *st = NULL;
	struct loop *l = NULL;
	int64_t n;

	if (pg_test_base())
		TEST_SKIP("SQLite's batching: PostgreSQL answers each write");
	CHECK(loop_new(&l) == 0);
	p.loop = l;
	CHECK(store_open(&p, &st, &diag) == 0);
	CHECK(store_sync(st, on_synced, &a) == 0);	/* nothing written: durable */
	CHECK(job(st, "one", "sim", NULL, 50, 1) == 1);
	CHECK(job(st, "two", "sim", NULL, 50, 2) == 2);
	CHECK(store_sync(st, on_synced, &a) == 1);
	CHECK(store_sync(st, on_synced, &gone) == 1);
	store_forget(st, &gone);
	/* the connection that wrote sees its writes; the others only after the commit */
	CHECK(store_job_count(st, JOB_STATE_QUEUED, &n) == 0);
	CHECK_INT(n, ==, 2);
	CHECK_INT(committed_jobs(dir), ==, 0);
	CHECK(loop_run_once(l, 0) >= 0);
	CHECK_INT(a.calls, ==, 1);
	CHECK_INT(a.err, ==, 0);
	CHECK_INT(gone.calls, ==, 0);
	CHECK_INT(committed_jobs(dir), ==, 2);
	/* store_commit() ends the batch it joined */
	CHECK(job(st, "three", "sim", NULL, 50, 3) == 3);
	CHECK(store_sync(st, on_synced, &b) == 1);
	CHECK(store_begin(st) == 0);
	CHECK(job(st, "four", "sim", NULL, 50, 4) == 4);
	CHECK(store_commit(st) == 0);
	CHECK_INT(b.calls, ==, 1);
	CHECK_INT(committed_jobs(dir), ==, 4);
	/* close commits a batch still open */
	CHECK(job(st, "five", "sim", NULL, 50, 5) == 5);
	store_close(st);
	CHECK_INT(committed_jobs(dir), ==, 5);
	loop_free(l);
	diag_release(&diag);
}

/* The jobs still queued (all of those a test inserts, until it changes one). */
static int pg_committed_jobs(const char *dir)
{
	return pg_test_count(dir, "SELECT count(*) FROM jobs WHERE state = 'queued'");
}

/* Run @l until @dir has @n jobs committed, for 10 s at most; the count then. */
static int pg_wait_committed(struct loop *l, const char *dir, int n)
{
	int i, seen = pg_committed_jobs(dir);

	for (i = 0; i < 200 && seen != n; i++) {
		loop_run_once(l, 50 * 1000);
		seen = pg_committed_jobs(dir);
	}
	return seen;
}

static int open_with_loop(const char *dir, struct loop *l, struct store **ret)
{
	struct store_params p = { .state_dir = dir, .loop = l };
	struct diag diag = DIAG_INIT;
	config_t cfg;
	int r;

	p.settings = pg_test_conf(dir, &cfg);
	r = store_open(&p, ret, &diag);
	config_destroy(&cfg);
	diag_release(&diag);
	return r;
}

/* A child writes @n jobs with a loop it never runs, in a transaction or not, and is killed. */
static void pg_write_and_die(const char *dir, int n, bool txn)
{
	struct store *st = NULL;
	struct loop *l = NULL;
	int i;

	if (loop_new(&l) < 0 || open_with_loop(dir, l, &st) < 0 || (txn && store_begin(st) < 0))
		_exit(1);
	for (i = 0; i < n; i++)
		if (job(st, "cut", "sim", NULL, 50, (uint64_t)i + 1) < 0)
			_exit(1);
	kill(getpid(), SIGKILL);
	_exit(2);
}

/*
 * PostgreSQL with a loop: the writes of a turn are one transaction, ended
 * after the turn or by anything else sent on the connection (a read sees
 * them); a turn's writes cut by a crash reach the database when labd is back,
 * a transaction's do not.
 */
TEST(test_queue__pg_write_groups)
{
	const char *dir = state_dir("groups.db"), *cut = NULL;
	struct job_record rec;
	struct store *st = NULL;
	struct loop *l = NULL;
	int status, i;
	pid_t pid;

	if (!pg_test_base())
		TEST_SKIP("PostgreSQL's write groups: SQLite's batch is test_queue__batch_and_sync");
	CHECK(loop_new(&l) == 0);
	CHECK(open_with_loop(dir, l, &st) == 0);
	CHECK(pg_wait_committed(l, dir, 0) == 0);
	CHECK(job(st, "one", "sim", NULL, 50, 1) == 1);
	CHECK(job(st, "two", "sim", NULL, 50, 2) == 2);
	CHECK_INT(pg_wait_committed(l, dir, 2), ==, 2);
	/* the writes of one turn are one transaction (a job's insert begins one of its own) */
	CHECK(store_device_put(st, &(struct device_record){ .name = "a" }) == 0);
	CHECK(store_device_put(st, &(struct device_record){ .name = "b" }) == 0);
	CHECK(store_job_set_state(st, 1, JOB_STATE_CANCELING) == 0);
	CHECK_INT(pg_test_count(dir, "SELECT count(*) FROM devices"), ==, 0);	/* not committed */
	CHECK_INT(pg_wait_committed(l, dir, 1), ==, 1);
	CHECK_INT(pg_test_count(dir, "SELECT count(*) FROM devices d, jobs j WHERE d.xmin = j.xmin"),
		  ==, 2);
	/* a read ends the group before it: what it reads is committed */
	CHECK(store_device_put(st, &(struct device_record){ .name = "c" }) == 0);
	CHECK(store_job_get(st, 2, &rec) == 0);
	job_record_release(&rec);
	CHECK_INT(pg_test_count(dir, "SELECT count(*) FROM devices"), ==, 3);
	st = store_close(st);
	/* a crash before the turn ended: sent when the host opens the store again */
	for (i = 0; i < 2; i++) {
		cut = state_dir(i ? "cut-txn.db" : "cut-turn.db");
		pid = fork();
		CHECK(pid >= 0);
		if (!pid)
			pg_write_and_die(cut, 3, i == 1);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		CHECK_INT(pg_committed_jobs(cut), ==, 0);
		CHECK(open_with_loop(cut, l, &st) == 0);
		CHECK_INT(pg_wait_committed(l, cut, i ? 0 : 3), ==, i ? 0 : 3);
		/* ... once: the next turn adds nothing */
		CHECK(job(st, "after", "sim", NULL, 50, 9) > 0);
		CHECK_INT(pg_wait_committed(l, cut, i ? 1 : 4), ==, i ? 1 : 4);
		st = store_close(st);
	}
	loop_free(l);
}

/*
 * A host SIGKILLed with writes in its journal, then reaped by another (its
 * jobs requeued or ended there): started again it drops them, as a fenced
 * host does, rather than overwrite what the other host did.
 */
TEST(test_queue__pg_reaped_journal_dropped)
{
	const char *cut = state_dir("cut-reaped.db");
	struct store *st = NULL;
	struct loop *l = NULL;
	int status;
	pid_t pid;

	if (!pg_test_base())
		TEST_SKIP("PostgreSQL's hosts: SQLite has one");
	CHECK(loop_new(&l) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		pg_write_and_die(cut, 3, false);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK_INT(pg_test_count(cut, "WITH r AS (UPDATE hosts SET lease_until = 0 RETURNING 1)"
				" SELECT count(*) FROM r"), ==, 1);
	CHECK(open_with_loop(cut, l, &st) == 0);
	CHECK(job(st, "after", "sim", NULL, 50, 9) > 0);
	CHECK_INT(pg_wait_committed(l, cut, 1), ==, 1);	/* the new one, not the 3 cut */
	CHECK_INT(pg_test_count(cut, "SELECT count(*) FROM jobs"), ==, 1);
	st = store_close(st);
	loop_free(l);
}

/*
 * store_host_reaped(): a host another reaped (lease_until 0) until it starts
 * again, not one whose lease runs, nor one never seen.  SQLite: never.
 */
TEST(test_queue__host_reaped)
{
	const char *dir = state_dir("host-reaped.db");
	struct store *st = NULL;
	bool yes = true;

	CHECK(open_at(dir, &st) == 0);
	CHECK(store_host_reaped(st, "rack-9", &yes) == 0 && !yes);
	CHECK(store_host_reaped(st, NULL, &yes) == -EINVAL);
	if (pg_test_base()) {
		CHECK_INT(pg_test_count(dir, "WITH r AS (INSERT INTO hosts (name, lease_until)"
					" VALUES ('rack-9', 0), ('rack-8', 1) RETURNING 1)"
					" SELECT count(*) FROM r"), ==, 2);
		CHECK(store_host_reaped(st, "rack-9", &yes) == 0 && yes);
		CHECK(store_host_reaped(st, "rack-8", &yes) == 0 && !yes);
	}
	st = store_close(st);
}

static void on_answered(int err, void *ud)
{
	(*(int *)ud)++;
}

/* Run @l until *@calls is no longer 0 (at most 10 s). */
static void run_until(struct loop *l, const int *calls)
{
	int i;

	for (i = 0; i < 1000 && !*calls; i++)
		loop_run_once(l, 10000);
}

/*
 * A read context (PostgreSQL, in a loop): a run whose read went to the
 * database may not write; the run with every answer writes, and a read it
 * makes after its write waits for its answer instead of making the run
 * again (which would repeat the write).
 */
TEST(test_queue__read_context_writes_once)
{
	const char *dir = state_dir("readctx.db");
	struct store_params p = { .state_dir = dir };
	struct job_record rec = { 0 };
	struct diag diag = DIAG_INIT;
	struct store *st = NULL;
	struct loop *l = NULL;
	int answered = 0, i;
	int64_t id;
	config_t cfg;

	if (!pg_test_base())
		TEST_SKIP("SQLite answers every read at once");
	CHECK(loop_new(&l) == 0);
	p.loop = l;
	p.settings = pg_test_conf(dir, &cfg);
	CHECK(store_open(&p, &st, &diag) == 0);
	config_destroy(&cfg);
	for (i = 0; i < 1000 && !store_available(st); i++)
		loop_run_once(l, 10000);	/* the journal in step: reads see the writes */
	CHECK(store_available(st));
	id = add_job(st, "one", 50);
	CHECK(id > 0);
	/* the first run: its read is sent, its write refused */
	CHECK(store_read_begin(st, on_answered, &answered) == 0);
	CHECK(store_job_get(st, id, &rec) == -EINPROGRESS);
	CHECK(store_read_pending(st));
	CHECK(store_job_set_state(st, id, JOB_STATE_CANCELING) == -EINPROGRESS);
	CHECK(store_read_end(st) == 1);
	run_until(l, &answered);
	CHECK_INT(answered, ==, 1);
	CHECK(store_job_get(st, id, &rec) == 0);	/* outside the context: it waits */
	CHECK_INT(rec.state, ==, JOB_STATE_QUEUED);	/* the refused write was not made */
	job_record_release(&rec);
	/* the run again: answered (read twice, answered once), it writes, reads what it wrote */
	CHECK(store_read_begin(st, on_answered, &answered) == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.state, ==, JOB_STATE_QUEUED);
	job_record_release(&rec);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK(!store_read_pending(st));
	job_record_release(&rec);
	CHECK(store_job_set_state(st, id, JOB_STATE_CANCELING) == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.state, ==, JOB_STATE_CANCELING);
	job_record_release(&rec);
	CHECK(!store_read_pending(st));
	CHECK(store_read_end(st) == 0);
	store_close(st);
	loop_free(l);
	diag_release(&diag);
}

/* Jobs inserted each in a read context of its own (an API request), until one is held. */
static void burst(struct store *st, int *answered, int *ret_n)
{
	int n;

	for (n = 0; n < 4096; n++) {
		CHECK(store_read_begin(st, on_answered, answered) == 0);
		if (job(st, "burst", "sim", NULL, 50, (uint64_t)n + 1) < 0)
			break;
		CHECK(store_read_end(st) == 0);
	}
	*ret_n = n;
	CHECK(store_read_pending(st));
	CHECK(store_read_end(st) == 1);
}

/* The results of job @id in the order the store lists them: their names joined. */
static int result_name(const struct result_record *rec, void *ud)
{
	return strbuf_addf(ud, "%s,", rec->name) < 0 ? -ENOMEM : 0;
}

static void add_results(struct store *st, int64_t job_id, int n, struct strbuf *names)
{
	struct result_record rec = { .job_id = job_id, .suite = "s", .result = "pass" };
	char name[16];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		rec.name = name;
		rec.id = -1;
		CHECK(store_result_add(st, &rec) == 0);
		CHECK_INT(rec.id, ==, 0);	/* numbered by the database: nothing to wait for */
		strbuf_addf(names, "%s,", name);
	}
}

/*
 * PostgreSQL in a loop: a burst of inserts that takes every id fetched
 * ahead before the refill is in (the loop does not run) never waits for
 * the database.  The request that finds none is held (-EINPROGRESS) until
 * the refill's answer, then takes one; one that cannot run again is
 * refused (-EAGAIN); the next burst finds a bigger block.  Results never
 * take an id ahead: hundreds in one turn, listed in the order added.
 */
TEST(test_queue__pg_ids_never_wait)
{
	const char *dir = state_dir("ids.db");
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
	int answered = 0, forgotten = 0, first = 0, second = 0, i;
	struct store *st = NULL;
	struct loop *l = NULL;
	struct job_record rec = { 0 };
	int64_t id, with_results;

	if (!pg_test_base())
		TEST_SKIP("SQLite numbers rows as it inserts them");
	CHECK(loop_new(&l) == 0);
	CHECK(open_with_loop(dir, l, &st) == 0);
	for (i = 0; i < 1000 && !store_available(st); i++)
		loop_run_once(l, 10000);
	with_results = job(st, "results", "sim", NULL, 50, 1);
	CHECK(with_results > 0);
	burst(st, &answered, &first);
	CHECK(first > 0 && first < 4096);
	CHECK(job(st, "outside", "sim", NULL, 50, 1) == -1);	/* no context: -EAGAIN */
	/* a client gone while held: its context is dropped when the refill comes */
	CHECK(store_read_begin(st, on_answered, &forgotten) == 0);
	CHECK(job(st, "gone", "sim", NULL, 50, 1) == -1);
	CHECK(store_read_end(st) == 1);
	store_forget(st, &forgotten);
	add_results(st, with_results, 300, &want);
	run_until(l, &answered);
	CHECK_INT(answered, ==, 1);
	/* the held request again: it takes an id */
	CHECK(store_read_begin(st, on_answered, &answered) == 0);
	id = job(st, "held", "sim", NULL, 50, 1);
	CHECK(id > 0);
	CHECK(store_read_end(st) == 0);
	CHECK_INT(pg_wait_committed(l, dir, first + 2), ==, first + 2);
	CHECK_INT(forgotten, ==, 0);
	/* a read outside a context waits: what was sent before it is answered, the refills too */
	CHECK(store_job_get(st, id, &rec) == 0);
	job_record_release(&rec);
	/* the block grew: the next burst takes more before it is held */
	burst(st, &answered, &second);
	CHECK_INT(second, >, first);
	CHECK(store_result_list(st, with_results, result_name, &got) == 0);
	CHECK_STR(got.buf, want.buf);
	strbuf_release(&want);
	strbuf_release(&got);
	store_close(st);
	loop_free(l);
}

TEST_LIST(test_queue__claim_order, test_queue__claim_board_avoid_session, test_queue__position,
	  test_queue__job_position,
	  test_queue__counts_and_summary, test_queue__list_cursors, test_queue__batch_and_sync,
	  test_queue__pg_write_groups, test_queue__pg_reaped_journal_dropped,
	  test_queue__host_reaped, test_queue__read_context_writes_once,
	  test_queue__pg_ids_never_wait);
