// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_ws.c -- the console in a browser: GET /devices/{name}/console over a WebSocket
 *
 * A browser cannot speak labctl's upgraded protocol (viewer_proto.h), but it
 * can open a WebSocket.  After libmicrohttpd's upgrade, a bridge carries the
 * same frames inside binary WebSocket messages: the browser's bytes go to a
 * viewer (viewer.c) through a socket pair, the viewer's frames come back as
 * messages.  The viewer is thus exactly `labctl console`'s: the shared
 * stream, its scrollback, read-only for anyone but the holder and admins,
 * every key logged with who typed it.
 *
 * The WebSocket framing is libwslay's (RFC 6455); the handshake's accept key
 * is OpenSSL's SHA-1 and base64.  A browser cannot set an Authorization
 * header on a WebSocket, so the token may come as a second subprotocol,
 * "labd-token.<token>" (api_auth.c), never in the URL.
 *
 * Output waits in wslay's queue up to WS_MAX_QUEUED bytes; beyond that the
 * bridge stops reading the viewer, whose own limit then drops a browser
 * that does not keep up, as it drops any slow viewer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <wslay/wslay.h>

#include "api/api_internal.h"
#include "board/board.h"
#include "board/lab.h"
#include "core/log.h"
#include "core/loop.h"
#include "session/viewer.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"	/* RFC 6455, 1.3 */
#define WS_MAX_QUEUED (256 * 1024)	/* output bytes queued in wslay before pausing */
#define WS_READ_CHUNK (16 * 1024)
#define WS_MAX_MESSAGE (64 * 1024)	/* of a browser's message (typed keys) */
#define WS_MAX_TO_VIEWER (256 * 1024)

struct ws_bridge {
	struct api_ws *set;
	struct ws_bridge *prev, *next;
	struct api_listener *listener;
	struct MHD_UpgradeResponseHandle *urh;
	wslay_event_context_ptr ctx;
	int sock;			/* the upgraded connection (libmicrohttpd's) */
	int pair;			/* our end of the viewer's socket pair */
	struct loop_source *sock_io, *pair_io;
	struct strbuf extra;		/* bytes read with the HTTP request, fed to wslay first */
	struct strbuf to_viewer;	/* frames from the browser, not yet written to the viewer */
	bool pair_eof;
};

struct api_ws {
	const struct api_deps *d;
	struct ws_bridge *bridges;
};

static void bridge_free(struct ws_bridge *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else if (w->set->bridges == w)
		w->set->bridges = w->next;
	if (w->next)
		w->next->prev = w->prev;
	loop_source_free(w->sock_io);
	loop_source_free(w->pair_io);
	if (w->pair >= 0)
		close(w->pair);	/* the viewer sees the end and frees itself */
	if (w->ctx)
		wslay_event_context_free(w->ctx);
	MHD_upgrade_action(w->urh, MHD_UPGRADE_ACTION_CLOSE);
	api_listener_poke(w->listener);
	strbuf_release(&w->extra);
	strbuf_release(&w->to_viewer);
	free(w);
}

