// SPDX-License-Identifier: GPL-2.0-or-later
/* api_devices.c -- the board endpoints: list, show, and the admin's state changes */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "core/log.h"
#include "core/strv.h"
#include "sched/sched.h"
#include "session/reservations.h"
#include "session/viewer.h"
#include "store/store.h"

#define API_MAX_REASON 512

/* What the job running on a board of this host does now, or null. */
static json_t *running_json(const struct api_deps *d, int64_t job)
{
	struct sched_run_info info;

	if (!job || sched_run_info(d->sched, job, &info) < 0)
		return json_null();
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:I}", "id", (json_int_t)job,
			 "name", api_json_str(info.name), "submitter", api_json_str(info.submitter),
			 "started", api_time_json(info.started), "action", api_json_str(info.action),
			 "action_index", (json_int_t)info.action_index,
			 "actions", (json_int_t)info.n_actions);
}

json_t *api_board_json(const struct api_deps *d, const struct board *b)
{
	const struct device *dev = board_device(b);
	json_t *o = json_object(), *tags = json_array();
	int64_t job = board_job(b);
	int64_t reservation = reservations_of_board(d->reservations, board_name(b));
	int telnet = reservations_telnet_port(d->reservations, board_name(b));

	STRV_FOREACH(t, dev->tags)
		json_array_append_new(tags, api_json_str(*t));
	json_object_set_new(o, "name", api_json_str(board_name(b)));
	json_object_set_new(o, "type", api_json_str(dev->type_name));
	json_object_set_new(o, "description", api_json_str(dev->description));
	json_object_set_new(o, "tags", tags);
	json_object_set_new(o, "state", json_string(device_state_name(board_state(b))));
	json_object_set_new(o, "reason", api_json_str(board_state_reason(b)));
	json_object_set_new(o, "job", job ? json_integer(job) : json_null());
	json_object_set_new(o, "running", running_json(d, job));
	json_object_set_new(o, "holder", api_json_str(board_holder(b)));
	json_object_set_new(o, "hold_until", api_time_json(board_hold_until(b)));
	json_object_set_new(o, "reservation",
			    reservation ? json_integer(reservation) : json_null());
	json_object_set_new(o, "telnet_port", telnet ? json_integer(telnet) : json_null());
	json_object_set_new(o, "viewers", json_integer((json_int_t)viewers_count(
							  d->viewers, board_name(b))));
	json_object_set_new(o, "console_up", json_boolean(board_console_up(b)));
	json_object_set_new(o, "power", json_boolean(dev->has_power));
	json_object_set_new(o, "host", api_json_str(store_host_name(d->store)));
	return o;
}

/*
 * A board of another host of the lab (a shared store), as the registry has
 * it: what only its own host knows (description, tags, console, power,
 * viewers) is null.
 */
static json_t *remote_board_json(const struct device_record *rec)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", api_json_str(rec->name));
	json_object_set_new(o, "type", api_json_str(rec->device_type));
	json_object_set_new(o, "description", json_null());
	json_object_set_new(o, "tags", json_array());
	json_object_set_new(o, "state", json_string(device_state_name(rec->state)));
	json_object_set_new(o, "reason", api_json_str(rec->reason));
	json_object_set_new(o, "job", rec->job_id ? json_integer(rec->job_id) : json_null());
	json_object_set_new(o, "running", json_null());
	json_object_set_new(o, "holder", api_json_str(rec->holder));
	json_object_set_new(o, "hold_until", api_time_json(rec->hold_until));
	json_object_set_new(o, "reservation", json_null());
	json_object_set_new(o, "telnet_port", json_null());
	json_object_set_new(o, "viewers", json_null());
	json_object_set_new(o, "console_up", json_null());
	json_object_set_new(o, "power", json_null());
	json_object_set_new(o, "host", api_json_str(rec->host));
	return o;
}

/* Whether @rec is a board of another host of the lab. */
static bool remote(const struct api_deps *d, const struct device_record *rec)
{
	const char *host = store_host_name(d->store);

	return host && rec->host && strcmp(rec->host, host) && !lab_board(d->lab, rec->name);
}

struct remote_list {
	const struct api_deps *d;
	json_t *list;
};

static int add_remote(const struct device_record *rec, void *ud)
{
	struct remote_list *rl = ud;

	if (remote(rl->d, rec))
		json_array_append_new(rl->list, remote_board_json(rec));
	return 0;
}

enum MHD_Result api_devices_list(struct api_request *r)
{
	json_t *list = json_array(), *o;
	struct board **boards;
	int64_t recent = 0;
	size_t n, i;

