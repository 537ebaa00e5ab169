// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_writer.c -- the PostgreSQL store's writes in labd's loop: they return
 * at once, go to a local journal, and reach the database in order, also
 * after it was away or labd restarted
 *
 * With a loop (labd), every write is an entry: its statement and text
 * parameters, numbered by a sequence of this host.  The writes of one turn
 * of the loop (at most PG_GROUP_MAX), or of one store_begin()/store_commit()
 * transaction, are a group that ends with a marker entry, `UPDATE hosts SET
 * journal_applied = <its seq>`, sent with a pipeline sync: the statements
 * and the marker commit together or not at all, so the database itself
 * knows which entries of this host it has.  One commit for the writes of a
 * turn, not one each: a burst of jobs made 17 commits per job, the larger
 * part of PostgreSQL's work.  The group ends early when anything else is
 * sent on the connection (pg_conn_set_before_send()): a read sees the
 * writes before it, and no other sync commits a group without its marker.
 * Entries are appended to <state_dir>/pg-journal before they are sent
 * (write(), no fsync: the guarantee of SQLite's synchronous=NORMAL, a
 * SIGKILL of labd loses nothing) and kept in memory until their marker
 * committed; the journal is emptied whenever every entry is in.
 *
 * When the connection is lost, or at open with entries left in the journal
 * by a labd that stopped before the database had them, the writer reads
 * journal_applied and sends again every entry after it: each is applied
 * exactly once (unless another host reaped this one meanwhile: the entries
 * left at open are then dropped, pg_host_open()).  An entry the database
 * refuses is logged and dropped with the rest of its group; the statements
 * are written so that the database has no reason to (an event or result of
 * a job that is gone is not inserted, pg_records.c).  A group cut by a
 * crash of labd is sent whole when labd starts again, unless it was a
 * transaction, which is dropped.
 *
 * Without a loop (`labd store migrate`, the unit tests) writes are calls:
 * pg_write() waits for the answer and returns the statement's error.
 */
#include "store/pg_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"

#define PG_JOURNAL_FILE "pg-journal"
#define PG_GROUP_MAX 64		/* writes in one group outside a transaction */
#define PG_JOURNAL_MARKER 0x1	/* a record's flags */
#define PG_JOURNAL_TXN 0x2	/* written inside store_begin()/store_commit() */
#define PG_SYNC_WAIT_MAX (1 * USEC_PER_SEC)	/* a store_sync() waits for a slow database */
#define PG_JOURNAL_MAX_RECORD (64 * 1024 * 1024)

/*
 * The marker is also the fence: a host another host reaped (lease_until 0)
 * gets an error here, and the whole group is rolled back with it: writes of
 * a host whose jobs went to others never reach the database.
 */
#define PG_FENCED "was reaped by another host"
static const char sql_marker[] =
	"UPDATE hosts SET journal_applied = CASE WHEN lease_until > 0 THEN $2::bigint"
	" ELSE ('host ' || name || ' " PG_FENCED "')::bigint END WHERE name = $1";
static const char sql_applied[] = "SELECT journal_applied FROM hosts WHERE name = $1";

/* A store_sync() caller waiting for the database to commit up to @seq. */
struct pg_sync_wait {
	int64_t seq;
	uint64_t deadline;	/* loop time: then journaled is durable enough */
	store_done_fn done;
	void *userdata;
	struct pg_sync_wait *next;
};

struct pg_entry {
	int64_t seq;
	char *sql;
	int n;
	char **params;
	bool marker;
	bool txn;		/* of an explicit transaction: all or nothing */
	bool sent;
	struct pg_entry *next;
};

/* ---- entries ---- */

static void entry_free(struct pg_entry *e)
{
	int i;

	for (i = 0; i < e->n; i++)
		free(e->params[i]);
	free(e->params);
	free(e->sql);
	free(e);
}

static struct pg_entry *entry_new(const char *sql, int n, const char *const *v)
{
	struct pg_entry *e = calloc(1, sizeof(*e));
	int i;

	if (!e || !(e->sql = strdup(sql)) ||
	    (n && !(e->params = calloc((size_t)n, sizeof(*e->params))))) {
		if (e)
			entry_free(e);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		e->n = i + 1;
		if (v[i] && !(e->params[i] = strdup(v[i]))) {
			entry_free(e);
			return NULL;
		}
	}
	e->n = n;
	return e;
}

/* ---- the journal file ---- */

