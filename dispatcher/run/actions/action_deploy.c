// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_deploy.c -- fetch a job's artifacts (kernel, ramdisk, dtb, ...) into
 * the job's TFTP directory (to: tftp) or its image directory (to: tmpfs)
 *
 * Downloads run in parallel through the daemon's HTTP client (libcurl multi
 * inside the loop), stream to disk and are hashed on the way; the sha256sum,
 * md5sum and sha512sum given in the job are checked, and the lab's
 * max_artifact_size bounds each file.  file:// URLs are accepted only below
 * the lab's artifact_dir.  Artifacts with a sha256sum go through the shared cache (deploy_cache.h): a
 * hit is hard-linked (or copied, by a `cp` child) into the job's directory
 * without touching the network.  `compression: gz | xz | bz2 | zstd | zip`
 * artifacts are then decompressed by a child process (gzip, xz, bzip2, zstd;
 * `unzip -p` for a zip, its one file), their output bounded by
 * max_artifact_size too, and staged without the suffix.
 *
 * A root image with apply-overlay (ext2/3/4) gets an archive of the job's
 * test overlay and the deploy's modules (at their `path`) written into it by
 * a child (overlay/imagefs.h), the image copied first when it is the cache's
 * file: the cached download stays as it was.
 *
 * Then the ramdisk (or initrd) gets a second archive appended: the job's
 * test overlay when it travels in the ramdisk, and the deploy's kernel
 * modules (`install_overlay` / `install_modules: false` keep them out); or,
 * when the board downloads the overlay or has it typed, it is built here so
 * that a repository that cannot be fetched fails the job before the boot.
 *
 * An `nfsrootfs` is unpacked while it downloads into a tree of the lab's NFS
 * export directory, then the modules, the root's overlays and the test
 * overlay go in too (deploy_nfsroot.h); a ramdisk still gets the modules.
 *
 * Each artifact becomes a substitution variable named after its label:
 * {KERNEL}, {RAMDISK}, {DTB} ... holding the path the board (TFTP:
 * "<job id>/<file>") or labd (tmpfs: the absolute path) uses.  Any failure
 * is an infrastructure error naming the URL and the HTTP status, except a
 * file URL outside the artifact directory (the job's error).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "config/config.h"
#include "core/fileurl.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "job/job.h"
#include "run/action.h"
#include "run/deploy_cache.h"
#include "overlay/imagefs.h"
#include "overlay/overlay_build.h"
#include "overlay/ramdisk.h"
#include "run/actions/deploy_nfsroot.h"

#define DEPLOY_CHILD_ERR_MAX 256	/* bytes of a helper's stderr quoted in a reason */
#define DEPLOY_MSG_MAX 1024

extern char **environ;

struct deploy_state;

struct download {
	struct run *run;
	struct deploy_state *st;
	const struct job_artifact *art;
	struct http_request *req;
	char *fetched;		/* where the file as downloaded lands */
	char *name;		/* final file name inside the directory */
	char *path;		/* final path (fetched, or its decompressed twin) */
	char *cache;		/* cache entry, or NULL */
	char *tmp;		/* the file being written, unlinked on failure */
	int fd;
	EVP_MD_CTX *sha;
	EVP_MD_CTX *md5;	/* when the job gives an md5sum */
	EVP_MD_CTX *sha512;	/* when it gives a sha512sum */
	uint64_t bytes;
	struct loop_source *child;	/* cp or decompressor */
	const char *child_what;	/* "copy", "decompress" */
	int child_err;		/* read end of the child's stderr */
	bool done;
};

enum deploy_phase {
	PHASE_DOWNLOAD,		/* artifacts being fetched and staged, the NFS root unpacked */
	PHASE_IMAGE_TAR,	/* the archive for the root image (tests, modules) being built */
	PHASE_IMAGE_WRITE,	/* ... being written into the job's copy of the image */
	PHASE_NFSROOT,		/* modules, overlays and tests being unpacked into the root */
	PHASE_RAMDISK,		/* the archive for the ramdisk (tests, modules) being built */
	PHASE_OVERLAY,		/* the tests' overlay for transfer_overlay or typing */
};

struct deploy_state {
	struct download *dl;
	size_t n;
	size_t pending;
	bool failed;
	char *dir;
	enum deploy_phase phase;
	struct download *ramdisk;	/* the staged ramdisk (or initrd), or NULL */
	char *appendix;		/* the archive appended to it */
	struct download *image;	/* the root image with apply-overlay, or NULL */
	char *image_tar;	/* the archive written into it */
	struct imagefs_write *imagefs;
	struct deploy_nfsroot *nfsroot;	/* the NFS root, or NULL */
	struct run *run;
	enum error_type fail_type;	/* of a failed download phase (the root's content: job) */
};

/* file:// artifacts come from below artifact_dir only (core/fileurl.h). */
static int check_file_url(struct run *r, const struct job_artifact *a)
{
	int err = file_url_check(a->url, run_config(r)->artifact_dir);

	if (err == -EPERM && !run_config(r)->artifact_dir)
		run_fail(r, ERROR_JOB, "file URLs are not allowed in this lab: '%s'", a->url);
	else if (err == -ENOENT)
		run_fail(r, ERROR_JOB, "file URL '%s': no such file", a->url);
	else if (err < 0)
		run_fail(r, ERROR_JOB, "file URL '%s' is not below the lab's artifact directory",
			 a->url);
	return err;
}

/* Upper-case label -> variable name: kernel -> KERNEL, initrd -> RAMDISK too. */
static int set_vars(struct run *r, const struct download *d)
{
	const struct job_artifact *a = d->art;
	char var[64], value[4096];
	size_t i;
	int err;

	if (a->into_root)
		return 0;	/* unpacked into the NFS root, not for the board */
	for (i = 0; a->label[i] && i < sizeof(var) - 1; i++)
		var[i] = (char)toupper((unsigned char)a->label[i]);
	var[i] = '\0';
	if (run_action(r)->deploy.to == DEPLOY_TO_TFTP)
		snprintf(value, sizeof(value), "%s/%s", run_tftp_prefix(r), d->name);
	else
		snprintf(value, sizeof(value), "%s", d->path);
	err = kv_set(run_vars(r), var, value);
	if (!err && !strcmp(var, "INITRD"))
		err = kv_set(run_vars(r), "RAMDISK", value);
	if (!err && a->kernel_type)
		err = kv_set(run_vars(r), "KERNEL_TYPE", a->kernel_type);
	if (!err && a->uboot_header)
		err = kv_set(run_vars(r), "RAMDISK_UBOOT_HEADER", "1");
	return err;
}

/* Finish the action once nothing is pending (the start itself counts as pending). */
static void settle(struct run *r, struct deploy_state *st)
{
	if (!st->failed && !--st->pending)
		run_async_done(r, 0, NULL);
}

/* The artifact is staged (@error NULL) or failed; the action ends with the last one. */
static void download_finished(struct download *d, const char *error)
{
	struct run *r = d->run;
	struct deploy_state *st = d->st;

	d->done = true;
	d->req = NULL;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	if (error && d->tmp)
		unlink(d->tmp);
	if (!error && set_vars(r, d) < 0)
		error = "out of memory";
	if (error && !st->failed) {
		st->failed = true;
		st->fail_type = ERROR_INFRASTRUCTURE;
		run_async_done(r, -EIO, error);
		return;
	}
	settle(r, st);
}

/* The NFS root is in (@error NULL), or not: one of the downloads. */
static void nfsroot_unpacked(struct deploy_nfsroot *nr, const char *error, enum error_type type,
			     void *ud)
{
	struct deploy_state *st = ud;
	struct run *r = st->run;

	if (error && !st->failed) {
		st->failed = true;
		st->fail_type = type;
		run_async_done(r, -EIO, error);
		return;
	}
	if (!error)
		settle(r, st);
}

/* ---- helper processes: cp and decompressors ---- */

/* Spawn @argv, stdout into @out (or /dev/null), stderr into a pipe read at exit. */
static int spawn_helper(struct download *d, char *const argv[], const char *out,
			loop_child_fn cb)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int fds[2], r;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	/* The loop blocks signals: the helper starts clean (SIGXFSZ must kill it). */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	r = posix_spawn_file_actions_init(&fa);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out ? out : "/dev/null",
						     O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	if (!r)
		r = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(fds[1]);
	if (r) {
		close(fds[0]);
		return -r;
	}
	d->child_err = fds[0];
	r = loop_add_child(run_loop(d->run), &d->child, pid, cb, d);
	if (r < 0)
		kill(pid, SIGKILL);
	return r;
}

