// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_queue.c -- the lab per device type: GET /queue, GET /device-types, GET /whoami
 *
 * api_type_stats_collect() is the one pass over the boards, and the queue's
 * counts per device type (store_queue_summary(): kept counts and an index,
 * never the queue itself), that these endpoints, /metrics and the dashboard
 * share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "config/config.h"
#include "board/lab.h"
#include "core/loop.h"
#include "store/store.h"
#include "core/strv.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct api_type_stat *)a)->name,
		      ((const struct api_type_stat *)b)->name);
}

static struct api_type_stat *find_type(struct api_type_stats *s, const char *name)
{
	struct api_type_stat key = { .name = name };

	if (!name || !s->n)
		return NULL;
	return bsearch(&key, s->types, s->n, sizeof(*s->types), by_name);
}

static int count_queued(const struct queue_record *rec, void *ud)
{
	struct api_type_stat *t = find_type(ud, rec->device_type);

	if (t) {
		t->queued = rec->queued;
		t->oldest = rec->oldest;
		t->reservations = rec->reservations;
		t->oldest_reservation = rec->oldest_reservation;
	}
	return 0;
}

int api_type_stats_collect(const struct api_deps *d, struct api_type_stats *ret)
{
	const struct lab_config *c = lab_current_config(d->lab);
	struct board **boards;
	size_t n, i;
	int err;

	memset(ret, 0, sizeof(*ret));
	ret->types = calloc(c->n_types ? c->n_types : 1, sizeof(*ret->types));
	if (!ret->types)
		return -ENOMEM;
	for (i = 0; i < c->n_types; i++)
		ret->types[i].name = c->types[i]->name;
	ret->n = c->n_types;
	qsort(ret->types, ret->n, sizeof(*ret->types), by_name);
	boards = lab_boards(d->lab, &n);
	for (i = 0; i < n; i++) {
		struct api_type_stat *t = find_type(ret, board_device(boards[i])->type_name);

		if (!t)
			continue;
		t->boards[board_state(boards[i])]++;
		if (!board_console_up(boards[i]))
			t->console_down++;
	}
	err = store_queue_summary(d->store, count_queued, ret);
	if (err < 0) {
		api_type_stats_release(ret);
		return err;
	}
	return 0;
}

void api_type_stats_release(struct api_type_stats *s)
{
	free(s->types);
	memset(s, 0, sizeof(*s));
}

static json_t *boards_json(const struct api_type_stat *t)
{
	json_t *o = json_object();
	size_t total = 0;
	unsigned s;

	for (s = 0; s < DEVICE_STATE_COUNT; s++) {
		json_object_set_new(o, device_state_name(s), json_integer((json_int_t)t->boards[s]));
		total += t->boards[s];
	}
	json_object_set_new(o, "total", json_integer((json_int_t)total));
	return o;
}

