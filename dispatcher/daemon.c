// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon.c -- wire the loop, store, boards, scheduler and API together */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "api/api.h"
#include "board/board.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "drivers/power.h"
#include "job/job.h"
#include "journal/events.h"
#include "results/backends/backend.h"
#include "sched/sched.h"
#include "session/reservations.h"
#include "session/users.h"
#include "session/viewer.h"
#include "store/store.h"

#define DAEMON_STOP_GRACE (60 * USEC_PER_SEC)	/* jobs get this long to power off */

struct daemon_log_listener {
	struct daemon *d;
	daemon_log_fn fn;
	void *userdata;
	bool dead;
	struct daemon_log_listener *next;
};

struct daemon {
	struct daemon_options opts;
	struct lab_config *cfg;
	struct loop *loop;
	struct http_client *http;
	struct store *store;
	struct events *events;
	struct sched *sched;
	struct api *api;
	struct backends *backends;
	struct users *users;
	struct reservations *reservations;
	struct viewers *viewers;
	struct board **boards;
	size_t n_boards;
	struct board **retired;	/* removed by a reload, waiting for their job */
	size_t n_retired;
	struct daemon_log_listener *log_listeners;
	unsigned log_dispatching;
	struct loop_source *stop_timer;
	uint64_t stop_deadline;	/* give up waiting for jobs to power off after this */
	bool stopping;
	int exit_code;
};

struct loop *daemon_loop(struct daemon *d)
{
	return d->loop;
}

struct store *daemon_store(struct daemon *d)
{
	return d->store;
}

struct events *daemon_events(struct daemon *d)
{
	return d->events;
}

struct http_client *daemon_http(struct daemon *d)
{
	return d->http;
}

const struct lab_config *daemon_config(struct daemon *d)
{
	return d->cfg;
}

const struct users *daemon_users(struct daemon *d)
{
	return d->users;
}

struct reservations *daemon_reservations(struct daemon *d)
{
	return d->reservations;
}

struct viewers *daemon_viewers(struct daemon *d)
{
	return d->viewers;
}

struct board **daemon_boards(struct daemon *d, size_t *ret_n)
{
	*ret_n = d->n_boards;
	return d->boards;
}

struct board *daemon_board(struct daemon *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_boards; i++)
		if (!strcmp(board_name(d->boards[i]), name))
			return d->boards[i];
	return NULL;
}

struct run *daemon_run_of(struct daemon *d, int64_t id)
{
	return sched_run_of(d->sched, id);
}

void daemon_kick(struct daemon *d)
{
	sched_kick(d->sched);
}

char *daemon_job_dir(struct daemon *d, int64_t id)
{
	char *dir;

	if (asprintf(&dir, "%s/jobs/%lld", d->cfg->state_dir, (long long)id) < 0)
		return NULL;
	return dir;
}

/* ---- log followers ---- */

int daemon_log_listen(struct daemon *d, daemon_log_fn fn, void *userdata,
		      struct daemon_log_listener **ret)
{
	struct daemon_log_listener *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->d = d;
	l->fn = fn;
	l->userdata = userdata;
	l->next = d->log_listeners;
	d->log_listeners = l;
	if (ret)
		*ret = l;
	return 0;
}

static void reap_log_listeners(struct daemon *d)
{
	struct daemon_log_listener **pp = &d->log_listeners;

	while (*pp) {
		struct daemon_log_listener *l = *pp;

		if (l->dead) {
			*pp = l->next;
			free(l);
		} else {
			pp = &l->next;
		}
	}
}

struct daemon_log_listener *daemon_log_unlisten(struct daemon_log_listener *l)
{
	if (!l)
		return NULL;
	l->dead = true;
	if (!l->d->log_dispatching)
		reap_log_listeners(l->d);
	return NULL;
}

static void on_log_grew(int64_t job_id, void *ud)
{
	struct daemon *d = ud;
	struct daemon_log_listener *l;

	d->log_dispatching++;
	for (l = d->log_listeners; l; l = l->next)
		if (!l->dead)
			l->fn(job_id, l->userdata);
	if (--d->log_dispatching == 0)
		reap_log_listeners(d);
}

