// SPDX-License-Identifier: GPL-2.0-or-later
/* spool.c -- a bounded on-disk queue of checksummed records in segment files */
#include "results/backends/spool.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/evp.h>

#define SPOOL_MAGIC "LSR1"
#define SPOOL_ACK "ack"
#define SPOOL_SEG_SUFFIX ".seg"
#define SPOOL_SEG_NAME_LEN 16		/* hex digits of a segment's start position */
#define SPOOL_MIN_SEGMENT (8ULL << 10)

struct spool_seg {
	uint64_t start;		/* position of its first byte */
	uint64_t size;		/* bytes in the file */
};

struct spool {
	char *dir;
	uint64_t max;
	uint64_t seg_max;
	uint64_t head;		/* the smallest of slot[] */
	uint64_t slot[SPOOL_SLOTS];	/* per slot: its records before it are delivered */
	uint64_t tail;
	uint64_t size;
	uint64_t dropped;
	struct spool_seg *segs;	/* oldest first */
	size_t n_segs;
	int wfd;		/* the last segment, open for appending, or -1 */
	int rfd;		/* the segment last read, or -1 */
	uint64_t rfd_start;
	int ack_fd;
	EVP_MD_CTX *md;
	char *buf;		/* payload being read */
	size_t buf_alloc;
};

struct spool_header {
	char magic[4];
	uint32_t len;		/* little-endian */
	uint64_t sum;		/* little-endian */
};

/* ---- helpers ---- */

static uint64_t checksum(struct spool *sp, const void *a, size_t alen, const void *b, size_t blen)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	uint64_t v = 0;

	if (EVP_DigestInit_ex(sp->md, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(sp->md, a, alen) != 1 || (blen && EVP_DigestUpdate(sp->md, b, blen) != 1) ||
	    EVP_DigestFinal_ex(sp->md, md, &mdlen) != 1 || mdlen < sizeof(v))
		return 0;
	memcpy(&v, md, sizeof(v));
	return le64toh(v);
}

static char *seg_path(const struct spool *sp, uint64_t start)
{
	char *p;

	if (asprintf(&p, "%s/%016" PRIx64 SPOOL_SEG_SUFFIX, sp->dir, start) < 0)
		return NULL;
	return p;
}

static int mkdir_parents(const char *dir)
{
	char *p = strdup(dir), *s;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0750) < 0 && errno != EEXIST)
			err = -errno;
		*s = '/';
	}
	if (!err && mkdir(p, 0750) < 0 && errno != EEXIST)
		err = -errno;
	free(p);
	return err;
}

