/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * usb.h -- the USB core of labd: one libusb context inside the event loop
 *
 * Every USB driver (usb-hub and ykush power, fastboot, the USB-SD-Mux) goes
 * through this core.  It owns the daemon's single libusb context and feeds
 * libusb's file descriptors to the loop (libusb_get_pollfds() and the pollfd
 * notifiers); when one is ready it runs libusb's event handling with a zero
 * timeout, so transfer callbacks and hot-plug events run in the loop thread
 * and nothing ever waits.  Drivers only use asynchronous transfers
 * (usb_dev_submit()); synchronous libusb calls that talk to a device are not
 * allowed in the daemon.
 *
 * Devices are named by a struct usb_match: a location (the bus-port path
 * "1-1.4", stable across replug, as uhubctl prints it; "1" is the root hub
 * of bus 1), and/or vid:pid and serial number.  Serial numbers and other
 * attributes are read from sysfs, never from the device.
 *
 * Hot-plug: usb_watch_add() tells a driver when its device comes and goes.
 * With libusb hot-plug support (LIBUSB_CAP_HAS_HOTPLUG) a rescan runs after
 * every arrival or departure; without it, or with LABD_USB_SCAN=1 in the
 * environment, a loop timer rescans every USB_SCAN_INTERVAL.
 *
 * Lifetime: the core is shared and refcounted per loop (usb_get() and
 * usb_unref()); every opened device, transfer and watch holds a reference.
 * Closing a device with transfers in flight cancels them and releases the
 * handle once libusb has returned them; their callbacks are not called.
 */
#ifndef LABD_USB_H
#define LABD_USB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>
#include <libusb.h>

struct diag;
struct loop;
struct usb;
struct usb_dev;
struct usb_watch;

#define USB_SCAN_INTERVAL (2 * 1000000ULL)	/* rescan period without hot-plug */
#define USB_LOCATION_MAX 64	/* "1-1.2.3.4.5.6.7" */
#define USB_MAX_DEPTH 7		/* ports in a location (USB allows 7 tiers) */
#define USB_ATTR_MAX 256	/* bytes of a sysfs attribute read */
#define USB_SYSFS_DEVICES "/sys/bus/usb/devices"

/** Which device: every member that is set must match. */
struct usb_match {
	uint16_t vid;		/* 0: any */
	uint16_t pid;		/* 0: any */
	char *serial;		/* NULL: any */
	char *location;		/* "1-1.4"; NULL: any */
};

/**
 * usb_match_parse() - read `location`, `vid`, `pid` and `serial` of @s
 * @need: true when at least a location or a serial number is required
 *
 * Checks the location's syntax and the ranges; the caller checks the other
 * keys of @s.  Returns 0 or -EINVAL (in @diag) or -ENOMEM.  Release with
 * usb_match_release().
 */
int usb_match_parse(const config_setting_t *s, bool need, struct usb_match *m,
		    struct diag *diag);

/** usb_match_release() - free the strings; @m is empty afterwards. */
void usb_match_release(struct usb_match *m);

/** usb_match_describe() - "USB device at '1-1.4'", "USB device 04d8:f11b 'YK123'" for messages. */
void usb_match_describe(const struct usb_match *m, char *buf, size_t len);

/**
 * usb_get() - the USB core of loop @l, created on first use
 *
 * Returns 0, -EBUSY if a core exists for another loop, -ENOMEM or -EIO
 * (libusb cannot start).  Release with usb_unref().
 */
int usb_get(struct loop *l, struct usb **ret);
struct usb *usb_ref(struct usb *u);
/** usb_unref() - accepts NULL; returns NULL. */
struct usb *usb_unref(struct usb *u);

struct loop *usb_loop(const struct usb *u);
/** usb_context() - the libusb context, for libusb calls that do no I/O (device lists). */
libusb_context *usb_context(const struct usb *u);

/**
 * usb_find() - the one device matching @m
 * @ret: a referenced libusb device; release with libusb_unref_device()
 *
 * Returns 0, -ENODEV (none), -ENOTUNIQ (several: @m names no single one)
 * or -ENOMEM.
 */
int usb_find(struct usb *u, const struct usb_match *m, libusb_device **ret);

/** usb_device_location() - "1-1.4" ("1" for a root hub).  Returns 0 or -ENAMETOOLONG. */
int usb_device_location(libusb_device *d, char *buf, size_t len);