/* ---- jobs ---- */

static bool type_has_board(struct daemon *d, const struct job *job)
{
	size_t i;

	for (i = 0; i < d->n_boards; i++) {
		const struct device *dev = board_device(d->boards[i]);

		if (!strcmp(dev->type_name, job->device_type) && board_has_tags(d->boards[i], job->tags))
			return true;
	}
	return false;
}

/* Parse @text and check it against this lab; the job on success. */
static int check_job(struct daemon *d, const char *text, size_t len, const char *filename,
		     enum job_format fmt, struct job **ret, struct diag *diag)
{
	const struct device_type *type;
	struct job *job;
	int err;

	err = job_parse(text, len, filename, fmt, &job, diag);
	if (err < 0)
		return err;
	type = config_find_type(d->cfg, job->device_type);
	if (!type)
		err = diag_add(diag, filename, 0, "unknown device type '%s' in this lab",
			       job->device_type);
	else
		err = job_check_device_type(job, type, diag);
	if (!err && !type_has_board(d, job)) {
		char *tags = strv_join(job->tags, ", ");

		err = diag_add(diag, filename, 0, "no board of type '%s'%s%s%s in this lab",
			       job->device_type, tags && *tags ? " with tags [" : "",
			       tags && *tags ? tags : "", tags && *tags ? "]" : "");
		free(tags);
	}
	if (err < 0) {
		job_free(job);
		return err;
	}
	*ret = job;
	return 0;
}

int daemon_check_job(struct daemon *d, const char *text, size_t len, const char *filename,
		     enum job_format fmt, struct diag *diag)
{
	struct job *job;
	int err = check_job(d, text, len, filename, fmt, &job, diag);

	if (!err)
		job_free(job);
	return err;
}

static enum job_format detect_format(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')
			continue;
		return text[i] == '{' ? JOB_FORMAT_JSON : JOB_FORMAT_YAML;
	}
	return JOB_FORMAT_YAML;
}

static int insert_job(struct daemon *d, const struct job *job, const char *text, size_t len,
		      const char *filename, enum job_format fmt, const char *submitter,
		      bool session, int64_t *ret_id)
{
	json_t *tags = json_array();
	struct job_record rec = { 0 };
	int err;

	STRV_FOREACH(t, job->tags)
		json_array_append_new(tags, json_string(*t));
	rec.name = job->name;
	rec.device_type = job->device_type;
	rec.tags = json_dumps(tags, JSON_COMPACT);
	rec.priority = job->priority;
	rec.submitted = loop_realtime(d->loop);
	rec.state = JOB_STATE_QUEUED;
	rec.definition = strndup(text, len);
	rec.format = (char *)(fmt == JOB_FORMAT_JSON ? "json" : "yaml");
	rec.filename = (char *)filename;
	rec.submitter = (char *)(submitter ? submitter : "anonymous");
	rec.attempt = 1;
	rec.retries_left = session ? 0 : (int)job->infrastructure_retries;
	rec.session = session;
	err = rec.tags && rec.definition ? store_job_insert(d->store, &rec) : -ENOMEM;
	if (!err)
		*ret_id = rec.id;
	free(rec.tags);
	free(rec.definition);
	json_decref(tags);
	return err;
}

int daemon_submit(struct daemon *d, const char *text, size_t len, const char *filename,
		  enum job_format fmt, const char *submitter, int64_t *ret_id, struct diag *diag)
{
	struct job *job;
	int64_t id = 0;
	int err;

