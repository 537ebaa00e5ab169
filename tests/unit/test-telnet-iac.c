// SPDX-License-Identifier: GPL-2.0-or-later
/* test-telnet-iac.c -- drivers/telnet_iac.c: IAC across reads, negotiation, commands, encoding */
#include <stdbool.h>
#include <string.h>

#include "core/strbuf.h"
#include "drivers/telnet_iac.h"
#include "tap.h"

#define S(lit) (const uint8_t *)(lit), sizeof(lit) - 1

/* What one end of a connection saw: replies sent, commands and subnegotiations. */
struct peer {
	struct telnet_iac t;
	struct strbuf sent;		/* protocol bytes it sent */
	struct strbuf data;		/* data bytes decoded */
	struct strbuf sb;		/* subnegotiations, each followed by '|' */
	struct strbuf cmds;		/* commands without option */
	int negotiated;
	bool refuse_all;		/* policy: no option at all */
	struct peer *other;		/* wired to another peer: sent bytes go there */
};

static void on_send(const uint8_t *buf, size_t len, void *ud)
{
	struct peer *p = ud;

	strbuf_add(&p->sent, buf, len);
}

static bool we_may(uint8_t opt, void *ud)
{
	const struct peer *p = ud;

	return !p->refuse_all && (opt == TN_OPT_ECHO || opt == TN_OPT_SGA || opt == TN_OPT_BINARY);
}

static bool they_may(uint8_t opt, void *ud)
{
	const struct peer *p = ud;

	return !p->refuse_all && (opt == TN_OPT_SGA || opt == TN_OPT_BINARY);
}

static void on_negotiated(uint8_t cmd, uint8_t opt, void *ud)
{
	struct peer *p = ud;

	p->negotiated++;
}

static void on_sb(const uint8_t *sb, size_t len, void *ud)
{
	struct peer *p = ud;

	strbuf_add(&p->sb, sb, len);
	strbuf_addch(&p->sb, '|');
}

static void on_command(uint8_t cmd, void *ud)
{
	struct peer *p = ud;

	strbuf_addch(&p->cmds, (char)cmd);
}

static const struct telnet_iac_ops ops = {
	.send = on_send,
	.we_may = we_may,
	.they_may = they_may,
	.negotiated = on_negotiated,
	.subnegotiation = on_sb,
	.command = on_command,
};

static const struct telnet_iac_ops minimal_ops = {
	.send = on_send,
	.we_may = we_may,
	.they_may = they_may,
};

static void peer_init(struct peer *p)
{
	memset(p, 0, sizeof(*p));
	strbuf_init(&p->sent);
	strbuf_init(&p->data);
	strbuf_init(&p->sb);
	strbuf_init(&p->cmds);
	telnet_iac_init(&p->t, &ops, p);
}

static void peer_release(struct peer *p)
{
	strbuf_release(&p->sent);
	strbuf_release(&p->data);
	strbuf_release(&p->sb);
	strbuf_release(&p->cmds);
}

/* Decode @len bytes of @in (copied: decoding works in place), keep the data. */
static void feed(struct peer *p, const uint8_t *in, size_t len)
{
	uint8_t buf[512];
	size_t n;

	memcpy(buf, in, len);
	n = telnet_iac_decode(&p->t, buf, len);
	strbuf_add(&p->data, buf, n);
}

static bool sent_is(struct peer *p, const uint8_t *want, size_t len)
{
	bool same = p->sent.len == len && !memcmp(p->sent.buf, want, len);

	strbuf_reset(&p->sent);
	return same;
}

static bool buf_is(const struct strbuf *sb, const uint8_t *want, size_t len)
{
	return sb->len == len && !memcmp(sb->buf, want, len);
}

/* Data, an escaped 0xFF, a negotiation, a subnegotiation with 0xFF, NOP and BREAK. */
static const uint8_t stream[] = "a\xff\xff" "b\xff\xfb\x03" "c\xff\xfa\x2c\x01\xff\xff\x02\xff\xf0"
				"d\xff\xf1" "e\xff\xf3" "f";

/* The same decoding whatever the reads: split at every point, and byte by byte. */
TEST(test_telnet_iac__every_split)
{
	size_t len = sizeof(stream) - 1, cut, i;
	struct peer p;

	for (cut = 0; cut <= len + 1; cut++) {
		peer_init(&p);
		if (cut <= len) {
			feed(&p, stream, cut);
			feed(&p, stream + cut, len - cut);
		} else {
			for (i = 0; i < len; i++)
				feed(&p, stream + i, 1);
		}
		CHECK(buf_is(&p.data, S("a\xff" "bcdef")));
		CHECK(sent_is(&p, S("\xff\xfd\x03")));		/* WILL SGA: DO SGA */
		CHECK(buf_is(&p.sb, S("\x2c\x01\xff\x02|")));
		CHECK(buf_is(&p.cmds, S("\xf1\xf3")));
		CHECK_INT(p.negotiated, ==, 1);
		CHECK_INT(p.t.state, ==, TELNET_DATA);
		peer_release(&p);
	}
}

