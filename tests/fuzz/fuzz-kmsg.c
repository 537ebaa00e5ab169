// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-kmsg.c -- kernel reports in console lines: every report has a name,
 * a first line, a range in order (an oops set aside for another CPU's report
 * may end after it) and an excerpt within its bound
 */
#include <string.h>

#include "fuzz.h"
#include "results/kmsg.h"

static void on_report(const struct kmsg_report *r, void *ud)
{
	int64_t *last_end = ud;

	FUZZ_ASSERT(r->cls > KMSG_NONE && r->cls < KMSG_CLASS_COUNT);
	FUZZ_ASSERT(r->name && *r->name && r->first_line && r->excerpt);
	/* in order, but for an oops set aside while another CPU's report was read */
	FUZZ_ASSERT(r->line_start <= r->line_end &&
		    (r->line_start > *last_end - 2 || r->cls == KMSG_OOPS));
	/* the excerpt's bound, plus the "lines not kept" line and the tail line */
	FUZZ_ASSERT(strlen(r->excerpt) <= KMSG_MAX_EXCERPT + 64 + 512 + 2);
	if (r->line_end > *last_end)
		*last_end = r->line_end;
}

static void feed(const char *line, size_t len, int64_t lineno, void *ud)
{
	kmsg_feed(ud, line, len, lineno);
	kmsg_classify(line, len);
	kmsg_timestamp_len(line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t last_end = 0;
	struct kmsg *k;

	if (kmsg_new(on_report, &last_end, &k) < 0)
		return 0;
	fuzz_lines(data, size, feed, k);
	kmsg_flush(k);
	kmsg_free(k);
	return 0;
}
