// SPDX-License-Identifier: GPL-2.0-or-later
/* usbsdmux.c -- SD-mux driver "usbsdmux": the Pengutronix USB-SD-Mux, through SCSI on /dev/sg */
/*
 * Board definition:
 *
 *	sdmux = {
 *		driver = "usbsdmux";
 *		serial = "000000001234";	// the mux's USB serial number
 *		// control = "/dev/sg3";	// optional: its sg node; default
 *		//	/dev/usb-sd-mux/id-<serial> (usbsdmux's udev rule)
 *		// model = "classic";		// optional: "classic" or "fast"
 *		//	(default: the reader's SCSI model in sysfs)
 *		disk = "/dev/disk/by-id/usb-LinuxAut_sdmux_HS-SD_MMC_000000001234-0:0";
 *	};
 *
 * The mux is a Microchip USB2642 card reader (USB 0424:4041) whose auxiliary
 * I2C bus drives a GPIO expander: a PCA9536 at 0x41 on the classic mux
 * (SCSI model "sdmux HS-SD/MMC"), a TCA6408 at 0x20 on the USB-SD-Mux FAST
 * ("sdFST HS-SD/MMC").  I2C goes through vendor SCSI commands on the reader's
 * sg node: CDB 0xcf 0x23 (write: address<<1, 0, length) with the bytes in a
 * 512-byte data phase, and 0xcf 0x22 (write then read: address<<1,
 * address<<1|1, read length, write length, register) reading into one.
 * Commands run asynchronously (sg.h): nothing here waits.
 *
 * Expander outputs: data-disable, power-disable, select-DUT, card-removed
 * (bits 0,1,2,3 on the PCA9536; 2,1,0,3 on the TCA6408).  A switch first
 * disconnects the card from both sides (data and power off, the pins made
 * outputs) and waits SDMUX_USB_DISCHARGE for the card's supply to fall, then
 * selects the side and connects it; it then reads the input register back:
 * power-disable set means off, select-DUT set means dut, else host.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/sdmux.h"
#include "drivers/sdmux/drivers.h"
#include "drivers/sdmux/sg.h"
#include "drivers/usb.h"

#define SDMUX_USB_VID 0x0424
#define SDMUX_USB_PID 0x4041
#define SDMUX_USB_DISCHARGE (1 * USEC_PER_SEC)	/* card supply off before switching */
#define SDMUX_USB_CMD_TIMEOUT_MS 3000
#define SDMUX_USB_DATA 512		/* the reader's data phase */
#define SDMUX_USB_OPCODE 0xcf
#define SDMUX_USB_I2C_WRITE 0x23
#define SDMUX_USB_I2C_WRITE_READ 0x22
#define SDMUX_USB_REG_INPUT 0x00
#define SDMUX_USB_REG_OUTPUT 0x01
#define SDMUX_USB_REG_CONFIG 0x03
#define SDMUX_USB_MODE_PINS 0x0f	/* the four mux outputs */
#define SDMUX_USB_MAX_STEPS 12
#define SDMUX_USB_SYS_SG "/sys/class/scsi_generic"

/* One kind of mux: where its expander is and what its pins mean. */
struct usbsdmux_model {
	const char *name;	/* "classic", "fast" */
	const char *scsi_model;	/* sysfs model of the reader */
	uint8_t addr;		/* 7-bit I2C address of the expander */
	uint8_t dat_off, pwr_off, dut, removed;
	uint8_t outputs;	/* pins to make outputs */
};

static const struct usbsdmux_model usbsdmux_models[] = {
	{ "classic", "sdmux HS-SD/MMC", 0x41, 0x01, 0x02, 0x04, 0x08, 0x0f },
	{ "fast", "sdFST HS-SD/MMC", 0x20, 0x04, 0x02, 0x01, 0x08, 0x3f },
};

enum usbsdmux_op {
	USBSDMUX_READ_OUTPUT,	/* cache the output register */
	USBSDMUX_WRITE_OUTPUT,	/* the mode pins = value, other pins kept */
	USBSDMUX_READ_CONFIG,
	USBSDMUX_WRITE_CONFIG,	/* make the mux pins outputs */
	USBSDMUX_WAIT,		/* SDMUX_USB_DISCHARGE */
	USBSDMUX_READ_INPUT,	/* check the mode */
};

struct usbsdmux_step {
	enum usbsdmux_op op;
	uint8_t value;
};

