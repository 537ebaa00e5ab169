/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * viewer_proto.h -- the console protocol between labd and `labctl console`
 *
 * The client asks GET /api/v1/devices/NAME/console[?replay=BYTES] with
 * "Connection: Upgrade" and "Upgrade: labd-console", authenticated like any
 * API call.  labd answers "101 Switching Protocols" (or a JSON error: 401,
 * 403, 404, 426), and from then on the connection carries frames both ways:
 *
 *	type (1 byte) | payload length (2 bytes, big-endian) | payload
 *
 *   labd -> client   'd' console output (bytes as the board sent them)
 *                    'n' a notice for the person: one line of UTF-8 text
 *   client -> labd   'd' keys typed
 *                    'b' send a serial break (empty)
 *                    'p' power-cycle the board (empty; holder and admins)
 *
 * A payload is at most VIEWER_FRAME_MAX bytes; frames of an unknown type are
 * skipped, so both sides can grow.  Either side ends the session by closing
 * the connection.  Shared by labd (viewer.c) and labctl (labctl_console.c).
 */
#ifndef LABD_VIEWER_PROTO_H
#define LABD_VIEWER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "core/strbuf.h"

#define VIEWER_PROTO_UPGRADE "labd-console"
#define VIEWER_FRAME_HEADER 3
#define VIEWER_FRAME_MAX 4096

enum viewer_frame {
	VIEWER_FRAME_DATA = 'd',
	VIEWER_FRAME_NOTICE = 'n',
	VIEWER_FRAME_BREAK = 'b',
	VIEWER_FRAME_POWER_CYCLE = 'p',
};

/** viewer_frame_add() - append @len bytes of @type to @out, split into frames. */
static inline int viewer_frame_add(struct strbuf *out, char type, const void *data, size_t len)
{
	const uint8_t *p = data;
	int r;

	do {
		size_t n = len < VIEWER_FRAME_MAX ? len : VIEWER_FRAME_MAX;
		uint8_t hdr[VIEWER_FRAME_HEADER] = { (uint8_t)type, (uint8_t)(n >> 8), (uint8_t)n };

		r = strbuf_add(out, hdr, sizeof(hdr));
		if (!r && n)	/* an empty frame ('b', 'p') may come without data at all */
			r = strbuf_add(out, p, n);
		p += n;
		len -= n;
	} while (!r && len);
	return r;
}

/**
 * viewer_frame_next() - the first complete frame of @buf: its @type, @payload
 * and @plen.  Returns the bytes it takes (header included), or 0 when @buf
 * holds no complete frame yet.
 */
static inline size_t viewer_frame_next(const uint8_t *buf, size_t len, char *type,
				       const uint8_t **payload, size_t *plen)
{
	size_t n;

	if (len < VIEWER_FRAME_HEADER)
		return 0;
	n = (size_t)buf[1] << 8 | buf[2];
	if (len < VIEWER_FRAME_HEADER + n)
		return 0;
	*type = (char)buf[0];
	*payload = buf + VIEWER_FRAME_HEADER;
	*plen = n;
	return VIEWER_FRAME_HEADER + n;
}

#endif
