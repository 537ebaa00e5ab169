// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * action_deploy.c -- fetch a job's artifacts (kernel, ramdisk, dtb, ...) into
 * the job's TFTP directory (to: tftp) or its image directory (to: tmpfs)
 *
 * Downloads run in parallel through the daemon's HTTP client (libcurl multi
 * inside the loop), stream to disk and are hashed on the way; a sha256sum
 * given in the job is checked.  file:// URLs are accepted only below the
 * lab's artifact_dir.  Each artifact becomes a substitution variable named
 * after its label: {KERNEL}, {RAMDISK}, {DTB} ... holding the path the board
 * (TFTP) or labd (tmpfs) uses.  Any failure is an infrastructure error naming
 * the URL and the HTTP status.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "action.h"
#include "config.h"
#include "http_client.h"
#include "job.h"

struct deploy_state;

struct download {
	struct run *run;
	struct deploy_state *st;
	const struct job_artifact *art;
	struct http_request *req;
	char *path;		/* where the file lands */
	char *name;		/* file name inside the directory */
	int fd;
	EVP_MD_CTX *sha;
	uint64_t bytes;
	bool done;
};

struct deploy_state {
	struct download *dl;
	size_t n;
	size_t pending;
	bool failed;
	char *dir;
};

/* A safe file name from the URL's last path component, else the label. */
static char *file_name(const struct job_artifact *a)
{
	const char *u = a->url, *end = u + strcspn(u, "?#"), *slash = u;
	char *name;
	size_t i;

	for (const char *p = u; p < end; p++)
		if (*p == '/')
			slash = p + 1;
	name = slash < end ? strndup(slash, (size_t)(end - slash)) : strdup(a->label);
	for (i = 0; name && name[i]; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+",
			    name[i]))
			name[i] = '_';
	if (name && (name[0] == '.' || !name[0])) {
		free(name);
		name = strdup(a->label);
	}
	return name;
}

static int check_file_url(struct run *r, const struct job_artifact *a)
{
	const char *root = run_config(r)->artifact_dir;
	char *real;
	size_t n;

	if (strncmp(a->url, "file://", 7))
		return 0;
	if (!root) {
		run_fail(r, ERROR_JOB, "file URLs are not allowed in this lab: '%s'", a->url);
		return -EPERM;
	}
	real = realpath(a->url + 7, NULL);
	n = strlen(root);
	if (!real || strncmp(real, root, n) || (real[n] != '/' && real[n])) {
		run_fail(r, ERROR_JOB, "file URL '%s' is not below the lab's artifact directory",
			 a->url);
		free(real);
		return -EPERM;
	}
	free(real);
	return 0;
}