/* Each request is answered from the policy; a request for the current state is not. */
TEST(test_telnet_iac__negotiation)
{
	struct peer p;

	peer_init(&p);
	feed(&p, S("\xff\xfd\x01"));			/* DO ECHO */
	CHECK(sent_is(&p, S("\xff\xfb\x01")));		/* WILL ECHO */
	CHECK(p.t.we[TN_OPT_ECHO]);
	feed(&p, S("\xff\xfd\x01"));			/* again: no answer */
	CHECK(sent_is(&p, S("")));
	feed(&p, S("\xff\xfd\x22"));			/* DO LINEMODE */
	CHECK(sent_is(&p, S("\xff\xfc\x22")));		/* WONT */
	CHECK(!p.t.we[TN_OPT_LINEMODE]);
	feed(&p, S("\xff\xfe\x01"));			/* DONT ECHO */
	CHECK(sent_is(&p, S("\xff\xfc\x01")));		/* WONT ECHO */
	CHECK(!p.t.we[TN_OPT_ECHO]);
	feed(&p, S("\xff\xfe\x01"));			/* again: no answer */
	CHECK(sent_is(&p, S("")));
	feed(&p, S("\xff\xfb\x00"));			/* WILL BINARY */
	CHECK(sent_is(&p, S("\xff\xfd\x00")));		/* DO */
	CHECK(p.t.they[TN_OPT_BINARY]);
	feed(&p, S("\xff\xfb\x01"));			/* WILL ECHO: they may not */
	CHECK(sent_is(&p, S("\xff\xfe\x01")));		/* DONT */
	feed(&p, S("\xff\xfc\x00"));			/* WONT BINARY */
	CHECK(sent_is(&p, S("\xff\xfe\x00")));		/* DONT */
	CHECK(!p.t.they[TN_OPT_BINARY]);
	feed(&p, S("\xff\xfc\x00\xff\xfc\x2c"));	/* WONT what is off: no answer */
	CHECK(sent_is(&p, S("")));
	CHECK_INT(p.negotiated, ==, 10);
	CHECK_INT(p.data.len, ==, 0);
	peer_release(&p);
}

/* What we offered counts as agreed: the peer's agreement gets no answer, a refusal does. */
TEST(test_telnet_iac__offer)
{
	struct peer p;

	peer_init(&p);
	telnet_iac_offer(&p.t, TN_WILL, TN_OPT_ECHO);
	telnet_iac_offer(&p.t, TN_DO, TN_OPT_SGA);
	CHECK(sent_is(&p, S("\xff\xfb\x01\xff\xfd\x03")));
	feed(&p, S("\xff\xfd\x01\xff\xfb\x03"));	/* DO ECHO, WILL SGA */
	CHECK(sent_is(&p, S("")));
	feed(&p, S("\xff\xfe\x01"));			/* DONT ECHO after all */
	CHECK(sent_is(&p, S("\xff\xfc\x01")));
	telnet_iac_offer(&p.t, TN_WONT, TN_OPT_BINARY);
	telnet_iac_offer(&p.t, TN_DONT, TN_OPT_BINARY);
	CHECK(sent_is(&p, S("\xff\xfc\x00\xff\xfe\x00")));
	CHECK(!p.t.we[TN_OPT_BINARY] && !p.t.they[TN_OPT_BINARY]);
	peer_release(&p);
}

/* Pass what each of two wired peers sent to the other until both are quiet. */
static int pump(struct peer *a, struct peer *b)
{
	struct strbuf msg = STRBUF_INIT;
	int rounds = 0;

	while ((a->sent.len || b->sent.len) && rounds < 100) {
		struct peer *from = a->sent.len ? a : b;

		strbuf_reset(&msg);
		strbuf_add(&msg, from->sent.buf, from->sent.len);
		strbuf_reset(&from->sent);
		feed(from->other, (const uint8_t *)msg.buf, msg.len);
		rounds++;
	}
	strbuf_release(&msg);
	return rounds;
}

/* Two ends that disagree settle in a few messages, never ping-pong. */
TEST(test_telnet_iac__no_loop)
{
	struct peer a, b;

	peer_init(&a);
	peer_init(&b);
	a.other = &b;
	b.other = &a;
	b.refuse_all = true;
	telnet_iac_offer(&a.t, TN_WILL, TN_OPT_ECHO);
	telnet_iac_offer(&a.t, TN_DO, TN_OPT_BINARY);
	telnet_iac_offer(&a.t, TN_WILL, TN_OPT_SGA);
	CHECK_INT(pump(&a, &b), <, 10);
	CHECK(!a.t.we[TN_OPT_ECHO] && !a.t.they[TN_OPT_BINARY] && !a.t.we[TN_OPT_SGA]);
	CHECK(!b.t.they[TN_OPT_ECHO] && !b.t.we[TN_OPT_BINARY]);
	/* both willing: agreed, and quiet again */
	b.refuse_all = false;
	telnet_iac_offer(&a.t, TN_DO, TN_OPT_BINARY);
	CHECK_INT(pump(&a, &b), <, 10);
	CHECK(a.t.they[TN_OPT_BINARY] && b.t.we[TN_OPT_BINARY]);
	peer_release(&a);
	peer_release(&b);
}

