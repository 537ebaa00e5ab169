// SPDX-License-Identifier: GPL-2.0-or-later
/* overlay_build.c -- a job's test overlay: the plan, and building it from the loop */
#include "overlay/overlay_build.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileurl.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/testdef.h"
#include "overlay/gitcache.h"

#define BUILD_MSG_MAX 1024

/* ---- the plan ---- */

const char *overlay_delivery_name(enum overlay_delivery d)
{
	static const char *const names[] = {
		"none", "ramdisk", "transfer", "typed", "image", "nfsroot",
	};

	return (unsigned)d < sizeof(names) / sizeof(names[0]) ? names[d] : "unknown";
}

/* Whether deploy @d stages a root image the overlay is written into (apply-overlay). */
static bool deploy_applies_overlay(const struct job_deploy *d)
{
	for (size_t i = 0; i < d->n_artifacts; i++)
		if (d->artifacts[i].apply_overlay)
			return true;
	return false;
}

/* Whether deploy @d stages a ramdisk the overlay may be appended to. */
static bool deploy_takes_overlay(const struct job_deploy *d)
{
	size_t i;

	if (d->to != DEPLOY_TO_TFTP && d->to != DEPLOY_TO_TMPFS)
		return false;
	for (i = 0; i < d->n_artifacts; i++)
		if ((!strcmp(d->artifacts[i].label, "ramdisk") ||
		     !strcmp(d->artifacts[i].label, "initrd")) && !d->artifacts[i].no_overlay)
			return true;
	return false;
}

void overlay_plan(const struct job *job, struct overlay_plan *p)
{
	size_t i, j, boot = SIZE_MAX, deploy = SIZE_MAX, first = SIZE_MAX;
	const struct job_artifact *nfs;
	bool git = false, transfer;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < job->n_actions; i++) {
		const struct job_action *a = &job->actions[i];

		if (a->kind == JOB_ACTION_TEST && a->test.kind == TEST_KIND_DEFINITIONS) {
			first = first == SIZE_MAX ? i : first;
			p->n_definitions += a->test.n_definitions;
			for (j = 0; j < a->test.n_definitions; j++)
				git = git || a->test.definitions[j].source == TESTDEF_GIT;
		} else if (a->kind == JOB_ACTION_BOOT && first == SIZE_MAX) {
			boot = i;
		} else if (a->kind == JOB_ACTION_DEPLOY && first == SIZE_MAX) {
			deploy = i;
		}
	}
	transfer = boot != SIZE_MAX && job->actions[boot].boot.download_command;
	if (!p->n_definitions || (!git && !transfer))
		return;
	p->first_test = first;
	p->boot = boot;
	p->builder = deploy != SIZE_MAX ? deploy : first;
	nfs = deploy != SIZE_MAX ? job_deploy_nfsrootfs(&job->actions[deploy].deploy) : NULL;
	if (transfer)
		p->delivery = OVERLAY_DELIVERY_TRANSFER;
	else if (nfs && boot != SIZE_MAX && deploy < boot && !nfs->no_overlay)
		p->delivery = OVERLAY_DELIVERY_NFSROOT;
	else if (deploy != SIZE_MAX && boot != SIZE_MAX && deploy < boot && !nfs &&
		 deploy_applies_overlay(&job->actions[deploy].deploy))
		p->delivery = OVERLAY_DELIVERY_IMAGE;
	else if (deploy != SIZE_MAX && boot != SIZE_MAX && deploy < boot && !nfs &&
		 deploy_takes_overlay(&job->actions[deploy].deploy))
		p->delivery = OVERLAY_DELIVERY_RAMDISK;
	else
		p->delivery = OVERLAY_DELIVERY_TYPED;
	p->deploy = p->delivery == OVERLAY_DELIVERY_RAMDISK ||
		    p->delivery == OVERLAY_DELIVERY_IMAGE ||
		    p->delivery == OVERLAY_DELIVERY_NFSROOT ? deploy : 0;
}

/* ---- the build ---- */

