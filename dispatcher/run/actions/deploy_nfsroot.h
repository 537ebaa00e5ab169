/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deploy_nfsroot.h -- the NFS root of a deploy action (action_deploy.c):
 * a tree of the lab's export directory, the root unpacked into it while it
 * downloads, then the modules, the root's overlays and the test overlay
 *
 * The deploy starts it with its downloads; the root counts as one of them
 * (@root_done when it is in).  Once every download is staged, the deploy
 * hands over the files to unpack into the root (deploy_nfsroot_extras())
 * and forwards its RUN_EVENT_DONE events here until the root is ready: the
 * substitution variables are then set ({NFSROOTFS}, {NFS_SERVER_IP},
 * {NFS_MOUNT_OPTIONS}, {EXTRA_NFSROOT_ARGS}, doc/nfs.md).  The tree is the
 * run's (run_set_nfs_tree()): removed when the job ends, at once when the
 * root fails.  Boot phases: nfsroot-download, nfsroot-unpacked, nfsroot-ready.
 */
#ifndef LABD_DEPLOY_NFSROOT_H
#define LABD_DEPLOY_NFSROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/jobstate.h"

struct deploy_nfsroot;
struct job_artifact;
struct run;
struct run_event;

/** The root is unpacked (@error NULL), or not: why, and whose fault. */
typedef void (*deploy_nfsroot_fn)(struct deploy_nfsroot *nr, const char *error,
				  enum error_type type, void *userdata);

/**
 * deploy_nfsroot_start() - unpack @art (the deploy's nfsrootfs) into a fresh
 * tree, waiting for room in the export directory when the lab says so;
 * @fn is called once, from the loop, unless deploy_nfsroot_free() comes
 * first.  Returns 0, or a negative errno with the run failed (the reason).
 */
int deploy_nfsroot_start(struct run *r, const struct job_artifact *art, deploy_nfsroot_fn fn,
			 void *userdata, struct deploy_nfsroot **ret);

/** A staged file to unpack into the root. */
struct deploy_nfsroot_extra {
	const char *file;	/* the archive, as the deploy staged it */
	const char *into;	/* where in the root: "/", "/opt/kselftest" */
	const char *what;	/* in reasons: "the modules" */
};

/**
 * deploy_nfsroot_extras() - unpack @extras (copied), in order, then the
 * job's test overlay when @tests, into the root.  A RUN_EVENT_DONE follows
 * each step: give them to deploy_nfsroot_event().  Returns 0 or -ENOMEM.
 */
int deploy_nfsroot_extras(struct deploy_nfsroot *nr, const struct deploy_nfsroot_extra *extras,
			  size_t n, bool tests);

/**
 * deploy_nfsroot_event() - a RUN_EVENT_DONE of the extras: 0 (busy, more
 * events follow), 1 (the root is ready, variables set), or -1 (failed: the
 * run failed with the reason and its type).
 */
int deploy_nfsroot_event(struct deploy_nfsroot *nr, const struct run_event *ev);

/** deploy_nfsroot_free() - stop what runs (no callback); the tree stays the run's. */
void deploy_nfsroot_free(struct deploy_nfsroot *nr);

#endif
