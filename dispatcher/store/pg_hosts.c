// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_hosts.c -- the labd hosts sharing one PostgreSQL database: each has a
 * row in `hosts` with a lease it renews from the loop; one whose lease ran
 * out is reaped by whichever host sees it first (its running jobs requeued
 * once or failed, its boards offline, its boards' active reservations
 * ended); one name runs once (a session advisory lock per host name); the
 * hosts wake each other with NOTIFY on the queue, naming the entry queued
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <jansson.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/strv.h"

/* The session lock of a host name: pg_try_advisory_lock(PG_HOST_LOCK, hashtext(name)). */
#define PG_HOST_LOCK "1818321509"

static const char sql_lock[] = "SELECT pg_try_advisory_lock(" PG_HOST_LOCK ", hashtext($1))";
/* and whether another host reaped this one (lease_until 0) since it last ran */
static const char sql_register[] =
	"WITH old AS (SELECT lease_until FROM hosts WHERE name = $1)"
	" INSERT INTO hosts (name, url, started, lease_until) VALUES ($1, $2, $3, $4)"
	" ON CONFLICT (name) DO UPDATE SET url = COALESCE(excluded.url, hosts.url),"
	" started = excluded.started, lease_until = excluded.lease_until"
	" RETURNING journal_applied, COALESCE((SELECT lease_until = 0 FROM old), false)";
/* no row: another host reaped this one (lease_until 0), which only a new start undoes */
static const char sql_renew[] =
	"UPDATE hosts SET lease_until = $2 WHERE name = $1 AND lease_until > 0 RETURNING name";

/*
 * Reap the hosts whose lease ran out ($1 now, $2 this host), in one
 * statement: a host another labd is reaping is skipped (SKIP LOCKED), and a
 * reaped host has lease_until 0 until it starts again.  Each of its running
 * jobs ends its attempt as sched_recover() ends one found running at a
 * restart: requeued once, or ended (a job requeued so once already, a
 * session: incomplete, infrastructure; one being canceled: canceled).  And
 * it gets the events that host would have written: "attempt-ended", then
 * "requeued" or "finished", numbered after the job's last event by the
 * database, committed with the job's change (no host claims the job before
 * they are in), returned in order (job, seq) for this host to announce.
 */
