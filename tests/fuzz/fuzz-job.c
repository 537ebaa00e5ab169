// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-job.c -- job files as users submit them, YAML or JSON
 *
 * The first byte chooses the format ('{' also means JSON, as labd guesses).
 * A parsed job must be complete: a name, a device type, a job timeout.  Its
 * text as labd stores it (job_redact()) parses again, to the same actions,
 * with "[secret]" for every secret.
 */
#include <string.h>

#include "core/diag.h"
#include "fuzz.h"
#include "job/job.h"

static void check_redacted(const struct job *job, const char *text, size_t size,
			   enum job_format fmt)
{
	struct diag diag = DIAG_INIT;
	struct job *again = NULL;
	size_t len, i;
	char *out;

	if (job_redact(job, text, size, fmt, &out, &len) < 0)
		return;
	FUZZ_ASSERT(!job_parse(out, len, "redacted", fmt, &again, &diag));
	FUZZ_ASSERT(again->n_actions == job->n_actions && again->secrets.n == job->secrets.n);
	for (i = 0; i < again->secrets.n; i++)
		FUZZ_ASSERT(!strcmp(again->secrets.vals[i], "[secret]"));
	job_free(again);
	diag_release(&diag);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum job_format fmt = size && (data[0] & 1) ? JOB_FORMAT_JSON : JOB_FORMAT_YAML;
	struct diag diag = DIAG_INIT;
	struct job *job = NULL;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (size && data[0] == '{')
		fmt = JOB_FORMAT_JSON;
	if (!job_parse(text, size, fmt == JOB_FORMAT_JSON ? "fuzz.json" : "fuzz.yaml", fmt, &job,
		       &diag)) {
		FUZZ_ASSERT(job && job->name && job->device_type);
		check_redacted(job, text, size, fmt);
		job_free(job);
	} else {
		FUZZ_ASSERT(diag.n > 0);
	}
	diag_release(&diag);
	free(text);
	return 0;
}
