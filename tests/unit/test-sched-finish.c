// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-sched-finish.c -- a job's end the store refused is kept and tried
 * again (sched/sched_finish.c): recorded and announced once, or dropped when
 * the job was finished meanwhile; on PostgreSQL in labd's loop, each try
 * reads the jobs without waiting for the database (`store: waited ... to
 * read a job` is never logged).  Runs when LABD_TEST_PG is set
 * (tests/t1060-store-pg.sh): SQLite refuses a write only when its disk is
 * full; PostgreSQL refuses one made in a run whose reads went to the
 * database, which is how the end is refused here.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "journal/events.h"
#include "sched/sched_internal.h"
#include "store/store.h"
#include "storebed.h"
#include "tap.h"

/* A scheduler with only what sched_finish.c uses: a loop, a store, the events. */
struct bed {
	struct loop *loop;
	struct store *st;
	struct events *ev;
	struct sched *s;
	char dir[160];		/* its state directory */
};

static int bed_open(struct bed *b, const char *name)
{
	struct store_params p = { .state_dir = state_dir(name) };
	struct diag diag = DIAG_INIT;
	config_t cfg;
	int r, i;

	snprintf(b->dir, sizeof(b->dir), "%s", p.state_dir);	/* state_dir(): a static buffer */
	if (loop_new(&b->loop) < 0)
		return -ENOMEM;
	p.loop = b->loop;
	p.settings = pg_test_conf(p.state_dir, &cfg);
	r = store_open(&p, &b->st, &diag);
	config_destroy(&cfg);
	diag_release(&diag);
	for (i = 0; !r && i < 1000 && !store_available(b->st); i++)
		loop_run_once(b->loop, 10000);	/* the journal in step */
	if (!r)
		r = events_new(b->st, &b->ev);
	if (!r && !(b->s = calloc(1, sizeof(*b->s))))
		r = -ENOMEM;
	if (r < 0)
		return r;
	b->s->deps.run = (struct run_deps){ .loop = b->loop, .store = b->st, .events = b->ev };
	return sched_keep_init(b->s);
}

static void bed_close(struct bed *b)
{
	if (b->s) {
		sched_finish_free(b->s);
		sched_keep_release(b->s);
		free(b->s);
	}
	events_free(b->ev);
	store_close(b->st);
	loop_free(b->loop);
}

static void on_answered(int err, void *userdata)
{
	(*(int *)userdata)++;
}

/* stderr (labd's log) into @path until capture_end(); returns the saved stderr. */
static int capture_start(const char *path)
{
	int saved, fd;

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0 || dup2(fd, STDERR_FILENO) < 0)
		abort();
	close(fd);
	return saved;
}

/* stderr back; what was logged meanwhile, in a static buffer. */
static const char *capture_end(int saved, const char *path)
{
	static char buf[64 * 1024];
	ssize_t n;
	int fd;

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	buf[n < 0 ? 0 : n] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/*
 * Two ends refused (written in a run whose read went to the database), one
 * of the jobs then finished another way: the next try records the first,
 * announces it once, and drops the second unannounced, reading both jobs in
 * a read context: no read of a job waits.
 */
TEST(test_finish__retry_reads_without_waiting)
{
	struct bed b = { 0 };
	struct job_record rec = { 0 };
	int64_t other, id1, id2;
	int answered = 0, saved, i;
	char sql[160];
	const char *log, *path;

	if (!pg_test_base())
		TEST_SKIP("SQLite refuses an end only when its disk is full");
	CHECK(bed_open(&b, "retry") == 0);
	other = add_job(b.st, "read first", 50);
	id1 = add_job(b.st, "refused", 50);
	id2 = add_job(b.st, "finished meanwhile", 50);
	CHECK(other > 0 && id1 > 0 && id2 > 0);
	path = tmp_path("retry.log");
	saved = capture_start(path);
	log_set_level(LOG_LEVEL_DEBUG);
	/* a run whose read went to the database: the store refuses its writes */
	CHECK(store_read_begin(b.st, on_answered, &answered) == 0);
	CHECK(store_job_get(b.st, other, &rec) == -EINPROGRESS);
	sched_finish_job(b.s, id1, JOB_HEALTH_CANCELED, ERROR_NONE, "why", NULL, -1);
	sched_finish_job(b.s, id2, JOB_HEALTH_CANCELED, ERROR_NONE, "why", NULL, -1);
	CHECK(store_read_end(b.st) == 1);
	store_forget(b.st, &answered);
	CHECK(b.s->ends != NULL);
	CHECK(store_job_finish(b.st, id2, JOB_HEALTH_COMPLETE, ERROR_NONE, NULL, 2000) == 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE kind = 'finished' AND"
		 " job_id = %lld", (long long)id1);
	/* the tries, every SCHED_FINISH_RETRY, until the first end is in and both are gone */
	for (i = 0; i < 3000 && (b.s->ends || pg_test_count(b.dir, sql) < 1); i++)
		loop_run_once(b.loop, 10000);
	log_set_level(LOG_LEVEL_INFO);
	log = capture_end(saved, path);
	printf("%s", log[0] ? "# what was logged:\n" : "");
	for (const char *p = log; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		printf("#   %.*s\n", (int)(strchrnul(p, '\n') - p), p);
	CHECK(b.s->ends == NULL);
	CHECK_INT(pg_test_count(b.dir, sql), ==, 1);	/* recorded and announced once */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM jobs WHERE id = %lld AND"
		 " health = 'canceled' AND state = 'finished'", (long long)id1);
	CHECK_INT(pg_test_count(b.dir, sql), ==, 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE kind = 'finished' AND"
		 " job_id = %lld", (long long)id2);
	CHECK_INT(pg_test_count(b.dir, sql), ==, 0);	/* finished meanwhile: not announced */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM jobs WHERE id = %lld AND"
		 " health = 'complete'", (long long)id2);
	CHECK_INT(pg_test_count(b.dir, sql), ==, 1);	/* nor finished again */
	CHECK_CONTAINS(log, "cannot record its end");
	CHECK(strstr(log, "its end is recorded now"));
	CHECK(!strstr(log, "to read a job"));	/* "store: waited N us for the database to ..." */
	bed_close(&b);
}

TEST_LIST(test_finish__retry_reads_without_waiting);
