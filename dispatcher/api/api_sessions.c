// SPDX-License-Identifier: GPL-2.0-or-later
/* api_sessions.c -- what a holder does with its board: power, boot, a telnet port */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/strv.h"
#include "session/bootjob.h"
#include "sched/sched.h"
#include "session/reservations.h"
#include "session/telnetd.h"
#include "session/viewer.h"

#define API_POWER_MSG_MAX 256

/* The board of the path, its holder (or an admin) asking to @what it. Answers itself. */
static struct board *holders_board(struct api_request *r, const char *what, enum MHD_Result *ret)
{
	struct board *b = lab_board(api_deps_of(r)->lab, r->params[0]);
	char action[128];

	*ret = MHD_YES;
	if (!b) {
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
		return NULL;
	}
	snprintf(action, sizeof(action), "%s board '%s'", what, r->params[0]);
	return api_authorize_holder(r, b, action) < 0 ? NULL : b;
}

static json_t *load_object(struct api_request *r, enum MHD_Result *ret)
{
	json_error_t jerr;
	json_t *doc = json_loadb(r->body.len ? r->body.buf : "{}", r->body.len ? r->body.len : 2, 0,
				 &jerr);

	if (!doc) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "malformed JSON: line %d: %s",
				       jerr.line, jerr.text);
		return NULL;
	}
	if (!json_is_object(doc)) {
		json_decref(doc);
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "the body must be a JSON object");
		return NULL;
	}
	return doc;
}

/* ---- POST /devices/{name}/power: answered when the operation is done ---- */

/* A power operation the request waits for, its connection suspended. */
struct power_wait {
	struct api_request *r;	/* NULL once the connection is gone */
	enum power_op op;
	bool done;
	int err;
	char msg[API_POWER_MSG_MAX];
};

static void on_power_done(int err, const char *msg, void *ud)
{
	struct power_wait *w = ud;

	w->done = true;
	w->err = err;
	snprintf(w->msg, sizeof(w->msg), "%s", msg ? msg : "");
	if (w->r)
		api_resume(w->r);
	else
		free(w);
}

static void power_gone(struct api_request *r)
{
	struct power_wait *w = r->pending;

	r->pending = NULL;
	if (!w->done) {
		reservations_power_forget(api_deps_of(r)->reservations, w);
		w->done = true;
	}
	free(w);
}

static enum MHD_Result power_result(struct api_request *r)
{
	struct power_wait *w = r->pending;
	enum MHD_Result ret;

	r->pending = NULL;
	if (w->err == -ESHUTDOWN)
		ret = api_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", w->msg);
	else if (w->err < 0)
		ret = api_reply_error(r, MHD_HTTP_BAD_GATEWAY, "power %s of board '%s' failed: %s",
				      power_op_name(w->op), r->params[0], w->msg);
	else
		ret = api_reply_json(r, MHD_HTTP_OK,
				     json_pack("{s:s, s:s}", "board", r->params[0], "power",
					       power_op_name(w->op)));
	free(w);
	return ret;
}

static int parse_power(json_t *doc, enum power_op *ret)
{
	const char *action = json_string_value(json_object_get(doc, "action"));

	if (json_object_size(doc) != 1 || !action)
		return -EINVAL;
	if (!strcmp(action, "on"))
		*ret = POWER_ON;
	else if (!strcmp(action, "off"))
		*ret = POWER_OFF;
	else if (!strcmp(action, "cycle"))
		*ret = POWER_CYCLE;
	else
		return -EINVAL;
	return 0;
}

enum MHD_Result api_devices_power(struct api_request *r)
{
	char err[RESERVATION_ERR_MAX];
	struct power_wait *w;
	enum MHD_Result ret;
	json_t *doc;
	int e;

	if (r->pending)
		return power_result(r);
	if (!holders_board(r, "power", &ret) || !(doc = load_object(r, &ret)))
		return ret;
	w = calloc(1, sizeof(*w));
	e = w ? parse_power(doc, &w->op) : -ENOMEM;
	json_decref(doc);
	if (e == -EINVAL) {
		free(w);
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "give {\"action\": \"on\"}, \"off\" or \"cycle\"");
	}
	if (e < 0)
		return MHD_NO;
	e = reservations_power(api_deps_of(r)->reservations, r->params[0], w->op,
			       r->who.name, on_power_done, w, err);
	if (e < 0) {
		free(w);
		return api_reply_error(r, e == -ENOENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_CONFLICT,
				       "%s", err);
	}
	w->r = r;
	r->pending = w;
	r->pending_gone = power_gone;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

/* ---- POST /devices/{name}/boot ---- */

/* The job to run: the one given, or one written for the board's type. */
static int boot_text(struct api_request *r, struct board *b, json_t *doc, char **ret,
		     char err[BOOTJOB_ERR_MAX])
{
	static const char *const keys[] = { "job", "filename", "kernel", "ramdisk", "dtb",
					     "kernel_type", "append", "login", "password", NULL };
	struct bootjob_params p = { .holder = r->who.name };
	const char *key, *job;
	json_t *v;

	json_object_foreach(doc, key, v) {
		if (!strv_contains((char *const *)keys, key) || !json_is_string(v)) {
			snprintf(err, BOOTJOB_ERR_MAX, "'%s' is not a key of a boot (a string)", key);
			return -EINVAL;
		}
	}
	job = json_string_value(json_object_get(doc, "job"));
	if (job) {
		*ret = strdup(job);
		return *ret ? 0 : -ENOMEM;
	}
	p.kernel = json_string_value(json_object_get(doc, "kernel"));
	p.ramdisk = json_string_value(json_object_get(doc, "ramdisk"));
	p.dtb = json_string_value(json_object_get(doc, "dtb"));
	p.kernel_type = json_string_value(json_object_get(doc, "kernel_type"));
	p.append = json_string_value(json_object_get(doc, "append"));
	p.login = json_string_value(json_object_get(doc, "login"));
	p.password = json_string_value(json_object_get(doc, "password"));
	return bootjob_build(board_device(b), &p, ret, err);
}

