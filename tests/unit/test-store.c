// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-store.c -- the store interface (store/store.h) on the default driver,
 * SQLite, with real files in a temporary directory; what only SQLite does
 * (migrations, edited and broken files) is in test-store-sqlite.c.  With
 * LABD_TEST_PG set, the same tests on PostgreSQL (storebed.h,
 * tests/t1060-store-pg.sh)
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libconfig.h>

#include "core/diag.h"
#include "store/store.h"
#include "storebed.h"
#include "tap.h"

#define EVENTS_BENCH 10000

TEST(test_store__null_safe)
{
	CHECK(store_close(NULL) == NULL);
	job_record_release(NULL);
	device_record_release(NULL);
	result_record_release(NULL);
	event_record_release(NULL);
	delivery_record_release(NULL);
}

/* The `store` group of labd.conf text @text, parsed into @cfg (config_destroy() it). */
static const config_setting_t *store_conf(const char *text, config_t *cfg)
{
	const char *path = tmp_path("store.conf");
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
	config_init(cfg);
	if (config_read_file(cfg, path) != CONFIG_TRUE)
		abort();
	return config_setting_get_member(config_root_setting(cfg), "store");
}

/* store_check() of @text: the result, and the problems joined in @msgs. */
static int check_conf(const char *text, char *msgs, size_t size)
{
	struct diag diag = DIAG_INIT;
	config_t cfg;
	char *joined;
	int r = store_check(store_conf(text, &cfg), &diag);

	joined = diag_join(&diag);
	snprintf(msgs, size, "%s", joined ? joined : "");
	free(joined);
	diag_release(&diag);
	config_destroy(&cfg);
	return r;
}

/* labd.conf's `store` group: the driver by name, SQLite by default, errors at file:line. */
TEST(test_store__drivers)
{
	struct store_params p = { 0 };
	struct diag diag = DIAG_INIT;
	struct store *st = NULL;
	char dir[160], msgs[512];
	config_t cfg;

	snprintf(dir, sizeof(dir), "%s", state_dir("drivers"));
	p.state_dir = dir;
	CHECK(store_check(NULL, &diag) == 0);
	CHECK_INT(diag.n, ==, 0);
	CHECK(check_conf("store = { driver = \"sqlite\"; };\n", msgs, sizeof(msgs)) == 0);
	CHECK(check_conf("store = { };\n", msgs, sizeof(msgs)) == 0);
	CHECK(check_conf("lab_name = \"x\";\nstore = { driver = \"oracle\"; };\n", msgs,
			 sizeof(msgs)) == -EINVAL);
	CHECK_CONTAINS(msgs, "store.conf:2: unknown store driver 'oracle' (known: sqlite, postgresql)");
	CHECK(check_conf("store = { driver = \"sqlite\"; path = \"/x\"; };\n", msgs,
			 sizeof(msgs)) == -EINVAL);
	CHECK_CONTAINS(msgs, "store.conf:1: unknown key 'path'");
	CHECK(check_conf("store = \"sqlite\";\n", msgs, sizeof(msgs)) == -EINVAL);
	CHECK_CONTAINS(msgs, "'store' must be a group");

	/* store_open() refuses the same, and opens what the group names */
	p.settings = store_conf("store = { driver = \"oracle\"; };\n", &cfg);
	CHECK(store_open(&p, &st, &diag) == -EINVAL);
	CHECK(!st);
	CHECK_INT(diag.n, ==, 1);
	config_destroy(&cfg);
	p.settings = store_conf("store = { driver = \"sqlite\"; };\n", &cfg);
	CHECK(store_open(&p, &st, &diag) == 0);
	CHECK(add_job(st, "opened", 50) == 1);
	store_close(st);
	config_destroy(&cfg);
	diag_release(&diag);
}

TEST(test_store__job_insert_get)
{
	struct store *st = open_new("insert.db");
	struct job_record in = {
		.name = "boot test",
		.device_type = "rpi4",
		.tags = "[\"usb\",\"arm64\"]",
		.priority = 70,
		.submitted = 1700000000123456ULL,
		.definition = "job_name: \"caf\xc3\xa9\"\nactions: []\n",
		.format = "yaml",
		.filename = "jobs/boot.yaml",
		.submitter = "ci",
		.retries_left = 3,
	}, out;

	CHECK(st);
	CHECK(store_job_insert(st, &in) == 0);
	CHECK_INT(in.id, >, 0);
	CHECK_INT(in.attempt, ==, 1);
	CHECK(store_job_get(st, in.id, &out) == 0);
	CHECK_INT(out.id, ==, in.id);
	CHECK_STR(out.name, "boot test");
	CHECK_STR(out.device_type, "rpi4");
	CHECK_STR(out.tags, "[\"usb\",\"arm64\"]");
	CHECK_INT(out.priority, ==, 70);
	CHECK(out.submitted == 1700000000123456ULL);
	CHECK_INT(out.started, ==, 0);
	CHECK_INT(out.state, ==, JOB_STATE_QUEUED);
	CHECK_INT(out.health, ==, JOB_HEALTH_UNKNOWN);
	CHECK_INT(out.error_type, ==, ERROR_NONE);
	CHECK(!out.error_msg && !out.device && !out.last_error);
	CHECK_STR(out.definition, in.definition);
	CHECK_STR(out.format, "yaml");
	CHECK_STR(out.filename, "jobs/boot.yaml");
	CHECK_STR(out.submitter, "ci");
	CHECK_INT(out.attempt, ==, 1);
	CHECK_INT(out.retries_left, ==, 3);
	CHECK(!out.recovered);
	job_record_release(&out);
	CHECK(!out.name);
	CHECK(store_job_get(st, in.id + 100, &out) == -ENOENT);
	in.state = 42;
	CHECK(store_job_insert(st, &in) == -EINVAL);
	store_close(st);
}

