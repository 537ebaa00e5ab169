/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lava_results.h -- a job's results in LAVA's shapes
 *
 * LAVA clients read results as suites of test cases: lavacli and squad as
 * YAML "export" dicts over XML-RPC, KernelCI from the notify callback, squad
 * and scripts as JSON from REST /api/v0.2/jobs/<id>/suites/ and tests/.
 * struct lava_results is that view of a struct report (report.h), built
 * once and then written in each of those shapes by pure functions.
 *
 * Suites, in order of their first result:
 *   - every suite of labd's results ("0_smoke-tests", "ktap", a monitor's
 *     name ...), except "kernel-messages", which LAVA does not have (its
 *     reports are the lava suite's kernel-messages case);
 *   - "lava", last, with what LAVA's dispatcher records there:
 *       job                 pass when the job is complete, else fail with
 *                           metadata error_type (LAVA's names: Infrastructure,
 *                           Job, Test, Bug, Canceled) and error_msg;
 *                           only once the job finished
 *       auto-login-action   pass when a shell prompt was reached, fail when
 *                           the job ended without one after the boot began
 *                           waiting for the kernel and the login (its
 *                           "auto-login-action" stage, report_stage()): a job
 *                           that failed before has none, as in LAVA
 *       login-action        the same, when a login prompt was answered
 *       kernel-messages     once the kernel started: fail with metadata
 *                           {extra: [{kind, message}]} when it printed
 *                           reports (oops, panic, warning ...), else pass
 *       <index>_<name>      one per test definition that started: pass when
 *                           it finished (all of a complete job), fail when the
 *                           job ended in it; none for those that never started
 * Suite ids are their place in this list (1, 2, ...); case ids their place
 * in the job (1, 2, ...): REST routes name both below a job.  Ids of a
 * running job's lava suite cases move as results come; a finished job's
 * never change.
 *
 * Case metadata is a mapping (KernelCI reads metadata.set): {definition,
 * case, result[, measurement, units]} plus labd's extra keys (set,
 * reference, error ...).  Log lines are lines of the YAML log (lava_log.h,
 * 1-based) when the log directory was given, else 0.
 */
#ifndef LABD_LAVA_RESULTS_H
#define LABD_LAVA_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/jobstate.h"

struct report;
struct strbuf;

struct lava_case {
	int64_t id;		/* 1-based place in the job */
	size_t suite;		/* index in lava_results.suites */
	char *name;
	char *result;		/* "pass", "fail", "skip", "unknown" */
	bool has_measurement;
	double measurement;
	char *units;		/* or NULL */
	int64_t log_start;	/* YAML log lines, 1-based; 0 if none */
	int64_t log_end;
	json_t *metadata;	/* object */
	uint64_t logged;	/* realtime usec */
};

struct lava_results {
	int64_t job_id;
	char **suites;		/* strv; suite id = index + 1 */
	struct lava_case *cases;
	size_t n_cases;
};

/**
 * lava_results_build() - LAVA's view of report @r
 * @log_dir: the job's log directory, to number log lines as the YAML log
 *	does, or NULL
 *
 * Returns 0 (free with lava_results_free()) or -ENOMEM.
 */
int lava_results_build(const struct report *r, const char *log_dir, struct lava_results **ret);

/** lava_results_free() - accepts NULL; returns NULL. */
struct lava_results *lava_results_free(struct lava_results *lr);

/** lava_results_suite() - the index of suite @name, or -1. */
long lava_results_suite(const struct lava_results *lr, const char *name);

/* ---- LAVA's names of labd's states (doc/lava-compat.md has the tables) ---- */

/** lava_error_type_name() - LAVA's name of @t ("Infrastructure" ...), NULL for none. */
const char *lava_error_type_name(enum error_type t);

/** lava_job_state_name() - "Submitted" (queued), "Running", "Canceling", "Finished". */
const char *lava_job_state_name(enum job_state s);