/* Append a 32-bit length and @len bytes (@p NULL: length -1, nothing). */
static void put_field(char **buf, const char *p, int32_t len)
{
	memcpy(*buf, &len, sizeof(len));
	*buf += sizeof(len);
	if (p && len > 0) {
		memcpy(*buf, p, (size_t)len);
		*buf += len;
	}
}

/* One record: total length, seq, marker flag, n, the SQL, then each parameter. */
static int journal_append(struct pg_store *ps, const struct pg_entry *e)
{
	size_t size = sizeof(uint32_t) + sizeof(int64_t) + 2 * sizeof(int32_t) + 4 + strlen(e->sql);
	char *buf, *p;
	int32_t flag = (e->marker ? PG_JOURNAL_MARKER : 0) | (e->txn ? PG_JOURNAL_TXN : 0);
	int32_t n = e->n;
	uint32_t total;
	int i;
	ssize_t w;

	if (ps->journal_fd < 0)
		return 0;
	for (i = 0; i < e->n; i++)
		size += 4 + (e->params[i] ? strlen(e->params[i]) : 0);
	buf = p = malloc(size);
	if (!buf)
		return -ENOMEM;
	total = (uint32_t)size;
	memcpy(p, &total, sizeof(total));
	p += sizeof(total);
	memcpy(p, &e->seq, sizeof(e->seq));
	p += sizeof(e->seq);
	memcpy(p, &flag, sizeof(flag));
	p += sizeof(flag);
	memcpy(p, &n, sizeof(n));
	p += sizeof(n);
	put_field(&p, e->sql, (int32_t)strlen(e->sql));
	for (i = 0; i < e->n; i++)
		put_field(&p, e->params[i], e->params[i] ? (int32_t)strlen(e->params[i]) : -1);
	w = write(ps->journal_fd, buf, size);
	free(buf);
	if (w != (ssize_t)size) {
		log_error("cannot write the store's journal: %s", w < 0 ? strerror(errno) : "short");
		return -EIO;
	}
	return 0;
}

/* A field of a record being read: a copy in *@ret (NULL for length -1). */
static int get_field(const char **p, const char *end, char **ret)
{
	int32_t len;

	if (end - *p < (ptrdiff_t)sizeof(len))
		return -EINVAL;
	memcpy(&len, *p, sizeof(len));
	*p += sizeof(len);
	*ret = NULL;
	if (len < 0)
		return 0;
	if (end - *p < len || !(*ret = strndup(*p, (size_t)len)))
		return -EINVAL;
	*p += len;
	return 0;
}

static struct pg_entry *journal_parse(const char *p, const char *end)
{
	struct pg_entry *e = calloc(1, sizeof(*e));
	int32_t flag, n;
	int i;

	if (!e || end - p < (ptrdiff_t)(sizeof(e->seq) + 2 * sizeof(int32_t)))
		goto bad;
	memcpy(&e->seq, p, sizeof(e->seq));
	p += sizeof(e->seq);
	memcpy(&flag, p, sizeof(flag));
	p += sizeof(flag);
	memcpy(&n, p, sizeof(n));
	p += sizeof(n);
	e->marker = flag & PG_JOURNAL_MARKER;
	e->txn = flag & PG_JOURNAL_TXN;
	if (n < 0 || n > PG_MAX_ARGS || get_field(&p, end, &e->sql) < 0 || !e->sql)
		goto bad;
	e->params = n ? calloc((size_t)n, sizeof(*e->params)) : NULL;
	if (n && !e->params)
		goto bad;
	for (i = 0; i < n; i++) {
		e->n = i + 1;
		if (get_field(&p, end, &e->params[i]) < 0)
			goto bad;
	}
	e->n = n;
	return e;
bad:
	if (e)
		entry_free(e);
	return NULL;
}

static void pending_push(struct pg_store *ps, struct pg_entry *e)
{
	e->next = NULL;
	if (ps->pending_tail)
		ps->pending_tail->next = e;
	else
		ps->pending = e;
	ps->pending_tail = e;
}

static int writer_add(struct pg_store *ps, const char *sql, int n, const char *const *v,
		      bool marker);

/*
 * The entries after the last marker: a group labd did not close.  A
 * transaction's is dropped (all or nothing); a loop turn's writes had
 * returned, they get their marker now.
 */
static int pending_close_open_group(struct pg_store *ps)
{
	struct pg_entry *e, *last = NULL;

	for (e = ps->pending; e; e = e->next)
		if (e->marker)
			last = e;
	e = last ? last->next : ps->pending;
	if (e && !e->txn)
		return pg_writer_mark(ps);
	if (last)
		last->next = NULL;
	else
		ps->pending = NULL;
	ps->pending_tail = last;
	while (e) {
		struct pg_entry *next = e->next;

		entry_free(e);
		e = next;
	}
	return 0;
}

