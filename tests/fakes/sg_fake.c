// SPDX-License-Identifier: GPL-2.0-or-later
/* sg_fake.c -- an emulated USB-SD-Mux behind the sg.h calls, for test-sdmux */
#include "sg_fake.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "drivers/sdmux/sg.h"

#define FAKE_LOG_MAX 8192
#define FAKE_REGS 4

static uint8_t fake_addr;
static uint8_t fake_regs[FAKE_REGS];	/* input (computed), output, polarity, config */
static uint8_t fake_stuck;
static char fake_log[FAKE_LOG_MAX];
static int fake_open_err, fake_status, fake_silent;
static int fake_pipe[2] = { -1, -1 };
static struct sg_result fake_result;

static void fake_record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fake_record(const char *fmt, ...)
{
	size_t len = strlen(fake_log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fake_log + len, sizeof(fake_log) - len, fmt, ap);
	va_end(ap);
	len = strlen(fake_log);
	if (len + 1 < sizeof(fake_log))
		strcpy(fake_log + len, "\n");
}

void sg_fake_reset(const char *model)
{
	char c;

	while (fake_pipe[0] >= 0 && read(fake_pipe[0], &c, 1) == 1)
		;		/* a result a previous test left behind */
	fake_addr = strcmp(model, "fast") ? 0x41 : 0x20;
	memset(fake_regs, 0, sizeof(fake_regs));
	fake_regs[1] = 0xff;	/* output latch at power-on */
	fake_regs[3] = 0xff;	/* all pins inputs */
	fake_stuck = 0;
	fake_log[0] = '\0';
	fake_open_err = fake_status = fake_silent = 0;
}

const char *sg_fake_log(void)
{
	return fake_log;
}

void sg_fake_fail(const char *what, int err)
{
	if (!strcmp(what, "open"))
		fake_open_err = err;
	else if (!strcmp(what, "status"))
		fake_status = err;
	else if (!strcmp(what, "silent"))
		fake_silent = 1;
	else if (!strcmp(what, "stuck"))
		fake_stuck = (uint8_t)err;
}

uint8_t sg_fake_reg(unsigned reg)
{
	return reg < FAKE_REGS ? fake_regs[reg] : 0;
}

/* Output pins drive the input register; inputs read 0. */
static uint8_t fake_input(void)
{
	return (uint8_t)((fake_regs[1] & ~fake_regs[3]) | fake_stuck);
}

int sg_open(const char *path, int *ret_fd)
{
	if (fake_open_err) {
		int err = fake_open_err;

		fake_open_err = 0;
		return -err;
	}
	if (fake_pipe[0] < 0 && pipe2(fake_pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	*ret_fd = dup(fake_pipe[0]);
	return *ret_fd < 0 ? -errno : 0;
}

/* The I2C transaction of one vendor command; 0 or a SCSI status. */
static int fake_i2c(const uint8_t *cdb, uint8_t *buf)
{
	unsigned addr = cdb[2] >> 1, reg;

	if (cdb[0] != 0xcf || addr != fake_addr)
		return 2;
	if (cdb[1] == 0x23 && cdb[5] == 2 && buf[0] < FAKE_REGS) {
		fake_record("w %02x %02x %02x", addr, buf[0], buf[1]);
		if (buf[0])
			fake_regs[buf[0]] = buf[1];
		return 0;
	}
	if (cdb[1] == 0x22 && cdb[6] == 1 && cdb[7] < FAKE_REGS) {
		reg = cdb[7];
		buf[0] = reg ? fake_regs[reg] : fake_input();
		fake_record("r %02x %02x -> %02x", addr, reg, buf[0]);
		return 0;
	}
	return 2;
}

int sg_submit(int fd, const uint8_t *cdb, size_t cdb_len, enum sg_dir dir, void *buf, size_t len,
	      uint8_t *sense, unsigned timeout_ms)
{
	memset(&fake_result, 0, sizeof(fake_result));
	if (fake_silent) {
		fake_silent = 0;
		return 0;
	}
	fake_result.status = fake_status ? fake_status : fake_i2c(cdb, buf);
	fake_status = 0;
	return write(fake_pipe[1], "x", 1) == 1 ? 0 : -EIO;
}

int sg_reap(int fd, struct sg_result *ret)
{
	char c;

	if (read(fd, &c, 1) != 1)
		return -EAGAIN;
	*ret = fake_result;
	return 0;
}

void sg_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
