/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * api_lava.h -- what LAVA's two APIs share: jobs, boards and results as LAVA names them
 *
 * labd answers LAVA's clients (lavacli, KernelCI, squad, Mesa CI) on its own
 * HTTP server: REST at /api/v0.2/ (api_lava_rest.c) and XML-RPC at /RPC2
 * (api_lava_rpc.c).  Both read and act through the same functions as the
 * native API (store, sched_submit(), sched_cancel(), report_load()) and
 * the same role check (api_check()).  doc/lava-compat.md maps LAVA's fields,
 * states and error types to labd's.
 *
 * Private to api_lava*.c.
 */
#ifndef LABD_API_LAVA_H
#define LABD_API_LAVA_H

#include <stddef.h>
#include <stdint.h>

#include "api/api_internal.h"
#include "store/store.h"

struct board;
struct lava_results;

/* The LAVA release whose APIs labd answers: lavacli gates options on it. */
#define LAVA_API_VERSION "2026.07"
#define LAVA_RPC_LOG_MAX (2 * 1024 * 1024)	/* YAML bytes of one scheduler.jobs.logs */

/**
 * api_lava_job_id() - a job id as LAVA's clients send it: "12", or 12.
 * Multinode sub-ids ("12.0") are not labd's.  0 or -EINVAL.
 */
int api_lava_job_id(const char *text, int64_t *ret);

/** api_lava_job() - job @id into @rec: 0, -ENOENT or -EIO. */
int api_lava_job(struct api_request *r, int64_t id, struct job_record *rec);

/**
 * api_lava_submit() - queue the job document @def for r->who
 * @why: on failure, why (caller frees): the first problem found and how
 *	many others there are
 *
 * Returns 0, -EINVAL (an invalid job), -E2BIG or another negative errno.
 */
int api_lava_submit(struct api_request *r, const char *def, size_t len, int64_t *ret_id,
		    char **why);

/** api_lava_check() - api_lava_submit() without queueing (validate). */
int api_lava_check(struct api_request *r, const char *def, size_t len, char **why);

/**
 * api_lava_cancel() - cancel job @rec for r->who, who must own it (or be an
 * admin): 0 (also when it had finished), -EACCES with @d filled, -EREMOTE
 * when another host of the lab runs it (rec->host: the caller has that host
 * cancel it, nothing was done here), or another negative errno.
 */
int api_lava_cancel(struct api_request *r, const struct job_record *rec, struct api_denial *d);

/** api_lava_runs_elsewhere() - whether another host of the lab runs job @rec (sched.h). */
bool api_lava_runs_elsewhere(struct api_request *r, const struct job_record *rec);

/**
 * api_lava_results() - job @id's results in LAVA's shapes, their log lines
 * numbered as the YAML log numbers them.  0, -ENOENT, -ENOMEM or -EIO.
 */
int api_lava_results(struct api_request *r, int64_t id, struct lava_results **ret);

/** api_lava_suites() - the suite names of job @id's results (strv, caller frees), or NULL. */
char **api_lava_suites(struct api_request *r, int64_t id);

/** api_lava_job_dir() - where job @id's log lives (caller frees), or NULL. */
char *api_lava_job_dir(struct api_request *r, int64_t id);

/** api_lava_metadata() - the `metadata` of the job's document (new reference), or {}. */
json_t *api_lava_metadata(const struct job_record *rec);

/** api_lava_tags() - the job's tags (a JSON array text) as a JSON array. */
json_t *api_lava_tags(const struct job_record *rec);

/** api_lava_boards() - every board of the lab (borrowed). */
struct board **api_lava_boards(struct api_request *r, size_t *ret_n);

/**
 * api_lava_tag_names() - the tags of the lab's boards, each once, in name
 * order (strv, caller frees): LAVA's tags, whose REST ids are their places
 * in it from 1 (api_lava_tag_id()).
 */
char **api_lava_tag_names(struct api_request *r);

/** api_lava_tag_id() - the id of @tag in @names, or 0. */
int api_lava_tag_id(char *const *names, const char *tag);

/** api_lava_store() - the store the API reads. */
struct store *api_lava_store(struct api_request *r);

/** api_lava_now() - the loop's realtime, usec. */
uint64_t api_lava_now(struct api_request *r);

/** api_lava_worker() - the name of this lab host, as LAVA names a worker. */
const char *api_lava_worker(void);

#endif
