// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_jobs.c -- labctl's job commands: check, submit, jobs, show and cancel */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/strv.h"
#include "job/job.h"
#include "labctl.h"

#define HELP_OPTION { "help", no_argument, NULL, 'h' }
#define END_OPTIONS { NULL, 0, NULL, 0 }

int lc_read_job(const char *file, struct strbuf *out)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "rb") : stdin;
	char buf[65536];
	int ret = 0;
	size_t n;

	if (!f) {
		fprintf(stderr, "labctl: cannot open '%s': %s\n", file, strerror(errno));
		return LABCTL_ERROR;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && out->len <= JOB_MAX_SIZE)
		strbuf_add(out, buf, n);
	if (ferror(f)) {
		fprintf(stderr, "labctl: cannot read '%s': %s\n", file, strerror(errno));
		ret = LABCTL_ERROR;
	} else if (out->len > JOB_MAX_SIZE) {
		fprintf(stderr, "labctl: '%s' is larger than %d bytes\n", file, JOB_MAX_SIZE);
		ret = LABCTL_ERROR;
	}
	if (f != stdin)
		fclose(f);
	return ret;
}

static enum job_format job_format_of(const char *file)
{
	const char *ext = strrchr(file, '.');

	if (ext && !strcmp(ext, ".json"))
		return JOB_FORMAT_JSON;
	if (ext && (!strcmp(ext, ".yaml") || !strcmp(ext, ".yml")))
		return JOB_FORMAT_YAML;
	return JOB_FORMAT_AUTO;
}

static const char *content_type(enum job_format fmt)
{
	if (fmt == JOB_FORMAT_JSON)
		return "application/json";
	if (fmt == JOB_FORMAT_YAML)
		return "application/yaml";
	return "application/octet-stream";	/* labd looks at the text */
}

/* POST the job, @query ("&dry_run=1" ...) after its file name; @ret gets labd's answer. */
static int post_job(struct labctl *lc, const char *file, const struct strbuf *text,
		    const char *query, struct lc_response *ret)
{
	const char *name = strcmp(file, "-") ? file : "stdin";
	char *esc = lc_escape(lc, name), *path;
	int err;

	if (!esc || asprintf(&path, "/jobs?filename=%s%s", esc, query) < 0) {
		free(esc);
		return -ENOMEM;
	}
	err = lc_request(lc, "POST", path, content_type(job_format_of(file)), text->buf,
			 text->len, ret);
	free(path);
	free(esc);
	return err;
}

/* ---- check ---- */

/* What `labctl check` prints of a job: "FILE: ok", its notices; --strict refuses warnings. */
static int print_checked(const char *file, char *const *notices, size_t n, bool strict)
{
	size_t i, warnings = 0;

	for (i = 0; i < n; i++)
		warnings += strstr(notices[i], ": warning: ") != NULL;
	if (!strict || !warnings)
		printf("%s: ok\n", file);
	for (i = 0; i < n; i++)
		printf("%s\n", notices[i]);
	if (strict && warnings)
		printf("%s: refused: %zu warning%s (--strict)\n", file, warnings,
		       warnings == 1 ? "" : "s");
	return strict && warnings ? LABCTL_FAILED : 0;
}

static int check_offline(const char *file, const struct strbuf *text, bool strict)
{
	struct diag diag = DIAG_INIT;
	struct job *job = NULL;
	size_t i;
	int err, ret = LABCTL_FAILED;

	err = job_parse(text->buf, text->len, file, job_format_of(file), &job, &diag);
	if (!err)
		ret = print_checked(file, job->notices, strv_length(job->notices), strict);
	job_free(job);
	for (i = 0; i < diag.n; i++)
		printf("%s\n", diag.msgs[i]);
	if (err && !diag.n)
		printf("%s: %s\n", file, strerror(-err));
	diag_release(&diag);
	return ret;
}

/* labd's "errors" ("file:line: cause") on stdout, as the offline check prints them. */
static int print_problems(const char *file, const struct lc_response *resp)
{
	json_t *doc = json_loadb(resp->body.buf, resp->body.len, 0, NULL);
	json_t *errors = json_object_get(doc, "errors"), *v;
	size_t i;

	json_array_foreach(errors, i, v)
		printf("%s\n", json_string_value(v));
	if (!json_array_size(errors))
		printf("%s: %s\n", file, lc_str(doc, "error", "invalid job"));
	json_decref(doc);
	return LABCTL_FAILED;
}

/* labd's answer to a dry run: "FILE: ok" and the notices it gave. */
static int print_accepted(const char *file, const struct lc_response *resp)
{
	json_t *doc = json_loadb(resp->body.buf, resp->body.len, 0, NULL);
	json_t *notices = json_object_get(doc, "notices"), *v;
	size_t i;

	printf("%s: ok\n", file);
	json_array_foreach(notices, i, v)
		printf("%s\n", json_string_value(v));
	json_decref(doc);
	return 0;
}