static enum MHD_Result boot_refused(struct api_request *r, struct board *b, int err,
				    const struct diag *diag)
{
	if (err == -EINVAL)
		return api_reply_diag(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "invalid job", diag);
	if (err == -EBUSY)
		return api_reply_error(r, MHD_HTTP_CONFLICT, "board '%s' is running job %lld",
				       board_name(b), (long long)board_job(b));
	return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot boot board '%s': %s",
			       board_name(b), strerror(-err));
}

enum MHD_Result api_devices_boot(struct api_request *r)
{
	const struct api_deps *d = api_deps_of(r);
	struct diag diag = DIAG_INIT;
	char err[BOOTJOB_ERR_MAX], *text = NULL;
	const char *filename;
	enum MHD_Result ret;
	struct board *b;
	json_t *doc;
	int64_t id;
	int e;

	if (!(b = holders_board(r, "boot", &ret)) || !(doc = load_object(r, &ret)))
		return ret;
	if (!reservations_of_board(d->reservations, board_name(b))) {
		json_decref(doc);
		return api_reply_error(r, MHD_HTTP_CONFLICT,
				       "board '%s' is not reserved: reserve it first", board_name(b));
	}
	e = boot_text(r, b, doc, &text, err);
	filename = json_string_value(json_object_get(doc, "filename"));
	if (!e)
		e = sched_boot_session(d->sched, b, text, strlen(text),
				       filename ? filename : "boot.json", JOB_FORMAT_AUTO, r->who.name,
				       &id, &diag);
	else if (e == -EINVAL)
		diag_add(&diag, "boot", 0, "%s", err);
	json_decref(doc);
	free(text);
	ret = e ? boot_refused(r, b, e, &diag) :
		  api_reply_json(r, MHD_HTTP_CREATED,
				 json_pack("{s:I, s:s}", "id", (json_int_t)id, "board", board_name(b)));
	diag_release(&diag);
	return ret;
}

/* ---- POST /devices/{name}/telnet ---- */

/* The telnet port of held board @b (opened now if need be); false: @ret answered why not. */
static bool open_telnet(struct api_request *r, struct board *b, int *port, enum MHD_Result *ret)
{
	int err = reservations_telnet(api_deps_of(r)->reservations, board_name(b), port);

	if (err == -ENOENT)
		*ret = api_reply_error(r, MHD_HTTP_CONFLICT,
				       "board '%s' is not reserved: reserve it first", board_name(b));
	else if (err < 0)
		*ret = api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot open a telnet port to '%s': %s", board_name(b),
				       strerror(-err));
	return err >= 0;
}

enum MHD_Result api_devices_telnet(struct api_request *r)
{
	enum MHD_Result ret;
	struct board *b;
	int port;

	if (!(b = holders_board(r, "open a telnet port to", &ret)))
		return ret;
	if (!open_telnet(r, b, &port, &ret))
		return ret;
	return api_reply_json(r, MHD_HTTP_OK, json_pack("{s:s, s:s, s:i}", "board", board_name(b),
							"host", "127.0.0.1", "port", port));
}

/* ---- GET /devices/{name}/telnet: the port's client through another host ---- */

static const char watch_mark[] = "watch";

static void on_telnet_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls,
			       const char *extra_in, size_t extra_in_size, MHD_socket sock,
			       struct MHD_UpgradeResponseHandle *urh)
{
	static const char gone[] = "the reservation ended\n";
	struct api_request *r = con_cls;
	struct telnetd *t = reservations_telnetd(api_deps_of(r)->reservations, r->params[0]);
	void *u = api_upgraded_closer(r, urh);

	if (!u)
		return;
	if (!t) {	/* it ended since the handler ran */
		send(sock, gone, strlen(gone), MSG_NOSIGNAL | MSG_DONTWAIT);
		api_upgraded_close(sock, u);
	} else if (cls == watch_mark) {
		telnetd_watch(t, sock, api_upgraded_close, u);
	} else {
		telnetd_attach(t, sock, extra_in, extra_in_size, api_upgraded_close, u);
	}
}

enum MHD_Result api_devices_telnet_attach(struct api_request *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	struct board *b;
	int port;

	if (!(b = holders_board(r, "use the telnet port of", &ret)))
		return ret;
	if (!api_upgrade_asked(r, API_TELNET_UPGRADE))
		return api_reply_error(r, MHD_HTTP_UPGRADE_REQUIRED,
				       "this needs 'Connection: Upgrade' and 'Upgrade: "
				       API_TELNET_UPGRADE "' (use POST to open a telnet port)");
	if (!open_telnet(r, b, &port, &ret))
		return ret;
	resp = MHD_create_response_for_upgrade(on_telnet_upgraded,
					       api_query_bool(r, "watch") ? (void *)watch_mark :
									    NULL);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, API_TELNET_UPGRADE);
	return api_reply(r, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
}

void api_sessions_shutdown(const struct api_deps *d)
{
	/* the relay ports' watches first: their hosts tell the clients why */
	reservations_unwatch(d->reservations, "labd is stopping");
	viewers_close(d->viewers, NULL, "labd is stopping");
	reservations_power_unwait(d->reservations);
}
