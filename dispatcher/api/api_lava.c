// SPDX-License-Identifier: GPL-2.0-or-later
/* api_lava.c -- jobs, boards and results for LAVA's REST and XML-RPC APIs */
#include "api/api_lava.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/loop.h"
#include "core/strv.h"
#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "journal/joblog.h"
#include "sched/sched.h"
#include "job/job.h"
#include "results/lava_results.h"
#include "results/report.h"

int api_lava_job_id(const char *text, int64_t *ret)
{
	long long v;
	char *end;

	if (!text || !*text)
		return -EINVAL;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (*end || errno || v < 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

int api_lava_job(struct api_request *r, int64_t id, struct job_record *rec)
{
	return store_job_get(api_lava_store(r), id, rec);
}

/* "the first problem (and N more)" of @diag. */
static char *diag_text(const struct diag *diag, const char *fallback)
{
	char *text;

	if (!diag->n)
		return strdup(fallback);
	if (asprintf(&text, "%s%s", diag->msgs[0], diag->n > 1 ? " (and more)" : "") < 0)
		return NULL;
	return text;
}

int api_lava_submit(struct api_request *r, const char *def, size_t len, int64_t *ret_id,
		    char **why)
{
	struct diag diag = DIAG_INIT;
	int err;

	*why = NULL;
	err = sched_submit(api_deps_of(r)->sched, def, len, "job.yaml", JOB_FORMAT_AUTO,
			   r->who.name, ret_id, &diag);
	if (err)
		*why = diag_text(&diag, strerror(-err));
	diag_release(&diag);
	return err;
}

int api_lava_check(struct api_request *r, const char *def, size_t len, char **why)
{
	struct diag diag = DIAG_INIT;
	int err;

	*why = NULL;
	err = sched_check_job(api_deps_of(r)->sched, def, len, "job.yaml", JOB_FORMAT_AUTO, false,
			      &diag, NULL);
	if (err)
		*why = diag_text(&diag, strerror(-err));
	diag_release(&diag);
	return err;
}

int api_lava_cancel(struct api_request *r, const struct job_record *rec, struct api_denial *d)
{
	char what[64], why[API_IDENTITY_MAX + 32];
	int err;

	snprintf(what, sizeof(what), "cancel job %lld", (long long)rec->id);
	if (api_check_owner(r, rec->submitter, what, d) < 0)
		return -EACCES;
	snprintf(why, sizeof(why), "canceled by %s", r->who.name);
	err = sched_cancel(api_deps_of(r)->sched, rec->id, why);
	return err == -EALREADY ? 0 : err;
}

bool api_lava_runs_elsewhere(struct api_request *r, const struct job_record *rec)
{
	return sched_runs_elsewhere(api_deps_of(r)->sched, rec);
}

static int add_suite(const struct result_record *res, void *ud)
{
	char ***suites = ud;

	if (strv_contains(*suites, res->suite))
		return 0;
	return strv_push(suites, res->suite);
}

char **api_lava_suites(struct api_request *r, int64_t id)
{
	char **suites = NULL;

	if (store_result_list(api_lava_store(r), id, add_suite, &suites) < 0)
		suites = strv_free(suites);
	return suites;
}

char *api_lava_job_dir(struct api_request *r, int64_t id)
{
	return joblog_job_dir(lab_current_config(api_deps_of(r)->lab)->state_dir, id);
}

int api_lava_results(struct api_request *r, int64_t id, struct lava_results **ret)
{
	struct report *rep = NULL;
	char *dir;
	int err;

	err = report_load(api_deps_of(r)->store, lab_current_config(api_deps_of(r)->lab), id,
			  NULL, &rep);
	if (err < 0)
		return err;
	dir = api_lava_job_dir(r, id);
	err = dir ? lava_results_build(rep, dir, ret) : -ENOMEM;
	free(dir);
	report_free(rep);
	return err;
}

json_t *api_lava_metadata(const struct job_record *rec)
{
	struct job *job = report_parse_job(rec);
	json_t *v = job && job->metadata ? json_incref(job->metadata) : json_object();

	job_free(job);
	return v;
}

json_t *api_lava_tags(const struct job_record *rec)
{
	json_t *v = rec->tags ? json_loads(rec->tags, 0, NULL) : NULL;

	if (json_is_array(v))
		return v;
	json_decref(v);
	return json_array();
}

struct board **api_lava_boards(struct api_request *r, size_t *ret_n)
{
	return lab_boards(api_deps_of(r)->lab, ret_n);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **api_lava_tag_names(struct api_request *r)
{
	struct board **boards;
	char **names = NULL;
	size_t n, i;

	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		STRV_FOREACH(t, board_device(boards[i])->tags)
			if (!strv_contains(names, *t) && strv_push(&names, *t) < 0)
				return strv_free(names);
	if (names)
		qsort(names, strv_length(names), sizeof(*names), by_text);
	return names;
}

int api_lava_tag_id(char *const *names, const char *tag)
{
	int i;

	for (i = 0; names && names[i]; i++)
		if (!strcmp(names[i], tag))
			return i + 1;
	return 0;
}

struct store *api_lava_store(struct api_request *r)
{
	return api_deps_of(r)->store;
}

uint64_t api_lava_now(struct api_request *r)
{
	return loop_realtime(api_deps_of(r)->loop);
}

const char *api_lava_worker(void)
{
	static char name[256];

	if (!*name && gethostname(name, sizeof(name) - 1) < 0)
		snprintf(name, sizeof(name), "localhost");
	return name;
}
