// SPDX-License-Identifier: GPL-2.0-or-later
/* backend.c -- the `backends` list of labd.conf, and events and log growth fanned out to it */
#include "results/backends/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "board/lab.h"
#include "config/config.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "results/backends/upload.h"
#include "results/report.h"
#include "store/store.h"

#define BACKEND_MAX_KEYS 32
#define BACKEND_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define BACKEND_REPORT_MAX 1024		/* bytes of a reported problem */
#define BACKEND_MAX_PENDING 1024	/* queued "backend-error" events; more are only logged */

static const struct backend_ops *const backend_types[] = {
	&backend_http_ops,
	&backend_kcidb_ops,
	&backend_junit_ops,
};

#define N_TYPES (sizeof(backend_types) / sizeof(backend_types[0]))

struct pending_event {
	int64_t job_id;
	json_t *data;
	struct pending_event *next;
};

struct backends {
	struct backends_deps deps;
	struct backend **list;
	size_t n;
	struct events_listener *events_listener;
	struct events_listener *log_listener;
	struct loop_source *emit;	/* defer: emits the queued events */
	struct pending_event *pending, **pending_tail;
	size_t n_pending;
	uint64_t drain_until;
};

/* ---- common part ---- */

int backend_init(struct backend *b, const struct backend_ops *ops, const config_setting_t *group)
{
	const char *name = ops->type;

	cfg_get_string(group, "name", false, &name, NULL);
	b->ops = ops;
	b->name = strdup(name);
	b->file = strdup(cfg_file(group));
	b->line = cfg_line(group);
	return b->name && b->file ? 0 : -ENOMEM;
}

void backend_release(struct backend *b)
{
	free(b->name);
	free(b->file);
}

const struct lab_config *backend_config(const struct backend *b)
{
	return lab_current_config(b->deps->lab);
}

char *backend_state_path(struct backend *b, const char *what)
{
	char *p;

	if (asprintf(&p, "%s/%s/%s", backend_config(b)->state_dir, what, b->name) < 0)
		return NULL;
	return p;
}

char *backend_job_dir(const struct backend *b, int64_t id)
{
	return joblog_job_dir(backend_config(b)->state_dir, id);
}