struct overlay_build {
	struct overlay_build_deps deps;
	const struct job *job;
	int64_t job_id;
	char *work_dir;
	char *path;
	char *os;
	char *storage;			/* the board's storage_info, or NULL */
	char *base;			/* "lava-<id>": the overlay's top directory */
	char **imports;
	char *import_prefix;		/* "" for the root */
	bool tests;
	enum overlay_format format;
	overlay_build_fn fn;
	void *userdata;
	uint64_t started;

	struct overlay *o;
	const struct job_testdef **jts;	/* every definition of the job, in order */
	size_t n;
	size_t cur;			/* the definition being added */
	bool helpers_done;
	size_t cur_import;
	struct testdef **defs;
	char **commits;
	char **fetched;			/* repositories updated by this build */

	struct gitcache_op *git_op;
	uint64_t git_started;
	uint64_t git_usec;
	uint64_t fetch_usec;
	struct http_request *req;
	struct overlay_import *imp;
	bool imp_is_def;		/* the import is a definition's tree */
	struct strbuf capture;
	char *tar;
	struct loop_source *defer;
};

static void next(struct overlay_build *b);

static void build_free(struct overlay_build *b)
{
	size_t i;

	gitcache_cancel(b->git_op);
	http_request_cancel(b->req);
	overlay_import_free(b->imp);
	overlay_abort(b->o);
	loop_source_free(b->defer);
	if (b->tar)
		unlink(b->tar);
	for (i = 0; b->defs && i < b->n; i++)
		testdef_free(b->defs[i]);
	free(b->defs);
	free(b->jts);
	strv_free(b->commits);
	strv_free(b->fetched);
	strv_free(b->imports);
	free(b->import_prefix);
	strbuf_release(&b->capture);
	free(b->tar);
	free(b->work_dir);
	free(b->path);
	free(b->os);
	free(b->storage);
	free(b->base);
	free(b);
}

void overlay_build_cancel(struct overlay_build *b)
{
	if (b)
		build_free(b);
}

void overlay_build_result_release(struct overlay_build_result *res)
{
	size_t i;

	for (i = 0; res->defs && i < res->n; i++)
		testdef_free(res->defs[i]);
	free(res->defs);
	strv_free(res->commits);
	res->defs = NULL;
	res->commits = NULL;
}

/* The build is over: report, then free everything (the callback may keep res->defs). */
static void finish(struct overlay_build *b, int err, enum error_type type, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void finish(struct overlay_build *b, int err, enum error_type type, const char *fmt, ...)
{
	struct overlay_build_result res = { .err = err, .type = err ? type : ERROR_NONE };
	char msg[BUILD_MSG_MAX];
	struct stat st;
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		res.msg = msg;
	}
	if (!err) {
		res.bytes = overlay_bytes(b->o);
		err = overlay_close(b->o);
		b->o = NULL;
		if (err) {
			res.err = err;
			res.type = ERROR_INFRASTRUCTURE;
			snprintf(msg, sizeof(msg), "cannot write the overlay '%s': %s", b->path,
				 strerror(-err));
			res.msg = msg;
		}
	}
	if (!res.err) {
		res.size = stat(b->path, &st) == 0 ? (uint64_t)st.st_size : 0;
		res.defs = b->defs;
		res.n = b->n;
		res.commits = b->commits;
		b->defs = NULL;
		b->commits = NULL;
	}
	res.usec = loop_now(b->deps.loop) - b->started;
	res.git_usec = b->git_usec;
	res.fetch_usec = b->fetch_usec;
	b->fn(&res, b->userdata);
	overlay_build_result_release(&res);
	build_free(b);
}

/* The overlay's own failure (the disk), as a result. */
static void finish_overlay_error(struct overlay_build *b)
{
	finish(b, -EIO, ERROR_INFRASTRUCTURE, "cannot build the test overlay: %s",
	       overlay_error(b->o));
}

/* Come back from the loop (one definition or import step per turn). */
static void again(struct overlay_build *b)
{
	loop_defer_again(b->defer);
}

static const char *suite_name(struct overlay_build *b, char *buf, size_t size)
{
	snprintf(buf, size, "%zu_%s", b->cur, b->jts[b->cur]->name);
	return buf;
}