TEST(test_store__job_list)
{
	struct store *st = open_new("list.db");
	struct job_filter f = { .state = -1 };
	struct seen s = { 0 };
	int64_t a, b, c, d;

	CHECK(st);
	a = add_job(st, "a", 50);
	b = add_job(st, "b", 50);
	c = add_job(st, "c", 50);
	d = add_job(st, "d", 50);
	CHECK(a > 0 && b > 0 && c > 0 && d > 0);
	CHECK(store_job_start(st, b, "rpi4-01", 2000) == 0);
	CHECK(store_job_start(st, d, "rpi4-02", 2000) == 0);

	CHECK(store_job_list(st, NULL, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 4);
	CHECK(s.ids[0] == d && s.ids[1] == c && s.ids[2] == b && s.ids[3] == a);

	memset(&s, 0, sizeof(s));
	f.state = JOB_STATE_RUNNING;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK(s.ids[0] == d && s.ids[1] == b);

	memset(&s, 0, sizeof(s));
	f.state = -1;
	f.device = "rpi4-01";
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 1);
	CHECK(s.ids[0] == b);

	memset(&s, 0, sizeof(s));
	f.device = NULL;
	f.before_id = d;
	f.limit = 2;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK(s.ids[0] == c && s.ids[1] == b);
	store_close(st);
}

/* LAVA's job filters: device type, submitter, healths, offset, and their count. */
TEST(test_store__job_filter_count)
{
	struct store *st = open_new("filter.db");
	struct job_filter f = { .state = -1 };
	struct job_record rec = { .name = "x", .device_type = "sim", .definition = "x",
				  .format = "yaml", .submitter = "alice" };
	struct seen s = { 0 };
	int64_t a, b, c, n;

	CHECK(st);
	a = add_job(st, "a", 50);
	b = add_job(st, "b", 50);
	CHECK(store_job_insert(st, &rec) == 0);
	c = rec.id;
	CHECK(store_job_start(st, b, "rpi4-01", 2000) == 0);
	CHECK(store_job_finish(st, b, JOB_HEALTH_INCOMPLETE, ERROR_JOB, "x", 3000) == 0);
	f.device_type = "qemu-arm64";
	CHECK(store_job_count_matching(st, &f, &n) == 0);
	CHECK_INT(n, ==, 2);
	f.state = JOB_STATE_QUEUED;
	CHECK(store_job_count_matching(st, &f, &n) == 0);
	CHECK_INT(n, ==, 1);
	f.state = -1;
	f.device_type = NULL;
	f.healths = 1U << JOB_HEALTH_INCOMPLETE | 1U << JOB_HEALTH_COMPLETE;
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == b);
	f.healths = 1U << JOB_HEALTH_UNKNOWN;
	f.offset = 1;
	memset(&s, 0, sizeof(s));
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == a);
	CHECK(store_job_count_matching(st, &f, &n) == 0);
	CHECK_INT(n, ==, 2);
	f.healths = 0;
	f.offset = 0;
	f.submitter = "alice";
	memset(&s, 0, sizeof(s));
	CHECK(store_job_list(st, &f, seen_job, &s) == 0);
	CHECK(s.n == 1 && s.ids[0] == c);
	f.state = 9;
	CHECK(store_job_count_matching(st, &f, &n) == -EINVAL);
	store_close(st);
}

