/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_report.h -- a struct report (results/report.h) made from fuzz bytes,
 * for the harnesses of the documents built from it (KCIDB, JUnit)
 *
 * Strings come from the input as they are (invalid UTF-8, NUL cut, control
 * characters, markup): that is what a board's console and a job's author
 * can put in names, results, error messages and console excerpts.
 */
#ifndef LABD_FUZZ_REPORT_H
#define LABD_FUZZ_REPORT_H

#include <string.h>

#include "core/strv.h"
#include "results/report.h"

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static unsigned fuzz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* A string of up to 255 bytes (its length is the next byte); NULL when @nullable and 0. */
static char *fuzz_str(struct fuzz_in *in, bool nullable)
{
	size_t len = fuzz_u8(in);
	char *s;

	if (nullable && !len)
		return NULL;
	len = len < in->n ? len : in->n;
	s = malloc(len + 1);
	if (!s)
		abort();
	memcpy(s, in->p, len);
	s[len] = '\0';
	in->p += len;
	in->n -= len;
	return s;
}

static struct report *fuzz_report(const uint8_t *data, size_t size)
{
	static const char *const results[] = { "pass", "fail", "skip", "unknown" };
	struct fuzz_in in = { data, size };
	struct report *r = calloc(1, sizeof(*r));
	size_t i, n;

	if (!r)
		abort();
	r->job_id = 1 + fuzz_u8(&in);
	r->lab = fuzz_str(&in, false);
	r->name = fuzz_str(&in, false);
	r->device = fuzz_str(&in, true);
	r->device_type = fuzz_str(&in, false);
	r->submitter = fuzz_str(&in, false);
	r->health = (enum job_health)(fuzz_u8(&in) % 4);
	r->error_type = (enum error_type)(fuzz_u8(&in) % 5);
	r->error_msg = fuzz_str(&in, true);
	r->submitted = 1700000000000000ULL + fuzz_u8(&in);
	r->started = fuzz_u8(&in) ? r->submitted + 1000000 : 0;
	r->ended = fuzz_u8(&in) ? r->submitted + 2000000 : 0;
	r->attempt = 1 + fuzz_u8(&in) % 3;
	for (n = fuzz_u8(&in) % 8; n; n--)
		strv_consume(&r->phases, fuzz_str(&in, false));
	r->log_tail = fuzz_str(&in, true);
	r->log_tail_len = r->log_tail ? strlen(r->log_tail) : 0;
	r->log_size = r->log_tail_len;
	r->log_url = fuzz_str(&in, true);
	n = fuzz_u8(&in) % 32;
	r->results = calloc(n + 1, sizeof(*r->results));
	for (i = 0; i < n && in.n; i++) {
		struct report_result *res = &r->results[r->n_results++];

		res->suite = fuzz_str(&in, false);
		res->name = fuzz_str(&in, false);
		res->result = strdup(results[fuzz_u8(&in) % 4]);
		res->has_measurement = fuzz_u8(&in) & 1;
		res->measurement = (double)fuzz_u8(&in) / 7.0;
		res->units = fuzz_str(&in, true);
		res->log_start = fuzz_u8(&in);
		res->log_end = res->log_start + fuzz_u8(&in);
		res->excerpt = fuzz_str(&in, true);
		res->excerpt_len = res->excerpt ? strlen(res->excerpt) : 0;
		res->created = r->submitted + i;
	}
	return r;
}

#endif
