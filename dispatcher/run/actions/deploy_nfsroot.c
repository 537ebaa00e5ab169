// SPDX-License-Identifier: GPL-2.0-or-later
/* deploy_nfsroot.c -- a deploy's NFS root: tree, streamed root, extras, variables */
#include "run/actions/deploy_nfsroot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "board/board.h"
#include "config/config.h"
#include "core/kv.h"
#include "job/job.h"
#include "overlay/overlay_build.h"
#include "rootfs/rootfs.h"
#include "run/action.h"

#define NFSROOT_MSG_MAX 1200

enum nfsroot_step {
	STEP_ROOT,		/* waiting for a tree, or the root streaming in */
	STEP_EXTRAS,		/* the staged archives, one after the other */
	STEP_TESTS_BUILD,	/* the test overlay being built (run_overlay_build()) */
	STEP_TESTS,		/* and unpacked */
	STEP_READY,
};

struct deploy_nfsroot {
	struct run *r;
	const struct job_artifact *art;
	deploy_nfsroot_fn fn;
	void *userdata;
	enum nfsroot_step step;
	struct rootfs_request *rq;
	struct rootfs_unpack *op;
	struct deploy_nfsroot_extra *extras;	/* strings owned */
	size_t n_extras;
	size_t next;
	bool tests;
	char *tests_file;
	enum error_type fail_type;	/* of the step that failed */
	uint64_t bytes;			/* file data unpacked, all steps */
	unsigned restarts;		/* the root started again after waiting for room */
};

static void start_root(struct deploy_nfsroot *nr, struct rootfs_tree *t);

static const char *size_text(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= 10ULL << 20)
		snprintf(buf, size, "%llu MiB", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, size, "%llu KiB", (unsigned long long)(bytes >> 10));
	return buf;
}

/* ---- the root ---- */

static void root_failed(struct deploy_nfsroot *nr, const char *msg, enum error_type type)
{
	run_set_nfs_tree(nr->r, NULL);	/* no partial tree stays */
	nr->fn(nr, msg, type, nr->userdata);
}

/* The lab waits for room (when_full = "wait"): a tree comes later, or a reason. */
static void on_tree(struct rootfs_tree *t, const char *err, void *ud)
{
	struct deploy_nfsroot *nr = ud;
	char msg[NFSROOT_MSG_MAX];

	nr->rq = NULL;
	if (!t) {
		snprintf(msg, sizeof(msg), "cannot unpack the NFS root: %s", err);
		root_failed(nr, msg, ERROR_INFRASTRUCTURE);
		return;
	}
	run_log(nr->r, "info", "NFS root: room in the export directory, tree %s", rootfs_tree_dir(t));
	start_root(nr, t);
}

/*
 * A tree for the root, now or once there is room (for @needed bytes: what a
 * root the limit stopped had written); 0, or -1 (failed, told).
 */
static int ask_tree(struct deploy_nfsroot *nr, uint64_t needed)
{
	struct rootfs *fs = run_rootfs(nr->r);
	struct rootfs_tree *t;
	char err[ROOTFS_MSG_MAX], msg[NFSROOT_MSG_MAX];
	int r = rootfs_tree_request(fs, run_id(nr->r), needed, on_tree, nr, &t, &nr->rq, err,
				    sizeof(err));

	if (r < 0) {
		snprintf(msg, sizeof(msg), "cannot unpack the NFS root: %s", err);
		root_failed(nr, msg, ERROR_INFRASTRUCTURE);
		return -1;
	}
	if (r > 0) {
		run_log(nr->r, "info", "NFS root: waiting for room: %s", err);
		return 0;
	}
	start_root(nr, t);
	return 0;
}

static void on_root_downloaded(uint64_t bytes, void *ud)
{
	struct deploy_nfsroot *nr = ud;
	char size[32];

	run_log(nr->r, "info", "NFS root downloaded: %s, checksums checked",
		size_text(bytes, size, sizeof(size)));
}

/* The size limit stopped the root: wait for other trees to go, or fail. */
static bool wait_again(struct deploy_nfsroot *nr, const struct rootfs_unpack_result *res)
{
	struct rootfs_tree *t = run_nfs_tree(nr->r);
	uint64_t needed = rootfs_tree_bytes(t);

	if (res->err != -ENOSPC || rootfs_params_of(run_rootfs(nr->r))->fail_when_full ||
	    !rootfs_tree_fits_alone(t))
		return false;
	run_log(nr->r, "warning", "NFS root: %s; waiting for other jobs' trees to leave room "
		"for more than %llu bytes, then starting again", res->msg,
		(unsigned long long)needed);
	run_set_nfs_tree(nr->r, NULL);
	nr->restarts++;
	return ask_tree(nr, needed) == 0;
}

