// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job-parse.c -- parse job files with labd's parser and print the verdict
 *
 *   job-parse FILE...   "FILE: ok" or every "file:line: cause"; exit 1 if any failed
 *
 * For tests and for checking a corpus of jobs (e.g. LAVA's sample jobs)
 * without a lab: only the schema is checked, not a device type.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/diag.h"
#include "core/strbuf.h"
#include "job/job.h"

static int parse_one(const char *path)
{
	struct strbuf text = STRBUF_INIT;
	struct diag diag = DIAG_INIT;
	struct job *job = NULL;
	char buf[65536];
	size_t n, i;
	FILE *f = fopen(path, "r");
	int err;

	if (!f) {
		perror(path);
		return 1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&text, buf, n);
	fclose(f);
	err = job_parse(text.buf, text.len, path, JOB_FORMAT_AUTO, &job, &diag);
	if (!err)
		printf("%s: ok\n", path);
	for (i = 0; i < diag.n; i++)
		printf("%s\n", diag.msgs[i]);
	job_free(job);
	diag_release(&diag);
	strbuf_release(&text);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	int i, status = 0;

	for (i = 1; i < argc; i++)
		status |= parse_one(argv[i]);
	return status;
}
