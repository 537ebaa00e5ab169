/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * telnet_iac.h -- the telnet protocol (RFC 854/855) of one connection, either side
 *
 * Shared by the telnet console driver (labd is the client of a ser2net
 * port: console/telnet.c) and labd's own telnet ports (labd is the server:
 * dispatcher/session/telnetd.c).  It strips commands out of the received bytes,
 * answers option negotiation from the owner's policy (never answering a
 * request for the state an option is already in, so negotiations cannot
 * loop), collects subnegotiations, and doubles 0xFF in data sent.
 *
 * Use:
 *  1. embed a struct telnet_iac, telnet_iac_init() it with the owner's ops;
 *  2. telnet_iac_offer() the options wanted on a new connection;
 *  3. telnet_iac_decode() every received chunk: data stays, in place;
 *  4. telnet_iac_encode() data before sending it;
 *  5. telnet_iac_reset() when the connection is replaced.
 */
#ifndef LABD_TELNET_IAC_H
#define LABD_TELNET_IAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* RFC 854 commands and the options labd uses */
#define TN_SE 240
#define TN_NOP 241
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
#define TN_OPT_LINEMODE 34
#define TN_OPT_COMPORT 44		/* RFC 2217 */

#define TELNET_SB_MAX 64		/* longer subnegotiations are cut, not kept */

struct telnet_iac_ops {
	/** required: protocol bytes to send (replies to negotiation) */
	void (*send)(const uint8_t *buf, size_t len, void *userdata);
	/** required: whether we may enable @opt on our side (they sent DO) */
	bool (*we_may)(uint8_t opt, void *userdata);
	/** required: whether they may enable @opt on their side (they sent WILL) */
	bool (*they_may)(uint8_t opt, void *userdata);
	/** optional: a WILL, WONT, DO or DONT was handled (we[]/they[] are up to date) */
	void (*negotiated)(uint8_t cmd, uint8_t opt, void *userdata);
	/** optional: a complete subnegotiation (IAC SB ... IAC SE, without those) */
	void (*subnegotiation)(const uint8_t *sb, size_t len, void *userdata);
	/** optional: a command without option (BREAK, NOP, AYT ...) */
	void (*command)(uint8_t cmd, void *userdata);
};

enum telnet_iac_state {
	TELNET_DATA,
	TELNET_IAC,			/* after IAC */
	TELNET_OPTION,			/* after IAC WILL/WONT/DO/DONT */
	TELNET_SB,			/* inside IAC SB ... */
	TELNET_SB_IAC,			/* IAC inside a subnegotiation */
};

struct telnet_iac {
	const struct telnet_iac_ops *ops;
	void *userdata;
	enum telnet_iac_state state;
	uint8_t cmd;			/* the WILL/WONT/DO/DONT waiting for its option */
	uint8_t sb[TELNET_SB_MAX];
	size_t sb_len;
	bool we[256];			/* options enabled (or offered) on our side */
	bool they[256];			/* options enabled (or asked for) on their side */
};

void telnet_iac_init(struct telnet_iac *t, const struct telnet_iac_ops *ops, void *userdata);

/** telnet_iac_reset() - a new connection: parser and options back to the start. */
void telnet_iac_reset(struct telnet_iac *t);

/**
 * telnet_iac_offer() - send @cmd for @opt and count it as agreed: WILL/WONT
 * set we[@opt], DO/DONT they[@opt], so the peer's agreement is not answered.
 */
void telnet_iac_offer(struct telnet_iac *t, uint8_t cmd, uint8_t opt);

/** telnet_iac_decode() - strip protocol bytes from @buf; returns the data bytes left at its start. */
size_t telnet_iac_decode(struct telnet_iac *t, uint8_t *buf, size_t len);

/** telnet_iac_encode() - append @data to @out with every 0xFF doubled. */
int telnet_iac_encode(const uint8_t *data, size_t len, struct strbuf *out);

#endif