/* Why the helper failed: "gzip exited with status 1: gzip: stdin: not in gzip format". */
static void helper_reason(struct download *d, const siginfo_t *si, char *buf, size_t size)
{
	char raw[DEPLOY_CHILD_ERR_MAX], *err = raw;
	ssize_t n = read(d->child_err, raw, sizeof(raw) - 1);
	size_t len = n > 0 ? (size_t)n : 0;

	while (len && strchr("\r\n ", err[len - 1]))
		len--;
	err[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (err[i] == '\n' || err[i] == '\r')
			err[i] = ' ';
	while (*err == ' ')
		err++;
	len = strlen(err);
	if (si->si_code == CLD_EXITED)
		snprintf(buf, size, "exited with status %d%s%s", si->si_status, len ? ": " : "",
			 err);
	else if (si->si_status == SIGXFSZ)
		snprintf(buf, size, "output larger than the lab's max_artifact_size of %llu bytes",
			 (unsigned long long)run_config(d->run)->max_artifact_size);
	else
		snprintf(buf, size, "killed by signal %d%s%s", si->si_status, len ? ": " : "",
			 err);
}

static void helper_release(struct download *d)
{
	d->child = loop_source_free(d->child);
	if (d->child_err >= 0)
		close(d->child_err);
	d->child_err = -1;
}

static int on_decompressed(struct loop_source *s, const siginfo_t *si, void *ud)
{
	struct download *d = ud;
	char why[DEPLOY_MSG_MAX / 2], msg[DEPLOY_MSG_MAX];

	if (si->si_code == CLD_EXITED && !si->si_status) {
		helper_release(d);
		unlink(d->fetched);
		run_log(d->run, "info", "decompressed %s (%s) into %s", d->fetched,
			d->art->compression, d->path);
		download_finished(d, NULL);
		return 0;
	}
	helper_reason(d, si, why, sizeof(why));
	helper_release(d);
	unlink(d->path);
	snprintf(msg, sizeof(msg), "cannot decompress '%s' (%s): %s", d->art->url,
		 d->art->compression, why);
	download_finished(d, msg);
	return 0;
}

/* The program decompressing @compression to stdout (a zip: its one file). */
static const char *decompressor(const char *compression)
{
	static const struct {
		const char *compression, *command;
	} tools[] = {
		{ "gz", "gzip -dc --" }, { "xz", "xz -dc --" }, { "bz2", "bzip2 -dc --" },
		{ "zstd", "zstd -dcq --" }, { "zip", "unzip -p" },
	};
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!strcmp(compression, tools[i].compression))
			return tools[i].command;
	return "gzip -dc --";
}

