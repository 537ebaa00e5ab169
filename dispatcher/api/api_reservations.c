// SPDX-License-Identifier: GPL-2.0-or-later
/* api_reservations.c -- the reservation endpoints: reserve, list, show, cancel, release, renew */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "core/strv.h"
#include "sched/sched.h"
#include "session/reservations.h"
#include "store/store.h"

#define API_MAX_RESERVATIONS 1000	/* ?all=1 lists at most this many */

/* JSON text stored by labd (tags); kept as a string if it is not JSON. */
static json_t *json_from_text(const char *text)
{
	json_t *v;

	if (!text)
		return json_null();
	v = json_loads(text, JSON_DECODE_ANY, NULL);
	return v ? v : api_json_str(text);
}

static json_t *reservation_json(const struct api_deps *d, const struct reservation_record *rec)
{
	json_t *o = json_object();
	char url[64];
	size_t pos;

	snprintf(url, sizeof(url), API_PREFIX "/reservations/%lld", (long long)rec->id);
	json_object_set_new(o, "id", json_integer(rec->id));
	json_object_set_new(o, "url", json_string(url));
	json_object_set_new(o, "holder", api_json_str(rec->holder));
	json_object_set_new(o, "board", api_json_str(rec->board));
	json_object_set_new(o, "device_type", api_json_str(rec->device_type));
	json_object_set_new(o, "tags", json_from_text(rec->tags));
	json_object_set_new(o, "priority", json_integer(rec->priority));
	json_object_set_new(o, "duration", json_real((double)rec->duration / 1e6));
	json_object_set_new(o, "state", json_string(reservation_state_name(rec->state)));
	json_object_set_new(o, "device", api_json_str(rec->device));
	json_object_set_new(o, "submitted", api_time_json(rec->submitted));
	json_object_set_new(o, "started", api_time_json(rec->started));
	json_object_set_new(o, "until", api_time_json(rec->state == RESERVATION_WAITING ? 0 :
						      rec->until));
	json_object_set_new(o, "ended", api_time_json(rec->ended));
	json_object_set_new(o, "end_reason", api_json_str(rec->end_reason));
	if (rec->state == RESERVATION_WAITING && sched_position(d->sched, rec->id, &pos) == 0)
		json_object_set_new(o, "position", json_integer((json_int_t)pos));
	if (rec->state == RESERVATION_ACTIVE && rec->device)
		json_object_set_new(o, "telnet_port",
				    json_integer(reservations_telnet_port(d->reservations,
									  rec->device)));
	return o;
}

/* Answer that reservation @id could not be read (404 or 500). */
static enum MHD_Result reply_unread(struct api_request *r, int64_t id, int err)
{
	if (err == -ENOENT)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no reservation %lld", (long long)id);
	return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			       "cannot read reservation %lld: %s", (long long)id, strerror(-err));
}

/* Reply with reservation @id as it is now (also an api_answer_fn, after acting). */
static enum MHD_Result reply_reservation(struct api_request *r, unsigned status, int64_t id)
{
	const struct api_deps *d = api_deps_of(r);
	struct reservation_record rec = { 0 };
	json_t *o;
	int err;

	err = store_reservation_get(d->store, id, &rec);
	if (err < 0)
		return reply_unread(r, id, err);
	o = reservation_json(d, &rec);
	reservation_record_release(&rec);
	return api_reply_json(r, status, o);
}

/* ---- GET /reservations ---- */

struct list_args {
	const struct api_deps *d;
	json_t *list;
};

static int add_json(const struct reservation_record *rec, void *ud)
{
	struct list_args *args = ud;

	json_array_append_new(args->list, reservation_json(args->d, rec));
	return 0;
}

enum MHD_Result api_reservations_list(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	json_t *list = json_array();
	struct list_args args[1] = { { d, list } };
	int err;

	if (api_query_bool(r, "all")) {
		err = store_reservation_recent(d->store, API_MAX_RESERVATIONS, add_json, args);
	} else {
		err = store_reservation_active(d->store, add_json, args);
		if (!err)
			err = store_reservation_waiting(d->store, add_json, args);
	}
	if (err < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read the reservations: %s", strerror(-err));
	}
	return api_reply_json(r, MHD_HTTP_OK, list);
}

/* ---- POST /reservations ---- */