struct usbsdmux {
	char *control;
	const struct usbsdmux_model *model;	/* NULL: from sysfs at each switch */
	struct usb_match match;
	struct usb *usb;
	struct usb_watch *watch;
	/* the switch in progress */
	enum sdmux_mode mode;
	const struct usbsdmux_model *cur;
	struct usbsdmux_step steps[SDMUX_USB_MAX_STEPS];
	size_t n_steps, at;
	int fd;
	struct loop_source *io, *timer;
	uint8_t output, config;	/* register caches */
	uint8_t cdb[SG_CDB_MAX];
	uint8_t data[SDMUX_USB_DATA];
	uint8_t sense[SG_SENSE_MAX];
};

static void usbsdmux_presence(bool present, void *userdata)
{
	struct sdmux *m = userdata;
	struct usbsdmux *u = sdmux_priv(m);
	const struct driver_ctx *ctx = sdmux_ctx(m);
	char what[128];

	snprintf(what, sizeof(what), "USB-SD-Mux '%s'", u->match.serial);
	ctx->presence("sdmux", present, what, ctx->board_userdata);
}

static int usbsdmux_parse_model(struct usbsdmux *u, const config_setting_t *s, struct diag *diag)
{
	const config_setting_t *e;
	const char *name;
	size_t i;
	int r = cfg_get_string(s, "model", false, &name, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	for (i = 0; i < sizeof(usbsdmux_models) / sizeof(usbsdmux_models[0]); i++)
		if (!strcmp(usbsdmux_models[i].name, name))
			u->model = &usbsdmux_models[i];
	if (u->model)
		return 0;
	e = config_setting_get_member(s, "model");
	return diag_add(diag, cfg_file(e), cfg_line(e),
			"unknown USB-SD-Mux model '%s' (known: classic, fast)", name);
}

static int usbsdmux_parse(struct sdmux *m, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = {
		SDMUX_COMMON_KEYS, "serial", "control", "model", NULL
	};
	const struct driver_ctx *ctx = sdmux_ctx(m);
	struct usbsdmux *u = sdmux_priv(m);
	const char *serial = NULL, *control = NULL;
	int r;

	u->fd = -1;
	r = cfg_check_keys(s, known, diag);
	if (cfg_get_string(s, "serial", false, &serial, diag) == -EINVAL ||
	    cfg_get_string(s, "control", false, &control, diag) == -EINVAL ||
	    usbsdmux_parse_model(u, s, diag) < 0)
		r = -EINVAL;
	if (r == 0 && !serial && !control)
		r = diag_add(diag, cfg_file(s), cfg_line(s),
			     "name the USB-SD-Mux by 'serial' (or its sg node by 'control')");
	if (r < 0)
		return r;
	if (control)
		u->control = strdup(control);
	else if (asprintf(&u->control, "/dev/usb-sd-mux/id-%s", serial) < 0)
		u->control = NULL;
	u->match.vid = SDMUX_USB_VID;
	u->match.pid = SDMUX_USB_PID;
	u->match.serial = serial ? strdup(serial) : NULL;
	if (!u->control || (serial && !u->match.serial))
		return -ENOMEM;
	if (!ctx->loop || !serial)
		return 0;
	r = usb_get(ctx->loop, &u->usb);
	if (r >= 0 && ctx->presence)
		r = usb_watch_add(u->usb, &u->match, usbsdmux_presence, m, &u->watch);
	return r;
}

/* The model from the reader's SCSI model in sysfs: /sys/class/scsi_generic/sgN/device/model. */
static int usbsdmux_detect(struct sdmux *m)
{
	struct usbsdmux *u = sdmux_priv(m);
	char real[PATH_MAX], path[PATH_MAX + 64], model[64] = "";
	const char *base;
	size_t i;
	FILE *f;

	if (!realpath(u->control, real)) {
		sdmux_complete(m, -errno, "cannot find USB-SD-Mux control '%s': %s", u->control,
			       strerror(errno));
		return -ENODEV;
	}
	base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	snprintf(path, sizeof(path), SDMUX_USB_SYS_SG "/%s/device/model", base);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(model, sizeof(model), f))
			model[0] = '\0';
		fclose(f);
	}
	model[strcspn(model, "\n")] = '\0';
	for (i = strlen(model); i > 0 && model[i - 1] == ' '; i--)
		model[i - 1] = '\0';
	for (i = 0; i < sizeof(usbsdmux_models) / sizeof(usbsdmux_models[0]); i++) {
		if (!strcmp(usbsdmux_models[i].scsi_model, model)) {
			u->cur = &usbsdmux_models[i];
			return 0;
		}
	}
	sdmux_complete(m, -ENODEV, "'%s' is not a USB-SD-Mux (SCSI model '%s'): set 'model'",
		       u->control, model);
	return -ENODEV;
}

