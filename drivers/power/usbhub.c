// SPDX-License-Identifier: GPL-2.0-or-later
/* usbhub.c -- power driver "usb-hub": per-port power switching of a USB hub, like uhubctl */
/*
 * Board definition:
 *
 *	power = {
 *		driver = "usb-hub";
 *		location = "1-1.4";	// the hub: its bus-port path (as uhubctl prints it)
 *		// or/and: vid = 0x2109; pid = 0x2817; serial = "000000001";
 *		port = 2;		// the hub's port the board is powered from
 *		off_repeat = 3;		// optional: power-off requests sent (uhubctl -r)
 *		companion = true;	// optional: switch the USB3/USB2 twin hub's port too
 *		sysfs = true;		// optional: prefer the kernel's port `disable` file
 *		timeout = 10;		// optional, seconds
 *	};
 *
 * Each operation switches the port of the hub and, for a USB3 hub, which the
 * kernel sees as two hubs (a USB2 and a SuperSpeed one), the same physical
 * port of its companion: the kernel's `peer` link of the port in sysfs, else
 * the hub of the same vendor at the same port path on another bus.
 *
 * A port is switched through the kernel's sysfs file
 * /sys/bus/usb/devices/<hub>/<hub>:<cfg>.0/<hub>-port<N>/disable ("1" off,
 * "0" on; Linux >= 6.0) when it exists and `sysfs` is not false, else with
 * hub class requests over libusb: the hub descriptor must announce per-port
 * power switching, then SET_FEATURE or CLEAR_FEATURE(PORT_POWER) (off is
 * sent off_repeat times: some hubs re-power a port otherwise), then
 * GET_STATUS reads the port state back.  Cycle is off, the board's power-on
 * delay, on (the core's).  With a board, the hub is watched: the board is
 * bad while it is unplugged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"
#include "drivers/usb.h"

#define USBHUB_MAX_PORT 255
#define USBHUB_DEFAULT_REPEAT 3
#define USBHUB_MAX_REPEAT 100
#define USBHUB_TARGETS 2		/* the hub and its companion */
#define USBHUB_XFER_TIMEOUT_MS 5000	/* per request, as uhubctl */
#define USBHUB_DESC_LEN 12		/* hub descriptor bytes asked for */
#define USBHUB_DT_HUB 0x29
#define USBHUB_DT_SS_HUB 0x2a
#define USBHUB_PORT_POWER 8		/* feature selector PORT_POWER */
#define USBHUB_STAT_POWER 0x0100	/* wPortStatus: port powered (USB2) */
#define USBHUB_SS_STAT_POWER 0x0200	/* the same, SuperSpeed hubs */
#define USBHUB_LPSM_MASK 0x0003		/* wHubCharacteristics: power switching mode */
#define USBHUB_LPSM_PER_PORT 0x0001

/* One hub port to switch: the board's, or its companion's. */
struct usbhub_target {
	libusb_device *hub;
	char location[USB_LOCATION_MAX];
	unsigned port;
	bool usb3;
	char disable[PATH_MAX];	/* the sysfs disable file, or "" */
};

enum usbhub_step {
	USBHUB_DESCRIPTOR,
	USBHUB_SWITCH,
	USBHUB_STATUS,
};

struct usbhub {
	struct usb_match match;
	unsigned port;
	unsigned repeat;
	bool companion;
	bool sysfs;
	struct usb *usb;
	struct usb_watch *watch;
	char what[128];		/* "USB device at '1-1'" */
	/* the operation in progress */
	bool on;
	struct loop_source *defer;
	struct usbhub_target targets[USBHUB_TARGETS];
	size_t n_targets, cur;
	struct usb_dev *dev;	/* the current target's hub, opened for libusb requests */
	enum usbhub_step step;
	unsigned sent;
};

static void usbhub_next(struct power *p);

static void usbhub_presence(bool present, void *userdata)
{
	struct power *p = userdata;
	struct usbhub *h = power_priv(p);
	const struct driver_ctx *ctx = power_ctx(p);

	ctx->presence("power", present, h->what, ctx->board_userdata);
}

