// SPDX-License-Identifier: GPL-2.0-or-later
/* job.c -- job definitions: the top-level schema walker, device type checks, timeouts */
#include "job/job.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job_doc.h"
#include "job/job_walk.h"

/*
 * LAVA keys that labd accepts without acting on them, and LAVA keys it
 * rejects as unsupported (anything else unknown is an error too).  A key is
 * only ignored when it cannot change what happens on the board.
 *
 *   key                        treatment    why
 *   -------------------------  -----------  ----------------------------------------------
 *   visibility                 read         public, personal or {group: [...]}; labd has no
 *                                           per-user views, the value is only shown
 *   urlspec use_cache          ignored      asks LAVA to bypass its download cache;
 *                                           labd has none (job_deploy.c)
 *   notify                     read         HTTP callbacks (job_notify.c); email and IRC
 *                                           recipients are refused
 *   protocols                  refused      multinode, VLANs, xnbd, LXC: after every other
 *                                           check, so a multinode job's other mistakes show
 *   secrets                    read         exported to the test definitions, masked
 *                                           everywhere labd writes (secret.h)
 *   environment                unsupported  jobs do not set the lab host's environment
 *   reboot_to_fastboot         unsupported  boards are not put back into fastboot mode
 *   timeouts.queue             read         a job still queued after it is canceled
 *   action role                read         only in multinode jobs, which are refused
 *   action protocols           unsupported  multinode, VLANs and xnbd
 *   action connection-namespace unsupported one console connection per job
 *   action repeat              unsupported  submit the job again to repeat it
 *   action failure_retry_interval unsupported retries start at once
 *   action namespace           accepted when every action uses the same one (an
 *                              action without one is in LAVA's 'common'); labd
 *                              runs one board connection per job
 *   context extra_options      read         QEMU options of job_qemu.c's set, within the
 *                                           device type's limits (memory too)
 *
 * Per-action keys are listed in job_deploy.c, job_boot.c and job_test.c.
 */

#define JOB_DEFAULT_PRIORITY 50
#define JOB_DEFAULT_NAMESPACE "common"

