// SPDX-License-Identifier: GPL-2.0-or-later
/* url_check.c -- a job's artifact URLs checked before its board is touched (url_check.h) */
#include "run/url_check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "core/fileurl.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "job/job.h"
#include "run/deploy_cache.h"

#define URL_CHECK_ABORTED (-ECANCELED)	/* the head callback ends the transfer */

struct url_probe {
	struct url_check *uc;
	struct http_client *http;
	const struct job_artifact *art;
	struct http_request *req;
	bool get;		/* asked with a ranged GET: the server refused HEAD */
	long status;		/* of the GET's answer, once its head is in; 0: none */
};

struct url_check {
	struct loop_source *defer;	/* the end, from the loop */
	url_check_done_fn done;
	void *userdata;
	struct url_probe *probes;
	size_t n, pending;
	size_t checked;		/* URLs asked for and file URLs looked at */
	struct strbuf job_errors;	/* the job's faults: 4xx, file URLs */
	struct strbuf lab_errors;	/* the lab's: no answer, 5xx */
};

static void add_reason(struct strbuf *sb, const struct job_artifact *a, const char *fmt,
		       const char *what)
{
	strbuf_addstr(sb, sb->len ? "; " : "");
	strbuf_addf(sb, "%s '%s': ", a->label, a->url);
	strbuf_addf(sb, fmt, what);
}

static int on_defer(struct loop_source *s, void *ud)
{
	struct url_check *uc = ud;

	if (uc->pending)
		return 0;	/* the run at its creation: answers are awaited */
	if (uc->job_errors.len)
		uc->done(ERROR_JOB, uc->job_errors.buf, uc->checked, uc->userdata);
	else if (uc->lab_errors.len)
		uc->done(ERROR_INFRASTRUCTURE, uc->lab_errors.buf, uc->checked, uc->userdata);
	else
		uc->done(ERROR_NONE, NULL, uc->checked, uc->userdata);
	return 0;
}

/* The answer's head is in: its status is all that is wanted. */
static int on_head(struct http_request *req, long status, void *userdata)
{
	struct url_probe *p = userdata;

	p->status = status;
	return URL_CHECK_ABORTED;
}

static int ask(struct url_probe *p);

static void on_answer(struct http_request *req, const struct http_response *resp,
		      void *userdata)
{
	struct url_probe *p = userdata;
	struct url_check *uc = p->uc;
	long status = p->status ? p->status : resp->status;
	char what[64];

	p->req = NULL;
	if (!p->get && (status == 405 || status == 501)) {
		p->get = true;	/* no HEAD here: the first byte, then */
		if (ask(p) == 0)
			return;
	}
	snprintf(what, sizeof(what), "HTTP %ld", status);
	/* 416: a range past the end of an empty file, which is there */
	if (status >= 400 && status < 500 && status != 416)
		add_reason(&uc->job_errors, p->art, "%s (a missing artifact: the job's URL)", what);
	else if (status >= 500)
		add_reason(&uc->lab_errors, p->art, "%s (the artifact server failed)", what);
	else if (!status)
		add_reason(&uc->lab_errors, p->art, "no answer: %s",
			   resp->error ? resp->error : strerror(-resp->err));
	if (!--uc->pending)
		loop_defer_again(uc->defer);
}

/* Whether the download cache holds @a already: the deploy will not fetch it. */
static bool cached(const struct lab_config *c, const struct job_artifact *a)
{
	struct stat st;
	char *path = NULL;
	bool hit;

	if (!deploy_cache_wanted(a) || deploy_cache_path(c->state_dir, a, &path) < 0)
		return false;
	hit = stat(path, &st) == 0;
	free(path);
	return hit;
}

