// SPDX-License-Identifier: GPL-2.0-or-later
/* run.c -- one running job: action sequencing, timeouts, outcome, final power-off */
#include "run/run_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/mask.h"
#include "core/strv.h"
#include "drivers/power.h"
#include "job/job.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "rootfs/rootfs.h"
#include "run/url_check.h"

static void start_action(struct run *r);

const struct job *run_job(const struct run *r)
{
	return r->job;
}

const struct job_action *run_action(const struct run *r)
{
	return r->action_idx < r->job->n_actions ? &r->job->actions[r->action_idx] : NULL;
}

size_t run_action_index(const struct run *r)
{
	return r->action_idx;
}

struct board *run_board(const struct run *r)
{
	return r->board;
}

struct loop *run_loop(const struct run *r)
{
	return r->deps.loop;
}

const struct lab_config *run_config(const struct run *r)
{
	return r->deps.config;
}

struct http_client *run_http(const struct run *r)
{
	return r->deps.http;
}

int64_t run_id(const struct run *r)
{
	return r->id;
}

const char *run_dir(const struct run *r)
{
	return r->dir;
}

const char *run_tftp_dir(const struct run *r)
{
	return r->tftp_dir;
}

const char *run_tftp_prefix(const struct run *r)
{
	return r->tftp_prefix;
}

struct kv *run_vars(struct run *r)
{
	return &r->vars;
}

struct rootfs *run_rootfs(const struct run *r)
{
	return r->deps.rootfs;
}

void run_set_nfs_tree(struct run *r, struct rootfs_tree *t)
{
	rootfs_tree_release(r->nfs_tree);
	r->nfs_tree = t;
}

struct rootfs_tree *run_nfs_tree(const struct run *r)
{
	return r->nfs_tree;
}

uint64_t run_now(const struct run *r)
{
	return loop_now(r->deps.loop);
}

void run_set_log_notify(struct run *r, void (*fn)(struct joblog *jl, void *userdata),
			void *userdata)
{
	joblog_set_notify(r->log, fn, userdata);
}

const char *run_log_dir(const struct run *r)
{
	return r->dir;
}

const struct run_outcome *run_outcome(const struct run *r)
{
	return &r->outcome;
}

const char *run_current_action(const struct run *r, size_t *index)
{
	if (r->phase != RUN_PHASE_ACTIONS || !r->action_active)
		return NULL;
	*index = r->action_idx + 1;
	return r->ops->name;
}

uint64_t run_started(const struct run *r)
{
	return r->started;
}

bool run_is_finished(const struct run *r)
{
	return r->phase == RUN_PHASE_FINISHED;
}

/* The action implementing job action @a. */
static const struct action_ops *action_ops_for(const struct job_action *a)
{
	switch (a->kind) {
	case JOB_ACTION_DEPLOY:
		if (a->deploy.to == DEPLOY_TO_SDMUX)
			return &action_deploy_sdmux_ops;
		if (a->deploy.to == DEPLOY_TO_FASTBOOT)
			return &action_deploy_fastboot_ops;
		return &action_deploy_ops;
	case JOB_ACTION_BOOT:
		switch (a->boot.method) {
		case BOOT_METHOD_BOOTLOADER:
			return &action_boot_bootloader_ops[BOOTLOADER_COUNT];
		case BOOT_METHOD_UBOOT:
		case BOOT_METHOD_BAREBOX:
		case BOOT_METHOD_GRUB:
		case BOOT_METHOD_GRUB_EFI:
		case BOOT_METHOD_IPXE:
		case BOOT_METHOD_DEPTHCHARGE:
		case BOOT_METHOD_UEFI_MENU:
			return &action_boot_bootloader_ops[a->boot.bootloader];
		case BOOT_METHOD_MINIMAL:
			return &action_boot_minimal_ops;
		case BOOT_METHOD_QEMU:
			return &action_boot_qemu_ops;
		case BOOT_METHOD_FASTBOOT:
			return &action_boot_fastboot_ops;
		}
		break;
	case JOB_ACTION_TEST:
		switch (a->test.kind) {
		case TEST_KIND_INTERACTIVE:
			return &action_test_interactive_ops;
		case TEST_KIND_MONITORS:
			return &action_test_monitors_ops;
		case TEST_KIND_DEFINITIONS:
			return &action_test_definitions_ops;
		}
		break;
	}
	return NULL;
}

void run_deliver(struct run *r, const struct run_event *ev)
{
	if (r->phase != RUN_PHASE_ACTIONS || !r->action_active)
		return;
	r->ops->event(r, r->astate, ev);
}