static const struct job_doc_key job_keys[] = {
	{ "job_name", JOB_KEY_KNOWN, NULL },
	{ "device_type", JOB_KEY_KNOWN, NULL },
	{ "tags", JOB_KEY_KNOWN, NULL },
	{ "priority", JOB_KEY_KNOWN, NULL },
	{ "timeouts", JOB_KEY_KNOWN, NULL },
	{ "context", JOB_KEY_KNOWN, NULL },
	{ "metadata", JOB_KEY_KNOWN, NULL },
	{ "infrastructure_retries", JOB_KEY_KNOWN, NULL },
	{ "actions", JOB_KEY_KNOWN, NULL },
	{ "visibility", JOB_KEY_KNOWN, NULL },
	{ "notify", JOB_KEY_KNOWN, NULL },
	{ "protocols", JOB_KEY_KNOWN, NULL },
	{ "secrets", JOB_KEY_KNOWN, NULL },
	{ "job_timeout", JOB_KEY_UNSUPPORTED, "LAVA's first job format: use timeouts.job" },
	{ "action_timeout", JOB_KEY_UNSUPPORTED, "LAVA's first job format: use timeouts.action" },
	{ "target_group", JOB_KEY_UNSUPPORTED, "multinode jobs are not supported" },
	{ "target", JOB_KEY_UNSUPPORTED, "multinode jobs are not supported" },
	{ "environment", JOB_KEY_UNSUPPORTED, "jobs do not set the lab host's environment" },
	{ "reboot_to_fastboot", JOB_KEY_UNSUPPORTED,
	  "boards are not put back into fastboot mode after a job" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key job_timeout_keys[] = {
	{ "job", JOB_KEY_KNOWN, NULL },
	{ "action", JOB_KEY_KNOWN, NULL },
	{ "actions", JOB_KEY_KNOWN, NULL },
	{ "connection", JOB_KEY_KNOWN, NULL },
	{ "connections", JOB_KEY_KNOWN, NULL },
	{ "queue", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

const struct job_doc_key job_action_keys[] = {
	{ "timeout", JOB_KEY_KNOWN, NULL },
	{ "timeouts", JOB_KEY_KNOWN, NULL },
	{ "failure_retry", JOB_KEY_KNOWN, NULL },
	{ "namespace", JOB_KEY_KNOWN, NULL },
	{ "role", JOB_KEY_KNOWN, NULL },
	{ "protocols", JOB_KEY_UNSUPPORTED,
	  "multinode, VLAN and xnbd protocols are not supported" },
	{ "connection-namespace", JOB_KEY_UNSUPPORTED, "a job has one console connection" },
	{ "repeat", JOB_KEY_UNSUPPORTED, "submit the job again to repeat it" },
	{ "failure_retry_interval", JOB_KEY_UNSUPPORTED, "retries start at once" },
	{ NULL, 0, NULL },
};

/* Names */

const char *job_action_kind_name(enum job_action_kind k)
{
	static const char *const names[] = { "deploy", "boot", "test" };

	return (unsigned)k < 3 ? names[k] : "unknown";
}

const char *deploy_to_name(enum deploy_to t)
{
	static const char *const names[] = { "none", "tftp", "tmpfs", "sdmux", "fastboot", "nfs" };

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

const char *boot_method_name(enum boot_method m)
{
	static const char *const names[] = {
		"minimal", "u-boot", "qemu", "fastboot", "barebox", "grub", "grub-efi", "ipxe",
		"depthcharge", "uefi-menu", "bootloader"
	};

	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "unknown";
}

int boot_method_bootloader(enum boot_method m)
{
	switch (m) {
	case BOOT_METHOD_UBOOT:
		return BOOTLOADER_UBOOT;
	case BOOT_METHOD_BAREBOX:
		return BOOTLOADER_BAREBOX;
	case BOOT_METHOD_GRUB:
		return BOOTLOADER_GRUB;
	case BOOT_METHOD_GRUB_EFI:
		return BOOTLOADER_GRUB_EFI;
	case BOOT_METHOD_IPXE:
		return BOOTLOADER_IPXE;
	case BOOT_METHOD_DEPTHCHARGE:
		return BOOTLOADER_DEPTHCHARGE;
	case BOOT_METHOD_UEFI_MENU:
		return BOOTLOADER_UEFI_MENU;
	default:
		return -1;
	}
}

const char *test_kind_name(enum test_kind k)
{
	static const char *const names[] = { "interactive", "monitors", "definitions" };

	return (unsigned)k < 3 ? names[k] : "unknown";
}

/* Life cycle */

static void job_action_release(struct job_action *a)
{
	kv_release(&a->timeouts);
	switch (a->kind) {
	case JOB_ACTION_DEPLOY:
		job_deploy_release(&a->deploy);
		break;
	case JOB_ACTION_BOOT:
		job_boot_release(&a->boot);
		break;
	case JOB_ACTION_TEST:
		job_test_release(&a->test);
		break;
	}
}

struct job *job_free(struct job *job)
{
	size_t i;

	if (!job)
		return NULL;
	for (i = 0; i < job->n_actions; i++)
		job_action_release(&job->actions[i]);
	free(job->actions);
	free(job->file);
	free(job->name);
	free(job->device_type);
	strv_free(job->tags);
	kv_release(&job->stage_timeouts);
	kv_release(&job->connection_timeouts);
	json_decref(job->context);
	job_qemu_release(&job->qemu_context);
	json_decref(job->metadata);
	kv_release(&job->secrets);
	job_notify_release(&job->notify);
	free(job->visibility);
	json_decref(job->line_map);
	strv_free(job->notices);
	free(job);
	return NULL;
}

/* Top level */

/* Report @usec under @key when it exceeds the whole job's timeout. */
static int job_check_timeout(struct job_doc *doc, const struct job *job, const char *key,
			     uint64_t usec)
{
	if (!job->timeout || usec <= job->timeout)
		return 0;
	return job_doc_error(doc, key, "timeout '%s' (%" PRIu64 " s) is longer than the job timeout (%" PRIu64 " s)",
			     key, usec / 1000000, job->timeout / 1000000);
}

/* A mapping {stage-name: timeout} under @key, into @ret (usec as decimal strings). */
static int job_walk_stage_timeouts(struct job_doc *doc, const json_t *obj, const char *key,
				   const struct job *job, struct kv *ret)
{
	char buf[24];
	const char *name;
	uint64_t usec;
	json_t *map, *v;
	size_t mark;
	int r = job_doc_get(doc, obj, key, JSON_OBJECT, false, &map);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, key);
	json_object_foreach(map, name, v) {
		if (job_doc_get_timeout(doc, map, name, &usec) <= 0 ||
		    job_check_timeout(doc, job, name, usec) < 0) {
			r = -EINVAL;
			continue;
		}
		snprintf(buf, sizeof(buf), "%" PRIu64, usec);
		if (kv_set(ret, name, buf) < 0)
			r = job_doc_nomem(doc);
	}
	job_doc_leave(doc, mark);
	return r;
}

static int job_walk_timeouts(struct job_doc *doc, struct job *job)
{
	json_t *t;
	size_t mark;
	int r = job_doc_get(doc, doc->root, "timeouts", JSON_OBJECT, true, &t);

	job->action_timeout = JOB_DEFAULT_ACTION_TIMEOUT;
	job->connection_timeout = JOB_DEFAULT_CONNECTION_TIMEOUT;
	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "timeouts");
	job_doc_check_keys(doc, t, job_timeout_keys, NULL);
	if (!job_doc_get_timeout(doc, t, "job", &job->timeout))
		job_doc_error(doc, NULL, "missing required key 'job'");
	if (job_doc_get_timeout(doc, t, "action", &job->action_timeout) > 0)
		job_check_timeout(doc, job, "action", job->action_timeout);
	if (job_doc_get_timeout(doc, t, "connection", &job->connection_timeout) > 0)
		job_check_timeout(doc, job, "connection", job->connection_timeout);
	job_walk_stage_timeouts(doc, t, "actions", job, &job->stage_timeouts);
	job_walk_stage_timeouts(doc, t, "connections", job, &job->connection_timeouts);
	/* how long the job may wait for a board: not bounded by the job's own timeout */
	job_doc_get_timeout(doc, t, "queue", &job->queue_timeout);
	job_doc_leave(doc, mark);
	return 0;
}

static int job_walk_priority(struct job_doc *doc, struct job *job)
{
	static const char *const names[] = { "low", "medium", "high" };
	json_t *v = json_object_get(doc->root, "priority");
	size_t i;

	job->priority = JOB_DEFAULT_PRIORITY;
	if (!v)
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 100) {
		job->priority = (int)json_integer_value(v);
		return 0;
	}
	for (i = 0; json_is_string(v) && i < 3; i++) {
		if (!strcmp(json_string_value(v), names[i])) {
			job->priority = (int)i * 50;
			return 0;
		}
	}
	return job_doc_error(doc, "priority", "'priority' must be high, medium, low or 0 to 100");
}

static int job_walk_context(struct job_doc *doc, struct job *job)
{
	const char *key;
	json_t *ctx = NULL, *v;
	size_t mark;
	int r = job_doc_get(doc, doc->root, "context", JSON_OBJECT, false, &ctx);

	job->context = ctx ? json_deep_copy(ctx) : json_object();
	if (!job->context)
		return job_doc_nomem(doc);
	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "context");
	json_object_foreach(ctx, key, v) {
		if (!strcmp(key, "extra_options") || !strcmp(key, "memory"))
			r = job_qemu_context(doc, key, v, &job->qemu_context) < 0 ? -EINVAL : r;
		else if (!strcmp(key, "extra_kernel_args") && !json_is_string(v))
			r = job_doc_error(doc, key, "'%s' must be a string, not %s", key,
					  job_doc_type_name(v));
		else if (!json_is_string(v) && !json_is_number(v) && !json_is_boolean(v))
			r = job_doc_error(doc, key, "'%s' must be a string, number or boolean, not %s",
					  key, job_doc_type_name(v));
		else if ((!strcmp(key, "bootloader_prompt") || !strcmp(key, "interrupt_prompt")) &&
			 json_is_string(v) && job_doc_regex(doc, key, json_string_value(v), NULL) < 0)
			r = -EINVAL;	/* the bootloader methods wait for them */
	}
	job_doc_leave(doc, mark);
	return r;
}

/* LAVA: a multinode job names no device_type and gives each action a role. */
static bool job_is_multinode(const struct job_doc *doc)
{
	return json_object_get(json_object_get(doc->root, "protocols"), "lava-multinode");
}

/* secrets: {NAME: value}; NAME becomes a shell variable of the test definitions. */
static int job_walk_secrets(struct job_doc *doc, struct job *job)
{
	const char *name;
	json_t *map, *v;
	size_t mark;
	char *s;
	int r = job_doc_get(doc, doc->root, "secrets", JSON_OBJECT, false, &map);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "secrets");
	json_object_foreach(map, name, v) {
		if (!job_doc_is_name(name, JOB_MAX_SECRET_NAME, "_") || (*name >= '0' && *name <= '9')) {
			r = job_doc_error(doc, name, "invalid secret name '%.100s': use letters, digits and '_' (it becomes a shell variable)",
					  name);
			continue;
		}
		if (!json_is_string(v) && !json_is_number(v) && !json_is_boolean(v)) {
			r = job_doc_error(doc, name, "secret '%s' must be a string, not %s", name,
					  job_doc_type_name(v));
			continue;
		}
		s = job_doc_scalar_str(v);
		if (!s || kv_set(&job->secrets, name, s) < 0)
			r = job_doc_nomem(doc);
		free(s);
	}
	job_doc_leave(doc, mark);
	return r;
}