/* "duration" in seconds (a number) into usec; absent: @fallback. */
static int get_duration(json_t *doc, uint64_t fallback, uint64_t *ret)
{
	json_t *v = json_object_get(doc, "duration");
	double s;

	if (!v) {
		*ret = fallback;
		return 0;
	}
	if (!json_is_number(v))
		return -EINVAL;
	s = json_number_value(v);
	if (!isfinite(s) || s < 0 || s * 1e6 > (double)RESERVATION_MAX_DURATION)
		return -EINVAL;
	*ret = (uint64_t)llround(s * 1e6);
	return 0;
}

static json_t *load_body(struct api_request *r, enum MHD_Result *ret)
{
	json_error_t jerr;
	json_t *doc;

	doc = json_loadb(r->body.buf ? r->body.buf : "{}", r->body.len ? r->body.len : 2, 0,
			 &jerr);
	if (!doc)
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "malformed JSON: line %d: %s",
				       jerr.line, jerr.text);
	else if (!json_is_object(doc))
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "the body must be a JSON object");
	if (doc && !json_is_object(doc)) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

/* The request of @doc; answers 400 itself.  @ret_tags is the caller's to free. */
static int parse_request(struct api_request *r, json_t *doc, struct reservation_request *req,
			 char ***ret_tags, enum MHD_Result *ret)
{
	static const char *const keys[] = { "board", "device_type", "tags", "duration",
					     "priority", NULL };
	json_t *v, *tags = json_object_get(doc, "tags");
	const char *key;
	size_t i;

	json_object_foreach(doc, key, v)
		if (!strv_contains((char *const *)keys, key))
			goto err_key;
	req->board = json_string_value(json_object_get(doc, "board"));
	req->device_type = json_string_value(json_object_get(doc, "device_type"));
	req->priority = RESERVATION_DEFAULT_PRIORITY;
	v = json_object_get(doc, "priority");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100))
		goto err_priority;
	if (v)
		req->priority = (int)json_integer_value(v);
	if (get_duration(doc, RESERVATION_DEFAULT_DURATION, &req->duration) < 0)
		goto err_duration;
	if (!req->board && !req->device_type)
		goto err_what;
	if (tags && !json_is_array(tags))
		goto err_tags;
	json_array_foreach(tags, i, v)
		if (!json_is_string(v) || strv_push(ret_tags, json_string_value(v)) < 0)
			goto err_tags;
	req->tags = *ret_tags;
	return 0;

err_key:
	*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "unknown key '%s'", key);
	return -EINVAL;
err_priority:
	*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'priority' must be from 0 to 100");
	return -EINVAL;
err_duration:
	*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'duration' must be a number of seconds");
	return -EINVAL;
err_what:
	*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "give a 'board' or a 'device_type'");
	return -EINVAL;
err_tags:
	*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'tags' must be a list of strings");
	return -EINVAL;
}