/* `sh -c 'ulimit -f N; exec gzip -dc -- "$1"'`: the output is bounded like a download. */
static void decompress(struct download *d)
{
	const char *tool = decompressor(d->art->compression);
	unsigned long long blocks = run_config(d->run)->max_artifact_size / 512 + 1;
	char script[128], msg[DEPLOY_MSG_MAX];
	char *argv[] = { "sh", "-c", script, "sh", d->fetched, NULL };
	int r;

	snprintf(script, sizeof(script), "ulimit -f %llu && exec %s \"$1\"", blocks, tool);
	r = spawn_helper(d, argv, d->path, on_decompressed);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "cannot start %s for '%s': %s", tool, d->art->url,
			 strerror(-r));
		download_finished(d, msg);
	}
}

/* The file as downloaded is in place: decompress it if asked, else done. */
static void fetched(struct download *d)
{
	if (d->art->compression)
		decompress(d);
	else
		download_finished(d, NULL);
}

static int on_copied(struct loop_source *s, const siginfo_t *si, void *ud)
{
	struct download *d = ud;
	char why[DEPLOY_MSG_MAX / 2], msg[DEPLOY_MSG_MAX];

	if (si->si_code == CLD_EXITED && !si->si_status) {
		helper_release(d);
		fetched(d);
		return 0;
	}
	helper_reason(d, si, why, sizeof(why));
	helper_release(d);
	snprintf(msg, sizeof(msg), "cannot copy '%s' from the cache: cp %s", d->cache, why);
	download_finished(d, msg);
	return 0;
}