/* Stop the current action and everything it waits for. */
static void end_action(struct run *r)
{
	struct power *p = board_power(r->board);

	if (!r->action_active)
		return;
	r->action_active = false;
	if (r->ops->stop)
		r->ops->stop(r, r->astate);
	free(r->astate);
	r->astate = NULL;
	run_expect_stop(r);
	loop_timer_set(r->action_timer, USEC_INFINITY);
	loop_timer_set(r->wake_timer, USEC_INFINITY);
	loop_source_set_enabled(r->async_defer, false);
	if (p && power_is_busy(p))
		power_abort(p);
}

/* End the current action and start the next one from the loop. */
static void move_on(struct run *r)
{
	end_action(r);
	r->action_idx++;
	r->action_attempt = 0;
	loop_defer_again(r->next_action);
}

void run_done(struct run *r)
{
	const struct job_action *a = run_action(r);
	char took[32];

	if (!r->action_active)
		return;
	run_format_usec(run_now(r) - r->action_started, took, sizeof(took));
	run_log(r, "info", "action %zu (%s) done in %s", r->action_idx + 1, r->ops->name, took);
	(void)a;
	move_on(r);
}

void run_fail(struct run *r, enum error_type type, const char *fmt, ...)
{
	const struct job_action *a = run_action(r);
	char msg[1024];
	va_list ap;

	if (!r->action_active)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	end_action(r);
	if (a && r->action_attempt < a->failure_retry) {
		r->action_attempt++;
		run_log(r, "warning", "action %zu (%s) failed: %s; retrying (attempt %u of %u)",
			r->action_idx + 1, r->ops->name, msg, r->action_attempt + 1,
			a->failure_retry + 1);
		loop_defer_again(r->next_action);
		return;
	}
	run_finish(r, JOB_HEALTH_INCOMPLETE, type, "%s", msg);
}

static int on_job_timeout(struct loop_source *s, uint64_t now, void *ud)
{
	struct run *r = ud;
	char why[1024];

	run_job_timeout_reason(r, why, sizeof(why));
	run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_JOB, "%s", why);
	return 0;
}

static int on_action_timeout(struct loop_source *s, uint64_t now, void *ud)
{
	struct run *r = ud;
	const struct job_action *a = run_action(r);
	char why[1024];
	enum error_type type;

	if (r->action_deadline >= r->job_deadline)	/* the job's end came first */
		return on_job_timeout(s, now, ud);
	type = run_action_timeout_reason(r, why, sizeof(why));
	if (a->timeout_skip) {	/* LAVA's timeout skip: the job goes on */
		run_log(r, "warning", "%s: skipped (timeout skip)", why);
		move_on(r);
		return 0;
	}
	run_fail(r, type, "%s", why);
	return 0;
}

static void start_action(struct run *r)
{
	const struct job_action *a = run_action(r);
	uint64_t deadline;
	int err;

	while (a && a->kind == JOB_ACTION_TEST && r->job->session) {
		run_log(r, "info", "action %zu (test) skipped: the shell goes to the board's holder",
			r->action_idx + 1);
		r->action_idx++;
		a = run_action(r);
	}
	if (!a) {
		run_finish(r, JOB_HEALTH_COMPLETE, ERROR_NONE, "complete");
		return;
	}
	r->ops = action_ops_for(a);
	if (!r->ops) {
		run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_BUG, "no implementation of action %zu",
			   r->action_idx + 1);
		return;
	}
	r->astate = calloc(1, r->ops->state_size ? r->ops->state_size : 1);
	if (!r->astate) {
		run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_BUG, "out of memory");
		return;
	}
	r->action_active = true;
	r->action_started = run_now(r);
	deadline = r->action_started + a->timeout;
	r->action_deadline = deadline < r->job_deadline ? deadline : r->job_deadline;
	loop_timer_set(r->action_timer, r->action_deadline);
	run_log(r, "info", "action %zu of %zu: %s%s", r->action_idx + 1, r->job->n_actions,
		r->ops->name, r->action_attempt ? " (retry)" : "");
	events_emit(r->deps.events, r->id, loop_realtime(r->deps.loop), "action",
		    json_pack("{s:i, s:s, s:i}", "index", (int)r->action_idx + 1, "name",
			      r->ops->name, "attempt", (int)r->action_attempt + 1));
	err = r->ops->start(r, r->astate);
	if (err < 0 && r->action_active)
		run_fail(r, ERROR_BUG, "action %s could not start: %s", r->ops->name,
			 strerror(-err));
}

/* The artifact URLs answered, or why not: the first action starts, or the job ends. */
static void on_urls_checked(enum error_type type, const char *reason, size_t checked,
			    void *userdata)
{
	struct run *r = userdata;

	r->urls_checked = true;	/* the check is freed with the run: @reason is its */
	if (type != ERROR_NONE) {
		run_finish(r, JOB_HEALTH_INCOMPLETE, type, "artifact URL check before the board was powered: %s",
			   reason);
		return;
	}
	if (checked)
		run_log(r, "info", "%zu artifact URL%s answered", checked, checked > 1 ? "s" : "");
	loop_defer_again(r->next_action);
}

