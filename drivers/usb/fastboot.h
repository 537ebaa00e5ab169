/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fastboot.h -- the fastboot protocol over libusb, inside labd's loop
 *
 * A board in fastboot mode is a USB device with an interface of class 0xff,
 * subclass 0x42, protocol 0x03 and two bulk endpoints.  The host sends one
 * command per transfer ("getvar:product", "download:%08x", "flash:boot",
 * "erase:userdata", "boot", "reboot", "continue"); the device answers with
 * packets of at most FASTBOOT_RESPONSE_MAX bytes starting with a 4-byte tag:
 * INFO<text> and TEXT<text> (progress, any number), then exactly one of
 * OKAY<payload>, FAIL<reason>, or DATA<%08x> after "download": the host then
 * sends that many bytes and the device answers once more.
 *
 * Everything is asynchronous (usb.h): each call starts an exchange and
 * reports through the callbacks, from the loop.  One exchange at a time per
 * session.  No fastboot binary is involved.
 *
 * Protocol for users:
 *  1. fastboot_config_parse() reads a board's `fastboot` group (no hardware).
 *  2. fastboot_open() finds the device by serial (and vid/pid) and claims its
 *     interface; -ENODEV while the board is not in fastboot mode.
 *  3. fastboot_command() or fastboot_download(); ->done() is called exactly
 *     once: err 0 with the OKAY payload, or a negative errno with a one-line
 *     reason: -EREMOTEIO for the device's FAIL ("fastboot 'flash:boot'
 *     failed: partition does not exist"), -EPROTO for a response that makes
 *     no sense, else the transfer's error (-ETIMEDOUT, -ENODEV, -EIO ...).
 *     Meanwhile ->info() gets each INFO/TEXT line, ->progress() each chunk.
 *  4. fastboot_close() at any time (cancels the exchange, no callback).
 */
#ifndef LABD_FASTBOOT_H
#define LABD_FASTBOOT_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "drivers/usb.h"

struct diag;
struct fastboot;

#define FASTBOOT_CLASS 0xff
#define FASTBOOT_SUBCLASS 0x42
#define FASTBOOT_PROTOCOL 0x03
#define FASTBOOT_COMMAND_MAX 64		/* bytes of a command (the protocol's limit) */
#define FASTBOOT_RESPONSE_MAX 256	/* bytes of a response packet, tag included */
#define FASTBOOT_CHUNK (128 * 1024)	/* bytes of download data per transfer */
#define FASTBOOT_MAX_DOWNLOAD 0xffffffffULL	/* "download:%08x" */
#define FASTBOOT_DEFAULT_TIMEOUT (60 * 1000000ULL)	/* per transfer and response */

/** A board's `fastboot` group: how it shows up in fastboot mode. */
struct fastboot_config {
	struct usb_match match;	/* serial required; vid, pid optional */
	uint64_t timeout;	/* per transfer and response, usec */
};

/**
 * fastboot_config_parse() - `serial`, `vid`, `pid`, `timeout` of @s
 * Returns 0, -EINVAL (in @diag) or -ENOMEM.  Release with fastboot_config_release().
 */
int fastboot_config_parse(const config_setting_t *s, struct fastboot_config *cfg,
			  struct diag *diag);
void fastboot_config_release(struct fastboot_config *cfg);

struct fastboot_ops {
	/** optional: an INFO or TEXT line from the device (borrowed) */
	void (*info)(struct fastboot *fb, const char *text, void *userdata);
	/** optional: download progress, after each chunk */
	void (*progress)(struct fastboot *fb, uint64_t sent, uint64_t total, void *userdata);
	/** required: the exchange ended; @reply is the OKAY payload or the reason */
	void (*done)(struct fastboot *fb, int err, const char *reply, void *userdata);
};

/**
 * fastboot_open() - open the board of @cfg in fastboot mode
 *
 * Returns 0, -ENODEV (not there: not in fastboot mode), -ENOTUNIQ (several
 * match), -ENOTTY (no fastboot interface), -EACCES, or another errno.
 */
int fastboot_open(struct usb *u, const struct fastboot_config *cfg, struct fastboot **ret);

/** fastboot_close() - cancel what runs (no callback) and close; NULL ok; returns NULL. */
struct fastboot *fastboot_close(struct fastboot *fb);

/**
 * fastboot_command() - send @cmd (at most FASTBOOT_COMMAND_MAX bytes) and
 * wait for its OKAY or FAIL.  Returns 0 or a negative errno (-EBUSY while
 * another exchange runs, -E2BIG); @ops->done follows only on 0.
 */
int fastboot_command(struct fastboot *fb, const char *cmd, const struct fastboot_ops *ops,
		     void *userdata);

/**
 * fastboot_download() - "download:%08x" then @size bytes read from @fd (its
 * current offset on), in FASTBOOT_CHUNK transfers, then the final OKAY.
 * @fd stays the caller's.  Returns like fastboot_command().
 */
int fastboot_download(struct fastboot *fb, int fd, uint64_t size,
		      const struct fastboot_ops *ops, void *userdata);

/** fastboot_is_busy() - whether an exchange runs. */
bool fastboot_is_busy(const struct fastboot *fb);

#endif
