// SPDX-License-Identifier: GPL-2.0-or-later
/* image_writer.c -- write and verify a card image in a child process, reported to the loop */
#include "run/image_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "core/worker.h"

#define IMAGE_WRITER_HASH_HEX (2 * EVP_MAX_MD_SIZE + 1)

struct image_writer {
	const struct image_writer_ops *ops;
	void *userdata;
	uint64_t size;
	const char *src, *dst;	/* for the child, borrowed during image_writer_start() */
	struct worker *worker;
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

/* The child: its last word is "sha256 <hex>" or "error <reason>". */
static int writer_child(int out, void *arg)
{
	struct image_writer *w = arg;

	return child_run(out, w->src, w->dst, w->size);
}

static void writer_line(struct worker *wk, const char *line, void *userdata)
{
	struct image_writer *w = userdata;
	unsigned long long n;

	if ((sscanf(line, "write %llu", &n) == 1 || sscanf(line, "verify %llu", &n) == 1) &&
	    w->ops->progress)
		w->ops->progress(w, line[0] == 'w' ? "write" : "verify", n, w->size, w->userdata);
}

static void writer_done(struct worker *wk, int status, const char *last, void *userdata)
{
	struct image_writer *w = userdata;

	if (!strncmp(last, "sha256 ", 7) && status == 0)
		w->ops->done(w, 0, last + 7, w->userdata);
	else if (!strncmp(last, "error ", 6))
		w->ops->done(w, -EIO, last + 6, w->userdata);
	else
		w->ops->done(w, -EIO, "the image writer died", w->userdata);
}

static const struct worker_ops writer_ops = { .line = writer_line, .done = writer_done };

int image_writer_start(struct loop *l, const char *src, const char *dst,
		       const struct image_writer_ops *ops, void *userdata,
		       struct image_writer **ret)
{
	struct image_writer *w;
	struct stat st;
	int r;

	if (stat(src, &st) < 0)
		return -errno;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ops = ops;
	w->userdata = userdata;
	w->size = (uint64_t)st.st_size;
	w->src = src;
	w->dst = dst;
	r = worker_start(l, writer_child, w, &writer_ops, w, &w->worker);
	w->src = w->dst = NULL;
	if (r < 0) {
		free(w);
		return r;
	}
	*ret = w;
	return 0;
}

struct image_writer *image_writer_free(struct image_writer *w)
{
	if (!w)
		return NULL;
	worker_free(w->worker);	/* kills the child if it still runs */
	free(w);
	return NULL;
}