/* The definition is loaded: its directory and run.sh go into the overlay. */
static void add_definition(struct overlay_build *b, struct testdef *td)
{
	char dir[512], testdir[512], uuid[48], *script;
	struct testdef_script sc = { .dir = dir, .testdir = testdir, .uuid = uuid, .os = b->os,
				     .storage = b->storage };
	struct strbuf path = STRBUF_INIT;
	int err;

	b->defs[b->cur] = td;
	snprintf(dir, sizeof(dir), "/%s", b->base);
	snprintf(testdir, sizeof(testdir), "/%s/tests/%s", b->base, td->suite);
	snprintf(uuid, sizeof(uuid), "%lld_%zu", (long long)b->job_id, b->cur);
	script = testdef_script_text(td, &sc);
	strbuf_addf(&path, "%s/run.sh", testdir + 1);
	err = script ? overlay_add_dir(b->o, testdir + 1, 0755) : -ENOMEM;
	if (!err)
		err = overlay_add_file(b->o, path.buf, 0755, script, strlen(script));
	free(script);
	strbuf_release(&path);
	if (err) {
		finish_overlay_error(b);
		return;
	}
	b->cur++;
	again(b);
}

/* A definition's document @text (from @where) checked and added. */
static void load_definition(struct overlay_build *b, const char *text, size_t len,
			    const char *where)
{
	const struct job_testdef *jt = b->jts[b->cur];
	struct testdef *td = NULL;
	json_t *doc = NULL;
	char err[512];
	int e;

	e = testdef_parse_yaml(text, len, where, &doc, err, sizeof(err));
	if (!e)
		e = testdef_from_json(doc, jt, (unsigned)b->cur, &td, err, sizeof(err));
	json_decref(doc);
	if (e == -ENOMEM) {
		finish(b, e, ERROR_BUG, "out of memory");
		return;
	}
	if (e < 0) {
		finish(b, e, ERROR_JOB, "test definition '%s' from %s: %s", jt->name, where, err);
		return;
	}
	add_definition(b, td);
}

static void on_fetched(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct overlay_build *b = ud;
	const struct job_testdef *jt = b->jts[b->cur];

	b->req = NULL;
	if (resp->err || (resp->status && resp->status != 200)) {
		if (resp->err)
			finish(b, -EIO, ERROR_INFRASTRUCTURE, "cannot fetch test definition '%s' from '%s': %s",
			       jt->name, jt->url, resp->error);
		else
			finish(b, -EIO, ERROR_INFRASTRUCTURE, "cannot fetch test definition '%s' from '%s': HTTP %ld",
			       jt->name, jt->url, resp->status);
		return;
	}
	load_definition(b, resp->body, resp->body_len, jt->url);
}

static void start_url(struct overlay_build *b, const struct job_testdef *jt)
{
	struct http_request_opts o = { .url = jt->url, .max_size = TESTDEF_MAX_SIZE,
				       .timeout = 60 * USEC_PER_SEC };
	int err;

	if (file_url_check(jt->url, b->deps.artifact_dir) < 0) {
		finish(b, -EPERM, ERROR_JOB, "test definition '%s': file URL '%s' is not below the lab's artifact directory",
		       jt->name, jt->url);
		return;
	}
	err = http_request_start(b->deps.http, &o, on_fetched, b, &b->req);
	if (err < 0)
		finish(b, err, ERROR_INFRASTRUCTURE, "cannot fetch test definition '%s': %s",
		       jt->name, strerror(-err));
}

