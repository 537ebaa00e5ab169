// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rootfs.c -- the NFS export directory: the jobs' trees, their size, the
 * jobs waiting for room, and removing trees (a helper child each)
 *
 * A tree is <export_dir>/<job id>-XXXXXX (mkdtemp()).  Released, it is
 * renamed to <export_dir>/.labd-removing-<name> at once (a new job never
 * sees it) and removed by `labd rootfs-helper remove`; its bytes count until
 * that child ended.  At start, every entry named like either, left by a
 * labd that was killed, is removed the same way: nothing else of the
 * directory is touched.
 */
#include "rootfs/rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/child.h"
#include "core/log.h"
#include "core/loop.h"

#define TREE_SUFFIX "XXXXXX"

struct rootfs_tree {
	struct rootfs *fs;
	char *name;		/* "<job id>-XXXXXX" */
	char *dir;		/* <export_dir>/<name> */
	char *mount_path;	/* <export_path>/<name> */
	uint64_t bytes;
	struct rootfs_tree *next;
};

struct rootfs_request {
	struct rootfs *fs;
	int64_t job_id;
	uint64_t needed;
	rootfs_tree_fn fn;
	void *userdata;
	struct rootfs_request *next;
};

/* A tree being removed: its helper, and the bytes it still holds. */
struct removal {
	struct rootfs *fs;
	uint64_t bytes;
	char *dir;
	struct child_output out;
	struct loop_source *child;
	struct removal *next;
};

struct rootfs {
	struct loop *loop;
	char *helper;
	struct rootfs_params p;
	struct rootfs_tree *trees;
	struct removal *removals;
	struct rootfs_request *waiting;		/* in order */
	struct loop_source *serve;		/* defer: give the waiting their trees */
	uint64_t used;
	bool privileged;
};

static void serve_later(struct rootfs *fs);

/* ---- the helper ---- */

int rootfs_spawn_helper(const struct rootfs *fs, char *const *args, int in_fd, int out_fd,
			pid_t *ret_pid)
{
	char *argv[16];
	size_t n = 0;

	argv[n++] = fs->helper;
	argv[n++] = ROOTFS_HELPER_COMMAND;
	while (*args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	return child_spawn(&(struct child_spawn){ .argv = argv, .out_fd = out_fd,
						  .extra_fd = in_fd, .extra_at = 3 }, ret_pid);
}

struct loop *rootfs_loop(const struct rootfs *fs)
{
	return fs->loop;
}

/* ---- removing trees ---- */

static void removal_free(struct removal *rm)
{
	struct removal **pp;

	for (pp = &rm->fs->removals; *pp && *pp != rm; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = rm->next;
	loop_source_free(rm->child);
	child_output_release(&rm->out);
	free(rm->dir);
	free(rm);
}

static int on_removed(struct loop_source *s, const siginfo_t *si, void *ud)
{
	struct removal *rm = ud;
	struct rootfs *fs = rm->fs;
	char line[256];

	child_output_drain(&rm->out);
	if (si->si_code != CLD_EXITED || si->si_status) {
		child_output_last_line(&rm->out, line, sizeof(line));
		log_error("NFS root '%s' not removed: %s", rm->dir, *line ? line : "the helper failed");
	}
	fs->used -= rm->bytes < fs->used ? rm->bytes : fs->used;
	removal_free(rm);
	serve_later(fs);
	return 0;
}

/* Remove @dir (already out of the way) by a helper child; its @bytes count until then. */
static int remove_dir(struct rootfs *fs, const char *dir, uint64_t bytes)
{
	struct removal *rm = calloc(1, sizeof(*rm));
	char *args[] = { "remove", (char *)dir, NULL };
	pid_t pid;
	int wfd, err;

	if (!rm)
		return -ENOMEM;
	child_output_init(&rm->out);
	rm->fs = fs;
	rm->bytes = bytes;
	rm->dir = strdup(dir);
	err = rm->dir ? child_output_open(&rm->out, fs->loop, "rootfs-remove", &wfd) : -ENOMEM;
	if (!err) {
		err = rootfs_spawn_helper(fs, args, -1, wfd, &pid);
		close(wfd);
	}
	if (!err && (err = loop_add_child(fs->loop, &rm->child, pid, on_removed, rm)) < 0)
		kill(pid, SIGKILL);
	if (err < 0) {
		log_error("NFS root '%s' not removed: %s", dir, strerror(-err));
		free(rm->dir);
		child_output_release(&rm->out);
		free(rm);
		return err;
	}
	loop_source_set_description(rm->child, "rootfs-remove");
	rm->next = fs->removals;
	fs->removals = rm;
	fs->used += bytes;
	return 0;
}

/* Rename <export_dir>/@name out of the way, then remove it in the background. */
static int discard(struct rootfs *fs, const char *name, uint64_t bytes)
{
	char *from = NULL, *to = NULL;
	int err = 0;

	if (asprintf(&from, "%s/%s", fs->p.export_dir, name) < 0 ||
	    asprintf(&to, "%s/%s%s", fs->p.export_dir, ROOTFS_REMOVING_PREFIX, name) < 0)
		err = -ENOMEM;
	else if (!strncmp(name, ROOTFS_REMOVING_PREFIX, strlen(ROOTFS_REMOVING_PREFIX)))
		err = remove_dir(fs, from, bytes);
	else if (rename(from, to) < 0)
		err = -errno;
	else
		err = remove_dir(fs, to, bytes);
	if (err == -ENOMEM || (err < 0 && err != -ENOENT))
		log_error("NFS root '%s' not removed: %s", from ? from : name, strerror(-err));
	free(from);
	free(to);
	return err;
}

/* "<digits>-XXXXXX": a tree of a labd that was killed. */
static bool tree_name(const char *name)
{
	size_t d = strspn(name, "0123456789"), i;

	if (!d || name[d] != '-' || strlen(name + d + 1) != strlen(TREE_SUFFIX))
		return false;
	for (i = d + 1; name[i]; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", name[i]))
			return false;
	return true;
}

/* Trees a killed labd left: removed; nothing else of the directory is touched. */
static void remove_stale(struct rootfs *fs)
{
	DIR *d = opendir(fs->p.export_dir);
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d))) {
		if (!tree_name(e->d_name) && strncmp(e->d_name, ROOTFS_REMOVING_PREFIX,
						     strlen(ROOTFS_REMOVING_PREFIX)))
			continue;
		if (!discard(fs, e->d_name, 0))
			n++;
	}
	if (d)
		closedir(d);
	if (n)
		log_info("NFS export directory '%s': removing %u tree(s) left by a previous labd",
			 fs->p.export_dir, n);
}

