// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-telnet-iac.c -- the telnet protocol of a peer (ser2net, a telnet
 * client): received bytes in chunks of any size; negotiation never answers
 * more than it got, and data sent with telnet_iac_encode() comes back whole
 */
#include <string.h>

#include "core/strbuf.h"
#include "drivers/telnet_iac.h"
#include "fuzz.h"

struct peer {
	size_t sent;		/* protocol bytes answered */
};

static void on_send(const uint8_t *buf, size_t len, void *ud)
{
	((struct peer *)ud)->sent += len;
}

static bool we_may(uint8_t opt, void *ud)
{
	return opt == TN_OPT_BINARY || opt == TN_OPT_SGA;
}

static bool they_may(uint8_t opt, void *ud)
{
	return opt != TN_OPT_LINEMODE;
}

static const struct telnet_iac_ops ops = { .send = on_send, .we_may = we_may, .they_may = they_may };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer peer = { 0 };
	struct strbuf enc = STRBUF_INIT;
	struct telnet_iac t;
	uint8_t *buf = malloc(size + 1);
	size_t pos = 0, chunk, n;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	telnet_iac_init(&t, &ops, &peer);
	/* chunks of 1..16 bytes, sized by the input itself */
	while (pos < size) {
		chunk = 1 + buf[pos] % 16;
		chunk = chunk < size - pos ? chunk : size - pos;
		n = telnet_iac_decode(&t, buf + pos, chunk);
		FUZZ_ASSERT(n <= chunk);
		pos += chunk;
	}
	/* three answer bytes (IAC, command, option) per negotiation received, at most */
	FUZZ_ASSERT(peer.sent <= 3 * size);
	/* a round trip of the input as data */
	telnet_iac_reset(&t);
	FUZZ_ASSERT(telnet_iac_encode(data, size, &enc) == 0);
	n = telnet_iac_decode(&t, (uint8_t *)enc.buf, enc.len);
	FUZZ_ASSERT(n == size && !memcmp(enc.buf, data, size));
	strbuf_release(&enc);
	free(buf);
	return 0;
}