/* The oldest of two submission times, 0 meaning none. */
static uint64_t oldest_of(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/*
 * One device type's queue: its queued jobs and waiting reservations, the
 * oldest entry's wait, boards free, busy and bad.
 */
static json_t *queue_json(const struct api_deps *d, const struct api_type_stat *t)
{
	uint64_t now = loop_realtime(d->loop), oldest = oldest_of(t->oldest,
								  t->oldest_reservation);
	size_t busy = t->boards[DEVICE_STATE_RUNNING] + t->boards[DEVICE_STATE_RESERVED];
	size_t bad = t->boards[DEVICE_STATE_BAD] + t->boards[DEVICE_STATE_MAINTENANCE];

	return json_pack("{s:s, s:I, s:I, s:o, s:f, s:I, s:I, s:I}", "device_type", t->name,
			 "queued", (json_int_t)t->queued, "reservations",
			 (json_int_t)t->reservations, "oldest", api_time_json(oldest),
			 "oldest_wait", oldest && now > oldest ? (now - oldest) / 1e6 : 0.0,
			 "free", (json_int_t)t->boards[DEVICE_STATE_IDLE], "busy", (json_int_t)busy,
			 "bad", (json_int_t)bad);
}

/* A device type no board has and nothing waits for (a base type others extend). */
static bool type_is_empty(const struct api_type_stat *t)
{
	unsigned s;

	for (s = 0; s < DEVICE_STATE_COUNT; s++)
		if (t->boards[s])
			return false;
	return !t->queued && !t->reservations;
}

static enum MHD_Result reply_types(struct api_request *r, bool details)
{
	const struct api_deps *d = api_deps_of(r);
	const struct lab_config *c = lab_current_config(d->lab);
	struct api_type_stats s;
	json_t *list = json_array();
	size_t i;
	int err;

	err = api_type_stats_collect(d, &s);
	if (err < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read the queue: %s", strerror(-err));
	}
	for (i = 0; i < s.n; i++) {
		json_t *o;

		if (!details && type_is_empty(&s.types[i]))
			continue;
		o = queue_json(d, &s.types[i]);
		if (details) {
			const struct device_type *t = config_find_type(c, s.types[i].name);

			json_object_set_new(o, "name", json_string(s.types[i].name));
			json_object_del(o, "device_type");
			json_object_set_new(o, "boards", boards_json(&s.types[i]));
			json_object_set_new(o, "extends", api_json_str(t ? t->extends : NULL));
			json_object_set_new(o, "boot_methods", json_array());
			STRV_FOREACH(m, t ? t->boot_methods : NULL)
				json_array_append_new(json_object_get(o, "boot_methods"),
						      api_json_str(*m));
		}
		json_array_append_new(list, o);
	}
	api_type_stats_release(&s);
	return api_reply_json(r, MHD_HTTP_OK, list);
}

enum MHD_Result api_queue_get(struct api_request *r)
{
	return reply_types(r, false);
}

enum MHD_Result api_device_types(struct api_request *r)
{
	return reply_types(r, true);
}

static int add_outcome(const struct job_record *rec, void *ud)
{
	return json_array_append_new(ud, json_pack("{s:I, s:s, s:s, s:i}", "id",
						   (json_int_t)rec->id, "health",
						   job_health_name(rec->health), "error_type",
						   error_type_name(rec->error_type), "fail",
						   rec->results_fail));
}

json_t *api_board_recent(const struct api_deps *d, const char *name, unsigned n)
{
	struct job_filter f = { .state = JOB_STATE_FINISHED, .device = name, .limit = n };
	json_t *list = json_array();

	store_job_list(d->store, &f, add_outcome, list);
	return list;
}

/* "sim-01 runs job 31", "sim-02 is held by alice", "sim-03 is in maintenance (cable)" */
static void describe_board(struct strbuf *sb, const struct board *b)
{
	enum device_state s = board_state(b);
	const char *reason = board_state_reason(b);

	strbuf_addf(sb, "%s", board_name(b));
	if (s == DEVICE_STATE_RUNNING && board_job(b))
		strbuf_addf(sb, " runs job %lld", (long long)board_job(b));
	else if (s == DEVICE_STATE_RESERVED && board_holder(b))
		strbuf_addf(sb, " is held by %s", board_holder(b));
	else if (s == DEVICE_STATE_MAINTENANCE)
		strbuf_addstr(sb, " is in maintenance");
	else if (s == DEVICE_STATE_IDLE)
		strbuf_addstr(sb, " is free");
	else
		strbuf_addf(sb, " is %s", device_state_name(s));
	if (reason && (s == DEVICE_STATE_MAINTENANCE || s == DEVICE_STATE_BAD))
		strbuf_addf(sb, " (%s)", reason);
}

/* The boards of @rec's type that have its tags, into @boards and @text. */
static void waiting_boards(const struct api_deps *d, const struct job_record *rec,
			   json_t *boards, struct strbuf *text)
{
	json_t *jtags = rec->tags ? json_loads(rec->tags, JSON_DECODE_ANY, NULL) : NULL, *v;
	struct board **all;
	char **tags = NULL;
	size_t n, i, k = 0;

	json_array_foreach(jtags, i, v)
		if (json_is_string(v))
			strv_push(&tags, json_string_value(v));
	json_decref(jtags);
	all = lab_boards(d->lab, &n);
	for (i = 0; i < n; i++) {
		const struct board *b = all[i];

		if (strcmp(board_device(b)->type_name, rec->device_type) ||
		    !board_has_tags(b, tags))
			continue;
		json_array_append_new(boards, json_pack("{s:s, s:s, s:o, s:o, s:o}", "name",
			board_name(b), "state", device_state_name(board_state(b)), "job",
			board_job(b) ? json_integer(board_job(b)) : json_null(), "holder",
			api_json_str(board_holder(b)), "reason", api_json_str(board_state_reason(b))));
		strbuf_addstr(text, k++ ? ", " : "; ");
		describe_board(text, b);
	}
	if (!k)
		strbuf_addstr(text, "; no board of this host has its type and tags");
	strv_free(tags);
}

json_t *api_job_waiting(const struct api_deps *d, const struct job_record *rec)
{
	struct strbuf text = STRBUF_INIT;
	json_t *o, *boards = json_array();
	int64_t pos = 0;

	if (!rec->device_type || store_job_position(d->store, rec->id, &pos) < 0)
		pos = 0;
	if (pos)
		strbuf_addf(&text, "position %lld in the '%s' queue", (long long)pos,
			    rec->device_type);
	else
		strbuf_addf(&text, "waiting for a '%s' board", rec->device_type ? rec->device_type :
			    "?");
	if (rec->device_type)
		waiting_boards(d, rec, boards, &text);
	o = json_pack("{s:o, s:o, s:s}", "position", pos ? json_integer(pos) : json_null(),
		      "boards", boards, "text", text.buf ? text.buf : "");
	strbuf_release(&text);
	return o;
}

/* Who the dashboard is talking as: it shows only the actions the role allows. */
enum MHD_Result api_whoami(struct api_request *r)
{
	return api_reply_json(r, MHD_HTTP_OK,
			      json_pack("{s:s, s:s, s:b}", "name", r->who.name, "role",
					user_role_name(r->who.role),
					"is_user", r->who.is_user));
}
