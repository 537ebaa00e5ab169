// SPDX-License-Identifier: GPL-2.0-or-later
/* telnet.c -- console driver "telnet": a ser2net telnet port, optionally with RFC 2217 baud */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cfg.h"
#include "console.h"
#include "diag.h"
#include "log.h"
#include "strbuf.h"
#include "tcp.h"

/* RFC 854 commands and the options labd cares about */
#define TN_SE 240
#define TN_BREAK 243
#define TN_SB 250
#define TN_WILL 251
#define TN_WONT 252
#define TN_DO 253
#define TN_DONT 254
#define TN_IAC 255
#define TN_OPT_BINARY 0
#define TN_OPT_ECHO 1
#define TN_OPT_SGA 3
#define TN_OPT_COMPORT 44		/* RFC 2217 */
#define COMPORT_SET_BAUDRATE 1
#define COMPORT_SERVER_REPLY 100	/* server replies are the command + 100 */

#define TELNET_SB_MAX 64		/* longer subnegotiations are skipped, not kept */
#define TELNET_DEFAULT_BAUD 115200

enum telnet_state {
	TELNET_DATA,
	TELNET_IAC,			/* after IAC */
	TELNET_OPTION,			/* after IAC WILL/WONT/DO/DONT */
	TELNET_SB,			/* inside IAC SB ... */
	TELNET_SB_IAC,			/* IAC inside a subnegotiation */
};

struct telnet {
	struct console_tcp tcp;
	bool rfc2217;
	uint32_t baud;
	/* protocol state of the current connection, kept across reads */
	enum telnet_state state;
	uint8_t cmd;			/* the WILL/WONT/DO/DONT waiting for its option */
	uint8_t sb[TELNET_SB_MAX];
	size_t sb_len;
	bool we[256];			/* options enabled on our side */
	bool they[256];			/* options enabled on the server's side */
	bool baud_pending;		/* SET-BAUDRATE not sent yet */
};

static int telnet_parse(struct console *c, const config_setting_t *settings,
			struct diag *diag)
{
	static const char *const known[] = { "driver", "host", "port", "rfc2217", "baud", NULL };
	struct telnet *t = console_priv(c);
	long long baud = TELNET_DEFAULT_BAUD;
	int r = cfg_check_keys(settings, known, diag);

	if (console_tcp_parse(&t->tcp, settings, diag) < 0)
		r = -EINVAL;
	if (cfg_get_bool(settings, "rfc2217", false, &t->rfc2217, diag) == -EINVAL)
		r = -EINVAL;
	switch (cfg_get_int(settings, "baud", false, 50, 4000000, &baud, diag)) {
	case -EINVAL:
		r = -EINVAL;
		break;
	case 0:
		if (!t->rfc2217)
			r = diag_add(diag, cfg_file(settings), cfg_line(settings),
				     "'baud' needs 'rfc2217 = true' (plain telnet cannot set it)");
		break;
	}
	t->baud = (uint32_t)baud;
	return r < 0 ? -EINVAL : 0;
}

static void telnet_send(struct console *c, uint8_t cmd, uint8_t opt)
{
	uint8_t msg[] = { TN_IAC, cmd, opt };

	console_write_raw(c, msg, sizeof(msg));
}

/* IAC SB COM-PORT-OPTION SET-BAUDRATE <4 bytes, big-endian, IAC doubled> IAC SE */
static void telnet_send_baud(struct console *c, struct telnet *t)
{
	uint8_t msg[4 + 2 * 4 + 2] = { TN_IAC, TN_SB, TN_OPT_COMPORT, COMPORT_SET_BAUDRATE };
	size_t n = 4;
	int shift;

	for (shift = 24; shift >= 0; shift -= 8) {
		msg[n++] = (uint8_t)(t->baud >> shift);
		if (msg[n - 1] == TN_IAC)
			msg[n++] = TN_IAC;
	}
	msg[n++] = TN_IAC;
	msg[n++] = TN_SE;
	console_write_raw(c, msg, n);
	t->baud_pending = false;
}

static bool telnet_we_may(const struct telnet *t, uint8_t opt)
{
	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA || (opt == TN_OPT_COMPORT && t->rfc2217);
}

static bool telnet_they_may(uint8_t opt)
{
	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA || opt == TN_OPT_ECHO;
}

/*
 * Answer a request to change an option; a request for the state an option is
 * already in is not answered (RFC 854), so negotiations cannot loop.
 */
static void telnet_negotiate(struct console *c, struct telnet *t, uint8_t cmd, uint8_t opt)
{
	switch (cmd) {
	case TN_DO:
		if (!t->we[opt]) {
			t->we[opt] = telnet_we_may(t, opt);
			telnet_send(c, t->we[opt] ? TN_WILL : TN_WONT, opt);
		}
		if (opt == TN_OPT_COMPORT && t->we[opt] && t->baud_pending)
			telnet_send_baud(c, t);
		break;
	case TN_DONT:
		if (t->we[opt]) {
			t->we[opt] = false;
			telnet_send(c, TN_WONT, opt);
		}
		break;
	case TN_WILL:
		if (!t->they[opt]) {
			t->they[opt] = telnet_they_may(opt);
			telnet_send(c, t->they[opt] ? TN_DO : TN_DONT, opt);
		}
		break;
	case TN_WONT:
		if (t->they[opt]) {
			t->they[opt] = false;
			telnet_send(c, TN_DONT, opt);
		}
		break;
	}
}