#define REAP_MSG "'its host ' || host || ' stopped (no lease renewal)'"
#define REAP_COUNT(r) "(SELECT count(*) FROM results WHERE job_id = j.id AND " r ")"
static const char sql_reap[] =
	"WITH dead AS (SELECT name FROM hosts WHERE lease_until > 0 AND lease_until < $1"
	"  AND name <> $2 FOR UPDATE SKIP LOCKED),"
	" lost AS (SELECT id, device, host, " REAP_MSG " AS msg,"
	"  CASE WHEN state = 'canceling' THEN 'canceled'"
	"   WHEN recovered OR session THEN 'incomplete' END AS ends"
	"  FROM jobs WHERE state IN ('running', 'canceling') AND host IN (SELECT name FROM dead)"
	"  FOR UPDATE),"
	" requeued AS (UPDATE jobs j SET state = 'queued', attempt = attempt + 1, device = NULL,"
	"  started = 0, ended = 0, health = 'unknown', error_type = 'none', error_msg = NULL,"
	"  last_error = l.msg, recovered = true, host = NULL"
	"  FROM lost l WHERE j.id = l.id AND l.ends IS NULL RETURNING j.id),"
	" dropped AS (DELETE FROM results WHERE job_id IN (SELECT id FROM requeued)),"
	" failed AS (UPDATE jobs j SET state = 'finished', health = l.ends,"
	"  error_type = CASE l.ends WHEN 'canceled' THEN 'none' ELSE 'infrastructure' END,"
	"  error_msg = l.msg, ended = $1,"
	"  results_pass = " REAP_COUNT("result = 'pass'") ","
	"  results_fail = " REAP_COUNT("result = 'fail'") ","
	"  results_skip = " REAP_COUNT("result = 'skip'") ","
	"  results_unknown = " REAP_COUNT("result NOT IN ('pass', 'fail', 'skip')")
	"  FROM lost l WHERE j.id = l.id AND l.ends IS NOT NULL RETURNING j.id),"
	" ev AS (INSERT INTO events (job_id, seq, ts, kind, data)"
	"  SELECT l.id, COALESCE((SELECT MAX(seq) FROM events e WHERE e.job_id = l.id), 0) + k.n,"
	"   $1, k.kind, k.data FROM lost l, LATERAL (VALUES"
	"   (1, 'attempt-ended', json_build_object('health', 'incomplete', 'error_type',"
	"    'infrastructure', 'error_msg', l.msg, 'device', l.device, 'host', l.host)::text),"
	"   (2, CASE WHEN l.ends IS NULL THEN 'requeued' ELSE 'finished' END,"
	"    CASE WHEN l.ends IS NULL THEN json_build_object('reason', l.msg, 'error_type',"
	"     'infrastructure', 'device', l.device)"
	"    ELSE json_build_object('health', l.ends, 'error_type', CASE l.ends WHEN 'canceled'"
	"     THEN 'none' ELSE 'infrastructure' END, 'error_msg', l.msg, 'device', l.device)"
	"    END::text)) k(n, kind, data)"
	"  RETURNING job_id, seq, ts, kind, data),"
	" boards AS (UPDATE devices SET state = 'bad', job_id = NULL, changed = $1,"
	"  reason = 'its host stopped' WHERE host IN (SELECT name FROM dead) RETURNING name),"
	" ended AS (UPDATE reservations SET state = 'ended', ended = $1,"
	"  end_reason = 'its host stopped'"
	"  WHERE state = 'active' AND device IN (SELECT name FROM boards) RETURNING id),"
	" reaped AS (UPDATE hosts SET lease_until = 0 WHERE name IN (SELECT name FROM dead)"
	"  RETURNING name)"
	" SELECT (SELECT string_agg(name, ', ') FROM reaped), (SELECT count(*) FROM requeued),"
	"  (SELECT count(*) FROM failed), (SELECT count(*) FROM boards),"
	"  (SELECT count(*) FROM ended),"
	"  (SELECT json_agg(json_build_object('job', job_id, 'seq', seq, 'ts', ts, 'kind', kind,"
	"   'data', data) ORDER BY job_id, seq) FROM ev)";
static const char sql_notify_queue[] = "NOTIFY " PG_CHANNEL_QUEUE;
/* $1 boards (JSON array of names), $2 this host, $3 now: the first another live host has */
static const char sql_boards_taken[] =
	"SELECT d.name, d.host FROM devices d JOIN hosts h ON h.name = d.host"
	" WHERE d.name IN (SELECT jsonb_array_elements_text($1::jsonb)) AND d.host <> $2"
	" AND h.lease_until > $3 ORDER BY d.name LIMIT 1";

/* $1 this host, $2 its boards (JSON array of names): release the others */
static const char sql_boards_release_others[] =
	"UPDATE devices SET host = NULL WHERE host = $1"
	" AND name NOT IN (SELECT jsonb_array_elements_text($2::jsonb))";

static int64_t realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}


/* A boolean answer. */
static int read_exists(PGresult *res, void *userdata)
{
	*(bool *)userdata = PQntuples(res) && pg_bool(res, 0, 0);
	return 0;
}

/*
 * This host's name, taken for as long as the connection lives.  At open
 * only (nothing else runs yet): a labd restarted at once, or a store
 * closed and opened again, finds the name still held for a moment by its
 * old connection's server process, which lets it go as it exits; so it
 * asks again for up to HOST_NAME_WAIT before it says another labd has it.
 */
#define HOST_NAME_WAIT (3 * USEC_PER_SEC)
#define HOST_NAME_RETRY (50 * USEC_PER_MSEC)

static int take_name(struct pg_store *ps)
{
	const struct timespec pause = { 0, HOST_NAME_RETRY * 1000 };
	uint64_t give_up = now_monotonic() + HOST_NAME_WAIT;
	struct pg_args a = { 0 };
	bool locked = false;
	int r;

	pg_arg_text(&a, ps->host);
	for (;;) {
		r = pg_call(ps, "take this host's name", sql_lock, &a, read_exists, &locked);
		if (r < 0)
			return r;
		if (locked || now_monotonic() >= give_up)
			break;
		nanosleep(&pause, NULL);
	}
	if (!locked) {
		log_error("another labd runs as host '%s' on this database: give each host its "
			  "own name (store.host in labd.conf)", ps->host);
		return -EADDRINUSE;
	}
	return 0;
}

