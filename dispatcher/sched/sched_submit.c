// SPDX-License-Identifier: GPL-2.0-or-later
/* sched_submit.c -- what enters the queue: jobs checked against this lab, stored, queued */
#include "sched/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"
#include "job/job.h"
#include "journal/events.h"
#include "sched/sched_internal.h"
#include "store/store.h"

/* Another host of the lab has a board of @type (several hosts): it may run the job. */
static bool board_elsewhere(struct sched *s, const char *type)
{
	bool there = false;

	return store_board_elsewhere(s->deps.run.store, type, &there) == 0 && there;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The device types this lab's boards have, each once in name order: "sim-minimal, sim-uboot". */
static char *board_types(struct sched *s)
{
	struct board **boards;
	char **types = NULL, *text;
	size_t n, i;

	boards = lab_boards(s->deps.lab, &n);
	for (i = 0; i < n; i++)
		if (!strv_contains(types, board_device(boards[i])->type_name))
			strv_push(&types, board_device(boards[i])->type_name);
	if (types)
		qsort(types, strv_length(types), sizeof(*types), by_name);
	text = strv_join(types, ", ");
	strv_free(types);
	return text;
}

/* Parse @text and check it against this lab; the job on success. */
static int check_job(struct sched *s, const char *text, size_t len, const char *filename,
		     enum job_format fmt, struct job **ret, struct diag *diag)
{
	const struct device_type *type;
	struct job *job;
	int err;

	err = job_parse(text, len, filename, fmt, &job, diag);
	if (err < 0)
		return err;
	type = config_find_type(s->deps.run.config, job->device_type);
	if (!type) {
		char *known = board_types(s);

		err = diag_add(diag, filename, 0, "unknown device type '%s' in this lab (its boards are of type%s %s)",
			       job->device_type, known && strchr(known, ',') ? "s" : "",
			       known && *known ? known : "none: it has no board");
		free(known);
	} else
		err = job_check_device_type(job, type, diag);
	if (job_check_git_allow(job, s->deps.run.config->git_allow, diag) < 0 && !err)
		err = -EINVAL;
	if (job_uses_nfs(job) && !s->deps.run.rootfs)
		err = diag_add(diag, filename, 0, "this lab has no NFS export directory (labd.conf's "
			       "nfs group, doc/nfs.md): it cannot deploy an 'nfsrootfs'");
	if (!err && !lab_has_board(s->deps.lab, job->device_type, job->tags) &&
	    !board_elsewhere(s, job->device_type)) {
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

int sched_check_job(struct sched *s, const char *text, size_t len, const char *filename,
		    enum job_format fmt, bool strict, struct diag *diag, char ***ret_notices)
{
	struct job *job;
	int err = check_job(s, text, len, filename, fmt, &job, diag);

	if (err)
		return err;
	if (strict && job->n_warnings) {
		STRV_FOREACH(n, job->notices)
			if (strstr(*n, ": warning: ") && diag_add_message(diag, *n) == -ENOMEM)
				err = -ENOMEM;
		err = err ? err : -EINVAL;
	} else if (ret_notices) {
		*ret_notices = job->notices;
		job->notices = NULL;
	}
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

/* Free what insert_job() allocated in @rec (its other strings are borrowed). */
static void inserted_release(struct job_record *rec)
{
	free(rec->tags);
	free(rec->definition);
}

/*
 * Store @job, queued; @rec is what was stored, its id filled (strings
 * borrowed from @job and the arguments, but for its tags and definition:
 * inserted_release()).
 */
static int insert_job(struct sched *s, const struct job *job, const char *text, size_t len,
		      const char *filename, enum job_format fmt, const char *submitter,
		      bool session, bool first, struct job_record *rec)
{
	json_t *tags = json_array();
	int err;

	STRV_FOREACH(t, job->tags)
		json_array_append_new(tags, json_string(*t));
	*rec = (struct job_record){ 0 };
	rec->name = job->name;
	rec->device_type = job->device_type;
	rec->tags = json_dumps(tags, JSON_COMPACT);
	json_decref(tags);
	rec->priority = job->priority;
	rec->submitted = loop_realtime(s->deps.run.loop);
	rec->state = JOB_STATE_QUEUED;
	/* never its secrets: they stay in memory (sched_keep.c) */
	err = job_redact(job, text, len, fmt, &rec->definition, &(size_t){ 0 });
	if (err < 0)
		goto err;
	rec->format = (char *)(fmt == JOB_FORMAT_JSON ? "json" : "yaml");
	rec->filename = (char *)filename;
	rec->submitter = (char *)(submitter ? submitter : "anonymous");
	rec->attempt = 1;
	rec->retries_left = session ? 0 : (int)job->infrastructure_retries;
	rec->session = session;
	rec->claimed_here_first = first;
	err = rec->tags && rec->definition ? store_job_insert(s->deps.run.store, rec) : -ENOMEM;
	if (!err)
		err = sched_keep_job(s, rec->id, job, rec->submitted);
	if (err < 0)
		goto err;
	return 0;

err:
	inserted_release(rec);
	return err;
}

int sched_submit(struct sched *s, const char *text, size_t len, const char *filename,
		 enum job_format fmt, const char *submitter, int64_t *ret_id, struct diag *diag)
{
	struct job_record rec;
	struct job *job;
	bool first;
	int64_t id;
	int err;

	if (fmt == JOB_FORMAT_AUTO)
		fmt = detect_format(text, len);
	err = check_job(s, text, len, filename, fmt, &job, diag);
	if (err < 0)
		return err;
	/* a board of this host claims it at once: the lab's other hosts need not try */
	first = store_host_name(s->deps.run.store) &&
		sched_may_claim_now(s, job->device_type, job->tags);
	err = insert_job(s, job, text, len, filename, fmt, submitter, false, first, &rec);
	if (!err) {
		id = rec.id;
		inserted_release(&rec);
		log_info("job %lld '%s' queued for '%s' by %s", (long long)id, job->name,
			 job->device_type, submitter ? submitter : "anonymous");
		events_emit(s->deps.run.events, id, loop_realtime(s->deps.run.loop), "queued",
			    json_pack("{s:s, s:s, s:i, s:s}", "name", job->name, "device_type",
				      job->device_type, "priority", job->priority, "submitter",
				      submitter ? submitter : "anonymous"));
		sched_job_queued(s, id, job->device_type, job->tags, NULL, NULL, first);
		*ret_id = id;
	}
	job_free(job);
	return err;
}

int sched_boot_session(struct sched *s, struct board *b, const char *text, size_t len,
		       const char *filename, enum job_format fmt, const char *holder,
		       int64_t *ret_id, struct diag *diag)
{
	const char *type = board_device(b)->type_name;
	struct job_record rec = { 0 };
	struct job *job;
	int64_t id = 0;
	int err;

	if (board_job(b))
		return -EBUSY;
	if (fmt == JOB_FORMAT_AUTO)
		fmt = detect_format(text, len);
	err = check_job(s, text, len, filename, fmt, &job, diag);
	if (err < 0)
		return err;
	if (strcmp(job->device_type, type))
		err = diag_add(diag, filename, 0, "the job is for device type '%s', board '%s' is a '%s'",
			       job->device_type, board_name(b), type);
	if (!err)
		err = insert_job(s, job, text, len, filename, fmt, holder, true, false, &rec);
	if (!err) {
		id = rec.id;
		log_info("job %lld '%s': %s boots board '%s'", (long long)id, job->name, holder,
			 board_name(b));
		events_emit(s->deps.run.events, id, loop_realtime(s->deps.run.loop), "queued",
			    json_pack("{s:s, s:s, s:s, s:s}", "name", job->name, "device_type",
				      type, "submitter", holder, "session", board_name(b)));
		/* started from what was stored, not read back (a read that would wait) */
		err = sched_start_session(s, &rec, b);
		inserted_release(&rec);
	}
	job_free(job);
	if (!err)
		*ret_id = id;
	return err;
}
