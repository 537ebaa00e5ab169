// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz-lava-signals.c -- LAVA's test signals in console lines, also cut by kernel messages */
#include <string.h>

#include "fuzz.h"
#include "results/lava_signals.h"

static void on_signal(const struct lava_signal *s, void *ud)
{
	FUZZ_ASSERT(s->raw);
	FUZZ_ASSERT(s->line_start <= s->line_end);
	if (s->result)
		FUZZ_ASSERT(!strcmp(s->result, "pass") || !strcmp(s->result, "fail") ||
			    !strcmp(s->result, "skip") || !strcmp(s->result, "unknown"));
	lava_signal_kind_name(s->kind);
}

static void feed(const char *line, size_t len, int64_t lineno, void *ud)
{
	lava_signals_feed(ud, line, len, lineno);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lava_signals *ls;

	if (lava_signals_new(on_signal, NULL, &ls) < 0)
		return 0;
	fuzz_lines(data, size, feed, ls);
	lava_signals_flush(ls);
	lava_signals_free(ls);
	return 0;
}
