// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-testdef.c -- fetched test definitions (YAML), and the shell text
 * labd types from them: every typed command is short, has no TAB or line
 * break, and never contains a signal marker itself (testdef.h)
 */
#include <string.h>

#include "core/strv.h"
#include "fuzz.h"
#include "job/job.h"
#include "job/testdef.h"

static void check_typeable(const char *cmd)
{
	FUZZ_ASSERT(strlen(cmd) <= TESTDEF_MAX_COMMAND);
	FUZZ_ASSERT(!strchr(cmd, '\t') && !strchr(cmd, '\n'));
	FUZZ_ASSERT(!strstr(cmd, "<LAVA_SIGNAL_"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_testdef jt = { .name = (char *)"fuzz" };
	char err[256], **cmds = NULL, *run;
	struct testdef *td = NULL;
	json_t *doc = NULL;

	if (testdef_parse_yaml((const char *)data, size, "fuzz.yaml", &doc, err, sizeof(err)) < 0)
		return 0;
	if (testdef_from_json(doc, &jt, 1, &td, err, sizeof(err)) == 0) {
		const struct testdef_script sc = { .dir = "/tmp/labd-1", .uuid = "1_1", .os = "debian" };

		if (testdef_script_commands(td, &sc, &cmds) == 0) {
			STRV_FOREACH(c, cmds)
				check_typeable(*c);
			strv_free(cmds);
		}
		/* the overlay's copy of the script: a file, not typed */
		free(testdef_script_text(td, &sc));
		run = testdef_run_command(td, "/tmp/labd-1/1_fuzz.sh", "1_1");
		if (run)
			check_typeable(run);
		free(run);
		testdef_result(td, "pass");
		testdef_free(td);
	}
	json_decref(doc);
	return 0;
}
