// SPDX-License-Identifier: GPL-2.0-or-later
/* pg.c -- the PostgreSQL store: settings, calls and answers, open, the ops table */
#include "store/pg_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"

/* ---- parameters ---- */

void pg_arg_text(struct pg_args *a, const char *s)
{
	if (a->n < PG_MAX_ARGS)
		a->v[a->n++] = s;
}

void pg_arg_int(struct pg_args *a, int64_t v)
{
	if (a->n >= PG_MAX_ARGS)
		return;
	snprintf(a->num[a->n], sizeof(a->num[0]), "%" PRId64, v);
	a->v[a->n] = a->num[a->n];
	a->n++;
}

void pg_arg_bool(struct pg_args *a, bool v)
{
	pg_arg_text(a, v ? "true" : "false");
}

void pg_arg_double(struct pg_args *a, double v)
{
	if (a->n >= PG_MAX_ARGS)
		return;
	snprintf(a->num[a->n], sizeof(a->num[0]), "%.17g", v);
	a->v[a->n] = a->num[a->n];
	a->n++;
}

/* ---- one call ---- */

/* A call waiting for its answer; freed by whoever comes last (the wait may give up). */
struct pg_wait {
	pg_read_fn read;
	void *userdata;
	int err;
	bool done;
	bool abandoned;
	char *msg;
};

static void call_done(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_wait *w = userdata;

	if (w->abandoned) {
		free(w);
		return;
	}
	w->err = err;
	if (!err && w->read)
		w->err = w->read(res, w->userdata);
	if (msg)
		w->msg = strdup(msg);
	w->done = true;
}

void pg_log_call_error(struct pg_store *ps, const char *op, int err, const char *msg)
{
	size_t len = msg ? strlen(msg) : 0;

	if (err == -ENOTCONN)
		log_error("cannot %s: the database is not reachable: %s", op,
			  pg_conn_last_error(ps->conn));
	else if (err == -ETIMEDOUT)
		log_error("cannot %s: no answer from the database in %" PRIu64 " s", op,
			  ps->timeout / 1000000);
	else if (err == -EIO)
		log_error("cannot %s: %.*s", op, (int)(len && msg[len - 1] == '\n' ? len - 1 : len),
			  msg ? msg : "error");
}

/* pg_call(), its answer kept for a read context when @deferrable and pg_read_deferred(). */
static int call(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
		pg_read_fn read, void *userdata, bool deferrable)
{
	struct pg_wait *w = calloc(1, sizeof(*w));
	uint64_t t0 = pg_now();
	int r;

	if (!w)
		return -ENOMEM;
	if (ps->loop && ps->opened && !pg_conn_is_up(ps->conn)) {
		free(w);	/* in labd's loop: no waiting for a database that is away */
		pg_conn_start(ps->conn);
		return -ENOTCONN;
	}
	if (deferrable && pg_read_deferred(ps)) {
		free(w);
		return pg_read_in_context(ps, op, sql, a, read, userdata);
	}
	w->read = read;
	w->userdata = userdata;
	r = pg_conn_send(ps->conn, sql, a ? a->n : 0, a ? a->v : NULL,
			 ps->in_txn ? 0 : PG_CMD_SYNC, call_done, w);
	if (r < 0) {
		free(w);
		return r;
	}
	r = pg_conn_wait(ps->conn, &w->done, t0 + ps->timeout, !ps->patient);
	if (ps->loop && ps->opened)	/* what still waits in labd's loop (doc/multi-host.md) */
		log_debug("store: waited %" PRIu64 " us for the database to %s", pg_now() - t0, op);
	if (r < 0) {
		w->abandoned = true;	/* its completion frees it */
		pg_log_call_error(ps, op, r, NULL);
		return r;
	}
	r = w->err;
	pg_log_call_error(ps, op, r, w->msg);
	free(w->msg);
	free(w);
	return r;
}

int pg_call(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	    pg_read_fn read, void *userdata)
{
	return call(ps, op, sql, a, read, userdata, true);
}

int pg_call_now(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
		pg_read_fn read, void *userdata)
{
	return call(ps, op, sql, a, read, userdata, false);
}

