// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store-fill.c -- the benchmark's history: many jobs written straight into
 * a state directory's store, through the store interface, while labd is
 * stopped
 *
 *   store-fill STATE_DIR COUNT finished|queued DEVICE_TYPE [BOARDS]
 *
 * "finished" jobs ran on one of BOARDS boards (sim-000 ...) and ended
 * complete, a few incomplete; "queued" jobs wait.  Writes go in
 * transactions of 10000 jobs.  Prints the time it took.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/diag.h"
#include "store/store.h"

#define FILL_BATCH 10000

static const char definition[] =
	"job_name: history\n"
	"device_type: sim-uboot\n"
	"timeouts: {job: {minutes: 10}}\n"
	"actions:\n"
	"- boot: {method: minimal, prompts: ['root@sim:~# ']}\n"
	"- test: {interactive: [{name: t, prompts: ['root@sim:~# '],"
	" script: [{command: 'uname -a', name: uname}]}]}\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fill_one(struct store *st, long i, bool finished, const char *type, long boards)
{
	char board[32];
	struct job_record rec = {
		.name = "history",
		.device_type = (char *)type,
		.tags = "[]",
		.priority = 50,
		.submitted = 1700000000000000ULL + (uint64_t)i * 1000,
		.state = JOB_STATE_QUEUED,
		.definition = (char *)definition,
		.format = "yaml",
		.filename = "history.yaml",
		.submitter = i % 3 ? "kernelci" : "alice",
		.retries_left = 1,
	};
	int err;

	if (finished) {
		snprintf(board, sizeof(board), "sim-%03ld", i % boards);
		rec.state = JOB_STATE_FINISHED;
		rec.device = board;
		rec.started = rec.submitted + 1000000;
		rec.ended = rec.started + 60000000;
		rec.health = i % 50 ? JOB_HEALTH_COMPLETE : JOB_HEALTH_INCOMPLETE;
		rec.error_type = i % 50 ? ERROR_NONE : ERROR_INFRASTRUCTURE;
	}
	err = store_job_insert(st, &rec);
	if (!err && finished)
		err = store_job_finish(st, rec.id, rec.health, rec.error_type, NULL, rec.ended);
	return err;
}

int main(int argc, char **argv)
{
	struct store_params p = { 0 };
	struct diag diag = DIAG_INIT;
	struct store *st = NULL;
	long count, boards, i;
	bool finished;
	double t0;
	int err;

	if (argc < 5) {
		fprintf(stderr, "usage: store-fill STATE_DIR COUNT finished|queued DEVICE_TYPE "
				"[BOARDS]\n");
		return 2;
	}
	p.state_dir = argv[1];
	count = strtol(argv[2], NULL, 10);
	finished = !strcmp(argv[3], "finished");
	boards = argc > 5 ? strtol(argv[5], NULL, 10) : 64;
	err = store_open(&p, &st, &diag);
	diag_release(&diag);
	if (err < 0) {
		fprintf(stderr, "store-fill: cannot open the store in '%s': %s\n", argv[1],
			strerror(-err));
		return 1;
	}
	t0 = now_s();
	for (i = 0; !err && i < count; i++) {
		if (i % FILL_BATCH == 0)
			err = store_begin(st);
		if (!err)
			err = fill_one(st, i, finished, argv[4], boards > 0 ? boards : 1);
		if (!err && (i % FILL_BATCH == FILL_BATCH - 1 || i == count - 1))
			err = store_commit(st);
	}
	store_close(st);
	if (err < 0) {
		fprintf(stderr, "store-fill: job %ld: %s\n", i, strerror(-err));
		return 1;
	}
	printf("%ld %s jobs in %.1f s\n", count, argv[3], now_s() - t0);
	return 0;
}
