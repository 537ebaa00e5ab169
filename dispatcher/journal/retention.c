// SPDX-License-Identifier: GPL-2.0-or-later
/* retention.c -- compress, then remove, finished jobs' logs and history, in small steps */
#include "journal/retention.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "journal/logzst.h"
#include "store/store.h"

#define BATCH 64			/* finished jobs read from the store at once */
#define FIRST_RUN_MAX (60 * USEC_PER_SEC)	/* after start */
#define USEC_PER_DAY (86400ULL * USEC_PER_SEC)
#define MAX_ENDED 4096			/* jobs waiting for their compression */

static const char *const log_files[] = { JOBLOG_CONSOLE, JOBLOG_INDEX, JOBLOG_LABD };
#define N_LOG_FILES (sizeof(log_files) / sizeof(log_files[0]))

/* What a run needs of a finished job. */
struct brief {
	int64_t id;
	uint64_t ended;
	uint64_t log_removed;
	uint64_t history_removed;
};

enum phase { PHASE_IDLE, PHASE_SCAN, PHASE_CAP };

struct retention {
	struct retention_deps d;
	char *state_dir;
	struct retention_params p;
	struct loop_source *timer;	/* the next run */
	struct loop_source *work;	/* the next step, later */
	struct loop_source *now_src;	/* the next step, at the next loop turn (a defer) */
	struct events_listener *listener;
	/* jobs that ended, compressed RETENTION_COMPRESS_DELAY later (monotonic) */
	int64_t ended[MAX_ENDED];
	uint64_t ended_at[MAX_ENDED];
	size_t n_ended;
	/* the compression in progress: file zfile of job zjob */
	struct logzst_writer *zw;
	int64_t zjob;
	size_t zfile;
	struct loop_source *syncing;	/* the child fsync()ing zw's file */
	/* the run in progress */
	enum phase phase;
	uint64_t now;		/* realtime its removals are dated */
	uint64_t started;	/* monotonic */
	int64_t cursor;		/* the last job id handled */
	struct brief batch[BATCH];
	size_t n_batch, i_batch;
	bool batch_end;		/* the store has no more */
	bool reading;		/* the next batch is being read (store_read_later()) */
	int batch_err;		/* how reading it failed */
	struct retention_stats cur, last;
	struct retention_stats total;	/* every run since start added up (size: the last) */
};

/* ---- labd.conf ---- */

static const char *const retention_keys[] = {
	"log_days", "history_days", "max_state_size", "compress", "compress_level", "interval",
	NULL
};

int retention_parse(const config_setting_t *settings, struct retention_params *ret,
		    struct diag *diag)
{
	struct retention_params p = { -1, -1, 0, true, LOGZST_DEFAULT_LEVEL,
				      RETENTION_DEFAULT_INTERVAL };
	long long logs = -1, history = -1, level = p.level;
	size_t n0 = diag->n;

	if (settings) {
		if (!config_setting_is_group(settings))
			return diag_add(diag, cfg_file(settings), cfg_line(settings),
					"'retention' must be a group, not %s", cfg_type_name(settings));
		cfg_check_keys(settings, retention_keys, diag);
		cfg_get_int(settings, "log_days", false, 0, 100000, &logs, diag);
		cfg_get_int(settings, "history_days", false, 0, 100000, &history, diag);
		cfg_get_bool(settings, "compress", false, &p.compress, diag);
		cfg_get_int(settings, "compress_level", false, 1, 19, &level, diag);
		cfg_get_duration(settings, "interval", false, &p.interval, diag);
		cfg_get_size(settings, "max_state_size", &p.max_size, diag);
		if (p.interval < USEC_PER_SEC && diag->n == n0)
			diag_add(diag, cfg_file(settings), cfg_line(settings),
				 "retention 'interval' must be at least a second");
	}
	if (diag->n != n0)
		return -EINVAL;
	p.log_days = logs;
	p.history_days = history;
	p.level = (int)level;
	*ret = p;
	return 0;
}

/* ---- files ---- */

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static bool is_log_file(const char *name)
{
	size_t i, n;

	for (i = 0; i < N_LOG_FILES; i++) {
		n = strlen(log_files[i]);
		/* NAME, NAME.zst, NAME.zst.tmp.PID, and a board log's NAME.1 */
		if (!strncmp(name, log_files[i], n) && (!name[n] || name[n] == '.'))
			return true;
	}
	return false;
}

