// SPDX-License-Identifier: GPL-2.0-or-later
/* sg.c -- asynchronous SCSI commands through the sg driver's v3 write()/read() interface */
#include "drivers/sdmux/sg.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <scsi/sg.h>

int sg_open(const char *path, int *ret_fd)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

int sg_submit(int fd, const uint8_t *cdb, size_t cdb_len, enum sg_dir dir, void *buf, size_t len,
	      uint8_t *sense, unsigned timeout_ms)
{
	struct sg_io_hdr hdr;
	ssize_t n;

	if (cdb_len > SG_CDB_MAX)
		return -EINVAL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.interface_id = 'S';
	hdr.dxfer_direction = dir == SG_TO_DEVICE ? SG_DXFER_TO_DEV : SG_DXFER_FROM_DEV;
	hdr.cmd_len = (unsigned char)cdb_len;
	hdr.cmdp = (unsigned char *)cdb;
	hdr.dxfer_len = (unsigned)len;
	hdr.dxferp = buf;
	hdr.mx_sb_len = SG_SENSE_MAX;
	hdr.sbp = sense;
	hdr.timeout = timeout_ms;
	n = write(fd, &hdr, sizeof(hdr));
	if (n < 0)
		return -errno;
	return n == sizeof(hdr) ? 0 : -EIO;
}

int sg_reap(int fd, struct sg_result *ret)
{
	struct sg_io_hdr hdr;
	ssize_t n;

	memset(&hdr, 0, sizeof(hdr));
	hdr.interface_id = 'S';
	n = read(fd, &hdr, sizeof(hdr));
	if (n < 0)
		return -errno;
	if (n != sizeof(hdr))
		return -EIO;
	ret->status = hdr.status;
	ret->host_status = hdr.host_status;
	ret->driver_status = hdr.driver_status;
	return 0;
}

void sg_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