/* visibility: public | personal | {group: [names]}; labd only shows it. */
static int job_walk_visibility(struct job_doc *doc, struct job *job)
{
	json_t *v = json_object_get(doc->root, "visibility"), *groups = NULL;
	const char *s = json_string_value(v);
	size_t mark;

	if (!v)
		return 0;
	if (s && (!strcmp(s, "public") || !strcmp(s, "personal"))) {
		job->visibility = strdup(s);
		return job->visibility ? 0 : job_doc_nomem(doc);
	}
	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    !(groups = json_object_get(v, "group")))
		return job_doc_error(doc, "visibility", "'visibility' must be public, personal or {group: [names]}");
	mark = job_doc_enter(doc, "visibility");
	if (!json_is_array(groups) || !json_array_size(groups))
		job_doc_error(doc, "group", "'group' must be a list of group names");
	job_doc_leave(doc, mark);
	job->visibility = strdup("group");
	return job->visibility ? 0 : job_doc_nomem(doc);
}

/*
 * protocols: refused, but last, so that a multinode job gets every other
 * mistake reported too (LAVA's multinode jobs name no device_type and give
 * their actions a role: both are accepted there).
 */
static int job_walk_protocols(struct job_doc *doc)
{
	static const struct job_doc_key protocol_keys[] = {
		{ "lava-multinode", JOB_KEY_UNSUPPORTED,
		  "multinode jobs are not supported: labd runs a job on one board" },
		{ "lava-vland", JOB_KEY_UNSUPPORTED, "VLANs are not supported" },
		{ "lava-xnbd", JOB_KEY_UNSUPPORTED, "NBD root file systems are not supported" },
		{ "lava-lxc", JOB_KEY_UNSUPPORTED, "LXC containers are not supported" },
		{ NULL, 0, NULL },
	};
	json_t *p;
	size_t mark;
	int r = job_doc_get(doc, doc->root, "protocols", JSON_OBJECT, false, &p);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "protocols");
	r = job_doc_check_keys(doc, p, protocol_keys, NULL);
	job_doc_leave(doc, mark);
	return r;
}