/* The first of this host's boards that another live host has, and that host. */
struct taken_read {
	char board[128];
	char host[128];
};

static int read_taken(PGresult *res, void *userdata)
{
	struct taken_read *t = userdata;

	if (PQntuples(res)) {
		snprintf(t->board, sizeof(t->board), "%s", pg_value(res, 0, 0));
		snprintf(t->host, sizeof(t->host), "%s", pg_value(res, 0, 1));
	}
	return 0;
}

/* @boards as a JSON array (text, caller frees), or NULL (no memory). */
static char *boards_json(char *const *boards)
{
	json_t *names = json_array();
	char *text = NULL;

	STRV_FOREACH(b, boards)
		if (!names || json_array_append_new(names, json_string(*b)) < 0)
			goto cleanup;
	text = names ? json_dumps(names, JSON_COMPACT) : NULL;
cleanup:
	json_decref(names);
	return text;
}

/* Refuse (-EADDRINUSE) before registering when another live host has one of @boards. */
static int boards_free(struct pg_store *ps, char *const *boards, int64_t now)
{
	struct taken_read t = { "", "" };
	struct pg_args a = { 0 };
	char *text = boards_json(boards);
	int r = -ENOMEM;

	if (!text)
		goto cleanup;
	pg_arg_text(&a, text);
	pg_arg_text(&a, ps->host);
	pg_arg_int(&a, now);
	r = pg_call(ps, "look for this host's boards on other hosts", sql_boards_taken, &a,
		    read_taken, &t);
	if (!r && t.board[0]) {
		log_error("board '%s' is on host '%s' of this lab already: give this one another "
			  "name", t.board, t.host);
		r = -EADDRINUSE;
	}
cleanup:
	free(text);
	return r;
}

/*
 * The boards this host had but no longer has (removed from its devices
 * directory while it was stopped) are released, as a reload releases the
 * boards it removes (store_board_release()): no host's.
 */
static int boards_release_others(struct pg_store *ps, char *const *boards)
{
	struct pg_args a = { 0 };
	char *text = boards_json(boards);
	int r;

	if (!text)
		return -ENOMEM;
	pg_arg_text(&a, ps->host);
	pg_arg_text(&a, text);
	r = pg_call(ps, "release the boards this host no longer has", sql_boards_release_others,
		    &a, NULL, NULL);
	free(text);
	return r;
}

/* What registering this host read: the journal's position, and whether it was reaped. */
struct register_read {
	int64_t applied;
	bool reaped;
};

static int read_register(PGresult *res, void *userdata)
{
	struct register_read *rr = userdata;

	if (PQntuples(res) < 1)
		return -ENOENT;
	rr->applied = pg_int(res, 0, 0);
	rr->reaped = pg_bool(res, 0, 1);
	return 0;
}

/*
 * The writes journaled before this host stopped are about the jobs it ran:
 * when another host reaped it meanwhile, those jobs were requeued or ended
 * there, and the writes are dropped as a fenced host's are (pg_host_fence()).
 */
static void drop_if_reaped(struct pg_store *ps, bool reaped)
{
	if (!reaped || !pg_writer_backlog(ps))
		return;
	log_warning("host '%s' was reaped by another host while it was stopped: the %u writes "
		    "its journal kept are dropped (its jobs were requeued or ended there)",
		    ps->host, pg_writer_backlog(ps));
	pg_writer_drop(ps);
}

int pg_host_open(struct pg_store *ps, char *const *boards)
{
	struct register_read rr = { 0, false };
	struct pg_args a = { 0 };
	int64_t now = realtime_usec();
	int r;

	r = take_name(ps);
	if (r < 0)
		return r;
	if (boards && (r = boards_free(ps, boards, now)) < 0)
		return r;
	pg_arg_text(&a, ps->host);
	pg_arg_text(&a, ps->url);
	pg_arg_int(&a, now);
	pg_arg_int(&a, now + (int64_t)ps->host_lease * 1000000);
	r = pg_call(ps, "register this host", sql_register, &a, read_register, &rr);
	if (!r && boards)
		r = boards_release_others(ps, boards);
	if (r < 0)
		return r;
	ps->applied = rr.applied;
	if (rr.applied > ps->seq)
		ps->seq = rr.applied;
	drop_if_reaped(ps, rr.reaped);
	return 0;
}