static void on_checkout(const struct gitcache_result *res, void *ud)
{
	struct overlay_build *b = ud;
	const struct job_testdef *jt = b->jts[b->cur];
	char suite[256], prefix[512];
	int err;

	b->git_op = NULL;
	b->git_usec += loop_now(b->deps.loop) - b->git_started;
	b->fetch_usec += res->fetch_usec;
	if (res->err) {
		finish(b, res->err, res->err == -ENOENT ? ERROR_JOB : ERROR_INFRASTRUCTURE,
		       "test definition '%s': %s", jt->name, res->msg);
		return;
	}
	if (!strv_contains(b->fetched, jt->url))
		strv_push(&b->fetched, jt->url);
	free(b->commits[b->cur]);
	b->commits[b->cur] = strdup(res->commit);
	snprintf(prefix, sizeof(prefix), "%s/tests/%s/", b->base,
		 suite_name(b, suite, sizeof(suite)));
	err = overlay_import_open(b->o, b->tar, prefix, &b->imp);
	if (err) {
		finish_overlay_error(b);
		return;
	}
	strbuf_reset(&b->capture);
	overlay_import_capture(b->imp, jt->path, TESTDEF_MAX_SIZE, &b->capture);
	b->imp_is_def = true;
	again(b);
}

static void start_git(struct overlay_build *b, const struct job_testdef *jt)
{
	const char *rev = jt->revision ? jt->revision : jt->branch;
	int err;

	free(b->tar);
	if (asprintf(&b->tar, "%s/tree-%zu.tar", b->work_dir, b->cur) < 0) {
		b->tar = NULL;
		finish(b, -ENOMEM, ERROR_BUG, "out of memory");
		return;
	}
	b->git_started = loop_now(b->deps.loop);
	err = gitcache_checkout(b->deps.git, jt->url, rev, !strv_contains(b->fetched, jt->url),
				b->tar, on_checkout, b, &b->git_op);
	if (err < 0)
		finish(b, err, ERROR_INFRASTRUCTURE, "test definition '%s': cannot fetch '%s': %s",
		       jt->name, jt->url, strerror(-err));
}

/* A definition's tree is in: its definition file must have been in it. */
static void tree_imported(struct overlay_build *b)
{
	const struct job_testdef *jt = b->jts[b->cur];
	bool found = overlay_import_captured(b->imp);
	char where[1024];

	b->imp = overlay_import_free(b->imp);
	b->imp_is_def = false;
	unlink(b->tar);
	if (!found) {
		finish(b, -ENOENT, ERROR_JOB, "test definition '%s': no file '%s' in '%s' at %s",
		       jt->name, jt->path, jt->url, b->commits[b->cur]);
		return;
	}
	snprintf(where, sizeof(where), "%s:%s", jt->url, jt->path);
	load_definition(b, b->capture.buf, b->capture.len, where);
}

/* One turn of an import: the next bounded amount of the archive. */
static void import_step(struct overlay_build *b)
{
	int r = overlay_import_step(b->imp, OVERLAY_STEP_BUDGET);

	if (r == 1) {
		again(b);
		return;
	}
	if (r < 0) {
		finish_overlay_error(b);
		return;
	}
	if (b->imp_is_def) {
		tree_imported(b);
		return;
	}
	b->imp = overlay_import_free(b->imp);
	b->cur_import++;
	again(b);
}

static void start_definition(struct overlay_build *b)
{
	const struct job_testdef *jt = b->jts[b->cur];
	struct testdef *td = NULL;
	char err[512];
	int e;

	if (jt->source == TESTDEF_GIT) {
		start_git(b, jt);
		return;
	}
	if (jt->source == TESTDEF_URL) {
		start_url(b, jt);
		return;
	}
	e = testdef_from_json(jt->definition, jt, (unsigned)b->cur, &td, err, sizeof(err));
	if (e < 0) {
		finish(b, e, e == -ENOMEM ? ERROR_BUG : ERROR_JOB, "test definition '%s': %s",
		       jt->name, e == -ENOMEM ? "out of memory" : err);
		return;
	}
	add_definition(b, td);
}

static void add_helpers(struct overlay_build *b)
{
	size_t i, n;
	const struct testdef_helper *h = testdef_helpers(&n);
	char path[512], *text;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		snprintf(path, sizeof(path), "%s/bin/%s", b->base, h[i].name);
		text = testdef_helper_text(&h[i]);
		err = text ? overlay_add_file(b->o, path, 0755, text, strlen(text)) : -ENOMEM;
		free(text);
	}
	b->helpers_done = true;
	if (err)
		finish_overlay_error(b);
	else
		again(b);
}