/* A complete subnegotiation: only the RFC 2217 baud rate reply is of interest. */
static void telnet_subnegotiation(struct console *c, struct telnet *t)
{
	const char *name = console_ctx(c)->device_name;
	const uint8_t *sb = t->sb;
	uint32_t baud;

	if (t->sb_len < 6 || sb[0] != TN_OPT_COMPORT ||
	    sb[1] != COMPORT_SERVER_REPLY + COMPORT_SET_BAUDRATE)
		return;
	baud = (uint32_t)sb[2] << 24 | (uint32_t)sb[3] << 16 | (uint32_t)sb[4] << 8 | sb[5];

	if (baud == t->baud)
		log_debug("console '%s': server set the baud rate to %u", name, baud);
	else
		log_warning("console '%s': server set the baud rate to %u instead of %u", name,
			    baud, t->baud);
}

static void telnet_sb_add(struct telnet *t, uint8_t b)
{
	if (t->sb_len < sizeof(t->sb))
		t->sb[t->sb_len++] = b;
}

/* The byte after an IAC; returns it when it is data (IAC IAC), else -1. */
static int telnet_command(struct telnet *t, uint8_t b)
{
	t->state = TELNET_DATA;
	switch (b) {
	case TN_IAC:
		return TN_IAC;
	case TN_WILL:
	case TN_WONT:
	case TN_DO:
	case TN_DONT:
		t->cmd = b;
		t->state = TELNET_OPTION;
		break;
	case TN_SB:
		t->sb_len = 0;
		t->state = TELNET_SB;
		break;
	default:
		break;		/* NOP, GA, DM, BREAK, ...: nothing to do */
	}
	return -1;
}

/* Feed one received byte to the parser; returns it when it is data, else -1. */
static int telnet_feed(struct console *c, struct telnet *t, uint8_t b)
{
	switch (t->state) {
	case TELNET_DATA:
		if (b != TN_IAC)
			return b;
		t->state = TELNET_IAC;
		return -1;
	case TELNET_IAC:
		return telnet_command(t, b);
	case TELNET_OPTION:
		t->state = TELNET_DATA;
		telnet_negotiate(c, t, t->cmd, b);
		return -1;
	case TELNET_SB:
		if (b == TN_IAC)
			t->state = TELNET_SB_IAC;
		else
			telnet_sb_add(t, b);
		return -1;
	case TELNET_SB_IAC:
		t->state = TELNET_SB;
		if (b == TN_IAC) {
			telnet_sb_add(t, b);
			return -1;
		}
		if (b == TN_SE) {
			t->state = TELNET_DATA;
			telnet_subnegotiation(c, t);
			return -1;
		}
		/* an unterminated subnegotiation: drop it, take the command */
		return telnet_command(t, b);
	}
	return -1;
}

static size_t telnet_decode(struct console *c, uint8_t *buf, size_t len)
{
	struct telnet *t = console_priv(c);
	size_t i, out = 0;

	for (i = 0; i < len; i++) {
		int d = telnet_feed(c, t, buf[i]);

		if (d >= 0)
			buf[out++] = (uint8_t)d;
	}
	return out;
}

/* Double every 0xFF so the server does not take it for IAC. */
static int telnet_encode(struct console *c, const uint8_t *data, size_t len,
			 struct strbuf *out)
{
	const uint8_t *iac;
	int r;

	while ((iac = memchr(data, TN_IAC, len))) {
		size_t n = (size_t)(iac - data) + 1;

		r = strbuf_add(out, data, n);
		if (r < 0)
			return r;
		r = strbuf_addch(out, TN_IAC);
		if (r < 0)
			return r;
		data += n;
		len -= n;
	}
	return strbuf_add(out, data, len);
}

static int telnet_open(struct console *c, int *ret_fd)
{
	struct telnet *t = console_priv(c);
	int r;

	r = console_tcp_open(c, &t->tcp, ret_fd);
	if (r < 0 && r != -EINPROGRESS)
		return r;
	t->state = TELNET_DATA;
	t->sb_len = 0;
	memset(t->we, 0, sizeof(t->we));
	memset(t->they, 0, sizeof(t->they));
	t->baud_pending = false;
	if (t->rfc2217) {
		/* ser2net asks DO COM-PORT-OPTION itself; the baud rate follows its DO */
		t->we[TN_OPT_COMPORT] = true;
		t->baud_pending = true;
		telnet_send(c, TN_WILL, TN_OPT_COMPORT);
	}
	return r;
}

static int telnet_connected(struct console *c, int fd)
{
	struct telnet *t = console_priv(c);

	return console_tcp_connected(c, &t->tcp, fd);
}

static int telnet_send_break(struct console *c, int fd)
{
	static const uint8_t brk[] = { TN_IAC, TN_BREAK };

	return console_write_raw(c, brk, sizeof(brk));
}

static void telnet_release(struct console *c)
{
	struct telnet *t = console_priv(c);

	console_tcp_release(&t->tcp);
}

const struct console_driver console_telnet_driver = {
	.name = "telnet",
	.priv_size = sizeof(struct telnet),
	.parse = telnet_parse,
	.open = telnet_open,
	.connected = telnet_connected,
	.decode = telnet_decode,
	.encode = telnet_encode,
	.send_break = telnet_send_break,
	.release = telnet_release,
};