static void name_retaken(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;

	if (!err && !(PQntuples(res) && pg_bool(res, 0, 0)))
		log_error("host name '%s' is taken by another labd since the database came back",
			  ps->host);
}

/*
 * The events the reap wrote (a JSON array, in order), handed to this host's
 * listeners: the host that reaped, the only one, announces them once.
 */
static void announce_reaped(struct pg_store *ps, const char *text)
{
	json_t *evs = text ? json_loads(text, 0, NULL) : NULL, *o;
	size_t i;

	if (text && !evs)
		log_error("cannot read the events of the jobs of stopped hosts: not announced");
	json_array_foreach(evs, i, o) {
		struct event_record ev = {
			json_integer_value(json_object_get(o, "seq")),
			json_integer_value(json_object_get(o, "job")),
			(uint64_t)json_integer_value(json_object_get(o, "ts")),
			(char *)json_string_value(json_object_get(o, "kind")),
			(char *)json_string_value(json_object_get(o, "data")),
		};

		if (!ev.job_id || !ev.seq || !ev.kind)
			continue;
		pg_event_seq_note(ps, ev.job_id, ev.seq);
		if (ps->event_fn)
			ps->event_fn(&ev, ps->changed_userdata);
	}
	json_decref(evs);
}

static void reaped(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;

	if (err) {
		if (err != -ENOTCONN)
			log_error("cannot reap stopped hosts: %s", msg ? msg : strerror(-err));
		return;
	}
	if (!PQntuples(res) || pg_null(res, 0, 0))
		return;
	log_warning("host(s) %s stopped renewing their lease: %" PRId64 " job(s) requeued, %"
		    PRId64 " ended, %" PRId64 " board(s) offline, %" PRId64
		    " reservation(s) ended", pg_value(res, 0, 0), pg_int(res, 0, 1),
		    pg_int(res, 0, 2), pg_int(res, 0, 3), pg_int(res, 0, 4));
	announce_reaped(ps, pg_null(res, 0, 5) ? NULL : pg_value(res, 0, 5));
	pg_conn_send(ps->conn, sql_notify_queue, 0, NULL, PG_CMD_SYNC, NULL, NULL);
}

void pg_host_fence(struct pg_store *ps)
{
	if (ps->fenced)
		return;
	ps->fenced = true;
	log_error("host '%s' was reaped by another host while it did not renew its lease: "
		  "its %u writes not in the database are dropped, the next ones refused",
		  ps->host, pg_writer_backlog(ps));
	pg_writer_drop(ps);
	if (ps->fenced_fn)
		ps->fenced_fn(ps->changed_userdata);
}

static void renewed(int err, PGresult *res, const char *msg, void *userdata)
{
	if (!err && !PQntuples(res))
		pg_host_fence(userdata);
}

/* Renew this host's lease and reap the hosts whose lease ran out. */
static int on_lease(struct loop_source *s, uint64_t now_mono, void *userdata)
{
	struct pg_store *ps = userdata;
	struct pg_args a = { 0 };
	int64_t now = realtime_usec();

	loop_timer_set(s, now_mono + (uint64_t)ps->host_lease * 1000000 / 3);
	if (!pg_conn_is_up(ps->conn) || ps->fenced)
		return 0;	/* a lease not renewed here runs out there: that is the point */
	pg_arg_text(&a, ps->host);
	pg_arg_int(&a, now + (int64_t)ps->host_lease * 1000000);
	pg_conn_send(ps->conn, sql_renew, a.n, a.v, PG_CMD_SYNC, renewed, ps);
	/*
	 * After the database was away, every lease ran out, this host's too:
	 * the others are not reaped before they had the time to reconnect
	 * (their longest backoff) and to renew theirs (a lease).
	 */
	if (now_mono < ps->up_since + PG_CONN_BACKOFF_MAX + (uint64_t)ps->host_lease * 1000000)
		return 0;
	memset(&a, 0, sizeof(a));
	pg_arg_int(&a, now);
	pg_arg_text(&a, ps->host);
	pg_conn_send(ps->conn, sql_reap, a.n, a.v, PG_CMD_SYNC, reaped, ps);
	return 0;
}