/* ---- wslay's callbacks: non-blocking I/O on the upgraded socket ---- */

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
		       void *ud)
{
	struct ws_bridge *w = ud;
	ssize_t n;

	if (w->extra.len) {
		n = (ssize_t)(len < w->extra.len ? len : w->extra.len);
		memcpy(buf, w->extra.buf, (size_t)n);
		strbuf_consume(&w->extra, (size_t)n);
		return n;
	}
	n = recv(w->sock, buf, len, 0);
	if (n > 0)
		return n;
	wslay_event_set_error(ctx, n < 0 && (errno == EAGAIN || errno == EINTR)
					   ? WSLAY_ERR_WOULDBLOCK
					   : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
		       void *ud)
{
	struct ws_bridge *w = ud;
	ssize_t n = send(w->sock, data, len, MSG_NOSIGNAL);

	if (n >= 0)
		return n;
	wslay_event_set_error(ctx, errno == EAGAIN || errno == EINTR ? WSLAY_ERR_WOULDBLOCK
								     : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

/* A message from the browser: viewer_proto.h frames, passed on as they are. */
static void ws_on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
		      void *ud)
{
	struct ws_bridge *w = ud;

	if (arg->opcode != WSLAY_BINARY_FRAME && arg->opcode != WSLAY_TEXT_FRAME)
		return;	/* pings are answered by wslay, a close ends the loop below */
	if (w->to_viewer.len + arg->msg_length > WS_MAX_TO_VIEWER ||
	    strbuf_add(&w->to_viewer, arg->msg, arg->msg_length) < 0)
		wslay_event_shutdown_read(ctx);	/* a browser flooding its own board's input */
}

/* ---- moving bytes ---- */

/* Events wanted on both fds, from what is pending; false when the session is over. */
static bool bridge_update(struct ws_bridge *w)
{
	uint32_t sock_ev = 0, pair_ev = 0;

	if (!wslay_event_want_read(w->ctx) && !wslay_event_want_write(w->ctx))
		return false;
	if (w->pair_eof && !wslay_event_want_write(w->ctx))
		return false;
	if (wslay_event_want_read(w->ctx))
		sock_ev |= EPOLLIN;
	if (wslay_event_want_write(w->ctx))
		sock_ev |= EPOLLOUT;
	if (!w->pair_eof && wslay_event_get_queued_msg_length(w->ctx) < WS_MAX_QUEUED)
		pair_ev |= EPOLLIN;
	if (w->to_viewer.len)
		pair_ev |= EPOLLOUT;
	loop_io_set_events(w->sock_io, sock_ev);
	loop_io_set_events(w->pair_io, pair_ev);
	return true;
}

static void bridge_done(struct ws_bridge *w)
{
	if (!bridge_update(w))
		bridge_free(w);
}

static int on_sock(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct ws_bridge *w = ud;

	if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) && wslay_event_recv(w->ctx) != 0) {
		bridge_free(w);
		return 0;
	}
	if ((revents & EPOLLOUT) && wslay_event_send(w->ctx) != 0) {
		bridge_free(w);
		return 0;
	}
	bridge_done(w);
	return 0;
}

/* The viewer's frames become one binary message per read. */
static void pair_read(struct ws_bridge *w)
{
	uint8_t buf[WS_READ_CHUNK];
	ssize_t n = read(w->pair, buf, sizeof(buf));
	struct wslay_event_msg msg = { WSLAY_BINARY_FRAME, buf, 0 };

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		w->pair_eof = true;	/* the viewer was closed (labd stops, or dropped it) */
		wslay_event_queue_close(w->ctx, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
		return;
	}
	if (n < 0)
		return;
	msg.msg_length = (size_t)n;
	if (wslay_event_queue_msg(w->ctx, &msg) == 0)
		wslay_event_send(w->ctx);
}

static void pair_write(struct ws_bridge *w)
{
	ssize_t n = write(w->pair, w->to_viewer.buf, w->to_viewer.len);

	if (n > 0)
		strbuf_consume(&w->to_viewer, (size_t)n);
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		w->pair_eof = true;
}

static int on_pair(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct ws_bridge *w = ud;

	if (revents & EPOLLOUT)
		pair_write(w);
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
		pair_read(w);
	bridge_done(w);
	return 0;
}

/* ---- the upgrade ---- */

