// SPDX-License-Identifier: GPL-2.0-or-later
/* ykush.c -- power driver "ykush": Yepkit YKUSH, YKUSH3 and YKUSH XS switchable USB hubs */
/*
 * Board definition:
 *
 *	power = {
 *		driver = "ykush";
 *		serial = "YK31337";	// the YKUSH's USB serial number
 *		port = 2;		// downstream port 1-3, or "all"
 *		timeout = 5;		// optional, seconds
 *	};
 *
 * A YKUSH (04d8:f2f7, legacy 04d8:0042), YKUSH3 (04d8:f11b) or YKUSH XS
 * (04d8:f0cd) is a HID device taking one command per report: byte 0 is the
 * command, echoed in byte 1, the rest zero; its reply report starts with
 * 0x01 when the command was accepted.  Port N up is 0x10|N, down 0x00|N,
 * all ports 0x1a / 0x0a; 0x20|N reads port N back (byte 1 above 0x10: up),
 * 0x2a all of them.  Reports go over the interrupt endpoints of interface 0
 * (SET_REPORT control requests when there is no OUT endpoint), after
 * detaching the kernel's usbhid driver.  Every switch is read back.  Cycle
 * is off, the board's power-on delay, on.  With a board, the YKUSH is
 * watched: the board is bad while it is unplugged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"
#include "drivers/usb.h"

#define YKUSH_VID 0x04d8
#define YKUSH_PORTS 3
#define YKUSH_ALL 0x0a		/* "all ports" in a command's low nibble */
#define YKUSH_CMD_UP 0x10
#define YKUSH_CMD_GET 0x20
#define YKUSH_REPLY_OK 0x01
#define YKUSH_STATE_UP 0x10	/* a state byte above this: the port is up */
#define YKUSH_REPORT_MAX 64
#define YKUSH_TIMEOUT_MS 1000	/* per report, as Yepkit's tools */
#define YKUSH_IFACE 0
#define YKUSH_HID_SET_REPORT 0x09
#define YKUSH_HID_OUTPUT_REPORT 0x0200

static const uint16_t ykush_pids[] = { 0xf2f7, 0x0042, 0xf11b, 0xf0cd };

enum ykush_step {
	YKUSH_SEND_SWITCH,
	YKUSH_READ_SWITCH,
	YKUSH_SEND_GET,
	YKUSH_READ_GET,
};

struct ykush {
	struct usb_match match;	/* vid and serial */
	unsigned port;		/* 1..YKUSH_PORTS, or YKUSH_ALL */
	struct usb *usb;
	struct usb_watch *watch;
	char what[128];
	/* the operation in progress */
	bool on;
	struct loop_source *defer;
	struct usb_dev *dev;
	uint8_t ep_in, ep_out;	/* ep_out 0: reports through SET_REPORT */
	size_t report;		/* report size: the IN endpoint's packet size */
	enum ykush_step step;
};

static void ykush_presence(bool present, void *userdata)
{
	struct power *p = userdata;
	struct ykush *y = power_priv(p);
	const struct driver_ctx *ctx = power_ctx(p);

	ctx->presence("power", present, y->what, ctx->board_userdata);
}

/* `port`: 1..3 or "all". */
static int ykush_parse_port(struct ykush *y, const config_setting_t *s, struct diag *diag)
{
	const config_setting_t *e = config_setting_get_member(s, "port");
	long long v;

	if (e && config_setting_type(e) == CONFIG_TYPE_STRING) {
		if (strcmp(config_setting_get_string(e), "all"))
			return diag_add(diag, cfg_file(e), cfg_line(e),
					"'port' must be 1 to %d or \"all\", not '%s'", YKUSH_PORTS,
					config_setting_get_string(e));
		y->port = YKUSH_ALL;
		return 0;
	}
	if (cfg_get_int(s, "port", true, 1, YKUSH_PORTS, &v, diag) < 0)
		return -EINVAL;
	y->port = (unsigned)v;
	return 0;
}

static int ykush_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = { POWER_COMMON_KEYS, "serial", "port", NULL };
	const struct driver_ctx *ctx = power_ctx(p);
	struct ykush *y = power_priv(p);
	const char *serial = NULL;
	int r;

	r = cfg_check_keys(s, known, diag);
	if (cfg_get_string(s, "serial", true, &serial, diag) < 0)
		r = -EINVAL;
	if (ykush_parse_port(y, s, diag) < 0)
		r = -EINVAL;
	if (r < 0)
		return r;
	y->match.vid = YKUSH_VID;
	y->match.serial = strdup(serial);
	if (!y->match.serial)
		return -ENOMEM;
	snprintf(y->what, sizeof(y->what), "YKUSH '%s'", serial);
	if (!ctx->loop)
		return 0;
	r = usb_get(ctx->loop, &y->usb);
	if (r >= 0 && ctx->presence)
		r = usb_watch_add(y->usb, &y->match, ykush_presence, p, &y->watch);
	return r;
}