char *pg_queue_payload(const char *kind, int64_t id, const char *device_type, const char *tags,
		       const char *board, const char *first)
{
	json_t *o = id ? json_pack("{sI, ss?, ss?, ss?, ss?}", kind, (json_int_t)id, "type",
				   device_type, "tags", tags, "board", board, "first", first) :
			 json_object();
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return text;
}

static const char *payload_text(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* An entry another host queued: a free board of this host that fits it claims. */
static void entry_queued(struct pg_store *ps, const char *payload)
{
	json_t *o = payload[0] ? json_loads(payload, 0, NULL) : NULL;
	struct store_queued q = {
		json_integer_value(json_object_get(o, "job")),
		json_integer_value(json_object_get(o, "reservation")),
		payload_text(o, "type"), payload_text(o, "tags"), payload_text(o, "board"),
		payload_text(o, "avoid"), payload_text(o, "first"),
	};

	if (ps->queued && q.device_type && (q.job > 0 || q.reservation > 0))
		ps->queued(&q, ps->changed_userdata);
	else if (ps->changed)	/* no entry named (a host reaped): every free board claims */
		ps->changed(ps->changed_userdata);
	json_decref(o);
}

static void types_reload(struct pg_store *ps);

/*
 * Not a write of the journal: a message lost with the connection costs a
 * job no more than a wait, every free board claims once the database is back
 * (pg_host_state()).
 */
int pg_announce(struct store *st, int64_t id, const char *device_type, const char *tags)
{
	struct pg_store *ps = pg_of(st);
	const char *v[1];
	char *payload;
	int r;

	if (!ps->loop || !pg_conn_is_up(ps->conn))
		return 0;
	payload = pg_queue_payload("job", id, device_type, tags, NULL, NULL);
	if (!payload)
		return -ENOMEM;
	v[0] = payload;
	r = pg_conn_send(ps->conn, PG_SQL_NOTIFY_QUEUE, 1, v, PG_CMD_SYNC, NULL, NULL);
	free(payload);
	return r;
}

static void on_notify(const char *channel, const char *payload, bool own, void *userdata)
{
	struct pg_store *ps = userdata;

	if (!strcmp(channel, PG_CHANNEL_TOKENS))
		pg_tokens_reload(ps);
	else if (!strcmp(channel, PG_CHANNEL_BOARDS) && !own && payload[0] && ps->types_known &&
		 !strv_contains(ps->other_types, payload) && strv_push(&ps->other_types, payload) < 0)
		types_reload(ps);	/* no memory to add it: read them all again */
	else if (!strcmp(channel, PG_CHANNEL_QUEUE))
		/*
		 * this host's own entries too: placed already with a claim after
		 * the write, but a claim of a board freed meanwhile may have gone
		 * (on the claims' connection) before the entry was committed
		 */
		entry_queued(ps, payload);
}

void pg_host_state(struct pg_store *ps, bool up)
{
	const char *v[1] = { ps->host };

	if (!up || !ps->opened)
		return;
	ps->up_since = ps->loop ? loop_now(ps->loop) : 0;
	pg_conn_send(ps->conn, sql_lock, 1, v, PG_CMD_SYNC, name_retaken, ps);
	if (ps->lease_timer)	/* renew at once: the others may be reaping */
		loop_timer_set(ps->lease_timer, ps->up_since);
	pg_tokens_reload(ps);	/* the tokens added while away were not heard of */
	types_reload(ps);	/* the boards registered meanwhile */
	if (ps->changed)	/* what changed while away: plan again */
		ps->changed(ps->changed_userdata);
}

int pg_host_start(struct pg_store *ps)
{
	int r;

	if (!ps->loop)
		return 0;
	ps->up_since = loop_now(ps->loop);
	r = loop_add_timer(ps->loop, &ps->lease_timer,
			   loop_now(ps->loop) + (uint64_t)ps->host_lease * 1000000 / 3, on_lease, ps);
	if (r < 0)
		return r;
	loop_source_set_description(ps->lease_timer, "store-lease");
	pg_conn_set_notify(ps->conn, on_notify, ps);
	r = pg_conn_listen(ps->conn, PG_CHANNEL_QUEUE);
	if (!r)
		r = pg_conn_listen(ps->conn, PG_CHANNEL_BOARDS);
	if (!r)
		types_reload(ps);
	if (!r)
		r = pg_conn_listen(ps->conn, PG_CHANNEL_TOKENS);
	return r;
}

/* Take the board unless a host that is alive has it; the row's host after. */
/* a board reaped while its host was away, idle again when it is taken */
#define BOARD_REAPED "devices.state = 'bad' AND devices.reason = 'its host stopped'"
/*
 * ($1 board, $2 this host, $3 its type, $4 now) whether this host has the
 * board now, and the board's host (the other one as the statement found
 * it).  One statement, no read that depends on another: a read context (a
 * reload) runs again for each read that depends on the answer of another.
 */
static const char sql_board_register[] =
	"WITH reg AS (INSERT INTO devices (name, state, host, device_type, changed)"
	"  VALUES ($1, 'idle', $2, $3, $4)"
	"  ON CONFLICT (name) DO UPDATE SET host = excluded.host,"
	"   device_type = excluded.device_type,"
	"   state = CASE WHEN " BOARD_REAPED " THEN 'idle' ELSE devices.state END,"
	"   reason = CASE WHEN " BOARD_REAPED " THEN NULL ELSE devices.reason END"
	"   WHERE devices.host IS NULL OR devices.host = excluded.host"
	"   OR NOT EXISTS (SELECT 1 FROM hosts h WHERE h.name = devices.host"
	"    AND h.lease_until > $4)"
	"  RETURNING host)"
	" SELECT EXISTS (SELECT 1 FROM reg),"
	"  coalesce((SELECT host FROM reg), (SELECT host FROM devices WHERE name = $1))";

/* a board this host no longer has (a reload removed it): no host's */
static const char sql_board_release[] =
	"UPDATE devices SET host = NULL WHERE name = $1 AND host = $2";

static const char sql_tell_type[] = "SELECT pg_notify('" PG_CHANNEL_BOARDS "', $1)";

/* The other hosts learn that this one has boards of @type (once per type), not waiting. */
static void tell_type(struct pg_store *ps, const char *type)
{
	const char *v[1] = { type };

	if (!type || strv_contains(ps->own_types, type) || strv_push(&ps->own_types, type) < 0)
		return;
	pg_conn_send(ps->conn, sql_tell_type, 1, v, PG_CMD_SYNC, NULL, NULL);
}

struct board_read {
	bool mine;
	char *owner;
	size_t len;
};

static int read_board(PGresult *res, void *userdata)
{
	struct board_read *o = userdata;
	const char *host = PQntuples(res) ? pg_value(res, 0, 1) : NULL;

	if (!PQntuples(res))
		return -EIO;
	o->mine = pg_bool(res, 0, 0);
	snprintf(o->owner, o->len, "%s", host ? host : "");
	return 0;
}

int pg_board_register(struct store *st, const char *name, const char *device_type,
		      uint64_t now, char *owner, size_t len)
{
	struct pg_store *ps = pg_of(st);
	struct board_read o = { false, owner, len };
	struct pg_args a = { 0 };
	int r;

	pg_arg_text(&a, name);
	pg_arg_text(&a, ps->host);
	pg_arg_text(&a, device_type);
	pg_arg_int(&a, (int64_t)now);
	r = pg_call(ps, "register a board", sql_board_register, &a, read_board, &o);
	if (r < 0)
		return r;
	if (!o.mine) {
		if (!owner[0])	/* registered meanwhile, after the statement began */
			snprintf(owner, len, "%s", "another host");
		return -EADDRINUSE;
	}
	tell_type(ps, device_type);
	return 0;
}

int pg_board_release(struct store *st, const char *name)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };

	pg_arg_text(&a, name);
	pg_arg_text(&a, ps->host);
	return pg_write(ps, "release a board", sql_board_release, &a, NULL, NULL);
}