/* Put the cache entry into the job's directory: a hard link, else a copy by `cp`. */
static void install_from_cache(struct download *d)
{
	char *argv[] = { "cp", "--", d->cache, d->fetched, NULL };
	char msg[DEPLOY_MSG_MAX];
	int r;

	unlink(d->fetched);
	if (link(d->cache, d->fetched) == 0) {
		fetched(d);
		return;
	}
	r = spawn_helper(d, argv, NULL, on_copied);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "cannot copy '%s' from the cache: %s", d->cache,
			 strerror(-r));
		download_finished(d, msg);
	}
}

/* ---- downloads ---- */

static int on_data(const void *buf, size_t len, void *ud)
{
	struct download *d = ud;
	const char *p = buf;

	EVP_DigestUpdate(d->sha, buf, len);
	if (d->md5)
		EVP_DigestUpdate(d->md5, buf, len);
	if (d->sha512)
		EVP_DigestUpdate(d->sha512, buf, len);
	d->bytes += len;
	while (len) {
		ssize_t n = write(d->fd, p, len);

		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void hex(const unsigned char *in, unsigned len, char *out)
{
	unsigned i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", in[i]);
}

/* A failed transfer: the HTTP status, the size limit or the transport error. */
static bool transfer_failed(struct download *d, const struct http_response *resp)
{
	char msg[DEPLOY_MSG_MAX];

	if (resp->err == -EFBIG)
		snprintf(msg, sizeof(msg), "download of '%s' failed: larger than the lab's max_artifact_size of %llu bytes",
			 d->art->url, (unsigned long long)run_config(d->run)->max_artifact_size);
	else if (resp->err)
		snprintf(msg, sizeof(msg), "download of '%s' failed: %s", d->art->url, resp->error);
	else if (resp->status && (resp->status < 200 || resp->status > 299))
		snprintf(msg, sizeof(msg), "download of '%s' failed: HTTP %ld", d->art->url,
			 resp->status);
	else
		return false;
	download_finished(d, msg);
	return true;
}

/* Move the checked download to its place: the cache entry, else the job's directory. */
static void keep_download(struct download *d)
{
	const char *dst = d->cache ? d->cache : d->fetched;
	char msg[DEPLOY_MSG_MAX];

	close(d->fd);
	d->fd = -1;
	if (rename(d->tmp, dst) < 0) {
		snprintf(msg, sizeof(msg), "cannot store '%s' as '%s': %s", d->art->url, dst,
			 strerror(errno));
		download_finished(d, msg);
		return;
	}
	free(d->tmp);
	d->tmp = NULL;
	if (d->cache)
		install_from_cache(d);
	else
		fetched(d);
}

/* The job's other checksum of @ctx (@want, lower case hex) holds; else the job failed. */
static bool other_sum_ok(struct download *d, EVP_MD_CTX *ctx, const char *name, const char *want)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char got[2 * EVP_MAX_MD_SIZE + 1], msg[DEPLOY_MSG_MAX];
	unsigned mdlen = 0;

	if (!ctx)
		return true;
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	hex(md, mdlen, got);
	if (!strcmp(got, want))
		return true;
	snprintf(msg, sizeof(msg), "download of '%s': %s mismatch: got %s, expected %s",
		 d->art->url, name, got, want);
	download_finished(d, msg);
	return false;
}

static void on_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct download *d = ud;
	unsigned char md[EVP_MAX_MD_SIZE];
	char got[2 * EVP_MAX_MD_SIZE + 1], msg[DEPLOY_MSG_MAX];
	unsigned mdlen = 0;

	d->req = NULL;
	if (transfer_failed(d, resp))
		return;
	EVP_DigestFinal_ex(d->sha, md, &mdlen);
	hex(md, mdlen, got);
	if (d->art->sha256sum && strcmp(got, d->art->sha256sum)) {
		snprintf(msg, sizeof(msg), "download of '%s': sha256 mismatch: got %s, expected %s",
			 d->art->url, got, d->art->sha256sum);
		download_finished(d, msg);
		return;
	}
	if (!other_sum_ok(d, d->md5, "md5", d->art->md5sum) ||
	    !other_sum_ok(d, d->sha512, "sha512", d->art->sha512sum))
		return;
	run_log(d->run, "info", "downloaded %s: %llu bytes, sha256 %s", d->art->url,
		(unsigned long long)d->bytes, got);
	keep_download(d);
}