/* ---- answers ---- */

int64_t pg_changed(PGresult *res)
{
	const char *n = PQcmdTuples(res);

	return n && *n ? strtoll(n, NULL, 10) : 0;
}

int pg_read_changed(PGresult *res, void *userdata)
{
	return pg_changed(res) ? 0 : -ENOENT;
}

int pg_read_int(PGresult *res, void *userdata)
{
	if (PQntuples(res) < 1)
		return -ENOENT;
	*(int64_t *)userdata = pg_int(res, 0, 0);
	return 0;
}

int64_t pg_int(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

double pg_double(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtod(PQgetvalue(res, row, col), NULL);
}

bool pg_bool(PGresult *res, int row, int col)
{
	return !PQgetisnull(res, row, col) && PQgetvalue(res, row, col)[0] == 't';
}

bool pg_null(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col);
}

const char *pg_value(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

int pg_read_texts(PGresult *res, int row, void *rec, const struct pg_text *t, size_t n)
{
	const char *v;
	char **field;
	size_t i;

	for (i = 0; i < n; i++) {
		field = (char **)((char *)rec + t[i].offset);
		v = pg_value(res, row, t[i].col);
		*field = NULL;
		if (v && !(*field = strdup(v)))
			return -ENOMEM;
	}
	return 0;
}

int pg_bad_value(const char *what, const char *value)
{
	log_error("invalid %s '%s' in the database", what, value ? value : "(null)");
	return -EIO;
}

int pg_read_rows(PGresult *res, void *userdata)
{
	struct pg_rows_read *rr = userdata;
	int i, n = PQntuples(res), r = 0;
	void *rec;

	for (i = 0; i < n && !r; i++) {
		rec = store_rows_add(rr->rows);
		r = rec ? rr->reader->read(res, i, rec) : -ENOMEM;
	}
	if (r < 0)
		store_rows_release(rr->rows);
	return r;
}

int pg_read_one(PGresult *res, void *userdata)
{
	struct pg_one_read *o = userdata;
	int r;

	if (PQntuples(res) < 1)
		return -ENOENT;
	memset(o->rec, 0, o->reader->type->size);
	r = o->reader->read(res, 0, o->rec);
	if (r < 0)
		o->reader->type->release(o->rec);
	return r;
}

int pg_list(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	    const struct pg_reader *reader, struct store_rows *rows)
{
	struct pg_rows_read rr = { reader, rows };

	return pg_call(ps, op, sql, a, pg_read_rows, &rr);
}

int pg_get(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	   const struct pg_reader *reader, void *ret)
{
	struct pg_one_read o = { reader, ret };

	return pg_call(ps, op, sql, a, pg_read_one, &o);
}

/* ---- transactions ---- */

static int pg_begin(struct store *st)
{
	struct pg_store *ps = pg_of(st);
	int r;

	if (pg_writing_behind(ps))
		pg_writer_end_group(ps);	/* the writes before it are not part of it */
	ps->in_txn = true;
	if (pg_writing_behind(ps))
		return 0;	/* the writes until the commit are one group (pg_writer.c) */
	r = pg_call(ps, "begin a transaction", "BEGIN", NULL, NULL, NULL);
	if (r < 0)
		ps->in_txn = false;
	return r;
}

static int pg_commit(struct store *st)
{
	struct pg_store *ps = pg_of(st);

	ps->in_txn = false;	/* COMMIT ends the batch: a sync point */
	if (pg_writing_behind(ps))
		return pg_writer_mark(ps);
	return pg_call(ps, "commit a transaction", "COMMIT", NULL, NULL, NULL);
}

/* ---- open and close ---- */

static void pg_close(struct store *st)
{
	struct pg_store *ps = pg_of(st);

	/* what is queued goes out first (a bounded wait: labd is stopping); the rest stays journaled */
	if (ps->loop)
		pg_writer_end_group(ps);
	if (ps->conn && pg_conn_is_up(ps->conn) && ps->in_step && pg_writer_backlog(ps))
		pg_call(ps, "send the last writes", "SELECT 1", NULL, NULL, NULL);
	if (ps->conn && pg_writer_backlog(ps))
		log_warning("store: %u writes stay in the journal until the database is back",
			    pg_writer_backlog(ps));
	ps->lease_timer = loop_source_free(ps->lease_timer);
	pg_conn_free(ps->conn);
	pg_conn_free(ps->claims_conn);
	pg_claims_free(ps);
	pg_reads_free(ps);
	pg_tokens_free(ps);
	pg_host_free(ps);
	pg_event_seqs_free(ps);
	pg_writer_close(ps);
	free(ps->host);
	free(ps->url);
	free(ps->lab_secret);
	free(ps);
}

bool pg_available_now(const struct pg_store *ps)
{
	return pg_conn_is_up(ps->conn) && (ps->in_step || !pg_writing_behind(ps)) && !ps->fenced;
}

static bool pg_available(const struct store *st)
{
	return pg_available_now((const struct pg_store *)st);
}

static const struct store_ops pg_ops = {
	.close = pg_close,
	.available = pg_available,
	.begin = pg_begin,
	.commit = pg_commit,
	.job_insert = pg_job_insert,
	.job_get = pg_job_get,
	.job_list = pg_job_list,
	.job_queued = pg_job_queued,
	.job_running = pg_job_running,
	.job_still_queued = pg_job_still_queued,
	.job_start = pg_job_start,
	.job_set_state = pg_job_set_state,
	.job_finish = pg_job_finish,
	.job_requeue = pg_job_requeue,
	.job_prune = pg_job_prune,
	.job_count = pg_job_count,
	.job_count_matching = pg_job_count_matching,
	.device_get = pg_device_get,
	.device_put = pg_device_put,
	.device_list = pg_device_list,
	.token_add = pg_token_add,
	.token_find = pg_token_find,
	.token_list = pg_token_list,
	.import = pg_import,
	.board_register = pg_board_register,
	.board_release = pg_board_release,
	.host_name = pg_host_name,
	.host_url = pg_host_url,
	.host_reaped = pg_host_reaped,
	.lab_secret = pg_lab_secret,
	.board_elsewhere = pg_board_elsewhere,
	.result_add = pg_result_add,
	.result_list = pg_result_list,
	.event_add = pg_event_add,
	.event_list = pg_event_list,
	.delivered_set = pg_delivered_set,
	.delivered_get = pg_delivered_get,
	.delivered_list = pg_delivered_list,
	.reservation_insert = pg_reservation_insert,
	.reservation_get = pg_reservation_get,
	.reservation_waiting = pg_reservation_waiting,
	.reservation_active = pg_reservation_active,
	.reservation_recent = pg_reservation_recent,
	.reservation_activate = pg_reservation_activate,
	.reservation_renew = pg_reservation_renew,
	.reservation_end = pg_reservation_end,
	.claim = pg_claim,
	.queue_position = pg_queue_position,
	.job_position = pg_job_position,
	.announce = pg_announce,
	.queue_summary = pg_queue_summary,
	.sync = pg_sync,
	.forget = pg_forget,
	.read_begin = pg_read_begin,
	.read_end = pg_read_end,
	.read_pending = pg_read_pending,
};

static void on_conn_state(bool up, void *userdata)
{
	struct pg_store *ps = userdata;

	pg_writer_state(ps, up);
	pg_host_state(ps, up);
}

static const char *const pg_keys[] = { "conninfo", "host", "url", "timeout", "host_lease",
				       "ids_ahead", NULL };

/* The settings of the `store` group, checked (@ps NULL: only checked). */
static int pg_settings(const config_setting_t *s, struct pg_store *ps, struct diag *diag)
{
	const char *conninfo = NULL, *host = NULL, *url = NULL;
	long long timeout = PG_DEFAULT_TIMEOUT, lease = PG_DEFAULT_LEASE, ahead = PG_IDS_AHEAD;
	int r;
	char *err = NULL;
	PQconninfoOption *opts;

	/* -ENOENT: an optional key left out */
	if (cfg_get_string(s, "conninfo", true, &conninfo, diag) < 0 ||
	    cfg_get_string(s, "host", false, &host, diag) == -EINVAL ||
	    cfg_get_string(s, "url", false, &url, diag) == -EINVAL ||
	    cfg_get_int(s, "timeout", false, 1, 3600, &timeout, diag) == -EINVAL ||
	    cfg_get_int(s, "host_lease", false, 3, 86400, &lease, diag) == -EINVAL ||
	    cfg_get_int(s, "ids_ahead", false, 2, PG_IDS_MAX, &ahead, diag) == -EINVAL)
		return -EINVAL;
	opts = PQconninfoParse(conninfo, &err);
	if (!opts) {
		r = diag_add(diag, cfg_file(s), cfg_line(config_setting_get_member(s, "conninfo")),
			     "invalid conninfo: %s", err ? err : "out of memory");
		PQfreemem(err);
		return r;
	}
	PQconninfoFree(opts);
	if (host && (!*host || strlen(host) > 64))
		return diag_add(diag, cfg_file(s), cfg_line(s), "store.host must be 1 to 64 bytes");
	if (!ps)
		return 0;
	ps->timeout = (uint64_t)timeout * 1000000ULL;
	if (url) {	/* the configured address wins over --listen's */
		free(ps->url);
		if (!(ps->url = strdup(url)))
			return -ENOMEM;
	}
	ps->host_lease = (unsigned)lease;
	ps->ids_ahead = (unsigned)ahead;
	if (host) {
		ps->host = strdup(host);
	} else {
		char name[256] = "";

		gethostname(name, sizeof(name) - 1);
		ps->host = strdup(name[0] ? name : "localhost");
	}
	if (!ps->host)
		return -ENOMEM;
	r = pg_conn_new(&(struct pg_conn_params){ .conninfo = conninfo, .name = "store",
						  .loop = ps->loop, .state = on_conn_state,
						  .userdata = ps },
			&ps->conn);
	if (!r && ps->loop)	/* connects at its first claim */
		r = pg_conn_new(&(struct pg_conn_params){ .conninfo = conninfo, .name = "claims",
							  .loop = ps->loop },
				&ps->claims_conn);
	return r;
}

static int pg_check(const config_setting_t *settings, struct diag *diag)
{
	if (!settings)
		return 0;
	return pg_settings(settings, NULL, diag);
}

static int pg_open(const struct store_params *p, struct store **ret, struct diag *diag)
{
	struct pg_store *ps;
	int r;

	if (!p->settings)
		return diag_add(diag, NULL, 0, "the postgresql store needs a `store` group");
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->store.ops = &pg_ops;
	ps->loop = p->loop;
	ps->changed = p->changed;
	ps->queued = p->queued;
	ps->fenced_fn = p->fenced;
	ps->event_fn = p->event;
	ps->changed_userdata = p->changed_userdata;
	if (p->host_url && !(ps->url = strdup(p->host_url))) {
		free(ps);
		return -ENOMEM;
	}
	ps->journal_fd = -1;
	r = pg_settings(p->settings, ps, diag);
	if (!r)
		r = pg_writer_open(ps, p->state_dir);
	if (!r)
		r = pg_migrate(ps);
	if (!r && !p->tool)
		r = pg_host_open(ps, p->boards);
	if (!r && !p->tool)
		r = pg_lab_secret_load(ps);
	if (!r && pg_writing_behind(ps))
		r = pg_ids_fill(ps);
	if (!r && ps->loop)
		r = pg_counts_fill(ps);
	if (!r)
		r = pg_tokens_load(ps);
	if (r < 0)
		goto err;
	ps->opened = true;
	pg_writer_state(ps, pg_conn_is_up(ps->conn));
	r = pg_host_start(ps);
	if (r < 0) {
		pg_close(&ps->store);
		return r;
	}
	*ret = &ps->store;
	return 0;
err:
	pg_conn_free(ps->conn);
	pg_conn_free(ps->claims_conn);
	pg_tokens_free(ps);
	pg_host_free(ps);
	pg_event_seqs_free(ps);
	pg_writer_close(ps);
	free(ps->host);
	free(ps->url);
	free(ps->lab_secret);
	free(ps);
	return r;
}

const struct store_driver store_pg_driver = {
	.name = "postgresql",
	.keys = pg_keys,
	.check = pg_check,
	.open = pg_open,
};