/** lava_job_health_name() - "Unknown", "Complete", "Incomplete", "Canceled". */
const char *lava_job_health_name(enum job_health h);

/**
 * lava_job_state_int(), lava_job_health_int() - LAVA's numbers of those
 * (TestJob.STATE_* 0..5: Submitted 0, Running 3, Canceling 4, Finished 5;
 * TestJob.HEALTH_* 0..3), as notify callbacks send them.
 */
int lava_job_state_int(enum job_state s);
int lava_job_health_int(enum job_health h);

/**
 * lava_job_state_from_name(), lava_job_health_from_name() - the display
 * names above (exact case, as LAVA's filters want them) back to labd's;
 * LAVA's "Scheduling" and "Scheduled" are labd's queued.  0 or -EINVAL.
 */
int lava_job_state_from_name(const char *name, enum job_state *ret);
int lava_job_health_from_name(const char *name, enum job_health *ret);

/**
 * lava_job_status() - LAVA's legacy status: 0 Submitted, 1 Running,
 * 2 Complete, 3 Incomplete, 4 Canceled, 5 Canceling (a finished job of
 * unknown health counts as Incomplete).
 */
int lava_job_status(enum job_state s, enum job_health h);

/** lava_job_status_name() - "Submitted", "Running", "Complete" ... of lava_job_status(). */
const char *lava_job_status_name(int status);

/**
 * lava_device_health_name() - a board's health as LAVA names a device's:
 * idle, running and reserved boards are "Good" (they run jobs), maintenance
 * is "Maintenance", bad is "Bad".
 */
const char *lava_device_health_name(enum device_state s);

/** lava_device_state_name() - "Idle", "Running" or "Reserved" (others are Idle). */
const char *lava_device_state_name(enum device_state s);

/**
 * lava_results_export_yaml() - cases as a YAML list of LAVA's export dicts
 * (results.get_testjob_results_yaml, get_testsuite_results_yaml, and each
 * suite of a notify callback's results)
 * @suite: index of the only suite to write, or -1 for all
 * @offset, @limit: paging over the selected cases (@limit 0: all)
 *
 * Each dict: name, job, suite, result, measurement ("None" when unset),
 * unit, level (""), url ("/results/<job>/<suite>/<case>"), id, logged,
 * log_start_line, log_end_line ("None" when unknown) as strings, and
 * metadata as a mapping.  Returns 0, -ENOMEM or -EINVAL.
 */
int lava_results_export_yaml(const struct lava_results *lr, long suite, size_t offset,
			     size_t limit, struct strbuf *out);

/**
 * lava_results_case_yaml() - results.get_testcase_results_yaml: the cases
 * named @name of suite @suite, as lava_results_export_yaml() writes them.
 * Returns 0, -ENOENT when there is none, or -ENOMEM.
 */
int lava_results_case_yaml(const struct lava_results *lr, long suite, const char *name,
			   struct strbuf *out);

/** lava_results_suites_yaml() - results.get_testjob_suites_list_yaml: [{name, job, id}]. */
int lava_results_suites_yaml(const struct lava_results *lr, struct strbuf *out);

/**
 * lava_results_callback() - the "results" of a notify callback: an object
 * mapping every suite name to its export YAML text.  NULL on ENOMEM.
 */
json_t *lava_results_callback(const struct lava_results *lr);

/**
 * lava_suite_json() - REST's suite object {id, name, job, resource_uri}
 * @base: "http://host" for resource_uri
 */
json_t *lava_suite_json(const struct lava_results *lr, size_t suite, const char *base);

/**
 * lava_case_json() - REST's test case object: id, name, result, unit,
 * measurement (a decimal string or null), metadata (a YAML string),
 * start_log_line, end_log_line, logged, suite (its id), test_set (null),
 * resource_uri.
 */
json_t *lava_case_json(const struct lava_results *lr, const struct lava_case *c,
		       const char *base);

#endif
