// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_console.c -- labctl console: the terminal on a board's live console, through labd */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/version.h"
#include "labctl.h"
#include "session/viewer_proto.h"

/*
 * The connection: libcurl connects (CURLOPT_CONNECT_ONLY: TCP, TLS or a
 * Unix socket, as for every request), labctl sends the upgrade request
 * itself and reads the answer's status line and headers (the HTTP it needs
 * and no more: libcurl 7.88 has no API for an upgrade), then both sides
 * exchange viewer_proto.h frames.  See doc/console.md.
 */

#define CONSOLE_MAX_HEADER (16 * 1024)	/* bytes of the answer's head */
#define CONSOLE_MAX_ERROR (64 * 1024)	/* bytes of an error answer's body */
#define CONSOLE_CHUNK 4096

static volatile sig_atomic_t stop_signal;

struct console {
	struct labctl *lc;
	CURL *curl;
	int fd;			/* the socket, for poll() */
	struct strbuf in;	/* from labd: frames not complete yet */
	struct strbuf out;	/* to labd: frames not sent yet */
	bool line_start;	/* the next key starts a line: escapes work */
	bool tilde;		/* a '~' started an escape */
	bool raw;		/* the terminal is in raw mode */
	struct termios saved;
};

/* ---- the connection ---- */

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR && !stop_signal);
	return r;
}

