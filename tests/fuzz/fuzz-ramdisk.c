// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-ramdisk.c -- a downloaded ramdisk (outside input) with an archive
 * appended: the result is the ramdisk then the archive, byte for byte, and
 * when it carried a U-Boot ramdisk header, that header's size and both CRCs
 * describe the new data (ramdisk.h)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "fuzz.h"
#include "overlay/ramdisk.h"

static const char extra_bytes[] = "070701appended archive";
static char dir[] = "/tmp/fuzz-ramdisk.XXXXXX";
static char path[64], extra[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/ramdisk", dir);
	snprintf(extra, sizeof(extra), "%s/extra", dir);
	fd = open(extra, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, extra_bytes, sizeof(extra_bytes)) != sizeof(extra_bytes))
		abort();
	close(fd);
	return 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned char *slurp(size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	FUZZ_ASSERT(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size + 1);
	FUZZ_ASSERT(buf && read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* The new header describes the data after it; the rest of it is the old one's. */
static void check_header(const unsigned char *out, size_t len, const uint8_t *in)
{
	unsigned char h[RAMDISK_UIMAGE_HEADER];

	memcpy(h, out, sizeof(h));
	FUZZ_ASSERT(be32(h + 12) == len - RAMDISK_UIMAGE_HEADER);
	FUZZ_ASSERT(be32(h + 24) == crc32(0, out + RAMDISK_UIMAGE_HEADER,
					  (uInt)(len - RAMDISK_UIMAGE_HEADER)));
	memset(h + 4, 0, 4);
	FUZZ_ASSERT(be32(out + 4) == crc32(0, h, RAMDISK_UIMAGE_HEADER));
	FUZZ_ASSERT(!memcmp(out + 8, in + 8, 4) && !memcmp(out + 16, in + 16, 8) &&
		    !memcmp(out + 28, in + 28, RAMDISK_UIMAGE_HEADER - 28));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	unsigned char *out;
	size_t len;
	bool has;
	int fd, r;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FUZZ_ASSERT(fd >= 0 && write(fd, data, size) == (ssize_t)size);
	close(fd);
	has = ramdisk_has_uboot_header(path);
	r = ramdisk_append(path, extra, size & 1 ? has : false, err, sizeof(err));
	if (r < 0) {
		FUZZ_ASSERT(*err);	/* a refused ramdisk is said why */
		return 0;
	}
	out = slurp(&len);
	FUZZ_ASSERT(len == size + sizeof(extra_bytes));
	FUZZ_ASSERT(!memcmp(out + size, extra_bytes, sizeof(extra_bytes)));
	if (has) {
		check_header(out, len, data);
		FUZZ_ASSERT(!memcmp(out + RAMDISK_UIMAGE_HEADER, data + RAMDISK_UIMAGE_HEADER,
				    size - RAMDISK_UIMAGE_HEADER));
	} else {
		/* a header of another image type is refused, so none was rewritten */
		FUZZ_ASSERT(!memcmp(out, data, size));
	}
	free(out);
	return 0;
}
