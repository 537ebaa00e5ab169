/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rootfs.h -- NFS root file systems: the lab's export directory, the jobs'
 * trees in it, unpacking archives into them and removing them
 *
 * rootfs/ owns labd.conf's `nfs` group and the directory it names, which the
 * lab's NFS server exports (labd never serves NFS): rootfs_params.c (the
 * group, checked), rootfs.c (the export directory: the trees, their sizes,
 * the jobs waiting for room, the trees a killed labd left), rootfs_unpack.c
 * (one archive unpacked into a tree from the loop, streamed from a download
 * or read from a file), rootfs_helper.c and rootfs_resolve.c (the child that
 * does the unpacking and the removing: `labd rootfs-helper`).
 *
 * Nothing heavy runs in the loop: the loop moves a download's bytes into a
 * pipe (hashing them on the way) and reads the helper's progress lines; the
 * helper, labd started again as a child, decompresses and writes the files
 * with libarchive, and removes trees.  doc/nfs.md is the admin's side.
 *
 *	struct rootfs_tree *t;
 *	r = rootfs_tree_request(fs, job_id, 0, on_tree, ud, &t, &rq, err, sizeof(err));
 *		(0: t is there; 1: queued, on_tree(t) when there is room; < 0: err)
 *	r = rootfs_unpack_start(fs, &(struct rootfs_unpack_req){ .tree = t, .url = ...,
 *				.http = http }, on_unpacked, ud, &op);
 *	... on_unpacked(res): res->err, res->msg
 *	rootfs_tree_release(t);		(the job ended: removed in the background)
 */
#ifndef LABD_ROOTFS_H
#define LABD_ROOTFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libconfig.h>

#include "core/diag.h"

struct http_client;
struct loop;
struct rootfs;
struct rootfs_tree;
struct rootfs_request;
struct rootfs_unpack;

#define ROOTFS_HELPER_COMMAND "rootfs-helper"	/* labd's internal command: argv[1] */
#define ROOTFS_PROGRESS_STEP (1ULL << 20)	/* bytes of file data between progress lines */
#define ROOTFS_REMOVING_PREFIX ".labd-removing-"	/* a tree being removed */
#define ROOTFS_MSG_MAX 1024

/* ---- labd.conf's `nfs` group (rootfs_params.c) ---- */

/** The `nfs` group; strings owned, NULL when unset. */
struct rootfs_params {
	char *export_dir;	/* absolute; NULL: the lab has no NFS roots */
	char *export_path;	/* the directory as boards mount it; default export_dir */
	char *server_ip;	/* {NFS_SERVER_IP}; NULL: labd.conf's server_ip */
	char *mount_options;	/* {NFS_MOUNT_OPTIONS} without its comma, or NULL */
	uint64_t max_size;	/* bytes of file data in all trees; 0: no limit */
	bool fail_when_full;	/* when_full = "fail"; default "wait" */
};

/**
 * rootfs_params_parse() - the `nfs` group @g (NULL: none, *@p is then all
 * unset) into @p; relative paths are relative to the directory of
 * @conf_file (labd.conf, absolute).  Every problem goes to @diag as
 * "FILE:LINE: cause".  Returns 0, -EINVAL or -ENOMEM; release @p with
 * rootfs_params_release() in any case.
 */
int rootfs_params_parse(const config_setting_t *g, const char *conf_file,
			struct rootfs_params *p, struct diag *diag);

/**
 * rootfs_params_check_dir() - whether @p's export_dir is a directory labd
 * may write into: -ENOENT, -ENOTDIR or -EACCES with the reason in @diag
 * (at @g's line), else 0 (also without an export_dir).
 */
int rootfs_params_check_dir(const config_setting_t *g, const struct rootfs_params *p,
			    struct diag *diag);

/** rootfs_params_copy() - @dst (released) becomes a copy of @src: 0 or -ENOMEM. */
int rootfs_params_copy(struct rootfs_params *dst, const struct rootfs_params *src);

void rootfs_params_release(struct rootfs_params *p);