static void start_import(struct overlay_build *b)
{
	if (overlay_import_open(b->o, b->imports[b->cur_import], b->import_prefix, &b->imp) < 0) {
		finish_overlay_error(b);
		return;
	}
	b->imp_is_def = false;
	again(b);
}

/* What comes next: definitions, helpers, imports, then the end. */
static void next(struct overlay_build *b)
{
	if (b->imp)
		import_step(b);
	else if (b->tests && b->cur < b->n)
		start_definition(b);
	else if (b->tests && !b->helpers_done)
		add_helpers(b);
	else if (b->cur_import < strv_length(b->imports))
		start_import(b);
	else
		finish(b, 0, ERROR_NONE, NULL);
}

static int on_defer(struct loop_source *s, void *ud)
{
	next(ud);
	return 0;
}

/* Every definition of the job's test actions, in order. */
static int collect(struct overlay_build *b)
{
	const struct job *job = b->job;
	size_t i, j, k = 0;

	for (i = 0; i < job->n_actions; i++)
		if (job->actions[i].kind == JOB_ACTION_TEST &&
		    job->actions[i].test.kind == TEST_KIND_DEFINITIONS)
			b->n += job->actions[i].test.n_definitions;
	b->jts = calloc(b->n + 1, sizeof(*b->jts));
	b->defs = calloc(b->n + 1, sizeof(*b->defs));
	b->commits = calloc(b->n + 1, sizeof(*b->commits));
	if (!b->jts || !b->defs || !b->commits)
		return -ENOMEM;
	for (i = 0; i < job->n_actions; i++) {
		const struct job_action *a = &job->actions[i];

		if (a->kind != JOB_ACTION_TEST || a->test.kind != TEST_KIND_DEFINITIONS)
			continue;
		for (j = 0; j < a->test.n_definitions; j++, k++) {
			b->jts[k] = &a->test.definitions[j];
			if (!(b->commits[k] = strdup("")))
				return -ENOMEM;
		}
	}
	return 0;
}

/* "/usr" or "usr/" -> "usr/", the form of an import's prefix; "" or "/" -> "". */
static char *import_prefix(const char *path)
{
	char *out;
	size_t n;

	while (path && *path == '/')
		path++;
	n = path ? strlen(path) : 0;
	while (n && path[n - 1] == '/')
		n--;
	if (!n)
		return strdup("");
	if (asprintf(&out, "%.*s/", (int)n, path) < 0)
		return NULL;
	return out;
}

static int build_init(struct overlay_build *b, const struct overlay_build_req *req)
{
	b->job = req->job;
	b->job_id = req->job_id;
	b->tests = req->tests;
	b->format = req->format;
	strbuf_init(&b->capture);
	b->work_dir = strdup(req->work_dir);
	b->path = strdup(req->path);
	b->os = req->os ? strdup(req->os) : NULL;
	b->storage = req->storage ? strdup(req->storage) : NULL;
	if (asprintf(&b->base, OVERLAY_BASE_FMT, (long long)req->job_id) < 0)
		b->base = NULL;
	if (!b->work_dir || !b->path || (req->os && !b->os) || !b->base ||
	    (req->storage && !b->storage) ||
	    strv_copy(req->imports, &b->imports) < 0 ||
	    !(b->import_prefix = import_prefix(req->import_prefix)))
		return -ENOMEM;
	return req->tests ? collect(b) : 0;
}

int overlay_build_start(const struct overlay_build_deps *deps, const struct overlay_build_req *req,
			overlay_build_fn fn, void *userdata, struct overlay_build **ret)
{
	struct overlay_build *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	b->deps = *deps;
	b->fn = fn;
	b->userdata = userdata;
	b->started = loop_now(deps->loop);
	err = build_init(b, req);
	if (!err)
		err = overlay_open(req->path, req->format, &b->o);
	if (!err)
		err = loop_add_defer(deps->loop, &b->defer, on_defer, b);
	if (err < 0) {
		build_free(b);
		return err;
	}
	*ret = b;
	return 0;
}