static int bridge_start(struct ws_bridge *w, struct api_request *r, struct board *b)
{
	static const struct wslay_event_callbacks cbs = {
		.recv_callback = ws_recv, .send_callback = ws_send, .on_msg_recv_callback = ws_on_msg,
	};
	struct loop *loop = api_deps_of(r)->loop;
	struct viewer_params p = {
		.board = b, .wire = VIEWER_WIRE_FRAMED, .who = r->who.name, .role = r->who.role,
		.replay = VIEWER_DEFAULT_REPLAY,
	};
	int64_t replay;
	int sv[2], err;

	if (wslay_event_context_server_init(&w->ctx, &cbs, w))
		return -ENOMEM;
	wslay_event_config_set_max_recv_msg_length(w->ctx, WS_MAX_MESSAGE);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	w->pair = sv[0];
	err = loop_add_io(loop, &w->sock_io, w->sock, EPOLLIN, on_sock, w);
	if (!err)
		err = loop_add_io(loop, &w->pair_io, w->pair, EPOLLIN, on_pair, w);
	if (err < 0) {
		close(sv[1]);
		return err;
	}
	loop_source_set_description(w->sock_io, "api:console-ws");
	loop_source_set_description(w->pair_io, "api:console-ws");
	if (api_query_int(r, "replay", 0, VIEWER_MAX_REPLAY, &replay) > 0)
		p.replay = (size_t)replay;
	p.fd = sv[1];
	return viewer_attach(api_deps_of(r)->viewers, &p);
}

static void on_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls,
			const char *extra_in, size_t extra_in_size, MHD_socket sock,
			struct MHD_UpgradeResponseHandle *urh)
{
	struct api_request *r = con_cls;	/* still alive: see api_console.c */
	struct board *b = lab_board(api_deps_of(r)->lab, r->params[0]);
	struct api_ws *set = cls;
	struct ws_bridge *w = calloc(1, sizeof(*w));

	if (!w || !b) {
		free(w);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		api_listener_poke(r->listener);
		return;
	}
	w->set = set;
	w->listener = r->listener;
	w->urh = urh;
	w->sock = sock;
	w->pair = -1;
	strbuf_init(&w->extra);
	strbuf_init(&w->to_viewer);
	w->next = set->bridges;
	if (set->bridges)
		set->bridges->prev = w;
	set->bridges = w;
	if (strbuf_add(&w->extra, extra_in, extra_in_size) < 0 || bridge_start(w, r, b) < 0) {
		log_warning("api: cannot start a browser console of '%s'", board_name(b));
		bridge_free(w);
		return;
	}
	bridge_done(w);
}

/* base64(SHA-1(key GUID)), RFC 6455 4.2.2; false for a key that is not one. */
static bool accept_key(const char *key, char out[32])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char buf[128];
	int n;

	if (!key || strlen(key) != 24)	/* 16 bytes in base64 */
		return false;
	n = snprintf(buf, sizeof(buf), "%s%s", key, WS_GUID);
	if (!EVP_Digest(buf, (size_t)n, md, &mdlen, EVP_sha1(), NULL) || mdlen != 20)
		return false;
	EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen);	/* 28 characters and NUL */
	return true;
}

bool api_ws_wanted(struct api_request *r)
{
	const char *up = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_UPGRADE);

	return up && !strcasecmp(up, "websocket");
}

enum MHD_Result api_ws_console(struct api_request *r, struct board *b)
{
	const char *key = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						      "Sec-WebSocket-Key");
	const char *version = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							  "Sec-WebSocket-Version");
	const char *proto = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							"Sec-WebSocket-Protocol");
	struct MHD_Response *resp;
	char accept[32];

	if (!version || strcmp(version, "13") || !accept_key(key, accept))
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "a WebSocket needs version 13 and a Sec-WebSocket-Key");
	resp = MHD_create_response_for_upgrade(on_upgraded, api_ws_of(r));
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(resp, "Sec-WebSocket-Accept", accept);
	if (proto && strstr(proto, "labd-console"))
		MHD_add_response_header(resp, "Sec-WebSocket-Protocol", "labd-console");
	return api_reply(r, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
}

int api_ws_new(const struct api_deps *d, struct api_ws **ret)
{
	*ret = calloc(1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	(*ret)->d = d;
	return 0;
}

void api_ws_shutdown(struct api_ws *set)
{
	while (set && set->bridges)
		bridge_free(set->bridges);
}

struct api_ws *api_ws_free(struct api_ws *set)
{
	api_ws_shutdown(set);
	free(set);
	return NULL;
}