static int start_fetch(struct run *r, struct download *d)
{
	struct http_request_opts o = {
		.url = d->art->url,
		.timeout = run_action(r)->timeout,
		.max_size = run_config(r)->max_artifact_size,
		.data = on_data,
	};

	if (d->cache)
		d->tmp = deploy_cache_tmp_path(d->cache);
	else if (asprintf(&d->tmp, "%s.part", d->fetched) < 0)
		d->tmp = NULL;
	if (!d->tmp)
		return -ENOMEM;
	d->fd = open(d->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (d->fd < 0)
		return -errno;
	d->sha = EVP_MD_CTX_new();
	if (!d->sha || !EVP_DigestInit_ex(d->sha, EVP_sha256(), NULL))
		return -ENOMEM;
	if (d->art->md5sum && (!(d->md5 = EVP_MD_CTX_new()) ||
			       !EVP_DigestInit_ex(d->md5, EVP_md5(), NULL)))
		return -ENOMEM;
	if (d->art->sha512sum && (!(d->sha512 = EVP_MD_CTX_new()) ||
				  !EVP_DigestInit_ex(d->sha512, EVP_sha512(), NULL)))
		return -ENOMEM;
	run_log(r, "info", "downloading %s: %s -> %s", d->art->label, d->art->url, d->path);
	return http_request_start(run_http(r), &o, on_done, d, &d->req);
}

/* Whether another artifact of this job already took @name. */
static bool name_taken(const struct deploy_state *st, const struct download *self,
		       const char *name)
{
	for (const struct download *o = st->dl; o < self; o++)
		if (o->name && (!strcmp(o->name, name) ||
		    !strcmp(strrchr(o->fetched, '/') + 1, name)))
			return true;
	return false;
}

/* The final name of @d for the downloaded file name @base. */
static char *final_name(const struct download *d, const char *base)
{
	const char *comp = d->art->compression;

	return comp ? deploy_decompressed_name(base, comp) : strdup(base);
}

/* File names and paths of @d; a name another artifact took gets the label in front. */
static int name_download(struct deploy_state *st, struct download *d)
{
	char *base = deploy_file_name(d->art), *tmp;

	d->name = base ? final_name(d, base) : NULL;
	if (d->name && (name_taken(st, d, base) || name_taken(st, d, d->name))) {
		tmp = base;
		if (asprintf(&base, "%s-%s", d->art->label, tmp) < 0)
			base = NULL;
		free(tmp);
		free(d->name);
		d->name = base ? final_name(d, base) : NULL;
	}
	if (!d->name || asprintf(&d->fetched, "%s/%s", st->dir, base) < 0 ||
	    asprintf(&d->path, "%s/%s", st->dir, d->name) < 0) {
		free(base);
		return -ENOMEM;
	}
	free(base);
	return 0;
}

static int start_download(struct run *r, struct deploy_state *st, struct download *d)
{
	int err;

	d->run = r;
	d->st = st;
	err = name_download(st, d);
	if (!err && deploy_cache_wanted(d->art))
		err = deploy_cache_path(run_config(r)->state_dir, d->art, &d->cache);
	if (err < 0)
		return err;
	st->pending++;
	if (d->cache && access(d->cache, R_OK) == 0) {
		run_log(r, "info", "%s: %s is in the download cache", d->art->label, d->art->url);
		install_from_cache(d);
		return 0;
	}
	err = start_fetch(r, d);
	if (err < 0)
		st->pending--;
	return err;
}

static int make_dir(const char *dir)
{
	char buf[4096];

	for (size_t i = 1; dir[i]; i++) {
		if (dir[i] != '/' || i >= sizeof(buf))
			continue;
		memcpy(buf, dir, i);
		buf[i] = '\0';
		mkdir(buf, 0755);
	}
	return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int deploy_prepare(struct run *r, struct deploy_state *st)
{
	const struct job_deploy *dep = &run_action(r)->deploy;
	int err;

	st->fail_type = ERROR_INFRASTRUCTURE;
	st->run = r;
	if (dep->to == DEPLOY_TO_TFTP)
		st->dir = strdup(run_tftp_dir(r));
	else if (asprintf(&st->dir, "%s/images", run_dir(r)) < 0)
		st->dir = NULL;
	st->dl = calloc(dep->n_artifacts, sizeof(*st->dl));
	if (!st->dir || !st->dl)
		return -ENOMEM;
	for (size_t i = 0; i < dep->n_artifacts; i++) {
		st->dl[i].fd = -1;
		st->dl[i].child_err = -1;
		st->dl[i].art = &dep->artifacts[i];
		st->dl[i].run = r;
		st->dl[i].st = st;
	}
	err = make_dir(st->dir);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot create '%s': %s", st->dir, strerror(-err));
	return err;
}

static int deploy_start(struct run *r, void *state)
{
	struct deploy_state *st = state;
	const struct job_deploy *dep = &run_action(r)->deploy;
	size_t i;
	int err;

	if (dep->to == DEPLOY_TO_NONE || !dep->n_artifacts) {
		run_done(r);
		return 0;
	}
	err = deploy_prepare(r, st);
	if (err == -ENOMEM)
		return err;
	if (err < 0)
		return 0;
	st->n = dep->n_artifacts;
	st->pending = 1;	/* cache hits may finish while the others start */
	for (i = 0; i < st->n && !st->failed; i++) {
		if (check_file_url(r, &dep->artifacts[i]) < 0)
			return 0;
		if (!strcmp(dep->artifacts[i].label, "nfsrootfs")) {
			st->pending++;
			err = deploy_nfsroot_start(r, &dep->artifacts[i], nfsroot_unpacked, st,
						   &st->nfsroot);
			if (err < 0)
				return err == -ENOMEM ? err : 0;	/* the run failed, told why */
			continue;
		}
		err = start_download(r, st, &st->dl[i]);
		if (err < 0) {
			run_fail(r, ERROR_INFRASTRUCTURE, "cannot start download of '%s': %s",
				 dep->artifacts[i].url, strerror(-err));
			return 0;
		}
	}
	settle(r, st);
	return 0;
}

/* ---- after the downloads: the job's overlay, the ramdisk's appendix ---- */

static struct download *find_download(struct deploy_state *st, const char *label,
				      const char *alias)
{
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(st->dl[i].art->label, label) ||
		    (alias && !strcmp(st->dl[i].art->label, alias)))
			return &st->dl[i];
	return NULL;
}

/* The tests' overlay for transfer_overlay or typing, when this deploy builds it. */
static void build_overlay(struct run *r, struct deploy_state *st)
{
	const struct overlay_plan *p = run_overlay_plan(r);
	char *path = NULL;
	int err;

	if ((p->delivery != OVERLAY_DELIVERY_TRANSFER && p->delivery != OVERLAY_DELIVERY_TYPED) ||
	    p->builder != run_action_index(r)) {
		run_done(r);
		return;
	}
	st->phase = PHASE_OVERLAY;
	if (asprintf(&path, "%s/overlay.tar.gz", run_dir(r)) < 0) {
		run_fail(r, ERROR_BUG, "out of memory");
		return;
	}
	err = run_overlay_build(r, path, OVERLAY_TAR_GZ, true, NULL);
	free(path);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot build the test overlay: %s", strerror(-err));
}

/*
 * The ramdisk gets a second archive: the job's test overlay when it goes
 * there (overlay_plan()), and the deploy's kernel modules, as LAVA adds them.
 */
static void build_appendix(struct run *r, struct deploy_state *st)
{
	const struct overlay_plan *p = run_overlay_plan(r);
	struct download *mods = find_download(st, "modules", NULL);
	char *imports[] = { mods ? mods->path : NULL, NULL };
	bool tests = p->delivery == OVERLAY_DELIVERY_RAMDISK && p->deploy == run_action_index(r);
	int err;

	st->ramdisk = find_download(st, "ramdisk", "initrd");
	if (!st->ramdisk || st->ramdisk->art->no_modules)
		imports[0] = NULL;
	if (!st->ramdisk || (!tests && !imports[0])) {
		build_overlay(r, st);
		return;
	}
	st->phase = PHASE_RAMDISK;
	if (asprintf(&st->appendix, "%s/ramdisk-appendix.cpio.gz", run_dir(r)) < 0) {
		st->appendix = NULL;
		run_fail(r, ERROR_BUG, "out of memory");
		return;
	}
	err = run_overlay_build(r, st->appendix, OVERLAY_CPIO_GZ, tests, imports);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot build the ramdisk's overlay: %s",
			 strerror(-err));
}