/* ---- the export directory ---- */

int rootfs_new(const struct rootfs_deps *deps, const struct rootfs_params *p,
	       struct rootfs **ret)
{
	struct rootfs *fs = calloc(1, sizeof(*fs));
	int err;

	if (!fs)
		return -ENOMEM;
	fs->loop = deps->loop;
	fs->helper = strdup(deps->helper);
	err = fs->helper ? rootfs_params_copy(&fs->p, p) : -ENOMEM;
	if (!err && !fs->p.export_dir)
		err = -EINVAL;
	if (err < 0) {
		rootfs_free(fs);
		return err;
	}
	fs->privileged = rootfs_have_privileges();
	if (!fs->privileged)
		log_warning("NFS roots: labd runs without root's rights (CAP_CHOWN, CAP_MKNOD ...): "
			    "unpacked roots belong to labd's user and have no device nodes "
			    "(doc/nfs.md)");
	remove_stale(fs);
	*ret = fs;
	return 0;
}

void rootfs_set_params(struct rootfs *fs, const struct rootfs_params *p)
{
	struct rootfs_params n = { 0 };

	if (rootfs_params_copy(&n, p) < 0)
		return;
	if (!n.export_dir || strcmp(n.export_dir, fs->p.export_dir)) {
		log_warning("NFS roots: the export directory stays '%s' until labd restarts",
			    fs->p.export_dir);
		free(n.export_dir);
		free(n.export_path);
		n.export_dir = strdup(fs->p.export_dir);
		n.export_path = strdup(fs->p.export_path);
	}
	rootfs_params_release(&fs->p);
	fs->p = n;
	serve_later(fs);
}

const struct rootfs_params *rootfs_params_of(const struct rootfs *fs)
{
	return &fs->p;
}

uint64_t rootfs_used(const struct rootfs *fs)
{
	return fs->used;
}

size_t rootfs_tree_count(const struct rootfs *fs, size_t *ret_removing)
{
	size_t n = 0, m = 0;

	for (const struct rootfs_tree *t = fs->trees; t; t = t->next)
		n++;
	for (const struct removal *rm = fs->removals; rm; rm = rm->next)
		m++;
	if (ret_removing)
		*ret_removing = m;
	return n;
}

bool rootfs_privileged(const struct rootfs *fs)
{
	return fs->privileged;
}

static void tree_free(struct rootfs_tree *t)
{
	free(t->name);
	free(t->dir);
	free(t->mount_path);
	free(t);
}

struct rootfs *rootfs_free(struct rootfs *fs)
{
	if (!fs)
		return NULL;
	while (fs->trees) {
		struct rootfs_tree *t = fs->trees;

		fs->trees = t->next;
		tree_free(t);
	}
	while (fs->removals)
		removal_free(fs->removals);
	while (fs->waiting) {
		struct rootfs_request *rq = fs->waiting;

		fs->waiting = rq->next;
		free(rq);
	}
	loop_source_free(fs->serve);
	rootfs_params_release(&fs->p);
	free(fs->helper);
	free(fs);
	return NULL;
}

/* ---- trees ---- */

/* Whether a tree needing @needed bytes fits beside the others. */
static bool has_room(const struct rootfs *fs, uint64_t needed)
{
	return !fs->p.max_size || (fs->used < fs->p.max_size && needed <= fs->p.max_size - fs->used);
}