static int add_seg(struct spool *sp, uint64_t start, uint64_t size)
{
	struct spool_seg *n = realloc(sp->segs, (sp->n_segs + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	sp->segs = n;
	sp->segs[sp->n_segs++] = (struct spool_seg){ start, size };
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct spool_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Index of the segment holding @pos (the last one starting at or before it), or -1. */
static ssize_t find_seg(const struct spool *sp, uint64_t pos)
{
	ssize_t i;

	for (i = (ssize_t)sp->n_segs - 1; i >= 0; i--)
		if (sp->segs[i].start <= pos)
			return i;
	return -1;
}

static void drop_first_seg(struct spool *sp)
{
	char *path = seg_path(sp, sp->segs[0].start);

	if (sp->rfd >= 0 && sp->rfd_start == sp->segs[0].start) {
		close(sp->rfd);
		sp->rfd = -1;
	}
	if (sp->n_segs == 1 && sp->wfd >= 0) {
		close(sp->wfd);
		sp->wfd = -1;
	}
	if (path)
		unlink(path);
	free(path);
	sp->size -= sp->segs[0].size;
	memmove(sp->segs, sp->segs + 1, (sp->n_segs - 1) * sizeof(*sp->segs));
	sp->n_segs--;
}

/* ---- records ---- */

/*
 * Read the record at @off of the open segment @fd (@end bytes long) into
 * sp->buf.  Returns its payload length, -EBADMSG when it is torn or corrupt,
 * or -ENOMEM.
 */
static ssize_t read_record(struct spool *sp, int fd, uint64_t off, uint64_t end)
{
	struct spool_header h;
	uint32_t len;

	if (end - off < SPOOL_HEADER ||
	    pread(fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, SPOOL_MAGIC, 4))
		return -EBADMSG;
	len = le32toh(h.len);
	if (len > SPOOL_MAX_RECORD || end - off - SPOOL_HEADER < len)
		return -EBADMSG;
	if (len + 1 > sp->buf_alloc) {
		char *n = realloc(sp->buf, len + 1);

		if (!n)
			return -ENOMEM;
		sp->buf = n;
		sp->buf_alloc = len + 1;
	}
	if (pread(fd, sp->buf, len, (off_t)(off + SPOOL_HEADER)) != (ssize_t)len)
		return -EBADMSG;
	sp->buf[len] = '\0';
	if (checksum(sp, &h.len, sizeof(h.len), sp->buf, len) != le64toh(h.sum))
		return -EBADMSG;
	return len;
}

/* The newest segment: keep its whole records, cut a torn or corrupt tail off. */
static int recover_last(struct spool *sp)
{
	struct spool_seg *s = &sp->segs[sp->n_segs - 1];
	char *path = seg_path(sp, s->start);
	uint64_t off = 0;
	ssize_t len;
	int fd, err = 0;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	while (off < s->size && (len = read_record(sp, fd, off, s->size)) >= 0)
		off += SPOOL_HEADER + (uint64_t)len;
	if (off < s->size) {
		if (ftruncate(fd, (off_t)off) < 0) {
			err = -errno;
			goto out_close;
		}
		sp->dropped += s->size - off;
		s->size = off;
	}
	sp->tail = s->start + s->size;
	if (s->size < sp->seg_max) {
		sp->wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (sp->wfd < 0)
			err = -errno;
	}
out_close:
	close(fd);
out_free:
	free(path);
	return err;
}

static int scan_dir(struct spool *sp)
{
	DIR *d = opendir(sp->dir);
	struct dirent *e;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		char *end;
		uint64_t start = strtoull(e->d_name, &end, 16);
		struct stat st;

		if (end != e->d_name + SPOOL_SEG_NAME_LEN || strcmp(end, SPOOL_SEG_SUFFIX) ||
		    fstatat(dirfd(d), e->d_name, &st, 0) < 0)
			continue;
		err = add_seg(sp, start, (uint64_t)st.st_size);
		sp->size += (uint64_t)st.st_size;
	}
	closedir(d);
	if (sp->n_segs)	/* an empty spool has no array: qsort() wants one */
		qsort(sp->segs, sp->n_segs, sizeof(*sp->segs), cmp_seg);
	return err;
}

/*
 * The acknowledged positions into sp->slot, or -ENOENT when there are none
 * worth trusting.  An older labd wrote one position for everything: 16 bytes,
 * the position and its checksum.
 */
static int read_ack(struct spool *sp)
{
	uint64_t rec[SPOOL_ACK_BYTES / 8];
	ssize_t n = pread(sp->ack_fd, rec, sizeof(rec), 0);
	unsigned i;

	if (n == (ssize_t)sizeof(rec) &&
	    checksum(sp, rec, sizeof(rec) - 8, NULL, 0) == le64toh(rec[SPOOL_SLOTS])) {
		for (i = 0; i < SPOOL_SLOTS; i++)
			sp->slot[i] = le64toh(rec[i]);
		return 0;
	}
	if (n < 16 || checksum(sp, &rec[0], sizeof(rec[0]), NULL, 0) != le64toh(rec[1]))
		return -ENOENT;
	for (i = 0; i < SPOOL_SLOTS; i++)
		sp->slot[i] = le64toh(rec[0]);
	return 0;
}

static int write_ack(struct spool *sp, const uint64_t *slot)
{
	uint64_t rec[SPOOL_ACK_BYTES / 8];
	unsigned i;

	for (i = 0; i < SPOOL_SLOTS; i++)
		rec[i] = htole64(slot[i]);
	rec[SPOOL_SLOTS] = htole64(checksum(sp, rec, sizeof(rec) - 8, NULL, 0));
	if (pwrite(sp->ack_fd, rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
		return -EIO;
	return 0;
}

static uint64_t lowest(const uint64_t *slot)
{
	uint64_t min = slot[0];
	unsigned i;

	for (i = 1; i < SPOOL_SLOTS; i++)
		if (slot[i] < min)
			min = slot[i];
	return min;
}

/* Delete the segments that hold only acknowledged records. */
static void trim(struct spool *sp)
{
	while (sp->n_segs > 1 && sp->segs[1].start <= sp->head)
		drop_first_seg(sp);
	if (sp->n_segs == 1 && sp->head == sp->tail && sp->segs[0].size >= sp->seg_max)
		drop_first_seg(sp);
}

/* Every slot's position inside the records on disk; the head is the lowest. */
static void clamp_slots(struct spool *sp)
{
	unsigned i;

	if (!sp->n_segs) {
		/* no record left: positions go on from the highest one delivered */
		for (i = 0; i < SPOOL_SLOTS; i++)
			if (sp->slot[i] > sp->tail)
				sp->tail = sp->slot[i];
		for (i = 0; i < SPOOL_SLOTS; i++)
			sp->slot[i] = sp->tail;
	}
	for (i = 0; i < SPOOL_SLOTS && sp->n_segs; i++) {
		if (sp->slot[i] < sp->segs[0].start)
			sp->slot[i] = sp->segs[0].start;
		if (sp->slot[i] > sp->tail)
			sp->slot[i] = sp->tail;
	}
	sp->head = lowest(sp->slot);
}

static int recover(struct spool *sp)
{
	char *path;
	int err;

	if (asprintf(&path, "%s/%s", sp->dir, SPOOL_ACK) < 0)
		return -ENOMEM;
	sp->ack_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	free(path);
	if (sp->ack_fd < 0)
		return -errno;
	err = scan_dir(sp);
	if (!err && sp->n_segs)
		err = recover_last(sp);
	if (err)
		return err;
	read_ack(sp);	/* none worth trusting: every record is sent again */
	clamp_slots(sp);
	trim(sp);
	return 0;
}

/* ---- API ---- */

int spool_open(const char *dir, uint64_t max_bytes, struct spool **ret)
{
	struct spool *sp;
	int err;

	if (max_bytes < SPOOL_MIN_BYTES)
		return -EINVAL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->wfd = sp->rfd = sp->ack_fd = -1;
	sp->max = max_bytes;
	sp->seg_max = max_bytes / 8 < SPOOL_MIN_SEGMENT ? SPOOL_MIN_SEGMENT : max_bytes / 8;
	if (sp->seg_max > SPOOL_SEGMENT_MAX)
		sp->seg_max = SPOOL_SEGMENT_MAX;
	sp->dir = strdup(dir);
	sp->md = EVP_MD_CTX_new();
	err = sp->dir && sp->md ? mkdir_parents(dir) : -ENOMEM;
	if (!err)
		err = recover(sp);
	if (err < 0) {
		spool_close(sp);
		return err;
	}
	*ret = sp;
	return 0;
}

struct spool *spool_close(struct spool *sp)
{
	if (!sp)
		return NULL;
	if (sp->wfd >= 0)
		close(sp->wfd);
	if (sp->rfd >= 0)
		close(sp->rfd);
	if (sp->ack_fd >= 0)
		close(sp->ack_fd);
	EVP_MD_CTX_free(sp->md);
	free(sp->segs);
	free(sp->buf);
	free(sp->dir);
	free(sp);
	return NULL;
}

static int start_segment(struct spool *sp)
{
	char *path = seg_path(sp, sp->tail);
	int err;

	if (!path)
		return -ENOMEM;
	if (sp->wfd >= 0)
		close(sp->wfd);
	sp->wfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	err = sp->wfd < 0 ? (errno == EDQUOT ? -ENOSPC : -errno) : add_seg(sp, sp->tail, 0);
	free(path);
	return err;
}

int spool_append(struct spool *sp, const void *data, size_t len)
{
	struct spool_header h = { .magic = SPOOL_MAGIC };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)data, len } };
	struct spool_seg *s;
	ssize_t n;
	int err;

	if (len > SPOOL_MAX_RECORD)
		return -E2BIG;
	if (sp->size + SPOOL_HEADER + len > sp->max)
		return -ENOSPC;
	if (sp->wfd < 0 || !sp->n_segs || sp->segs[sp->n_segs - 1].size >= sp->seg_max) {
		err = start_segment(sp);
		if (err < 0)
			return err;
	}
	h.len = htole32((uint32_t)len);
	h.sum = htole64(checksum(sp, &h.len, sizeof(h.len), data, len));
	s = &sp->segs[sp->n_segs - 1];
	n = writev(sp->wfd, iov, 2);
	if (n != (ssize_t)(SPOOL_HEADER + len)) {
		/* a full file system (a short write too) is a full spool: the data waits */
		err = n < 0 && errno != ENOSPC && errno != EDQUOT ? -EIO : -ENOSPC;
		if (n > 0 && ftruncate(sp->wfd, (off_t)s->size) < 0)
			return -EIO;
		return err;
	}
	s->size += SPOOL_HEADER + len;
	sp->size += SPOOL_HEADER + len;
	sp->tail += SPOOL_HEADER + len;
	return 0;
}

/* The read fd of segment @i, opened on demand. */
static int seg_fd(struct spool *sp, size_t i)
{
	char *path;

	if (sp->rfd >= 0 && sp->rfd_start == sp->segs[i].start)
		return sp->rfd;
	if (sp->rfd >= 0)
		close(sp->rfd);
	path = seg_path(sp, sp->segs[i].start);
	sp->rfd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	free(path);
	sp->rfd_start = sp->segs[i].start;
	return sp->rfd >= 0 ? sp->rfd : -EIO;
}

int spool_read(struct spool *sp, uint64_t *pos, size_t max_bytes, spool_record_fn fn,
	       void *userdata)
{
	size_t total = 0;
	int count = 0, r;

	if (*pos < sp->head || *pos > sp->tail)
		return -EINVAL;
	while (*pos < sp->tail) {
		ssize_t i = find_seg(sp, *pos), len;
		struct spool_seg *s;
		int fd;

		if (i < 0)
			return -EIO;
		s = &sp->segs[i];
		if (*pos >= s->start + s->size) {
			if ((size_t)i + 1 >= sp->n_segs)
				break;
			*pos = sp->segs[i + 1].start;
			continue;
		}
		fd = seg_fd(sp, (size_t)i);
		if (fd < 0)
			return fd;
		len = read_record(sp, fd, *pos - s->start, s->size);
		if (len == -EBADMSG && (size_t)i + 1 < sp->n_segs) {
			/* corrupt inside an older segment: its rest is lost */
			sp->dropped += s->start + s->size - *pos;
			*pos = sp->segs[i + 1].start;
			continue;
		}
		if (len < 0)
			return len == -ENOMEM ? -ENOMEM : -EIO;
		if (count && total + (size_t)len > max_bytes)
			break;
		*pos += SPOOL_HEADER + (uint64_t)len;
		total += (size_t)len;
		count++;
		r = fn(sp->buf, (size_t)len, userdata);
		if (r < 0)
			return r;
		if (r > 0)
			break;
	}
	return count;
}

int spool_read_at(struct spool *sp, uint64_t pos, spool_record_fn fn, void *userdata)
{
	ssize_t i = find_seg(sp, pos), len;
	struct spool_seg *s;
	int fd;

	if (pos < sp->head || pos >= sp->tail || i < 0)
		return -EINVAL;
	s = &sp->segs[i];
	if (pos >= s->start + s->size)
		return -EINVAL;
	fd = seg_fd(sp, (size_t)i);
	if (fd < 0)
		return fd;
	len = read_record(sp, fd, pos - s->start, s->size);
	if (len < 0)
		return (int)len;
	return fn(sp->buf, (size_t)len, userdata);
}

int spool_scan(struct spool *sp, spool_record_fn fn, void *userdata)
{
	uint64_t head = sp->head, pos;
	int r;

	if (!sp->n_segs)
		return 0;
	pos = sp->segs[0].start;
	sp->head = pos;		/* spool_read() reads from the head on */
	r = spool_read(sp, &pos, SIZE_MAX, fn, userdata);
	sp->head = head;
	return r;
}

/* Whether a head moved to @head deletes a segment (as trim() would). */
static bool head_frees(const struct spool *sp, uint64_t head)
{
	if (sp->n_segs > 1)
		return sp->segs[1].start <= head;
	return sp->n_segs == 1 && head == sp->tail && sp->segs[0].size >= sp->seg_max;
}

/* Each slot at the higher of its position and @pos[slot], into @ret. */
static void merge_slots(const struct spool *sp, const uint64_t *pos, uint64_t *ret)
{
	unsigned i;

	for (i = 0; i < SPOOL_SLOTS; i++)
		ret[i] = pos[i] > sp->slot[i] ? pos[i] : sp->slot[i];
}

bool spool_ack_slots_frees(const struct spool *sp, const uint64_t pos[SPOOL_SLOTS])
{
	uint64_t slot[SPOOL_SLOTS];

	merge_slots(sp, pos, slot);
	return head_frees(sp, lowest(slot));
}

int spool_ack_slots(struct spool *sp, const uint64_t pos[SPOOL_SLOTS])
{
	uint64_t slot[SPOOL_SLOTS];
	unsigned i;
	int err;

	for (i = 0; i < SPOOL_SLOTS; i++)
		if (pos[i] > sp->tail)
			return -EINVAL;
	merge_slots(sp, pos, slot);
	err = write_ack(sp, slot);
	if (err < 0)
		return err;
	memcpy(sp->slot, slot, sizeof(slot));
	sp->head = lowest(slot);
	trim(sp);
	return 0;
}

bool spool_ack_frees(const struct spool *sp, uint64_t pos)
{
	return head_frees(sp, pos > sp->head ? pos : sp->head);
}

int spool_ack(struct spool *sp, uint64_t pos)
{
	uint64_t slot[SPOOL_SLOTS];
	unsigned i;

	if (pos < sp->head || pos > sp->tail)
		return -EINVAL;
	for (i = 0; i < SPOOL_SLOTS; i++)
		slot[i] = pos;
	return spool_ack_slots(sp, slot);
}

uint64_t spool_slot_pos(const struct spool *sp, unsigned slot)
{
	return slot < SPOOL_SLOTS ? sp->slot[slot] : sp->head;
}

uint64_t spool_head(const struct spool *sp)
{
	return sp->head;
}

uint64_t spool_tail(const struct spool *sp)
{
	return sp->tail;
}

uint64_t spool_size(const struct spool *sp)
{
	return sp->size;
}

uint64_t spool_max(const struct spool *sp)
{
	return sp->max;
}

uint64_t spool_dropped(const struct spool *sp)
{
	return sp->dropped;
}

const char *spool_dir(const struct spool *sp)
{
	return sp->dir;
}