	if (fmt == JOB_FORMAT_AUTO)
		fmt = detect_format(text, len);
	err = check_job(d, text, len, filename, fmt, &job, diag);
	if (err < 0)
		return err;
	err = insert_job(d, job, text, len, filename, fmt, submitter, false, &id);
	if (!err) {
		log_info("job %lld '%s' queued for '%s' by %s", (long long)id, job->name,
			 job->device_type, submitter ? submitter : "anonymous");
		events_emit(d->events, id, loop_realtime(d->loop), "queued",
			    json_pack("{s:s, s:s, s:i, s:s}", "name", job->name, "device_type",
				      job->device_type, "priority", job->priority, "submitter",
				      submitter ? submitter : "anonymous"));
		sched_kick(d->sched);
		*ret_id = id;
	}
	job_free(job);
	return err;
}

int daemon_boot_session(struct daemon *d, struct board *b, const char *text, size_t len,
			const char *filename, enum job_format fmt, const char *holder,
			int64_t *ret_id, struct diag *diag)
{
	const char *type = board_device(b)->type_name;
	struct job *job;
	int64_t id = 0;
	int err;

	if (board_job(b))
		return -EBUSY;
	if (fmt == JOB_FORMAT_AUTO)
		fmt = detect_format(text, len);
	err = check_job(d, text, len, filename, fmt, &job, diag);
	if (err < 0)
		return err;
	if (strcmp(job->device_type, type))
		err = diag_add(diag, filename, 0, "the job is for device type '%s', board '%s' is a '%s'",
			       job->device_type, board_name(b), type);
	if (!err)
		err = insert_job(d, job, text, len, filename, fmt, holder, true, &id);
	if (!err) {
		log_info("job %lld '%s': %s boots board '%s'", (long long)id, job->name, holder,
			 board_name(b));
		events_emit(d->events, id, loop_realtime(d->loop), "queued",
			    json_pack("{s:s, s:s, s:s, s:s}", "name", job->name, "device_type",
				      type, "submitter", holder, "session", board_name(b)));
		err = sched_start_session(d->sched, id, b);
	}
	job_free(job);
	if (!err)
		*ret_id = id;
	return err;
}

int daemon_queue_position(struct daemon *d, int64_t id, size_t *ret)
{
	return sched_position(d->sched, id, ret);
}

int daemon_cancel(struct daemon *d, int64_t id, const char *why)
{
	return sched_cancel(d->sched, id, why);
}

int daemon_set_board_state(struct daemon *d, const char *name, enum device_state s,
			   const char *reason)
{
	struct board *b = daemon_board(d, name);
	int err;

	if (!b)
		return -ENOENT;
	err = board_set_admin_state(b, s, reason);
	if (!err)
		log_info("board '%s' set to %s%s%s", name, device_state_name(s),
			 reason ? ": " : "", reason ? reason : "");
	return err;
}

/* ---- boards ---- */

static struct board **scheduler_boards(size_t *ret_n, void *ud)
{
	return daemon_boards(ud, ret_n);
}

static void on_grant(int64_t id, struct board *b, void *ud)
{
	struct daemon *d = ud;

	reservations_grant(d->reservations, id, b);
}

