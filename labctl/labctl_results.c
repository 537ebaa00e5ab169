// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_results.c -- labctl results: a job's test results, in one of several formats */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "labctl.h"

/*
 * Output formats of `labctl results`.  A new format (JUnit XML for CI) is a
 * function here and an entry in results_formats[]; its option selects it by
 * name in cmd_results().
 */
struct results_format {
	const char *name;
	int (*print)(const json_t *job, const json_t *results);
};

static int print_table(const json_t *job, const json_t *results)
{
	long long pass = 0, fail = 0, skip = 0, other = 0;
	char name[256], value[64];
	const json_t *r, *m;
	size_t i;

	printf("%-48s %-8s %s\n", "TEST", "RESULT", "MEASUREMENT");
	json_array_foreach(results, i, r) {
		const char *result = lc_str(r, "result", "unknown");

		snprintf(name, sizeof(name), "%s.%s", lc_str(r, "suite", "?"),
			 lc_str(r, "name", "?"));
		m = json_object_get(r, "measurement");
		if (json_is_number(m))
			snprintf(value, sizeof(value), "%g %s", json_number_value(m),
				 lc_str(r, "units", ""));
		else
			snprintf(value, sizeof(value), "-");
		printf("%-48s %-8s %s\n", name, result, value);
		if (!strcmp(result, "pass"))
			pass++;
		else if (!strcmp(result, "fail"))
			fail++;
		else if (!strcmp(result, "skip"))
			skip++;
		else
			other++;
	}
	printf("job %lld: %lld passed, %lld failed, %lld skipped, %lld unknown\n",
	       lc_int(job, "id"), pass, fail, skip, other);
	return LABCTL_OK;
}

static int print_json(const json_t *job, const json_t *results)
{
	lc_print_json(results);
	return LABCTL_OK;
}

static const struct results_format results_formats[] = {
	{ "table", print_table },
	{ "json", print_json },
};

static const struct results_format *find_format(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(results_formats) / sizeof(results_formats[0]); i++)
		if (!strcmp(results_formats[i].name, name))
			return &results_formats[i];
	return NULL;
}

/*
 * --junit [FILE]: labd builds the JUnit XML (GET /jobs/{id}/junit); it goes to
 * FILE (written whole: FILE.tmp renamed) or to stdout.
 */
static int write_junit(struct labctl *lc, int64_t id, const char *file)
{
	struct lc_response resp = { 0 };
	char path[64], tmp[4096];
	FILE *f = stdout;
	int ret = LABCTL_OK;

	snprintf(path, sizeof(path), "/jobs/%lld/junit", (long long)id);
	if (lc_request(lc, "GET", path, NULL, NULL, 0, &resp) < 0)
		return lc_report_unreachable(lc);
	if (resp.status != 200) {
		ret = lc_report_error(&resp);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", file ? file : "");
	if (file && !(f = fopen(tmp, "w"))) {
		fprintf(stderr, "labctl: cannot write '%s': %s\n", tmp, strerror(errno));
		ret = LABCTL_ERROR;
		goto out;
	}
	if (fwrite(resp.body.buf, 1, resp.body.len, f) != resp.body.len || fflush(f))
		ret = LABCTL_ERROR;
	if (file && (fclose(f) || ret || rename(tmp, file))) {
		fprintf(stderr, "labctl: cannot write '%s': %s\n", file, strerror(errno));
		unlink(tmp);
		ret = LABCTL_ERROR;
	}
out:
	lc_response_release(&resp);
	return ret;
}

int cmd_results(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "junit", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct results_format *fmt = find_format("table");
	json_t *job = NULL, *results = NULL;
	bool junit = false;
	char path[64];
	int64_t id;
	int c, ret;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j')
			fmt = find_format("json");
		else if (c == 'J')
			junit = true;
		else if (c == 'h')
			return lc_help(argv[0]);
		else
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
	}
	if (argc - optind != 1 && !(junit && argc - optind == 2))
		return lc_usage_error(argv[0], "give one job id (and with --junit, a file)");
	ret = lc_parse_id(argv[0], argv[optind], &id);
	if (ret)
		return ret;
	if (junit)
		return write_junit(lc, id, argc - optind == 2 ? argv[optind + 1] : NULL);
	snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	ret = lc_json(lc, "GET", path, NULL, &job);
	snprintf(path, sizeof(path), "/jobs/%lld/results", (long long)id);
	if (!ret)
		ret = lc_json(lc, "GET", path, NULL, &results);
	if (!ret)
		ret = fmt->print(job, results);
	json_decref(job);
	json_decref(results);
	return ret;
}