static int usbhub_parse_options(struct usbhub *h, const config_setting_t *s, struct diag *diag)
{
	long long v;
	int r = 0, e;

	e = cfg_get_int(s, "port", true, 1, USBHUB_MAX_PORT, &v, diag);
	if (e < 0)
		r = e;
	else
		h->port = (unsigned)v;
	h->repeat = USBHUB_DEFAULT_REPEAT;
	e = cfg_get_int(s, "off_repeat", false, 1, USBHUB_MAX_REPEAT, &v, diag);
	if (e == 0)
		h->repeat = (unsigned)v;
	else if (e == -EINVAL)
		r = e;
	h->companion = h->sysfs = true;
	if (cfg_get_bool(s, "companion", false, &h->companion, diag) == -EINVAL ||
	    cfg_get_bool(s, "sysfs", false, &h->sysfs, diag) == -EINVAL)
		r = -EINVAL;
	return r;
}

static int usbhub_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = {
		POWER_COMMON_KEYS, "location", "vid", "pid", "serial", "port", "off_repeat",
		"companion", "sysfs", NULL
	};
	const struct driver_ctx *ctx = power_ctx(p);
	struct usbhub *h = power_priv(p);
	int r, e;

	r = cfg_check_keys(s, known, diag);
	e = usb_match_parse(s, true, &h->match, diag);
	if (e < 0)
		r = e;
	e = usbhub_parse_options(h, s, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	if (r < 0)
		return r;
	usb_match_describe(&h->match, h->what, sizeof(h->what));
	if (!ctx->loop)
		return 0;
	r = usb_get(ctx->loop, &h->usb);
	if (r >= 0 && ctx->presence)
		r = usb_watch_add(h->usb, &h->match, usbhub_presence, p, &h->watch);
	return r;
}

/* ---- finding the hub and its companion ---- */

static bool usbhub_is_usb3(libusb_device *d)
{
	struct libusb_device_descriptor desc;

	return libusb_get_device_descriptor(d, &desc) == 0 && desc.bcdUSB >= 0x0300;
}

/* The sysfs directory of port @port of hub @t: ".../1-1/1-1:1.0/1-1-port2". */
static int usbhub_port_dir(const struct usbhub_target *t, unsigned port, char *buf, size_t len)
{
	char dir[PATH_MAX], cfg[16];
	bool root = !strchr(t->location, '-');
	int n;

	if (usb_device_path(t->hub, dir, sizeof(dir)) < 0)
		return -ENAMETOOLONG;
	if (usb_device_attr(t->hub, "bConfigurationValue", cfg, sizeof(cfg)) < 0 || !*cfg)
		strcpy(cfg, "1");
	if (root)
		n = snprintf(buf, len, "%s/%s-0:%s.0/usb%s-port%u", dir, t->location, cfg,
			     t->location, port);
	else
		n = snprintf(buf, len, "%s/%s:%s.0/%s-port%u", dir, t->location, cfg, t->location,
			     port);
	return (size_t)n < len ? 0 : -ENAMETOOLONG;
}

static int usbhub_target_init(struct usbhub *h, struct usbhub_target *t, libusb_device *hub,
			      unsigned port)
{
	char dir[PATH_MAX];
	int r;

	t->hub = hub;
	t->port = port;
	t->usb3 = usbhub_is_usb3(hub);
	t->disable[0] = '\0';
	r = usb_device_location(hub, t->location, sizeof(t->location));
	if (r < 0 || !h->sysfs || usbhub_port_dir(t, port, dir, sizeof(dir)) < 0)
		return r;
	if ((size_t)snprintf(t->disable, sizeof(t->disable), "%s/disable", dir) >=
	    sizeof(t->disable) || access(t->disable, W_OK) < 0)
		t->disable[0] = '\0';
	return 0;
}

/* "usb2-port1" -> location "2", port 1; "2-1.4-port3" -> "2-1.4", 3. */
static int usbhub_parse_port_name(const char *name, char *loc, size_t len, unsigned *port)
{
	const char *dash = strrchr(name, '-');
	size_t n;

	if (!dash || strncmp(dash, "-port", 5) || sscanf(dash + 5, "%u", port) != 1)
		return -EINVAL;
	if (!strncmp(name, "usb", 3))
		name += 3;
	n = (size_t)(dash - name);
	if (n + 1 > len)
		return -EINVAL;
	memcpy(loc, name, n);
	loc[n] = '\0';
	return 0;
}

/* The kernel's `peer` link of our port names the companion's port. */
static int usbhub_peer_by_sysfs(struct usbhub *h, const struct usbhub_target *t,
				struct usb_match *m, unsigned *port)
{
	char dir[PATH_MAX], link[PATH_MAX], loc[USB_LOCATION_MAX];
	const char *base;
	ssize_t n;

