// SPDX-License-Identifier: GPL-2.0-or-later
/* test-retention.c -- labd.conf's retention group, and a run at a fake time: age, cap, compression */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "core/diag.h"
#include "journal/joblog.h"
#include "journal/retention.h"
#include "storebed.h"
#include "tap.h"

#define DAY (86400ULL * 1000000)
#define T0 (1700000000ULL * 1000000)	/* the jobs end on day 0, 1, 2 ... */

static int parse(const char *text, struct retention_params *p, struct diag *diag)
{
	config_t cfg;
	int r;

	config_init(&cfg);
	if (config_read_string(&cfg, text) != CONFIG_TRUE)
		abort();
	r = retention_parse(config_setting_get_member(config_root_setting(&cfg), "retention"), p,
			    diag);
	config_destroy(&cfg);
	return r;
}

TEST(test_retention__parse)
{
	struct retention_params p;
	struct diag diag = DIAG_INIT;

	CHECK(retention_parse(NULL, &p, &diag) == 0);
	CHECK(p.log_days == -1 && p.history_days == -1 && !p.max_size && p.compress);
	CHECK(parse("retention = { log_days = 0; history_days = 30; max_state_size = \"2G\";"
		    " compress_level = 9; interval = 3600; };", &p, &diag) == 0);
	CHECK_INT(p.log_days, ==, 0);
	CHECK_INT(p.history_days, ==, 30);
	CHECK_INT(p.max_size, ==, 2ULL << 30);
	CHECK_INT(p.level, ==, 9);
	CHECK_INT(p.interval, ==, 3600ULL * 1000000);
	CHECK(parse("retention = { max_state_size = 5000000000L; };", &p, &diag) == 0);
	CHECK_INT(p.max_size, ==, 5000000000LL);
	CHECK(parse("retention = { log_days = -2; max_state_size = \"1X\"; colour = 1;"
		    " compress_level = 30; interval = 0.1; };", &p, &diag) == -EINVAL);
	CHECK_INT(diag.n, ==, 4);	/* interval is said once the others are right */
	diag_release(&diag);
}

/* A finished job that ended @days after T0 with a log of @kib KiB; its id. */
static int64_t old_job(struct store *st, const char *dir, int days, int kib)
{
	struct job_record rec = { .name = "old", .device_type = "t", .state = JOB_STATE_QUEUED };
	struct joblog *jl;
	char *jdir, line[1024];
	int i;

	if (store_job_insert(st, &rec) < 0 ||
	    store_job_finish(st, rec.id, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL,
			     T0 + (uint64_t)days * DAY) < 0 ||
	    store_event_add(st, rec.id, T0, "finished", "{}", NULL) < 0)
		return -1;
	jdir = joblog_job_dir(dir, rec.id);
	if (!jdir || joblog_open(jdir, &jl) < 0)
		return -1;
	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	for (i = 0; i < kib; i++)
		joblog_console(jl, T0, line, sizeof(line));
	joblog_close(jl);
	free(jdir);
	return rec.id;
}

static bool has(const char *dir, int64_t id, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/jobs/%lld/%s", dir, (long long)id, name);
	return access(path, F_OK) == 0;
}

static struct retention *gc_new(struct store *st, const char *dir, const char *conf)
{
	struct retention_deps d = { .store = st, .state_dir = dir };
	struct retention_params p;
	struct diag diag = DIAG_INIT;
	struct retention *g = NULL;

	if (parse(conf, &p, &diag) < 0 || retention_new(&d, &p, &g) < 0)
		g = NULL;
	diag_release(&diag);
	return g;
}

/* Ten days after T0 (a fake clock): what is older than its days goes, the rest is compressed. */
TEST(test_retention__by_age_at_a_fake_time)
{
	const char *dir = state_dir("age");
	struct retention_stats s;
	struct job_record rec = { 0 };
	struct store *st = NULL;
	struct retention *g;
	int64_t a, b, c;

	CHECK(open_at(dir, &st) == 0);
	a = old_job(st, dir, 0, 64);
	b = old_job(st, dir, 5, 64);
	c = old_job(st, dir, 9, 64);
	CHECK(a > 0 && b > 0 && c > 0);
	g = gc_new(st, dir, "retention = { log_days = 7; history_days = 3; };");
	CHECK(g);
	CHECK(retention_gc(g, T0 + 10 * DAY, &s) == 0);
	CHECK_INT(s.jobs, ==, 3);
	CHECK_INT(s.logs_removed, ==, 1);	/* a: 10 days old */
	CHECK_INT(s.histories_removed, ==, 2);	/* a and b */
	CHECK_INT(s.compressed, ==, 6);		/* b and c: console.log, .idx, labd.log */
	CHECK(!has(dir, a, "console.log") && !has(dir, a, "console.log.zst"));
	CHECK(has(dir, b, "console.log.zst") && !has(dir, b, "console.log"));
	CHECK(store_job_get(st, a, &rec) == 0);
	CHECK_INT(rec.log_removed, ==, T0 + 10 * DAY);
	CHECK_INT(rec.history_removed, ==, T0 + 10 * DAY);
	job_record_release(&rec);
	CHECK(store_job_get(st, c, &rec) == 0);
	CHECK(!rec.log_removed && !rec.history_removed);
	job_record_release(&rec);
	CHECK(retention_gc(g, T0 + 10 * DAY, &s) == 0);	/* again: nothing left to do */
	CHECK(!s.logs_removed && !s.histories_removed && !s.compressed);
	retention_free(g);
	store_close(st);
}

TEST(test_retention__size_cap_oldest_first)
{
	const char *dir = state_dir("cap");
	struct retention_stats s;
	struct store *st = NULL;
	struct retention *g;
	char conf[160];
	int64_t id[4];
	int i;

	CHECK(open_at(dir, &st) == 0);
	for (i = 0; i < 4; i++)
		CHECK((id[i] = old_job(st, dir, 3 - i, 256)) > 0);	/* ended in reverse: ids count */
	g = gc_new(st, dir, "retention = { compress = false; };");
	CHECK(g);
	CHECK(retention_gc(g, T0 + 10 * DAY, &s) == 0);
	retention_free(g);
	/* room for the other files and two logs and a half */
	snprintf(conf, sizeof(conf), "retention = { compress = false; max_state_size = %llu; };",
		 (unsigned long long)(s.size - 4 * 256 * 1024 + 5 * 256 * 1024 / 2));
	g = gc_new(st, dir, conf);
	CHECK(g);
	CHECK(retention_gc(g, T0 + 10 * DAY, &s) == 0);
	CHECK_INT(s.capped, ==, 2);
	CHECK(!has(dir, id[0], "console.log") && !has(dir, id[1], "console.log"));	/* lowest ids */
	CHECK(has(dir, id[2], "console.log") && has(dir, id[3], "console.log"));
	retention_free(g);
	store_close(st);
}

TEST_LIST(test_retention__parse, test_retention__by_age_at_a_fake_time,
	  test_retention__size_cap_oldest_first);
