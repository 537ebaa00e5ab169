/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lava_notify.h -- the body of a LAVA notify callback, as LAVA's server sends it
 *
 * KernelCI's callback handler (and other LAVA users) read what LAVA's
 * create_job_data() puts in a callback (shared/notes/lava-api.md, 3.3):
 *
 *   id; status (legacy int) and status_string (its name, lower case); state
 *   and state_string; health and health_string (LAVA's numbers and display
 *   names, lava_results.h); submit_time, start_time, end_time as Python's
 *   str(datetime) ("2026-01-01 12:00:00.123456+00:00", or "None");
 *   submitter_username, submitter_email, failure_comment, priority,
 *   description (the job's name), actual_device_id (the board), definition
 *   (the stored YAML: secrets are "[secret]" there), metadata (a mapping),
 *   health_check (false)
 *   + dataset logs or all: "log", the whole YAML log (lava_log.h)
 *   + dataset results or all: "results", suite -> export YAML (lava_results.h)
 *
 * A URL's {FIELD} placeholders (upper case field names: {ID}, {STATUS},
 * {STATUS_STRING} ...) are replaced by the scalar fields, as LAVA does.
 */
#ifndef LABD_LAVA_NOTIFY_H
#define LABD_LAVA_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct job_record;
struct lava_results;

#define LAVA_NOTIFY_MAX_LOG (16U << 20)	/* bytes of log a callback carries at most */

/**
 * lava_notify_data() - the callback body of job @rec
 * @metadata: the job's metadata mapping (borrowed), or NULL
 * @log_dir: the job's log directory when the log goes along, else NULL
 * @results: the job's results when they go along, else NULL
 *
 * Returns a new object, or NULL (ENOMEM, or the log cannot be read).
 */
json_t *lava_notify_data(const struct job_record *rec, const json_t *metadata,
			 const char *log_dir, const struct lava_results *results);

/**
 * lava_notify_add_log() - add the "log" of @data: the YAML log of @log_dir,
 * read now (a callback's body carries the log as it is when sent)
 *
 * Returns 0, or -ENOMEM (out of memory, or the log cannot be read).
 */
int lava_notify_add_log(json_t *data, const char *log_dir);

/** lava_notify_url() - @url with its {FIELD} placeholders from @data (caller frees). */
char *lava_notify_url(const char *url, const json_t *data);

/**
 * lava_notify_urlencoded() - @data as a form body (content-type urlencoded):
 * strings as they are, numbers and booleans as text, mappings as JSON text.
 */
char *lava_notify_urlencoded(const json_t *data);

#endif