/* Before the first action: every artifact URL is asked for (url_check.h). */
static bool check_urls(struct run *r)
{
	int err;

	if (r->urls_checked || r->url_check)
		return r->urls_checked;	/* done, or under way */
	err = url_check_start(r->deps.loop, r->deps.http, r->deps.config, r->job, on_urls_checked,
			      r, &r->url_check);
	if (err < 0)
		run_finish(r, JOB_HEALTH_INCOMPLETE, ERROR_BUG, "cannot check the artifact URLs: %s",
			   strerror(-err));
	return false;
}

static int on_next_action(struct loop_source *s, void *ud)
{
	struct run *r = ud;

	if (r->phase == RUN_PHASE_ACTIONS && !r->action_active && check_urls(r))
		start_action(r);
	return 0;
}

static void finalize(struct run *r)
{
	const char *result = job_health_name(r->outcome.health);

	r->phase = RUN_PHASE_FINISHED;
	run_console_detach(r);
	loop_timer_set(r->job_timer, USEC_INFINITY);
	if (r->nfs_tree)
		run_log(r, "info", "removing the NFS root %s", rootfs_tree_dir(r->nfs_tree));
	run_set_nfs_tree(r, NULL);	/* the board is off: nothing mounts it any more */
	if (r->outcome.health == JOB_HEALTH_COMPLETE)
		run_log(r, "info", "job %s", result);
	else if (r->outcome.health == JOB_HEALTH_CANCELED)	/* "job canceled by gitlab" */
		run_log(r, "warning", "job %s%s", strncmp(r->error_msg, "canceled", 8) ?
			"canceled: " : "", r->error_msg);
	else
		run_log(r, "error", "job %s (%s): %s", result,
			error_type_name(r->outcome.error_type), r->error_msg);
	r->finished(r, r->userdata);
}

static void on_power_off(struct power *p, int err, const char *msg, void *ud)
{
	struct run *r = ud;

	if (err < 0) {
		run_log(r, "error", "cannot power off the board: %s", msg);
		r->outcome.board_fault = true;
		board_set_power_fault(r->board, msg);
	} else {
		run_log(r, "info", "board powered off");
	}
	finalize(r);
}

