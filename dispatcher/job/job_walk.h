/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_walk.h -- the per-action schema walkers behind job_parse() (private)
 *
 * job.c walks the top level and the keys every action may carry, then hands
 * the action's mapping to the walker of its kind.  Each walker is called with
 * doc->path at the action ("actions[2].boot"), reports every problem through
 * @doc and fills @ret as far as it could: the caller frees it with the
 * matching release function whatever the result.  Returns 0 or -EINVAL.
 */
#ifndef LABD_JOB_WALK_H
#define LABD_JOB_WALK_H

#include "job/job.h"
#include "job/job_doc.h"

/* Keys every action may carry, read by job.c (the walkers accept them). */
extern const struct job_doc_key job_action_keys[];

int job_deploy_parse(struct job_doc *doc, const json_t *obj, struct job_deploy *ret);
void job_deploy_release(struct job_deploy *d);

/* @job: the job so far (context), for what the boot takes from it. */
int job_boot_parse(struct job_doc *doc, const json_t *obj, const struct job *job,
		   struct job_boot *ret);
void job_boot_release(struct job_boot *b);

/* The top-level notify block of @obj (job_notify.c); @ret filled as far as it could. */
int job_notify_parse(struct job_doc *doc, const json_t *obj, struct job_notify *ret);
void job_notify_release(struct job_notify *n);

int job_test_parse(struct job_doc *doc, const json_t *obj, struct job_test *ret);
void job_test_release(struct job_test *t);

/* QEMU arguments of image_arg and context extra_options (job_qemu.c) */

/** job_qemu_split() - @text's words (a shell's quoting, nothing expanded) added to @words;
 * problems reported at the current path's @key. */
int job_qemu_split(struct job_doc *doc, const char *key, const char *text, char ***words);

/**
 * job_qemu_parse() - the options of @words into @q, each one of the allowed
 * set; @files: whether they may name images (-kernel {label}, -drive ...):
 * image_arg may, extra_options not.  Returns 0 or -EINVAL (reported at @key).
 */
int job_qemu_parse(struct job_doc *doc, const char *key, char *const *words,
		   struct job_qemu_args *q, bool files);

/** job_qemu_context() - context key @key (extra_options or memory), value @v, into @q. */
int job_qemu_context(struct job_doc *doc, const char *key, const json_t *v,
		     struct job_qemu_args *q);

void job_qemu_release(struct job_qemu_args *q);

#endif