static int job_check_name(struct job_doc *doc, const char *name)
{
	const char *p;

	if (strlen(name) > JOB_MAX_NAME)
		return job_doc_error(doc, "job_name", "'job_name' is longer than %d bytes",
				     JOB_MAX_NAME);
	for (p = name; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return job_doc_error(doc, "job_name",
					     "'job_name' must not contain control characters");
	return 0;
}

static int job_walk_header(struct job_doc *doc, struct job *job)
{
	json_t *meta = NULL;
	long long n = 0;

	if (job_doc_dup_str(doc, doc->root, "job_name", true, &job->name) > 0)
		job_check_name(doc, job->name);
	job_doc_dup_str(doc, doc->root, "device_type", !job_is_multinode(doc), &job->device_type);
	job_doc_get_strv(doc, doc->root, "tags", &job->tags);
	job_walk_priority(doc, job);
	job_walk_timeouts(doc, job);
	job_walk_context(doc, job);
	job_doc_get(doc, doc->root, "metadata", JSON_OBJECT, false, &meta);
	job->metadata = meta ? json_deep_copy(meta) : json_object();
	if (!job->metadata)
		return job_doc_nomem(doc);
	job_doc_get_int(doc, doc->root, "infrastructure_retries", 0,
			JOB_MAX_INFRASTRUCTURE_RETRIES, &n);
	job->infrastructure_retries = (unsigned)n;
	job_walk_secrets(doc, job);
	job_walk_visibility(doc, job);
	if (json_object_get(doc->root, "notify"))
		job->has_notify = job_notify_parse(doc, doc->root, &job->notify) == 0;
	return 0;
}

/* Actions */

/* Every action must use the namespace of the first (@first, set on the first call). */
static int job_walk_namespace(struct job_doc *doc, const json_t *obj, const char **first)
{
	const char *ns = JOB_DEFAULT_NAMESPACE;

	if (job_doc_get_str(doc, obj, "namespace", false, &ns) < 0)
		return -EINVAL;
	if (!*first)
		*first = ns;
	if (strcmp(ns, *first))
		return job_doc_error(doc, "namespace", "unsupported namespace '%.100s': every action must use the same namespace ('%.100s'), labd runs one board connection per job",
				     ns, *first);
	return 0;
}

/* The keys every action may carry. */
static int job_walk_action_common(struct job_doc *doc, const struct job *job,
				  const json_t *obj, struct job_action *a, const char **ns)
{
	long long retry = 1;

	a->timeout = job->action_timeout;
	if (job_doc_get_timeout_skip(doc, obj, "timeout", &a->timeout, &a->timeout_skip) > 0)
		job_check_timeout(doc, job, "timeout", a->timeout);
	job_walk_stage_timeouts(doc, obj, "timeouts", job, &a->timeouts);
	job_doc_get_int(doc, obj, "failure_retry", 1, JOB_MAX_FAILURE_RETRY, &retry);
	a->failure_retry = (unsigned)(retry - 1);
	if (json_object_get(obj, "role") && !job_is_multinode(doc))
		job_doc_error(doc, "role", "'role' only applies to multinode jobs (protocols: lava-multinode)");
	return job_walk_namespace(doc, obj, ns);
}

static int job_walk_action_body(struct job_doc *doc, const struct job *job, const char *kind,
				const json_t *body, struct job_action *a)
{
	if (!strcmp(kind, "deploy")) {
		a->kind = JOB_ACTION_DEPLOY;
		return job_deploy_parse(doc, body, &a->deploy);
	}
	if (!strcmp(kind, "boot")) {
		a->kind = JOB_ACTION_BOOT;
		return job_boot_parse(doc, body, job, &a->boot);
	}
	a->kind = JOB_ACTION_TEST;
	return job_test_parse(doc, body, &a->test);
}

static int job_walk_action(struct job_doc *doc, const struct job *job, const json_t *item,
			   struct job_action *a, const char **ns)
{
	const char *kind;
	json_t *body;
	size_t mark;
	int r;

	a->line = job_doc_line(doc, NULL);
	if (!json_is_object(item) || json_object_size(item) != 1)
		return job_doc_error(doc, NULL, "an action must be a mapping with one key: deploy, boot or test");
	kind = json_object_iter_key(json_object_iter((json_t *)item));
	body = json_object_get(item, kind);
	if (!strcmp(kind, "command"))
		return job_doc_error(doc, kind, "unsupported action 'command': jobs cannot run commands on the lab host");
	if (strcmp(kind, "deploy") && strcmp(kind, "boot") && strcmp(kind, "test"))
		return job_doc_error(doc, kind, "unknown action '%.100s' (expected deploy, boot or test)",
				     kind);
	mark = job_doc_enter(doc, kind);
	if (!json_is_object(body)) {
		r = job_doc_error(doc, NULL, "must be a mapping, not %s", job_doc_type_name(body));
	} else {
		r = job_walk_action_common(doc, job, body, a, ns);
		if (job_walk_action_body(doc, job, kind, body, a) < 0)
			r = -EINVAL;
	}
	job_doc_leave(doc, mark);
	return r;
}

static int job_walk_actions(struct job_doc *doc, struct job *job)
{
	const char *ns = NULL;
	json_t *list, *item;
	size_t i, mark;
	int r = job_doc_get(doc, doc->root, "actions", JSON_ARRAY, true, &list);

	if (r <= 0)
		return r;
	if (!json_array_size(list))
		return job_doc_error(doc, "actions", "'actions' must not be empty");
	if (json_array_size(list) > JOB_MAX_ACTIONS)
		return job_doc_error(doc, "actions", "more than %d actions", JOB_MAX_ACTIONS);
	job->actions = calloc(json_array_size(list), sizeof(*job->actions));
	if (!job->actions)
		return job_doc_nomem(doc);
	mark = job_doc_enter(doc, "actions");
	json_array_foreach(list, i, item) {
		size_t m = job_doc_enter_index(doc, i);

		job->n_actions++;
		job_walk_action(doc, job, item, &job->actions[i], &ns);
		job_doc_leave(doc, m);
	}
	job_doc_leave(doc, mark);
	return 0;
}

static int job_walk(struct job_doc *doc, struct job *job)
{
	if (!doc->root)
		return job_doc_error_at(doc, 1, "empty job definition");
	if (!json_is_object(doc->root))
		return job_doc_error(doc, NULL, "a job must be a mapping, not %s",
				     job_doc_type_name(doc->root));
	job_doc_check_keys(doc, doc->root, job_keys, NULL);
	job_walk_header(doc, job);
	job_walk_actions(doc, job);
	return job_walk_protocols(doc);
}

static enum job_format job_guess_format(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!strchr(" \t\r\n", text[i]) || !text[i])
			return text[i] == '{' ? JOB_FORMAT_JSON : JOB_FORMAT_YAML;
	return JOB_FORMAT_YAML;
}