static void on_root(const struct rootfs_unpack_result *res, void *ud)
{
	struct deploy_nfsroot *nr = ud;
	char size[32], msg[NFSROOT_MSG_MAX];
	double secs = (double)res->usec / 1e6;

	nr->op = NULL;
	if (res->err && wait_again(nr, res))
		return;
	if (res->err) {
		snprintf(msg, sizeof(msg), "%s%s", res->msg, res->err == -ENOSPC &&
			 !rootfs_tree_fits_alone(run_nfs_tree(nr->r)) ?
			 " (this root alone is larger than max_size)" : "");
		root_failed(nr, msg, res->blame == ROOTFS_BLAME_ARCHIVE ? ERROR_JOB :
			    ERROR_INFRASTRUCTURE);
		return;
	}
	nr->bytes = res->bytes;
	run_phase(nr->r, "nfsroot-unpacked");
	run_log(nr->r, "info", "NFS root unpacked in %.1f s: %llu entries, %s of files, "
		"%.1f MB/s downloaded, sha256 %s%s", secs, (unsigned long long)res->entries,
		size_text(res->bytes, size, sizeof(size)),
		secs > 0 ? (double)res->download_bytes / secs / 1e6 : 0.0, res->sha256,
		res->devices_skipped ? " (device nodes left out: labd has no root's rights)" : "");
	nr->fn(nr, NULL, ERROR_NONE, nr->userdata);
}

static void start_root(struct deploy_nfsroot *nr, struct rootfs_tree *t)
{
	const struct job_artifact *a = nr->art;
	struct rootfs_unpack_req req = {
		.tree = t, .url = a->url, .http = run_http(nr->r),
		.timeout = run_action(nr->r)->timeout,
		.max_download = run_config(nr->r)->max_artifact_size,
		.what = "the NFS root", .prefix = a->prefix, .sha256sum = a->sha256sum,
		.md5sum = a->md5sum, .sha512sum = a->sha512sum, .downloaded = on_root_downloaded,
	};
	char msg[NFSROOT_MSG_MAX];
	int err;

	run_set_nfs_tree(nr->r, t);
	if (!nr->restarts)
		run_phase(nr->r, "nfsroot-download");
	run_log(nr->r, "info", "NFS root: %s -> %s, unpacked while it downloads", a->url,
		rootfs_tree_dir(t));
	err = rootfs_unpack_start(run_rootfs(nr->r), &req, on_root, nr, &nr->op);
	if (err < 0) {
		snprintf(msg, sizeof(msg), "cannot unpack the NFS root '%s': %s", a->url,
			 strerror(-err));
		root_failed(nr, msg, ERROR_INFRASTRUCTURE);
	}
}