static int send_all(struct console *c, const char *buf, size_t len)
{
	CURLcode res;
	size_t n;

	while (len) {
		res = curl_easy_send(c->curl, buf, len, &n);
		if (res == CURLE_AGAIN) {
			if (wait_fd(c->fd, POLLOUT, LABCTL_TIMEOUT * 1000) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (res != CURLE_OK)
			return -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Receive what is there into @sb: >0 bytes, 0 at the end, -EAGAIN, -EIO. */
static ssize_t recv_some(struct console *c, struct strbuf *sb)
{
	char buf[CONSOLE_CHUNK];
	CURLcode res;
	size_t n = 0;

	res = curl_easy_recv(c->curl, buf, sizeof(buf), &n);
	if (res == CURLE_AGAIN)
		return -EAGAIN;
	if (res != CURLE_OK)
		return -EIO;
	if (n && strbuf_add(sb, buf, n) < 0)
		return -ENOMEM;
	return (ssize_t)n;
}

/* The request line and headers of the upgrade, for @url. */
static int upgrade_request(struct console *c, const char *url, struct strbuf *req)
{
	char *path = NULL, *query = NULL, *host = NULL, *port = NULL;
	CURLU *u = curl_url();
	int err = -EINVAL;

	if (u && !curl_url_set(u, CURLUPART_URL, url, 0) &&
	    !curl_url_get(u, CURLUPART_PATH, &path, 0) &&
	    !curl_url_get(u, CURLUPART_HOST, &host, 0)) {
		curl_url_get(u, CURLUPART_QUERY, &query, 0);
		curl_url_get(u, CURLUPART_PORT, &port, 0);
		strbuf_addf(req, "GET %s%s%s HTTP/1.1\r\nHost: %s%s%s\r\n", path, query ? "?" : "",
			    query ? query : "", host, port ? ":" : "", port ? port : "");
		strbuf_addf(req, "Connection: Upgrade\r\nUpgrade: %s\r\n", VIEWER_PROTO_UPGRADE);
		strbuf_addf(req, "User-Agent: labctl/%s\r\n", LABD_VERSION);
		if (c->lc->token)
			strbuf_addf(req, "Authorization: Bearer %s\r\n", c->lc->token);
		err = strbuf_addstr(req, "\r\n");
	}
	curl_free(path);
	curl_free(query);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return err;
}

/* The value of header @name in the head @h ("Content-Length"), or NULL. */
static const char *header_value(const char *h, const char *name)
{
	size_t n = strlen(name);

	for (h = strstr(h, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
		if (!strncasecmp(h + 2, name, n) && h[2 + n] == ':')
			return h + 3 + n + strspn(h + 3 + n, " \t");
	}
	return NULL;
}

/* A refusal (401, 403, 404 ...): read its JSON body and print it. */
static int report_refusal(struct console *c, long status, size_t head_len)
{
	const char *cl = header_value(c->in.buf, "Content-Length");
	size_t want = cl ? strtoul(cl, NULL, 10) : 0;
	struct lc_response resp = { .status = status, .body = STRBUF_INIT };
	int ret;

	if (want > CONSOLE_MAX_ERROR)
		want = CONSOLE_MAX_ERROR;
	while (c->in.len < head_len + want && wait_fd(c->fd, POLLIN, LABCTL_TIMEOUT * 1000) > 0)
		if (recv_some(c, &c->in) == 0)
			break;
	strbuf_add(&resp.body, c->in.buf + head_len, c->in.len - head_len);
	ret = lc_report_error(&resp);
	lc_response_release(&resp);
	return ret;
}

/* Read the answer's head; 0 when the upgrade took place (the rest of c->in is frames). */
static int read_answer(struct console *c)
{
	char *end = NULL;
	long status = 0;
	size_t head;

	while (!(end = c->in.len ? strstr(c->in.buf, "\r\n\r\n") : NULL)) {
		if (c->in.len > CONSOLE_MAX_HEADER ||
		    wait_fd(c->fd, POLLIN, LABCTL_TIMEOUT * 1000) <= 0)
			return -EPROTO;
		if (recv_some(c, &c->in) == 0)
			return -EPROTO;
	}
	head = (size_t)(end - c->in.buf) + 4;
	if (sscanf(c->in.buf, "HTTP/%*s %ld", &status) != 1)
		return -EPROTO;
	if (status != 101)
		return report_refusal(c, status, head);
	strbuf_consume(&c->in, head);
	return 0;
}

static int console_connect(struct console *c, const char *board, long replay)
{
	struct labctl *lc = c->lc;
	struct strbuf url = STRBUF_INIT, req = STRBUF_INIT;
	char *esc = lc_escape(lc, board), errbuf[CURL_ERROR_SIZE] = "";
	curl_socket_t sock = CURL_SOCKET_BAD;
	int ret = LABCTL_ERROR;

	strbuf_addf(&url, "%s/devices/%s/console", lc->base, esc ? esc : board);
	if (replay >= 0)
		strbuf_addf(&url, "?replay=%ld", replay);
	free(esc);
	curl_easy_reset(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_URL, url.buf);
	if (lc->unix_path)
		curl_easy_setopt(c->curl, CURLOPT_UNIX_SOCKET_PATH, lc->unix_path);
	curl_easy_setopt(c->curl, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, LABCTL_CONNECT_TIMEOUT);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	if (curl_easy_perform(c->curl) != CURLE_OK ||
	    curl_easy_getinfo(c->curl, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK ||
	    sock == CURL_SOCKET_BAD) {
		fprintf(stderr, "labctl: cannot reach labd at %s: %s\n", lc->url,
			*errbuf ? errbuf : "no connection");
		goto out;
	}
	c->fd = (int)sock;
	if (upgrade_request(c, url.buf, &req) < 0 || send_all(c, req.buf, req.len) < 0) {
		fprintf(stderr, "labctl: cannot send to labd at %s\n", lc->url);
		goto out;
	}
	ret = read_answer(c);
	if (ret < 0) {
		fprintf(stderr, "labctl: labd at %s did not open the console\n", lc->url);
		ret = LABCTL_ERROR;
	}
out:
	strbuf_release(&url);
	strbuf_release(&req);
	return ret;
}

/* ---- the terminal ---- */

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* Raw mode: every key goes to the board as typed; restored by restore_terminal(). */
static void raw_terminal(struct console *c)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct termios raw;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &c->saved) < 0)
		return;
	raw = c->saved;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0)
		c->raw = true;
}

static void restore_terminal(struct console *c)
{
	if (c->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &c->saved);
	c->raw = false;
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
}

static void put(const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(STDOUT_FILENO, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* "[labd] message" on a line of its own. */
static void say(const char *who, const char *msg, size_t len)
{
	char head[16];

	snprintf(head, sizeof(head), "\r\n[%s] ", who);
	put(head, strlen(head));
	put(msg, len);
	put("\r\n", 2);
}

static void tell(const char *msg)
{
	say("labctl", msg, strlen(msg));
}

static const char help[] =
	"escapes, at the start of a line: ~. detach  ~~ send a ~  ~b send a break  "
	"~p power-cycle the board (its holder)  ~? this help";

/* ---- keys: escapes at the start of a line, the rest to the board ---- */

enum keys_result { KEYS_GO_ON, KEYS_DETACH };

static void frame(struct console *c, char type, const void *data, size_t len)
{
	viewer_frame_add(&c->out, type, data, len);
}

static enum keys_result escape(struct console *c, char k, struct strbuf *data)
{
	switch (k) {
	case '.':
		return KEYS_DETACH;
	case '~':
		strbuf_addch(data, '~');
		c->line_start = false;
		break;
	case 'b':
	case 'p':
		frame(c, VIEWER_FRAME_DATA, data->buf, data->len);
		strbuf_reset(data);
		frame(c, k == 'b' ? VIEWER_FRAME_BREAK : VIEWER_FRAME_POWER_CYCLE, NULL, 0);
		break;
	case '?':
		tell(help);
		break;
	default:
		strbuf_addch(data, '~');
		strbuf_addch(data, k);
		c->line_start = k == '\r' || k == '\n';
		break;
	}
	return KEYS_GO_ON;
}

static enum keys_result keys(struct console *c, const char *buf, size_t len)
{
	struct strbuf data = STRBUF_INIT;
	enum keys_result r = KEYS_GO_ON;
	size_t i;

	for (i = 0; i < len && r == KEYS_GO_ON; i++) {
		if (c->tilde) {
			c->tilde = false;
			r = escape(c, buf[i], &data);
		} else if (c->line_start && buf[i] == '~') {
			c->tilde = true;
		} else {
			strbuf_addch(&data, buf[i]);
			c->line_start = buf[i] == '\r' || buf[i] == '\n';
		}
	}
	if (data.len)
		frame(c, VIEWER_FRAME_DATA, data.buf, data.len);
	strbuf_release(&data);
	return r;
}

/* ---- the session ---- */

static void show_frames(struct console *c)
{
	const uint8_t *payload;
	size_t n, plen;
	char type;

	while ((n = viewer_frame_next((const uint8_t *)c->in.buf, c->in.len, &type, &payload,
				      &plen))) {
		if (type == VIEWER_FRAME_DATA)
			put((const char *)payload, plen);
		else if (type == VIEWER_FRAME_NOTICE)
			say("labd", (const char *)payload, plen);
		strbuf_consume(&c->in, n);
	}
}

/* Send what the socket takes now. */
static int flush_out(struct console *c)
{
	CURLcode res;
	size_t n;

	while (c->out.len) {
		res = curl_easy_send(c->curl, c->out.buf, c->out.len, &n);
		if (res == CURLE_AGAIN)
			return 0;
		if (res != CURLE_OK)
			return -EIO;
		strbuf_consume(&c->out, n);
	}
	return 0;
}

/* labd's side: 0, or -EPIPE when labd closed the connection. */
static int from_labd(struct console *c)
{
	ssize_t n;

	while ((n = recv_some(c, &c->in)) > 0)
		show_frames(c);
	return n == 0 || n == -EIO ? -EPIPE : 0;
}

static int session(struct console *c)
{
	struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = c->fd } };
	char buf[CONSOLE_CHUNK];
	ssize_t n;

	show_frames(c);		/* what came with the answer */
	while (!stop_signal) {
		p[1].events = POLLIN | (c->out.len ? POLLOUT : 0);
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return LABCTL_ERROR;
		}
		if (p[1].revents && (from_labd(c) < 0 || flush_out(c) < 0)) {
			tell("connection closed by labd");
			return LABCTL_FAILED;
		}
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || keys(c, buf, (size_t)n) == KEYS_DETACH)
			break;
		if (flush_out(c) < 0)
			return LABCTL_FAILED;
	}
	flush_out(c);
	tell("detached");
	return stop_signal ? LABCTL_INTERRUPTED : LABCTL_OK;
}

int lc_console(struct labctl *lc, const char *board, long replay)
{
	struct console c = { .lc = lc, .curl = lc->curl, .fd = -1, .line_start = true };
	char hello[256];
	int ret;

	strbuf_init(&c.in);
	strbuf_init(&c.out);
	stop_signal = 0;
	ret = console_connect(&c, board, replay);
	if (!ret) {
		raw_terminal(&c);
		snprintf(hello, sizeof(hello), "console of '%s': ~. detaches, ~? lists the escapes",
			 board);
		tell(hello);
		ret = session(&c);
		restore_terminal(&c);
	}
	strbuf_release(&c.in);
	strbuf_release(&c.out);
	curl_easy_reset(lc->curl);	/* the connection goes with the next request */
	return ret;
}
