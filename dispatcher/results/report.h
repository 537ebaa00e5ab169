/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h -- everything about one finished job that result documents need
 *
 * results/ owns what the console says about tests and what a finished job
 * becomes: parsers of the console (kmsg.h kernel reports, ktap.h KTAP,
 * lava_signals.h LAVA's test signals), documents built from a job (this
 * report; kcidb.h, junit.h, lava_log.h, lava_results.h, with utf8.h,
 * yaml_out.h, resultfile.h), and in results/backends/ the backends that
 * deliver them (backend.h).
 *
 * KCIDB documents (kcidb.h) and JUnit files (junit.h) are built from a
 * struct report, not from the store directly, so their builders are pure
 * functions that unit tests feed by hand.  report_load() fills one from
 * labd's store and the job's log directory.
 *
 * Strings are owned by the report; console excerpts are raw bytes (invalid
 * UTF-8 and NUL kept), the builders sanitize them for their format.
 */
#ifndef LABD_REPORT_H
#define LABD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/jobstate.h"

struct job;
struct job_record;
struct lab_config;
struct store;

#define REPORT_LOG_TAIL (64 * 1024)		/* bytes of the end of the log kept */
#define REPORT_EXCERPT_MAX (16 * 1024)		/* bytes of a result's console lines kept */
#define REPORT_MAX_RESULTS 10000

struct report_result {
	char *suite;		/* "boot", "kernel-messages", a KTAP suite ... */
	char *name;		/* '.' separates KTAP levels */
	char *result;		/* "pass", "fail", "skip", "unknown" */
	bool has_measurement;
	double measurement;
	char *units;		/* or NULL */
	int64_t log_start;	/* console lines, 0 if none */
	int64_t log_end;
	json_t *extra;		/* object, or NULL */
	char *excerpt;		/* raw console bytes of its lines, or NULL */
	size_t excerpt_len;
	uint64_t created;	/* realtime usec */
};

struct report {
	int64_t job_id;
	char *lab;		/* lab_name */
	char *name;		/* job name */
	char *device;		/* board, or NULL if it never ran */
	char *device_type;
	char *submitter;
	enum job_health health;
	enum error_type error_type;
	char *error_msg;	/* or NULL */
	uint64_t submitted;	/* realtime usec; 0 unknown */
	uint64_t started;
	uint64_t ended;
	int attempt;
	json_t *metadata;	/* the job's metadata object, or NULL */
	char **phases;		/* strv: boot phases reached by the last attempt, in order */
	char **stages;		/* strv: the stages the last attempt started ("auto-login-action",
				 * "0_smoke": run_stage()) */
	char **stages_done;	/* strv: those of them it finished */
	char **testdefs;	/* strv: the suites of the job's test definitions,
				 * "<index>_<name>" in job order (LAVA's names) */
	struct report_result *results;
	size_t n_results;
	char *log_tail;		/* the last REPORT_LOG_TAIL bytes of console.log, raw */
	size_t log_tail_len;
	uint64_t log_size;	/* bytes of console.log */
	char *log_url;		/* plain-text log for humans and tools, or NULL */
};

/**
 * report_load() - read job @id from @st and its log directory (below
 * @c's state_dir); the lab is named after @c's lab_name
 * @log_url_base: "https://lab.example.org" or NULL: log_url is then
 *	"<base>/api/v1/jobs/<id>/log", else NULL
 *
 * Returns 0, -ENOENT (no such job), -ENOMEM or -EIO.
 */
int report_load(struct store *st, const struct lab_config *c, int64_t id,
		const char *log_url_base, struct report **ret);

/**
 * report_parse_job() - the stored document of @rec parsed again (free with
 * job_free()), or NULL when it does not parse any more (labd changed)
 */
struct job *report_parse_job(const struct job_record *rec);

/** report_free() - accepts NULL; returns NULL. */
struct report *report_free(struct report *r);

/** report_reached() - whether the last attempt reached boot phase @phase ("shell"). */
bool report_reached(const struct report *r, const char *phase);

/** report_stage() - 0: the last attempt never started stage @name; 1 started; 2 finished. */
int report_stage(const struct report *r, const char *name);

/** report_time() - @usec as "2026-12-03T10:00:00.123456+00:00" in @buf (>= 40 bytes). */
void report_time(uint64_t usec, char *buf, size_t len);

#endif
