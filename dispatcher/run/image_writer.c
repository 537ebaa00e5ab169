// SPDX-License-Identifier: GPL-2.0-or-later
/* image_writer.c -- write and verify a card image in a child process, reported to the loop */
#include "run/image_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <openssl/evp.h>

#include "core/loop.h"
#include "core/strbuf.h"

#define IMAGE_WRITER_HASH_HEX (2 * EVP_MAX_MD_SIZE + 1)

struct image_writer {
	const struct image_writer_ops *ops;
	void *userdata;
	uint64_t size;
	int fd;			/* read end of the report pipe */
	struct loop_source *io, *child;
	struct strbuf line;	/* a partial report line */
	char *result;		/* the child's last word: "sha256 <hex>" or "error <reason>" */
	bool exited, eof;
	int status;
};

/* ---- the child ---- */

static void child_say(int out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void child_say(int out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdprintf(out, fmt, ap);
	va_end(ap);
}

static void child_hex(const unsigned char *md, unsigned len, char *out)
{
	unsigned i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

/* Copy @size bytes from @in to @out, hashing them; reports "write N". */
static int child_write(int out, int in, int dst, uint64_t size, uint8_t *buf, char *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	EVP_MD_CTX *sha = EVP_MD_CTX_new();
	uint64_t done = 0;
	unsigned mdlen = 0;
	ssize_t n, w;

	if (!sha || !EVP_DigestInit_ex(sha, EVP_sha256(), NULL))
		return -ENOMEM;
	while (done < size) {
		n = read(in, buf, IMAGE_WRITER_CHUNK);
		if (n <= 0) {
			EVP_MD_CTX_free(sha);
			return n < 0 ? -errno : -ENODATA;
		}
		EVP_DigestUpdate(sha, buf, (size_t)n);
		for (w = 0; w < n;) {
			ssize_t k = write(dst, buf + w, (size_t)(n - w));

			if (k < 0) {
				EVP_MD_CTX_free(sha);
				return -errno;
			}
			w += k;
		}
		done += (uint64_t)n;
		child_say(out, "write %llu\n", (unsigned long long)done);
	}
	EVP_DigestFinal_ex(sha, md, &mdlen);
	EVP_MD_CTX_free(sha);
	child_hex(md, mdlen, hex);
	return fsync(dst) < 0 && errno != EINVAL ? -errno : 0;
}

/* Read @size bytes of @path back, past the page cache; reports "verify N". */
static int child_verify(int out, const char *path, uint64_t size, uint8_t *buf, char *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	EVP_MD_CTX *sha = EVP_MD_CTX_new();
	uint64_t done = 0;
	unsigned mdlen = 0;
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);	/* no O_DIRECT (tmpfs) */
	if (fd < 0 || !sha || !EVP_DigestInit_ex(sha, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(sha);
		return fd < 0 ? -errno : -ENOMEM;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	while (done < size) {
		n = read(fd, buf, IMAGE_WRITER_CHUNK);
		if (n <= 0)
			break;
		if ((uint64_t)n > size - done)
			n = (ssize_t)(size - done);
		EVP_DigestUpdate(sha, buf, (size_t)n);
		done += (uint64_t)n;
		child_say(out, "verify %llu\n", (unsigned long long)done);
	}
	close(fd);
	EVP_DigestFinal_ex(sha, md, &mdlen);
	EVP_MD_CTX_free(sha);
	child_hex(md, mdlen, hex);
	return done == size ? 0 : -ENODATA;
}

static int child_run(int out, const char *src, const char *dst, uint64_t size)
{
	char wrote[IMAGE_WRITER_HASH_HEX], read_back[IMAGE_WRITER_HASH_HEX];
	uint8_t *buf = NULL;
	int in, fd, r;

	in = open(src, O_RDONLY | O_CLOEXEC);
	fd = open(dst, O_WRONLY | O_CLOEXEC);
	if (in < 0 || fd < 0 || posix_memalign((void **)&buf, IMAGE_WRITER_ALIGN,
					       IMAGE_WRITER_CHUNK)) {
		child_say(out, "error cannot open '%s': %s\n", in < 0 ? src : dst, strerror(errno));
		return 1;
	}
	r = child_write(out, in, fd, size, buf, wrote);
	if (r == 0)
		r = close(fd) < 0 ? -errno : 0;
	if (r < 0) {
		child_say(out, "error writing '%s' failed: %s\n", dst, strerror(-r));
		return 1;
	}
	r = child_verify(out, dst, size, buf, read_back);
	if (r < 0) {
		child_say(out, "error reading '%s' back failed: %s\n", dst, strerror(-r));
		return 1;
	}
	if (strcmp(wrote, read_back)) {
		child_say(out, "error verify failed: '%s' reads back sha256 %s, the image is %s\n",
			  dst, read_back, wrote);
		return 1;
	}
	child_say(out, "sha256 %s\n", wrote);
	return 0;
}

/* ---- the parent, in the loop ---- */

/* Report once the child exited and its pipe is drained. */
static void writer_finish(struct image_writer *w)
{
	const struct image_writer_ops *ops = w->ops;
	const char *res = w->result ? w->result : "";

	if (!w->exited || !w->eof || !ops)
		return;
	w->ops = NULL;		/* exactly once */
	if (!strncmp(res, "sha256 ", 7) && w->status == 0)
		ops->done(w, 0, res + 7, w->userdata);
	else if (!strncmp(res, "error ", 6))
		ops->done(w, -EIO, res + 6, w->userdata);
	else
		ops->done(w, -EIO, "the image writer died", w->userdata);
}

static void writer_line(struct image_writer *w, char *line)
{
	unsigned long long n;

	if (sscanf(line, "write %llu", &n) == 1 || sscanf(line, "verify %llu", &n) == 1) {
		if (w->ops && w->ops->progress)
			w->ops->progress(w, line[0] == 'w' ? "write" : "verify", n, w->size,
					 w->userdata);
		return;
	}
	free(w->result);
	w->result = strdup(line);
}

static int writer_on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	struct image_writer *w = userdata;
	char buf[IMAGE_WRITER_LINE_MAX], *nl;
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0) {
		w->io = loop_source_free(w->io);
		w->eof = true;
		writer_finish(w);
		return 0;
	}
	if (strbuf_add(&w->line, buf, (size_t)n) < 0)
		return -ENOMEM;
	while ((nl = memchr(w->line.buf, '\n', w->line.len))) {
		*nl = '\0';
		writer_line(w, w->line.buf);
		strbuf_consume(&w->line, (size_t)(nl - w->line.buf) + 1);
	}
	if (w->line.len > IMAGE_WRITER_LINE_MAX)
		strbuf_reset(&w->line);
	return 0;
}

static int writer_on_exit(struct loop_source *s, const siginfo_t *si, void *userdata)
{
	struct image_writer *w = userdata;

	w->child = loop_source_free(w->child);
	w->exited = true;
	w->status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
	writer_finish(w);
	return 0;
}

static int writer_fork(struct image_writer *w, const char *src, const char *dst, int *pipefd,
		       pid_t *ret)
{
	sigset_t all;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		close(pipefd[0]);
		_exit(child_run(pipefd[1], src, dst, w->size));
	}
	*ret = pid;
	return 0;
}