static void on_board_changed(struct board *b, void *ud)
{
	struct daemon *d = ud;

	if (!d->stopping)
		sched_kick(d->sched);
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

static int create_boards(struct daemon *d)
{
	size_t i;
	int err;

	for (i = 0; i < d->cfg->n_devices; i++) {
		struct board *b;

		err = create_board(d, d->cfg, d->cfg->devices[i], &b);
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

/* Keep unchanged boards, create new and changed ones, retire the rest. */
static int swap_boards(struct daemon *d, struct lab_config *cfg)
{
	struct board **old = d->boards;
	size_t n_old = d->n_boards, i, j;
	int err = 0;

	d->boards = NULL;
	d->n_boards = 0;
	for (i = 0; i < cfg->n_devices && !err; i++) {
		const struct device *dev = cfg->devices[i];
		struct board *b = NULL;

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
		}
		err = add_board(d, b);
	}
	for (j = 0; j < n_old; j++) {
		if (!old[j])
			continue;
		log_info("board '%s' retired%s", board_name(old[j]),
			 board_job(old[j]) ? " after its job" : "");
		retire(d, old[j]);
	}
	free(old);
	for (i = 0; i < d->n_boards; i++)
		board_start(d->boards[i]);
	return err;
}

static void reload(struct daemon *d)
{
	struct diag diag = DIAG_INIT;
	struct lab_config *cfg;
	struct users *users = NULL;
	int err;

	log_info("reloading '%s'", d->cfg->path);
	err = config_load(d->opts.config_path, &cfg, &diag);
	if (!err) {
		err = users_load(cfg, &users, &diag);
		if (err < 0)
			config_unref(cfg);
	}
	if (err < 0) {
		for (size_t i = 0; i < diag.n; i++)
			log_error("%s", diag.msgs[i]);
		log_error("reload failed: keeping the running configuration");
		diag_release(&diag);
		return;
	}
	diag_release(&diag);
	users_free(d->users);
	d->users = users;
	err = swap_boards(d, cfg);
	if (err < 0)
		log_error("reload: %s", strerror(-err));
	config_unref(d->cfg);
	d->cfg = cfg;
	sched_set_config(d->sched, cfg);
	sched_kick(d->sched);
	log_info("reloaded: %zu boards, %zu device types", cfg->n_devices, cfg->n_types);
}

/* ---- signals and stopping ---- */

static int on_stop_check(struct loop_source *s, uint64_t now, void *ud)
{
	struct daemon *d = ud;

	if ((sched_running(d->sched) && now < loop_now(d->loop) + 1) ||
	    backends_draining(d->backends, now)) {
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
		reload(d);
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

static int open_store(struct daemon *d)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/labd.db", d->cfg->state_dir);
	err = store_open(path, &d->store);
	if (err < 0)
		log_error("cannot open the database '%s': %s", path, strerror(-err));
	return err;
}

static int start_core(struct daemon *d)
{
	struct sched_deps sd = {
		.boards = scheduler_boards,
		.log_grew = on_log_grew,
		.grant = on_grant,
		.userdata = d,
	};
	int err;

	err = loop_new(&d->loop);
	if (!err)
		err = http_client_new(d->loop, &d->http);
	if (!err)
		err = open_store(d);
	if (!err)
		err = events_new(d->store, &d->events);
	if (!err)
		err = viewers_new(d, &d->viewers);
	if (!err)
		err = reservations_new(d, &d->reservations);
	if (err)
		return err;
	sd.run = (struct run_deps){ d->loop, d->http, d->store, d->events, d->cfg };
	err = sched_new(&sd, &d->sched);
	if (!err)
		err = setup_signals(d);
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
		err = users_load(d->cfg, &d->users, diag);
	if (err < 0)
		goto err_free;
	err = make_dirs(d->cfg);
	if (err < 0) {
		diag_add(diag, d->cfg->state_dir, 0, "cannot create the state directory: %s",
			 strerror(-err));
		goto err_free;
	}
	err = start_core(d);
	if (!err)
		err = backends_new(d, &d->backends, diag);
	if (!err)
		err = sched_recover(d->sched);
	if (!err)
		err = create_boards(d);
	if (!err)
		err = reservations_restore(d->reservations);
	if (err < 0)
		goto err_free;
	if (!opts->no_api) {
		err = api_new(d, opts->listen, &d->api);
		if (err < 0)
			goto err_free;
	}
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
	api_free(d->api);
	reservations_free(d->reservations);
	viewers_free(d->viewers);
	sched_free(d->sched);
	backends_free(d->backends);
	users_free(d->users);
	for (i = 0; i < d->n_boards; i++)
		board_unref(d->boards[i]);
	for (i = 0; i < d->n_retired; i++)
		board_unref(d->retired[i]);
	free(d->boards);
	free(d->retired);
	while (d->log_listeners) {
		struct daemon_log_listener *l = d->log_listeners;

		d->log_listeners = l->next;
		free(l);
	}
	loop_source_free(d->stop_timer);
	events_free(d->events);
	store_close(d->store);
	http_client_free(d->http);
	loop_free(d->loop);
	config_unref(d->cfg);
	free(d);
	return NULL;
}
