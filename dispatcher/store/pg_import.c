// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_import.c -- `labd store migrate`: an existing lab's store (SQLite) copied
 * into an empty PostgreSQL database, keeping every id
 *
 * What is read goes through store.h (the source may be any driver); what is
 * written are INSERTs with the source's ids, all in one transaction, then
 * the sequences are set past the largest id so that the next job,
 * reservation and result get higher ones.  Jobs that ran keep their board
 * and get this host's name (a running job is recovered by the host that
 * ran it); boards keep their state and get their host when it registers
 * them.  The users of labd.conf stay in labd.conf; the tokens made through
 * the API are copied.  So are the delivery positions (how far each results
 * backend's receiver acknowledged each job's events), after the jobs they
 * belong to: the http backend goes on from there instead of sending a
 * job's events again.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "core/log.h"

/* pg_job_args()'s columns, then what only a copy has */
static const char sql_job[] =
	"INSERT INTO jobs (name, device_type, tags, priority, submitted, started, ended, state,"
	" health, error_type, error_msg, device, definition, format, filename, submitter,"
	" attempt, retries_left, recovered, last_error, session, id, avoid, results_pass,"
	" results_fail, results_skip, results_unknown, log_removed, history_removed, host)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	" $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29,"
	" CASE WHEN $12::text IS NOT NULL THEN $30 END)";
static const char sql_event[] =
	"INSERT INTO events (job_id, seq, ts, kind, data) VALUES ($1, $2, $3, $4, $5)";
/* pg_reservation_args()'s columns, then the id and what happened to it */
static const char sql_reservation[] =
	"INSERT INTO reservations (holder, board, device_type, tags, priority, duration,"
	" submitted, id, state, device, started, until, ended, end_reason)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";
static const char sql_delivery[] =
	"INSERT INTO deliveries (job_id, backend, receiver, seq) VALUES ($1, $2, $3, $4)";
static const char sql_token[] =
	"INSERT INTO tokens (hash, user_name, role, created, created_by) VALUES ($1, $2, $3, $4, $5)";
static const char sql_empty[] =
	"SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM reservations)";
static const char sql_sequences[] =
	"SELECT setval('jobs_id_seq', GREATEST((SELECT max(id) FROM jobs), 1)),"
	" setval('reservations_id_seq', GREATEST((SELECT max(id) FROM reservations), 1)),"
	" setval('results_id_seq', GREATEST((SELECT max(id) FROM results), 1))";

struct import {
	struct pg_store *ps;
	struct store *from;
	int64_t jobs, results, events, reservations, devices, tokens, deliveries;
	int64_t last_id;	/* paging the jobs, newest first */
};

static int copy_result(const struct result_record *rec, void *ud)
{
	struct import *im = ud;
	int64_t id;

	im->results++;
	return pg_result_insert(im->ps, rec, rec->id, &id);
}

static int copy_event(const struct event_record *rec, void *ud)
{
	struct import *im = ud;
	struct pg_args a = { 0 };

	pg_arg_int(&a, rec->job_id);
	pg_arg_int(&a, rec->seq);
	pg_arg_int(&a, (int64_t)rec->ts);
	pg_arg_text(&a, rec->kind);
	pg_arg_text(&a, rec->data);
	im->events++;
	return pg_call(im->ps, "copy an event", sql_event, &a, NULL, NULL);
}

static int copy_job(const struct job_record *j, void *ud)
{
	struct import *im = ud;
	struct pg_args a = { 0 };
	int r;

	pg_job_args(&a, j, j->attempt);
	pg_arg_int(&a, j->id);
	pg_arg_text(&a, j->avoid);
	pg_arg_int(&a, j->results_pass);
	pg_arg_int(&a, j->results_fail);
	pg_arg_int(&a, j->results_skip);
	pg_arg_int(&a, j->results_unknown);
	pg_arg_int(&a, (int64_t)j->log_removed);
	pg_arg_int(&a, (int64_t)j->history_removed);
	pg_arg_text(&a, im->ps->host);
	im->jobs++;
	im->last_id = j->id;
	r = pg_call(im->ps, "copy a job", sql_job, &a, NULL, NULL);
	if (!r)
		r = store_result_list(im->from, j->id, copy_result, im);
	if (!r)
		r = store_event_list(im->from, j->id, 0, copy_event, im);
	return r;
}