static int on_data(const void *buf, size_t len, void *ud)
{
	struct download *d = ud;
	const char *p = buf;

	EVP_DigestUpdate(d->sha, buf, len);
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

/* Upper-case label -> variable name: kernel -> KERNEL, initrd -> RAMDISK too. */
static int set_vars(struct run *r, const struct download *d)
{
	const struct job_artifact *a = d->art;
	char var[64], value[4096];
	size_t i;
	int err;

	for (i = 0; a->label[i] && i < sizeof(var) - 1; i++)
		var[i] = (char)(a->label[i] >= 'a' && a->label[i] <= 'z' ? a->label[i] - 32 : a->label[i]);
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

static void download_finished(struct download *d, const char *error)
{
	struct run *r = d->run;
	struct deploy_state *st = d->st;

	d->done = true;
	d->req = NULL;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	st->pending--;
	if (error && !st->failed) {
		st->failed = true;
		run_async_done(r, -EIO, error);
		return;
	}
	if (!st->failed && !st->pending)
		run_async_done(r, 0, NULL);
}

static void on_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct download *d = ud;
	unsigned char md[EVP_MAX_MD_SIZE];
	char got[2 * EVP_MAX_MD_SIZE + 1], msg[1024];
	unsigned mdlen = 0;

	if (resp->err) {
		snprintf(msg, sizeof(msg), "download of '%s' failed: %s", d->art->url, resp->error);
		download_finished(d, msg);
		return;
	}
	if (resp->status && (resp->status < 200 || resp->status > 299)) {
		snprintf(msg, sizeof(msg), "download of '%s' failed: HTTP %ld", d->art->url,
			 resp->status);
		download_finished(d, msg);
		return;
	}
	EVP_DigestFinal_ex(d->sha, md, &mdlen);
	hex(md, mdlen, got);
	if (d->art->sha256sum && strcmp(got, d->art->sha256sum)) {
		snprintf(msg, sizeof(msg), "download of '%s': sha256 mismatch: got %s, expected %s",
			 d->art->url, got, d->art->sha256sum);
		download_finished(d, msg);
		return;
	}
	run_log(d->run, "info", "downloaded %s: %llu bytes, sha256 %s", d->art->url,
		(unsigned long long)d->bytes, got);
	if (set_vars(d->run, d) < 0) {
		download_finished(d, "out of memory");
		return;
	}
	download_finished(d, NULL);
}

static int start_download(struct run *r, struct deploy_state *st, struct download *d)
{
	struct http_request_opts o = {
		.url = d->art->url,
		.timeout = run_action(r)->timeout,
		.max_size = run_config(r)->max_artifact_size,
		.data = on_data,
	};
	int err;

	d->run = r;
	d->st = st;
	d->name = file_name(d->art);
	if (!d->name || asprintf(&d->path, "%s/%s", st->dir, d->name) < 0)
		return -ENOMEM;
	d->fd = open(d->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (d->fd < 0)
		return -errno;
	d->sha = EVP_MD_CTX_new();
	if (!d->sha || !EVP_DigestInit_ex(d->sha, EVP_sha256(), NULL))
		return -ENOMEM;
	err = http_request_start(run_http(r), &o, on_done, d, &d->req);
	if (err < 0)
		return err;
	st->pending++;
	run_log(r, "info", "downloading %s: %s -> %s", d->art->label, d->art->url, d->path);
	return 0;
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
	if (dep->to == DEPLOY_TO_TFTP)
		st->dir = strdup(run_tftp_dir(r));
	else if (asprintf(&st->dir, "%s/images", run_dir(r)) < 0)
		st->dir = NULL;
	st->dl = calloc(dep->n_artifacts, sizeof(*st->dl));
	if (!st->dir || !st->dl)
		return -ENOMEM;
	err = make_dir(st->dir);
	if (err < 0) {
		run_fail(r, ERROR_INFRASTRUCTURE, "cannot create '%s': %s", st->dir, strerror(-err));
		return 0;
	}
	st->n = dep->n_artifacts;
	for (i = 0; i < st->n; i++) {
		st->dl[i].fd = -1;
		st->dl[i].art = &dep->artifacts[i];
		if (check_file_url(r, &dep->artifacts[i]) < 0)
			return 0;
		err = start_download(r, st, &st->dl[i]);
		if (err < 0) {
			run_fail(r, ERROR_INFRASTRUCTURE, "cannot start download of '%s': %s",
				 dep->artifacts[i].url, strerror(-err));
			return 0;
		}
	}
	return 0;
}

static void deploy_event(struct run *r, void *state, const struct run_event *ev)
{
	if (ev->kind != RUN_EVENT_DONE)
		return;
	if (ev->err)
		run_fail(r, ERROR_INFRASTRUCTURE, "%s", ev->msg);
	else
		run_done(r);
}

static void deploy_stop(struct run *r, void *state)
{
	struct deploy_state *st = state;
	size_t i;

	for (i = 0; st->dl && i < st->n; i++) {
		struct download *d = &st->dl[i];

		http_request_cancel(d->req);
		if (d->fd >= 0)
			close(d->fd);
		EVP_MD_CTX_free(d->sha);
		free(d->path);
		free(d->name);
	}
	free(st->dl);
	free(st->dir);
}

const struct action_ops action_deploy_ops = {
	.name = "deploy",
	.state_size = sizeof(struct deploy_state),
	.start = deploy_start,
	.event = deploy_event,
	.stop = deploy_stop,
};
