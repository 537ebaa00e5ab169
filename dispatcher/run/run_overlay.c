// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_overlay.c -- a running job's test overlay: the plan, the build, the
 * definitions it loaded, and serving it to the board
 *
 * The deploy action (ramdisk append) or the first test action builds it;
 * the test actions read the definitions back.  Everything is released with
 * the run: the build canceled, the served name withdrawn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "config/config.h"
#include "core/loop.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/testdef.h"
#include "overlay/overlay_files.h"
#include "run/run_internal.h"

void run_overlay_init(struct run *r)
{
	overlay_plan(r->job, &r->overlay_plan);
}

static void drop_definitions(struct run *r)
{
	size_t i;

	for (i = 0; r->overlay_defs && i < r->n_overlay_defs; i++)
		testdef_free(r->overlay_defs[i]);
	free(r->overlay_defs);
	r->overlay_defs = NULL;
	r->n_overlay_defs = 0;
	r->overlay_commits = strv_free(r->overlay_commits);
}

void run_overlay_release(struct run *r)
{
	overlay_build_cancel(r->overlay_build);
	r->overlay_build = NULL;
	if (r->overlay_served && r->deps.overlays)
		overlay_files_remove(r->deps.overlays, r->overlay_served);
	free(r->overlay_served);
	r->overlay_served = NULL;
	drop_definitions(r);
	free(r->overlay_path);
	r->overlay_path = NULL;
}

const struct overlay_plan *run_overlay_plan(const struct run *r)
{
	return &r->overlay_plan;
}

enum error_type run_overlay_error_type(const struct run *r)
{
	return r->overlay_error;
}

const struct testdef *run_overlay_testdef(const struct run *r, size_t index)
{
	return index < r->n_overlay_defs ? r->overlay_defs[index] : NULL;
}

const char *run_overlay_commit(const struct run *r, size_t index)
{
	return index < r->n_overlay_defs && r->overlay_commits ? r->overlay_commits[index] : "";
}

const char *run_overlay_path(const struct run *r)
{
	return r->overlay_defs ? r->overlay_path : NULL;
}

static void format_size(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= 10 << 20)
		snprintf(buf, size, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes >= 10 << 10)
		snprintf(buf, size, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
}

static void on_built(struct overlay_build_result *res, void *ud)
{
	struct run *r = ud;
	char size[32], data[32];
	size_t i;

	r->overlay_build = NULL;
	if (res->err) {
		r->overlay_error = res->type;
		run_async_done(r, res->err, res->msg);
		return;
	}
	if (res->defs) {
		drop_definitions(r);
		r->overlay_defs = res->defs;
		r->n_overlay_defs = res->n;
		r->overlay_commits = res->commits;
		res->defs = NULL;
		res->commits = NULL;
		for (i = 0; i < r->n_overlay_defs; i++)
			if (*r->overlay_commits[i])
				run_log(r, "info", "test definition '%s' at commit %s",
					r->overlay_defs[i]->suite, r->overlay_commits[i]);
	}
	format_size(res->size, size, sizeof(size));
	format_size(res->bytes, data, sizeof(data));
	run_log(r, "info", "overlay built in %llu ms (git %llu ms, of which fetching %llu ms): %s (%s of files)",
		(unsigned long long)(res->usec / USEC_PER_MSEC),
		(unsigned long long)(res->git_usec / USEC_PER_MSEC),
		(unsigned long long)(res->fetch_usec / USEC_PER_MSEC), size, data);
	run_async_done(r, 0, NULL);
}

int run_overlay_build(struct run *r, const char *path, enum overlay_format fmt, bool tests,
		      char *const *imports)
{
	return run_overlay_build_at(r, path, fmt, tests, imports, NULL);
}

int run_overlay_build_at(struct run *r, const char *path, enum overlay_format fmt, bool tests,
			 char *const *imports, const char *import_prefix)
{
	const struct job_deploy *last = NULL;
	const struct kv *storage_info = &board_device(run_board(r))->storage_info;
	struct overlay_build_deps deps = {
		.loop = r->deps.loop, .git = r->deps.git, .http = r->deps.http,
		.artifact_dir = r->deps.config->artifact_dir,
	};
	struct overlay_build_req req = { .job = r->job, .job_id = r->id, .work_dir = r->dir,
					 .path = path, .format = fmt, .tests = tests,
					 .imports = imports, .import_prefix = import_prefix };
	size_t i;
	int err;

	if (r->overlay_build)
		return -EBUSY;
	for (i = 0; i < r->job->n_actions; i++)
		if (r->job->actions[i].kind == JOB_ACTION_DEPLOY && r->job->actions[i].deploy.os)
			last = &r->job->actions[i].deploy;
	req.os = last ? last->os : NULL;
	if (tests) {
		free(r->overlay_path);
		r->overlay_path = strdup(path);
		if (!r->overlay_path)
			return -ENOMEM;
	}
	r->overlay_error = ERROR_NONE;
	req.storage = testdef_storage_info(storage_info);
	if (storage_info->n && !req.storage)
		return -ENOMEM;
	err = overlay_build_start(&deps, &req, on_built, r, &r->overlay_build);
	free((char *)req.storage);
	return err;
}

char *run_overlay_url(struct run *r, char *err, size_t errlen)
{
	const struct lab_config *c = r->deps.config;
	unsigned port = r->deps.overlays ? overlay_files_port(r->deps.overlays) : 0;
	char *url = NULL;
	int e;

	if (!run_overlay_path(r)) {
		snprintf(err, errlen, "the overlay was not built");
		return NULL;
	}
	if (!port) {
		snprintf(err, errlen, "labd's HTTP API listens on no TCP port: boards cannot download the overlay");
		return NULL;
	}
	if (!r->overlay_served) {
		e = overlay_files_add(r->deps.overlays, r->overlay_path, ".tar.gz",
				      &r->overlay_served);
		if (e < 0) {
			snprintf(err, errlen, "cannot serve the overlay: %s", strerror(-e));
			return NULL;
		}
	}
	/* the API's route (api/api_overlays.c), below its /api/v1 prefix */
	if (asprintf(&url, "http://%s:%u/api/v1/overlays/%s", c->server_ip, port,
		     r->overlay_served) < 0) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return url;
}
