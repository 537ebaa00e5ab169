// SPDX-License-Identifier: GPL-2.0-or-later
/* pg_conn.c -- one PostgreSQL connection in labd's loop: libpq's pipeline mode, reconnects */
#include "store/pg_conn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "core/log.h"
#include "core/loop.h"

#define PG_CONN_CONNECT_TIMEOUT (10 * 1000 * 1000ULL)	/* usec */
#define PG_MAX_LISTEN 8
#define PG_MAX_PREPARED 128	/* statements prepared per connection, at most */

enum conn_state {
	CONN_IDLE,		/* not connected, not trying (nothing asked for it yet) */
	CONN_BACKOFF,		/* waiting to try again */
	CONN_CONNECTING,	/* PQconnectPoll() in progress */
	CONN_UP,
};

/* Where a sent command is in its answer. */
enum cmd_phase {
	PHASE_RESULT,		/* its result */
	PHASE_END,		/* the NULL after it */
	PHASE_SYNC,		/* the sync point after it (PG_CMD_SYNC) */
};

struct pg_cmd {
	const char *sql;
	int n;
	char **params;
	unsigned flags;
	pg_done_fn done;
	void *userdata;
	enum cmd_phase phase;
	int err;
	char *msg;
	PGresult *res;
	struct pg_cmd *next;
};

struct cmd_list {
	struct pg_cmd *head, *tail;
	unsigned n;
};

/*
 * A statement with parameters, prepared on the connection as "l<index>" the
 * first time it is sent: PostgreSQL then parses it once and plans it once
 * (a generic plan) instead of at every execution, which took twice as long
 * as executing them (pg_stat_statements, bench-multihost).  Until the
 * prepare is known to have succeeded the statement is sent as it was
 * (unnamed), so a prepare lost with an aborted batch costs nothing but a
 * second try; a connection lost forgets them all.
 */
enum prep_state { PREP_NONE, PREP_SENT, PREP_READY };

struct pg_prepared {
	char *sql;		/* a copy: its key */
	enum prep_state state;
};

struct pg_conn {
	char *conninfo;
	char *name;
	struct loop *loop;
	pg_notify_fn notify;
	void *notify_userdata;
	pg_state_fn state_fn;
	void *userdata;
	void (*before_send)(void *userdata);	/* pg_conn_set_before_send() */
	void *before_send_userdata;
	PGconn *conn;
	enum conn_state state;
	int fd;			/* PQsocket() registered with the loop, or -1 */
	struct loop_source *io;
	struct loop_source *timer;	/* backoff, connect timeout */
	struct loop_source *flush;	/* the commands queued by a loop's callbacks go out */
	uint64_t backoff;
	uint64_t retry_at;	/* CONN_BACKOFF: when (monotonic usec) */
	uint64_t connect_deadline;
	PostgresPollingStatusType poll;	/* CONN_CONNECTING: what PQconnectPoll() waits for */
	bool want_write;	/* CONN_UP: PQflush() has more to send */
	bool in_batch;		/* commands sent since the last sync */
	struct cmd_list unsent, sent;
	struct pg_prepared prepared[PG_MAX_PREPARED];
	unsigned n_prepared;
	char *channels[PG_MAX_LISTEN];
	unsigned n_channels;
	unsigned failures;	/* connection attempts or connections lost, ever */
	char last_error[256];
};

uint64_t pg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* ---- commands ---- */

static void cmd_free(struct pg_cmd *cmd)
{
	int i;

	for (i = 0; i < cmd->n; i++)
		free(cmd->params[i]);
	free(cmd->params);
	free(cmd->msg);
	PQclear(cmd->res);
	free(cmd);
}

static void list_push(struct cmd_list *l, struct pg_cmd *cmd)
{
	cmd->next = NULL;
	if (l->tail)
		l->tail->next = cmd;
	else
		l->head = cmd;
	l->tail = cmd;
	l->n++;
}

static void list_push_front(struct cmd_list *l, struct pg_cmd *cmd)
{
	cmd->next = l->head;
	l->head = cmd;
	if (!l->tail)
		l->tail = cmd;
	l->n++;
}

static struct pg_cmd *list_pop(struct cmd_list *l)
{
	struct pg_cmd *cmd = l->head;

	if (!cmd)
		return NULL;
	l->head = cmd->next;
	if (!l->head)
		l->tail = NULL;
	l->n--;
	return cmd;
}