static int copy_delivery(const struct delivery_record *rec, void *ud)
{
	struct import *im = ud;
	struct pg_args a = { 0 };

	pg_arg_int(&a, rec->job_id);
	pg_arg_text(&a, rec->backend);
	pg_arg_text(&a, rec->receiver);
	pg_arg_int(&a, rec->seq);
	im->deliveries++;
	return pg_call(im->ps, "copy a delivery", sql_delivery, &a, NULL, NULL);
}

static int copy_reservation(const struct reservation_record *rec, void *ud)
{
	struct import *im = ud;
	struct pg_args a = { 0 };

	pg_reservation_args(&a, rec);
	pg_arg_int(&a, rec->id);
	pg_arg_text(&a, reservation_state_name(rec->state));
	pg_arg_text(&a, rec->device);
	pg_arg_int(&a, (int64_t)rec->started);
	pg_arg_int(&a, (int64_t)rec->until);
	pg_arg_int(&a, (int64_t)rec->ended);
	pg_arg_text(&a, rec->end_reason);
	im->reservations++;
	return pg_call(im->ps, "copy a reservation", sql_reservation, &a, NULL, NULL);
}

static int copy_device(const struct device_record *rec, void *ud)
{
	struct import *im = ud;

	im->devices++;
	return pg_device_put(&im->ps->store, rec);
}

static int copy_token(const struct token_record *rec, void *ud)
{
	struct import *im = ud;
	struct pg_args a = { 0 };

	pg_arg_text(&a, rec->hash);
	pg_arg_text(&a, rec->user);
	pg_arg_text(&a, rec->role);
	pg_arg_int(&a, (int64_t)rec->created);
	pg_arg_text(&a, rec->created_by);
	im->tokens++;
	return pg_call(im->ps, "copy a token", sql_token, &a, NULL, NULL);
}

/* Every job, a page at a time (newest first), with its results and events. */
static int copy_jobs(struct import *im)
{
	struct job_filter f = { .state = -1, .limit = STORE_JOB_LIST_MAX };
	int64_t before;
	int r;

	do {
		before = im->last_id;
		f.before_id = before;
		r = store_job_list(im->from, &f, copy_job, im);
	} while (!r && im->last_id != before);
	return r;
}

static int import_all(struct import *im)
{
	int64_t n = -1;
	int r;

	r = pg_call(im->ps, "look at the database", sql_empty, NULL, pg_read_int, &n);
	if (!r && n) {
		log_error("the PostgreSQL database has jobs or reservations already: "
			  "`labd store migrate` fills an empty one");
		return -EEXIST;
	}
	if (!r)
		r = copy_jobs(im);
	if (!r)	/* a position's job is there now */
		r = store_delivered_list(im->from, copy_delivery, im);
	if (!r)
		r = store_reservation_recent(im->from, UINT32_MAX, copy_reservation, im);
	if (!r)
		r = store_device_list(im->from, copy_device, im);
	if (!r)
		r = store_token_list(im->from, copy_token, im);
	if (!r)
		r = pg_call(im->ps, "set the id sequences", sql_sequences, NULL, NULL, NULL);
	return r;
}

int pg_import(struct store *st, struct store *from)
{
	struct import im = { .ps = pg_of(st), .from = from };
	int r;

	if (im.ps->loop)
		return -EINVAL;	/* a tool's work, never labd's loop */
	r = store_begin(st);
	if (r < 0)
		return r;
	r = import_all(&im);
	if (r < 0) {
		pg_call(im.ps, "roll back the copy", "ROLLBACK", NULL, NULL, NULL);
		im.ps->in_txn = false;
		st->depth = 0;
		return r;
	}
	r = store_commit(st);
	if (!r)
		log_info("copied %" PRId64 " jobs, %" PRId64 " results, %" PRId64 " events, %" PRId64
			 " delivery positions, %" PRId64 " reservations, %" PRId64
			 " boards and %" PRId64 " tokens",
			 im.jobs, im.results, im.events, im.deliveries, im.reservations,
			 im.devices, im.tokens);
	return r;
}
