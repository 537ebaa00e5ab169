// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-viewer-proto.c -- the console frames labd reads from `labctl console`
 * and writes to it: parsing any bytes never reads past them, and frames
 * made with viewer_frame_add() parse back to the same data
 */
#include <string.h>

#include "fuzz.h"
#include "session/viewer_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf frames = STRBUF_INIT, back = STRBUF_INIT;
	const uint8_t *payload;
	size_t pos = 0, n, plen;
	char type;

	while ((n = viewer_frame_next(data + pos, size - pos, &type, &payload, &plen))) {
		FUZZ_ASSERT(n == VIEWER_FRAME_HEADER + plen && pos + n <= size);
		pos += n;
	}
	FUZZ_ASSERT(viewer_frame_add(&frames, VIEWER_FRAME_DATA, data, size) == 0);
	for (pos = 0; (n = viewer_frame_next((const uint8_t *)frames.buf + pos, frames.len - pos,
					     &type, &payload, &plen)); pos += n) {
		FUZZ_ASSERT(type == VIEWER_FRAME_DATA && plen <= VIEWER_FRAME_MAX);
		strbuf_add(&back, payload, plen);
	}
	FUZZ_ASSERT(pos == frames.len && back.len == size && !memcmp(back.buf, data, size));
	strbuf_release(&frames);
	strbuf_release(&back);
	return 0;
}
