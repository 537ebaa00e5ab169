// SPDX-License-Identifier: GPL-2.0-or-later
/* telnet.c -- console driver "telnet": a ser2net telnet port, optionally with RFC 2217 baud */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "drivers/console.h"
#include "drivers/console/tcp.h"
#include "drivers/telnet_iac.h"

#define COMPORT_SET_BAUDRATE 1
#define COMPORT_SERVER_REPLY 100	/* server replies are the command + 100 */

#define TELNET_DEFAULT_BAUD 115200

struct telnet {
	struct console_tcp tcp;
	struct console *c;
	bool rfc2217;
	uint32_t baud;
	struct telnet_iac iac;		/* protocol state of the current connection */
	bool baud_pending;		/* SET-BAUDRATE not sent yet */
};

static const struct telnet_iac_ops telnet_iac_ops;

static int telnet_parse(struct console *c, const config_setting_t *settings,
			struct diag *diag)
{
	static const char *const known[] = { "driver", "host", "port", "rfc2217", "baud", NULL };
	struct telnet *t = console_priv(c);
	long long baud = TELNET_DEFAULT_BAUD;
	int r = cfg_check_keys(settings, known, diag);

	t->c = c;
	telnet_iac_init(&t->iac, &telnet_iac_ops, t);
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

static void telnet_send(const uint8_t *buf, size_t len, void *ud)
{
	struct telnet *t = ud;

	console_write_raw(t->c, buf, len);
}

static bool telnet_we_may(uint8_t opt, void *ud)
{
	const struct telnet *t = ud;

	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA || (opt == TN_OPT_COMPORT && t->rfc2217);
}

static bool telnet_they_may(uint8_t opt, void *ud)
{
	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA || opt == TN_OPT_ECHO;
}

/* The baud rate follows the server's DO COM-PORT-OPTION. */
static void telnet_negotiated(uint8_t cmd, uint8_t opt, void *ud)
{
	struct telnet *t = ud;

	if (cmd == TN_DO && opt == TN_OPT_COMPORT && t->iac.we[opt] && t->baud_pending)
		telnet_send_baud(t->c, t);
}

/* A complete subnegotiation: only the RFC 2217 baud rate reply is of interest. */
static void telnet_subnegotiation(const uint8_t *sb, size_t len, void *ud)
{
	struct telnet *t = ud;
	const char *name = console_ctx(t->c)->device_name;
	uint32_t baud;

	if (len < 6 || sb[0] != TN_OPT_COMPORT ||
	    sb[1] != COMPORT_SERVER_REPLY + COMPORT_SET_BAUDRATE)
		return;
	baud = (uint32_t)sb[2] << 24 | (uint32_t)sb[3] << 16 | (uint32_t)sb[4] << 8 | sb[5];

	if (baud == t->baud)
		log_debug("console '%s': server set the baud rate to %u", name, baud);
	else
		log_warning("console '%s': server set the baud rate to %u instead of %u", name,
			    baud, t->baud);
}

static const struct telnet_iac_ops telnet_iac_ops = {
	.send = telnet_send,
	.we_may = telnet_we_may,
	.they_may = telnet_they_may,
	.negotiated = telnet_negotiated,
	.subnegotiation = telnet_subnegotiation,
};

static size_t telnet_decode(struct console *c, uint8_t *buf, size_t len)
{
	struct telnet *t = console_priv(c);

	return telnet_iac_decode(&t->iac, buf, len);
}

/* Double every 0xFF so the server does not take it for IAC. */
static int telnet_encode(struct console *c, const uint8_t *data, size_t len,
			 struct strbuf *out)
{
	return telnet_iac_encode(data, len, out);
}

static int telnet_open(struct console *c, int *ret_fd)
{
	struct telnet *t = console_priv(c);
	int r;

	r = console_tcp_open(c, &t->tcp, ret_fd);
	if (r < 0 && r != -EINPROGRESS)
		return r;
	telnet_iac_reset(&t->iac);
	t->baud_pending = false;
	if (t->rfc2217) {
		/* ser2net asks DO COM-PORT-OPTION itself; the baud rate follows its DO */
		t->baud_pending = true;
		telnet_iac_offer(&t->iac, TN_WILL, TN_OPT_COMPORT);
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
