// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon.c -- wire the loop, store, boards, scheduler and API together */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api.h"
#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/fdlimit.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "drivers/power.h"
#include "journal/events.h"
#include "journal/retention.h"
#include "overlay/gitcache.h"
#include "overlay/overlay_files.h"
#include "results/backends/backend.h"
#include "rootfs/rootfs.h"
#include "run/run.h"
#include "sched/sched.h"
#include "session/reservations.h"
#include "session/users.h"
#include "session/viewer.h"
#include "store/store.h"

#define DAEMON_STOP_GRACE (60 * USEC_PER_SEC)	/* jobs get this long to power off */
#define DAEMON_EXIT_FENCED 75	/* EX_TEMPFAIL: reaped by another host, start again */

struct daemon {
	struct daemon_options opts;
	struct lab_config *cfg;
	struct users *users;
	struct board **boards;
	size_t n_boards;
	struct board **retired;	/* removed by a reload, waiting for their job */
	size_t n_retired;
	struct lab lab;		/* cfg, users and boards, for the modules */
	struct loop *loop;
	struct http_client *http;
	struct store *store;
	struct events *events;
	struct gitcache *git;		/* mirrors of test definition repositories */
	struct overlay_files *overlays;	/* test overlays boards download */
	struct rootfs *rootfs;		/* the NFS export directory, or NULL (no `nfs` group) */
	struct sched *sched;
	struct api *api;
	struct backends *backends;
	struct reservations *reservations;
	struct viewers *viewers;
	struct retention *retention;
	struct loop_source *stop_timer;
	uint64_t stop_deadline;	/* give up waiting for jobs to power off after this */
	bool stopping;
	int exit_code;
	long long fd_limit;	/* fdlimit_raise()'s answer */
	char *reload_refused;	/* why the last reload was refused, or NULL */
};

/* The jobs that fit in the open files limit at once: more wait in the queue, said once. */
static void cap_jobs(struct daemon *d)
{
	size_t n = d->cfg->n_devices, max = fdlimit_max_jobs(d->fd_limit, n);

	sched_set_max_running(d->sched, max);
	if (max != SIZE_MAX)
		log_warning("at most %zu jobs run at once: the open files limit %lld leaves room "
			    "for no more beside %zu boards; the other jobs wait in the queue",
			    max, d->fd_limit, n);
}

struct loop *daemon_loop(struct daemon *d)
{
	return d->loop;
}

int daemon_api_port(struct daemon *d)
{
	return d->api ? api_port(d->api) : 0;
}

struct events *daemon_events(struct daemon *d)
{
	return d->events;
}

const struct lab_config *daemon_config(struct daemon *d)
{
	return d->cfg;
}

int daemon_submit(struct daemon *d, const char *text, size_t len, const char *filename,
		  enum job_format fmt, const char *submitter, int64_t *ret_id, struct diag *diag)
{
	return sched_submit(d->sched, text, len, filename, fmt, submitter, ret_id, diag);
}

/* ---- the lab, as the modules see it (board/lab.h) ---- */

static const struct lab_config *lab_config_of(void *ud)
{
	struct daemon *d = ud;

	return d->cfg;
}

static const struct users *lab_users_of(void *ud)
{
	struct daemon *d = ud;

	return d->users;
}

static struct board **lab_boards_of(void *ud, size_t *ret_n)
{
	struct daemon *d = ud;

	*ret_n = d->n_boards;
	return d->boards;
}

static struct board *lab_board_of(void *ud, const char *name)
{
	struct daemon *d = ud;
	size_t i;

	for (i = 0; i < d->n_boards; i++)
		if (!strcmp(board_name(d->boards[i]), name))
			return d->boards[i];
	return NULL;
}

/* ---- what the modules ask of each other through the daemon ---- */

static void on_grant(const struct reservation_record *rec, struct board *b, void *ud)
{
	struct daemon *d = ud;

	reservations_grant(d->reservations, rec, b);
}