/* ---- the export directory and its trees (rootfs.c) ---- */

struct rootfs_deps {
	struct loop *loop;
	/* the program that is the helper, started as `<helper> rootfs-helper ...`:
	 * labd itself ("/proc/self/exe"), or a test program that answers it */
	const char *helper;
};

/**
 * rootfs_new() - the export directory of @p (copied; export_dir set):
 * entries named like labd's trees, left by a labd that was killed, are
 * removed (by helper children); whether labd may keep owners and make
 * device nodes is said once in the log.  Returns 0 or a negative errno.
 */
int rootfs_new(const struct rootfs_deps *deps, const struct rootfs_params *p,
	       struct rootfs **ret);

/**
 * rootfs_set_params() - labd.conf reloaded: the new limits, address and
 * options for the trees asked for from now on.  A changed export_dir is
 * not taken (logged): it needs a restart.
 */
void rootfs_set_params(struct rootfs *fs, const struct rootfs_params *p);

/** rootfs_params_of() - the parameters in use (borrowed). */
const struct rootfs_params *rootfs_params_of(const struct rootfs *fs);

/** rootfs_free() - free; trees still held stay on disk (the next start removes them). */
struct rootfs *rootfs_free(struct rootfs *fs);

/** rootfs_used() - bytes of file data in the trees, those being removed too. */
uint64_t rootfs_used(const struct rootfs *fs);

/** rootfs_tree_count() - trees held by jobs, and being removed (@ret_removing). */
size_t rootfs_tree_count(const struct rootfs *fs, size_t *ret_removing);

/** rootfs_privileged() - whether helpers keep owners and make device nodes. */
bool rootfs_privileged(const struct rootfs *fs);

/** A tree for a request that waited, or NULL and why there is none. */
typedef void (*rootfs_tree_fn)(struct rootfs_tree *t, const char *err, void *userdata);

/**
 * rootfs_tree_request() - a fresh, empty tree for job @job_id
 * @needed: bytes the tree is known to need (a root stopped by the limit
 *	    before), 0 when unknown
 *
 * Returns 0 with the tree in *@ret when the trees are below max_size with
 * @needed more (or there is no limit); 1 when they are not and the lab
 * waits (when_full): @fn gets the tree later, from the loop, unless
 * rootfs_request_cancel() is called on *@ret_rq first; -ENOSPC when they
 * are not and the lab fails, or another negative errno; the reason is then
 * in @err.
 */
int rootfs_tree_request(struct rootfs *fs, int64_t job_id, uint64_t needed, rootfs_tree_fn fn,
			void *userdata, struct rootfs_tree **ret, struct rootfs_request **ret_rq,
			char *err, size_t errlen);

/** rootfs_request_cancel() - stop waiting (no callback); accepts NULL. */
void rootfs_request_cancel(struct rootfs_request *rq);

/** rootfs_tree_dir() - the tree on this host (borrowed). */
const char *rootfs_tree_dir(const struct rootfs_tree *t);

/** rootfs_tree_mount_path() - the tree as boards mount it: {NFSROOTFS} (borrowed). */
const char *rootfs_tree_mount_path(const struct rootfs_tree *t);

/** rootfs_tree_bytes() - bytes of file data unpacked into it so far. */
uint64_t rootfs_tree_bytes(const struct rootfs_tree *t);

/**
 * rootfs_tree_grow() - @bytes more were unpacked into @t: -ENOSPC (the
 * reason in @err) when the trees are now over max_size, else 0.
 */
int rootfs_tree_grow(struct rootfs_tree *t, uint64_t bytes, char *err, size_t errlen);

/**
 * rootfs_tree_fits_alone() - whether @t's bytes so far are within max_size:
 * when they are not, waiting for other trees to go cannot help.
 */
bool rootfs_tree_fits_alone(const struct rootfs_tree *t);

/**
 * rootfs_tree_release() - the job is done with @t: renamed out of the way
 * at once, removed by a helper child; its bytes count until that ended.
 * Accepts NULL.
 */