int image_writer_start(struct loop *l, const char *src, const char *dst,
		       const struct image_writer_ops *ops, void *userdata,
		       struct image_writer **ret)
{
	struct image_writer *w;
	int pipefd[2], r;
	struct stat st;
	pid_t pid = 0;

	if (stat(src, &st) < 0)
		return -errno;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ops = ops;
	w->userdata = userdata;
	w->size = (uint64_t)st.st_size;
	strbuf_init(&w->line);
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		free(w);
		return -errno;
	}
	w->fd = pipefd[0];
	r = writer_fork(w, src, dst, pipefd, &pid);
	close(pipefd[1]);
	if (r >= 0)
		r = fcntl(w->fd, F_SETFL, O_NONBLOCK) < 0 ? -errno : 0;
	if (r >= 0)
		r = loop_add_io(l, &w->io, w->fd, EPOLLIN, writer_on_io, w);
	if (r >= 0)
		r = loop_add_child(l, &w->child, pid, writer_on_exit, w);
	if (r < 0 && pid > 0 && !w->child) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);	/* killed: reaped at once */
	}
	if (r < 0) {
		image_writer_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

struct image_writer *image_writer_free(struct image_writer *w)
{
	if (!w)
		return NULL;
	loop_source_free(w->child);	/* kills the child if it still runs */
	loop_source_free(w->io);
	close(w->fd);
	strbuf_release(&w->line);
	free(w->result);
	free(w);
	return NULL;
}