/* Load @text into @doc and walk it into @job. */
static void job_load(struct job_doc *doc, struct job *job, const char *text, size_t len,
		     enum job_format fmt)
{
	int r;

	if (fmt == JOB_FORMAT_AUTO)
		fmt = job_guess_format(text, len);
	if (fmt == JOB_FORMAT_JSON)
		r = job_json_load(doc, text, len);
	else
		r = job_yaml_load(doc, text, len, false);
	if (!r)
		r = job_doc_check_shape(doc);
	if (!r)
		job_walk(doc, job);
	job->line_map = json_pack("{sOsO}", "lines", doc->lines, "aliases", doc->aliases);
	if (!job->line_map)
		job_doc_nomem(doc);
}

int job_parse(const char *text, size_t len, const char *filename, enum job_format fmt,
	      struct job **ret, struct diag *diag)
{
	struct diag notices = DIAG_INIT;
	struct job_doc doc;
	struct job *job;
	int r;

	if (len > JOB_MAX_SIZE) {
		diag_add(diag, filename, 0, "job definition is larger than %d bytes", JOB_MAX_SIZE);
		return -E2BIG;
	}
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->file = strdup(filename ? filename : "<input>");
	if (!job->file || job_doc_init(&doc, job->file) < 0) {
		job_free(job);
		return -ENOMEM;
	}
	doc.notices = &notices;
	job_load(&doc, job, text ? text : "", text ? len : 0, fmt);
	r = job_doc_finish(&doc, diag);
	job->n_warnings = (unsigned)doc.n_warnings;
	for (size_t i = 0; !r && i < notices.n; i++)
		r = strv_push(&job->notices, notices.msgs[i]);
	diag_release(&notices);
	if (r < 0) {
		job_free(job);
		return r;
	}
	*ret = job;
	return 0;
}