static void check_file(struct url_check *uc, const struct lab_config *c,
		       const struct job_artifact *a)
{
	int err = file_url_check(a->url, c->artifact_dir);

	if (err == -EPERM && !c->artifact_dir)
		add_reason(&uc->job_errors, a, "%s", "file URLs are not allowed in this lab");
	else if (err == -ENOENT)
		add_reason(&uc->job_errors, a, "%s", "no such file");
	else if (err < 0)
		add_reason(&uc->job_errors, a, "%s", "not below the lab's artifact directory");
}

/* A HEAD of @p's URL, or a GET of its first byte given up once the head is in. */
static int ask(struct url_probe *p)
{
	static const char *const range[] = { "Range: bytes=0-0", NULL };
	struct http_request_opts o = {
		.url = p->art->url,
		.headers = p->get ? range : NULL,
		.timeout = URL_CHECK_TIMEOUT,
		.connect_timeout = URL_CHECK_CONNECT_TIMEOUT,
		.head = p->get ? on_head : NULL,
		.no_body = !p->get,
		.max_size = 64 * 1024,
	};

	return http_request_start(p->http, &o, on_answer, p, &p->req);
}

static int probe(struct url_check *uc, struct http_client *http, const struct job_artifact *a)
{
	struct url_probe *p = &uc->probes[uc->n];

	p->uc = uc;
	p->http = http;
	p->art = a;
	uc->n++;
	uc->pending++;
	if (ask(p) < 0) {
		uc->pending--;
		add_reason(&uc->lab_errors, a, "%s", "cannot ask: out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Every artifact of every deploy action: asked, checked as a file, or skipped. */
static void start_probes(struct url_check *uc, struct http_client *http,
			 const struct lab_config *c, const struct job *job)
{
	size_t i, k;

	for (i = 0; i < job->n_actions; i++) {
		const struct job_action *a = &job->actions[i];

		if (a->kind != JOB_ACTION_DEPLOY)
			continue;
		for (k = 0; k < a->deploy.n_artifacts; k++) {
			const struct job_artifact *art = &a->deploy.artifacts[k];

			if (!strncmp(art->url, "file:", 5))
				check_file(uc, c, art);
			else if ((!strncmp(art->url, "http://", 7) ||
				  !strncmp(art->url, "https://", 8)) && !cached(c, art))
				probe(uc, http, art);
			else
				continue;	/* in the cache, or a scheme the deploy itself knows */
			uc->checked++;
		}
	}
}

static size_t count_artifacts(const struct job *job)
{
	size_t i, n = 0;

	for (i = 0; i < job->n_actions; i++)
		if (job->actions[i].kind == JOB_ACTION_DEPLOY)
			n += job->actions[i].deploy.n_artifacts;
	return n;
}

int url_check_start(struct loop *loop, struct http_client *http, const struct lab_config *c,
		    const struct job *job, url_check_done_fn done, void *userdata,
		    struct url_check **ret)
{
	struct url_check *uc = calloc(1, sizeof(*uc));
	size_t n = count_artifacts(job);

	if (!uc)
		return -ENOMEM;
	uc->done = done;
	uc->userdata = userdata;
	strbuf_init(&uc->job_errors);
	strbuf_init(&uc->lab_errors);
	uc->probes = calloc(n ? n : 1, sizeof(*uc->probes));
	if (!uc->probes || loop_add_defer(loop, &uc->defer, on_defer, uc) < 0) {
		url_check_free(uc);
		return -ENOMEM;
	}
	loop_source_set_description(uc->defer, "run:url-check");
	start_probes(uc, http, c, job);	/* the defer runs once created: done if nothing is asked */
	*ret = uc;
	return 0;
}

struct url_check *url_check_free(struct url_check *uc)
{
	size_t i;

	if (!uc)
		return NULL;
	for (i = 0; i < uc->n; i++)
		http_request_cancel(uc->probes[i].req);
	loop_source_free(uc->defer);
	free(uc->probes);
	strbuf_release(&uc->job_errors);
	strbuf_release(&uc->lab_errors);
	free(uc);
	return NULL;
}
