// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-job.c -- job files as users submit them, YAML or JSON
 *
 * The first byte chooses the format ('{' also means JSON, as labd guesses).
 * A parsed job must be complete: a name, a device type, a job timeout.
 */
#include <string.h>

#include "core/diag.h"
#include "fuzz.h"
#include "job/job.h"

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
		job_free(job);
	} else {
		FUZZ_ASSERT(diag.n > 0);
	}
	diag_release(&diag);
	free(text);
	return 0;
}