static void usbsdmux_add(struct usbsdmux *u, enum usbsdmux_op op, uint8_t value)
{
	u->steps[u->n_steps].op = op;
	u->steps[u->n_steps].value = value;
	u->n_steps++;
}

/* The program of a switch: disconnect, wait, select and connect, read back. */
static void usbsdmux_plan(struct usbsdmux *u, enum sdmux_mode mode)
{
	const struct usbsdmux_model *md = u->cur;
	uint8_t off = md->dat_off | md->pwr_off;

	u->n_steps = u->at = 0;
	usbsdmux_add(u, USBSDMUX_READ_OUTPUT, 0);
	usbsdmux_add(u, USBSDMUX_WRITE_OUTPUT, off | md->removed);
	usbsdmux_add(u, USBSDMUX_READ_CONFIG, 0);
	usbsdmux_add(u, USBSDMUX_WRITE_CONFIG, 0);
	usbsdmux_add(u, USBSDMUX_WAIT, 0);
	if (mode == SDMUX_HOST) {
		usbsdmux_add(u, USBSDMUX_WRITE_OUTPUT, 0);
	} else if (mode == SDMUX_DUT) {
		/* select first, then connect: no glitch on the card's lines */
		usbsdmux_add(u, USBSDMUX_WRITE_OUTPUT, off | md->dut | md->removed);
		usbsdmux_add(u, USBSDMUX_WRITE_OUTPUT, md->dut | md->removed);
	}
	usbsdmux_add(u, USBSDMUX_READ_INPUT, 0);
}

/* Send the I2C transaction of step @s: a register write, or a register read. */
static int usbsdmux_submit(struct usbsdmux *u, const struct usbsdmux_step *s)
{
	const struct usbsdmux_model *md = u->cur;
	uint8_t reg = 0, value = 0;

	memset(u->cdb, 0, sizeof(u->cdb));
	memset(u->data, 0, sizeof(u->data));
	u->cdb[0] = SDMUX_USB_OPCODE;
	u->cdb[2] = (uint8_t)(md->addr << 1);
	switch (s->op) {
	case USBSDMUX_WRITE_OUTPUT:
		reg = SDMUX_USB_REG_OUTPUT;
		value = (uint8_t)((u->output & ~SDMUX_USB_MODE_PINS) | s->value);
		u->output = value;
		break;
	case USBSDMUX_WRITE_CONFIG:
		reg = SDMUX_USB_REG_CONFIG;
		value = (uint8_t)(u->config & ~md->outputs);
		break;
	default:
		reg = s->op == USBSDMUX_READ_OUTPUT ? SDMUX_USB_REG_OUTPUT :
		      s->op == USBSDMUX_READ_CONFIG ? SDMUX_USB_REG_CONFIG : SDMUX_USB_REG_INPUT;
		u->cdb[1] = SDMUX_USB_I2C_WRITE_READ;
		u->cdb[3] = (uint8_t)(md->addr << 1 | 1);
		u->cdb[5] = 1;		/* read length */
		u->cdb[6] = 1;		/* write length: the register */
		u->cdb[7] = reg;
		return sg_submit(u->fd, u->cdb, sizeof(u->cdb), SG_FROM_DEVICE, u->data,
				 sizeof(u->data), u->sense, SDMUX_USB_CMD_TIMEOUT_MS);
	}
	u->cdb[1] = SDMUX_USB_I2C_WRITE;
	u->cdb[5] = 2;			/* data length: register, value */
	u->data[0] = reg;
	u->data[1] = value;
	return sg_submit(u->fd, u->cdb, sizeof(u->cdb), SG_TO_DEVICE, u->data, sizeof(u->data),
			 u->sense, SDMUX_USB_CMD_TIMEOUT_MS);
}

static void usbsdmux_close(struct usbsdmux *u)
{
	u->io = loop_source_free(u->io);
	if (u->timer)
		loop_timer_set(u->timer, USEC_INFINITY);
	sg_close(u->fd);
	u->fd = -1;
}

static void usbsdmux_fail(struct sdmux *m, int err, const char *what)
{
	struct usbsdmux *u = sdmux_priv(m);

	usbsdmux_close(u);
	sdmux_complete(m, err, "USB-SD-Mux '%s': %s: %s", u->control, what, strerror(-err));
}

/* The mode the input register shows. */
static enum sdmux_mode usbsdmux_mode_of(const struct usbsdmux_model *md, uint8_t input)
{
	if (input & md->pwr_off)
		return SDMUX_OFF;
	return input & md->dut ? SDMUX_DUT : SDMUX_HOST;
}