/* BREAK and NOP reach the owner, around data; without a command callback they vanish. */
TEST(test_telnet_iac__commands)
{
	struct peer p;

	peer_init(&p);
	feed(&p, S("x\xff\xf3y\xff\xf1z\xff\xf6"));	/* BREAK, NOP, AYT */
	CHECK(buf_is(&p.data, S("xyz")));
	CHECK(buf_is(&p.cmds, S("\xf3\xf1\xf6")));
	peer_release(&p);
	peer_init(&p);
	telnet_iac_init(&p.t, &minimal_ops, &p);
	feed(&p, S("x\xff\xf3y\xff\xfa\x18z\xff\xf0\xff\xfd\x01q"));
	CHECK(buf_is(&p.data, S("xyq")));
	CHECK(sent_is(&p, S("\xff\xfb\x01")));
	peer_release(&p);
}

/* Subnegotiations: IAC IAC inside, cut at TELNET_SB_MAX, dropped when unterminated. */
TEST(test_telnet_iac__subnegotiation)
{
	uint8_t big[3 + 100 + 2], want[TELNET_SB_MAX + 1];
	struct peer p;

	peer_init(&p);
	big[0] = TN_IAC;
	big[1] = TN_SB;
	big[2] = TN_OPT_COMPORT;
	memset(big + 3, 'z', 100);
	big[103] = TN_IAC;
	big[104] = TN_SE;
	feed(&p, big, sizeof(big));
	want[0] = TN_OPT_COMPORT;
	memset(want + 1, 'z', TELNET_SB_MAX - 1);
	want[TELNET_SB_MAX] = '|';
	CHECK(buf_is(&p.sb, want, sizeof(want)));
	strbuf_reset(&p.sb);
	/* no IAC SE: the next command ends it, nothing is reported, data goes on */
	feed(&p, S("\xff\xfa\x18junk\xff\xf1" "data"));
	CHECK_INT(p.sb.len, ==, 0);
	CHECK(buf_is(&p.cmds, S("\xf1")));
	CHECK(buf_is(&p.data, S("data")));
	peer_release(&p);
}

TEST(test_telnet_iac__encode)
{
	struct strbuf out = STRBUF_INIT;
	uint8_t all[256];
	struct peer p;
	size_t i;

	CHECK(telnet_iac_encode(S(""), &out) == 0);
	CHECK_INT(out.len, ==, 0);
	CHECK(telnet_iac_encode(S("plain"), &out) == 0);
	CHECK(buf_is(&out, S("plain")));
	strbuf_reset(&out);
	CHECK(telnet_iac_encode(S("\xff"), &out) == 0);
	CHECK(buf_is(&out, S("\xff\xff")));
	strbuf_reset(&out);
	CHECK(telnet_iac_encode(S("a\xff\xff" "b\xff"), &out) == 0);
	CHECK(buf_is(&out, S("a\xff\xff\xff\xff" "b\xff\xff")));
	/* every byte value, encoded then decoded in odd-sized reads, is itself again */
	for (i = 0; i < sizeof(all); i++)
		all[i] = (uint8_t)i;
	strbuf_reset(&out);
	CHECK(telnet_iac_encode(all, sizeof(all), &out) == 0);
	CHECK_INT(out.len, ==, 257);
	peer_init(&p);
	for (i = 0; i < out.len; i += 7)
		feed(&p, (const uint8_t *)out.buf + i, out.len - i < 7 ? out.len - i : 7);
	CHECK(buf_is(&p.data, all, sizeof(all)));
	CHECK_INT(p.sent.len, ==, 0);
	peer_release(&p);
	strbuf_release(&out);
}

/* A new connection: half a command and the options of the old one are forgotten. */
TEST(test_telnet_iac__reset)
{
	struct peer p;

	peer_init(&p);
	feed(&p, S("\xff\xfd\x01"));
	CHECK(p.t.we[TN_OPT_ECHO]);
	feed(&p, S("\xff"));
	telnet_iac_reset(&p.t);
	CHECK(!p.t.we[TN_OPT_ECHO]);
	feed(&p, S("A\xff\xfd\x01"));
	CHECK(buf_is(&p.data, S("A")));
	CHECK(sent_is(&p, S("\xff\xfb\x01\xff\xfb\x01")));	/* answered again */
	peer_release(&p);
}

TEST_LIST(test_telnet_iac__every_split, test_telnet_iac__negotiation, test_telnet_iac__offer,
	  test_telnet_iac__no_loop, test_telnet_iac__commands, test_telnet_iac__subnegotiation,
	  test_telnet_iac__encode, test_telnet_iac__reset);
