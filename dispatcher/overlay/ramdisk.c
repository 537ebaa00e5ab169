// SPDX-License-Identifier: GPL-2.0-or-later
/* ramdisk.c -- appending an archive to a ramdisk, rewriting a U-Boot legacy header */
#include "overlay/ramdisk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#define UIMAGE_MAGIC 0x27051956u
#define UIMAGE_TYPE_RAMDISK 3
#define COPY_CHUNK (256 * 1024)

/* Offsets in the legacy header (all big-endian 32-bit fields first). */
enum { H_MAGIC = 0, H_HCRC = 4, H_TIME = 8, H_SIZE = 12, H_LOAD = 16, H_EP = 20, H_DCRC = 24,
       H_OS = 28, H_ARCH = 29, H_TYPE = 30, H_COMP = 31 };

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static bool read_header(int fd, unsigned char *h)
{
	return pread(fd, h, RAMDISK_UIMAGE_HEADER, 0) == RAMDISK_UIMAGE_HEADER &&
	       get_be32(h + H_MAGIC) == UIMAGE_MAGIC;
}

bool ramdisk_has_uboot_header(const char *path)
{
	unsigned char h[RAMDISK_UIMAGE_HEADER];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool yes = fd >= 0 && read_header(fd, h) && h[H_TYPE] == UIMAGE_TYPE_RAMDISK;

	if (fd >= 0)
		close(fd);
	return yes;
}

/* Copy @in from @off to its end into @out, adding to *@crc and *@size. */
static int copy(int in, off_t off, int out, uLong *crc, uint64_t *size)
{
	char *buf = malloc(COPY_CHUNK);
	ssize_t n, w;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while ((n = pread(in, buf, COPY_CHUNK, off)) > 0) {
		off += n;
		*crc = crc32(*crc, (const Bytef *)buf, (uInt)n);
		*size += (uint64_t)n;
		for (ssize_t done = 0; done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				err = -errno;
				goto out;
			}
		}
	}
	if (n < 0)
		err = -errno;
out:
	free(buf);
	return err;
}

/* The new header: old fields, new size and CRCs. */
static void fix_header(unsigned char *h, uint64_t size, uLong dcrc)
{
	put_be32(h + H_SIZE, (uint32_t)size);
	put_be32(h + H_DCRC, (uint32_t)dcrc);
	put_be32(h + H_HCRC, 0);
	put_be32(h + H_HCRC, (uint32_t)crc32(0, h, RAMDISK_UIMAGE_HEADER));
}

/* Write the ramdisk @in (+ header @h if not NULL) and @extra into @out. */
static int write_new(int in, int extra, int out, unsigned char *h, char *err, size_t errlen)
{
	uLong crc = crc32(0, NULL, 0);
	uint64_t size = 0;
	int r = 0;

	if (h && write(out, h, RAMDISK_UIMAGE_HEADER) != RAMDISK_UIMAGE_HEADER)
		r = -errno ?: -EIO;
	if (!r)
		r = copy(in, h ? RAMDISK_UIMAGE_HEADER : 0, out, &crc, &size);
	if (!r)
		r = copy(extra, 0, out, &crc, &size);
	if (!r && h && size > UINT32_MAX) {
		snprintf(err, errlen, "the ramdisk would be larger than a U-Boot image can hold");
		return -EFBIG;
	}
	if (!r && h) {
		fix_header(h, size, crc);
		if (pwrite(out, h, RAMDISK_UIMAGE_HEADER, 0) != RAMDISK_UIMAGE_HEADER)
			r = -errno ?: -EIO;
	}
	if (!r && fsync(out) < 0)
		r = -errno;
	if (r)
		snprintf(err, errlen, "cannot write the new ramdisk: %s", strerror(-r));
	return r;
}

static int check_header(int in, bool uboot, unsigned char *h, bool *has, char *err,
			size_t errlen)
{
	*has = read_header(in, h);
	if (uboot && !*has) {
		snprintf(err, errlen, "the ramdisk has no U-Boot header (header: u-boot)");
		return -EINVAL;
	}
	if (*has && h[H_TYPE] != UIMAGE_TYPE_RAMDISK) {
		snprintf(err, errlen, "the ramdisk's U-Boot image is of type %u, not a ramdisk",
			 h[H_TYPE]);
		return -EINVAL;
	}
	return 0;
}

int ramdisk_append(const char *path, const char *extra, bool uboot, char *err, size_t errlen)
{
	unsigned char h[RAMDISK_UIMAGE_HEADER];
	int in = -1, x = -1, out = -1, r;
	char *tmp = NULL;
	bool has;

	in = open(path, O_RDONLY | O_CLOEXEC);
	x = open(extra, O_RDONLY | O_CLOEXEC);
	if (in < 0 || x < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open '%s': %s", in < 0 ? path : extra, strerror(-r));
		goto out;
	}
	r = check_header(in, uboot, h, &has, err, errlen);
	if (r < 0)
		goto out;
	/* a copy renamed over: the ramdisk may be a hard link into the deploy cache */
	if (asprintf(&tmp, "%s.append", path) < 0) {
		tmp = NULL;
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(-r));
		goto out;
	}
	r = write_new(in, x, out, has ? h : NULL, err, errlen);
	if (!r && rename(tmp, path) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot replace '%s': %s", path, strerror(-r));
	}
out:
	if (out >= 0)
		close(out);
	if (r && tmp)
		unlink(tmp);
	if (in >= 0)
		close(in);
	if (x >= 0)
		close(x);
	free(tmp);
	return r;
}
