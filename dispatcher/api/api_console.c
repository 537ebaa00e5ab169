// SPDX-License-Identifier: GPL-2.0-or-later
/* api_console.c -- GET /devices/{name}/console: the live console on an upgraded connection */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "core/log.h"
#include "session/viewer.h"
#include "session/viewer_proto.h"
#include "store/store.h"

/* What closing an upgraded connection needs: libmicrohttpd closes it, in its loop. */
struct upgraded {
	struct MHD_UpgradeResponseHandle *urh;
	struct api_listener *listener;
};

void api_upgraded_close(int fd, void *ud)
{
	struct upgraded *u = ud;

	MHD_upgrade_action(u->urh, MHD_UPGRADE_ACTION_CLOSE);
	api_listener_poke(u->listener);
	free(u);
}

void *api_upgraded_closer(struct api_request *r, struct MHD_UpgradeResponseHandle *urh)
{
	struct upgraded *u = calloc(1, sizeof(*u));

	if (!u) {
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		api_listener_poke(r->listener);
		return NULL;
	}
	u->urh = urh;
	u->listener = r->listener;
	return u;
}

/*
 * The 101 went out: the socket is the viewer's.  @con_cls is the request's
 * state, whose first member is the struct api_request (api.c), still alive:
 * libmicrohttpd ends the request only when the upgraded connection closes.
 */
static void on_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls,
			const char *extra_in, size_t extra_in_size, MHD_socket sock,
			struct MHD_UpgradeResponseHandle *urh)
{
	struct api_request *r = con_cls;
	struct board *b = lab_board(api_deps_of(r)->lab, r->params[0]);
	struct upgraded *u = api_upgraded_closer(r, urh);
	int64_t replay = VIEWER_DEFAULT_REPLAY;
	struct viewer_params p = {
		.board = b, .fd = sock, .wire = VIEWER_WIRE_FRAMED, .who = r->who.name,
		.role = r->who.role, .extra_in = extra_in, .extra_in_len = extra_in_size,
		.close = api_upgraded_close, .close_userdata = u,
	};

	if (!u)
		return;
	if (!b) {
		api_upgraded_close(sock, u);
		return;
	}
	api_query_int(r, "replay", 0, VIEWER_MAX_REPLAY, &replay);
	p.replay = (size_t)replay;
	viewer_attach(api_deps_of(r)->viewers, &p);
}

/* Whether the comma-separated header value @v lists @token ("keep-alive, Upgrade"). */
static bool header_has(const char *v, const char *token)
{
	size_t n = strlen(token);

	while (v && *v) {
		v += strspn(v, " \t,");
		if (!strncasecmp(v, token, n) && (!v[n] || strchr(" \t,", v[n])))
			return true;
		v += strcspn(v, ",");
	}
	return false;
}

bool api_upgrade_asked(struct api_request *r, const char *proto)
{
	const char *upgrade = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_UPGRADE);
	const char *connection = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONNECTION);

	return upgrade && !strcasecmp(upgrade, proto) && header_has(connection, "upgrade");
}

static enum MHD_Result reply_426(struct api_request *r)
{
	struct MHD_Response *resp = api_json_response(json_pack(
		"{s:s}", "error",
		"the console needs 'Connection: Upgrade' and 'Upgrade: " VIEWER_PROTO_UPGRADE
		"' (use labctl console)"));

	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, VIEWER_PROTO_UPGRADE);
	return api_reply(r, MHD_HTTP_UPGRADE_REQUIRED, resp);
}

/* A board of another host of the lab: its console through this host (api_tunnel.c). */
static bool board_elsewhere(struct api_request *r, enum MHD_Result *ret)
{
	struct device_record rec = { 0 };
	bool there;

	if (store_device_get(api_deps_of(r)->store, r->params[0], &rec) < 0)
		return false;
	there = api_elsewhere(r, rec.host, ret);
	device_record_release(&rec);
	return there;
}

enum MHD_Result api_console_attach(struct api_request *r)
{
	struct board *b = lab_board(api_deps_of(r)->lab, r->params[0]);
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int64_t replay;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (!b && board_elsewhere(r, &ret))
		return ret;
	if (!b)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no board '%s'", r->params[0]);
	if (api_query_int(r, "replay", 0, VIEWER_MAX_REPLAY, &replay) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'replay' must be a number of bytes from 0 to %d",
				       VIEWER_MAX_REPLAY);
	if (api_ws_wanted(r))
		return api_ws_console(r, b);
	if (!api_upgrade_asked(r, VIEWER_PROTO_UPGRADE))
		return reply_426(r);
	resp = MHD_create_response_for_upgrade(on_upgraded, NULL);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, VIEWER_PROTO_UPGRADE);
	return api_reply(r, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
}