int deploy_nfsroot_start(struct run *r, const struct job_artifact *art, deploy_nfsroot_fn fn,
			 void *userdata, struct deploy_nfsroot **ret)
{
	struct deploy_nfsroot *nr;

	if (!run_rootfs(r)) {
		run_fail(r, ERROR_INFRASTRUCTURE, "this lab has no NFS export directory "
			 "(labd.conf's nfs group): cannot deploy '%s'", art->url);
		return -ENODEV;
	}
	nr = calloc(1, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	*nr = (struct deploy_nfsroot){ .r = r, .art = art, .fn = fn, .userdata = userdata };
	*ret = nr;
	ask_tree(nr, 0);
	return 0;
}

/* ---- after the downloads: modules, overlays, the tests, then the variables ---- */

static void on_extra(const struct rootfs_unpack_result *res, void *ud)
{
	struct deploy_nfsroot *nr = ud;

	nr->op = NULL;
	nr->fail_type = res->blame == ROOTFS_BLAME_ARCHIVE ? ERROR_JOB : ERROR_INFRASTRUCTURE;
	if (!res->err)
		nr->bytes += res->bytes;
	run_async_done(nr->r, res->err, res->err ? res->msg : NULL);
}

/* Unpack the staged @file into the root at @into. */
static int unpack_file(struct deploy_nfsroot *nr, const char *file, const char *into,
		       const char *what)
{
	struct rootfs_unpack_req req = { .tree = run_nfs_tree(nr->r), .file = file, .into = into,
					 .what = what };

	run_log(nr->r, "info", "NFS root: unpacking %s (%s) into %s", what, file, into);
	return rootfs_unpack_start(run_rootfs(nr->r), &req, on_extra, nr, &nr->op);
}

/* {NFSROOTFS} and the rest (doc/nfs.md): a device's or type's parameter wins. */
static int set_vars(struct deploy_nfsroot *nr)
{
	const struct rootfs_params *p = rootfs_params_of(run_rootfs(nr->r));
	const struct device *dev = board_device(run_board(nr->r));
	const char *ip = device_param(dev, "NFS_SERVER_IP"), *opts;
	const char *extra = json_string_value(json_object_get(run_job(nr->r)->context,
							       "extra_nfsroot_args"));
	struct kv *vars = run_vars(nr->r);
	char *with_comma = NULL;
	int err;

	ip = ip ? ip : p->server_ip ? p->server_ip : run_config(nr->r)->server_ip;
	opts = device_param(dev, "NFS_MOUNT_OPTIONS");
	opts = opts ? opts : p->mount_options ? p->mount_options : "";
	if (asprintf(&with_comma, "%s%s", *opts && *opts != ',' ? "," : "", opts) < 0)
		return -ENOMEM;
	err = kv_set(vars, "NFSROOTFS", rootfs_tree_mount_path(run_nfs_tree(nr->r)));
	if (!err)
		err = kv_set(vars, "NFS_SERVER_IP", ip);
	if (!err)
		err = kv_set(vars, "NFS_MOUNT_OPTIONS", with_comma);
	if (!err && !kv_get(vars, "EXTRA_NFSROOT_ARGS"))
		err = kv_set(vars, "EXTRA_NFSROOT_ARGS", extra ? extra : "");
	free(with_comma);
	return err;
}

static int ready(struct deploy_nfsroot *nr)
{
	char size[32];

	if (set_vars(nr) < 0) {
		run_fail(nr->r, ERROR_BUG, "out of memory");
		return -1;
	}
	nr->step = STEP_READY;
	run_phase(nr->r, "nfsroot-ready");
	run_log(nr->r, "info", "NFS root ready: %s:%s (%s of files)",
		kv_get(run_vars(nr->r), "NFS_SERVER_IP"), kv_get(run_vars(nr->r), "NFSROOTFS"),
		size_text(nr->bytes, size, sizeof(size)));
	return 1;
}

/* The next step after the last one ended well: 0 (an event follows), 1 (ready), -1. */
static int next_step(struct deploy_nfsroot *nr)
{
	const struct deploy_nfsroot_extra *x;
	int err = 0;

	if (nr->step == STEP_EXTRAS && nr->next < nr->n_extras) {
		x = &nr->extras[nr->next++];
		err = unpack_file(nr, x->file, x->into, x->what);
	} else if (nr->step <= STEP_EXTRAS && nr->tests) {
		nr->step = STEP_TESTS_BUILD;
		err = asprintf(&nr->tests_file, "%s/overlay.tar.gz", run_dir(nr->r)) < 0 ? -ENOMEM :
		      run_overlay_build(nr->r, nr->tests_file, OVERLAY_TAR_GZ, true, NULL);
	} else if (nr->step == STEP_TESTS_BUILD) {
		nr->step = STEP_TESTS;
		err = unpack_file(nr, nr->tests_file, "/", "the test overlay");
	} else {
		return ready(nr);
	}
	if (err < 0) {
		run_fail(nr->r, ERROR_INFRASTRUCTURE, "cannot unpack into the NFS root: %s",
			 strerror(-err));
		return -1;
	}
	return 0;
}

int deploy_nfsroot_extras(struct deploy_nfsroot *nr, const struct deploy_nfsroot_extra *extras,
			  size_t n, bool tests)
{
	nr->extras = calloc(n ? n : 1, sizeof(*nr->extras));
	if (!nr->extras)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		nr->extras[i].file = strdup(extras[i].file);
		nr->extras[i].into = strdup(extras[i].into ? extras[i].into : "/");
		nr->extras[i].what = strdup(extras[i].what);
		nr->n_extras++;
		if (!nr->extras[i].file || !nr->extras[i].into || !nr->extras[i].what)
			return -ENOMEM;
	}
	nr->tests = tests;
	nr->step = STEP_EXTRAS;
	run_async_done(nr->r, 0, NULL);	/* the first step starts from the event */
	return 0;
}

int deploy_nfsroot_event(struct deploy_nfsroot *nr, const struct run_event *ev)
{
	if (ev->err) {
		run_set_nfs_tree(nr->r, NULL);
		run_fail(nr->r, nr->step == STEP_TESTS_BUILD ? run_overlay_error_type(nr->r) :
			 nr->fail_type, "%s", ev->msg ? ev->msg : "cannot unpack into the NFS root");
		return -1;
	}
	return next_step(nr);
}

void deploy_nfsroot_free(struct deploy_nfsroot *nr)
{
	if (!nr)
		return;
	rootfs_request_cancel(nr->rq);
	rootfs_unpack_cancel(nr->op);
	for (size_t i = 0; i < nr->n_extras; i++) {
		free((char *)nr->extras[i].file);
		free((char *)nr->extras[i].into);
		free((char *)nr->extras[i].what);
	}
	free(nr->extras);
	if (nr->tests_file)
		unlink(nr->tests_file);
	free(nr->tests_file);
	free(nr);
}
