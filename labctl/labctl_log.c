// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_log.c -- labctl log, and following a job's log to its outcome */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "labctl.h"

static bool write_safe(const char *data, size_t len, void *ud)
{
	return lc_write_log(data, len, false);
}

static bool write_raw(const char *data, size_t len, void *ud)
{
	return lc_write_log(data, len, true);
}

static bool discard(const char *data, size_t len, void *ud)
{
	return true;
}

/* The outcome line of a finished job and the exit status it means. */
static int print_outcome(struct labctl *lc, int64_t id)
{
	json_t *job = NULL, *res;
	const char *health, *msg;
	char path[64];
	long long fail;
	int ret;

	snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	ret = lc_json(lc, "GET", path, NULL, &job);
	if (ret)
		return ret;
	health = lc_str(job, "health", "unknown");
	msg = lc_str(job, "error_msg", NULL);
	res = json_object_get(job, "results");
	fail = lc_int(res, "fail");
	if (strcmp(lc_str(job, "state", ""), "finished")) {
		fprintf(stderr, "labctl: the log of job %lld ended before the job (labd stops?)\n",
			(long long)id);
		ret = LABCTL_ERROR;
	} else if (!strcmp(health, "complete")) {
		printf("job %lld: complete, %lld passed, %lld failed, %lld skipped\n",
		       (long long)id, lc_int(res, "pass"), fail, lc_int(res, "skip"));
		ret = fail ? LABCTL_FAILED : LABCTL_OK;
	} else if (!strcmp(health, "canceled")) {	/* "job 3: canceled by gitlab" */
		printf("job %lld: %s%s\n", (long long)id,
		       msg && !strncmp(msg, "canceled", 8) ? "" : msg ? "canceled: " : "canceled",
		       msg ? msg : "");
		ret = LABCTL_INCOMPLETE;
	} else {
		printf("job %lld: %s (%s): %s\n", (long long)id, health,
		       lc_str(job, "error_type", "unknown"), msg ? msg : "no reason given");
		ret = LABCTL_INCOMPLETE;
	}
	json_decref(job);
	return ret;
}

static int stopped_following(int64_t id)
{
	fflush(stdout);
	fprintf(stderr, "\nlabctl: stopped following job %lld; it keeps running", (long long)id);
	fprintf(stderr, " ('labctl cancel %lld' stops it)\n", (long long)id);
	return LABCTL_INTERRUPTED;
}

/*
 * While job @id is queued: what it waits for (its place in the queue, the
 * boards it could run on), again each time that changes.  0 once it left
 * the queue (started, canceled), else the exit status.
 */
static int wait_queued(struct labctl *lc, int64_t id, bool quiet)
{
	char path[64], last[1024] = "";
	const char *text;
	json_t *job;
	int ret;

	snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	for (;;) {
		job = NULL;
		ret = lc_json(lc, "GET", path, NULL, &job);
		if (ret)
			return ret;
		if (strcmp(lc_str(job, "state", ""), "queued")) {
			json_decref(job);
			return 0;
		}
		text = lc_str(json_object_get(job, "waiting"), "text", "");
		if (!quiet && strcmp(text, last))
			fprintf(stderr, "labctl: job %lld queued: %s\n", (long long)id, text);
		snprintf(last, sizeof(last), "%s", text);
		json_decref(job);
		if (lc_pause(LABCTL_QUEUE_POLL_MS))
			return LABCTL_INTERRUPTED;
	}
}

int lc_follow_job(struct labctl *lc, int64_t id, bool quiet)
{
	char path[96];
	int ret;

	ret = wait_queued(lc, id, quiet);
	if (ret == LABCTL_INTERRUPTED)
		return stopped_following(id);
	if (ret)
		return ret;

	snprintf(path, sizeof(path), "/jobs/%lld/log?follow=1&labd=1", (long long)id);
	ret = lc_stream(lc, path, quiet ? discard : write_safe, NULL);
	if (ret == LABCTL_INTERRUPTED)
		return stopped_following(id);
	if (ret)
		return ret;
	return print_outcome(lc, id);
}

int cmd_log(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "timestamps", no_argument, NULL, 't' },
		{ "labd", no_argument, NULL, 'l' },
		{ "raw", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool follow = false, timestamps = false, labd = false, raw = false;
	char path[128];
	int64_t id;
	int c, ret;

	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			follow = true;
			break;
		case 't':
			timestamps = true;
			break;
		case 'l':
			labd = true;
			break;
		case 'r':
			raw = true;
			break;
		case 'h':
			return lc_help(argv[0]);
		default:
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return lc_usage_error(argv[0], "give one job id");
	if (follow && timestamps)
		return lc_usage_error(argv[0], "--timestamps cannot be combined with --follow");
	ret = lc_parse_id(argv[0], argv[optind], &id);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/jobs/%lld/log?follow=%d&timestamps=%d&labd=%d",
		 (long long)id, follow, timestamps, labd);
	ret = lc_stream(lc, path, raw ? write_raw : write_safe, NULL);
	if (ret == LABCTL_INTERRUPTED && follow)
		return stopped_following(id);
	return ret;
}