/* ---- the other hosts' addresses, for requests forwarded to them ---- */

static const char sql_host_url[] = "SELECT url FROM hosts WHERE name = $1 AND url IS NOT NULL";

const char *pg_host_name(const struct store *st)
{
	return ((const struct pg_store *)st)->host;
}

static int read_url(PGresult *res, void *userdata)
{
	char **url = userdata;

	if (!PQntuples(res) || pg_null(res, 0, 0))
		return -ENOENT;
	*url = strdup(pg_value(res, 0, 0));
	return *url ? 0 : -ENOMEM;
}

int pg_host_url(struct store *st, const char *host, char **ret)
{
	struct pg_args a = { 0 };
	char *url = NULL;
	int r;

	pg_arg_text(&a, host);
	r = pg_call(pg_of(st), "read a host's address", sql_host_url, &a, read_url, &url);
	if (r < 0) {
		free(url);
		return r;
	}
	*ret = url;
	return 0;
}

/* lease_until 0: reaped (sql_reap), until the host starts again (sql_register) */
static const char sql_host_reaped[] =
	"SELECT EXISTS (SELECT 1 FROM hosts WHERE name = $1 AND lease_until = 0)";

int pg_host_reaped(struct store *st, const char *host, bool *ret)
{
	struct pg_args a = { 0 };

	pg_arg_text(&a, host);
	return pg_call(pg_of(st), "read whether a host was reaped", sql_host_reaped, &a,
		       read_exists, ret);
}

