/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storebed.h -- what the store tests share (test-store.c, test-store-sqlite.c):
 * a state directory per test below one temporary directory (removed at
 * exit), opening a store there through the interface, a job, and callbacks
 * that collect what a listing passes
 */
#ifndef LABD_STOREBED_H
#define LABD_STOREBED_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/diag.h"
#include "store/store.h"

static char tmpdir[64];
static char pathbuf[160];

static inline int remove_entry(const char *path, const struct stat *sb, int flag,
			       struct FTW *ftw)
{
	return remove(path);
}

static inline void remove_tmpdir(void)
{
	nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* tmp_path() - @name in the test's temporary directory (a static buffer). */
static inline const char *tmp_path(const char *name)
{
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/test-store.XXXXXX");
		if (!mkdtemp(tmpdir))
			abort();
		atexit(remove_tmpdir);
	}
	snprintf(pathbuf, sizeof(pathbuf), "%s/%s", tmpdir, name);
	return pathbuf;
}

/* state_dir() - the state directory @name, created if needed (a static buffer). */
static inline const char *state_dir(const char *name)
{
	const char *dir = tmp_path(name);

	mkdir(dir, 0700);
	return dir;
}

/* open_at() - store_open() of the default driver in state directory @dir. */
static inline int open_at(const char *dir, struct store **ret)
{
	struct store_params p = { .state_dir = dir };
	struct diag diag = DIAG_INIT;
	int r = store_open(&p, ret, &diag);

	diag_release(&diag);
	return r;
}

/* open_new() - a store in a new state directory @name, or NULL. */
static inline struct store *open_new(const char *name)
{
	struct store *st = NULL;

	if (open_at(state_dir(name), &st) < 0)
		return NULL;
	return st;
}

static inline int64_t add_job(struct store *st, const char *name, int priority)
{
	struct job_record rec = {
		.name = (char *)name,
		.device_type = "qemu-arm64",
		.priority = priority,
		.submitted = 1000,
		.definition = "job_name: x\n",
		.format = "yaml",
		.retries_left = 2,
	};

	if (store_job_insert(st, &rec) < 0)
		return -1;
	return rec.id;
}

/* Collects the ids (and names) a listing passes to its callback. */
struct seen {
	int64_t ids[64];
	char names[64][16];
	int n;
};

static inline int seen_job(const struct job_record *rec, void *ud)
{
	struct seen *s = ud;

	if (s->n < 64) {
		s->ids[s->n] = rec->id;
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", rec->name ? rec->name : "");
	}
	s->n++;
	return 0;
}

static inline int seen_device(const struct device_record *rec, void *ud)
{
	struct seen *s = ud;

	if (s->n < 64)
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", rec->name);
	s->n++;
	return 0;
}

#endif