static int check_one(struct labctl *lc, const char *file, bool strict, bool *offline)
{
	struct strbuf text = STRBUF_INIT;
	struct lc_response resp;
	int ret;

	ret = lc_read_job(file, &text);
	if (ret)
		goto out;
	if (!*offline && post_job(lc, file, &text, strict ? "&dry_run=1&strict=1" : "&dry_run=1",
				  &resp) < 0) {
		fprintf(stderr, "labctl: cannot reach labd at %s: %s\n", lc->url, lc->err);
		fputs("labctl: checking the job schema only, not what this lab's boards can run\n",
		      stderr);
		*offline = true;
	}
	if (*offline) {
		ret = check_offline(file, &text, strict);
		goto out;
	}
	if (resp.status == 200)
		ret = print_accepted(file, &resp);
	else if (resp.status == 422)
		ret = print_problems(file, &resp);
	else
		ret = lc_report_error(&resp);
	lc_response_release(&resp);
out:
	strbuf_release(&text);
	return ret;
}

int cmd_check(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "strict", no_argument, NULL, 's' },
		HELP_OPTION, END_OPTIONS,
	};
	bool offline = false, strict = false;
	int c, i, ret = 0, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return lc_help(argv[0]);
		if (c == 's') {
			strict = true;
			continue;
		}
		return lc_usage_error(argv[0], "unknown option");
	}
	if (optind == argc)
		return lc_usage_error(argv[0], "no job file given");
	for (i = optind; i < argc; i++) {
		r = check_one(lc, argv[i], strict, &offline);
		ret = r > ret ? r : ret;
	}
	return ret;
}

/* ---- submit ---- */

int cmd_submit(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		HELP_OPTION, END_OPTIONS,
	};
	struct strbuf text = STRBUF_INIT;
	bool follow = false, quiet = false;
	struct lc_response resp;
	json_t *doc = NULL;
	int64_t id;
	int c, ret;

	while ((c = getopt_long(argc, argv, "fqh", opts, NULL)) != -1) {
		if (c == 'f')
			follow = true;
		else if (c == 'q')
			quiet = true;
		else if (c == 'h')
			return lc_help(argv[0]);
		else
			return lc_usage_error(argv[0], "unknown option");
	}
	if (argc - optind != 1)
		return lc_usage_error(argv[0], "give exactly one job file");
	ret = lc_read_job(argv[optind], &text);
	if (!ret && post_job(lc, argv[optind], &text, "", &resp) < 0)
		ret = lc_report_unreachable(lc);
	strbuf_release(&text);
	if (ret)
		return ret;
	if (resp.status != 201) {
		ret = lc_report_error(&resp);
		lc_response_release(&resp);
		return ret;
	}
	doc = json_loadb(resp.body.buf, resp.body.len, 0, NULL);
	lc_response_release(&resp);
	id = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	if (id <= 0) {
		fprintf(stderr, "labctl: labd accepted the job but sent no id\n");
		return LABCTL_ERROR;
	}
	if (!follow) {
		printf("%lld\n", (long long)id);
		return LABCTL_OK;
	}
	if (!quiet)
		fprintf(stderr, "labctl: job %lld submitted; following its log (Ctrl-C stops)\n",
			(long long)id);
	return lc_follow_job(lc, id, quiet);
}

/* ---- jobs ---- */

static int add_query(struct labctl *lc, struct strbuf *path, const char *key, const char *val)
{
	char *esc;

	if (!val)
		return 0;
	esc = lc_escape(lc, val);
	if (!esc)
		return -ENOMEM;
	strbuf_addf(path, "%c%s=%s", strchr(path->buf, '?') ? '&' : '?', key, esc);
	free(esc);
	return 0;
}

static void print_jobs(const json_t *jobs)
{
	char when[32];
	const json_t *j;
	size_t i;

	printf("%-6s %-9s %-11s %-16s %-12s %-19s %s\n", "ID", "STATE", "HEALTH", "TYPE", "DEVICE",
	       "SUBMITTED", "NAME");
	json_array_foreach(jobs, i, j) {
		const char *health = lc_str(j, "health", "-");

		printf("%-6lld %-9s %-11s %-16s %-12s %-19s %s\n", lc_int(j, "id"),
		       lc_str(j, "state", "-"), strcmp(health, "unknown") ? health : "-",
		       lc_str(j, "device_type", "-"), lc_str(j, "device", "-"),
		       lc_time(j, "submitted", when, sizeof(when)), lc_str(j, "name", ""));
	}
}

int cmd_jobs(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "device", required_argument, NULL, 'd' },
		{ "limit", required_argument, NULL, 'n' },
		{ "device-type", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'F' },
		HELP_OPTION, END_OPTIONS,
	};
	const char *state = NULL, *device = NULL, *limit = NULL, *type = NULL;
	struct strbuf path = STRBUF_INIT;
	bool json = false;
	json_t *doc = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "s:d:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			type = optarg;
			break;
		case 'F':
			if (lc_parse_format(argv[0], optarg, &json))
				return LABCTL_ERROR;
			break;
		case 's':
			state = optarg;
			break;
		case 'd':
			device = optarg;
			break;
		case 'n':
			limit = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			return lc_help(argv[0]);
		default:
			return lc_usage_error(argv[0], "unknown option");
		}
	}
	if (optind != argc)
		return lc_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	strbuf_addstr(&path, "/jobs");
	if (add_query(lc, &path, "state", state) || add_query(lc, &path, "device", device) ||
	    add_query(lc, &path, "device_type", type) ||
	    add_query(lc, &path, "limit", limit))
		ret = LABCTL_ERROR;
	else
		ret = lc_json(lc, "GET", path.buf, NULL, &doc);
	strbuf_release(&path);
	if (ret)
		return ret;
	if (json)
		lc_print_json(doc);
	else
		print_jobs(doc);
	json_decref(doc);
	return LABCTL_OK;
}