static void append_to_ramdisk(struct run *r, struct deploy_state *st)
{
	char why[DEPLOY_MSG_MAX];
	int err = ramdisk_append(st->ramdisk->path, st->appendix, st->ramdisk->art->uboot_header,
				 why, sizeof(why));

	unlink(st->appendix);
	if (err < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot add the overlay to the ramdisk '%s': %s",
			 st->ramdisk->path, why);
		return;
	}
	run_log(r, "info", "overlay appended to the ramdisk %s%s", st->ramdisk->path,
		ramdisk_has_uboot_header(st->ramdisk->path) ? " (U-Boot header rewritten)" : "");
	build_overlay(r, st);
}

/* ---- apply-overlay: the tests and the modules into the job's copy of a root image ---- */

static void on_image_written(struct imagefs_write *w, int err, const char *msg, uint64_t files,
			     uint64_t bytes, void *userdata)
{
	struct deploy_state *st = userdata;
	struct run *r = st->image->run;
	char why[DEPLOY_MSG_MAX];

	st->imagefs = imagefs_write_free(st->imagefs);
	unlink(st->image_tar);
	if (err) {
		snprintf(why, sizeof(why), "cannot write the overlay into '%s': %s",
			 st->image->path, msg);
		run_async_done(r, err, why);
		return;
	}
	run_log(r, "info", "overlay written into %s: %llu files, %llu bytes", st->image->path,
		(unsigned long long)files, (unsigned long long)bytes);
	run_async_done(r, 0, NULL);
}