char *backend_job_dir_here(const struct backend *b, int64_t id)
{
	char *dir = backend_job_dir(b, id);

	if (dir && access(dir, F_OK) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* A report backend_report_later() reads. */
struct report_due {
	struct backend *b;
	int64_t id;
	char *log_url_base;
	void (*use)(struct backend *b, int64_t id, struct report *r, int err);
};

static void report_due_free(void *userdata)
{
	struct report_due *d = userdata;

	free(d->log_url_base);
	free(d);
}

/* Nothing in a run whose reads went to the database: it runs again with their answers. */
static void report_due_run(void *userdata)
{
	struct report_due *d = userdata;
	struct store *st = d->b->deps->store;
	struct report *r = NULL;
	int err;

	err = report_load(st, backend_config(d->b), d->id, d->log_url_base, &r);
	if (store_read_pending(st)) {
		report_free(r);
		return;
	}
	d->use(d->b, d->id, err < 0 ? NULL : r, err);
}

void backend_report_later(struct backend *b, int64_t id, const char *log_url_base,
			  void (*use)(struct backend *b, int64_t id, struct report *r, int err))
{
	struct report_due *d = calloc(1, sizeof(*d));

	if (!d || (log_url_base && !(d->log_url_base = strdup(log_url_base)))) {
		free(d);
		use(b, id, NULL, -ENOMEM);
		return;
	}
	d->b = b;
	d->id = id;
	d->use = use;
	store_read_later(b->deps->store, b, report_due_run, report_due_free, d);
}

void backend_forget_reports(struct backend *b)
{
	if (b->deps)	/* NULL when only checked (labd check-config) */
		store_read_later_forget(b->deps->store, b);
}

int backend_check_url(const config_setting_t *group, const char *key, bool required,
		      const char **ret, struct diag *diag)
{
	const char *url = NULL;
	int r = cfg_get_string(group, key, required, &url, diag);

	if (r < 0)
		return r;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		const config_setting_t *s = config_setting_get_member(group, key);

		return diag_add(diag, cfg_file(s), cfg_line(s),
				"'%s' must be an http:// or https:// URL, not '%s'", key, url);
	}
	*ret = url;
	return 0;
}

int backend_get_retry_max(const config_setting_t *group, uint64_t *ret_ms, struct diag *diag)
{
	long long ms;
	int r = cfg_get_int(group, "retry_max_ms", false, UPLOAD_RETRY_MAX_MS_MIN,
			    UPLOAD_RETRY_MAX_MS_MAX, &ms, diag);

	if (r == -EINVAL)
		return r;
	if (!r)
		*ret_ms = (uint64_t)ms;
	return 0;
}

/* ---- reported problems: logged now, emitted as job events from the loop ---- */

static int on_emit(struct loop_source *s, void *ud)
{
	struct backends *set = ud;
	struct pending_event *p;

	while ((p = set->pending)) {
		set->pending = p->next;
		if (!set->pending)
			set->pending_tail = &set->pending;
		set->n_pending--;
		events_emit(set->deps.events, p->job_id, loop_realtime(set->deps.loop),
			    "backend-error", p->data);
		free(p);
	}
	return 0;
}

static void queue_event(struct backends *set, int64_t job_id, json_t *data)
{
	struct pending_event *p;

	if (!data || set->n_pending >= BACKEND_MAX_PENDING || !(p = calloc(1, sizeof(*p)))) {
		json_decref(data);
		return;
	}
	p->job_id = job_id;
	p->data = data;
	*set->pending_tail = p;
	set->pending_tail = &p->next;
	set->n_pending++;
	loop_defer_again(set->emit);
}

void backend_report(struct backend *b, int64_t job_id, const char *fmt, ...)
{
	char msg[BACKEND_REPORT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (job_id)
		log_warning("backend '%s': job %lld: %s", b->name, (long long)job_id, msg);
	else
		log_warning("backend '%s': %s", b->name, msg);
	if (job_id && b->set)
		queue_event(b->set, job_id,
			    json_pack("{s:s, s:s}", "backend", b->name, "error", msg));
}

/* ---- parsing ---- */

static const struct backend_ops *find_type(const char *type)
{
	size_t i;

	for (i = 0; i < N_TYPES; i++)
		if (!strcmp(backend_types[i]->type, type))
			return backend_types[i];
	return NULL;
}

static int check_keys(const config_setting_t *g, const struct backend_ops *ops, struct diag *diag)
{
	const char *keys[BACKEND_MAX_KEYS] = { "type", "name" };
	size_t n = 2;

	for (const char *const *k = ops->keys; k && *k && n + 1 < BACKEND_MAX_KEYS; k++)
		keys[n++] = *k;
	keys[n] = NULL;
	return cfg_check_keys(g, keys, diag);
}

static int check_name(const config_setting_t *g, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(g, "name");
	const char *name = NULL;
	int r = cfg_get_string(g, "name", false, &name, diag);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (!*name || strlen(name) >= BACKEND_NAME_MAX ||
	    strspn(name, BACKEND_NAME_CHARS) != strlen(name) || name[0] == '-')
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"backend name '%s' must be letters, digits, '_' and '-'", name);
	return 0;
}

static int parse_one(const config_setting_t *g, struct backend **ret, struct diag *diag)
{
	const struct backend_ops *ops;
	struct backend *b = NULL;
	const char *type = NULL;
	int err, r;

	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return diag_add(diag, cfg_file(g), cfg_line(g), "a backend must be a group, not %s",
				cfg_type_name(g));
	err = cfg_get_string(g, "type", true, &type, diag);
	if (err < 0)
		return err;
	ops = find_type(type);
	if (!ops)
		return diag_add(diag, cfg_file(g), cfg_line(g),
				"unknown backend type '%s' (known: http, kcidb, junit; local is always on)",
				type);
	err = check_keys(g, ops, diag);
	if (check_name(g, diag) < 0)
		err = -EINVAL;
	r = ops->parse(g, &b, diag);
	if (r < 0)
		return r;
	if (err < 0) {
		b->ops->free(b);
		return err;
	}
	*ret = b;
	return 0;
}

static bool name_taken(struct backend **list, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (list[i] && !strcmp(list[i]->name, name))
			return true;
	return false;
}

static void free_list(struct backend **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		list[i]->ops->free(list[i]);
	free(list);
}

/* Every backend of @cfg, parsed; on error nothing is returned. */
static int parse_configured(const struct lab_config *cfg, struct backend ***ret, size_t *ret_n,
			    struct diag *diag);

/* Add labd's own notify backend (the jobs' callbacks) after the configured ones. */
static int add_notify(const struct lab_config *cfg, struct backend ***list, size_t *n,
		      struct diag *diag)
{
	const config_setting_t *g = config_setting_get_member(cfg->root, "notify");
	struct backend **v, *b = NULL;
	int err;

	if (name_taken(*list, *n, "notify"))
		return diag_add(diag, cfg->path, 0,
				"backend name 'notify' is labd's own (the jobs' notify callbacks): name the backend otherwise");
	if (g && !config_setting_is_group(g))
		return diag_add(diag, cfg_file(g), cfg_line(g), "'notify' must be a group, not %s",
				cfg_type_name(g));
	err = backend_notify_ops.parse(g, &b, diag);
	if (err < 0)
		return err;
	v = realloc(*list, (*n + 2) * sizeof(*v));
	if (!v) {
		b->ops->free(b);
		return -ENOMEM;
	}
	v[(*n)++] = b;
	v[*n] = NULL;
	*list = v;
	return 0;
}

static int parse_all(const struct lab_config *cfg, struct backend ***ret, size_t *ret_n,
		     struct diag *diag)
{
	int err;

	*ret = NULL;	/* parse_configured() leaves nothing behind when it fails */
	*ret_n = 0;
	err = parse_configured(cfg, ret, ret_n, diag);
	if (!err)
		err = add_notify(cfg, ret, ret_n, diag);
	if (err < 0) {
		free_list(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return err;
}

static int parse_configured(const struct lab_config *cfg, struct backend ***ret, size_t *ret_n,
			    struct diag *diag)
{
	const config_setting_t *list = config_setting_get_member(cfg->root, "backends");
	struct backend **v;
	int i, n, err = 0;

	if (!list) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	if (!config_setting_is_aggregate(list) || config_setting_is_group(list))
		return diag_add(diag, cfg_file(list), cfg_line(list),
				"'backends' must be a list of groups, not %s", cfg_type_name(list));
	n = config_setting_length(list);
	v = calloc((size_t)n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
		struct backend *b = NULL;
		int r = parse_one(g, &b, diag);

		if (r == -ENOMEM)
			err = r;
		if (r < 0) {
			err = err ? err : r;
			continue;
		}
		if (name_taken(v, (size_t)i, b->name)) {
			err = diag_add(diag, cfg_file(g), cfg_line(g),
				       "backend name '%s' is used twice: give each backend a 'name'",
				       b->name);
			b->ops->free(b);
			continue;
		}
		v[i] = b;
	}
	if (err < 0) {
		for (i = 0; i < n; i++)
			if (v[i])
				v[i]->ops->free(v[i]);
		free(v);
		return err;
	}
	*ret = v;
	*ret_n = (size_t)n;
	return 0;
}

int backends_check(const struct lab_config *cfg, struct diag *diag)
{
	struct backend **list;
	size_t n;
	int err = parse_all(cfg, &list, &n, diag);

	if (!err)
		free_list(list, n);
	return err;
}

/* ---- fan-out ---- */

static void on_event(const struct event *ev, void *ud)
{
	struct backends *set = ud;
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->list[i]->ops->event)
			set->list[i]->ops->event(set->list[i], ev);
}

static void on_log_grew(int64_t job_id, void *ud)
{
	struct backends *set = ud;
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->list[i]->ops->log_grew)
			set->list[i]->ops->log_grew(set->list[i], job_id);
}

static int start_all(struct backends *set, struct diag *diag)
{
	size_t i;
	int err;

	for (i = 0; i < set->n; i++) {
		struct backend *b = set->list[i];

		b->deps = &set->deps;
		b->set = set;
		err = b->ops->start ? b->ops->start(b) : 0;
		if (err < 0)
			return diag_add(diag, b->file, b->line, "cannot start backend '%s': %s",
					b->name, strerror(-err));
		log_info("backend '%s' (%s) started", b->name, b->ops->type);
	}
	return 0;
}

int backends_new(const struct backends_deps *deps, struct backends **ret, struct diag *diag)
{
	struct backends *set = calloc(1, sizeof(*set));
	int err;

	if (!set)
		return -ENOMEM;
	set->deps = *deps;
	set->pending_tail = &set->pending;
	err = parse_all(lab_current_config(deps->lab), &set->list, &set->n, diag);
	if (!err)
		err = loop_add_defer(deps->loop, &set->emit, on_emit, set);
	if (!err) {
		loop_source_set_description(set->emit, "backends:report");
		err = start_all(set, diag);
	}
	if (!err && set->n)
		err = events_listen(deps->events, on_event, set, &set->events_listener);
	if (!err && set->n)
		err = events_listen_log(deps->events, on_log_grew, set, &set->log_listener);
	if (err < 0) {
		backends_free(set);
		return err;
	}
	*ret = set;
	return 0;
}

struct backends *backends_free(struct backends *set)
{
	struct pending_event *p;

	if (!set)
		return NULL;
	events_unlisten(set->events_listener);
	events_unlisten(set->log_listener);
	free_list(set->list, set->n);
	while ((p = set->pending)) {
		set->pending = p->next;
		json_decref(p->data);
		free(p);
	}
	loop_source_free(set->emit);
	free(set);
	return NULL;
}

bool backends_draining(struct backends *set, uint64_t now)
{
	size_t i;

	if (!set)
		return false;
	if (!set->drain_until)
		set->drain_until = now + BACKENDS_DRAIN_GRACE;
	if (now >= set->drain_until)
		return false;
	for (i = 0; i < set->n; i++)
		if (set->list[i]->ops->busy && set->list[i]->ops->busy(set->list[i]))
			return true;
	return false;
}

int backends_stats(struct backends *set, int (*fn)(const struct backend_stats *bs, void *ud),
		   void *ud)
{
	size_t i;
	int r = 0;

	for (i = 0; set && r >= 0 && i < set->n; i++) {
		struct backend_stats bs = { .name = set->list[i]->name };

		if (!set->list[i]->ops->stats)
			continue;
		set->list[i]->ops->stats(set->list[i], &bs);
		r = fn(&bs, ud);
	}
	return r < 0 ? r : 0;
}
