// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-kcidb.c -- the KCIDB document of a job whose names, results and
 * console text are anything: it passes kcidb_check() (the schema's rules
 * labd relies on) and survives a round trip through JSON text
 */
#include "core/strbuf.h"
#include "fuzz.h"
#include "fuzz_report.h"
#include "results/kcidb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report *r = fuzz_report(data, size);
	struct strbuf why = STRBUF_INIT;
	json_t *doc = NULL, *back;
	char *text;

	if (kcidb_build(r, "labd_fuzz", &doc) == 0) {
		if (kcidb_check(doc, &why) < 0) {
			fprintf(stderr, "kcidb_check: %s\n", why.buf);
			FUZZ_ASSERT(!"a document kcidb_check() refuses");
		}
		text = json_dumps(doc, JSON_COMPACT);
		FUZZ_ASSERT(text);
		back = json_loads(text, 0, NULL);
		FUZZ_ASSERT(back && json_equal(back, doc));
		json_decref(back);
		free(text);
		json_decref(doc);
	}
	strbuf_release(&why);
	report_free(r);
	return 0;
}