/* Call @cmd's completion with what it got, and free it. */
static void cmd_complete(struct pg_cmd *cmd)
{
	if (cmd->done)
		cmd->done(cmd->err, cmd->err ? NULL : cmd->res, cmd->msg, cmd->userdata);
	cmd_free(cmd);
}

static struct pg_cmd *cmd_new(const char *sql, int n, const char *const *params, unsigned flags,
			      pg_done_fn done, void *userdata)
{
	struct pg_cmd *cmd = calloc(1, sizeof(*cmd));
	int i;

	if (!cmd)
		return NULL;
	cmd->sql = sql;
	cmd->flags = flags;
	cmd->done = done;
	cmd->userdata = userdata;
	if (n > 0) {
		cmd->params = calloc((size_t)n, sizeof(*cmd->params));
		if (!cmd->params)
			goto err;
	}
	for (i = 0; i < n; i++) {
		cmd->n = i + 1;
		if (params[i] && !(cmd->params[i] = strdup(params[i])))
			goto err;
	}
	cmd->n = n;
	return cmd;
err:
	cmd_free(cmd);
	return NULL;
}

/* ---- the socket in the loop ---- */

static int on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata);
static int on_timer(struct loop_source *s, uint64_t now, void *userdata);
static void conn_flush(struct pg_conn *c);

/* The events the connection waits for now. */
static uint32_t wanted_events(const struct pg_conn *c)
{
	if (c->state == CONN_CONNECTING)
		return c->poll == PGRES_POLLING_WRITING ? EPOLLOUT : EPOLLIN;
	if (c->state == CONN_UP)
		return EPOLLIN | (c->want_write ? EPOLLOUT : 0);
	return 0;
}

/* Keep the loop's io source on PQsocket() with the events wanted now. */
static void watch(struct pg_conn *c)
{
	int fd = c->conn && c->state >= CONN_CONNECTING ? PQsocket(c->conn) : -1;

	if (!c->loop)
		return;
	if (fd != c->fd) {
		c->io = loop_source_free(c->io);
		c->fd = -1;
		if (fd >= 0 && loop_add_io(c->loop, &c->io, fd, wanted_events(c), on_io, c) == 0) {
			c->fd = fd;
			loop_source_set_description(c->io, "postgresql");
		}
		return;
	}
	if (c->io)
		loop_io_set_events(c->io, wanted_events(c));
}

static void arm_timer(struct pg_conn *c, uint64_t when)
{
	if (c->timer)
		loop_timer_set(c->timer, when);
}

/* ---- connecting ---- */

static void set_error(struct pg_conn *c, const char *msg)
{
	size_t len;

	snprintf(c->last_error, sizeof(c->last_error), "%s", msg ? msg : "");
	len = strlen(c->last_error);
	while (len && (c->last_error[len - 1] == '\n' || c->last_error[len - 1] == ' '))
		c->last_error[--len] = '\0';
}

/* The connection is gone (or never came): fail what was in flight, try again later. */
/* The statements prepared on a connection that is gone. */
static void prepared_forget(struct pg_conn *c)
{
	unsigned i;

	for (i = 0; i < c->n_prepared; i++)
		c->prepared[i].state = PREP_NONE;
}

static void conn_lost(struct pg_conn *c, const char *why)
{
	bool was_up = c->state == CONN_UP;
	struct pg_cmd *cmd;

	set_error(c, why);
	c->failures++;
	if (was_up)
		log_error("postgresql (%s): connection lost: %s", c->name, c->last_error);
	else if (c->backoff <= PG_CONN_BACKOFF_MIN)
		log_error("postgresql (%s): cannot connect: %s", c->name, c->last_error);
	if (c->conn)
		PQfinish(c->conn);
	c->conn = NULL;
	c->in_batch = false;
	c->want_write = false;
	prepared_forget(c);
	c->state = CONN_BACKOFF;
	c->retry_at = pg_now() + c->backoff;
	c->backoff = c->backoff * 2 > PG_CONN_BACKOFF_MAX ? PG_CONN_BACKOFF_MAX : c->backoff * 2;
	watch(c);
	arm_timer(c, c->retry_at);
	if (was_up && c->state_fn)
		c->state_fn(false, c->userdata);
	/* nothing waits for a connection: callers queue again what they still want */
	while ((cmd = list_pop(&c->sent)) || (cmd = list_pop(&c->unsent))) {
		cmd->err = -ENOTCONN;
		cmd_complete(cmd);
	}
}

