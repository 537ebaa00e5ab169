/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gitcache.h -- bare mirrors of the git repositories test definitions come from
 *
 * Jobs name repositories by URL (`from: git`).  The lab host keeps one bare
 * mirror per URL under the cache directory (<state_dir>/git/<hash>.git, the
 * hash of the URL), so a job costs one incremental fetch, not a clone.  All
 * work is done by the `git` program run as children of the loop (child.h):
 * labd never blocks on the network or on git.
 *
 * One checkout, gitcache_checkout(), is:
 *   1. update (when asked): `git clone --bare` into <hash>.git.tmp, renamed
 *      when complete, or `git fetch --prune` of the branches and tags;
 *   2. resolve the revision (a commit, tag or branch; NULL: the default
 *      branch) to a commit with `git rev-parse`; a full commit id no branch
 *      or tag holds is fetched by id once;
 *   3. `git archive --format=tar` of that commit into the caller's file: the
 *      tree, without a work tree and without .git.
 * The caller then streams the tar into the overlay (overlay.h).
 *
 * Limits: each git command gets `timeout`; a mirror larger than `max_size`
 * (measured while it is cloned or fetched, and after) is killed and deleted.
 * git never prompts (GIT_TERMINAL_PROMPT=0).  Checkouts of one URL run one
 * git command at a time, in order; different URLs run in parallel.  Failures
 * carry a one-line reason naming the URL and git's last line:
 *   "cannot fetch 'https://x/y.git': git exited with status 128: fatal: ..."
 * The allow-list of URLs is the job checker's (job_check_git_allow()), not
 * this module's.
 */
#ifndef LABD_GITCACHE_H
#define LABD_GITCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct gitcache;
struct gitcache_op;

#define GITCACHE_SIZE_POLL (1000 * 1000ULL)	/* usec between size checks of a fetch */

struct gitcache_opts {
	const char *dir;	/* where the mirrors live; created if missing */
	uint64_t max_size;	/* bytes of one mirror; 0: no limit */
	uint64_t timeout;	/* usec one git command may take; 0: no limit */
	const char *git;	/* the program; NULL: "git" from $PATH */
};

/** What a checkout gave; strings are borrowed for the duration of the callback. */
struct gitcache_result {
	int err;		/* 0, or a negative errno */
	const char *msg;	/* when err: the one-line reason */
	const char *commit;	/* when !err: the commit archived, 40 hex digits */
	bool updated;		/* the mirror was cloned or fetched */
	uint64_t fetch_usec;	/* the clone or fetch took (0: none) */
	uint64_t size;		/* bytes of the mirror */
};

typedef void (*gitcache_fn)(const struct gitcache_result *res, void *userdata);

/**
 * gitcache_new() - a cache in @o->dir (stale *.tmp clones of a crash removed)
 * @ret: freed with gitcache_free()
 *
 * Returns 0 or a negative errno.
 */
int gitcache_new(struct loop *loop, const struct gitcache_opts *o, struct gitcache **ret);

/** gitcache_set_limits() - new limits (a reload), for the checkouts started after. */
void gitcache_set_limits(struct gitcache *c, uint64_t max_size, uint64_t timeout);

/** gitcache_free() - cancel every checkout (no callbacks) and free; accepts NULL. */
struct gitcache *gitcache_free(struct gitcache *c);

/**
 * gitcache_checkout() - the tree of @rev of @url as a tar file at @tar_path
 * @rev: commit id, tag or branch; NULL for the repository's default branch
 * @update: fetch first (a missing mirror is always cloned)
 * @fn: called once, from the loop, unless canceled
 * @ret: the operation, for gitcache_cancel(); valid until @fn is called
 *
 * Returns 0, or a negative errno (nothing started, no callback).
 */
int gitcache_checkout(struct gitcache *c, const char *url, const char *rev, bool update,
		      const char *tar_path, gitcache_fn fn, void *userdata,
		      struct gitcache_op **ret);

/** gitcache_cancel() - stop a checkout (its git killed, no callback); accepts NULL. */
void gitcache_cancel(struct gitcache_op *op);

/** gitcache_mirror_dir() - where the mirror of @url lives (caller frees), or NULL. */
char *gitcache_mirror_dir(const struct gitcache *c, const char *url);

#endif