/* ---- the device ---- */

static bool ykush_is_known(libusb_device *d)
{
	struct libusb_device_descriptor desc;
	size_t i;

	if (libusb_get_device_descriptor(d, &desc) < 0)
		return false;
	for (i = 0; i < sizeof(ykush_pids) / sizeof(ykush_pids[0]); i++)
		if (desc.idProduct == ykush_pids[i])
			return true;
	return false;
}

/* The interrupt endpoints of interface 0, from the cached descriptors (no I/O). */
static int ykush_endpoints(struct ykush *y, libusb_device *d)
{
	struct libusb_config_descriptor *cfg;
	const struct libusb_interface_descriptor *alt;
	const struct libusb_endpoint_descriptor *ep;
	int i, r = libusb_get_active_config_descriptor(d, &cfg);

	if (r < 0)
		return usb_errno(r);
	y->ep_in = y->ep_out = 0;
	if (cfg->bNumInterfaces > YKUSH_IFACE && cfg->interface[YKUSH_IFACE].num_altsetting) {
		alt = &cfg->interface[YKUSH_IFACE].altsetting[0];
		for (i = 0; i < alt->bNumEndpoints; i++) {
			ep = &alt->endpoint[i];
			if ((ep->bmAttributes & 3) != LIBUSB_TRANSFER_TYPE_INTERRUPT)
				continue;
			if (ep->bEndpointAddress & LIBUSB_ENDPOINT_IN) {
				y->ep_in = ep->bEndpointAddress;
				y->report = ep->wMaxPacketSize;
			} else {
				y->ep_out = ep->bEndpointAddress;
			}
		}
	}
	libusb_free_config_descriptor(cfg);
	if (!y->ep_in || !y->report || y->report > YKUSH_REPORT_MAX)
		return -ENOTSUP;
	return 0;
}

static int ykush_open(struct power *p)
{
	struct ykush *y = power_priv(p);
	libusb_device *d;
	int r = usb_find(y->usb, &y->match, &d);

	if (r == -ENODEV || r == -ENOTUNIQ) {
		power_complete(p, r, r == -ENODEV ? "%s not found" : "several devices are %s",
			       y->what);
		return r;
	}
	if (r < 0)
		return r;
	if (!ykush_is_known(d) || ykush_endpoints(y, d) < 0) {
		libusb_unref_device(d);
		power_complete(p, -ENOTTY, "USB device with serial '%s' is not a YKUSH",
			       y->match.serial);
		return -ENOTTY;
	}
	r = usb_dev_open(y->usb, d, &y->dev);
	libusb_unref_device(d);
	if (r >= 0)
		r = usb_dev_claim(y->dev, YKUSH_IFACE);
	if (r < 0)
		power_complete(p, r, "cannot open %s: %s", y->what, strerror(-r));
	return r;
}

/* ---- the exchange: switch command and reply, then status command and reply ---- */

static uint8_t ykush_command(const struct ykush *y)
{
	if (y->step <= YKUSH_READ_SWITCH)
		return (uint8_t)((y->on ? YKUSH_CMD_UP : 0) | y->port);
	return (uint8_t)(YKUSH_CMD_GET | y->port);
}

static void ykush_on_xfer(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			  void *userdata);

/* Send the command report of the current step, or read the reply to it. */
static int ykush_submit(struct power *p)
{
	struct ykush *y = power_priv(p);
	uint8_t cmd = ykush_command(y), report[YKUSH_REPORT_MAX] = { cmd, cmd };
	struct usb_request rq = {
		.type = USB_XFER_INTERRUPT, .len = y->report,
		.timeout_ms = power_request_timeout_ms(p, YKUSH_TIMEOUT_MS),
	};

	if (y->step == YKUSH_READ_SWITCH || y->step == YKUSH_READ_GET) {
		rq.endpoint = y->ep_in;
	} else if (y->ep_out) {
		rq.endpoint = y->ep_out;
		rq.data = report;
	} else {
		rq.type = USB_XFER_CONTROL;
		rq.request_type = LIBUSB_ENDPOINT_OUT | LIBUSB_REQUEST_TYPE_CLASS |
				  LIBUSB_RECIPIENT_INTERFACE;
		rq.request = YKUSH_HID_SET_REPORT;
		rq.value = YKUSH_HID_OUTPUT_REPORT;
		rq.index = YKUSH_IFACE;
		rq.data = report;
	}
	return usb_dev_submit(y->dev, &rq, ykush_on_xfer, p);
}

