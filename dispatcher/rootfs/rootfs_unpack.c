// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rootfs_unpack.c -- one archive unpacked into a tree, from the loop
 *
 * A helper child (`rootfs-helper unpack`) reads the archive on its fd 3: a
 * file, or a pipe this file feeds from a download.  The download's bytes go
 * from libcurl's write callback into the pipe, hashed on the way; when the
 * helper is slower than the network the pipe fills, the rest of the block
 * waits here (one block, never more) and the transfer is paused until the
 * pipe drains: memory stays flat whatever the archive's size.  The pipe is
 * closed only once the download is complete and its checksums hold, so the
 * helper cannot finish an archive that was not the one asked for.
 *
 * The helper's lines (rootfs_helper.c) give its progress, which grows the
 * tree (rootfs_tree_grow(): over max_size stops the unpack), and its end.
 * The first failure wins: a download or checksum failure, or the size limit
 * (both the lab's), else what the helper said.
 */
#include "rootfs/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/http_client.h"
#include "core/loop.h"
#include "core/strbuf.h"

#define UNPACK_PIPE_SIZE (1 << 20)	/* the pipe to the helper */
#define UNPACK_LINE_MAX 4096		/* a line of the helper's longer than this is cut */
#define UNPACK_READ_CHUNK 4096

struct rootfs_unpack {
	struct rootfs *fs;
	struct rootfs_tree *tree;
	rootfs_unpack_fn fn;
	void *userdata;
	char *url;
	char *what;
	char *sums[3];			/* sha256, md5, sha512 wanted, or NULL */
	EVP_MD_CTX *md[3];
	void (*downloaded)(uint64_t bytes, void *userdata);
	uint64_t started;

	/* the helper */
	struct loop_source *child;
	bool exited;
	int status;			/* its exit status, or 128 + signal */
	int out_fd;			/* its stdout and stderr */
	struct loop_source *out_src;
	struct strbuf line;		/* its line being read */
	char said[ROOTFS_MSG_MAX];	/* its error line, "error ..." */
	bool done;			/* it said "done" */
	struct rootfs_unpack_result res;
	char sha256_hex[65];

	/* the download, into the pipe */
	struct http_request *req;
	int pipe_fd;			/* write end, -1 once closed */
	struct loop_source *pipe_src;	/* EPOLLOUT while a block waits */
	char *block;			/* the rest of a block the pipe did not take */
	size_t block_len;
	size_t block_off;
	bool eof;			/* downloaded and checked: close once the block is out */
	long status_bad;		/* the response's status when it was no 2xx */

	/* the first failure of ours */
	int err;
	enum rootfs_blame blame;
	char msg[ROOTFS_MSG_MAX];
};

static void finish_if_over(struct rootfs_unpack *u);

/* ---- the end ---- */

/* Our own failure (the first one): the download is stopped, the helper killed. */
static void failed(struct rootfs_unpack *u, int err, enum rootfs_blame blame, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

static void failed(struct rootfs_unpack *u, int err, enum rootfs_blame blame, const char *fmt,
		   ...)
{
	va_list ap;

	if (!u->err) {
		u->err = err;
		u->blame = blame;
		va_start(ap, fmt);
		vsnprintf(u->msg, sizeof(u->msg), fmt, ap);
		va_end(ap);
	}
	http_request_cancel(u->req);
	u->req = NULL;
	if (!u->exited)
		loop_child_kill(u->child, SIGKILL);
	finish_if_over(u);
}

static void close_pipe(struct rootfs_unpack *u)
{
	u->pipe_src = loop_source_free(u->pipe_src);
	if (u->pipe_fd >= 0)
		close(u->pipe_fd);
	u->pipe_fd = -1;
}

static void release(struct rootfs_unpack *u)
{
	http_request_cancel(u->req);
	close_pipe(u);
	u->out_src = loop_source_free(u->out_src);
	if (u->out_fd >= 0)
		close(u->out_fd);
	loop_source_free(u->child);	/* kills a helper still running */
	for (int i = 0; i < 3; i++) {
		free(u->sums[i]);
		EVP_MD_CTX_free(u->md[i]);
	}
	strbuf_release(&u->line);
	free(u->block);
	free(u->url);
	free(u->what);
	free(u);
}

/* The helper's exit, read to its last line: the outcome, told once. */
static void finish_if_over(struct rootfs_unpack *u)
{
	struct rootfs_unpack_result *res = &u->res;
	char why[ROOTFS_MSG_MAX];

	if (!u->exited || u->out_src)
		return;
	res->usec = loop_now(rootfs_loop(u->fs)) - u->started;
	res->sha256 = u->sha256_hex;
	if (u->err) {
		res->err = u->err;
		res->blame = u->blame;
		res->msg = u->msg;
	} else if (u->status || !u->done) {
		if (*u->said)
			snprintf(why, sizeof(why), "%s", u->said);
		else
			snprintf(why, sizeof(why), "the unpacking helper %s %d",
				 u->status > 128 ? "was killed by signal" : "exited with status",
				 u->status > 128 ? u->status - 128 : u->status);
		res->err = -EIO;
		res->blame = strncmp(why, "lab ", 4) ? ROOTFS_BLAME_ARCHIVE : ROOTFS_BLAME_LAB;
		snprintf(u->msg, sizeof(u->msg), "cannot unpack %s '%s': %s", u->what,
			 u->url ? u->url : "?", why + (!strncmp(why, "lab ", 4) ? 4 :
						       !strncmp(why, "archive ", 8) ? 8 : 0));
		res->msg = u->msg;
	}
	u->fn(res, u->userdata);
	release(u);
}

/* ---- the helper's lines ---- */

static void on_progress(struct rootfs_unpack *u, uint64_t bytes)
{
	char err[ROOTFS_MSG_MAX];

	if (bytes <= u->res.bytes)
		return;
	if (rootfs_tree_grow(u->tree, bytes - u->res.bytes, err, sizeof(err)) < 0) {
		u->res.bytes = bytes;
		failed(u, -ENOSPC, ROOTFS_BLAME_LAB, "%s", err);
		return;
	}
	u->res.bytes = bytes;
}

static void helper_line(struct rootfs_unpack *u, const char *line)
{
	unsigned long long a, b, c;

	if (sscanf(line, "progress %llu", &a) == 1) {
		on_progress(u, a);
	} else if (sscanf(line, "done %llu %llu %llu", &a, &b, &c) == 3) {
		on_progress(u, a);
		u->res.entries = b;
		u->res.devices_skipped = c;
		u->done = true;
	} else if (!strncmp(line, "error ", 6)) {
		snprintf(u->said, sizeof(u->said), "%s", line + 6);
	} else if (!*u->said && *line && strncmp(line, "warning ", 8)) {
		snprintf(u->said, sizeof(u->said), "%s", line);	/* a crash's last words */
	}
}

/* Read what the helper printed: 0 (more later), 1 at its end, < 0 on error. */
static int read_output(struct rootfs_unpack *u)
{
	char buf[UNPACK_READ_CHUNK];
	ssize_t n = read(u->out_fd, buf, sizeof(buf));
	char *nl;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 1;
	if (strbuf_add(&u->line, buf, (size_t)n) < 0)
		return -ENOMEM;
	while ((nl = memchr(u->line.buf, '\n', u->line.len))) {
		*nl = '\0';
		helper_line(u, u->line.buf);
		strbuf_consume(&u->line, (size_t)(nl - u->line.buf) + 1);
	}
	if (u->line.len > UNPACK_LINE_MAX)
		strbuf_reset(&u->line);
	return 0;
}

static void output_ended(struct rootfs_unpack *u)
{
	if (u->line.len && strbuf_addch(&u->line, '\0') == 0)
		helper_line(u, u->line.buf);
	u->out_src = loop_source_free(u->out_src);
	close(u->out_fd);
	u->out_fd = -1;
}

static int on_output(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct rootfs_unpack *u = ud;
	int r = read_output(u);

	if (r) {
		output_ended(u);
		finish_if_over(u);
	}
	return 0;
}

static int on_exit_helper(struct loop_source *s, const siginfo_t *si, void *ud)
{
	struct rootfs_unpack *u = ud;

	u->exited = true;
	u->status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
	while (u->out_src && !read_output(u))
		;
	if (u->out_src)
		output_ended(u);
	if (!u->err && u->req) {	/* it gave up before the download's end */
		http_request_cancel(u->req);
		u->req = NULL;
	}
	finish_if_over(u);
	return 0;
}

/* ---- the download, into the pipe ---- */

/* Write the waiting block out; 0 when all of it went, -EAGAIN when the pipe is full. */
static int flush_block(struct rootfs_unpack *u)
{
	while (u->block_off < u->block_len) {
		ssize_t n = write(u->pipe_fd, u->block + u->block_off, u->block_len - u->block_off);

		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		u->block_off += (size_t)n;
	}
	u->block_len = u->block_off = 0;
	return 0;
}

static int on_pipe_writable(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct rootfs_unpack *u = ud;
	int r = flush_block(u);

	if (r == -EAGAIN)
		return 0;
	if (r < 0) {	/* the helper is gone: its exit tells why */
		close_pipe(u);
		return 0;
	}
	loop_source_set_enabled(u->pipe_src, false);
	if (u->eof)
		close_pipe(u);
	else if (u->req)
		http_request_unpause(u->req);
	return 0;
}

static int on_data(const void *buf, size_t len, void *ud)
{
	struct rootfs_unpack *u = ud;
	ssize_t n;
	char *grown;

	if (u->block_len)
		return HTTP_DATA_PAUSE;		/* given again once the pipe took the rest */
	for (int i = 0; i < 3; i++)
		if (u->md[i])
			EVP_DigestUpdate(u->md[i], buf, len);
	u->res.download_bytes += len;
	n = u->pipe_fd < 0 ? -EPIPE : write(u->pipe_fd, buf, len);
	if (n < 0 && errno != EAGAIN)
		return -EPIPE;			/* the helper is gone: its exit tells why */
	if (n < 0)
		n = 0;
	if ((size_t)n == len)
		return 0;
	grown = realloc(u->block, len - (size_t)n);
	if (!grown)
		return -ENOMEM;
	u->block = grown;
	memcpy(u->block, (const char *)buf + n, len - (size_t)n);
	u->block_len = len - (size_t)n;
	u->block_off = 0;
	loop_source_set_enabled(u->pipe_src, true);
	return 0;
}

static int on_head(struct http_request *req, long status, void *ud)
{
	struct rootfs_unpack *u = ud;

	if (status >= 200 && status <= 299)
		return 0;
	u->status_bad = status;
	return -EIO;
}

static void hex(const unsigned char *in, unsigned len, char *out)
{
	for (unsigned i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", in[i]);
}

/* The download's checksums against the job's; a mismatch fails the unpack. */
static bool sums_ok(struct rootfs_unpack *u)
{
	static const char *const names[] = { "sha256", "md5", "sha512" };
	unsigned char md[EVP_MAX_MD_SIZE];
	char got[2 * EVP_MAX_MD_SIZE + 1];
	unsigned len;

	for (int i = 0; i < 3; i++) {
		if (!u->md[i])
			continue;
		len = 0;
		EVP_DigestFinal_ex(u->md[i], md, &len);
		hex(md, len, got);
		if (!i)
			memcpy(u->sha256_hex, got, sizeof(u->sha256_hex) - 1);
		if (u->sums[i] && strcmp(got, u->sums[i])) {
			failed(u, -EIO, ROOTFS_BLAME_LAB, "download of '%s': %s mismatch: got %s, "
			       "expected %s", u->url, names[i], got, u->sums[i]);
			return false;
		}
	}
	return true;
}

static void on_done(struct http_request *req, const struct http_response *resp, void *ud)
{
	struct rootfs_unpack *u = ud;

	u->req = NULL;
	if (u->status_bad || (resp->status && (resp->status < 200 || resp->status > 299)))
		failed(u, -EIO, ROOTFS_BLAME_LAB, "download of '%s' failed: HTTP %ld", u->url,
		       u->status_bad ? u->status_bad : resp->status);
	else if (resp->err == -EFBIG)
		failed(u, -EFBIG, ROOTFS_BLAME_LAB, "download of '%s' failed: larger than the "
		       "lab's max_artifact_size", u->url);
	else if (resp->err == -EPIPE)
		finish_if_over(u);	/* the helper stopped reading: its exit tells why */
	else if (resp->err)
		failed(u, resp->err, ROOTFS_BLAME_LAB, "download of '%s' failed: %s", u->url,
		       resp->error ? resp->error : strerror(-resp->err));
	else if (sums_ok(u)) {
		u->eof = true;
		if (u->downloaded)
			u->downloaded(u->res.download_bytes, u->userdata);
		if (!u->block_len)
			close_pipe(u);	/* the helper reads to the end, then exits */
	}
}

/* The helper's fd 3: a pipe to feed (*@ret_feed), or the file itself. */
static int open_input(struct rootfs_unpack *u, const struct rootfs_unpack_req *req, int *ret_in,
		      int *ret_feed)
{
	int fds[2];

	*ret_feed = -1;
	if (!req->url) {
		*ret_in = open(req->file, O_RDONLY | O_CLOEXEC);
		return *ret_in < 0 ? -errno : 0;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fcntl(fds[1], F_SETPIPE_SZ, UNPACK_PIPE_SIZE);	/* a smaller one works too */
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	*ret_in = fds[0];
	*ret_feed = fds[1];
	return 0;
}

/* `rootfs-helper unpack --tree DIR [--into D] [--prefix P]`, watched by the loop. */
static int spawn(struct rootfs_unpack *u, const struct rootfs_unpack_req *req)
{
	struct loop *loop = rootfs_loop(u->fs);
	char *args[8] = { "unpack", "--tree", (char *)rootfs_tree_dir(req->tree) };
	int in = -1, out[2], n = 3, err;
	pid_t pid;

	if (req->into) {
		args[n++] = "--into";
		args[n++] = (char *)req->into;
	}
	if (req->prefix) {
		args[n++] = "--prefix";
		args[n++] = (char *)req->prefix;
	}
	err = open_input(u, req, &in, &u->pipe_fd);
	if (err < 0)
		return err;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in);
		return -errno;
	}
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	u->out_fd = out[0];
	err = rootfs_spawn_helper(u->fs, args, in, out[1], &pid);
	close(in);
	close(out[1]);
	if (err < 0)
		return err;
	err = loop_add_child(loop, &u->child, pid, on_exit_helper, u);
	if (err < 0) {
		kill(pid, SIGKILL);
		return err;
	}
	err = loop_add_io(loop, &u->out_src, u->out_fd, EPOLLIN, on_output, u);
	if (!err && u->pipe_fd >= 0)
		err = loop_add_io(loop, &u->pipe_src, u->pipe_fd, EPOLLOUT, on_pipe_writable, u);
	if (!err && u->pipe_src)
		loop_source_set_enabled(u->pipe_src, false);
	loop_source_set_description(u->child, "rootfs-unpack");
	return err;
}

static int copy_request(struct rootfs_unpack *u, const struct rootfs_unpack_req *req)
{
	static const EVP_MD *(*const kinds[3])(void) = { EVP_sha256, EVP_md5, EVP_sha512 };
	const char *sums[3] = { req->sha256sum, req->md5sum, req->sha512sum };

	u->url = strdup(req->url ? req->url : req->file);
	u->what = strdup(req->what ? req->what : "the archive");
	if (!u->url || !u->what)
		return -ENOMEM;
	for (int i = 0; req->url && i < 3; i++) {
		if (!sums[i] && i)
			continue;
		if (sums[i] && !(u->sums[i] = strdup(sums[i])))
			return -ENOMEM;
		u->md[i] = EVP_MD_CTX_new();
		if (!u->md[i] || !EVP_DigestInit_ex(u->md[i], kinds[i](), NULL))
			return -ENOMEM;
	}
	return 0;
}

int rootfs_unpack_start(struct rootfs *fs, const struct rootfs_unpack_req *req,
			rootfs_unpack_fn fn, void *userdata, struct rootfs_unpack **ret)
{
	struct rootfs_unpack *u = calloc(1, sizeof(*u));
	struct http_request_opts o = {
		.url = req->url, .timeout = req->timeout, .data = on_data, .head = on_head,
		.max_size = req->max_download ? req->max_download : UINT64_MAX,
	};
	int err;

	if (!u)
		return -ENOMEM;
	*u = (struct rootfs_unpack){ .fs = fs, .tree = req->tree, .fn = fn, .userdata = userdata,
				     .downloaded = req->downloaded, .pipe_fd = -1, .out_fd = -1 };
	strbuf_init(&u->line);
	u->started = loop_now(rootfs_loop(fs));
	err = copy_request(u, req);
	if (!err)
		err = spawn(u, req);
	if (!err && req->url)
		err = http_request_start(req->http, &o, on_done, u, &u->req);
	if (err < 0) {
		release(u);
		return err;
	}
	*ret = u;
	return 0;
}

void rootfs_unpack_cancel(struct rootfs_unpack *u)
{
	if (u)
		release(u);
}