void run_finish(struct run *r, enum job_health health, enum error_type type, const char *fmt,
		...)
{
	struct power *p = board_power(r->board);
	char msg[1024];
	va_list ap;
	int err;

	if (r->phase != RUN_PHASE_ACTIONS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	end_action(r);
	r->phase = RUN_PHASE_POWER_OFF;
	loop_timer_set(r->job_timer, USEC_INFINITY);
	r->outcome.health = health;
	r->outcome.error_type = type;
	free(r->error_msg);
	r->error_msg = health == JOB_HEALTH_COMPLETE ? NULL : mask_text(r->mask, msg);
	r->outcome.error_msg = r->error_msg;
	if (r->job->session) {
		run_log(r, "info", "board left as it is for its holder");
		finalize(r);
		return;
	}
	if (!p) {
		run_log(r, "warning", "board has no power control: left as it is");
		finalize(r);
		return;
	}
	run_log(r, "info", "powering the board off");
	power_set_vars(p, NULL);	/* the job's artifacts are not the board's any more */
	err = power_run(p, POWER_OFF, on_power_off, r);
	if (err < 0) {
		run_log(r, "error", "cannot power off the board: %s", strerror(-err));
		finalize(r);
	}
}

void run_cancel(struct run *r, const char *why)
{
	run_finish(r, JOB_HEALTH_CANCELED, ERROR_NONE, "%s", why ? why : "canceled");
}

static int run_prepare_dirs(struct run *r)
{
	const struct lab_config *c = r->deps.config;
	char buf[4096];

	r->dir = joblog_job_dir(c->state_dir, r->id);
	snprintf(buf, sizeof(buf), "%s/%lld", c->tftp_root, (long long)r->id);
	r->tftp_dir = strdup(buf);
	snprintf(buf, sizeof(buf), "%lld", (long long)r->id);
	r->tftp_prefix = strdup(buf);
	if (!r->dir || !r->tftp_dir || !r->tftp_prefix)
		return -ENOMEM;
	return joblog_open(r->dir, &r->log);
}

/*
 * The job's context keys (those its device type allows, job_check_device_type())
 * as substitution variables, as they feed the device template in LAVA:
 * `console_device: ttyS2` is {CONSOLE_DEVICE}.  labd's own variables win.
 */
static int run_context_vars(struct run *r)
{
	const char *key;
	char name[64], *text;
	json_t *v;
	size_t i;
	int err = 0;

	json_object_foreach(r->job->context, key, v) {
		for (i = 0; key[i] && i < sizeof(name) - 1; i++)
			name[i] = (char)toupper((unsigned char)key[i]);
		name[i] = '\0';
		if (key[i] || kv_get(&r->vars, name) || json_is_object(v) || json_is_array(v))
			continue;
		text = json_is_string(v) ? strdup(json_string_value(v)) :
		       json_is_boolean(v) ? strdup(json_is_true(v) ? "true" : "false") :
		       json_dumps(v, JSON_ENCODE_ANY);
		err = text ? kv_set(&r->vars, name, text) : -ENOMEM;
		free(text);
		if (err)
			break;
	}
	return err;
}

static int run_init_vars(struct run *r)
{
	const struct lab_config *c = r->deps.config;
	int err;

	err = kv_set(&r->vars, "SERVER_IP", c->server_ip ? c->server_ip : "127.0.0.1");
	if (!err && !mask_empty(r->mask))
		err = kv_set(&r->vars, POWER_VAR_SECRETS, "1");
	if (!err)
		err = kv_set(&r->vars, "LABD_JOB_ID", r->tftp_prefix);
	if (!err)
		err = kv_set(&r->vars, "DEVICE", board_name(r->board));
	return err ? err : run_context_vars(r);
}

/* What the job must never see written: its secrets, the passwords it types. */
static int run_init_mask(struct run *r)
{
	const struct job *job = r->job;
	size_t i;
	int err = mask_new(&r->mask);

	for (i = 0; !err && i < job->secrets.n; i++)
		err = mask_add(r->mask, job->secrets.vals[i]);
	for (i = 0; !err && i < job->n_actions; i++)
		if (job->actions[i].kind == JOB_ACTION_BOOT &&
		    job->actions[i].boot.auto_login.password)
			err = mask_add(r->mask, job->actions[i].boot.auto_login.password);
	return err;
}

static int run_init_sources(struct run *r)
{
	struct loop *l = r->deps.loop;
	int err;

	err = loop_add_defer(l, &r->next_action, on_next_action, r);
	if (!err)
		err = loop_add_timer(l, &r->action_timer, USEC_INFINITY, on_action_timeout, r);
	if (!err)
		err = loop_add_timer(l, &r->job_timer, USEC_INFINITY, on_job_timeout, r);
	if (err)
		return err;
	loop_source_set_description(r->next_action, "run:next-action");
	loop_source_set_description(r->action_timer, "run:action-timeout");
	loop_source_set_description(r->job_timer, "run:job-timeout");
	return 0;
}

int run_start(const struct run_deps *deps, int64_t id, int attempt, struct job *job,
	      struct board *board, run_finished_fn finished, void *userdata, struct run **ret)
{
	struct run *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r) {
		job_free(job);
		return -ENOMEM;
	}
	r->deps = *deps;
	r->id = id;
	r->attempt = attempt;
	r->job = job;
	r->board = board_ref(board);
	r->finished = finished;
	r->userdata = userdata;
	r->phases = json_array();
	r->started = loop_realtime(deps->loop);
	run_overlay_init(r);
	err = run_init_mask(r);
	if (!err)
		err = run_prepare_dirs(r);
	if (!err)
		err = run_init_vars(r);
	if (!err)
		err = run_init_sources(r);
	if (!err)
		err = run_console_init(r);
	if (err < 0)
		goto err_free;
	r->job_deadline = run_now(r) + job->timeout;
	loop_timer_set(r->job_timer, r->job_deadline);
	run_console_attach(r);
	run_log(r, "info", "job %lld '%s' attempt %d on board '%s' (type '%s')", (long long)id,
		job->name, attempt, board_name(board), job->device_type);
	/* what the job's file says that labd took with a warning, or ignores */
	STRV_FOREACH(n, job->notices)
		run_log(r, strstr(*n, ": warning: ") ? "warning" : "info", "%s", *n);
	*ret = r;
	return 0;

err_free:
	log_error("job %lld: cannot start: %s", (long long)id, strerror(-err));
	r->phase = RUN_PHASE_FINISHED;
	run_free(r);
	return err;
}

struct run *run_free(struct run *r)
{
	if (!r)
		return NULL;
	if (r->phase != RUN_PHASE_FINISHED) {
		end_action(r);
		run_console_detach(r);
	}
	url_check_free(r->url_check);
	run_console_release(r);
	run_overlay_release(r);
	run_set_nfs_tree(r, NULL);
	mask_free(r->mask);
	loop_source_free(r->next_action);
	loop_source_free(r->action_timer);
	loop_source_free(r->job_timer);
	joblog_close(r->log);
	kv_release(&r->vars);
	job_free(r->job);
	board_unref(r->board);
	json_decref(r->phases);
	free(r->error_msg);
	free(r->async_msg);
	free(r->dir);
	free(r->tftp_dir);
	free(r->tftp_prefix);
	free(r);
	return NULL;
}