/* A viewer's ~p: the reservations decide (they are created after the viewers). */
static int viewer_power_cycle(void *ud, const char *board, const char *who,
			      reservations_power_fn done, void *done_ud,
			      char err[RESERVATION_ERR_MAX])
{
	struct daemon *d = ud;

	return reservations_power(d->reservations, board, POWER_CYCLE, who, done, done_ud, err);
}

static void viewer_power_forget(void *ud, void *done_ud)
{
	struct daemon *d = ud;

	reservations_power_forget(d->reservations, done_ud);
}

/* ---- boards ---- */

static void on_board_changed(struct board *b, void *ud)
{
	struct daemon *d = ud;

	if (!d->stopping)
		sched_board_changed(d->sched, b);
}

static int create_board(struct daemon *d, struct lab_config *cfg, const struct device *dev,
			struct board **ret)
{
	struct board_deps deps = {
		.loop = d->loop,
		.http = d->http,
		.store = d->store,
		.changed = on_board_changed,
		.userdata = d,
	};

	return board_new(&deps, cfg, dev, ret);
}

/* A board that was running a job when the previous labd died is still powered. */
static void power_off_if_left_running(struct daemon *d, struct board *b)
{
	struct device_record rec = { 0 };

	if (store_device_get(d->store, board_name(b), &rec) < 0)
		return;
	if (rec.state == DEVICE_STATE_RUNNING)
		board_power_off(b, "labd stopped while it ran a job");
	device_record_release(&rec);
}

