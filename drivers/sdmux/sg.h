/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sg.h -- SCSI commands through the Linux sg driver, without waiting
 *
 * The sg driver's v3 interface is asynchronous: write() queues a struct
 * sg_io_hdr on the /dev/sg* file descriptor, the descriptor becomes readable
 * when the command finished, and read() returns the header with its status.
 * The command, data and sense buffers must stay valid until then.  Used by
 * the USB-SD-Mux driver (its USB2642 takes vendor SCSI commands); the unit
 * test links tests/fakes/sg_fake.c in place of sg.c.
 */
#ifndef LABD_SG_H
#define LABD_SG_H

#include <stddef.h>
#include <stdint.h>

#define SG_CDB_MAX 16
#define SG_SENSE_MAX 32

enum sg_dir {
	SG_TO_DEVICE,
	SG_FROM_DEVICE,
};

/** What a finished command reports: all zero on success. */
struct sg_result {
	int status;		/* SCSI status */
	int host_status;
	int driver_status;
};

/** sg_open() - open @path (a /dev/sg* node) for commands; -errno on failure. */
int sg_open(const char *path, int *ret_fd);

/**
 * sg_submit() - queue @cdb with @len bytes of @buf going @dir; the fd turns
 * readable when it finished.  @cdb, @buf and @sense stay the caller's and
 * must live until sg_reap() returned it.  Returns 0 or a negative errno.
 */
int sg_submit(int fd, const uint8_t *cdb, size_t cdb_len, enum sg_dir dir, void *buf, size_t len,
	      uint8_t *sense, unsigned timeout_ms);

/** sg_reap() - the result of the finished command; -EAGAIN while it runs. */
int sg_reap(int fd, struct sg_result *ret);

/** sg_close() - close the fd (negative: nothing). */
void sg_close(int fd);

#endif