/* Timeouts for the runner */

uint64_t job_stage_timeout(const struct job *job, const struct job_action *a,
			   const char *stage, uint64_t fallback)
{
	const char *v = a ? kv_get(&a->timeouts, stage) : NULL;

	if (!v && job)
		v = kv_get(&job->stage_timeouts, stage);
	return v ? strtoull(v, NULL, 10) : fallback;
}

uint64_t job_connection_timeout(const struct job *job, const char *stage)
{
	const char *v = kv_get(&job->connection_timeouts, stage);

	return v ? strtoull(v, NULL, 10) : job->connection_timeout;
}

/* Device type checks */

/* Report "PATH: cause" at the line of PATH.KEY (of PATH if @key is NULL). */
static int job_type_error(const struct job *job, struct job_doc *doc, const char *path,
			  const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int job_type_error(const struct job *job, struct job_doc *doc, const char *path,
			  const char *key, const char *fmt, ...)
{
	struct strbuf where = STRBUF_INIT, msg = STRBUF_INIT;
	const json_t *lines = json_object_get(job->line_map, "lines");
	const json_t *aliases = json_object_get(job->line_map, "aliases");
	va_list ap;
	int r;

	strbuf_addf(&where, "%s%s%s", path, *path && key ? "." : "", key ? key : "");
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	r = job_doc_error_at(doc, job_doc_path_line(lines, aliases, where.buf), "%s%s%s", path,
			     *path ? ": " : "", msg.buf);
	strbuf_release(&where);
	strbuf_release(&msg);
	return r;
}

/* "tftp, tmpfs" or "none" */
static char *job_type_list(char *const *v)
{
	return v ? strv_join(v, ", ") : strdup("none");
}

/* @what: "deploy" or "boot", named by @key in the action; @name: the job's method. */
static int job_check_method(const struct job *job, const struct device_type *type,
			    struct job_doc *doc, const char *path, const char *key,
			    const char *what, char *const *supported, const char *name)
{
	char *list;
	int r;

	if (strv_contains(supported, name))
		return 0;
	list = job_type_list(supported);
	r = job_type_error(job, doc, path, key,
			   "device type '%s' does not support %s method '%s' (supported: %s)",
			   type->name, what, name, list ? list : "?");
	free(list);
	return r;
}

/* The boot method driving bootloader @bl ("u-boot" for BOOTLOADER_UBOOT). */
static const char *bootloader_method_name(int bl)
{
	int m;

	for (m = 0; m < BOOT_METHOD_BOOTLOADER; m++)
		if (boot_method_bootloader((enum boot_method)m) == bl)
			return boot_method_name((enum boot_method)m);
	return "unknown";
}

/* A bootloader method: the command set the job names (or the default) must exist. */
static int job_check_commands(const struct job *job, const struct device_type *type,
			      struct job_doc *doc, const char *path, const struct job_boot *b)
{
	const struct bootloader_params *p = &type->bootloaders[b->bootloader];
	const char *method = boot_method_name(b->method);

	if (b->commands)
		return 0;
	if (b->commands_name && !kv_get(&p->command_sets, b->commands_name)) {
		struct strbuf list = STRBUF_INIT;
		size_t i;
		int r;

		for (i = 0; i < p->command_sets.n; i++)
			strbuf_addf(&list, "%s%s", i ? ", " : "", p->command_sets.keys[i]);
		r = job_type_error(job, doc, path, "commands",
				   "device type '%s' has no %s command set '%s' (defined: %s)",
				   type->name, method, b->commands_name,
				   list.len ? list.buf : "none");
		strbuf_release(&list);
		return r;
	}
	if (!b->commands_name && !p->default_commands && b->method != BOOT_METHOD_BOOTLOADER)
		return job_type_error(job, doc, path, NULL,
				      "device type '%s' has no default %s command set: name one with 'commands'",
				      type->name, method);
	return 0;
}

/* Whether @image matches one of @patterns ("kernelci/qemu", "kernelci/qemu:*"). */
static bool job_image_mapped(char *const *patterns, const char *image)
{
	STRV_FOREACH(p, patterns)
		if (!fnmatch(*p, image, 0))
			return true;
	return false;
}

/* The images deployed for a qemu boot must be ones the device type lets jobs choose. */
static int job_check_qemu_images(const struct job *job, const struct device_type *type,
				 struct job_doc *doc)
{
	const struct job_deploy *d;
	size_t i, j;
	int r = 0;

	for (i = 0; i < job->n_actions; i++) {
		if (job->actions[i].kind != JOB_ACTION_DEPLOY)
			continue;
		d = &job->actions[i].deploy;
		for (j = 0; j < d->n_artifacts; j++) {
			/* an NFS root's overlays go into the root, not to QEMU */
			if (d->artifacts[j].into_root ||
			    strv_contains(type->qemu.allowed_images, d->artifacts[j].label))
				continue;
			r = job_doc_error_at(doc, d->artifacts[j].line,
					     "actions[%zu].deploy: device type '%s' does not let jobs deploy '%s' for QEMU",
					     i, type->name, d->artifacts[j].label);
		}
	}
	return r;
}

/* What image_arg or extra_options give QEMU (@q, from @where) within the type's limits. */
static int job_check_qemu_args(const struct device_type *type, struct job_doc *doc,
			       const char *where, const struct job_qemu_args *q)
{
	const struct qemu_params *p = &type->qemu;
	int r = 0;

	if (q->append && !p->append_allowed)
		r = job_doc_error_at(doc, q->append_line, "%s: device type '%s' does not let jobs change the kernel command line (-append)",
				     where, type->name);
	if (q->memory_mib && !p->max_memory)
		r = job_doc_error_at(doc, q->memory_line, "%s: device type '%s' does not let jobs choose QEMU's memory (qemu.max_memory)",
				     where, type->name);
	else if ((long long)q->memory_mib > p->max_memory)
		r = job_doc_error_at(doc, q->memory_line, "%s: %llu MiB of memory asked for, device type '%s' lets jobs have up to %lld MiB (qemu.max_memory)",
				     where, (unsigned long long)q->memory_mib, type->name, p->max_memory);
	if (q->cpus && !p->max_cpus)
		r = job_doc_error_at(doc, q->cpus_line, "%s: device type '%s' does not let jobs choose QEMU's CPUs (qemu.max_cpus)",
				     where, type->name);
	else if (q->cpus > p->max_cpus)
		r = job_doc_error_at(doc, q->cpus_line, "%s: %u CPUs asked for, device type '%s' lets jobs have up to %lld (qemu.max_cpus)",
				     where, q->cpus, type->name, p->max_cpus);
	return r;
}

/* docker: {image} on the boot: an image the type maps to its own QEMU; context arch. */
static int job_check_qemu_runs(const struct job *job, const struct device_type *type,
			       struct job_doc *doc, const char *path, const struct job_boot *b)
{
	const char *arch = json_string_value(json_object_get(job->context, "arch"));
	int r = 0;
	char *list;

	if (b->qemu_image && !job_image_mapped(type->qemu.container_images, b->qemu_image))
		r = job_type_error(job, doc, path, "docker.image",
				   "device type '%s' does not run QEMU from container image '%s': containers are not supported, and the type maps no such image to its own QEMU (qemu.container_images)",
				   type->name, b->qemu_image);
	if (arch && type->qemu.arch && !strv_contains(type->qemu.arch, arch)) {
		list = strv_join(type->qemu.arch, ", ");
		r = job_type_error(job, doc, "context", "arch",
				   "device type '%s' runs arch %s, not '%s' (qemu.arch)", type->name,
				   list ? list : "?", arch);
		free(list);
	}
	return r;
}

static int job_check_qemu(const struct job *job, const struct device_type *type,
			  struct job_doc *doc, const char *path, const struct job_boot *b)
{
	char where[48];
	int r = 0;

	if (!type->has_qemu)
		return job_type_error(job, doc, path, "method",
				      "device type '%s' has no QEMU settings", type->name);
	if (b->qemu_append && !type->qemu.append_allowed)
		r = job_type_error(job, doc, "context", "extra_kernel_args",
				   "device type '%s' does not let jobs change the kernel command line",
				   type->name);
	if (job_check_qemu_images(job, type, doc) < 0)
		r = -EINVAL;
	if (job_check_qemu_args(type, doc, "context", &job->qemu_context) < 0)
		r = -EINVAL;
	if (job_check_qemu_runs(job, type, doc, path, b) < 0)
		r = -EINVAL;
	for (size_t i = 0; i < job->n_actions; i++) {
		if (job->actions[i].kind != JOB_ACTION_DEPLOY)
			continue;
		snprintf(where, sizeof(where), "actions[%zu].deploy", i);
		if (job_check_qemu_args(type, doc, where, &job->actions[i].deploy.qemu) < 0)
			r = -EINVAL;
	}
	return r;
}

static int job_check_action(const struct job *job, const struct device_type *type,
			    struct job_doc *doc, size_t i, bool *qemu)
{
	const struct job_action *a = &job->actions[i];
	char path[48];

	snprintf(path, sizeof(path), "actions[%zu].%s", i, job_action_kind_name(a->kind));
	if (a->kind == JOB_ACTION_DEPLOY)
		return job_check_method(job, type, doc, path, "to", "deploy",
					type->deploy_methods, deploy_to_name(a->deploy.to));
	if (a->kind != JOB_ACTION_BOOT)
		return 0;
	if (a->boot.method == BOOT_METHOD_BOOTLOADER) {
		/* its bootloader must be one the type boots through */
		if (job_check_method(job, type, doc, path, "bootloader", "boot", type->boot_methods,
				     bootloader_method_name(a->boot.bootloader)) < 0)
			return -EINVAL;
	} else if (job_check_method(job, type, doc, path, "method", "boot", type->boot_methods,
				    boot_method_name(a->boot.method)) < 0) {
		return -EINVAL;
	}
	if (a->boot.bootloader >= 0)
		return job_check_commands(job, type, doc, path, &a->boot);
	if (a->boot.method == BOOT_METHOD_QEMU && !*qemu) {
		*qemu = true;
		return job_check_qemu(job, type, doc, path, &a->boot);
	}
	return 0;
}

static int job_check_context(const struct job *job, const struct device_type *type,
			     struct job_doc *doc)
{
	const char *key;
	json_t *v;
	int r = 0;

	json_object_foreach(job->context, key, v) {
		if (!strcmp(key, "extra_kernel_args") || !strcmp(key, "extra_nfsroot_args") ||
		    strv_contains(type->context_allowed, key))
			continue;
		r = job_type_error(job, doc, "context", key,
				   "device type '%s' does not allow context key '%s'", type->name,
				   key);
	}
	return r;
}

int job_check_device_type(const struct job *job, const struct device_type *type,
			  struct diag *diag)
{
	struct job_doc doc;
	bool qemu = false;
	size_t i;

	if (job_doc_init(&doc, job->file) < 0)
		return -ENOMEM;
	if (strcmp(job->device_type, type->name))
		job_type_error(job, &doc, "", "device_type", "job is for device type '%s', not '%s'",
			       job->device_type, type->name);
	job_check_context(job, type, &doc);
	for (i = 0; i < job->n_actions; i++)
		job_check_action(job, type, &doc, i, &qemu);
	return job_doc_finish(&doc, diag);
}

/* Lab checks */

static bool job_git_allowed(const char *url, char *const *allow)
{
	STRV_FOREACH(p, allow)
		if (!strncmp(url, *p, strlen(*p)))
			return true;
	return false;
}

int job_check_git_allow(const struct job *job, char *const *allow, struct diag *diag)
{
	struct job_doc doc;
	char path[96];
	size_t i, j;

	if (job_doc_init(&doc, job->file) < 0)
		return -ENOMEM;
	for (i = 0; i < job->n_actions; i++) {
		const struct job_action *a = &job->actions[i];

		if (a->kind != JOB_ACTION_TEST)
			continue;
		for (j = 0; j < a->test.n_definitions; j++) {
			const struct job_testdef *t = &a->test.definitions[j];

			if (t->source != TESTDEF_GIT || job_git_allowed(t->url, allow))
				continue;
			snprintf(path, sizeof(path), "actions[%zu].test.definitions[%zu]", i, j);
			job_type_error(job, &doc, path, "repository",
				       "repository '%s' is not allowed in this lab (git_allow in labd.conf lists the URL prefixes it fetches from%s)",
				       t->url, strv_length((char **)allow) ? "" : ": none");
		}
	}
	return job_doc_finish(&doc, diag);
}