	if (api_query_int(r, "recent", 0, API_MAX_RECENT, &recent) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'recent' must be a number of jobs from 0 to %d", API_MAX_RECENT);
	boards = lab_boards(api_deps_of(r)->lab, &n);
	for (i = 0; i < n; i++) {
		o = api_board_json(api_deps_of(r), boards[i]);
		if (recent)
			json_object_set_new(o, "recent", api_board_recent(api_deps_of(r),
									  board_name(boards[i]),
									  (unsigned)recent));
		json_array_append_new(list, o);
	}
	/* a lab of several hosts: their boards too, from the registry */
	if (store_host_name(api_deps_of(r)->store) &&
	    store_device_list(api_deps_of(r)->store, add_remote,
			      &(struct remote_list){ api_deps_of(r), list }) < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read the boards of the other hosts");
	}
	return api_reply_json(r, MHD_HTTP_OK, list);
}

enum MHD_Result api_devices_show(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct board *b = lab_board(d->lab, r->params[0]);
	struct device_record rec = { 0 };
	json_t *o = NULL;
	int err;

	if (b)
		return api_reply_json(r, MHD_HTTP_OK, api_board_json(d, b));
	if (!store_host_name(d->store))
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
	err = store_device_get(d->store, r->params[0], &rec);
	if (!err && remote(d, &rec))
		o = remote_board_json(&rec);
	device_record_release(&rec);
	if (err < 0 && err != -ENOENT)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read board '%s': %s", r->params[0], strerror(-err));
	if (!o)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
	return api_reply_json(r, MHD_HTTP_OK, o);
}

/* {"state": "maintenance"|"idle", "reason": "..."}; answers 400 itself. */
static int parse_state(struct api_request *r, enum device_state *ret_state,
		       const char **ret_reason, json_t **ret_doc, enum MHD_Result *ret)
{
	json_t *doc, *state, *reason;
	json_error_t jerr;
	const char *key;
	json_t *v;

	doc = json_loadb(r->body.buf, r->body.len, 0, &jerr);
	if (!doc) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "malformed JSON: line %d: %s",
				       jerr.line, jerr.text);
		return -EINVAL;
	}
	json_object_foreach(doc, key, v) {
		if (strcmp(key, "state") && strcmp(key, "reason")) {
			*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "unknown key '%s'", key);
			goto err_doc;
		}
	}
	state = json_object_get(doc, "state");
	reason = json_object_get(doc, "reason");
	if (!json_is_string(state) || (strcmp(json_string_value(state), "maintenance") &&
				       strcmp(json_string_value(state), "idle"))) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'state' must be 'maintenance' or 'idle'");
		goto err_doc;
	}
	if (reason && !json_is_null(reason) &&
	    (!json_is_string(reason) || json_string_length(reason) > API_MAX_REASON)) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'reason' must be a string of %d bytes or less",
				       API_MAX_REASON);
		goto err_doc;
	}
	device_state_from_name(json_string_value(state), ret_state);
	*ret_reason = json_string_value(reason);
	*ret_doc = doc;
	return 0;

err_doc:
	json_decref(doc);
	return -EINVAL;
}

int api_board_set_state(struct api_request *r, struct board *b, enum device_state s,
			const char *reason)
{
	char why[API_MAX_REASON + API_IDENTITY_MAX + 16];
	int err;

	if (reason && !*reason)
		reason = NULL;
	/* who took the board out is part of the reason the lab sees */
	snprintf(why, sizeof(why), "%s%sset by %s%s", reason ? reason : "", reason ? " (" : "",
		 r->who.name, reason ? ")" : "");
	err = board_set_admin_state(b, s, s == DEVICE_STATE_IDLE ? reason : why);
	if (!err)
		log_info("board '%s' set to %s by %s%s%s", board_name(b), device_state_name(s),
			 r->who.name, reason ? ": " : "", reason ? reason : "");
	return err;
}

enum MHD_Result api_devices_set_state(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct board *b = lab_board(d->lab, r->params[0]);
	const char *reason = NULL;
	enum device_state s;
	enum MHD_Result ret;
	json_t *doc;
	int err;

	if (!b)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
	if (parse_state(r, &s, &reason, &doc, &ret) < 0)
		return ret;
	err = api_board_set_state(r, b, s, reason);
	json_decref(doc);
	if (err == -EINVAL)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid state for board '%s'",
				       r->params[0]);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot set the state of board '%s': %s", r->params[0],
				       strerror(-err));
	return api_reply_json(r, MHD_HTTP_OK, api_board_json(d, lab_board(d->lab, r->params[0])));
}
