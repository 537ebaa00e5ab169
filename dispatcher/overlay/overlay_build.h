/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * overlay_build.h -- a job's test overlay: how it reaches the board, and building it
 *
 * Jobs whose test definitions come from git (their scripts call files of the
 * repository) or whose boot gives a transfer_overlay get an overlay: one
 * archive (overlay.h) holding, in LAVA's layout,
 *
 *	lava-<job>/bin/			labd's helpers (testdef_helpers())
 *	lava-<job>/tests/<n>_<name>/	a git definition's repository tree at the
 *					asked revision (empty for the others)
 *	lava-<job>/tests/<n>_<name>/run.sh  the definition's script
 *					(testdef_script_text()), run from there
 *
 * plus, imported at the root, the archives the caller adds (the deploy's
 * kernel modules).  overlay_plan() reads from the job how the overlay gets
 * to the board:
 *
 *   IMAGE     the deploy before that boot has a root image with apply-overlay
 *             (a tmpfs deploy, ext2/3/4): a tar.gz written into the job's copy
 *             of the image (imagefs.h), with the deploy's modules
 *   NFSROOT   the deploy before that boot unpacks an NFS root: a tar.gz
 *             unpacked into the root (rootfs/rootfs.h), as LAVA writes it there
 *   RAMDISK   the boot before the first test boots a ramdisk that a tftp or
 *             tmpfs deploy staged: a cpio.gz appended to it (ramdisk.h)
 *   TRANSFER  that boot has a transfer_overlay: the board downloads a tar.gz
 *             from labd's HTTP server and unpacks it
 *   TYPED     otherwise: the tar.gz typed on the console in base64, when it
 *             is no larger than OVERLAY_TYPED_MAX
 *   NONE      every definition inline or from a URL, and no transfer_overlay:
 *             no overlay, the definitions are typed (testdef.h)
 *
 * overlay_build_start() builds one, from the loop: each git repository is
 * updated once per build (gitcache.h), URL definitions are fetched with the
 * daemon's HTTP client, every definition is checked as a "Lava-Test Test
 * Definition 1.0" document (testdef.h), trees are streamed in, a bounded
 * amount per loop turn.  The result carries the parsed definitions, in the
 * job's order, for the test actions to read their results with.
 */
#ifndef LABD_OVERLAY_BUILD_H
#define LABD_OVERLAY_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jobstate.h"
#include "overlay/overlay.h"

struct gitcache;
struct http_client;
struct job;
struct loop;
struct overlay_build;
struct testdef;

#define OVERLAY_TYPED_MAX (96 * 1024)	/* bytes of an overlay typed in base64 */
#define OVERLAY_STEP_BUDGET (1 << 20)	/* bytes imported per loop turn */
#define OVERLAY_BASE_FMT "lava-%lld"	/* the overlay's top directory: /lava-<job> on the board */

enum overlay_delivery {
	OVERLAY_DELIVERY_NONE,
	OVERLAY_DELIVERY_RAMDISK,
	OVERLAY_DELIVERY_TRANSFER,
	OVERLAY_DELIVERY_TYPED,
	OVERLAY_DELIVERY_IMAGE,
	OVERLAY_DELIVERY_NFSROOT,
};

struct overlay_plan {
	enum overlay_delivery delivery;
	size_t n_definitions;	/* of all the job's test actions */
	size_t first_test;	/* action index of the first test with definitions */
	size_t builder;		/* action index building it: the deploy before the first
				 * test's boot, else that test */
	size_t boot;		/* the boot before the first test (TRANSFER: its commands) */
	size_t deploy;		/* RAMDISK, IMAGE, NFSROOT: the deploy whose ramdisk, image
				 * or root gets it */
};

/** overlay_plan() - how @job's overlay reaches the board. */
void overlay_plan(const struct job *job, struct overlay_plan *plan);

/** overlay_delivery_name() - "none", "ramdisk", "transfer", "typed", "image". */
const char *overlay_delivery_name(enum overlay_delivery d);

struct overlay_build_deps {
	struct loop *loop;
	struct gitcache *git;
	struct http_client *http;
	const char *artifact_dir;	/* file:// definitions must be below it; NULL: none */
};

struct overlay_build_req {
	const struct job *job;
	int64_t job_id;
	const char *work_dir;	/* scratch files (trees as tar) go here */
	const char *path;	/* the overlay to write */
	enum overlay_format format;
	bool tests;		/* the helpers and the definitions; false: only @imports */
	char *const *imports;	/* strv of archives imported below @import_prefix, or NULL */
	const char *import_prefix;	/* "" or NULL: the root; "usr" ... (modules' path) */
	const char *os;		/* the deploy's os, for install.deps */
	const char *storage;	/* the board's storage_info (testdef_storage_info()), or NULL */
};

/** What a build gave; the callback may take @defs (set the pointer to NULL). */
struct overlay_build_result {
	int err;
	enum error_type type;	/* when err: infrastructure (a fetch, the disk), job (a bad
				 * definition, an unknown revision) or bug */
	const char *msg;	/* when err: one line */
	struct testdef **defs;	/* when !err and tests: n of them, the job's order */
	size_t n;
	char **commits;		/* strv, one per definition: the commit of a git one, "" */
	uint64_t size;		/* bytes of the overlay file */
	uint64_t bytes;		/* bytes of file data in it */
	uint64_t usec;		/* time the build took */
	uint64_t git_usec;	/* of which in git: fetching, resolving, archiving */
	uint64_t fetch_usec;	/* of which cloning or fetching */
};

typedef void (*overlay_build_fn)(struct overlay_build_result *res, void *userdata);

/**
 * overlay_build_start() - build @req's overlay; @fn is called once from the
 * loop unless canceled.  Strings of @req are copied; the job must outlive
 * the build.  Returns 0 or a negative errno (no callback).
 */
int overlay_build_start(const struct overlay_build_deps *deps, const struct overlay_build_req *req,
			overlay_build_fn fn, void *userdata, struct overlay_build **ret);

/** overlay_build_cancel() - stop (no callback), removing what was written; accepts NULL. */
void overlay_build_cancel(struct overlay_build *b);

/** overlay_build_result_release() - free what the callback did not take. */
void overlay_build_result_release(struct overlay_build_result *res);

#endif
