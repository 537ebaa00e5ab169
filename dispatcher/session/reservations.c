// SPDX-License-Identifier: GPL-2.0-or-later
/* reservations.c -- developers holding boards: grant, expiry, release, power, telnet port */
#include "session/reservations.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "core/log.h"
#include "core/strv.h"
#include "journal/joblog.h"
#include "sched/sched.h"
#include "session/telnetd.h"
#include "session/viewer.h"
#include "store/store.h"

#define RESERVATION_MSG_MAX 512

/* An active reservation: a board held until a time, or being freed. */
struct hold {
	struct reservations *rs;
	int64_t id;
	char *board;
	char *holder;
	uint64_t until;			/* realtime usec */
	struct loop_source *timer;	/* the expiry */
	struct telnetd *telnet;
	bool ending;			/* ended: powering the board off before it is free */
	struct board *powering;		/* referenced while that power-off runs */
	struct hold *next;
};

/* A power operation asked by a holder or an admin, until it completes. */
struct power_req {
	struct reservations *rs;
	struct board *board;		/* referenced */
	enum power_op op;
	reservations_power_fn done;	/* NULL once forgotten */
	void *userdata;
	struct power_req *next;
};

struct reservations {
	struct reservations_deps deps;
	struct hold *holds;
	struct power_req *powers;
};

int reservations_new(const struct reservations_deps *deps, struct reservations **ret)
{
	struct reservations *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return -ENOMEM;
	rs->deps = *deps;
	*ret = rs;
	return 0;
}

static struct store *store_of(struct reservations *rs)
{
	return rs->deps.store;
}

static uint64_t realtime(struct reservations *rs)
{
	return loop_realtime(rs->deps.loop);
}

/* "2026-12-03 10:00:00 UTC" */
static const char *format_time(uint64_t usec, char buf[40])
{
	joblog_format_time(usec, buf, 40);
	buf[10] = ' ';
	snprintf(buf + 19, 21, " UTC");
	return buf;
}