static int add_board(struct daemon *d, struct board *b)
{
	struct board **n = realloc(d->boards, (d->n_boards + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	d->boards = n;
	d->boards[d->n_boards++] = b;
	return 0;
}

/* A board name another live host of the lab has: refused, at start as at a reload. */
static void log_board_taken(const char *name, const char *owner, const char *what)
{
	log_error("board '%s' is on host '%s' of this lab already: give this one another name%s",
		  name, owner, what);
}

static int create_boards(struct daemon *d)
{
	size_t i;
	int err;

	for (i = 0; i < d->cfg->n_devices; i++) {
		const struct device *dev = d->cfg->devices[i];
		char owner[128];
		struct board *b;

		/* a shared store (several hosts): board names are the lab's */
		err = store_board_register(d->store, dev->name, dev->type_name, now_realtime(),
					   owner, sizeof(owner));
		if (err == -EADDRINUSE)
			log_board_taken(dev->name, owner, "");
		if (err < 0)
			return err;
		err = create_board(d, d->cfg, dev, &b);
		if (err < 0)
			return err;
		err = add_board(d, b);
		if (err < 0) {
			board_unref(b);
			return err;
		}
		power_off_if_left_running(d, b);
		board_start(b);
	}
	return 0;
}

/* ---- reload ---- */

/* One reload (SIGHUP), run again by store_read_later() until its reads are in. */
struct reload_run {
	struct daemon *d;
	uint64_t now;		/* the boards' registration time: the same in every run */
	char **refused;		/* the boards another host has: left out (the run's) */
	char **owners;		/* their hosts */
	char *failed;		/* a board whose registration failed (the run's), or NULL */
	int err;		/* and why */
	/* what it did, for whoever asked (lab_reload()) */
	lab_reload_fn done;	/* or NULL (SIGHUP): said once, in reload_report() */
	void *done_ud;
	char **errors, **added, **changed, **removed;
};

static void retire(struct daemon *d, struct board *b)
{
	struct board **n = realloc(d->retired, (d->n_retired + 1) * sizeof(*n));

	board_retire(b);
	if (!n) {
		board_unref(b);
		return;
	}
	d->retired = n;
	d->retired[d->n_retired++] = b;
}

/*
 * A board a reload removed: retired (its job goes on) and, unless @cfg has
 * it again (changed), released from the lab's registry, for another host.
 */
static void remove_board(struct daemon *d, struct board *b)
{
	log_info("board '%s' retired%s", board_name(b), board_job(b) ? " after its job" : "");
	if (!lab_board_of(d, board_name(b)))
		store_board_release(d->store, board_name(b));
	retire(d, b);
}

/* Keep unchanged boards, create new and changed ones but @rr's refused, retire the rest. */
static int swap_boards(struct daemon *d, struct lab_config *cfg, struct reload_run *rr)
{
	struct board **old = d->boards;
	size_t n_old = d->n_boards, i, j;
	int err = 0;

	d->boards = NULL;
	d->n_boards = 0;
	for (i = 0; i < cfg->n_devices && !err; i++) {
		const struct device *dev = cfg->devices[i];
		struct board *b = NULL;

		if (strv_contains(rr->refused, dev->name))
			continue;	/* another host has the name */
		for (j = 0; j < n_old; j++) {
			if (!old[j] || strcmp(board_name(old[j]), dev->name))
				continue;
			if (!config_device_changed(board_device(old[j]), dev)) {
				b = old[j];
				old[j] = NULL;
			}
			break;
		}
		if (!b) {
			err = create_board(d, cfg, dev, &b);
			if (err < 0)
				break;
			log_info("board '%s' %s", dev->name, j < n_old ? "changed" : "added");
			strv_push(j < n_old ? &rr->changed : &rr->added, dev->name);
		}
		err = add_board(d, b);
	}
	for (j = 0; j < n_old; j++) {
		if (!old[j])
			continue;
		if (!lab_board_of(d, board_name(old[j])))	/* gone, not changed */
			strv_push(&rr->removed, board_name(old[j]));
		remove_board(d, old[j]);
	}
	free(old);
	for (i = 0; i < d->n_boards; i++)
		board_start(d->boards[i]);
	return err;
}

/* The new `retention` group from the next step on; a broken one keeps the running one. */
static void reload_retention(struct daemon *d)
{
	struct diag diag = DIAG_INIT;
	struct retention_params p;

	if (retention_parse(config_setting_get_member(d->cfg->root, "retention"), &p, &diag) == 0)
		retention_set_params(d->retention, &p);
	for (size_t i = 0; i < diag.n; i++)
		log_error("reload: %s: the retention stays as it was", diag.msgs[i]);
	diag_release(&diag);
}

/* The new `nfs` group from the next tree on; a broken one keeps the running one. */
static void reload_nfs(struct daemon *d)
{
	const config_setting_t *g = config_setting_get_member(d->cfg->root, "nfs");
	struct diag diag = DIAG_INIT;
	struct rootfs_params p;

	if (rootfs_params_parse(g, d->cfg->path, &p, &diag) == 0) {
		if (d->rootfs && p.export_dir)
			rootfs_set_params(d->rootfs, &p);
		else if (!d->rootfs != !p.export_dir)
			log_warning("reload: NFS roots are %s when labd restarts",
				    d->rootfs ? "turned off" : "turned on");
	}
	for (size_t i = 0; i < diag.n; i++)
		log_error("reload: %s: the NFS settings stay as they were", diag.msgs[i]);
	rootfs_params_release(&p);
	diag_release(&diag);
}

/* Whether @dev is a board the reload adds or changes (created anew). */
static bool board_is_new(struct daemon *d, const struct device *dev)
{
	struct board *b = lab_board_of(d, dev->name);

	return !b || config_device_changed(board_device(b), dev);
}

/*
 * Register @dev in the lab's registry as at start, with the run's time, so
 * that the run with every answer is answered from what was kept: a name
 * another live host has goes to rr->refused, an error to rr->failed.
 */
static void register_new_board(struct reload_run *rr, const struct device *dev)
{
	char owner[128];
	int err;

	err = store_board_register(rr->d->store, dev->name, dev->type_name, rr->now, owner,
				   sizeof(owner));
	if (err == -EADDRINUSE) {
		err = strv_push(&rr->refused, dev->name);
		if (!err)
			err = strv_push(&rr->owners, owner);
	}
	if (err < 0 && err != -EINPROGRESS && !rr->err) {
		rr->failed = strdup(dev->name);
		rr->err = err;
	}
}

/*
 * Whether the store's answers for the boards @cfg adds or changes are still
 * on their way: what it keeps of each (maintenance, holder) is read as the
 * board is created (board_new()), so it is read first here, and each is
 * registered in the lab's registry (several hosts).  In the run with every
 * answer board_new()'s reads are answered from these.
 */
static bool board_reads_pending(struct reload_run *rr, const struct lab_config *cfg)
{
	struct device_record rec;
	size_t i, n = 0;

	rr->refused = strv_free(rr->refused);
	rr->owners = strv_free(rr->owners);
	free(rr->failed);
	rr->failed = NULL;
	rr->err = 0;
	for (i = 0; i < cfg->n_devices; i++) {
		if (!board_is_new(rr->d, cfg->devices[i]))
			continue;	/* kept as it is */
		memset(&rec, 0, sizeof(rec));
		if (store_device_get(rr->d->store, cfg->devices[i]->name, &rec) == 0)
			device_record_release(&rec);
		register_new_board(rr, cfg->devices[i]);
		n++;
	}
	if (!store_read_pending(rr->d->store))
		return false;
	log_debug("reload: waiting for the store's answers about %zu board(s)", n);
	return true;
}

/* The boards' registration, once every answer is in: -errno when one failed (logged). */
static int boards_registered(const struct reload_run *rr)
{
	size_t i;

	for (i = 0; rr->refused && rr->refused[i]; i++)
		log_board_taken(rr->refused[i], rr->owners && rr->owners[i] ? rr->owners[i] : "?",
				" (left out of the reload)");
	if (!rr->err)
		return 0;
	log_error("reload: cannot register board '%s' in the lab: %s",
		  rr->failed ? rr->failed : "?", strerror(-rr->err));
	return rr->err;
}

/* labd.conf and its users, loaded: 0, or -errno with the reasons logged and in @rr. */
static int reload_load(struct reload_run *rr, struct lab_config **ret_cfg,
		       struct users **ret_users)
{
	struct diag diag = DIAG_INIT;
	int err;

	err = config_load(rr->d->opts.config_path, ret_cfg, &diag);
	if (!err) {
		err = users_load(*ret_cfg, ret_users, &diag);
		if (err < 0)
			config_unref(*ret_cfg);
	}
	for (size_t i = 0; err < 0 && i < diag.n; i++) {
		log_error("%s", diag.msgs[i]);
		strv_push(&rr->errors, diag.msgs[i]);
	}
	if (err < 0 && !diag.n)
		strv_push(&rr->errors, strerror(-err));
	diag_release(&diag);
	return err;
}

/* What the reload did, to whoever asked: once; the lab is degraded while one stands refused. */
static void reload_report(struct reload_run *rr, bool refused)
{
	struct daemon *d = rr->d;
	struct lab_reload_report rep = {
		.refused = refused, .errors = rr->errors, .added = rr->added,
		.changed = rr->changed, .removed = rr->removed, .boards = d->n_boards,
		.device_types = d->cfg->n_types,
	};

	free(d->reload_refused);
	d->reload_refused = refused ? strv_join(rr->errors, "; ") : NULL;
	if (refused && !d->reload_refused)
		d->reload_refused = strdup("refused");
	if (rr->done)
		rr->done(&rep, rr->done_ud);
	rr->done = NULL;
}

/*
 * Reload labd.conf: run through store_read_later() (on_signal()), so that
 * on PostgreSQL the boards' reads and registrations do not wait in the
 * loop; a run whose reads went to the database changes nothing, the run
 * with their answers reloads.
 */
static void reload(void *userdata)
{
	struct reload_run *rr = userdata;
	struct daemon *d = rr->d;
	struct lab_config *cfg;
	struct users *users = NULL;
	int err;

	rr->errors = strv_free(rr->errors);
	err = reload_load(rr, &cfg, &users);
	if (!err && board_reads_pending(rr, cfg)) {
		users_free(users);
		config_unref(cfg);
		return;
	}
	if (!err && (err = boards_registered(rr)) < 0) {
		strv_push(&rr->errors, strerror(-err));
		users_free(users);
		config_unref(cfg);
	}
	if (err < 0) {
		log_error("reload failed: keeping the running configuration");
		reload_report(rr, true);
		return;
	}
	config_log_warnings(cfg);
	users_free(d->users);
	d->users = users;
	err = swap_boards(d, cfg, rr);
	if (err < 0) {
		log_error("reload: %s", strerror(-err));
		strv_push(&rr->errors, strerror(-err));
	}
	config_unref(d->cfg);
	d->cfg = cfg;
	gitcache_set_limits(d->git, cfg->git_max_size, cfg->git_timeout);
	reload_retention(d);
	reload_nfs(d);
	sched_set_config(d->sched, cfg);
	sched_kick(d->sched);
	log_info("reloaded: %zu boards, %zu device types", d->n_boards, cfg->n_types);
	d->fd_limit = fdlimit_raise(cfg->n_devices);
	cap_jobs(d);
	reload_report(rr, false);
}

static void reloaded(void *userdata)
{
	struct reload_run *rr = userdata;

	if (rr->done) {	/* forgotten: labd stops before the store answered */
		strv_free(rr->errors);
		rr->errors = NULL;
		strv_push(&rr->errors, "labd is stopping");
		reload_report(rr, true);
	}
	strv_free(rr->refused);
	strv_free(rr->owners);
	strv_free(rr->errors);
	strv_free(rr->added);
	strv_free(rr->changed);
	strv_free(rr->removed);
	free(rr->failed);
	free(rr);
}

/* Start a reload (SIGHUP, or lab_reload() with @done). */
static int start_reload(struct daemon *d, lab_reload_fn done, void *done_ud)
{
	struct reload_run *rr = calloc(1, sizeof(*rr));

	log_info("reloading '%s'", d->cfg->path);
	if (!rr) {
		log_error("reload failed: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	*rr = (struct reload_run){ .d = d, .now = loop_realtime(d->loop), .done = done,
				   .done_ud = done_ud };
	store_read_later(d->store, d, reload, reloaded, rr);
	return 0;
}

static int lab_reload_of(void *ud, lab_reload_fn done, void *done_ud)
{
	return start_reload(ud, done, done_ud);
}

static const char *lab_refused_reload_of(void *ud)
{
	return ((struct daemon *)ud)->reload_refused;
}

/* ---- signals and stopping ---- */

static int on_stop_check(struct loop_source *s, uint64_t now, void *ud)
{
	struct daemon *d = ud;

	size_t removing = 0;

	if (d->rootfs)
		rootfs_tree_count(d->rootfs, &removing);
	/* the last events wait for the store's commit before the backends have them;
	 * the NFS roots of the jobs that ended are removed, unless that takes too long */
	if ((sched_running(d->sched) && now < loop_now(d->loop) + 1) ||
	    events_waiting(d->events) || backends_draining(d->backends, now) ||
	    (removing && now < d->stop_deadline)) {
		loop_timer_set_rel(s, 100 * USEC_PER_MSEC);
		return 0;
	}
	loop_exit(d->loop, d->exit_code);
	return 0;
}

void daemon_stop(struct daemon *d, int code)
{
	size_t n;

	if (d->stopping) {
		log_warning("stopping now, without waiting for jobs");
		loop_exit(d->loop, code);
		return;
	}
	d->stopping = true;
	d->exit_code = code;
	d->stop_deadline = loop_now(d->loop) + DAEMON_STOP_GRACE;
	d->api = api_free(d->api);
	sched_pause(d->sched);
	n = sched_cancel_all(d->sched, "labd is stopping");
	log_info("stopping%s", n ? ": canceling running jobs and powering their boards off" : "");
	loop_add_timer(d->loop, &d->stop_timer, loop_now(d->loop), on_stop_check, d);
}

static int on_signal(struct loop_source *s, const struct signalfd_siginfo *si, void *ud)
{
	struct daemon *d = ud;

	if (si->ssi_signo == SIGHUP)
		start_reload(d, NULL, NULL);
	else
		daemon_stop(d, 0);
	return 0;
}

static int setup_signals(struct daemon *d)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	size_t i;
	int err;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		err = loop_add_signal(d->loop, NULL, sigs[i], on_signal, d);
		if (err < 0)
			return err;
	}
	return 0;
}

/* ---- life cycle ---- */

static int make_dirs(const struct lab_config *c)
{
	const char *dirs[] = { c->state_dir, c->tftp_root };
	char buf[4096];
	size_t i, j;

	for (i = 0; i < 2; i++) {
		if (!dirs[i] || strlen(dirs[i]) >= sizeof(buf))
			continue;
		strcpy(buf, dirs[i]);
		for (j = 1; buf[j]; j++) {
			if (buf[j] != '/')
				continue;
			buf[j] = '\0';
			mkdir(buf, 0755);
			buf[j] = '/';
		}
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* The queue changed in a way not told entry by entry (a shared store): every free board claims. */
static void on_store_changed(void *userdata)
{
	struct daemon *d = userdata;

	if (d->sched)
		sched_kick(d->sched);
}

/* Another labd host queued an entry (a shared store): a free board that fits it claims. */
static void on_store_queued(const struct store_queued *q, void *userdata)
{
	struct daemon *d = userdata;

	if (d->sched)
		sched_entry_queued(d->sched, q);
}

/*
 * Another host reaped this one while it was away (a shared store): what it
 * still runs is being run elsewhere, its writes are refused.  Stop, with
 * EX_TEMPFAIL for the service manager to start labd again (which takes its
 * boards back, doc/multi-host.md).
 */
static void on_store_fenced(void *userdata)
{
	struct daemon *d = userdata;

	log_error("this host was reaped by another while it did not renew its lease: its jobs "
		  "run elsewhere now; stopping, to start again");
	daemon_stop(d, DAEMON_EXIT_FENCED);
}

/* An event the store wrote itself (the jobs of a host this one reaped): to the listeners. */
static void on_store_event(const struct event_record *ev, void *userdata)
{
	struct daemon *d = userdata;

	if (d->events && events_announce(d->events, ev->job_id, ev->seq, ev->ts, ev->kind,
					 ev->data) < 0)
		log_error("job %lld: event '%s' not announced: %s", (long long)ev->job_id,
			  ev->kind, strerror(ENOMEM));
}

/* The store labd.conf's `store` group names (SQLite in the state directory by default). */
static int open_store(struct daemon *d, struct diag *diag)
{
	char url[300] = "";
	struct store_params p = {
		.settings = config_setting_get_member(d->cfg->root, "store"),
		.state_dir = d->cfg->state_dir,
		.loop = d->loop,
		.changed = on_store_changed,
		.queued = on_store_queued,
		.fenced = on_store_fenced,
		.event = on_store_event,
		.changed_userdata = d,
	};
	char **boards = NULL;
	size_t i;
	int err = 0;

	if (d->opts.listen && strncmp(d->opts.listen, "unix:", 5)) {
		snprintf(url, sizeof(url), "http://%s", d->opts.listen);
		p.host_url = url;
	}
	/* a board name another host has refuses this one before it registers */
	for (i = 0; i < d->cfg->n_devices && !err; i++)
		err = strv_push(&boards, d->cfg->devices[i]->name);
	p.boards = boards;
	if (!err)
		err = store_open(&p, &d->store, diag);
	strv_free(boards);
	if (err < 0 && err != -EINVAL)
		log_error("cannot open the store in '%s': %s", d->cfg->state_dir, strerror(-err));
	return err;
}

/* The scheduler, then the viewers and the reservations, which use it. */
static int start_sessions(struct daemon *d)
{
	struct sched_deps sd = {
		.run = { .loop = d->loop, .http = d->http, .store = d->store, .events = d->events,
			 .config = d->cfg, .git = d->git, .overlays = d->overlays,
			 .rootfs = d->rootfs },
		.lab = &d->lab,
		.grant = on_grant,
		.userdata = d,
	};
	struct viewers_deps vd = {
		.loop = d->loop,
		.sched = NULL,
		.power_cycle = viewer_power_cycle,
		.power_forget = viewer_power_forget,
		.userdata = d,
	};
	struct reservations_deps rd = { d->loop, d->store, NULL, NULL, &d->lab };
	int err;

	err = sched_new(&sd, &d->sched);
	vd.sched = d->sched;
	if (!err)
		err = viewers_new(&vd, &d->viewers);
	rd.sched = d->sched;
	rd.viewers = d->viewers;
	if (!err)
		err = reservations_new(&rd, &d->reservations);
	return err;
}

/* The git mirrors of <state_dir>/git, with labd.conf's limits. */
static int open_gitcache(struct daemon *d)
{
	struct gitcache_opts o = { .max_size = d->cfg->git_max_size,
				   .timeout = d->cfg->git_timeout };
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/git", d->cfg->state_dir);
	o.dir = path;
	err = gitcache_new(d->loop, &o, &d->git);
	if (err < 0)
		log_error("cannot open the git cache '%s': %s", path, strerror(-err));
	return err;
}

/*
 * The NFS export directory of labd.conf's `nfs` group, if any: its helper is
 * labd itself (`labd rootfs-helper`, rootfs/rootfs.h).
 */
static int open_rootfs(struct daemon *d, struct diag *diag)
{
	const config_setting_t *g = config_setting_get_member(d->cfg->root, "nfs");
	struct rootfs_deps deps = { .loop = d->loop, .helper = "/proc/self/exe" };
	struct rootfs_params p;
	int err = rootfs_params_parse(g, d->cfg->path, &p, diag);

	if (!err)
		err = rootfs_params_check_dir(g, &p, diag);
	if (!err && p.export_dir)
		err = rootfs_new(&deps, &p, &d->rootfs);
	if (err < 0 && err != -EINVAL && !diag->n)
		diag_add(diag, d->cfg->path, 0, "cannot open the NFS export directory: %s",
			 strerror(-err));
	rootfs_params_release(&p);
	return err;
}

static int start_core(struct daemon *d, struct diag *diag)
{
	int err;

	d->lab = (struct lab){ lab_config_of, lab_users_of, lab_boards_of, lab_board_of,
			       lab_reload_of, lab_refused_reload_of, d };
	err = loop_new(&d->loop);
	if (!err)
		err = http_client_new(d->loop, &d->http);
	if (!err)
		err = open_store(d, diag);
	if (!err)
		err = events_new(d->store, &d->events);
	if (!err)
		err = open_gitcache(d);
	if (!err)
		err = overlay_files_new(&d->overlays);
	if (!err)
		err = open_rootfs(d, diag);
	if (!err)
		err = start_sessions(d);
	if (!err)
		err = setup_signals(d);
	return err;
}

/* The backends' view of a job running here (backends_deps.running_job). */
static const struct job *running_job(int64_t id, void *userdata)
{
	struct daemon *d = userdata;
	struct run *r = d->sched ? sched_run_of(d->sched, id) : NULL;

	return r ? run_job(r) : NULL;
}

static int start_backends(struct daemon *d, struct diag *diag)
{
	struct backends_deps bd = { d->loop, d->http, d->store, d->events, &d->lab,
				    running_job, d };

	return backends_new(&bd, &d->backends, diag);
}

/* The garbage collector of the state directory (labd.conf's `retention`). */
static int start_retention(struct daemon *d, struct diag *diag)
{
	struct retention_deps rd = {
		.loop = d->loop,
		.store = d->store,
		.events = d->events,
		.state_dir = d->cfg->state_dir,
	};
	struct retention_params p;
	int err = retention_parse(config_setting_get_member(d->cfg->root, "retention"), &p, diag);

	return err < 0 ? err : retention_new(&rd, &p, &d->retention);
}

static int start_api(struct daemon *d, const char *listen)
{
	struct api_deps ad = {
		.loop = d->loop,
		.store = d->store,
		.events = d->events,
		.sched = d->sched,
		.reservations = d->reservations,
		.viewers = d->viewers,
		.lab = &d->lab,
		.backends = d->backends,
		.http = d->http,
		.overlays = d->overlays,
		.retention = d->retention,
	};
	int err = api_new(&ad, listen, &d->api);

	if (!err)	/* where boards download their overlays (transfer_overlay) */
		overlay_files_set_port(d->overlays, (unsigned)api_port(d->api));
	return err;
}

int daemon_new(const struct daemon_options *opts, struct daemon **ret, struct diag *diag)
{
	struct daemon *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	d->opts = *opts;
	err = config_load(opts->config_path, &d->cfg, diag);
	if (!err)
		config_log_warnings(d->cfg);
	if (!err)
		err = users_load(d->cfg, &d->users, diag);
	if (err < 0)
		goto err_free;
	d->fd_limit = fdlimit_raise(d->cfg->n_devices);	/* logged; labd runs on with what it has */
	err = make_dirs(d->cfg);
	if (err < 0) {
		diag_add(diag, d->cfg->state_dir, 0, "cannot create the state directory: %s",
			 strerror(-err));
		goto err_free;
	}
	err = start_core(d, diag);
	if (!err)
		err = start_backends(d, diag);
	if (!err)
		err = start_retention(d, diag);
	if (!err)
		err = sched_recover(d->sched);
	if (!err)
		err = create_boards(d);
	if (!err)
		err = reservations_restore(d->reservations);
	if (err < 0)
		goto err_free;
	if (!opts->no_api) {
		err = start_api(d, opts->listen);
		if (err < 0)
			goto err_free;
	}
	cap_jobs(d);
	sched_kick(d->sched);
	log_info("lab '%s': %zu boards, %zu device types, state in '%s'",
		 d->cfg->lab_name ? d->cfg->lab_name : "labd", d->n_boards, d->cfg->n_types,
		 d->cfg->state_dir);
	*ret = d;
	return 0;

err_free:
	daemon_free(d);
	return err;
}

int daemon_run(struct daemon *d)
{
	return loop_run(d->loop);
}

struct daemon *daemon_free(struct daemon *d)
{
	size_t i;

	if (!d)
		return NULL;
	if (d->store)
		store_read_later_forget(d->store, d);	/* a reload whose reads are on their way */
	api_free(d->api);
	reservations_free(d->reservations);
	viewers_free(d->viewers);
	sched_free(d->sched);
	rootfs_free(d->rootfs);	/* after the runs, which release their trees */
	backends_free(d->backends);
	retention_free(d->retention);
	users_free(d->users);
	for (i = 0; i < d->n_boards; i++)
		board_unref(d->boards[i]);
	for (i = 0; i < d->n_retired; i++)
		board_unref(d->retired[i]);
	free(d->boards);
	free(d->retired);
	loop_source_free(d->stop_timer);
	gitcache_free(d->git);
	overlay_files_free(d->overlays);
	events_free(d->events);
	store_close(d->store);
	http_client_free(d->http);
	loop_free(d->loop);
	config_unref(d->cfg);
	free(d->reload_refused);
	free(d);
	return NULL;
}