static unsigned refusal_status(int err)
{
	switch (err) {
	case -ENOENT:
		return MHD_HTTP_NOT_FOUND;
	case -EEXIST:
		return MHD_HTTP_CONFLICT;
	case -EINVAL:
		return MHD_HTTP_UNPROCESSABLE_CONTENT;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

enum MHD_Result api_reservations_create(struct api_request *r)
{
	struct reservation_request req = { .holder = r->who.name };
	char err[RESERVATION_ERR_MAX], **tags = NULL;
	enum MHD_Result ret;
	int64_t id;
	json_t *doc;
	int e;

	doc = load_body(r, &ret);
	if (!doc)
		return ret;
	e = parse_request(r, doc, &req, &tags, &ret);
	if (!e)
		e = reservations_request(api_deps_of(r)->reservations, &req, &id, err);
	json_decref(doc);
	strv_free(tags);
	if (e == -EINVAL && r->replied)
		return ret;
	if (e < 0)
		return api_reply_error(r, refusal_status(e), "%s", err);
	return api_answer_after(r, reply_reservation, MHD_HTTP_CREATED, id);
}

enum MHD_Result api_reservations_locate(struct api_request *r)
{
	enum MHD_Result ret = MHD_YES;
	const char *board;
	json_t *doc;

	if (api_forwarding(r))
		return api_forward_answer(r);
	doc = json_loadb(r->body.buf, r->body.len, 0, NULL);
	board = json_string_value(json_object_get(doc, "board"));
	if (!board || !api_board_forwarded(r, board, false, &ret))
		r->located = true;	/* this host's, or a malformed request: the handler says */
	json_decref(doc);
	return ret;
}

/* ---- GET /reservations/{id}, POST /reservations/{id}/cancel ---- */

enum MHD_Result api_reservations_show(struct api_request *r)
{
	int64_t id;

	if (api_param_id(r, 0, &id) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid reservation id '%s'",
				       r->params[0]);
	return reply_reservation(r, MHD_HTTP_OK, id);
}

enum MHD_Result api_reservations_cancel(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct reservation_record rec = { 0 };
	char why[128], what[64];
	int64_t id;
	int err;

	if (api_param_id(r, 0, &id) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid reservation id '%s'",
				       r->params[0]);
	err = store_reservation_get(d->store, id, &rec);
	if (err < 0)
		return reply_unread(r, id, err);
	snprintf(what, sizeof(what), "cancel reservation %lld", (long long)id);
	err = api_authorize_owner(r, rec.holder, what);
	reservation_record_release(&rec);
	if (err < 0)
		return MHD_YES;
	snprintf(why, sizeof(why), "canceled by %s", r->who.name);
	err = reservations_cancel(d->reservations, id, why);
	if (err == -EALREADY)
		return api_reply_error(r, MHD_HTTP_CONFLICT, "reservation %lld already ended",
				       (long long)id);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot cancel reservation %lld: %s", (long long)id,
				       strerror(-err));
	return api_answer_after(r, reply_reservation, MHD_HTTP_OK, id);
}

/* ---- POST /devices/{name}/release, /devices/{name}/renew ---- */

/* The board of the path, held; the holder (or an admin) asking.  Answers itself. */
static struct board *held_board(struct api_request *r, const char *what, int64_t *ret_id,
				enum MHD_Result *ret)
{
	const struct api_deps *d = api_deps_of(r);
	struct board *b = lab_board(d->lab, r->params[0]);
	char action[128];

	*ret = MHD_YES;
	if (!b) {
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
		return NULL;
	}
	snprintf(action, sizeof(action), "%s board '%s'", what, r->params[0]);
	if (api_authorize_holder(r, b, action) < 0)
		return NULL;
	*ret_id = reservations_of_board(d->reservations, r->params[0]);
	if (!*ret_id) {
		*ret = api_reply_error(r, MHD_HTTP_CONFLICT, "board '%s' is not reserved",
				       r->params[0]);
		return NULL;
	}
	return b;
}

enum MHD_Result api_devices_release(struct api_request *r)
{
	enum MHD_Result ret;
	char why[128];
	int64_t id;
	int err;

	if (!held_board(r, "release", &id, &ret))
		return ret;
	snprintf(why, sizeof(why), "released by %s", r->who.name);
	err = reservations_release(api_deps_of(r)->reservations, r->params[0], why);
	if (err == -ENOENT || err == -EALREADY)
		return api_reply_error(r, MHD_HTTP_CONFLICT, "board '%s' is not reserved",
				       r->params[0]);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot release board '%s': %s", r->params[0],
				       strerror(-err));
	return api_answer_after(r, reply_reservation, MHD_HTTP_OK, id);
}

enum MHD_Result api_devices_renew(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct reservation_record rec = { 0 };
	enum MHD_Result ret;
	uint64_t duration, until;
	int64_t id;
	json_t *doc;
	int err;

	if (!held_board(r, "renew the reservation of", &id, &ret))
		return ret;
	doc = load_body(r, &ret);
	if (!doc)
		return ret;
	err = store_reservation_get(d->store, id, &rec);
	if (!err)
		err = get_duration(doc, rec.duration, &duration);
	json_decref(doc);
	reservation_record_release(&rec);
	if (!err)
		err = reservations_renew(d->reservations, r->params[0], duration, &until);
	if (err == -EINVAL)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'duration' must be from %llu to %llu seconds",
				       RESERVATION_MIN_DURATION / USEC_PER_SEC,
				       RESERVATION_MAX_DURATION / USEC_PER_SEC);
	if (err == -ENOENT)
		return api_reply_error(r, MHD_HTTP_CONFLICT, "board '%s' is not reserved",
				       r->params[0]);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot renew the reservation of '%s': %s", r->params[0],
				       strerror(-err));
	return api_answer_after(r, reply_reservation, MHD_HTTP_OK, id);
}