/* Run steps until one waits (a command in flight or the discharge timer). */
static void usbsdmux_run(struct sdmux *m)
{
	struct usbsdmux *u = sdmux_priv(m);
	int r;

	if (u->at == u->n_steps) {
		usbsdmux_close(u);
		sdmux_complete(m, 0, NULL);
		return;
	}
	if (u->steps[u->at].op == USBSDMUX_WAIT) {
		u->at++;
		loop_timer_set_rel(u->timer, SDMUX_USB_DISCHARGE);
		return;
	}
	r = usbsdmux_submit(u, &u->steps[u->at]);
	if (r < 0)
		usbsdmux_fail(m, r, "cannot send an I2C command");
}

/* A command finished: keep what it read, check the mode at the end. */
static int usbsdmux_done_step(struct sdmux *m)
{
	struct usbsdmux *u = sdmux_priv(m);
	const struct usbsdmux_step *s = &u->steps[u->at++];
	enum sdmux_mode got;

	if (s->op == USBSDMUX_READ_OUTPUT)
		u->output = u->data[0];
	else if (s->op == USBSDMUX_READ_CONFIG)
		u->config = u->data[0];
	if (s->op != USBSDMUX_READ_INPUT)
		return 0;
	got = usbsdmux_mode_of(u->cur, u->data[0]);
	if (got == u->mode)
		return 0;
	usbsdmux_close(u);
	sdmux_complete(m, -EIO, "USB-SD-Mux '%s' reads %s after switching to %s (inputs 0x%02x)",
		       u->control, sdmux_mode_name(got), sdmux_mode_name(u->mode), u->data[0]);
	return -EIO;
}

static int usbsdmux_on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	struct sdmux *m = userdata;
	struct usbsdmux *u = sdmux_priv(m);
	struct sg_result res;
	int r = sg_reap(fd, &res);

	if (r == -EAGAIN)
		return 0;
	if (r < 0) {
		usbsdmux_fail(m, r, "cannot read the I2C command's result");
		return 0;
	}
	if (res.status || res.host_status || res.driver_status) {
		usbsdmux_close(u);
		sdmux_complete(m, -EIO, "USB-SD-Mux '%s': I2C command failed (SCSI status 0x%02x, host 0x%x, driver 0x%x)",
			       u->control, res.status, res.host_status, res.driver_status);
		return 0;
	}
	if (usbsdmux_done_step(m) == 0)
		usbsdmux_run(m);
	return 0;
}

static int usbsdmux_on_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	usbsdmux_run(userdata);
	return 0;
}

static int usbsdmux_open(struct sdmux *m)
{
	struct usbsdmux *u = sdmux_priv(m);
	struct loop *l = sdmux_ctx(m)->loop;
	int r = sg_open(u->control, &u->fd);

	if (r < 0) {
		sdmux_complete(m, r, "cannot open USB-SD-Mux control '%s': %s", u->control,
			       strerror(-r));
		return r;
	}
	r = loop_add_io(l, &u->io, u->fd, EPOLLIN, usbsdmux_on_io, m);
	if (r >= 0 && !u->timer)
		r = loop_add_timer(l, &u->timer, USEC_INFINITY, usbsdmux_on_timer, m);
	if (r < 0)
		usbsdmux_fail(m, r, "cannot watch the control");
	return r;
}

static int usbsdmux_start(struct sdmux *m, enum sdmux_mode mode)
{
	struct usbsdmux *u = sdmux_priv(m);

	u->mode = mode;
	u->cur = u->model;
	if (!u->cur && usbsdmux_detect(m) < 0)
		return 0;
	if (usbsdmux_open(m) < 0)
		return 0;
	usbsdmux_plan(u, mode);
	usbsdmux_run(m);
	return 0;
}

static void usbsdmux_abort(struct sdmux *m)
{
	usbsdmux_close(sdmux_priv(m));
}

static void usbsdmux_release(struct sdmux *m)
{
	struct usbsdmux *u = sdmux_priv(m);

	usbsdmux_close(u);
	u->timer = loop_source_free(u->timer);
	u->watch = usb_watch_free(u->watch);
	u->usb = usb_unref(u->usb);
	usb_match_release(&u->match);
	free(u->control);
}

const struct sdmux_driver sdmux_usbsdmux_driver = {
	.name = "usbsdmux",
	.priv_size = sizeof(struct usbsdmux),
	.parse = usbsdmux_parse,
	.start = usbsdmux_start,
	.abort = usbsdmux_abort,
	.release = usbsdmux_release,
};