/*
 * Bytes of the regular files in @dir (not below) that @pick accepts (NULL:
 * all), unlinked when @remove; 0 when @dir is not there.
 */
static uint64_t dir_files(const char *dir, bool (*pick)(const char *name), bool remove)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	uint64_t size = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if ((pick && !pick(e->d_name)) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!remove || unlinkat(dirfd(d), e->d_name, 0) == 0)
			size += (uint64_t)st.st_size;
	}
	closedir(d);
	return size;
}

static uint64_t dir_size(const char *dir)
{
	return dir_files(dir, NULL, false);
}

/* Unlink the log files of @dir; their bytes. */
static uint64_t remove_log(const char *dir)
{
	return dir_files(dir, is_log_file, true);
}

static bool has_plain_log(const char *dir)
{
	char path[4096];
	size_t i;

	for (i = 0; i < N_LOG_FILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, log_files[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* The files at the top of the state directory: the database, its journal. */
static uint64_t top_size(const char *state_dir)
{
	return dir_size(state_dir);
}

/* ---- compression, a frame per step ---- */

static void compress_stop(struct retention *g)
{
	g->syncing = loop_source_free(g->syncing);	/* kills a child still syncing */
	g->zw = logzst_writer_free(g->zw);
	g->zjob = 0;
}

static void compress_start(struct retention *g, int64_t id)
{
	compress_stop(g);
	g->zjob = id;
	g->zfile = 0;
}

/* The next file of job zjob that is not compressed yet, opened: 0, or 1 when none is left. */
static int compress_next_file(struct retention *g, const char *dir)
{
	char path[4096];
	int r;

	for (; g->zfile < N_LOG_FILES; g->zfile++) {
		snprintf(path, sizeof(path), "%s/%s", dir, log_files[g->zfile]);
		r = logzst_writer_new(path, g->p.level, &g->zw);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			log_warning("retention: cannot compress '%s': %s", path, strerror(-r));
		return r < 0 ? 1 : 0;
	}
	return 1;
}

static void schedule(struct retention *g);

/* The compressed file is in place of the original (@r 0), or given up; the next file. */
static void compress_done(struct retention *g, int r)
{
	if (r < 0)
		log_warning("retention: cannot compress the log of job %lld: %s",
			    (long long)g->zjob, strerror(-r));
	else {
		g->cur.compressed++;
		g->cur.bytes_in += logzst_writer_in(g->zw);
		g->cur.bytes_out += logzst_writer_out(g->zw);
		if (g->phase == PHASE_SCAN && g->cur.size > logzst_writer_in(g->zw))
			g->cur.size -= logzst_writer_in(g->zw) - logzst_writer_out(g->zw);
	}
	g->zw = logzst_writer_free(g->zw);
	g->zfile++;
}

static int on_synced(struct loop_source *s, const siginfo_t *si, void *ud)
{
	struct retention *g = ud;
	bool ok = si->si_code == CLD_EXITED && si->si_status == 0;

	g->syncing = loop_source_free(g->syncing);
	if (ok)
		logzst_writer_committed(g->zw);
	compress_done(g, ok ? 0 : -EIO);
	schedule(g);
	return 0;
}

/*
 * The complete file to disk and in place of the original: an fsync() may
 * wait for the disk long (it flushes what others wrote too), and freeing a
 * big original takes 40 ms per 50 MB, so in the daemon a child process does
 * both, watched through its pidfd, and the loop goes on (1); without a loop
 * they are done here (0).  Or a negative errno.
 */
static int compress_sync(struct retention *g)
{
	pid_t pid;
	int r;

	if (!g->d.loop)
		return logzst_writer_commit(g->zw);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(logzst_writer_commit(g->zw) < 0);
	r = loop_add_child(g->d.loop, &g->syncing, pid, on_synced, g);
	if (r < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return r;
	}
	loop_source_set_description(g->syncing, "retention-commit");
	return 1;
}

/* One frame of the compression in progress. */
static void compress_step(struct retention *g)
{
	char *dir;
	int r;

	if (!g->zw) {
		dir = joblog_job_dir(g->state_dir, g->zjob);
		r = dir ? compress_next_file(g, dir) : 1;
		free(dir);
		if (r)
			compress_stop(g);
		return;
	}
	r = logzst_writer_step(g->zw);
	if (r == 0)
		return;	/* more frames */
	if (r == 1 && (r = compress_sync(g)) == 1)
		return;	/* the child syncs, on_synced() goes on */
	compress_done(g, r);
}

/* ---- a run ---- */

static int keep_brief(const struct job_record *rec, void *ud)
{
	struct retention *g = ud;
	struct brief *b;

	if (g->n_batch == BATCH)
		return 0;
	b = &g->batch[g->n_batch++];
	b->id = rec->id;
	b->ended = rec->ended;
	b->log_removed = rec->log_removed;
	b->history_removed = rec->history_removed;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct brief *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The next finished jobs after the cursor, lowest ids first, once the store answered. */
static void batch_read(void *userdata)
{
	struct retention *g = userdata;
	struct job_filter f = { .state = JOB_STATE_FINISHED, .after_id = g->cursor,
				.limit = BATCH };

	g->n_batch = g->i_batch = 0;
	g->batch_err = store_job_list(g->d.store, &f, keep_brief, g);
	if (store_read_pending(g->d.store) || g->batch_err < 0)
		return;
	qsort(g->batch, g->n_batch, sizeof(g->batch[0]), by_id);	/* drivers differ */
	g->batch_end = g->n_batch < BATCH;
}

static void schedule(struct retention *g);

/* The batch is in (or its read dropped): the run goes on. */
static void batch_read_done(void *userdata)
{
	struct retention *g = userdata;

	g->reading = false;
	if (g->work)
		schedule(g);
}

/*
 * Read the next batch without waiting in labd's loop (store_read_later()):
 * 0 once it is in, or while it is read (g->reading: the run waits for it).
 */
static int next_batch(struct retention *g)
{
	int r;

	g->reading = true;
	store_read_later(g->d.store, g, batch_read, batch_read_done, g);
	if (g->reading)
		return 0;
	r = g->batch_err;
	g->batch_err = 0;
	return r;
}

static bool older_than(const struct retention *g, uint64_t ended, int64_t days)
{
	return days >= 0 && ended + (uint64_t)days * USEC_PER_DAY <= g->now;
}

static int remove_job_log(struct retention *g, const struct brief *b, const char *dir,
			  uint64_t *size)
{
	uint64_t n;

	if (g->zjob == b->id)
		compress_stop(g);
	n = remove_log(dir);
	*size = *size > n ? *size - n : 0;
	return store_job_prune(g->d.store, b->id, g->now, 0);
}

/* Age-based removals of one job, its compression, its size. */
static int scan_job(struct retention *g, const struct brief *b)
{
	char *dir = joblog_job_dir(g->state_dir, b->id);
	uint64_t size;
	int r = 0;

	if (!dir)
		return -ENOMEM;
	g->cur.jobs++;
	size = dir_size(dir);
	if (!b->history_removed && older_than(g, b->ended, g->p.history_days)) {
		r = store_job_prune(g->d.store, b->id, 0, g->now);
		g->cur.histories_removed += r == 0;
	}
	/* several hosts (PostgreSQL): a log is the business of the host that has it */
	if (r < 0 || b->log_removed || access(dir, F_OK) < 0) {
	} else if (older_than(g, b->ended, g->p.log_days)) {
		r = remove_job_log(g, b, dir, &size);
		g->cur.logs_removed += r == 0;
	} else if (g->p.compress && b->ended + RETENTION_COMPRESS_DELAY <= g->now &&
		   has_plain_log(dir)) {
		compress_start(g, b->id);
	}
	g->cur.size += size;
	free(dir);
	return r;
}

/* Remove the log of one of the oldest jobs while the state directory is over its cap. */
static int cap_job(struct retention *g, const struct brief *b)
{
	char *dir;
	uint64_t size;
	int r;

	if (b->log_removed)
		return 0;
	dir = joblog_job_dir(g->state_dir, b->id);
	if (!dir)
		return -ENOMEM;
	size = dir_size(dir);
	r = size ? remove_job_log(g, b, dir, &g->cur.size) : 0;
	g->cur.capped += size && r == 0;
	free(dir);
	return r;
}

static void run_end(struct retention *g)
{
	g->cur.elapsed = mono_now() - g->started;
	g->last = g->cur;
	g->total.jobs += g->cur.jobs;
	g->total.compressed += g->cur.compressed;
	g->total.bytes_in += g->cur.bytes_in;
	g->total.bytes_out += g->cur.bytes_out;
	g->total.logs_removed += g->cur.logs_removed;
	g->total.histories_removed += g->cur.histories_removed;
	g->total.capped += g->cur.capped;
	g->total.size = g->cur.size;
	g->total.elapsed += g->cur.elapsed;
	g->phase = PHASE_IDLE;
	log_info("retention: %llu finished jobs: %llu log files compressed (%llu to %llu bytes), "
		 "%llu logs and %llu results and events removed by age, %llu logs for the size cap; "
		 "state directory %llu bytes; %.1f s",
		 (unsigned long long)g->last.jobs, (unsigned long long)g->last.compressed,
		 (unsigned long long)g->last.bytes_in, (unsigned long long)g->last.bytes_out,
		 (unsigned long long)g->last.logs_removed,
		 (unsigned long long)g->last.histories_removed, (unsigned long long)g->last.capped,
		 (unsigned long long)g->last.size, (double)g->last.elapsed / USEC_PER_SEC);
}

/* The end of a walk: the cap's walk next, or the end of the run. */
static void walk_end(struct retention *g)
{
	g->cursor = 0;
	g->batch_end = false;
	if (g->phase == PHASE_SCAN && g->p.max_size && g->cur.size > g->p.max_size)
		g->phase = PHASE_CAP;
	else
		run_end(g);
}

/* One job or one batch of the run. */
static int run_step(struct retention *g)
{
	const struct brief *b;
	int r = g->batch_err;

	if (r < 0) {	/* the batch read while the loop went on failed */
		g->batch_err = 0;
		return r;
	}
	if (g->phase == PHASE_CAP && g->cur.size <= g->p.max_size) {
		run_end(g);
		return 0;
	}
	if (g->i_batch == g->n_batch) {
		if (g->batch_end) {
			walk_end(g);
			return 0;
		}
		return next_batch(g);
	}
	b = &g->batch[g->i_batch++];
	g->cursor = b->id;
	return g->phase == PHASE_SCAN ? scan_job(g, b) : cap_job(g, b);
}

static int run_begin(struct retention *g, uint64_t now)
{
	if (g->phase != PHASE_IDLE)
		return -EBUSY;
	memset(&g->cur, 0, sizeof(g->cur));
	g->cur.size = top_size(g->state_dir);
	g->phase = PHASE_SCAN;
	g->now = now;
	g->started = mono_now();
	g->cursor = 0;
	g->n_batch = g->i_batch = 0;
	g->batch_end = false;
	return 0;
}

/* ---- steps ---- */

/* Start the compression of the first ended job that waited long enough. */
static bool take_ended(struct retention *g, uint64_t mono)
{
	if (!g->n_ended || g->ended_at[0] + RETENTION_COMPRESS_DELAY > mono)
		return false;
	if (g->p.compress)
		compress_start(g, g->ended[0]);
	g->n_ended--;
	memmove(g->ended, g->ended + 1, g->n_ended * sizeof(g->ended[0]));
	memmove(g->ended_at, g->ended_at + 1, g->n_ended * sizeof(g->ended_at[0]));
	return true;
}

/* One piece of work: 0, 1 when there is none, or a negative errno. */
static int step_once(struct retention *g)
{
	int r;

	if (g->syncing)
		return 1;	/* on_synced() goes on */
	if (g->zjob) {
		compress_step(g);
		return 0;
	}
	if (take_ended(g, mono_now()))
		return 0;
	if (g->phase == PHASE_IDLE || g->reading)
		return 1;	/* nothing, or the run waits for its batch (batch_read_done()) */
	r = run_step(g);
	if (r < 0) {
		log_error("retention: the run stops: %s", strerror(-r));
		run_end(g);
	}
	return r;
}

int retention_step(struct retention *g, uint64_t now)
{
	uint64_t deadline = mono_now() + RETENTION_STEP_BUDGET;
	int r;

	if (g->phase != PHASE_IDLE)
		g->now = now;
	do
		r = step_once(g);
	while (r == 0 && mono_now() < deadline);
	return r;
}

int retention_gc(struct retention *g, uint64_t now, struct retention_stats *ret)
{
	int r = run_begin(g, now);

	while (r >= 0 && (g->phase != PHASE_IDLE || g->zjob)) {
		r = step_once(g);
		if (r > 0)
			r = 0;
	}
	if (ret)
		*ret = g->last;
	return r < 0 ? r : 0;
}

/* ---- in the daemon ---- */

/*
 * The next step: at the next loop turn while there is work (a defer: the
 * loop polls its fds between two, where a timer due now would run again in
 * the same turn), when the next ended job is due, or when the commit's
 * child exits (on_synced()).
 */
static void schedule(struct retention *g)
{
	loop_timer_set(g->work, USEC_INFINITY);
	if (g->syncing)
		return;
	if (g->zjob || (g->phase != PHASE_IDLE && !g->reading))
		loop_defer_again(g->now_src);
	else if (g->n_ended)
		loop_timer_set(g->work, g->ended_at[0] + RETENTION_COMPRESS_DELAY);
}

static void work(struct retention *g)
{
	retention_step(g, loop_realtime(g->d.loop));
	schedule(g);
}

static int on_work(struct loop_source *s, uint64_t now, void *ud)
{
	work(ud);
	return 0;
}

static int on_work_now(struct loop_source *s, void *ud)
{
	work(ud);
	return 0;
}

int retention_start(struct retention *g)
{
	int r = run_begin(g, g->d.loop ? loop_realtime(g->d.loop) : 0);

	if (!r && g->work)
		schedule(g);
	return r;
}

static int on_timer(struct loop_source *s, uint64_t now, void *ud)
{
	struct retention *g = ud;

	retention_start(g);
	return loop_timer_set_rel(s, g->p.interval);
}

static void on_event(const struct event *ev, void *ud)
{
	struct retention *g = ud;

	if (strcmp(ev->kind, "finished") || g->n_ended == MAX_ENDED)
		return;	/* a job not compressed now is at the next run */
	g->ended[g->n_ended] = ev->job_id;
	g->ended_at[g->n_ended++] = loop_now(g->d.loop);
	if (!loop_timer_is_armed(g->work) && !g->zjob && g->phase == PHASE_IDLE && !g->syncing)
		schedule(g);
}

static int attach(struct retention *g)
{
	uint64_t first = g->p.interval < FIRST_RUN_MAX ? g->p.interval : FIRST_RUN_MAX;
	int r;

	r = loop_add_timer(g->d.loop, &g->timer, loop_now(g->d.loop) + first, on_timer, g);
	if (!r)
		r = loop_add_timer(g->d.loop, &g->work, USEC_INFINITY, on_work, g);
	if (!r)
		r = loop_add_defer(g->d.loop, &g->now_src, on_work_now, g);
	if (!r && g->d.events)
		r = events_listen(g->d.events, on_event, g, &g->listener);
	if (!r) {
		loop_source_set_description(g->timer, "retention");
		loop_source_set_description(g->work, "retention-work");
	}
	return r;
}

int retention_new(const struct retention_deps *d, const struct retention_params *p,
		  struct retention **ret)
{
	struct retention *g = calloc(1, sizeof(*g));
	int r = 0;

	if (!g)
		return -ENOMEM;
	g->d = *d;
	g->p = *p;
	g->state_dir = strdup(d->state_dir);
	g->d.state_dir = g->state_dir;
	if (!g->state_dir)
		r = -ENOMEM;
	if (!r && d->loop)
		r = attach(g);
	if (r < 0) {
		retention_free(g);
		return r;
	}
	*ret = g;
	return 0;
}

struct retention *retention_free(struct retention *g)
{
	if (!g)
		return NULL;
	if (g->reading)
		store_read_later_forget(g->d.store, g);	/* the batch being read */
	compress_stop(g);
	events_unlisten(g->listener);
	loop_source_free(g->timer);
	loop_source_free(g->work);
	loop_source_free(g->now_src);
	free(g->state_dir);
	free(g);
	return NULL;
}

void retention_set_params(struct retention *g, const struct retention_params *p)
{
	g->p = *p;
}

bool retention_running(const struct retention *g)
{
	return g->phase != PHASE_IDLE;
}

const struct retention_stats *retention_last(const struct retention *g)
{
	return &g->last;
}

const struct retention_stats *retention_total(const struct retention *g)
{
	return &g->total;
}