static int queue_listens(struct pg_conn *c)
{
	char sql[96];
	struct pg_cmd *cmd;
	unsigned i;

	for (i = c->n_channels; i-- > 0;) {
		snprintf(sql, sizeof(sql), "LISTEN %s", c->channels[i]);
		cmd = cmd_new(NULL, 0, NULL, PG_CMD_SYNC, NULL, NULL);
		if (!cmd || !(cmd->msg = strdup(sql))) {	/* msg holds the SQL until sent */
			if (cmd)
				cmd_free(cmd);
			return -ENOMEM;
		}
		list_push_front(&c->unsent, cmd);
	}
	return 0;
}

static void conn_ready(struct pg_conn *c)
{
	if (PQsetnonblocking(c->conn, 1) || !PQenterPipelineMode(c->conn) || queue_listens(c) < 0) {
		conn_lost(c, PQerrorMessage(c->conn));
		return;
	}
	if (c->backoff > PG_CONN_BACKOFF_MIN)
		log_info("postgresql (%s): connected again", c->name);
	c->state = CONN_UP;
	c->backoff = PG_CONN_BACKOFF_MIN;
	c->last_error[0] = '\0';
	arm_timer(c, USEC_INFINITY);
	watch(c);
	if (c->state_fn)
		c->state_fn(true, c->userdata);
	conn_flush(c);
}

static void conn_poll(struct pg_conn *c)
{
	c->poll = PQconnectPoll(c->conn);
	if (c->poll == PGRES_POLLING_OK)
		conn_ready(c);
	else if (c->poll == PGRES_POLLING_FAILED)
		conn_lost(c, PQerrorMessage(c->conn));
	else
		watch(c);
}

/* The server's notices ("relation already exists, skipping") are for debugging only. */
static void on_notice(void *arg, const char *message)
{
	struct pg_conn *c = arg;

	log_debug("postgresql (%s): %s", c->name, message);
}

static void conn_connect(struct pg_conn *c)
{
	c->conn = PQconnectStart(c->conninfo);
	if (!c->conn || PQstatus(c->conn) == CONNECTION_BAD) {
		conn_lost(c, c->conn ? PQerrorMessage(c->conn) : "out of memory");
		return;
	}
	PQsetNoticeProcessor(c->conn, on_notice, c);
	c->state = CONN_CONNECTING;
	c->poll = PGRES_POLLING_WRITING;
	c->connect_deadline = pg_now() + PG_CONN_CONNECT_TIMEOUT;
	arm_timer(c, c->connect_deadline);
	watch(c);
}

void pg_conn_start(struct pg_conn *c)
{
	if (c->state == CONN_IDLE || (c->state == CONN_BACKOFF && pg_now() >= c->retry_at))
		conn_connect(c);
}

/* ---- sending and receiving ---- */

/* @sql's entry in the prepared statements (added, not prepared yet), or NULL when full. */
static struct pg_prepared *prepared_of(struct pg_conn *c, const char *sql)
{
	struct pg_prepared *p;
	unsigned i;

	for (i = 0; i < c->n_prepared; i++)
		if (!strcmp(c->prepared[i].sql, sql))
			return &c->prepared[i];
	if (c->n_prepared == PG_MAX_PREPARED)
		return NULL;
	p = &c->prepared[c->n_prepared];
	p->sql = strdup(sql);
	if (!p->sql)
		return NULL;
	p->state = PREP_NONE;
	c->n_prepared++;
	return p;
}

static void prepared_name(const struct pg_conn *c, const struct pg_prepared *p, char *buf,
			  size_t len)
{
	snprintf(buf, len, "l%u", (unsigned)(p - c->prepared));
}

/* The answer to a prepare: the statement is used by name from now on, or prepared again. */
static void prepare_done(int err, PGresult *res, const char *msg, void *userdata)
{
	struct pg_prepared *p = userdata;

	p->state = err ? PREP_NONE : PREP_READY;
}

/* Queue the prepare of @p in the pipeline, before the command that uses it; false: lost. */
static bool send_prepare(struct pg_conn *c, struct pg_prepared *p, int n)
{
	struct pg_cmd *prep = cmd_new(NULL, 0, NULL, 0, prepare_done, p);
	char name[16];

	if (!prep)
		return true;	/* no memory: the command goes unnamed */
	prepared_name(c, p, name, sizeof(name));
	list_push(&c->sent, prep);
	if (!PQsendPrepare(c->conn, name, p->sql, n, NULL))
		return false;
	p->state = PREP_SENT;
	return true;
}