/* The archive is built: into the image, copied first when the cache shares its file. */
static void write_image(struct run *r, struct deploy_state *st)
{
	struct stat sb;
	int flags = stat(st->image->path, &sb) == 0 && sb.st_nlink > 1 ? IMAGEFS_COPY : 0;
	int err;

	st->phase = PHASE_IMAGE_WRITE;
	err = imagefs_write_start(run_loop(r), st->image->path, st->image_tar, "", flags,
				  on_image_written, st, &st->imagefs);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot start writing into '%s': %s",
			 st->image->path, strerror(-err));
}

/* A root image with apply-overlay gets the tests (when the plan says so) and the modules. */
static bool build_image(struct run *r, struct deploy_state *st)
{
	const struct overlay_plan *p = run_overlay_plan(r);
	struct download *mods = find_download(st, "modules", NULL);
	char *imports[] = { mods ? mods->path : NULL, NULL };
	bool tests = p->delivery == OVERLAY_DELIVERY_IMAGE && p->deploy == run_action_index(r);
	int err;

	for (size_t i = 0; i < st->n && !st->image; i++)
		if (st->dl[i].art->apply_overlay)
			st->image = &st->dl[i];
	if (!st->image || (!tests && !mods))
		return false;
	st->phase = PHASE_IMAGE_TAR;
	if (asprintf(&st->image_tar, "%s/image-overlay.tar.gz", run_dir(r)) < 0) {
		st->image_tar = NULL;
		run_fail(r, ERROR_BUG, "out of memory");
		return true;
	}
	err = run_overlay_build_at(r, st->image_tar, OVERLAY_TAR_GZ, tests, imports,
				   mods ? mods->art->path : NULL);
	if (err < 0)
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot build the root image's overlay: %s",
			 strerror(-err));
	return true;
}