/**
 * usb_device_attr() - read sysfs attribute @attr of @d (trailing newline
 * dropped), e.g. "serial", "bConfigurationValue".  Returns 0 or -errno.
 */
int usb_device_attr(libusb_device *d, const char *attr, char *buf, size_t len);

/** usb_device_path() - the sysfs directory of @d: USB_SYSFS_DEVICES "/1-1.4" ("/usb1"). */
int usb_device_path(libusb_device *d, char *buf, size_t len);

/**
 * usb_errno() - a libusb error code or transfer status as a negative errno:
 * ACCESS -EACCES, NO_DEVICE -ENODEV, NOT_FOUND -ENOENT, BUSY -EBUSY,
 * TIMEOUT -ETIMEDOUT, PIPE (stall) -EPIPE, OVERFLOW -EOVERFLOW,
 * NOT_SUPPORTED -EOPNOTSUPP, NO_MEM -ENOMEM, others -EIO.
 */
int usb_errno(int libusb_error);

/* ---- opened devices and asynchronous transfers ---- */

/**
 * usb_dev_open() - open @d for transfers
 *
 * Returns 0, -EACCES (no permission on the usbfs node), -ENODEV (gone) or
 * another negative errno.  Release with usb_dev_close().
 */
int usb_dev_open(struct usb *u, libusb_device *d, struct usb_dev **ret);

/** usb_dev_close() - cancel what is in flight (no callbacks) and close; NULL ok; returns NULL. */
struct usb_dev *usb_dev_close(struct usb_dev *dev);

libusb_device_handle *usb_dev_handle(struct usb_dev *dev);
libusb_device *usb_dev_device(struct usb_dev *dev);

/**
 * usb_dev_claim() - claim interface @iface, detaching the kernel driver
 * bound to it (usbhid on a YKUSH).  Returns 0 or a negative errno.
 */
int usb_dev_claim(struct usb_dev *dev, int iface);

enum usb_xfer_type {
	USB_XFER_CONTROL,
	USB_XFER_BULK,
	USB_XFER_INTERRUPT,
};

/** One transfer.  Direction: bit 0x80 of @endpoint (bulk, interrupt) or of
 * @request_type (control). */
struct usb_request {
	enum usb_xfer_type type;
	uint8_t endpoint;	/* bulk, interrupt */
	uint8_t request_type;	/* control: bmRequestType */
	uint8_t request;	/* control: bRequest */
	uint16_t value, index;	/* control: wValue, wIndex */
	const void *data;	/* OUT: what to send (copied) */
	size_t len;		/* OUT: bytes of @data; IN: bytes to read at most */
	unsigned timeout_ms;	/* 0: none */
};

/**
 * Transfer completion: @err 0 (IN: @data holds @len bytes received, maybe
 * fewer than asked; OUT: @len bytes were sent, maybe fewer), -ETIMEDOUT,
 * -EPIPE (stall), -ENODEV (unplugged), -EOVERFLOW or -EIO.  Called from the
 * loop; it may submit more transfers or close @dev.
 */
typedef void (*usb_done_fn)(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			    void *userdata);

/**
 * usb_dev_submit() - start a transfer; @done is called exactly once, from
 * the loop, unless the device is closed first.  Returns 0 or a negative
 * errno (the transfer was not started; @done is not called).
 */
int usb_dev_submit(struct usb_dev *dev, const struct usb_request *rq, usb_done_fn done,
		   void *userdata);

/** usb_dev_cancel() - cancel every transfer in flight; their callbacks are not called. */
void usb_dev_cancel(struct usb_dev *dev);

/* ---- presence of devices (hot-plug) ---- */

/** Called when the device appears (@present) or vanishes. */
typedef void (*usb_presence_fn)(bool present, void *userdata);

/**
 * usb_watch_add() - follow the presence of the device matching @m
 *
 * @fn is called from the loop with the current presence soon after the call
 * (not from inside it), then whenever it changes.  @m is copied.
 * Returns 0 or a negative errno.  Release with usb_watch_free().
 */
int usb_watch_add(struct usb *u, const struct usb_match *m, usb_presence_fn fn, void *userdata,
		  struct usb_watch **ret);

/** usb_watch_free() - stop watching; accepts NULL; returns NULL. */
struct usb_watch *usb_watch_free(struct usb_watch *w);

/** usb_rescan() - re-check every watch now (from the loop, soon). */
void usb_rescan(struct usb *u);

#endif
