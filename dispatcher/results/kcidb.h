/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kcidb.h -- one finished job as a KCIDB v5.3 document
 *
 * The document (shared/notes/kcidb.md) holds:
 *
 *  - a checkout and a build, from the job's metadata `kcidb` object:
 *
 *      metadata:
 *        kcidb:
 *          checkout: {id: ..., tree_name: ..., git_repository_url: https://...,
 *                     git_commit_hash: <40 hex>, git_repository_branch: ...}
 *          build: {id: ..., architecture: arm64, compiler: ..., config_name: ...}
 *          compatible: [vendor,board, vendor,soc]
 *
 *    Known KCIDB fields of the right type and pattern are copied, others are
 *    left out.  An id without an origin prefix gets "<origin>:" before it;
 *    without ids they are "<origin>:job-<id>".  With `build_id` instead (a
 *    build another origin submitted, e.g. "maestro:<node>"), no checkout or
 *    build is sent and the tests point at that build.
 *  - the test "boot" (id "<origin>:job-<id>.boot"): status from the job's
 *    outcome (kcidb_boot_status()), start time and duration, environment
 *    (board, device type, lab; DT compatible when given), log_url,
 *    log_excerpt (the end of the console log: at most 16384 characters,
 *    valid UTF-8, NUL left out), misc {runtime: <lab>, lab, board,
 *    device_type, health, error_type, error_msg, attempt}.
 *  - a child test per result: path "boot.<suite>.<name>" (names sanitized by
 *    kcidb_path_append()), status from the result, the measurement as
 *    `number`, its console lines (or a kernel report's excerpt) as
 *    log_excerpt.
 *
 * Status of a result: pass PASS, fail FAIL, skip SKIP, anything else ERROR.
 */
#ifndef LABD_KCIDB_H
#define LABD_KCIDB_H

#include <stddef.h>

#include <jansson.h>

struct report;
struct strbuf;

#define KCIDB_MAJOR 5
#define KCIDB_MINOR 3
#define KCIDB_MAX_EXCERPT 16384		/* characters of a log_excerpt */
#define KCIDB_ORIGIN_PATTERN "^[a-z0-9_]+$"

/**
 * kcidb_build() - the document for @r, submitted as @origin
 *
 * Returns 0 with a new reference in @ret, -EINVAL (@origin invalid) or -ENOMEM.
 */
int kcidb_build(const struct report *r, const char *origin, json_t **ret);

/**
 * kcidb_check() - check what kcidb_build() produces against the schema rules
 * it relies on: version, required fields, id/origin/path/status patterns,
 * date-times, excerpt length, no NUL and no null anywhere, no unknown keys.
 *
 * Returns 0, or -EINVAL with the first problem appended to @why.
 */
int kcidb_check(const json_t *doc, struct strbuf *why);

/**
 * kcidb_path_append() - add @name to test path @path: '.' splits levels,
 * characters outside [a-zA-Z0-9_-] become '_', empty levels are dropped.
 */
int kcidb_path_append(struct strbuf *path, const char *name);

/** kcidb_result_status() - "PASS", "FAIL", "SKIP" or "ERROR" for a labd result. */
const char *kcidb_result_status(const char *result);

/**
 * kcidb_boot_status() - the boot test's status from the job's outcome
 *
 * PASS when the last attempt reached a shell (or the job is complete); else
 * by the error: a job error after the kernel started FAIL (panic, no login),
 * other job errors, infrastructure and labd bugs MISS (the lab could not
 * judge the kernel), test errors and cancellation ERROR.  NULL while the job
 * is not finished (the field is then left out).
 */
const char *kcidb_boot_status(const struct report *r);

/** kcidb_origin_valid() - whether @origin matches KCIDB_ORIGIN_PATTERN. */
int kcidb_origin_valid(const char *origin);

#endif
