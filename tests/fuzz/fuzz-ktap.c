// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz-ktap.c -- KTAP/TAP off a console: every result has a sane name, result and range */
#include <string.h>

#include "fuzz.h"
#include "results/ktap.h"

static void on_result(const struct ktap_result *r, void *ud)
{
	FUZZ_ASSERT(r->name && *r->name);
	FUZZ_ASSERT(!strcmp(r->result, "pass") || !strcmp(r->result, "fail") ||
		    !strcmp(r->result, "skip"));
	FUZZ_ASSERT(r->line_start <= r->line_end);
	(*(size_t *)ud)++;
}

static void feed(const char *line, size_t len, int64_t lineno, void *ud)
{
	ktap_feed(ud, line, len, lineno);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ktap *k;
	size_t n = 0;

	if (ktap_new(on_result, &n, &k) < 0)
		return 0;
	fuzz_lines(data, size, feed, k);
	ktap_flush(k);
	ktap_free(k);
	return 0;
}