/*
 * The device types of the other hosts' boards: read when the loop starts and
 * when the connection comes back, added to as the others NOTIFY a board
 * registered (PG_CHANNEL_BOARDS); a row of `devices` stays when its host
 * stops, so the set only grows.
 */
static const char sql_board_elsewhere[] =
	"SELECT EXISTS (SELECT 1 FROM devices WHERE device_type = $1 AND host <> $2)";
static const char sql_other_types[] =
	"SELECT DISTINCT device_type FROM devices WHERE host <> $1 AND device_type IS NOT NULL";

static void types_loaded(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;
	char **types = NULL;
	int i;

	ps->types_loading = false;
	for (i = 0; !err && i < PQntuples(res); i++)
		if (strv_push(&types, pg_value(res, i, 0)) < 0)
			err = -ENOMEM;
	if (!err) {
		strv_free(ps->other_types);
		ps->other_types = types;
		ps->types_known = true;
	} else {
		strv_free(types);
	}
	if (ps->types_again) {
		ps->types_again = false;
		types_reload(ps);
	}
}

static void types_reload(struct pg_store *ps)
{
	const char *v[1] = { ps->host };

	if (!ps->loop)
		return;
	if (ps->types_loading) {
		ps->types_again = true;
		return;
	}
	if (pg_conn_send(ps->conn, sql_other_types, 1, v, PG_CMD_SYNC, types_loaded, ps) == 0)
		ps->types_loading = true;
}

int pg_board_elsewhere(struct store *st, const char *device_type, bool *ret)
{
	struct pg_store *ps = pg_of(st);
	struct pg_args a = { 0 };

	if (ps->types_known) {	/* the loop's case: no waiting */
		*ret = strv_contains(ps->other_types, device_type);
		return 0;
	}
	pg_arg_text(&a, device_type);
	pg_arg_text(&a, ps->host);
	return pg_call(ps, "look for boards of a type", sql_board_elsewhere, &a, read_exists, ret);
}

void pg_host_free(struct pg_store *ps)
{
	ps->other_types = strv_free(ps->other_types);
	ps->own_types = strv_free(ps->own_types);
}

/* ---- the lab's secret, shared by its hosts ---- */

#define LAB_SECRET_BYTES 32

/* The row made by this host, or the one another host made first. */
static const char sql_lab_secret[] =
	"WITH made AS (INSERT INTO lab_secret (id, secret) VALUES (1, $1)"
	" ON CONFLICT (id) DO NOTHING RETURNING secret)"
	" SELECT secret FROM made UNION ALL SELECT secret FROM lab_secret WHERE id = 1";

static int read_secret(PGresult *res, void *userdata)
{
	char **secret = userdata;

	if (!PQntuples(res) || pg_null(res, 0, 0))
		return -ENOENT;
	*secret = strdup(pg_value(res, 0, 0));
	return *secret ? 0 : -ENOMEM;
}

int pg_lab_secret_load(struct pg_store *ps)
{
	unsigned char raw[LAB_SECRET_BYTES];
	char hex[2 * LAB_SECRET_BYTES + 1];
	struct pg_args a = { 0 };
	size_t i;
	int r;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -errno;
	for (i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	pg_arg_text(&a, hex);
	r = pg_call_now(ps, "read the lab's secret", sql_lab_secret, &a, read_secret,
			&ps->lab_secret);
	explicit_bzero(hex, sizeof(hex));
	return r;
}

const char *pg_lab_secret(const struct store *st)
{
	return ((const struct pg_store *)st)->lab_secret;
}