static bool send_one(struct pg_conn *c, struct pg_cmd *cmd)
{
	struct pg_prepared *p = cmd->sql && cmd->n ? prepared_of(c, cmd->sql) : NULL;
	char name[16];
	int ok;

	if (p && p->state == PREP_NONE && !send_prepare(c, p, cmd->n)) {
		list_push(&c->sent, cmd);	/* completed as the connection is lost */
		return false;
	}
	list_push(&c->sent, cmd);
	if (!cmd->sql) {	/* an internal LISTEN, its text in msg */
		ok = PQsendQueryParams(c->conn, cmd->msg, 0, NULL, NULL, NULL, NULL, 0);
		free(cmd->msg);
		cmd->msg = NULL;
	} else if (p && p->state == PREP_READY) {
		prepared_name(c, p, name, sizeof(name));
		ok = PQsendQueryPrepared(c->conn, name, cmd->n, (const char *const *)cmd->params,
					 NULL, NULL, 0);
	} else {
		ok = PQsendQueryParams(c->conn, cmd->sql, cmd->n, NULL,
				       (const char *const *)cmd->params, NULL, NULL, 0);
	}
	if (ok && (cmd->flags & PG_CMD_SYNC))
		ok = PQpipelineSync(c->conn);
	return ok;
}

/* Send every queued command, then ask the server for the results so far. */
static void conn_flush(struct pg_conn *c)
{
	struct pg_cmd *cmd;
	bool sent = false;

	if (c->state != CONN_UP)
		return;
	while ((cmd = list_pop(&c->unsent))) {
		if (!send_one(c, cmd)) {
			conn_lost(c, PQerrorMessage(c->conn));
			return;
		}
		c->in_batch = !(cmd->flags & PG_CMD_SYNC);
		sent = true;
	}
	if (sent && c->in_batch && !PQsendFlushRequest(c->conn)) {
		conn_lost(c, PQerrorMessage(c->conn));
		return;
	}
	if (sent || c->want_write) {
		int r = PQflush(c->conn);

		if (r < 0) {
			conn_lost(c, PQerrorMessage(c->conn));
			return;
		}
		c->want_write = r == 1;
		watch(c);
	}
}

static int result_errno(PGresult *res, char **msg)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	ExecStatusType st = PQresultStatus(res);

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return 0;
	if (st == PGRES_PIPELINE_ABORTED)
		return -ECANCELED;
	free(*msg);
	*msg = strdup(PQresultErrorMessage(res));
	if (state && !strcmp(state, "23503"))
		return -ENOENT;
	if (state && !strcmp(state, "23505"))
		return -EEXIST;
	return -EIO;
}

/* One result (or NULL) of the head command; true when it completed. */
static bool take_result(struct pg_conn *c, struct pg_cmd *cmd, PGresult *res)
{
	switch (cmd->phase) {
	case PHASE_RESULT:
		if (!res)
			return false;
		cmd->err = result_errno(res, &cmd->msg);
		cmd->res = res;
		cmd->phase = PHASE_END;
		return false;
	case PHASE_END:
		if (res) {	/* a second result of one command: not ours to have */
			PQclear(res);
			return false;
		}
		if (cmd->flags & PG_CMD_SYNC) {
			cmd->phase = PHASE_SYNC;
			return false;
		}
		return true;
	case PHASE_SYNC:
		if (!res)
			return false;
		if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			return true;
		}
		if (!cmd->err)	/* the commit of the batch failed */
			cmd->err = result_errno(res, &cmd->msg);
		PQclear(res);
		return false;
	}
	return false;
}

static void deliver_notifies(struct pg_conn *c)
{
	PGnotify *n;

	while (c->conn && (n = PQnotifies(c->conn))) {
		if (c->notify)
			c->notify(n->relname, n->extra ? n->extra : "",
				  n->be_pid == PQbackendPID(c->conn), c->notify_userdata);
		PQfreemem(n);
	}
}

