// SPDX-License-Identifier: GPL-2.0-or-later
/* fastboot.c -- the fastboot protocol over asynchronous libusb bulk transfers */
#include "drivers/usb/fastboot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/loop.h"

#define FASTBOOT_TAG_LEN 4

enum fastboot_state {
	FASTBOOT_IDLE,
	FASTBOOT_SEND_COMMAND,
	FASTBOOT_READ_RESPONSE,
	FASTBOOT_SEND_DATA,
};

struct fastboot {
	struct usb_dev *dev;
	uint8_t ep_in, ep_out;
	int iface;
	unsigned timeout_ms;
	enum fastboot_state state;
	char cmd[FASTBOOT_COMMAND_MAX + 1];
	const struct fastboot_ops *ops;
	void *userdata;
	/* download */
	int fd;			/* -1: no download */
	uint64_t size, sent;
	uint8_t *chunk;
	bool data_sent;		/* the final response is next */
};

static int fastboot_parse_timeout(const config_setting_t *s, struct fastboot_config *cfg,
				  struct diag *diag)
{
	const config_setting_t *e;
	int r = cfg_get_duration(s, "timeout", false, &cfg->timeout, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (cfg->timeout)
		return 0;
	e = config_setting_get_member(s, "timeout");
	return diag_add(diag, cfg_file(e), cfg_line(e), "'timeout' must be more than 0");
}

int fastboot_config_parse(const config_setting_t *s, struct fastboot_config *cfg,
			  struct diag *diag)
{
	static const char *const known[] = { "serial", "vid", "pid", "timeout", NULL };
	int r, e;