/* Read what a previous labd journaled into the pending entries. */
static int journal_load(struct pg_store *ps)
{
	struct stat st;
	char *buf = NULL;
	const char *p, *end;
	uint32_t len;
	ssize_t r;

	if (fstat(ps->journal_fd, &st) < 0 || !st.st_size)
		return 0;
	if (st.st_size > PG_JOURNAL_MAX_RECORD * 4 || !(buf = malloc((size_t)st.st_size)))
		return -ENOMEM;
	r = pread(ps->journal_fd, buf, (size_t)st.st_size, 0);
	for (p = buf, end = buf + (r > 0 ? r : 0); end - p >= (ptrdiff_t)sizeof(len);) {
		struct pg_entry *e;

		memcpy(&len, p, sizeof(len));
		if (len < sizeof(len) || (ptrdiff_t)len > end - p)
			break;	/* a record cut by a crash: the end */
		e = journal_parse(p + sizeof(len), p + len);
		if (!e)
			break;
		pending_push(ps, e);
		if (e->seq > ps->seq)
			ps->seq = e->seq;
		p += len;
	}
	free(buf);
	return pending_close_open_group(ps);
}

/* Something else goes on the connection: the writes before it commit first. */
static void before_send(void *userdata)
{
	pg_writer_end_group(userdata);
}