static void conn_read(struct pg_conn *c)
{
	struct pg_cmd *cmd;

	if (!PQconsumeInput(c->conn)) {
		conn_lost(c, PQerrorMessage(c->conn));
		return;
	}
	while (c->state == CONN_UP && (cmd = c->sent.head) && !PQisBusy(c->conn)) {
		if (take_result(c, cmd, PQgetResult(c->conn))) {
			list_pop(&c->sent);
			cmd_complete(cmd);
		}
	}
	deliver_notifies(c);
	if (c->state == CONN_UP && PQstatus(c->conn) == CONNECTION_BAD)
		conn_lost(c, PQerrorMessage(c->conn));
}

static void conn_event(struct pg_conn *c, uint32_t revents)
{
	if (c->state == CONN_CONNECTING) {
		conn_poll(c);
		return;
	}
	if (c->state != CONN_UP)
		return;
	if (revents & EPOLLOUT)
		conn_flush(c);
	if (c->state == CONN_UP && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		conn_read(c);
	if (c->state == CONN_UP)
		conn_flush(c);
}

static int on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	conn_event(userdata, revents);
	return 0;
}

static int on_flush(struct loop_source *s, void *userdata)
{
	conn_flush(userdata);
	return 0;
}

/* Backoff over (connect again) or connection attempt too long (give up on it). */
static void conn_tick(struct pg_conn *c, uint64_t now_mono)
{
	if (c->state == CONN_BACKOFF && now_mono >= c->retry_at &&
	    (c->unsent.n || c->n_channels))
		conn_connect(c);
	else if (c->state == CONN_BACKOFF && now_mono >= c->retry_at)
		c->state = CONN_IDLE;	/* nothing to send (the claims' connection): at the next send */
	else if (c->state == CONN_CONNECTING && now_mono >= c->connect_deadline)
		conn_lost(c, "timed out connecting");
}

static int on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct pg_conn *c = userdata;

	conn_tick(c, pg_now());
	if (c->state == CONN_BACKOFF)
		loop_timer_set(s, c->retry_at);
	return 0;
}

/* ---- the interface ---- */

int pg_conn_new(const struct pg_conn_params *p, struct pg_conn **ret)
{
	struct pg_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->loop = p->loop;
	c->notify = p->notify;
	c->notify_userdata = p->userdata;
	c->state_fn = p->state;
	c->userdata = p->userdata;
	c->backoff = PG_CONN_BACKOFF_MIN;
	c->conninfo = strdup(p->conninfo ? p->conninfo : "");
	c->name = strdup(p->name ? p->name : "store");
	if (!c->conninfo || !c->name ||
	    (c->loop && (loop_add_timer(c->loop, &c->timer, USEC_INFINITY, on_timer, c) < 0 ||
			 loop_add_defer(c->loop, &c->flush, on_flush, c) < 0))) {
		pg_conn_free(c);
		return -ENOMEM;
	}
	if (c->timer)
		loop_source_set_description(c->timer, "postgresql-reconnect");
	if (c->flush)
		loop_source_set_description(c->flush, "postgresql-flush");
	*ret = c;
	return 0;
}

struct pg_conn *pg_conn_free(struct pg_conn *c)
{
	struct pg_cmd *cmd;
	unsigned i;

	if (!c)
		return NULL;
	c->io = loop_source_free(c->io);
	c->timer = loop_source_free(c->timer);
	c->flush = loop_source_free(c->flush);
	if (c->conn)
		PQfinish(c->conn);
	c->conn = NULL;
	c->state = CONN_IDLE;
	while ((cmd = list_pop(&c->sent)) || (cmd = list_pop(&c->unsent))) {
		cmd->err = -ENOTCONN;
		cmd_complete(cmd);
	}
	for (i = 0; i < c->n_channels; i++)
		free(c->channels[i]);
	for (i = 0; i < c->n_prepared; i++)
		free(c->prepared[i].sql);
	free(c->conninfo);
	free(c->name);
	free(c);
	return NULL;
}

void pg_conn_set_notify(struct pg_conn *c, pg_notify_fn fn, void *userdata)
{
	c->notify = fn;
	c->notify_userdata = userdata;
}

void pg_conn_set_before_send(struct pg_conn *c, void (*fn)(void *userdata), void *userdata)
{
	c->before_send = fn;
	c->before_send_userdata = userdata;
}

bool pg_conn_is_up(const struct pg_conn *c)
{
	return c->state == CONN_UP;
}

unsigned pg_conn_pending(const struct pg_conn *c)
{
	return c->unsent.n + c->sent.n;
}