	memset(cfg, 0, sizeof(*cfg));
	cfg->timeout = FASTBOOT_DEFAULT_TIMEOUT;
	r = cfg_check_keys(s, known, diag);
	e = usb_match_parse(s, false, &cfg->match, diag);
	if (e == 0 && !cfg->match.serial)
		e = diag_add(diag, cfg_file(s), cfg_line(s), "missing key 'serial'");
	if (e < 0 && r != -ENOMEM)
		r = e;
	e = fastboot_parse_timeout(s, cfg, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	if (r < 0)
		fastboot_config_release(cfg);
	return r;
}

void fastboot_config_release(struct fastboot_config *cfg)
{
	usb_match_release(&cfg->match);
}

/* The fastboot interface and its bulk endpoints, from the cached descriptors. */
static int fastboot_find_interface(struct fastboot *fb, libusb_device *d)
{
	const struct libusb_interface_descriptor *alt;
	struct libusb_config_descriptor *cfg;
	int i, j, r = libusb_get_active_config_descriptor(d, &cfg);

	if (r < 0)
		return usb_errno(r);
	r = -ENOTTY;
	for (i = 0; i < cfg->bNumInterfaces && r; i++) {
		if (!cfg->interface[i].num_altsetting)
			continue;
		alt = &cfg->interface[i].altsetting[0];
		if (alt->bInterfaceClass != FASTBOOT_CLASS ||
		    alt->bInterfaceSubClass != FASTBOOT_SUBCLASS ||
		    alt->bInterfaceProtocol != FASTBOOT_PROTOCOL)
			continue;
		fb->ep_in = fb->ep_out = 0;
		for (j = 0; j < alt->bNumEndpoints; j++) {
			const struct libusb_endpoint_descriptor *ep = &alt->endpoint[j];

			if ((ep->bmAttributes & 3) != LIBUSB_TRANSFER_TYPE_BULK)
				continue;
			if (ep->bEndpointAddress & LIBUSB_ENDPOINT_IN)
				fb->ep_in = ep->bEndpointAddress;
			else
				fb->ep_out = ep->bEndpointAddress;
		}
		fb->iface = alt->bInterfaceNumber;
		if (fb->ep_in && fb->ep_out)
			r = 0;
	}
	libusb_free_config_descriptor(cfg);
	return r;
}

int fastboot_open(struct usb *u, const struct fastboot_config *cfg, struct fastboot **ret)
{
	struct fastboot *fb = calloc(1, sizeof(*fb));
	libusb_device *d;
	int r;

	if (!fb)
		return -ENOMEM;
	fb->fd = -1;
	fb->timeout_ms = (unsigned)(cfg->timeout / USEC_PER_MSEC);
	r = usb_find(u, &cfg->match, &d);
	if (r < 0)
		goto err_free;
	r = fastboot_find_interface(fb, d);
	if (r >= 0)
		r = usb_dev_open(u, d, &fb->dev);
	libusb_unref_device(d);
	if (r >= 0)
		r = usb_dev_claim(fb->dev, fb->iface);
	if (r < 0)
		goto err_close;
	*ret = fb;
	return 0;

err_close:
	usb_dev_close(fb->dev);
err_free:
	free(fb);
	return r;
}

struct fastboot *fastboot_close(struct fastboot *fb)
{
	if (!fb)
		return NULL;
	usb_dev_close(fb->dev);
	free(fb->chunk);
	free(fb);
	return NULL;
}

bool fastboot_is_busy(const struct fastboot *fb)
{
	return fb->state != FASTBOOT_IDLE;
}

/* End the exchange: back to idle before the callback, which may start the next. */
static void fastboot_finish(struct fastboot *fb, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fastboot_finish(struct fastboot *fb, int err, const char *fmt, ...)
{
	char reply[FASTBOOT_RESPONSE_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reply, sizeof(reply), fmt, ap);
	va_end(ap);
	fb->state = FASTBOOT_IDLE;
	fb->fd = -1;
	fb->ops->done(fb, err, reply, fb->userdata);
}

static void fastboot_on_xfer(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			     void *userdata);

static int fastboot_submit(struct fastboot *fb, uint8_t ep, const void *data, size_t len)
{
	struct usb_request rq = {
		.type = USB_XFER_BULK, .endpoint = ep, .data = data, .len = len,
		.timeout_ms = fb->timeout_ms,
	};

	return usb_dev_submit(fb->dev, &rq, fastboot_on_xfer, fb);
}

static int fastboot_read_response(struct fastboot *fb)
{
	fb->state = FASTBOOT_READ_RESPONSE;
	return fastboot_submit(fb, fb->ep_in, NULL, FASTBOOT_RESPONSE_MAX);
}

/* The next chunk of download data, from the caller's file. */
static int fastboot_send_chunk(struct fastboot *fb)
{
	uint64_t left = fb->size - fb->sent;
	size_t want = left < FASTBOOT_CHUNK ? (size_t)left : FASTBOOT_CHUNK;
	ssize_t n;

	if (!fb->chunk && !(fb->chunk = malloc(FASTBOOT_CHUNK)))
		return -ENOMEM;
	n = read(fb->fd, fb->chunk, want);
	if (n < 0)
		return -errno;
	if ((size_t)n != want)
		return -ENODATA;	/* the file is shorter than announced */
	fb->state = FASTBOOT_SEND_DATA;
	return fastboot_submit(fb, fb->ep_out, fb->chunk, want);
}

/* DATA<%08x>: the device takes the download; it must take what was announced. */
static int fastboot_on_data(struct fastboot *fb, const char *arg)
{
	unsigned long n;
	char *end;

	if (fb->fd < 0 || fb->data_sent) {
		fastboot_finish(fb, -EPROTO, "fastboot '%s': unexpected DATA response", fb->cmd);
		return 1;
	}
	n = strtoul(arg, &end, 16);
	if (end == arg || *end || n != fb->size) {
		fastboot_finish(fb, -EPROTO, "fastboot '%s': device asked for 'DATA%s', not %llu bytes",
				fb->cmd, arg, (unsigned long long)fb->size);
		return 1;
	}
	return fb->size ? fastboot_send_chunk(fb) : fastboot_read_response(fb);
}

/* One response packet; returns 0 when a transfer was started, 1 when finished. */
static int fastboot_on_response(struct fastboot *fb, const uint8_t *data, size_t len)
{
	char text[FASTBOOT_RESPONSE_MAX + 1];
	const char *arg = text + FASTBOOT_TAG_LEN;

	memcpy(text, data, len);
	text[len] = '\0';
	if (len < FASTBOOT_TAG_LEN) {
		fastboot_finish(fb, -EPROTO, "fastboot '%s': short response '%s'", fb->cmd, text);
		return 1;
	}
	if (!strncmp(text, "INFO", 4) || !strncmp(text, "TEXT", 4)) {
		if (fb->ops->info)
			fb->ops->info(fb, arg, fb->userdata);
		return fastboot_read_response(fb);
	}
	if (!strncmp(text, "OKAY", 4)) {
		fastboot_finish(fb, 0, "%s", arg);
		return 1;
	}
	if (!strncmp(text, "FAIL", 4)) {
		fastboot_finish(fb, -EREMOTEIO, "fastboot '%s' failed: %s", fb->cmd,
				*arg ? arg : "?");
		return 1;
	}
	if (!strncmp(text, "DATA", 4))
		return fastboot_on_data(fb, arg);
	fastboot_finish(fb, -EPROTO, "fastboot '%s': unknown response '%.*s'", fb->cmd, 64, text);
	return 1;
}

static int fastboot_on_sent(struct fastboot *fb, size_t len)
{
	if (fb->state == FASTBOOT_SEND_COMMAND)
		return fastboot_read_response(fb);
	fb->sent += len;
	if (fb->ops->progress)
		fb->ops->progress(fb, fb->sent, fb->size, fb->userdata);
	if (fb->sent < fb->size)
		return fastboot_send_chunk(fb);
	fb->data_sent = true;
	return fastboot_read_response(fb);
}

static const char *fastboot_step(const struct fastboot *fb)
{
	switch (fb->state) {
	case FASTBOOT_SEND_COMMAND:
		return "sending the command";
	case FASTBOOT_READ_RESPONSE:
		return "reading the response";
	case FASTBOOT_SEND_DATA:
		return "sending data";
	default:
		return "?";
	}
}

static void fastboot_on_xfer(struct usb_dev *dev, int err, const uint8_t *data, size_t len,
			     void *userdata)
{
	struct fastboot *fb = userdata;
	size_t want = fb->state == FASTBOOT_SEND_COMMAND ? strlen(fb->cmd) : 0;
	int r;

	if (fb->state == FASTBOOT_SEND_DATA)
		want = fb->size - fb->sent < FASTBOOT_CHUNK ? (size_t)(fb->size - fb->sent) :
			FASTBOOT_CHUNK;
	if (!err && want && len != want)
		err = -EIO;	/* a short write */
	if (err) {
		fastboot_finish(fb, err, "fastboot '%s': %s failed: %s%s", fb->cmd,
				fastboot_step(fb), strerror(-err),
				!want || err != -EIO ? "" : " (short transfer)");
		return;
	}
	if (fb->state == FASTBOOT_READ_RESPONSE)
		r = fastboot_on_response(fb, data, len);
	else
		r = fastboot_on_sent(fb, len);
	if (r < 0)
		fastboot_finish(fb, r, "fastboot '%s': %s failed: %s", fb->cmd, fastboot_step(fb),
				strerror(-r));
}

static int fastboot_start(struct fastboot *fb, const char *cmd, const struct fastboot_ops *ops,
			  void *userdata)
{
	size_t n = strlen(cmd);
	int r;

	if (fb->state != FASTBOOT_IDLE)
		return -EBUSY;
	if (!n || n > FASTBOOT_COMMAND_MAX)
		return -E2BIG;
	memcpy(fb->cmd, cmd, n + 1);
	fb->ops = ops;
	fb->userdata = userdata;
	fb->state = FASTBOOT_SEND_COMMAND;
	r = fastboot_submit(fb, fb->ep_out, fb->cmd, n);
	if (r < 0)
		fb->state = FASTBOOT_IDLE;
	return r;
}

int fastboot_command(struct fastboot *fb, const char *cmd, const struct fastboot_ops *ops,
		     void *userdata)
{
	fb->fd = -1;
	return fastboot_start(fb, cmd, ops, userdata);
}

int fastboot_download(struct fastboot *fb, int fd, uint64_t size,
		      const struct fastboot_ops *ops, void *userdata)
{
	char cmd[FASTBOOT_COMMAND_MAX + 1];
	int r;

	if (size > FASTBOOT_MAX_DOWNLOAD)
		return -EFBIG;
	if (fb->state != FASTBOOT_IDLE)
		return -EBUSY;
	snprintf(cmd, sizeof(cmd), "download:%08llx", (unsigned long long)size);
	fb->fd = fd;
	fb->size = size;
	fb->sent = 0;
	fb->data_sent = false;
	r = fastboot_start(fb, cmd, ops, userdata);
	if (r < 0)
		fb->fd = -1;
	return r;
}
