// SPDX-License-Identifier: GPL-2.0-or-later
/* telnet_iac.c -- the telnet protocol state machine: commands, negotiation, IAC doubling */
#include "drivers/telnet_iac.h"

#include <string.h>

#include "core/strbuf.h"

void telnet_iac_init(struct telnet_iac *t, const struct telnet_iac_ops *ops, void *userdata)
{
	memset(t, 0, sizeof(*t));
	t->ops = ops;
	t->userdata = userdata;
}

void telnet_iac_reset(struct telnet_iac *t)
{
	t->state = TELNET_DATA;
	t->sb_len = 0;
	memset(t->we, 0, sizeof(t->we));
	memset(t->they, 0, sizeof(t->they));
}

static void send_cmd(struct telnet_iac *t, uint8_t cmd, uint8_t opt)
{
	uint8_t msg[] = { TN_IAC, cmd, opt };

	t->ops->send(msg, sizeof(msg), t->userdata);
}

void telnet_iac_offer(struct telnet_iac *t, uint8_t cmd, uint8_t opt)
{
	if (cmd == TN_WILL || cmd == TN_WONT)
		t->we[opt] = cmd == TN_WILL;
	else
		t->they[opt] = cmd == TN_DO;
	send_cmd(t, cmd, opt);
}

/*
 * Answer a request to change an option; a request for the state an option is
 * already in is not answered (RFC 854), so negotiations cannot loop.
 */
static void negotiate(struct telnet_iac *t, uint8_t cmd, uint8_t opt)
{
	switch (cmd) {
	case TN_DO:
		if (!t->we[opt]) {
			t->we[opt] = t->ops->we_may(opt, t->userdata);
			send_cmd(t, t->we[opt] ? TN_WILL : TN_WONT, opt);
		}
		break;
	case TN_DONT:
		if (t->we[opt]) {
			t->we[opt] = false;
			send_cmd(t, TN_WONT, opt);
		}
		break;
	case TN_WILL:
		if (!t->they[opt]) {
			t->they[opt] = t->ops->they_may(opt, t->userdata);
			send_cmd(t, t->they[opt] ? TN_DO : TN_DONT, opt);
		}
		break;
	case TN_WONT:
		if (t->they[opt]) {
			t->they[opt] = false;
			send_cmd(t, TN_DONT, opt);
		}
		break;
	}
	if (t->ops->negotiated)
		t->ops->negotiated(cmd, opt, t->userdata);
}

static void sb_add(struct telnet_iac *t, uint8_t b)
{
	if (t->sb_len < sizeof(t->sb))
		t->sb[t->sb_len++] = b;
}

/* The byte after an IAC; returns it when it is data (IAC IAC), else -1. */
static int command(struct telnet_iac *t, uint8_t b)
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
		if (t->ops->command)
			t->ops->command(b, t->userdata);	/* NOP, BREAK, AYT ... */
		break;
	}
	return -1;
}

/* Feed one received byte to the parser; returns it when it is data, else -1. */
static int feed(struct telnet_iac *t, uint8_t b)
{
	switch (t->state) {
	case TELNET_DATA:
		if (b != TN_IAC)
			return b;
		t->state = TELNET_IAC;
		return -1;
	case TELNET_IAC:
		return command(t, b);
	case TELNET_OPTION:
		t->state = TELNET_DATA;
		negotiate(t, t->cmd, b);
		return -1;
	case TELNET_SB:
		if (b == TN_IAC)
			t->state = TELNET_SB_IAC;
		else
			sb_add(t, b);
		return -1;
	case TELNET_SB_IAC:
		t->state = TELNET_SB;
		if (b == TN_IAC) {
			sb_add(t, b);
			return -1;
		}
		if (b == TN_SE) {
			t->state = TELNET_DATA;
			if (t->ops->subnegotiation)
				t->ops->subnegotiation(t->sb, t->sb_len, t->userdata);
			return -1;
		}
		/* an unterminated subnegotiation: drop it, take the command */
		return command(t, b);
	}
	return -1;
}

size_t telnet_iac_decode(struct telnet_iac *t, uint8_t *buf, size_t len)
{
	size_t i, out = 0;

	for (i = 0; i < len; i++) {
		int d = feed(t, buf[i]);

		if (d >= 0)
			buf[out++] = (uint8_t)d;
	}
	return out;
}

int telnet_iac_encode(const uint8_t *data, size_t len, struct strbuf *out)
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