	if (usbhub_port_dir(t, t->port, dir, sizeof(dir)) < 0 ||
	    strlen(dir) + sizeof("/peer") > sizeof(dir))
		return -ENOENT;
	strcat(dir, "/peer");
	n = readlink(dir, link, sizeof(link) - 1);
	if (n < 0)
		return -ENOENT;
	link[n] = '\0';
	base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	if (usbhub_parse_port_name(base, loc, sizeof(loc), port) < 0)
		return -ENOENT;
	m->location = strdup(loc);
	return m->location ? 0 : -ENOMEM;
}

/* Without a peer link: the hub at the same port path on another bus, same vendor,
 * the other USB generation. */
static libusb_device *usbhub_peer_by_path(struct usbhub *h, const struct usbhub_target *t)
{
	struct libusb_device_descriptor mine, desc;
	const char *path = strchr(t->location, '-');
	libusb_device **list, *found = NULL;
	char loc[USB_LOCATION_MAX];
	ssize_t n, i;

	if (!path || libusb_get_device_descriptor(t->hub, &mine) < 0)
		return NULL;
	n = libusb_get_device_list(usb_context(h->usb), &list);
	for (i = 0; i < n && !found; i++) {
		if (list[i] == t->hub || libusb_get_device_descriptor(list[i], &desc) < 0 ||
		    desc.bDeviceClass != LIBUSB_CLASS_HUB || desc.idVendor != mine.idVendor ||
		    (desc.bcdUSB >= 0x0300) == t->usb3 ||
		    usb_device_location(list[i], loc, sizeof(loc)) < 0 ||
		    !strchr(loc, '-') || strcmp(strchr(loc, '-'), path))
			continue;
		found = libusb_ref_device(list[i]);
	}
	if (n >= 0)
		libusb_free_device_list(list, 1);
	return found;
}

static int usbhub_add_companion(struct usbhub *h)
{
	struct usbhub_target *t = &h->targets[0];
	struct usb_match m = { 0 };
	libusb_device *peer = NULL;
	unsigned port = t->port;
	int r = usbhub_peer_by_sysfs(h, t, &m, &port);

	if (r == -ENOMEM)
		return r;
	if (r == 0 && usb_find(h->usb, &m, &peer) < 0)
		peer = NULL;
	usb_match_release(&m);
	if (r < 0)
		peer = usbhub_peer_by_path(h, t);
	if (!peer)
		return 0;
	r = usbhub_target_init(h, &h->targets[1], peer, port);
	if (r < 0) {
		libusb_unref_device(peer);
		return r;
	}
	h->n_targets = 2;
	return 0;
}

static void usbhub_drop_targets(struct usbhub *h)
{
	size_t i;

	h->dev = usb_dev_close(h->dev);
	for (i = 0; i < h->n_targets; i++)
		libusb_unref_device(h->targets[i].hub);
	h->n_targets = h->cur = 0;
}

static int usbhub_find_targets(struct power *p)
{
	struct usbhub *h = power_priv(p);
	struct libusb_device_descriptor desc;
	libusb_device *hub;
	int r = usb_find(h->usb, &h->match, &hub);

	if (r == -ENODEV) {
		power_complete(p, r, "%s not found", h->what);
		return r;
	}
	if (r == -ENOTUNIQ) {
		power_complete(p, r, "several hubs match %s: set 'location' or 'serial'", h->what);
		return r;
	}
	if (r < 0)
		return r;
	if (libusb_get_device_descriptor(hub, &desc) < 0 || desc.bDeviceClass != LIBUSB_CLASS_HUB) {
		libusb_unref_device(hub);
		power_complete(p, -ENOTTY, "%s is not a hub", h->what);
		return -ENOTTY;
	}
	r = usbhub_target_init(h, &h->targets[0], hub, h->port);
	h->n_targets = 1;
	if (r >= 0 && h->companion)
		r = usbhub_add_companion(h);
	return r;
}

/* ---- switching through sysfs ---- */

