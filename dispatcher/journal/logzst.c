// SPDX-License-Identifier: GPL-2.0-or-later
/* logzst.c -- log files in zstd's seekable format: written in steps, read at any offset */
#include "journal/logzst.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "journal/journal_internal.h"

/*
 * The seek table (zstd's contrib/seekable_format): a skippable frame
 *   u32 0x184D2A5E, u32 size of what follows,
 *   per frame: u32 compressed size, u32 decompressed size [, u32 checksum],
 *   u32 number of frames, u8 descriptor (bit 7: checksums), u32 0x8F92EAB1
 * at the end of the file, all little-endian.  labd writes no checksums in
 * the table (every frame carries zstd's own content checksum).
 */
#define SKIPPABLE_MAGIC 0x184D2A5EU
#define SEEKABLE_MAGIC 0x8F92EAB1U
#define FOOTER_SIZE 9
#define ENTRY_SIZE 8
#define MAX_FRAMES (1U << 24)	/* 4 TiB of log at LOGZST_FRAME */
#define WINDOW_LOG_MAX 20	/* frames are LOGZST_FRAME: a larger window is not ours */

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	while (len) {
		n = pread(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf = (char *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* ---- reading ---- */

struct logzst {
	int fd;
	size_t n;		/* frames */
	uint64_t *dec;		/* n + 1: decompressed offset where frame i starts */
	uint64_t *comp;		/* n + 1: file offset where frame i starts */
	ZSTD_DStream *ds;
	bool active;		/* ds is inside the data, at comp_pos */
	uint64_t comp_pos;	/* next compressed byte to read */
	ZSTD_inBuffer in;
	unsigned char *in_buf;
	size_t in_cap;
	unsigned char *out;	/* decompressed bytes [out_off, out_off + out_len) */
	size_t out_cap, out_len;
	uint64_t out_off;
};

/* The seek table's frame sizes into z->dec and z->comp. */
static int read_entries(struct logzst *z, const unsigned char *t)
{
	size_t i;

	z->dec = calloc(z->n + 1, sizeof(*z->dec));
	z->comp = calloc(z->n + 1, sizeof(*z->comp));
	if (!z->dec || !z->comp)
		return -ENOMEM;
	for (i = 0; i < z->n; i++) {
		z->comp[i + 1] = z->comp[i] + get_le32(t + i * ENTRY_SIZE);
		z->dec[i + 1] = z->dec[i] + get_le32(t + i * ENTRY_SIZE + 4);
	}
	return 0;
}

static int read_seek_table(struct logzst *z)
{
	unsigned char foot[FOOTER_SIZE], head[8], *t = NULL;
	uint64_t size, table;
	struct stat st;
	int r;

	if (fstat(z->fd, &st) < 0)
		return -errno;
	size = (uint64_t)st.st_size;
	if (size < FOOTER_SIZE + 8)
		return -EINVAL;
	r = pread_all(z->fd, foot, sizeof(foot), size - FOOTER_SIZE);
	if (r < 0)
		return r;
	z->n = get_le32(foot);
	if (get_le32(foot + 5) != SEEKABLE_MAGIC || foot[4] != 0 || z->n > MAX_FRAMES)
		return -EINVAL;	/* checksums in the table (bit 7) are not labd's */
	table = 8 + (uint64_t)z->n * ENTRY_SIZE + FOOTER_SIZE;
	if (table > size)
		return -EINVAL;
	r = pread_all(z->fd, head, sizeof(head), size - table);
	if (r < 0)
		return r;
	if (get_le32(head) != SKIPPABLE_MAGIC || get_le32(head + 4) != table - 8)
		return -EINVAL;
	t = malloc(z->n * ENTRY_SIZE + 1);
	if (!t)
		return -ENOMEM;
	r = pread_all(z->fd, t, z->n * ENTRY_SIZE, size - table + 8);
	if (!r)
		r = read_entries(z, t);
	free(t);
	if (!r && z->comp[z->n] != size - table)
		r = -EINVAL;
	return r;
}

static int reader_buffers(struct logzst *z)
{
	z->ds = ZSTD_createDStream();
	z->in_cap = ZSTD_DStreamInSize();
	z->out_cap = ZSTD_DStreamOutSize();
	z->in_buf = malloc(z->in_cap);
	z->out = malloc(z->out_cap);
	if (!z->ds || !z->in_buf || !z->out)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_DCtx_setParameter(z->ds, ZSTD_d_windowLogMax, WINDOW_LOG_MAX)))
		return -EINVAL;
	z->in.src = z->in_buf;
	return 0;
}

int logzst_open(const char *path, struct logzst **ret)
{
	struct logzst *z = calloc(1, sizeof(*z));
	int r;

	if (!z)
		return -ENOMEM;
	z->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (z->fd < 0) {
		r = -errno;
		goto fail;
	}
	r = read_seek_table(z);
	if (!r)
		r = reader_buffers(z);
	if (r < 0)
		goto fail;
	*ret = z;
	return 0;
fail:
	logzst_close(z);
	return r;
}

struct logzst *logzst_close(struct logzst *z)
{
	if (!z)
		return NULL;
	if (z->fd >= 0)
		close(z->fd);
	ZSTD_freeDStream(z->ds);
	free(z->dec);
	free(z->comp);
	free(z->in_buf);
	free(z->out);
	free(z);
	return NULL;
}

uint64_t logzst_size(const struct logzst *z)
{
	return z->dec[z->n];
}

/* The frame holding decompressed offset @off (< the size). */
static size_t frame_of(const struct logzst *z, uint64_t off)
{
	size_t lo = 0, hi = z->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (z->dec[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Start decompressing at the frame holding @off. */
static void seek_frame(struct logzst *z, uint64_t off)
{
	size_t f = frame_of(z, off);

	ZSTD_DCtx_reset(z->ds, ZSTD_reset_session_only);
	z->comp_pos = z->comp[f];
	z->out_off = z->dec[f];
	z->out_len = 0;
	z->in.size = z->in.pos = 0;
	z->active = true;
}

/* The next decompressed bytes into z->out (at least one, unless the file is corrupt). */
static int decompress_more(struct logzst *z)
{
	ZSTD_outBuffer out = { z->out, z->out_cap, 0 };
	size_t r;

	z->out_off += z->out_len;
	z->out_len = 0;
	while (!out.pos) {
		if (z->in.pos == z->in.size) {
			uint64_t left = z->comp[z->n] - z->comp_pos;
			size_t n = left < z->in_cap ? (size_t)left : z->in_cap;
			int err;

			if (!n)
				return -EIO;	/* the table promised more than the frames hold */
			err = pread_all(z->fd, z->in_buf, n, z->comp_pos);
			if (err < 0)
				return err;
			z->comp_pos += n;
			z->in.size = n;
			z->in.pos = 0;
		}
		r = ZSTD_decompressStream(z->ds, &out, &z->in);
		if (ZSTD_isError(r))
			return -EIO;
	}
	z->out_len = out.pos;
	return 0;
}

ssize_t logzst_pread(struct logzst *z, void *buf, size_t len, uint64_t offset)
{
	uint64_t end = logzst_size(z);
	size_t n;
	int r;

	if (offset >= end || !len)
		return 0;
	/* on from here unless it is behind us or a frame or more ahead */
	if (!z->active || offset < z->out_off ||
	    offset >= z->out_off + z->out_len + LOGZST_FRAME)
		seek_frame(z, offset);
	while (offset >= z->out_off + z->out_len) {
		r = decompress_more(z);
		if (r < 0) {
			z->active = false;
			return r;
		}
	}
	n = (size_t)(z->out_off + z->out_len - offset);
	n = n < len ? n : len;
	memcpy(buf, z->out + (offset - z->out_off), n);
	return (ssize_t)n;
}

/* ---- writing ---- */

struct logzst_writer {
	char *path;
	char *tmp;		/* @path.zst.tmp.PID: labd and `labd gc` may both compress */
	char *dest;		/* @path.zst */
	int in_fd, out_fd;
	ZSTD_CCtx *cc;
	unsigned char *in, *out;
	size_t out_cap;
	unsigned char *table;	/* the seek table's entries */
	size_t n, alloc;
	uint64_t in_total, out_total;
	bool sealed;		/* everything written: logzst_writer_commit() next */
};

static int writer_files(struct logzst_writer *w, const char *path)
{
	if (asprintf(&w->dest, "%s" LOGZST_SUFFIX, path) < 0 ||
	    asprintf(&w->tmp, "%s" LOGZST_SUFFIX ".tmp.%d", path, (int)getpid()) < 0) {
		w->dest = w->tmp = NULL;
		return -ENOMEM;
	}
	w->path = strdup(path);
	if (!w->path)
		return -ENOMEM;
	w->in_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (w->in_fd < 0)
		return -errno;
	w->out_fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return w->out_fd < 0 ? -errno : 0;
}

static int writer_compressor(struct logzst_writer *w, int level)
{
	w->cc = ZSTD_createCCtx();
	w->in = malloc(LOGZST_FRAME);
	w->out_cap = ZSTD_compressBound(LOGZST_FRAME);
	w->out = malloc(w->out_cap);
	if (!w->cc || !w->in || !w->out)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cc, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cc, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	return 0;
}

int logzst_writer_new(const char *path, int level, struct logzst_writer **ret)
{
	struct logzst_writer *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->in_fd = w->out_fd = -1;
	r = writer_files(w, path);
	if (!r)
		r = writer_compressor(w, level);
	if (r < 0) {
		logzst_writer_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

struct logzst_writer *logzst_writer_free(struct logzst_writer *w)
{
	if (!w)
		return NULL;
	if (w->in_fd >= 0)
		close(w->in_fd);
	if (w->out_fd >= 0) {
		close(w->out_fd);
		unlink(w->tmp);
	}
	ZSTD_freeCCtx(w->cc);
	free(w->in);
	free(w->out);
	free(w->table);
	free(w->path);
	free(w->tmp);
	free(w->dest);
	free(w);
	return NULL;
}

uint64_t logzst_writer_in(const struct logzst_writer *w)
{
	return w->in_total;
}

uint64_t logzst_writer_out(const struct logzst_writer *w)
{
	return w->out_total;
}

static int table_add(struct logzst_writer *w, size_t comp, size_t dec)
{
	if (w->n == MAX_FRAMES)
		return -EFBIG;
	if (w->n == w->alloc) {
		size_t alloc = w->alloc ? 2 * w->alloc : 64;
		unsigned char *t = realloc(w->table, alloc * ENTRY_SIZE);

		if (!t)
			return -ENOMEM;
		w->table = t;
		w->alloc = alloc;
	}
	put_le32(w->table + w->n * ENTRY_SIZE, (uint32_t)comp);
	put_le32(w->table + w->n * ENTRY_SIZE + 4, (uint32_t)dec);
	w->n++;
	return 0;
}

/* Up to LOGZST_FRAME bytes of the file into w->in; the count, or a negative errno. */
static ssize_t read_frame(struct logzst_writer *w)
{
	size_t got = 0;
	ssize_t n;

	while (got < LOGZST_FRAME) {
		n = read(w->in_fd, w->in + got, LOGZST_FRAME - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The seek table: the file is complete, not yet synced nor in place. */
static int writer_seal(struct logzst_writer *w)
{
	unsigned char head[8], foot[FOOTER_SIZE];
	int r;

	put_le32(head, SKIPPABLE_MAGIC);
	put_le32(head + 4, (uint32_t)(w->n * ENTRY_SIZE + FOOTER_SIZE));
	put_le32(foot, (uint32_t)w->n);
	foot[4] = 0;
	put_le32(foot + 5, SEEKABLE_MAGIC);
	r = journal_write_all(w->out_fd, head, sizeof(head));
	if (!r)
		r = journal_write_all(w->out_fd, w->table, w->n * ENTRY_SIZE);
	if (!r)
		r = journal_write_all(w->out_fd, foot, sizeof(foot));
	if (r < 0)
		return r;
	w->out_total += sizeof(head) + w->n * ENTRY_SIZE + sizeof(foot);
	w->sealed = true;
	close(w->in_fd);	/* now: whoever unlinks the original frees it */
	w->in_fd = -1;
	return 0;
}

void logzst_writer_committed(struct logzst_writer *w)
{
	if (w->out_fd >= 0)
		close(w->out_fd);
	w->out_fd = -1;	/* not removed at free: it is in place */
}

int logzst_writer_commit(struct logzst_writer *w)
{
	int r;

	if (!w->sealed)
		return -EINVAL;
	if (fsync(w->out_fd) < 0)
		return -errno;
	close(w->out_fd);
	w->out_fd = -1;
	if (rename(w->tmp, w->dest) < 0) {
		r = -errno;
		unlink(w->tmp);
		return r;
	}
	return unlink(w->path) < 0 && errno != ENOENT ? -errno : 0;
}

int logzst_writer_step(struct logzst_writer *w)
{
	ssize_t n;
	size_t c;
	int r;

	if (w->sealed)
		return 1;
	n = read_frame(w);
	if (n < 0)
		return (int)n;
	if (n == 0) {
		r = writer_seal(w);
		return r < 0 ? r : 1;
	}
	c = ZSTD_compress2(w->cc, w->out, w->out_cap, w->in, (size_t)n);
	if (ZSTD_isError(c))
		return -EIO;
	r = journal_write_all(w->out_fd, w->out, c);
	if (!r)
		r = table_add(w, c, (size_t)n);
	if (r < 0)
		return r;
	w->in_total += (uint64_t)n;
	w->out_total += c;
	return 0;
}

int logzst_compress(const char *path, int level)
{
	struct logzst_writer *w = NULL;
	int r = logzst_writer_new(path, level, &w);

	while (!r)
		r = logzst_writer_step(w);
	if (r > 0)
		r = logzst_writer_commit(w);
	logzst_writer_free(w);
	return r < 0 ? r : 0;
}