/* The state bytes of a status reply: the port asked for, or all of them. */
static int ykush_check_state(struct power *p, const uint8_t *data, size_t len)
{
	struct ykush *y = power_priv(p);
	unsigned first = y->port == YKUSH_ALL ? 1 : y->port;
	unsigned last = y->port == YKUSH_ALL ? YKUSH_PORTS : y->port;
	unsigned port;

	if (y->port == YKUSH_ALL && len < YKUSH_PORTS + 1) {
		power_complete(p, -EIO, "%s sent a short status (%zu bytes)", y->what, len);
		return -EIO;
	}
	for (port = first; port <= last; port++) {
		if ((data[y->port == YKUSH_ALL ? port : 1] > YKUSH_STATE_UP) != y->on) {
			power_complete(p, -EIO, "port %u of %s is still %s after power %s", port,
				       y->what, y->on ? "down" : "up", y->on ? "on" : "off");
			return -EIO;
		}
	}
	return 0;
}

/* A reply report: accepted, complete, and for a status, the right state. */
static int ykush_check_reply(struct power *p, const uint8_t *data, size_t len)
{
	struct ykush *y = power_priv(p);
	uint8_t cmd = ykush_command(y);

	if (len < 2) {
		power_complete(p, -EIO, "%s sent a short reply to command 0x%02x (%zu bytes)",
			       y->what, cmd, len);
		return -EIO;
	}
	if (data[0] != YKUSH_REPLY_OK) {
		power_complete(p, -EIO, "%s refused command 0x%02x (reply 0x%02x)", y->what, cmd,
			       data[0]);
		return -EIO;
	}
	if (y->step == YKUSH_READ_GET)
		return ykush_check_state(p, data, len);
	return 0;
}

static void ykush_close(struct ykush *y)
{
	y->dev = usb_dev_close(y->dev);
}

static void ykush_on_xfer(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			  void *userdata)
{
	struct power *p = userdata;
	struct ykush *y = power_priv(p);
	bool reply = y->step == YKUSH_READ_SWITCH || y->step == YKUSH_READ_GET;

	if (!err && !reply && len != y->report)
		err = -EIO;
	if (err) {
		power_complete(p, err, "%s: %s of command 0x%02x failed: %s", y->what,
			       reply ? "reading the reply" : "sending the report",
			       ykush_command(y), strerror(-err));
		ykush_close(y);
		return;
	}
	if (reply && ykush_check_reply(p, data, len) < 0) {
		ykush_close(y);
		return;
	}
	if (y->step == YKUSH_READ_GET) {
		ykush_close(y);
		power_complete(p, 0, NULL);
		return;
	}
	y->step++;
	err = ykush_submit(p);
	if (err < 0) {
		power_complete(p, err, "%s: %s", y->what, strerror(-err));
		ykush_close(y);
	}
}

static int ykush_on_defer(struct loop_source *s, void *userdata)
{
	struct power *p = userdata;
	struct ykush *y = power_priv(p);
	int r;

	ykush_close(y);
	r = ykush_open(p);
	if (r >= 0) {
		y->step = YKUSH_SEND_SWITCH;
		r = ykush_submit(p);
		if (r < 0)
			power_complete(p, r, "%s: %s", y->what, strerror(-r));
	} else if (r == -ENOMEM) {
		power_complete(p, r, NULL);
	}
	if (r < 0)
		ykush_close(y);
	return 0;
}

static int ykush_start(struct power *p, enum power_op op)
{
	struct ykush *y = power_priv(p);
	int r;

	if (!y->usb)
		return -ENOTCONN;
	if (!y->defer) {
		r = loop_add_defer(power_ctx(p)->loop, &y->defer, ykush_on_defer, p);
		if (r < 0)
			return r;
		loop_source_set_description(y->defer, "power-ykush");
	} else {
		loop_defer_again(y->defer);
	}
	y->on = op == POWER_ON;
	return 0;
}

static void ykush_abort(struct power *p)
{
	struct ykush *y = power_priv(p);

	y->defer = loop_source_free(y->defer);
	ykush_close(y);
}

static void ykush_release(struct power *p)
{
	struct ykush *y = power_priv(p);

	ykush_abort(p);
	y->watch = usb_watch_free(y->watch);
	y->usb = usb_unref(y->usb);
	usb_match_release(&y->match);
}

const struct power_driver power_ykush_driver = {
	.name = "ykush",
	.priv_size = sizeof(struct ykush),
	.parse = ykush_parse,
	.start = ykush_start,
	.abort = ykush_abort,
	.release = ykush_release,
	.cycles = false,
};