/* ---- the NFS root ---- */

/*
 * Into the NFS root, after the downloads: the modules (unless `install_modules:
 * false` on the nfsrootfs), the root's overlays, and the test overlay when
 * the job's overlay goes there (overlay_plan()).
 */
static void fill_nfsroot(struct run *r, struct deploy_state *st)
{
	const struct overlay_plan *p = run_overlay_plan(r);
	struct deploy_nfsroot_extra *extras = calloc(st->n + 1, sizeof(*extras));
	const struct job_artifact *nfs = job_deploy_nfsrootfs(&run_action(r)->deploy);
	struct download *mods = find_download(st, "modules", NULL);
	bool tests = p->delivery == OVERLAY_DELIVERY_NFSROOT && p->deploy == run_action_index(r);
	size_t n = 0;

	st->phase = PHASE_NFSROOT;
	if (extras && mods && !nfs->no_modules)
		extras[n++] = (struct deploy_nfsroot_extra){ mods->path, mods->art->path,
							     "the modules" };
	for (size_t i = 0; extras && i < st->n; i++)
		if (st->dl[i].art->into_root)
			extras[n++] = (struct deploy_nfsroot_extra){ st->dl[i].path,
								     st->dl[i].art->path,
								     st->dl[i].art->label };
	if (!extras || deploy_nfsroot_extras(st->nfsroot, extras, n, tests) < 0)
		run_fail(r, ERROR_BUG, "out of memory");
	free(extras);
}

static void deploy_event(struct run *r, void *state, const struct run_event *ev)
{
	struct deploy_state *st = state;

	if (ev->kind != RUN_EVENT_DONE)
		return;
	if (st->phase == PHASE_NFSROOT) {
		if (deploy_nfsroot_event(st->nfsroot, ev) == 1)
			build_appendix(r, st);
		return;
	}
	if (ev->err) {
		run_fail(r, st->phase == PHASE_DOWNLOAD ? st->fail_type :
			 st->phase == PHASE_IMAGE_WRITE ? ERROR_JOB : run_overlay_error_type(r),
			 "%s", ev->msg);
		return;
	}
	switch (st->phase) {
	case PHASE_DOWNLOAD:
		if (st->nfsroot)
			fill_nfsroot(r, st);
		else if (!build_image(r, st))
			build_appendix(r, st);
		break;
	case PHASE_IMAGE_TAR:
		write_image(r, st);
		break;
	case PHASE_IMAGE_WRITE:
		build_appendix(r, st);
		break;
	case PHASE_RAMDISK:
		append_to_ramdisk(r, st);
		break;
	case PHASE_OVERLAY:
		run_done(r);
		break;
	case PHASE_NFSROOT:	/* deploy_nfsroot_event() above */
		break;
	}
}

static void deploy_stop(struct run *r, void *state)
{
	struct deploy_state *st = state;
	size_t i;

	for (i = 0; st->dl && i < st->n; i++) {
		struct download *d = &st->dl[i];

		http_request_cancel(d->req);
		helper_release(d);	/* kills a helper still running */
		if (d->fd >= 0) {
			close(d->fd);
			unlink(d->tmp);
		}
		EVP_MD_CTX_free(d->sha);
		EVP_MD_CTX_free(d->md5);
		EVP_MD_CTX_free(d->sha512);
		free(d->fetched);
		free(d->name);
		free(d->path);
		free(d->cache);
		free(d->tmp);
	}
	free(st->dl);
	free(st->dir);
	deploy_nfsroot_free(st->nfsroot);
	if (st->appendix)
		unlink(st->appendix);
	free(st->appendix);
	imagefs_write_free(st->imagefs);
	if (st->image_tar)
		unlink(st->image_tar);
	free(st->image_tar);
}

const struct action_ops action_deploy_ops = {
	.name = "deploy",
	.state_size = sizeof(struct deploy_state),
	.start = deploy_start,
	.event = deploy_event,
	.stop = deploy_stop,
};