int pg_writer_open(struct pg_store *ps, const char *state_dir)
{
	char path[4096];

	ps->journal_fd = -1;
	if (ps->loop)
		pg_conn_set_before_send(ps->conn, before_send, ps);
	if (!ps->loop || !state_dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", state_dir, PG_JOURNAL_FILE);
	ps->journal_fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (ps->journal_fd < 0) {
		log_error("cannot open the store's journal '%s': %s", path, strerror(errno));
		return -errno;
	}
	return journal_load(ps);
}

void pg_writer_close(struct pg_store *ps)
{
	struct pg_entry *e;

	while ((e = ps->pending)) {
		ps->pending = e->next;
		entry_free(e);
	}
	ps->pending_tail = NULL;
	while (ps->sync_waits) {	/* labd is stopping: dropped, never called */
		struct pg_sync_wait *w = ps->sync_waits;

		ps->sync_waits = w->next;
		free(w);
	}
	ps->sync_timer = loop_source_free(ps->sync_timer);
	ps->group_end = loop_source_free(ps->group_end);
	if (ps->journal_fd >= 0)
		close(ps->journal_fd);
	ps->journal_fd = -1;
}

/* ---- sending ---- */

static void marker_done(int err, PGresult *res, const char *msg, void *userdata);
static void entry_done(int err, PGresult *res, const char *msg, void *userdata);

/* The store_sync() callers whose writes are in, or who waited long enough (all: @all). */
static void sync_waits_done(struct pg_store *ps, bool all)
{
	uint64_t now = ps->loop ? loop_now(ps->loop) : 0;
	struct pg_sync_wait *w;

	while ((w = ps->sync_waits) && (all || w->seq <= ps->applied || w->deadline <= now)) {
		ps->sync_waits = w->next;
		w->done(0, w->userdata);
		free(w);
	}
	if (ps->sync_timer)
		loop_timer_set(ps->sync_timer, ps->sync_waits ? ps->sync_waits->deadline
							      : USEC_INFINITY);
}

static int sync_timed_out(struct loop_source *s, uint64_t now, void *userdata)
{
	sync_waits_done(userdata, false);
	return 0;
}

/* The database has every entry up to @seq: forget them; empty the journal when all are in. */
static void applied_up_to(struct pg_store *ps, int64_t seq)
{
	struct pg_entry *e;

	if (seq > ps->applied)
		ps->applied = seq;
	while ((e = ps->pending) && e->seq <= ps->applied) {
		ps->pending = e->next;
		entry_free(e);
	}
	if (!ps->pending) {
		ps->pending_tail = NULL;
		if (ps->journal_fd >= 0 && ftruncate(ps->journal_fd, 0) < 0)
			log_warning("cannot empty the store's journal: %s", strerror(errno));
	}
	sync_waits_done(ps, false);
}

static int entry_send(struct pg_store *ps, struct pg_entry *e)
{
	int r;

	r = pg_conn_send(ps->conn, e->sql, e->n, (const char *const *)e->params,
			 PG_CMD_IN_GROUP | (e->marker ? PG_CMD_SYNC : 0),
			 e->marker ? marker_done : entry_done, ps);
	if (!r)
		e->sent = true;
	return r;
}

/* Send the entries not sent yet, when the writer is in step with the database. */
static void writer_flush(struct pg_store *ps)
{
	struct pg_entry *e;

	if (!ps->in_step)
		return;
	for (e = ps->pending; e; e = e->next)
		if (!e->sent && entry_send(ps, e) < 0)
			break;
}

/*
 * A group's marker answered.  Answers come in the order of sending, so it
 * is the first marker still pending: that group's entries are done.
 */
static void marker_done(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;
	struct pg_entry *e;
	int64_t seq = 0;

	for (e = ps->pending; e && !seq; e = e->next)
		if (e->marker && e->sent)
			seq = e->seq;
	if (err == -ENOTCONN || !seq)
		return;	/* sent again once the connection is back (pg_writer_state) */
	if (err && msg && strstr(msg, PG_FENCED)) {
		pg_host_fence(ps);
		return;
	}
	if (err && err != -ECANCELED)
		log_error("cannot apply writes to the database: %s", msg ? msg : strerror(-err));
	applied_up_to(ps, seq);	/* done, or refused for good: dropped */
}

static void entry_done(int err, PGresult *res, const char *msg, void *userdata)
{
	size_t len = msg ? strlen(msg) : 0;

	if (err && err != -ENOTCONN && err != -ECANCELED)
		log_error("a write was refused by the database (its group is dropped): %.*s",
			  (int)(len && msg[len - 1] == '\n' ? len - 1 : len),
			  msg ? msg : strerror(-err));
}

/* The answer to "what do you have of mine": send everything after it. */
static void applied_read(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_store *ps = userdata;
	struct pg_entry *e;

	if (err) {
		log_error("cannot read this host's journal position: %s", msg ? msg : strerror(-err));
		return;	/* the connection went away: asked again when it is back */
	}
	applied_up_to(ps, PQntuples(res) ? pg_int(res, 0, 0) : 0);
	for (e = ps->pending; e; e = e->next)
		e->sent = false;
	if (ps->pending)
		log_info("store: sending %" PRId64 " journaled writes to the database",
			 ps->pending_tail->seq - ps->applied);
	ps->in_step = true;
	writer_flush(ps);
}

void pg_writer_state(struct pg_store *ps, bool up)
{
	const char *v[1] = { ps->host };

	ps->in_step = false;
	sync_waits_done(ps, true);	/* journaled: as durable as it gets while away */
	if (!up || !ps->loop || !ps->opened)
		return;
	if (pg_conn_send(ps->conn, sql_applied, 1, v, PG_CMD_SYNC, applied_read, ps) < 0)
		log_error("cannot ask the database for this host's journal position");
}

/* Queue an entry (its seq the next one), journal it and send it when in step. */
static int writer_add(struct pg_store *ps, const char *sql, int n, const char *const *v,
		      bool marker)
{
	struct pg_entry *e = entry_new(sql, n, v);

	if (!e)
		return -ENOMEM;
	e->seq = ++ps->seq;
	e->marker = marker;
	e->txn = ps->in_txn && !marker;
	ps->group_len = marker ? 0 : ps->group_len + 1;
	journal_append(ps, e);
	pending_push(ps, e);
	if (ps->in_step && entry_send(ps, e) < 0)
		e->sent = false;
	return 0;
}

/* The marker closing a group: the entries since the last marker commit with it. */
int pg_writer_mark(struct pg_store *ps)
{
	struct pg_args a = { 0 };

	if (!ps->pending_tail || ps->pending_tail->marker)
		return 0;	/* nothing since the last marker */
	pg_arg_text(&a, ps->host);
	pg_arg_int(&a, ps->seq + 1);
	return writer_add(ps, sql_marker, a.n, a.v, true);
}

void pg_writer_end_group(struct pg_store *ps)
{
	if (!ps->in_txn)
		pg_writer_mark(ps);
}

static int group_end_now(struct loop_source *src, void *userdata)
{
	pg_writer_end_group(userdata);
	return 0;
}

/* A write outside a transaction: its group ends after this turn, or now when full. */
static int group_end_later(struct pg_store *ps)
{
	if (ps->group_len >= PG_GROUP_MAX)
		return pg_writer_mark(ps);
	if (!ps->group_end) {
		if (loop_add_defer(ps->loop, &ps->group_end, group_end_now, ps) < 0)
			return pg_writer_mark(ps);
		loop_source_set_description(ps->group_end, "postgresql-writes");
	}
	return loop_defer_again(ps->group_end);
}

/*
 * The API answers once what a request wrote is durable (api_reply()): here,
 * once the database committed it, so that another host asked right after
 * (a job submitted through this host, shown through that one) finds it.
 * While the database is away the journal is all there is: at once.
 */
int pg_writer_sync(struct pg_store *ps, store_done_fn done, void *userdata)
{
	struct pg_sync_wait *w, **pp;

	if (!ps->loop)
		return 0;
	if (ps->fenced)
		return -ESTALE;	/* the writes before it are dropped: never durable */
	pg_writer_end_group(ps);
	if (!ps->in_step || !ps->pending || ps->applied >= ps->seq)
		return 0;
	if (!ps->sync_timer) {
		if (loop_add_timer(ps->loop, &ps->sync_timer, USEC_INFINITY, sync_timed_out, ps) < 0)
			return 0;	/* journaled: durable on this host */
		loop_source_set_description(ps->sync_timer, "postgresql-sync");
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return 0;
	w->deadline = loop_now(ps->loop) + PG_SYNC_WAIT_MAX;
	if (!ps->sync_waits)
		loop_timer_set(ps->sync_timer, w->deadline);
	w->seq = ps->seq;
	w->done = done;
	w->userdata = userdata;
	for (pp = &ps->sync_waits; *pp; pp = &(*pp)->next)
		;
	*pp = w;
	return 1;
}

void pg_writer_forget(struct pg_store *ps, void *userdata)
{
	struct pg_sync_wait **pp = &ps->sync_waits, *w;

	while ((w = *pp)) {
		if (w->userdata == userdata) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
}

/*
 * The store_sync() callers are told -ESTALE first: the writes they wait for
 * never reach the database, nothing they cover may be announced (the events
 * of jobs the host that reaped this one has ended or requeued).
 */
void pg_writer_drop(struct pg_store *ps)
{
	struct pg_sync_wait *w, *waits = ps->sync_waits;

	ps->sync_waits = NULL;	/* a caller that syncs again is refused (fenced) */
	if (ps->sync_timer)
		loop_timer_set(ps->sync_timer, USEC_INFINITY);
	while ((w = waits)) {
		waits = w->next;
		w->done(-ESTALE, w->userdata);
		free(w);
	}
	if (ps->pending_tail)
		applied_up_to(ps, ps->pending_tail->seq);
}

int pg_write(struct pg_store *ps, const char *op, const char *sql, const struct pg_args *a,
	     pg_read_fn read, void *userdata)
{
	int r;

	if (ps->fenced)
		return 0;	/* the database refuses them: dropped (pg_host_fence()) */
	r = pg_read_writing(ps, op);
	if (r < 0)
		return r;
	if (!pg_writing_behind(ps))
		return pg_call(ps, op, sql, a, read, userdata);
	r = writer_add(ps, sql, a ? a->n : 0, a ? a->v : NULL, false);
	if (r < 0)
		return r;
	return ps->in_txn ? 0 : group_end_later(ps);
}

int pg_write_notify(struct pg_store *ps, const char *op, const char *sql,
		    const struct pg_args *a, pg_read_fn read, void *userdata,
		    const char *notify_sql, const char *payload)
{
	struct pg_args n = { 0 };
	int r;

	if (!notify_sql)
		return pg_write(ps, op, sql, a, read, userdata);
	pg_arg_text(&n, payload);
	if (!pg_writing_behind(ps)) {
		r = pg_call(ps, op, sql, a, read, userdata);
		return r < 0 ? r : pg_call(ps, "notify the other hosts", notify_sql, &n, NULL, NULL);
	}
	/*
	 * a group of its own begins (none: in a transaction), which the writes
	 * after it in this turn join (a job's "queued" event): a host the
	 * NOTIFY wakes reads them with its claim (the number of the job's last
	 * event), as they commit with it
	 */
	pg_writer_end_group(ps);
	r = pg_write(ps, op, sql, a, read, userdata);
	return r < 0 ? r : pg_write(ps, "notify the other hosts", notify_sql, &n, NULL, NULL);
}

bool pg_writing_behind(const struct pg_store *ps)
{
	return ps->loop != NULL;
}

unsigned pg_writer_backlog(const struct pg_store *ps)
{
	return ps->pending ? (unsigned)(ps->pending_tail->seq - ps->applied) : 0;
}