const char *pg_conn_last_error(const struct pg_conn *c)
{
	return c->last_error;
}

int pg_conn_send(struct pg_conn *c, const char *sql, int n, const char *const *params,
		 unsigned flags, pg_done_fn done, void *userdata)
{
	struct pg_cmd *cmd;

	if (c->before_send && !(flags & PG_CMD_IN_GROUP))
		c->before_send(c->before_send_userdata);
	cmd = cmd_new(sql, n, params, flags, done, userdata);
	if (!cmd)
		return -ENOMEM;
	list_push(&c->unsent, cmd);
	/*
	 * In a loop, what its callbacks queue goes out once they are done (a
	 * defer): one write and one wake-up of the server for a loop turn's
	 * commands, not one each.
	 */
	if (c->state == CONN_UP && c->flush)
		loop_defer_again(c->flush);
	else if (c->state == CONN_UP)
		conn_flush(c);
	else
		pg_conn_start(c);
	return 0;
}

int pg_conn_sync(struct pg_conn *c)
{
	if (c->before_send)
		c->before_send(c->before_send_userdata);
	if (c->unsent.tail) {
		c->unsent.tail->flags |= PG_CMD_SYNC;
		return 0;
	}
	if (!c->in_batch)
		return 0;
	/* the batch's last command is on its way: a sync on its own */
	return pg_conn_send(c, "SELECT 1", 0, NULL, PG_CMD_SYNC, NULL, NULL);
}

int pg_conn_listen(struct pg_conn *c, const char *channel)
{
	struct pg_cmd *cmd;
	char sql[96];

	if (c->n_channels == PG_MAX_LISTEN || strlen(channel) > 63)
		return -EINVAL;
	c->channels[c->n_channels] = strdup(channel);
	if (!c->channels[c->n_channels])
		return -ENOMEM;
	c->n_channels++;
	if (c->state != CONN_UP) {
		pg_conn_start(c);
		return 0;	/* sent when it comes up */
	}
	snprintf(sql, sizeof(sql), "LISTEN %s", channel);
	cmd = cmd_new(NULL, 0, NULL, PG_CMD_SYNC, NULL, NULL);
	if (!cmd || !(cmd->msg = strdup(sql))) {
		if (cmd)
			cmd_free(cmd);
		return -ENOMEM;
	}
	list_push(&c->unsent, cmd);
	conn_flush(c);
	return 0;
}

/* Sleep until monotonic @when. */
static void sleep_until(uint64_t when)
{
	uint64_t now = pg_now();
	struct timespec ts;

	if (when <= now)
		return;
	ts.tv_sec = (time_t)((when - now) / 1000000);
	ts.tv_nsec = (long)((when - now) % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

int pg_conn_wait(struct pg_conn *c, const bool *flag, uint64_t deadline, bool fail_fast)
{
	unsigned failures = c->failures;
	struct pollfd pfd;
	uint64_t now;
	uint32_t ev;
	int timeout;

	while (!*flag) {
		now = pg_now();
		conn_flush(c);	/* what a loop's flush would have sent (CONN_UP only) */
		if (fail_fast && c->failures != failures)
			return -ENOTCONN;
		if (now >= deadline)
			return -ETIMEDOUT;
		if (c->state == CONN_IDLE || c->state == CONN_BACKOFF) {
			if (c->state == CONN_IDLE || now >= c->retry_at)
				conn_connect(c);
			else
				sleep_until(c->retry_at < deadline ? c->retry_at : deadline);
			continue;
		}
		conn_tick(c, now);
		if (c->state != CONN_CONNECTING && c->state != CONN_UP)
			continue;
		ev = wanted_events(c);
		pfd.fd = PQsocket(c->conn);
		pfd.events = (short)(((ev & EPOLLIN) ? POLLIN : 0) | ((ev & EPOLLOUT) ? POLLOUT : 0));
		timeout = (int)((deadline - now) / 1000) + 1;
		if (c->state == CONN_CONNECTING && c->connect_deadline < deadline)
			timeout = (int)((c->connect_deadline - now) / 1000) + 1;
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
			return -errno;
		if (pfd.revents)
			conn_event(c, ((pfd.revents & POLLIN) ? EPOLLIN : 0) |
				      ((pfd.revents & POLLOUT) ? EPOLLOUT : 0) |
				      ((pfd.revents & (POLLHUP | POLLERR)) ? EPOLLHUP : 0));
	}
	return 0;
}