/* ---- show ---- */

static void print_phases(const json_t *phases)
{
	const json_t *p;
	size_t i;

	printf("%-13s", "phases:");
	if (!json_array_size(phases))
		printf("-");
	json_array_foreach(phases, i, p)
		printf("%s%s %.3fs", i ? ", " : "", lc_str(p, "phase", "?"),
		       json_number_value(json_object_get(p, "t")));
	putchar('\n');
}

static void print_job(const json_t *j)
{
	const json_t *res = json_object_get(j, "results"), *tags = json_object_get(j, "tags");
	const json_t *tag;
	char when[32];
	size_t i;

	printf("%-13s%lld\n", "id:", lc_int(j, "id"));
	printf("%-13s%s\n", "name:", lc_str(j, "name", "-"));
	printf("%-13s%s\n", "state:", lc_str(j, "state", "-"));
	printf("%-13s%s\n", "health:", lc_str(j, "health", "-"));
	if (!strcmp(lc_str(j, "health", ""), "canceled"))
		printf("%-13s%s\n", "reason:", lc_str(j, "error_msg", "-"));
	else if (strcmp(lc_str(j, "error_type", "none"), "none") || lc_str(j, "error_msg", NULL))
		printf("%-13s%s: %s\n", "error:", lc_str(j, "error_type", "-"),
		       lc_str(j, "error_msg", "-"));
	printf("%-13s%s\n", "device type:", lc_str(j, "device_type", "-"));
	printf("%-13s%s\n", "device:", lc_str(j, "device", "-"));
	printf("%-13s", "tags:");
	json_array_foreach(tags, i, tag)
		printf("%s%s", i ? ", " : "", json_string_value(tag));
	printf("%s\n", json_array_size(tags) ? "" : "-");
	printf("%-13s%lld\n", "priority:", lc_int(j, "priority"));
	printf("%-13s%s\n", "submitter:", lc_str(j, "submitter", "-"));
	printf("%-13s%s\n", "submitted:", lc_time(j, "submitted", when, sizeof(when)));
	printf("%-13s%s\n", "started:", lc_time(j, "started", when, sizeof(when)));
	printf("%-13s%s\n", "ended:", lc_time(j, "ended", when, sizeof(when)));
	printf("%-13s%lld (infrastructure retries left: %lld)\n", "attempt:", lc_int(j, "attempt"),
	       lc_int(j, "retries_left"));
	if (lc_str(j, "last_error", NULL))
		printf("%-13s%s\n", "last error:", lc_str(j, "last_error", ""));
	printf("%-13s%lld passed, %lld failed, %lld skipped, %lld unknown\n", "results:",
	       lc_int(res, "pass"), lc_int(res, "fail"), lc_int(res, "skip"),
	       lc_int(res, "unknown"));
	print_phases(json_object_get(j, "phases"));
	printf("%-13s%s\n", "log:", lc_str(j, "log_url", "-"));
}

int cmd_show(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, HELP_OPTION,
					      END_OPTIONS };
	bool json = false;
	json_t *doc = NULL;
	char path[64];
	int64_t id;
	int c, ret;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'h')
			return lc_help(argv[0]);
		else
			return lc_usage_error(argv[0], "unknown option");
	}
	if (argc - optind != 1)
		return lc_usage_error(argv[0], "give one job id");
	ret = lc_parse_id(argv[0], argv[optind], &id);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	ret = lc_json(lc, "GET", path, NULL, &doc);
	if (ret)
		return ret;
	if (json)
		lc_print_json(doc);
	else
		print_job(doc);
	json_decref(doc);
	return LABCTL_OK;
}

/* ---- cancel ---- */

int cmd_cancel(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = { HELP_OPTION, END_OPTIONS };
	json_t *doc = NULL;
	char path[64];
	int64_t id;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return lc_help(argv[0]);
		return lc_usage_error(argv[0], "unknown option");
	}
	if (argc - optind != 1)
		return lc_usage_error(argv[0], "give one job id");
	ret = lc_parse_id(argv[0], argv[optind], &id);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/jobs/%lld/cancel", (long long)id);
	ret = lc_json(lc, "POST", path, NULL, &doc);
	if (ret)
		return ret;
	if (!strcmp(lc_str(doc, "state", ""), "finished"))
		printf("job %lld: canceled\n", (long long)id);
	else
		printf("job %lld: canceling (its board is being powered off)\n", (long long)id);
	json_decref(doc);
	return LABCTL_OK;
}