void rootfs_tree_release(struct rootfs_tree *t);

/**
 * rootfs_spawn_helper() - start `<helper> rootfs-helper @args...` with
 * @in_fd as its fd 3 (-1: none) and stdout and stderr into @out_fd.
 * Returns 0 with the pid, or a negative errno.
 */
int rootfs_spawn_helper(const struct rootfs *fs, char *const *args, int in_fd, int out_fd,
			pid_t *ret_pid);

struct loop *rootfs_loop(const struct rootfs *fs);

/* ---- unpacking an archive into a tree (rootfs_unpack.c) ---- */

/** What to unpack where; strings are copied. */
struct rootfs_unpack_req {
	struct rootfs_tree *tree;
	const char *url;	/* stream this download (through @http) ... */
	struct http_client *http;
	uint64_t timeout;	/* of the download, usec; 0: 60 s */
	uint64_t max_download;	/* bytes the download may have; 0: no limit */
	const char *file;	/* ... or unpack this file */
	const char *what;	/* names it in reasons: "the root file system" */
	const char *prefix;	/* the archive's directory that is unpacked, or NULL */
	const char *into;	/* the tree's directory it goes into ("/"), or NULL */
	const char *sha256sum;	/* lower-case hex, checked on the download, or NULL */
	const char *md5sum;
	const char *sha512sum;
	/* optional: the download is complete and checked (the unpacking goes on) */
	void (*downloaded)(uint64_t bytes, void *userdata);
};

/** Who is to blame for a failure. */
enum rootfs_blame {
	ROOTFS_BLAME_LAB,	/* download, checksum, disk, size limit: infrastructure */
	ROOTFS_BLAME_ARCHIVE,	/* corrupt, truncated or hostile archive: the job's */
};

/** What an unpack gave; borrowed for the callback's duration. */
struct rootfs_unpack_result {
	int err;			/* 0, or a negative errno (-ENOSPC: the size limit) */
	enum rootfs_blame blame;
	const char *msg;		/* when err: one line naming the cause */
	uint64_t download_bytes;	/* bytes downloaded (0 for a file) */
	const char *sha256;		/* of the download, hex, or "" */
	uint64_t bytes;			/* bytes of file data written */
	uint64_t entries;		/* archive entries written */
	uint64_t devices_skipped;	/* device nodes left out (not privileged) */
	uint64_t usec;			/* from the start to the helper's end */
};

typedef void (*rootfs_unpack_fn)(const struct rootfs_unpack_result *res, void *userdata);

/**
 * rootfs_unpack_start() - unpack @req's archive into its tree; @fn is
 * called once from the loop unless canceled.  On failure the tree holds
 * what was written so far: the caller releases it.  Returns 0 or a
 * negative errno (nothing started, no callback).
 */
int rootfs_unpack_start(struct rootfs *fs, const struct rootfs_unpack_req *req,
			rootfs_unpack_fn fn, void *userdata, struct rootfs_unpack **ret);

/** rootfs_unpack_cancel() - stop (download canceled, helper killed, no callback); NULL ok. */
void rootfs_unpack_cancel(struct rootfs_unpack *u);

/* ---- the helper (rootfs_helper.c), run as `labd rootfs-helper ...` ---- */

/**
 * rootfs_helper_main() - the child's program: @argv[0] is "rootfs-helper"
 *
 *	rootfs-helper unpack --tree DIR [--into SUBDIR] [--prefix PREFIX]
 *		the archive (any compression libarchive reads) on fd 3, read to
 *		its end; prints "progress BYTES" lines, then "done BYTES ENTRIES
 *		DEVICES_SKIPPED", or "error archive|lab REASON"
 *	rootfs-helper remove DIR
 *		removes DIR and all below it, on its file system only
 *
 * Returns the exit status: 0, 1 (failed, reason printed), 2 (usage).
 */
int rootfs_helper_main(int argc, char **argv);

/** rootfs_have_privileges() - whether this process may chown and mknod (root's rights). */
bool rootfs_have_privileges(void);

#endif
