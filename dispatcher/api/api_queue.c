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

/* One device type's queue: depth, the oldest job's wait, boards free, busy and bad. */
static json_t *queue_json(const struct api_deps *d, const struct api_type_stat *t)
{
	uint64_t now = loop_realtime(d->loop);
	size_t busy = t->boards[DEVICE_STATE_RUNNING] + t->boards[DEVICE_STATE_RESERVED];
	size_t bad = t->boards[DEVICE_STATE_BAD] + t->boards[DEVICE_STATE_MAINTENANCE];

	return json_pack("{s:s, s:I, s:o, s:f, s:I, s:I, s:I}", "device_type", t->name,
			 "queued", (json_int_t)t->queued, "oldest", api_time_json(t->oldest),
			 "oldest_wait", t->oldest && now > t->oldest ? (now - t->oldest) / 1e6 : 0.0,
			 "free", (json_int_t)t->boards[DEVICE_STATE_IDLE], "busy", (json_int_t)busy,
			 "bad", (json_int_t)bad);
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
		json_t *o = queue_json(d, &s.types[i]);

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
	return json_array_append_new(ud, json_pack("{s:I, s:s, s:s}", "id", (json_int_t)rec->id,
						   "health", job_health_name(rec->health),
						   "error_type", error_type_name(rec->error_type)));
}

json_t *api_board_recent(const struct api_deps *d, const char *name, unsigned n)
{
	struct job_filter f = { .state = JOB_STATE_FINISHED, .device = name, .limit = n };
	json_t *list = json_array();

	store_job_list(d->store, &f, add_outcome, list);
	return list;
}

/* Who the dashboard is talking as: it shows only the actions the role allows. */
enum MHD_Result api_whoami(struct api_request *r)
{
	return api_reply_json(r, MHD_HTTP_OK,
			      json_pack("{s:s, s:s, s:b}", "name", r->who.name, "role",
					user_role_name(r->who.role),
					"is_user", r->who.is_user));
}