/* Say @fmt in labd's log, the board's log and to the board's console viewers. */
static void announce(struct reservations *rs, const char *board, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void announce(struct reservations *rs, const char *board, const char *fmt, ...)
{
	struct board *b = lab_board(rs->deps.lab, board);
	char msg[RESERVATION_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_info("%s", msg);
	if (b && board_log(b))
		joblog_msg(board_log(b), realtime(rs), "info", "%s", msg);
	viewers_notice(rs->deps.viewers, board, "%s", msg);
}

static int set_err(char *err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int set_err(char *err, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, RESERVATION_ERR_MAX, fmt, ap);
	va_end(ap);
	return r;
}

/* ---- holds ---- */

static struct hold *find_hold(const struct reservations *rs, const char *board)
{
	struct hold *h;

	for (h = rs->holds; h; h = h->next)
		if (!strcmp(h->board, board))
			return h;
	return NULL;
}

static struct hold *find_hold_id(const struct reservations *rs, int64_t id)
{
	struct hold *h;

	for (h = rs->holds; h; h = h->next)
		if (h->id == id)
			return h;
	return NULL;
}

static void hold_free(struct hold *h)
{
	struct hold **pp;

	for (pp = &h->rs->holds; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	loop_source_free(h->timer);
	telnetd_free(h->telnet, "the reservation ended");
	if (h->powering && board_power(h->powering))
		power_abort(board_power(h->powering));
	board_unref(h->powering);
	free(h->board);
	free(h->holder);
	free(h);
}

/* Arm the expiry: the loop's timers are monotonic, @until is realtime. */
static void arm(struct hold *h)
{
	struct loop *l = h->rs->deps.loop;
	uint64_t now = loop_realtime(l);

	loop_timer_set(h->timer, loop_now(l) + (h->until > now ? h->until - now : 0));
}

static int end_hold(struct hold *h, const char *why);

static int on_expire(struct loop_source *s, uint64_t now, void *ud)
{
	end_hold(ud, "expired");
	return 0;
}

static struct hold *hold_new(struct reservations *rs, int64_t id, const char *board,
			     const char *holder, uint64_t until)
{
	struct hold *h = calloc(1, sizeof(*h));
	char desc[128];

	if (!h)
		return NULL;
	h->rs = rs;
	h->id = id;
	h->until = until;
	h->board = strdup(board);
	h->holder = strdup(holder);
	h->next = rs->holds;
	rs->holds = h;
	if (!h->board || !h->holder ||
	    loop_add_timer(rs->deps.loop, &h->timer, USEC_INFINITY, on_expire, h) < 0) {
		hold_free(h);
		return NULL;
	}
	snprintf(desc, sizeof(desc), "reservation:%s", board);
	loop_source_set_description(h->timer, desc);
	arm(h);
	return h;
}

/* The board is off (or cannot be turned off): free it for the queue. */
static void free_board(struct hold *h)
{
	struct board *b = lab_board(h->rs->deps.lab, h->board);

	if (b && board_holder(b))
		board_set_reservation(b, NULL, 0);
	announce(h->rs, h->board, "board '%s' is free", h->board);
	hold_free(h);
}

static void on_end_power_off(struct power *p, int err, const char *msg, void *ud)
{
	struct hold *h = ud;

	if (err < 0) {
		log_warning("board '%s': power-off after the reservation failed: %s", h->board, msg);
		board_set_power_fault(h->powering, msg);
	}
	h->powering = board_unref(h->powering);	/* done: nothing left to abort */
	free_board(h);
}

/* The holder's power operations on @b end with the reservation. */
static void cancel_powers(struct reservations *rs, struct board *b)
{
	struct power_req **pp = &rs->powers, *req;

	while ((req = *pp)) {
		if (req->board != b) {
			pp = &req->next;
			continue;
		}
		*pp = req->next;
		power_abort(board_power(b));
		if (req->done)
			req->done(-ECANCELED, "the reservation ended", req->userdata);
		board_unref(req->board);
		free(req);
	}
}

/* End the reservation: stop its session boot, close its port, power off, then free. */
static int end_hold(struct hold *h, const char *why)
{
	struct reservations *rs = h->rs;
	struct board *b = lab_board(rs->deps.lab, h->board);
	int err;

	if (h->ending)
		return -EALREADY;
	h->ending = true;
	loop_timer_set(h->timer, USEC_INFINITY);
	h->telnet = telnetd_free(h->telnet, why);
	store_reservation_end(store_of(rs), h->id, realtime(rs), why);
	announce(rs, h->board, "reservation %lld of '%s' by '%s' ended: %s", (long long)h->id,
		 h->board, h->holder, why);
	if (b && board_job(b))
		sched_cancel(rs->deps.sched, board_job(b), "the reservation ended");
	if (b)
		cancel_powers(rs, b);
	if (!b || !board_power(b)) {
		free_board(h);
		return 0;
	}
	h->powering = board_ref(b);
	err = power_run(board_power(b), POWER_OFF, on_end_power_off, h);
	if (err < 0) {
		log_warning("board '%s': cannot power off after the reservation: %s", h->board,
			    strerror(-err));
		free_board(h);
	}
	return 0;
}

struct reservations *reservations_free(struct reservations *rs)
{
	struct power_req *req;

	if (!rs)
		return NULL;
	while (rs->holds)
		hold_free(rs->holds);
	while ((req = rs->powers)) {
		rs->powers = req->next;
		power_abort(board_power(req->board));
		board_unref(req->board);
		free(req);
	}
	free(rs);
	return NULL;
}

/* ---- queueing and granting ---- */

/* The device type a request waits for; refusals explained in @err. */
static int request_type(struct reservations *rs, const struct reservation_request *req,
			const char **ret, char *err)
{
	struct board *b = req->board ? lab_board(rs->deps.lab, req->board) : NULL;
	bool elsewhere = false;
	const char *type;
	char until[40];

	if (req->board && !b)
		return set_err(err, -ENOENT, "no board '%s'", req->board);
	if (!b) {
		const struct lab_config *c = lab_current_config(rs->deps.lab);

		if (!req->device_type || !config_find_type(c, req->device_type))
			return set_err(err, -ENOENT, "no device type '%s' in this lab",
				       req->device_type ? req->device_type : "");
		/* another host's boards (a shared store): their tags are not known here */
		if (!lab_has_board(rs->deps.lab, req->device_type, req->tags) &&
		    (store_board_elsewhere(store_of(rs), req->device_type, &elsewhere) < 0 ||
		     !elsewhere))
			return set_err(err, -EINVAL, "no board of type '%s' with these tags",
				       req->device_type);
		*ret = req->device_type;
		return 0;
	}
	type = board_device(b)->type_name;
	if (req->device_type && strcmp(req->device_type, type))
		return set_err(err, -EINVAL, "board '%s' is of type '%s', not '%s'", req->board, type,
			       req->device_type);
	if (!board_has_tags(b, req->tags))
		return set_err(err, -EINVAL, "board '%s' does not have all these tags", req->board);
	if (board_holder(b) && !strcmp(board_holder(b), req->holder))
		return set_err(err, -EEXIST, "'%s' already holds '%s' until %s: renew it instead",
			       req->holder, req->board, format_time(board_hold_until(b), until));
	*ret = type;
	return 0;
}

static char *tags_json(char *const *tags)
{
	json_t *arr = json_array();
	char *text;

	STRV_FOREACH(t, tags)
		json_array_append_new(arr, json_string(*t));
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}

int reservations_request(struct reservations *rs, const struct reservation_request *req,
			 int64_t *ret_id, char err[RESERVATION_ERR_MAX])
{
	struct reservation_record rec = { 0 };
	const char *type = NULL;
	int r;

	if (req->duration < RESERVATION_MIN_DURATION || req->duration > RESERVATION_MAX_DURATION)
		return set_err(err, -EINVAL, "a reservation lasts from %llu s to %llu s",
			       RESERVATION_MIN_DURATION / USEC_PER_SEC,
			       RESERVATION_MAX_DURATION / USEC_PER_SEC);
	if (req->priority < 0 || req->priority > 100)
		return set_err(err, -EINVAL, "priority must be from 0 to 100");
	r = request_type(rs, req, &type, err);
	if (r < 0)
		return r;
	rec.holder = (char *)req->holder;
	rec.board = (char *)req->board;
	rec.device_type = (char *)type;
	rec.tags = tags_json(req->tags);
	rec.priority = req->priority;
	rec.duration = req->duration;
	rec.submitted = realtime(rs);
	r = rec.tags ? store_reservation_insert(store_of(rs), &rec) : -ENOMEM;
	if (r < 0) {
		free(rec.tags);
		return set_err(err, r, "cannot store the reservation: %s", strerror(-r));
	}
	log_info("reservation %lld: '%s' waits for %s%s%s", (long long)rec.id, req->holder,
		 req->board ? "board '" : "a board of type '", req->board ? req->board : type, "'");
	sched_reservation_queued(rs->deps.sched, &rec);
	free(rec.tags);
	*ret_id = rec.id;
	return 0;
}

void reservations_grant(struct reservations *rs, const struct reservation_record *rec,
			struct board *b)
{
	char when[40];

	if (!hold_new(rs, rec->id, board_name(b), rec->holder, rec->until)) {
		store_reservation_end(store_of(rs), rec->id, realtime(rs), "labd ran out of memory");
		return;
	}
	board_set_reservation(b, rec->holder, rec->until);
	announce(rs, board_name(b), "reservation %lld: '%s' holds '%s' until %s",
		 (long long)rec->id, rec->holder, board_name(b), format_time(rec->until, when));
}

/* ---- after a restart ---- */

static int restore_one(const struct reservation_record *rec, void *ud)
{
	struct reservations *rs = ud;
	struct board *b = rec->device ? lab_board(rs->deps.lab, rec->device) : NULL;
	struct hold *h;
	char when[40];

	if (!b) {
		store_reservation_end(store_of(rs), rec->id, realtime(rs), "the board left the lab");
		return 0;
	}
	h = hold_new(rs, rec->id, rec->device, rec->holder, rec->until);
	if (!h)
		return -ENOMEM;
	board_set_reservation(b, rec->holder, rec->until);
	log_info("reservation %lld: '%s' still holds '%s' until %s", (long long)rec->id,
		 rec->holder, rec->device, format_time(rec->until, when));
	if (rec->until <= realtime(rs))
		end_hold(h, "expired while labd was stopped");
	return 0;
}

int reservations_restore(struct reservations *rs)
{
	struct board **boards;
	size_t n, i;
	int err;

	err = store_reservation_active(store_of(rs), restore_one, rs);
	boards = lab_boards(rs->deps.lab, &n);
	for (i = 0; i < n; i++)
		if (board_holder(boards[i]) && !find_hold(rs, board_name(boards[i])))
			board_set_reservation(boards[i], NULL, 0);
	return err;
}

/* ---- the holder's operations ---- */

int reservations_renew(struct reservations *rs, const char *board, uint64_t duration,
		       uint64_t *ret_until)
{
	struct hold *h = find_hold(rs, board);
	struct board *b = lab_board(rs->deps.lab, board);
	uint64_t until = realtime(rs) + duration;
	char when[40];
	int err;

	if (!h || h->ending || !b)
		return -ENOENT;
	if (duration < RESERVATION_MIN_DURATION || duration > RESERVATION_MAX_DURATION)
		return -EINVAL;
	err = store_reservation_renew(store_of(rs), h->id, until);
	if (err < 0)
		return err;
	h->until = until;
	arm(h);
	board_set_reservation(b, h->holder, until);
	announce(rs, board, "reservation %lld: '%s' holds '%s' until %s (renewed)",
		 (long long)h->id, h->holder, board, format_time(until, when));
	*ret_until = until;
	return 0;
}

int reservations_release(struct reservations *rs, const char *board, const char *why)
{
	struct hold *h = find_hold(rs, board);

	if (!h)
		return -ENOENT;
	return end_hold(h, why);
}

int reservations_cancel(struct reservations *rs, int64_t id, const char *why)
{
	struct reservation_record rec = { 0 };
	struct hold *h;
	int err;

	err = store_reservation_get(store_of(rs), id, &rec);
	if (err < 0)
		return err;
	if (rec.state == RESERVATION_ENDED)
		err = -EALREADY;
	else if (rec.state == RESERVATION_WAITING)
		err = store_reservation_end(store_of(rs), id, realtime(rs), why);
	else if ((h = find_hold_id(rs, id)))
		err = end_hold(h, why);
	else
		err = store_reservation_end(store_of(rs), id, realtime(rs), why);
	if (!err && rec.state == RESERVATION_WAITING)
		log_info("reservation %lld of '%s' canceled: %s", (long long)id, rec.holder, why);
	reservation_record_release(&rec);
	return err;
}

int64_t reservations_of_board(const struct reservations *rs, const char *board)
{
	const struct hold *h = find_hold(rs, board);

	return h && !h->ending ? h->id : 0;
}

int reservations_telnet(struct reservations *rs, const char *board, int *ret_port)
{
	struct hold *h = find_hold(rs, board);
	struct board *b = lab_board(rs->deps.lab, board);
	int err;

	if (!h || h->ending || !b)
		return -ENOENT;
	if (!h->telnet) {
		struct telnetd_deps td = {
			.loop = rs->deps.loop, .viewers = rs->deps.viewers, .lab = rs->deps.lab,
		};

		err = telnetd_new(&td, b, h->holder, &h->telnet);
		if (err < 0)
			return err;
		announce(rs, board, "board '%s': telnet port %d open for '%s'", board,
			 telnetd_port(h->telnet), h->holder);
	}
	*ret_port = telnetd_port(h->telnet);
	return 0;
}

struct telnetd *reservations_telnetd(const struct reservations *rs, const char *board)
{
	const struct hold *h = find_hold(rs, board);

	return h && !h->ending ? h->telnet : NULL;
}

int reservations_telnet_port(const struct reservations *rs, const char *board)
{
	const struct hold *h = find_hold(rs, board);

	return h && h->telnet ? telnetd_port(h->telnet) : 0;
}

static void on_power_done(struct power *p, int err, const char *msg, void *ud)
{
	struct power_req *req = ud, **pp;
	struct reservations *rs = req->rs;

	for (pp = &rs->powers; *pp; pp = &(*pp)->next) {
		if (*pp == req) {
			*pp = req->next;
			break;
		}
	}
	if (err < 0) {
		log_warning("board '%s': power %s failed: %s", board_name(req->board),
			    power_op_name(req->op), msg);
		board_set_power_fault(req->board, msg);
	} else if (board_log(req->board)) {
		joblog_msg(board_log(req->board), realtime(rs), "info", "power %s done",
			   power_op_name(req->op));
	}
	if (req->done)
		req->done(err, msg, req->userdata);
	board_unref(req->board);
	free(req);
}

/* Whether @who may run a power operation on @b now; the refusal in @err. */
static int power_allowed(struct reservations *rs, struct board *b, char *err)
{
	const struct hold *h = find_hold(rs, board_name(b));

	if (!board_power(b))
		return set_err(err, -EOPNOTSUPP, "board '%s' has no power control", board_name(b));
	if (board_job(b))
		return set_err(err, -EBUSY, "board '%s' is running job %lld", board_name(b),
			       (long long)board_job(b));
	if (h && h->ending)
		return set_err(err, -EBUSY, "board '%s' is being released", board_name(b));
	if (board_state(b) == DEVICE_STATE_IDLE)
		return set_err(err, -EPERM, "board '%s' is idle: reserve it first", board_name(b));
	if (power_is_busy(board_power(b)))
		return set_err(err, -EBUSY, "a power operation is running on board '%s'",
			       board_name(b));
	return 0;
}

int reservations_power(struct reservations *rs, const char *board, enum power_op op,
		       const char *who, reservations_power_fn done, void *userdata,
		       char err[RESERVATION_ERR_MAX])
{
	struct board *b = lab_board(rs->deps.lab, board);
	struct power_req *req;
	int r;

	if (!b)
		return set_err(err, -ENOENT, "no board '%s'", board);
	r = power_allowed(rs, b, err);
	if (r < 0)
		return r;
	req = calloc(1, sizeof(*req));
	if (!req)
		return set_err(err, -ENOMEM, "out of memory");
	req->rs = rs;
	req->board = board_ref(b);
	req->op = op;
	req->done = done;
	req->userdata = userdata;
	r = power_run(board_power(b), op, on_power_done, req);
	if (r < 0) {
		board_unref(req->board);
		free(req);
		return set_err(err, r, "cannot power board '%s': %s", board, strerror(-r));
	}
	req->next = rs->powers;
	rs->powers = req;
	announce(rs, board, "board '%s': power %s by '%s'", board, power_op_name(op), who);
	return 0;
}

void reservations_power_forget(struct reservations *rs, void *userdata)
{
	struct power_req *req;

	for (req = rs->powers; req; req = req->next)
		if (req->userdata == userdata)
			req->done = NULL;
}

void reservations_unwatch(struct reservations *rs, const char *why)
{
	struct hold *h;

	for (h = rs->holds; h; h = h->next)
		telnetd_unwatch(h->telnet, why);
}

void reservations_power_unwait(struct reservations *rs)
{
	struct power_req *req;

	for (req = rs->powers; req; req = req->next) {
		reservations_power_fn done = req->done;

		req->done = NULL;
		if (done)
			done(-ESHUTDOWN, "labd is stopping", req->userdata);
	}
}
