/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pg_conn.h -- one PostgreSQL connection driven by labd's loop (libpq's
 * asynchronous API in pipeline mode); private to store/ (pg*.c)
 *
 * Commands are queued with pg_conn_send() and never wait: the connection
 * sends them in order (PQsendQueryParams, pipelined) when it is up, and the
 * loop reads the results from PQsocket() and calls each command's
 * completion in the order the commands were queued.  Commands queued with
 * PG_CMD_SYNC end a batch: the commands since the previous batch end run in
 * one implicit transaction of the server (pipeline mode), committed at the
 * batch end, so a batch is atomic.
 *
 * The connection opens itself (PQconnectStart, polled from the loop) when a
 * command is queued or pg_conn_start() is called, and reopens after a loss
 * with a backoff doubling from 100 ms to PG_CONN_BACKOFF_MAX.  Commands of a
 * batch that was in flight when the connection was lost complete with
 * -ENOTCONN (their effect on the server is unknown: the caller decides, see
 * pg_writer.c), and so do the queued ones: commands queued while no
 * connection is up wait for the next one, or fail with it.  LISTEN channels
 * given to pg_conn_listen() are listened to again on every connection, and
 * each notification is handed to the notify callback.
 *
 * Outside the loop's callbacks (labd's start, `labd store migrate`, the unit
 * tests), pg_conn_wait() drives the connection itself with poll() until a
 * command completed or a deadline passed: the only place that waits.
 *
 * Completions run from the loop (or from pg_conn_wait()); they may queue
 * further commands.  Parameters are copied at pg_conn_send(); the SQL text
 * is borrowed and must live as long as the connection (string literals).
 */
#ifndef LABD_PG_CONN_H
#define LABD_PG_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

struct loop;
struct pg_conn;

#define PG_CONN_BACKOFF_MIN (100 * 1000ULL)	/* usec */
#define PG_CONN_BACKOFF_MAX (5 * 1000 * 1000ULL)

/* The command ends a batch: a pipeline sync point, committing the batch. */
#define PG_CMD_SYNC 0x1
/* The command belongs to the batch the before-send hook closes: no hook for it. */
#define PG_CMD_IN_GROUP 0x2

/*
 * Completion of a command: @err 0 with @res (PGRES_COMMAND_OK or
 * PGRES_TUPLES_OK, borrowed for the call), or a negative errno with @res
 * NULL: -ENOTCONN (the connection was lost or closed before the answer),
 * -ECANCELED (an earlier command of the batch failed), -ENOENT (a foreign
 * key points nowhere), -EEXIST (a unique key is taken), -EIO (any other
 * error of the server, whose message is in @msg, else NULL).
 */
typedef void (*pg_done_fn)(int err, PGresult *res, const char *msg, void *userdata);

/* A notification on a channel we listen to; @payload may be ""; @own: sent through this connection. */
typedef void (*pg_notify_fn)(const char *channel, const char *payload, bool own, void *userdata);

/* The connection went up (@up true: LISTENs sent) or down. */
typedef void (*pg_state_fn)(bool up, void *userdata);

struct pg_conn_params {
	const char *conninfo;	/* libpq's connection string; copied */
	const char *name;	/* for the log: "store", "claims" ... */
	struct loop *loop;	/* NULL: only pg_conn_wait() drives it */
	pg_notify_fn notify;	/* may be NULL */
	pg_state_fn state;	/* may be NULL */
	void *userdata;		/* of notify and state */
};

/* pg_conn_new() - a connection, not opened yet; 0 or -ENOMEM. */
int pg_conn_new(const struct pg_conn_params *p, struct pg_conn **ret);

/*
 * pg_conn_free() - close; commands still queued or in flight complete with
 * -ENOTCONN first.  Accepts NULL; returns NULL.
 */
struct pg_conn *pg_conn_free(struct pg_conn *c);

/* pg_conn_set_notify() - where notifications go from now on. */
void pg_conn_set_notify(struct pg_conn *c, pg_notify_fn fn, void *userdata);
/*
 * pg_conn_set_before_send() - @fn(@userdata) runs at each pg_conn_send()
 * without PG_CMD_IN_GROUP, before its command is queued: the store's writer
 * ends the batch of writes it keeps open (pg_writer.c), so a read or a claim
 * sees them and never commits them half way.  @fn may send (PG_CMD_IN_GROUP).
 */
void pg_conn_set_before_send(struct pg_conn *c, void (*fn)(void *userdata), void *userdata);

/* pg_conn_start() - begin connecting now (when not already up or connecting). */
void pg_conn_start(struct pg_conn *c);

/* pg_conn_is_up() - whether the connection is open and its LISTENs sent. */
bool pg_conn_is_up(const struct pg_conn *c);

/* pg_conn_pending() - commands queued or in flight. */
unsigned pg_conn_pending(const struct pg_conn *c);

/* pg_conn_last_error() - the last connection error's message, or "" (borrowed). */
const char *pg_conn_last_error(const struct pg_conn *c);

/*
 * pg_conn_send() - queue @sql with @n text parameters (NULL: SQL NULL)
 * @flags: PG_CMD_SYNC to end a batch there
 * @done: may be NULL
 *
 * Returns 0 (@done will be called exactly once) or -ENOMEM (not queued).
 */
int pg_conn_send(struct pg_conn *c, const char *sql, int n, const char *const *params,
		 unsigned flags, pg_done_fn done, void *userdata);

/* pg_conn_sync() - end the current batch, if any command is in it. */
int pg_conn_sync(struct pg_conn *c);

/* pg_conn_listen() - LISTEN to @channel (an identifier) on this and every later connection. */
int pg_conn_listen(struct pg_conn *c, const char *channel);

/*
 * pg_conn_wait() - drive the connection until *@flag is true or until
 * @deadline (monotonic usec); outside loop callbacks only.  Connects when
 * needed.  Returns 0, -ETIMEDOUT, or -ENOTCONN when the connection failed
 * and @fail_fast (the queued commands stay queued).
 */
int pg_conn_wait(struct pg_conn *c, const bool *flag, uint64_t deadline, bool fail_fast);

/* pg_now() - CLOCK_MONOTONIC in usec (for deadlines). */
uint64_t pg_now(void);

#endif
