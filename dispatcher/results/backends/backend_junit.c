// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * backend_junit.c -- write a JUnit XML file per finished job into a directory
 *
 * { type = "junit"; dir = "/srv/ci/junit"; log_url_base = "https://lab.example.org"; }
 *
 * When a job finishes its report goes to <dir>/job-<id>.xml and to the job's
 * own directory (<state_dir>/jobs/<id>/junit.xml) when this host has it,
 * each written to a temporary file and renamed, so a CI system never reads
 * half a file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "journal/events.h"
#include "results/backends/backend.h"
#include "results/junit.h"
#include "results/report.h"
#include "results/resultfile.h"

#define JUNIT_MAX_QUEUE 4096	/* finished jobs waiting for their file */

struct junit_backend {
	struct backend b;
	char *dir;
	char *log_url_base;
	int64_t *queue;		/* finished jobs, written from the loop */
	size_t n_queue;
	struct loop_source *work;
};

static const char *const junit_keys[] = { "dir", "log_url_base", NULL };

static struct junit_backend *to_junit(struct backend *b)
{
	return (struct junit_backend *)b;
}

/* Job @id's report is read (backend_report_later()): its JUnit file, written. */
static void write_report(struct backend *b, int64_t id, struct report *r, int err)
{
	struct junit_backend *jb = to_junit(b);
	struct strbuf xml = STRBUF_INIT;
	char *jobdir = NULL, path[4096];

	path[0] = '\0';
	if (!err)
		err = junit_build(r, &xml);
	if (!err) {
		snprintf(path, sizeof(path), "%s/job-%lld.xml", jb->dir, (long long)id);
		err = resultfile_write(path, xml.buf, xml.len);
	}
	if (!err && (jobdir = backend_job_dir_here(&jb->b, id))) {
		snprintf(path, sizeof(path), "%s/%s", jobdir, JUNIT_FILE);
		err = resultfile_write(path, xml.buf, xml.len);
	}
	if (err < 0 && !path[0])
		backend_report(&jb->b, id, "cannot build the JUnit report: %s", strerror(-err));
	else if (err < 0)
		backend_report(&jb->b, id, "cannot write the JUnit report '%s': %s", path,
			       strerror(-err));
	else
		log_info("backend '%s': job %lld: JUnit report in '%s/job-%lld.xml'", jb->b.name,
			 (long long)id, jb->dir, (long long)id);
	free(jobdir);
	report_free(r);
	strbuf_release(&xml);
}

static int on_work(struct loop_source *s, void *ud)
{
	struct junit_backend *jb = ud;
	size_t i;

	for (i = 0; i < jb->n_queue; i++)
		backend_report_later(&jb->b, jb->queue[i], jb->log_url_base, write_report);
	jb->n_queue = 0;
	return 0;
}

static void junit_event(struct backend *b, const struct event *ev)
{
	struct junit_backend *jb = to_junit(b);
	int64_t *q;

	if (strcmp(ev->kind, "finished"))
		return;
	if (jb->n_queue >= JUNIT_MAX_QUEUE ||
	    !(q = realloc(jb->queue, (jb->n_queue + 1) * sizeof(*q)))) {
		backend_report(b, ev->job_id, "too many reports waiting: none written for this job");
		return;
	}
	jb->queue = q;
	jb->queue[jb->n_queue++] = ev->job_id;
	loop_defer_again(jb->work);
}

static int junit_start(struct backend *b)
{
	struct junit_backend *jb = to_junit(b);
	int err = resultfile_mkdir(jb->dir);

	if (err < 0)
		return err;
	err = loop_add_defer(b->deps->loop, &jb->work, on_work, jb);
	if (!err)
		loop_source_set_description(jb->work, "backend:junit");
	return err;
}

static void junit_free(struct backend *b)
{
	struct junit_backend *jb = to_junit(b);

	backend_forget_reports(b);
	loop_source_free(jb->work);
	free(jb->queue);
	free(jb->dir);
	free(jb->log_url_base);
	backend_release(b);
	free(jb);
}

static int junit_parse(const config_setting_t *g, struct backend **ret, struct diag *diag)
{
	struct junit_backend *jb = calloc(1, sizeof(*jb));
	const char *dir = NULL, *base = NULL;
	int err = 0;

	if (!jb)
		return -ENOMEM;
	if (backend_init(&jb->b, &backend_junit_ops, g) < 0) {
		junit_free(&jb->b);
		return -ENOMEM;
	}
	if (cfg_get_string(g, "dir", true, &dir, diag) < 0)
		err = -EINVAL;
	else if (dir[0] != '/')
		err = diag_add(diag, cfg_file(g), cfg_line(g), "'dir' must be an absolute path, not '%s'",
			       dir);
	if (backend_check_url(g, "log_url_base", false, &base, diag) == -EINVAL)
		err = -EINVAL;
	jb->dir = dir ? strdup(dir) : NULL;
	jb->log_url_base = base ? strdup(base) : NULL;
	if (!err && (!jb->dir || (base && !jb->log_url_base)))
		err = -ENOMEM;
	if (err < 0) {
		junit_free(&jb->b);
		return err;
	}
	*ret = &jb->b;
	return 0;
}

const struct backend_ops backend_junit_ops = {
	.type = "junit",
	.keys = junit_keys,
	.parse = junit_parse,
	.start = junit_start,
	.free = junit_free,
	.event = junit_event,
};