static int usbhub_sysfs_switch(struct power *p, const struct usbhub_target *t)
{
	struct usbhub *h = power_priv(p);
	const char *want = h->on ? "0" : "1";
	char got[8] = "";
	ssize_t n;
	int fd, r = 0;

	fd = open(t->disable, O_RDWR | O_CLOEXEC);
	if (fd < 0 || write(fd, want, 1) != 1 || lseek(fd, 0, SEEK_SET) < 0 ||
	    (n = read(fd, got, sizeof(got) - 1)) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	if (r < 0) {
		power_complete(p, r, "cannot switch port %u of hub %s through '%s': %s", t->port,
			       t->location, t->disable, strerror(-r));
		return r;
	}
	if (got[0] != want[0]) {
		power_complete(p, -EIO, "port %u of hub %s did not switch %s: '%s' reads '%c'",
			       t->port, t->location, h->on ? "on" : "off", t->disable, got[0]);
		return -EIO;
	}
	return 0;
}

/* ---- switching through libusb: descriptor, switch request(s), status ---- */

static void usbhub_on_xfer(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			   void *userdata);

static const char *const usbhub_step_names[] = {
	[USBHUB_DESCRIPTOR] = "reading the hub descriptor",
	[USBHUB_SWITCH] = "switching port power",
	[USBHUB_STATUS] = "reading the port status",
};

/* Send the request of the current step; a failure is reported. */
static int usbhub_submit(struct power *p)
{
	struct usbhub *h = power_priv(p);
	const struct usbhub_target *t = &h->targets[h->cur];
	struct usb_request rq = {
		.type = USB_XFER_CONTROL,
		.timeout_ms = power_request_timeout_ms(p, USBHUB_XFER_TIMEOUT_MS),
	};
	int r;

	switch (h->step) {
	case USBHUB_DESCRIPTOR:
		rq.request_type = LIBUSB_ENDPOINT_IN | LIBUSB_REQUEST_TYPE_CLASS |
				  LIBUSB_RECIPIENT_DEVICE;
		rq.request = LIBUSB_REQUEST_GET_DESCRIPTOR;
		rq.value = (t->usb3 ? USBHUB_DT_SS_HUB : USBHUB_DT_HUB) << 8;
		rq.len = USBHUB_DESC_LEN;
		break;
	case USBHUB_SWITCH:
		rq.request_type = LIBUSB_ENDPOINT_OUT | LIBUSB_REQUEST_TYPE_CLASS |
				  LIBUSB_RECIPIENT_OTHER;
		rq.request = h->on ? LIBUSB_REQUEST_SET_FEATURE : LIBUSB_REQUEST_CLEAR_FEATURE;
		rq.value = USBHUB_PORT_POWER;
		rq.index = (uint16_t)t->port;
		break;
	case USBHUB_STATUS:
		rq.request_type = LIBUSB_ENDPOINT_IN | LIBUSB_REQUEST_TYPE_CLASS |
				  LIBUSB_RECIPIENT_OTHER;
		rq.request = LIBUSB_REQUEST_GET_STATUS;
		rq.index = (uint16_t)t->port;
		rq.len = 4;
		break;
	}
	r = usb_dev_submit(h->dev, &rq, usbhub_on_xfer, p);
	if (r < 0)
		power_complete(p, r, "hub %s: %s failed: %s", t->location,
			       usbhub_step_names[h->step], strerror(-r));
	return r;
}

/* Check the hub descriptor: per-port power switching, and enough ports. */
static int usbhub_check_descriptor(struct power *p, const uint8_t *d, size_t len)
{
	struct usbhub *h = power_priv(p);
	const struct usbhub_target *t = &h->targets[h->cur];
	unsigned chars;

	if (len < 5) {
		power_complete(p, -EIO, "hub %s sent a short hub descriptor (%zu bytes)",
			       t->location, len);
		return -EIO;
	}
	chars = d[3] | (unsigned)d[4] << 8;
	/* Hubs with a single port switch it whatever they announce (uhubctl does the same). */
	if ((chars & USBHUB_LPSM_MASK) != USBHUB_LPSM_PER_PORT && d[2] > 1) {
		power_complete(p, -EOPNOTSUPP, "hub %s has no per-port power switching (%s)",
			       t->location, chars & 2 ? "no power switching" : "ganged");
		return -EOPNOTSUPP;
	}
	if (t->port > d[2]) {
		power_complete(p, -EINVAL, "hub %s has %u ports, not %u", t->location, d[2],
			       t->port);
		return -EINVAL;
	}
	return 0;
}

static int usbhub_check_status(struct power *p, const uint8_t *d, size_t len)
{
	struct usbhub *h = power_priv(p);
	const struct usbhub_target *t = &h->targets[h->cur];
	unsigned status, bit = t->usb3 ? USBHUB_SS_STAT_POWER : USBHUB_STAT_POWER;

	if (len < 2) {
		power_complete(p, -EIO, "hub %s sent a short port status (%zu bytes)", t->location,
			       len);
		return -EIO;
	}
	status = d[0] | (unsigned)d[1] << 8;
	if (!(status & bit) == !h->on)
		return 0;
	power_complete(p, -EIO, "port %u of hub %s is still %s after power %s (status 0x%04x)",
		       t->port, t->location, h->on ? "off" : "on", h->on ? "on" : "off", status);
	return -EIO;
}

/* The step after a successful transfer; 1 when this target is done, < 0 failed
 * (reported). */
static int usbhub_advance(struct power *p, const uint8_t *data, size_t len)
{
	struct usbhub *h = power_priv(p);
	int r;

	switch (h->step) {
	case USBHUB_DESCRIPTOR:
		r = usbhub_check_descriptor(p, data, len);
		if (r < 0)
			return r;
		h->step = USBHUB_SWITCH;
		break;
	case USBHUB_SWITCH:
		if (++h->sent < (h->on ? 1 : h->repeat))
			break;
		h->step = USBHUB_STATUS;
		break;
	case USBHUB_STATUS:
		r = usbhub_check_status(p, data, len);
		return r < 0 ? r : 1;
	}
	return usbhub_submit(p);
}

static void usbhub_on_xfer(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			   void *userdata)
{
	struct power *p = userdata;
	struct usbhub *h = power_priv(p);
	const struct usbhub_target *t = &h->targets[h->cur];
	int r;

	if (err) {
		power_complete(p, err, "hub %s: %s failed: %s", t->location,
			       usbhub_step_names[h->step], strerror(-err));
		usbhub_drop_targets(h);
		return;
	}
	r = usbhub_advance(p, data, len);
	if (r < 0)
		usbhub_drop_targets(h);
	if (r == 1) {
		h->dev = usb_dev_close(h->dev);
		h->cur++;
		usbhub_next(p);
	}
}

static int usbhub_libusb_start(struct power *p, const struct usbhub_target *t)
{
	struct usbhub *h = power_priv(p);
	int r = usb_dev_open(h->usb, t->hub, &h->dev);

	if (r < 0) {
		power_complete(p, r, "cannot open hub %s: %s", t->location, strerror(-r));
		return r;
	}
	h->step = USBHUB_DESCRIPTOR;
	h->sent = 0;
	return usbhub_submit(p);
}

/* Switch the remaining targets: sysfs ones at once, a libusb one asynchronously. */
static void usbhub_next(struct power *p)
{
	struct usbhub *h = power_priv(p);
	const struct usbhub_target *t;

	for (; h->cur < h->n_targets; h->cur++) {
		t = &h->targets[h->cur];
		if (!t->disable[0]) {
			if (usbhub_libusb_start(p, t) < 0)
				usbhub_drop_targets(h);
			return;
		}
		if (usbhub_sysfs_switch(p, t) < 0) {
			usbhub_drop_targets(h);
			return;
		}
	}
	usbhub_drop_targets(h);
	power_complete(p, 0, NULL);
}

static int usbhub_on_defer(struct loop_source *s, void *userdata)
{
	struct power *p = userdata;
	struct usbhub *h = power_priv(p);
	int r;

	usbhub_drop_targets(h);
	r = usbhub_find_targets(p);
	if (r == 0)
		usbhub_next(p);
	else if (r == -ENOMEM)
		power_complete(p, r, NULL);
	return 0;
}

static int usbhub_start(struct power *p, enum power_op op)
{
	struct usbhub *h = power_priv(p);
	int r;

	if (!h->usb)
		return -ENOTCONN;
	if (!h->defer) {
		r = loop_add_defer(power_ctx(p)->loop, &h->defer, usbhub_on_defer, p);
		if (r < 0)
			return r;
		loop_source_set_description(h->defer, "power-usb-hub");
	} else {
		loop_defer_again(h->defer);
	}
	h->on = op == POWER_ON;
	return 0;
}

static void usbhub_abort(struct power *p)
{
	struct usbhub *h = power_priv(p);

	h->defer = loop_source_free(h->defer);
	usbhub_drop_targets(h);
}

static void usbhub_release(struct power *p)
{
	struct usbhub *h = power_priv(p);

	usbhub_abort(p);
	h->watch = usb_watch_free(h->watch);
	h->usb = usb_unref(h->usb);
	usb_match_release(&h->match);
}

const struct power_driver power_usbhub_driver = {
	.name = "usb-hub",
	.priv_size = sizeof(struct usbhub),
	.parse = usbhub_parse,
	.start = usbhub_start,
	.abort = usbhub_abort,
	.release = usbhub_release,
	.cycles = false,
};