TEST(test_store__queue_order)
{
	struct store *st = open_new("queue.db");
	struct seen s = { 0 };
	int64_t low;

	CHECK(st);
	low = add_job(st, "low1", 10);
	CHECK(add_job(st, "mid1", 50) > 0);
	CHECK(add_job(st, "high1", 90) > 0);
	CHECK(add_job(st, "mid2", 50) > 0);
	CHECK(add_job(st, "high2", 90) > 0);
	CHECK(add_job(st, "low2", 10) > 0);
	CHECK(add_job(st, "mid3", 50) > 0);
	CHECK(store_job_queued(st, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 7);
	CHECK_STR(s.names[0], "high1");
	CHECK_STR(s.names[1], "high2");
	CHECK_STR(s.names[2], "mid1");
	CHECK_STR(s.names[3], "mid2");
	CHECK_STR(s.names[4], "mid3");
	CHECK_STR(s.names[5], "low1");
	CHECK_STR(s.names[6], "low2");

	/* a requeued job keeps its place among its priority */
	CHECK(store_job_start(st, low, "qemu-01", 5) == 0);
	CHECK(store_job_requeue(st, low, false, "power control failed") == 0);
	memset(&s, 0, sizeof(s));
	CHECK(store_job_queued(st, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 7);
	CHECK_STR(s.names[5], "low1");
	store_close(st);
}

/* Which of some jobs are still queued: a started one and an unknown id are not. */
TEST(test_store__still_queued)
{
	struct store *st = open_new("still.db");
	int64_t ids[STORE_STILL_QUEUED_MAX + 1] = { 0 };
	struct seen s = { 0 };

	CHECK(st);
	ids[0] = add_job(st, "a", 50);
	ids[1] = add_job(st, "b", 50);
	ids[2] = add_job(st, "c", 50);
	ids[3] = ids[2] + 1000;
	CHECK(ids[0] > 0 && ids[1] > 0 && ids[2] > 0);
	CHECK(store_job_start(st, ids[1], "qemu-01", 5) == 0);
	CHECK(store_job_still_queued(st, ids, 4, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK((s.ids[0] == ids[0] && s.ids[1] == ids[2]) ||
	      (s.ids[0] == ids[2] && s.ids[1] == ids[0]));
	memset(&s, 0, sizeof(s));
	CHECK(store_job_still_queued(st, ids, 0, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 0);
	CHECK(store_job_still_queued(st, ids, STORE_STILL_QUEUED_MAX + 1, seen_job, &s) ==
	      -EINVAL);
	store_close(st);
}

struct starter {
	struct store *st;
	int started;
};

/* Start every job from inside the listing, as the scheduler does; stop after two. */
static int start_from_cb(const struct job_record *rec, void *ud)
{
	struct starter *s = ud;
	struct job_record again;

	if (s->started == 2)
		return -ECANCELED;
	if (store_job_start(s->st, rec->id, "qemu-01", 10) < 0)
		return -EIO;
	if (store_job_get(s->st, rec->id, &again) < 0)
		return -EIO;
	job_record_release(&again);
	s->started++;
	return 0;
}

TEST(test_store__callback_reentry_and_stop)
{
	struct store *st = open_new("reentry.db");
	struct starter s = { .st = st };
	int64_t n;

	CHECK(st);
	CHECK(add_job(st, "a", 50) > 0);
	CHECK(add_job(st, "b", 50) > 0);
	CHECK(add_job(st, "c", 50) > 0);
	CHECK(store_job_queued(st, start_from_cb, &s) == -ECANCELED);
	CHECK_INT(s.started, ==, 2);
	CHECK(store_job_count(st, JOB_STATE_RUNNING, &n) == 0);
	CHECK_INT(n, ==, 2);
	CHECK(store_job_count(st, JOB_STATE_QUEUED, &n) == 0);
	CHECK_INT(n, ==, 1);
	store_close(st);
}

TEST(test_store__lifecycle)
{
	struct store *st = open_new("lifecycle.db");
	struct job_record rec;
	int64_t id;

	CHECK(st);
	id = add_job(st, "life", 50);
	CHECK(id > 0);
	CHECK(store_job_start(st, id, "rpi4-01", 2000) == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.state, ==, JOB_STATE_RUNNING);
	CHECK_STR(rec.device, "rpi4-01");
	CHECK_INT(rec.started, ==, 2000);
	job_record_release(&rec);

	/* an infrastructure failure: requeue, one retry used */
	CHECK(store_job_finish(st, id, JOB_HEALTH_INCOMPLETE, ERROR_INFRASTRUCTURE,
			       "console vanished", 3000) == 0);
	CHECK(store_job_requeue(st, id, false, NULL) == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.state, ==, JOB_STATE_QUEUED);
	CHECK_INT(rec.attempt, ==, 2);
	CHECK_INT(rec.retries_left, ==, 1);
	CHECK(!rec.recovered);
	CHECK(!rec.device && !rec.error_msg);
	CHECK_INT(rec.started, ==, 0);
	CHECK_INT(rec.ended, ==, 0);
	CHECK_INT(rec.health, ==, JOB_HEALTH_UNKNOWN);
	CHECK_INT(rec.error_type, ==, ERROR_NONE);
	CHECK_STR(rec.last_error, "console vanished");
	job_record_release(&rec);

	/* labd crashed while it ran: requeue as recovered, no retry used */
	CHECK(store_job_start(st, id, "rpi4-02", 4000) == 0);
	CHECK(store_job_requeue(st, id, true, "labd restarted while the job ran") == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.attempt, ==, 3);
	CHECK_INT(rec.retries_left, ==, 1);
	CHECK(rec.recovered);
	CHECK_STR(rec.last_error, "labd restarted while the job ran");
	job_record_release(&rec);

	/* a later ordinary requeue keeps the flag; retries stop at 0 */
	CHECK(store_job_requeue(st, id, false, NULL) == 0);
	CHECK(store_job_requeue(st, id, false, NULL) == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.attempt, ==, 5);
	CHECK_INT(rec.retries_left, ==, 0);
	CHECK(rec.recovered);
	CHECK_STR(rec.last_error, "labd restarted while the job ran");
	job_record_release(&rec);

	CHECK(store_job_start(st, id, "rpi4-03", 5000) == 0);
	CHECK(store_job_set_state(st, id, JOB_STATE_CANCELING) == 0);
	CHECK(store_job_finish(st, id, JOB_HEALTH_CANCELED, ERROR_NONE, NULL, 6000) == 0);
	CHECK(store_job_get(st, id, &rec) == 0);
	CHECK_INT(rec.state, ==, JOB_STATE_FINISHED);
	CHECK_INT(rec.health, ==, JOB_HEALTH_CANCELED);
	CHECK_INT(rec.ended, ==, 6000);
	CHECK_STR(rec.device, "rpi4-03");
	job_record_release(&rec);

	CHECK(store_job_start(st, id + 1, "x", 1) == -ENOENT);
	CHECK(store_job_set_state(st, id + 1, JOB_STATE_RUNNING) == -ENOENT);
	CHECK(store_job_finish(st, id + 1, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL, 1) == -ENOENT);
	CHECK(store_job_requeue(st, id + 1, false, NULL) == -ENOENT);
	store_close(st);
}

TEST(test_store__running_and_counts)
{
	struct store *st = open_new("running.db");
	struct seen s = { 0 };
	int64_t a, b, c, n;

	CHECK(st);
	a = add_job(st, "a", 50);
	b = add_job(st, "b", 50);
	c = add_job(st, "c", 50);
	CHECK(add_job(st, "d", 50) > 0);
	CHECK(store_job_start(st, a, "q1", 1) == 0);
	CHECK(store_job_start(st, b, "q2", 1) == 0);
	CHECK(store_job_start(st, c, "q3", 1) == 0);
	CHECK(store_job_set_state(st, b, JOB_STATE_CANCELING) == 0);
	CHECK(store_job_finish(st, c, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL, 2) == 0);
	CHECK(store_job_running(st, seen_job, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK(s.ids[0] == a && s.ids[1] == b);
	CHECK(store_job_count(st, JOB_STATE_QUEUED, &n) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(store_job_count(st, JOB_STATE_RUNNING, &n) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(store_job_count(st, JOB_STATE_CANCELING, &n) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(store_job_count(st, JOB_STATE_FINISHED, &n) == 0);
	CHECK_INT(n, ==, 1);
	store_close(st);
}

TEST(test_store__devices)
{
	struct store *st = open_new("devices.db");
	struct device_record in = {
		.name = "rpi4-02",
		.state = DEVICE_STATE_RESERVED,
		.holder = "alice",
		.hold_until = 9000,
		.changed = 100,
	}, out;
	struct seen s = { 0 };

	CHECK(st);
	CHECK(store_device_get(st, "rpi4-02", &out) == -ENOENT);
	CHECK(store_device_put(st, &in) == 0);
	CHECK(store_device_get(st, "rpi4-02", &out) == 0);
	CHECK_STR(out.name, "rpi4-02");
	CHECK_INT(out.state, ==, DEVICE_STATE_RESERVED);
	CHECK(!out.reason);
	CHECK_STR(out.holder, "alice");
	CHECK_INT(out.hold_until, ==, 9000);
	CHECK_INT(out.job_id, ==, 0);
	CHECK_INT(out.changed, ==, 100);
	device_record_release(&out);

	/* replace */
	in.state = DEVICE_STATE_BAD;
	in.reason = "console '/dev/ttyUSB3' vanished";
	in.holder = NULL;
	in.hold_until = 0;
	in.job_id = 17;
	in.changed = 200;
	CHECK(store_device_put(st, &in) == 0);
	CHECK(store_device_get(st, "rpi4-02", &out) == 0);
	CHECK_INT(out.state, ==, DEVICE_STATE_BAD);
	CHECK_STR(out.reason, "console '/dev/ttyUSB3' vanished");
	CHECK(!out.holder);
	CHECK_INT(out.job_id, ==, 17);
	CHECK_INT(out.changed, ==, 200);
	device_record_release(&out);

	in.name = "bbb-01";
	in.state = DEVICE_STATE_IDLE;
	CHECK(store_device_put(st, &in) == 0);
	in.name = "qemu-01";
	CHECK(store_device_put(st, &in) == 0);
	CHECK(store_device_list(st, seen_device, &s) == 0);
	CHECK_INT(s.n, ==, 3);
	CHECK_STR(s.names[0], "bbb-01");
	CHECK_STR(s.names[1], "qemu-01");
	CHECK_STR(s.names[2], "rpi4-02");
	in.name = NULL;
	CHECK(store_device_put(st, &in) == -EINVAL);
	store_close(st);
}

struct seen_results {
	struct result_record r[8];
	int n;
};

/* Keeps copies of the plain fields and of the name. */
static int seen_result(const struct result_record *rec, void *ud)
{
	struct seen_results *s = ud;

	if (s->n < 8) {
		s->r[s->n] = *rec;
		s->r[s->n].name = strdup(rec->name);
		s->r[s->n].suite = s->r[s->n].result = s->r[s->n].units = NULL;
		s->r[s->n].extra = NULL;
	}
	s->n++;
	return 0;
}

static void seen_results_release(struct seen_results *s)
{
	int i;

	for (i = 0; i < s->n && i < 8; i++)
		free(s->r[i].name);
}

static int add_result(struct store *st, int64_t job, const char *name, const char *result)
{
	struct result_record rec = {
		.job_id = job, .suite = "0_smoke", .name = (char *)name, .result = (char *)result,
	};

	return store_result_add(st, &rec);
}

TEST(test_store__results)
{
	struct store *st = open_new("results.db");
	struct result_record m = {
		.suite = "bench",
		.name = "boot-time",
		.result = "pass",
		.has_measurement = true,
		.measurement = 12.5,
		.units = "seconds",
		.log_start = 10,
		.log_end = 20,
		.extra = "{\"kci\":1}",
		.created = 77,
	};
	struct seen_results s = { 0 };
	int64_t job, other;

	CHECK(st);
	job = add_job(st, "r", 50);
	other = add_job(st, "o", 50);
	CHECK(add_result(st, job, "first", "pass") == 0);
	m.job_id = job;
	CHECK(store_result_add(st, &m) == 0);
	CHECK_INT(m.id, >, 0);
	CHECK(add_result(st, other, "elsewhere", "fail") == 0);
	CHECK(add_result(st, job, "zero", "fail") == 0);
	m.has_measurement = true;
	m.measurement = 0;
	m.name = "zero-measured";
	CHECK(store_result_add(st, &m) == 0);

	CHECK(store_result_list(st, job, seen_result, &s) == 0);
	CHECK_INT(s.n, ==, 4);
	CHECK_STR(s.r[0].name, "first");
	CHECK(!s.r[0].has_measurement);
	CHECK_STR(s.r[1].name, "boot-time");
	CHECK(s.r[1].has_measurement && s.r[1].measurement == 12.5);
	CHECK_INT(s.r[1].log_start, ==, 10);
	CHECK_INT(s.r[1].log_end, ==, 20);
	CHECK_INT(s.r[1].created, ==, 77);
	CHECK(s.r[1].job_id == job);
	CHECK_STR(s.r[2].name, "zero");
	CHECK_STR(s.r[3].name, "zero-measured");
	CHECK(s.r[3].has_measurement && s.r[3].measurement == 0);
	CHECK(s.r[0].id < s.r[1].id && s.r[1].id < s.r[2].id);
	seen_results_release(&s);

	CHECK(add_result(st, job + 1000, "orphan", "pass") == -ENOENT);
	store_close(st);
}

static int keep_first_result(const struct result_record *rec, void *ud)
{
	struct result_record *out = ud;

	if (out->id)
		return 0;
	*out = *rec;
	out->suite = strdup(rec->suite);
	out->name = strdup(rec->name);
	out->result = strdup(rec->result);
	out->units = rec->units ? strdup(rec->units) : NULL;
	out->extra = rec->extra ? strdup(rec->extra) : NULL;
	return 0;
}

TEST(test_store__result_texts)
{
	struct store *st = open_new("result-texts.db");
	struct result_record in = {
		.suite = "kunit", .name = "example.example_simple_test", .result = "skip",
		.units = "ms", .extra = "{\"a\":[1,2]}",
	}, out = { 0 };

	CHECK(st);
	in.job_id = add_job(st, "t", 50);
	CHECK(store_result_add(st, &in) == 0);
	CHECK(store_result_list(st, in.job_id, keep_first_result, &out) == 0);
	CHECK_STR(out.suite, "kunit");
	CHECK_STR(out.name, "example.example_simple_test");
	CHECK_STR(out.result, "skip");
	CHECK_STR(out.units, "ms");
	CHECK_STR(out.extra, "{\"a\":[1,2]}");
	result_record_release(&out);
	in.result = NULL;
	CHECK(store_result_add(st, &in) == -EINVAL);
	store_close(st);
}

TEST(test_store__finish_counts)
{
	struct store *st = open_new("counts.db");
	struct job_record rec;
	int64_t job;
	int i;

	CHECK(st);
	job = add_job(st, "counted", 50);
	CHECK(store_job_start(st, job, "q", 1) == 0);
	for (i = 0; i < 3; i++)
		CHECK(add_result(st, job, "p", "pass") == 0);
	for (i = 0; i < 2; i++)
		CHECK(add_result(st, job, "f", "fail") == 0);
	CHECK(add_result(st, job, "s", "skip") == 0);
	CHECK(add_result(st, job, "u", "unknown") == 0);
	CHECK(add_result(st, job, "x", "xfail") == 0);
	CHECK(store_job_finish(st, job, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL, 9) == 0);
	CHECK(store_job_get(st, job, &rec) == 0);
	CHECK_INT(rec.results_pass, ==, 3);
	CHECK_INT(rec.results_fail, ==, 2);
	CHECK_INT(rec.results_skip, ==, 1);
	CHECK_INT(rec.results_unknown, ==, 2);
	job_record_release(&rec);

	/* a requeue drops the abandoned attempt's results and counts */
	CHECK(store_job_requeue(st, job, false, "infra") == 0);
	CHECK(store_job_get(st, job, &rec) == 0);
	CHECK_INT(rec.results_pass + rec.results_fail + rec.results_unknown, ==, 0);
	job_record_release(&rec);
	CHECK(add_result(st, job, "p", "pass") == 0);
	CHECK(store_job_finish(st, job, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL, 10) == 0);
	CHECK(store_job_get(st, job, &rec) == 0);
	CHECK_INT(rec.results_pass, ==, 1);
	CHECK_INT(rec.results_fail, ==, 0);
	job_record_release(&rec);
	store_close(st);
}

struct seen_events {
	int64_t seq[8];
	char kind[8][16];
	int n;
};

static int seen_event(const struct event_record *rec, void *ud)
{
	struct seen_events *s = ud;

	if (s->n < 8) {
		s->seq[s->n] = rec->seq;
		snprintf(s->kind[s->n], sizeof(s->kind[0]), "%s", rec->kind);
	}
	s->n++;
	return 0;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

TEST(test_store__events)
{
	struct store *st = open_new("events.db");
	struct seen_events s = { 0 };
	int64_t a, b, seq;

	CHECK(st);
	a = add_job(st, "a", 50);
	b = add_job(st, "b", 50);
	CHECK(store_event_add(st, a, 1, "queued", "{}", &seq) == 0);
	CHECK_INT(seq, ==, 1);
	CHECK(store_event_add(st, a, 2, "started", "{\"device\":\"q\"}", &seq) == 0);
	CHECK_INT(seq, ==, 2);
	CHECK(store_event_add(st, b, 3, "queued", NULL, &seq) == 0);
	CHECK_INT(seq, ==, 1);
	CHECK(store_event_add(st, a, 4, "finished", "{}", &seq) == 0);
	CHECK_INT(seq, ==, 3);
	CHECK(store_event_add(st, b, 5, "started", NULL, NULL) == 0);
	CHECK(store_event_add(st, a + 100, 6, "queued", NULL, &seq) == -ENOENT);
	CHECK(store_event_add(st, a, 6, NULL, NULL, &seq) == -EINVAL);

	CHECK(store_event_list(st, a, 0, seen_event, &s) == 0);
	CHECK_INT(s.n, ==, 3);
	CHECK(s.seq[0] == 1 && s.seq[1] == 2 && s.seq[2] == 3);
	CHECK_STR(s.kind[2], "finished");
	memset(&s, 0, sizeof(s));
	CHECK(store_event_list(st, a, 1, seen_event, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK_INT(s.seq[0], ==, 2);
	memset(&s, 0, sizeof(s));
	CHECK(store_event_list(st, b, 0, seen_event, &s) == 0);
	CHECK_INT(s.n, ==, 2);
	CHECK(s.seq[0] == 1 && s.seq[1] == 2);
	store_close(st);
}

TEST(test_store__events_bulk)
{
	struct store *st = open_new("events-bulk.db");
	int64_t job, seq = 0;
	double t0, t1;
	int i, r = 0;

	CHECK(st);
	job = add_job(st, "chatty", 50);
	t0 = now_sec();
	CHECK(store_begin(st) == 0);
	for (i = 0; i < EVENTS_BENCH && !r; i++)
		r = store_event_add(st, job, (uint64_t)i, "phase", "{\"line\":1}", &seq);
	CHECK(store_commit(st) == 0);
	t1 = now_sec();
	CHECK_INT(r, ==, 0);
	CHECK_INT(seq, ==, EVENTS_BENCH);
	printf("# %d event inserts in one transaction: %.1f ms\n", EVENTS_BENCH,
	       (t1 - t0) * 1000);
	store_close(st);
}

TEST(test_store__transactions)
{
	struct store *st = open_new("txn.db");
	int64_t n;

	CHECK(st);
	CHECK(store_commit(st) == -EINVAL);
	CHECK(store_begin(st) == 0);
	CHECK(store_begin(st) == 0);
	CHECK(add_job(st, "inner", 50) > 0);
	CHECK(store_commit(st) == 0);
	CHECK(add_job(st, "outer", 50) > 0);
	/* requeue's savepoint nests inside the open transaction */
	CHECK(store_job_requeue(st, 1, false, NULL) == 0);
	CHECK(store_job_requeue(st, 99, false, NULL) == -ENOENT);
	CHECK(store_commit(st) == 0);
	CHECK(store_commit(st) == -EINVAL);
	CHECK(store_job_count(st, JOB_STATE_QUEUED, &n) == 0);
	CHECK_INT(n, ==, 2);
	store_close(st);
}

TEST(test_store__reopen)
{
	struct store *st = open_new("reopen.db");
	struct device_record dev = { .name = "bbb-01", .state = DEVICE_STATE_MAINTENANCE };
	struct seen_events ev = { 0 };
	struct seen_results res = { 0 };
	struct job_record rec;
	int64_t job, seq;

	CHECK(st);
	job = add_job(st, "kept", 60);
	CHECK(store_job_start(st, job, "bbb-01", 5) == 0);
	CHECK(store_device_put(st, &dev) == 0);
	CHECK(add_result(st, job, "boot", "pass") == 0);
	CHECK(store_event_add(st, job, 1, "started", NULL, &seq) == 0);
	/* left open: close commits it */
	CHECK(store_begin(st) == 0);
	CHECK(store_event_add(st, job, 2, "phase", NULL, &seq) == 0);
	st = store_close(st);

	CHECK(open_at(state_dir("reopen.db"), &st) == 0);
	CHECK(store_job_get(st, job, &rec) == 0);
	CHECK_STR(rec.name, "kept");
	CHECK_INT(rec.state, ==, JOB_STATE_RUNNING);
	CHECK_STR(rec.device, "bbb-01");
	job_record_release(&rec);
	CHECK(store_device_get(st, "bbb-01", &dev) == 0);
	CHECK_INT(dev.state, ==, DEVICE_STATE_MAINTENANCE);
	device_record_release(&dev);
	CHECK(store_result_list(st, job, seen_result, &res) == 0);
	CHECK_INT(res.n, ==, 1);
	seen_results_release(&res);
	CHECK(store_event_list(st, job, 0, seen_event, &ev) == 0);
	CHECK_INT(ev.n, ==, 2);
	/* numbering continues after a restart */
	CHECK(store_event_add(st, job, 3, "finished", NULL, &seq) == 0);
	CHECK_INT(seq, ==, 3);
	store_close(st);
}

/* A child writes, leaves a transaction open and is SIGKILLed; committed data survives. */
TEST(test_store__sigkill)
{
	const char *dir = state_dir("killed.db");
	struct job_record rec;
	struct store *st;
	int64_t n;
	pid_t pid;
	int status;

	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (open_at(dir, &st) < 0 || add_job(st, "committed", 50) != 1 ||
		    store_begin(st) < 0 || add_job(st, "uncommitted", 50) != 2)
			_exit(1);
		kill(getpid(), SIGKILL);
		_exit(2);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(open_at(dir, &st) == 0);
	CHECK(store_job_count(st, JOB_STATE_QUEUED, &n) == 0);
	CHECK_INT(n, ==, 1);
	CHECK(store_job_get(st, 1, &rec) == 0);
	CHECK_STR(rec.name, "committed");
	job_record_release(&rec);
	CHECK(store_job_get(st, 2, &rec) == -ENOENT);
	store_close(st);
}

/* Retention: a job's log and history go, the job stays and says when (both drivers). */
TEST(test_store__prune)
{
	struct store *st = open_new("prune.db");
	struct seen_results r = { 0 };
	struct seen_events s = { 0 };
	struct job_record rec = { 0 };
	int64_t a, b;

	CHECK(st);
	a = add_job(st, "a", 50);
	b = add_job(st, "b", 50);
	CHECK(add_result(st, a, "t1", "pass") == 0);
	CHECK(add_result(st, b, "t2", "pass") == 0);
	CHECK(store_event_add(st, a, 1, "queued", "{}", NULL) == 0);
	CHECK(store_event_add(st, b, 2, "queued", "{}", NULL) == 0);
	CHECK(store_job_prune(st, a, 0, 0) == -EINVAL);
	CHECK(store_job_prune(st, a, 100, 0) == 0);
	CHECK(store_job_get(st, a, &rec) == 0);
	CHECK_INT(rec.log_removed, ==, 100);
	CHECK_INT(rec.history_removed, ==, 0);
	job_record_release(&rec);
	CHECK(store_result_list(st, a, seen_result, &r) == 0);
	CHECK_INT(r.n, ==, 1);
	seen_results_release(&r);
	memset(&r, 0, sizeof(r));

	CHECK(store_job_prune(st, a, 300, 200) == 0);
	CHECK(store_job_get(st, a, &rec) == 0);
	CHECK_INT(rec.log_removed, ==, 100);	/* the first removal stays */
	CHECK_INT(rec.history_removed, ==, 200);
	CHECK_STR(rec.name, "a");
	job_record_release(&rec);
	CHECK(store_result_list(st, a, seen_result, &r) == 0);
	CHECK_INT(r.n, ==, 0);
	CHECK(store_event_list(st, a, 0, seen_event, &s) == 0);
	CHECK_INT(s.n, ==, 0);
	CHECK(store_result_list(st, b, seen_result, &r) == 0);
	CHECK_INT(r.n, ==, 1);
	seen_results_release(&r);
	memset(&s, 0, sizeof(s));
	CHECK(store_event_list(st, b, 0, seen_event, &s) == 0);
	CHECK_INT(s.n, ==, 1);
	CHECK(store_job_get(st, b, &rec) == 0);
	CHECK_INT(rec.log_removed, ==, 0);
	job_record_release(&rec);
	if (!pg_test_base())	/* PostgreSQL writes behind: a missing job is not known at once */
		CHECK(store_job_prune(st, b + 1000, 1, 1) == -ENOENT);
	store_close(st);
}

/* What store_delivered_list() passed: "job backend receiver seq;" each, jobs named a and b. */
struct seen_deliveries {
	int64_t a, b;
	char text[256];
};

static int seen_delivery(const struct delivery_record *rec, void *ud)
{
	struct seen_deliveries *s = ud;
	size_t n = strlen(s->text);
	const char *job = rec->job_id == s->a ? "a" : rec->job_id == s->b ? "b" : "?";

	snprintf(s->text + n, sizeof(s->text) - n, "%s %s %s %lld;", job, rec->backend,
		 rec->receiver, (long long)rec->seq);
	return 0;
}

/* How far a backend's receiver acknowledged a job's events: per pair, never back, listed, pruned. */
TEST(test_store__deliveries)
{
	struct store *st = open_new("deliveries.db");
	struct seen_deliveries seen = { 0 };
	int64_t a, b, seq = -1;

	CHECK(st);
	a = seen.a = add_job(st, "a", 50);
	b = seen.b = add_job(st, "b", 50);
	CHECK(store_delivered_get(st, "http", "http://r/1", a, &seq) == 0);
	CHECK_INT(seq, ==, 0);
	CHECK(store_delivered_set(st, "http", "http://r/1", a, 3) == 0);
	CHECK(store_delivered_set(st, "http", "http://r/1", a, 2) == 0);	/* never back */
	CHECK(store_delivered_set(st, "http", "http://r/2", a, 7) == 0);
	CHECK(store_delivered_set(st, "other", "http://r/1", b, 5) == 0);
	CHECK(store_delivered_set(st, "http", "http://r/1", b + 1000, 5) == 0);	/* no job */
	CHECK(store_delivered_set(st, NULL, "http://r/1", a, 5) == -EINVAL);
	CHECK(store_delivered_get(st, "http", "http://r/1", a, &seq) == 0);
	CHECK_INT(seq, ==, 3);
	CHECK(store_delivered_get(st, "http", "http://r/2", a, &seq) == 0);
	CHECK_INT(seq, ==, 7);
	CHECK(store_delivered_get(st, "http", "http://r/1", b, &seq) == 0);
	CHECK_INT(seq, ==, 0);
	CHECK(store_delivered_get(st, "other", "http://r/1", b, &seq) == 0);
	CHECK_INT(seq, ==, 5);
	CHECK(store_delivered_set(st, "http", "http://r/1", a, 4) == 0);
	CHECK(store_delivered_get(st, "http", "http://r/1", a, &seq) == 0);
	CHECK_INT(seq, ==, 4);
	CHECK(store_delivered_list(st, seen_delivery, &seen) == 0);	/* by job, backend, receiver */
	CHECK_STR(seen.text, "a http http://r/1 4;a http http://r/2 7;b other http://r/1 5;");
	CHECK(store_job_prune(st, a, 0, 100) == 0);	/* its history goes: positions too */
	CHECK(store_delivered_get(st, "http", "http://r/1", a, &seq) == 0);
	CHECK_INT(seq, ==, 0);
	CHECK(store_delivered_get(st, "other", "http://r/1", b, &seq) == 0);
	CHECK_INT(seq, ==, 5);
	seen.text[0] = '\0';
	CHECK(store_delivered_list(st, seen_delivery, &seen) == 0);
	CHECK_STR(seen.text, "b other http://r/1 5;");
	store_close(st);
}

TEST_LIST(test_store__null_safe, test_store__drivers, test_store__job_insert_get,
	  test_store__job_list, test_store__job_filter_count, test_store__queue_order, test_store__still_queued,
	  test_store__callback_reentry_and_stop, test_store__lifecycle, test_store__running_and_counts, test_store__devices,
	  test_store__results, test_store__result_texts, test_store__finish_counts,
	  test_store__events, test_store__events_bulk, test_store__transactions,
	  test_store__reopen, test_store__sigkill, test_store__prune, test_store__deliveries);