static void full_reason(const struct rootfs *fs, char *err, size_t errlen)
{
	size_t removing, n = rootfs_tree_count(fs, &removing);

	snprintf(err, errlen, "the NFS export directory is full: its trees hold %llu bytes, "
		 "max_size is %llu (%zu tree(s) of running jobs, %zu being removed)",
		 (unsigned long long)fs->used, (unsigned long long)fs->p.max_size, n, removing);
}

/* A fresh tree for @job_id. */
static int tree_make(struct rootfs *fs, int64_t job_id, struct rootfs_tree **ret, char *err,
		     size_t errlen)
{
	struct rootfs_tree *t = calloc(1, sizeof(*t));
	int e = -ENOMEM;

	if (t && asprintf(&t->dir, "%s/%lld-" TREE_SUFFIX, fs->p.export_dir,
			  (long long)job_id) < 0)
		t->dir = NULL;
	if (t && t->dir) {
		e = mkdtemp(t->dir) ? 0 : -errno;
		if (!e && chmod(t->dir, 0755) < 0)
			e = -errno;
	}
	if (!e) {
		t->name = strdup(strrchr(t->dir, '/') + 1);
		if (!t->name || asprintf(&t->mount_path, "%s/%s", fs->p.export_path, t->name) < 0) {
			t->mount_path = NULL;
			e = -ENOMEM;
			rmdir(t->dir);
		}
	}
	if (e < 0) {
		snprintf(err, errlen, "cannot make a tree in the NFS export directory '%s': %s",
			 fs->p.export_dir, strerror(-e));
		if (t)
			tree_free(t);
		return e;
	}
	t->fs = fs;
	t->next = fs->trees;
	fs->trees = t;
	*ret = t;
	return 0;
}

int rootfs_tree_request(struct rootfs *fs, int64_t job_id, uint64_t needed, rootfs_tree_fn fn,
			void *userdata, struct rootfs_tree **ret, struct rootfs_request **ret_rq,
			char *err, size_t errlen)
{
	struct rootfs_request *rq, **pp;

	*ret = NULL;
	*ret_rq = NULL;
	if (has_room(fs, needed) && !fs->waiting)
		return tree_make(fs, job_id, ret, err, errlen);
	full_reason(fs, err, errlen);
	if (fs->p.fail_when_full)
		return -ENOSPC;
	rq = calloc(1, sizeof(*rq));
	if (!rq) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*rq = (struct rootfs_request){ fs, job_id, needed, fn, userdata, NULL };
	for (pp = &fs->waiting; *pp; pp = &(*pp)->next)
		;
	*pp = rq;
	*ret_rq = rq;
	return 1;
}

void rootfs_request_cancel(struct rootfs_request *rq)
{
	struct rootfs_request **pp;

	if (!rq)
		return;
	for (pp = &rq->fs->waiting; *pp && *pp != rq; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = rq->next;
	serve_later(rq->fs);	/* the next one may fit now */
	free(rq);
}

/* The waiting get trees, in order, while there is room. */
static int serve(struct loop_source *s, void *ud)
{
	struct rootfs *fs = ud;
	struct rootfs_tree *t;
	char err[ROOTFS_MSG_MAX];

	while (fs->waiting && has_room(fs, fs->waiting->needed)) {
		struct rootfs_request *rq = fs->waiting;

		fs->waiting = rq->next;
		if (tree_make(fs, rq->job_id, &t, err, sizeof(err)) < 0)
			rq->fn(NULL, err, rq->userdata);
		else
			rq->fn(t, NULL, rq->userdata);
		free(rq);
	}
	return 0;
}

static void serve_later(struct rootfs *fs)
{
	if (!fs->waiting)
		return;
	if (!fs->serve && loop_add_defer(fs->loop, &fs->serve, serve, fs) < 0)
		return;
	loop_source_set_description(fs->serve, "rootfs-serve");
	loop_defer_again(fs->serve);
}

const char *rootfs_tree_dir(const struct rootfs_tree *t)
{
	return t->dir;
}

const char *rootfs_tree_mount_path(const struct rootfs_tree *t)
{
	return t->mount_path;
}

uint64_t rootfs_tree_bytes(const struct rootfs_tree *t)
{
	return t->bytes;
}

int rootfs_tree_grow(struct rootfs_tree *t, uint64_t bytes, char *err, size_t errlen)
{
	struct rootfs *fs = t->fs;

	t->bytes += bytes;
	fs->used += bytes;
	if (!fs->p.max_size || fs->used <= fs->p.max_size)
		return 0;
	full_reason(fs, err, errlen);
	return -ENOSPC;
}

bool rootfs_tree_fits_alone(const struct rootfs_tree *t)
{
	return !t->fs->p.max_size || t->bytes <= t->fs->p.max_size;
}

void rootfs_tree_release(struct rootfs_tree *t)
{
	struct rootfs *fs;
	struct rootfs_tree **pp;

	if (!t)
		return;
	fs = t->fs;
	for (pp = &fs->trees; *pp && *pp != t; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = t->next;
	fs->used -= t->bytes < fs->used ? t->bytes : fs->used;
	if (discard(fs, t->name, t->bytes) < 0)
		serve_later(fs);
	tree_free(t);
}
