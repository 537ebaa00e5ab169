// SPDX-License-Identifier: GPL-2.0-or-later
/* usb.c -- the USB core: one libusb context in the loop, lookup, async transfers, hot-plug */
#include "drivers/usb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"

/*
 * epoll refuses regular files (EPERM), which poll() reports always ready:
 * umockdev's usbfs nodes are such files.  libusb's events on them are then
 * handled every USB_POLL_FALLBACK while transfers are in flight.
 */
#define USB_POLL_FALLBACK (1 * USEC_PER_MSEC)

struct usb_fd {
	int fd;
	struct loop_source *src;	/* NULL: epoll refused the fd, see USB_POLL_FALLBACK */
	struct usb_fd *next;
};

struct usb {
	int refcount;
	int busy;		/* dispatching: a final unref waits until it ends */
	struct loop *loop;
	libusb_context *ctx;
	struct usb_fd *fds;
	struct loop_source *timeout;	/* libusb's timeouts, if its fds do not cover them */
	struct loop_source *poll_timer;	/* USB_POLL_FALLBACK */
	int n_unwatched;	/* fds epoll refused */
	int inflight;		/* transfers submitted, not yet returned */
	struct loop_source *scan_timer;	/* periodic rescan without hot-plug */
	struct loop_source *defer;	/* rescans and deferred closes */
	bool rescan_pending;
	libusb_hotplug_callback_handle hotplug;
	bool has_hotplug;
	struct usb_watch *watches;
	struct usb_dev *closing;	/* devices to close at the next defer */
	struct usb_xfer *done_head, *done_tail;	/* completed, to deliver at the next defer */
};

struct usb_watch {
	struct usb *usb;
	struct usb_match match;
	usb_presence_fn fn;
	void *userdata;
	int present;		/* -1 until the first scan */
	bool dead;		/* freed during a scan: unlinked after it */
	struct usb_watch *next;
};

struct usb_xfer;

struct usb_dev {
	struct usb *usb;
	libusb_device_handle *h;
	struct usb_xfer *xfers;	/* in flight */
	uint32_t claimed;	/* bit per interface, released at close */
	bool closing;
	bool queued;		/* on usb->closing */
	struct usb_dev *next_closing;
};

struct usb_xfer {
	struct usb_dev *dev;
	struct libusb_transfer *t;
	usb_done_fn done;
	void *userdata;
	bool cancelled;
	bool completed;		/* libusb returned it; waiting on usb->done_head */
	struct usb_xfer *prev, *next;	/* dev->xfers: until delivered */
	struct usb_xfer *done_next;
};

static struct usb *usb_shared;	/* one libusb context per process, bound to one loop */

int usb_errno(int e)
{
	switch (e) {
	case LIBUSB_SUCCESS:
		return 0;
	case LIBUSB_ERROR_ACCESS:
		return -EACCES;
	case LIBUSB_ERROR_NO_DEVICE:
		return -ENODEV;
	case LIBUSB_ERROR_NOT_FOUND:
		return -ENOENT;
	case LIBUSB_ERROR_BUSY:
		return -EBUSY;
	case LIBUSB_ERROR_TIMEOUT:
		return -ETIMEDOUT;
	case LIBUSB_ERROR_PIPE:
		return -EPIPE;
	case LIBUSB_ERROR_OVERFLOW:
		return -EOVERFLOW;
	case LIBUSB_ERROR_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	case LIBUSB_ERROR_NO_MEM:
		return -ENOMEM;
	case LIBUSB_ERROR_INVALID_PARAM:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* ---- matches ---- */

/* "1", "1-4", "3-1.2.4": a bus, then up to USB_MAX_DEPTH ports. */
static bool usb_location_ok(const char *s)
{
	int depth = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	if (!*s)
		return true;
	if (*s++ != '-')
		return false;
	for (;;) {
		if (!isdigit((unsigned char)*s) || ++depth > USB_MAX_DEPTH)
			return false;
		while (isdigit((unsigned char)*s))
			s++;
		if (!*s)
			return true;
		if (*s++ != '.')
			return false;
	}
}

static int usb_parse_id(const config_setting_t *s, const char *key, uint16_t *ret,
			struct diag *diag)
{
	long long v;
	int r = cfg_get_int(s, key, false, 1, 0xffff, &v, diag);

	if (r == 0)
		*ret = (uint16_t)v;
	return r == -ENOENT ? 0 : r;
}

static int usb_parse_string(const config_setting_t *s, const char *key, char **ret,
			    struct diag *diag)
{
	const config_setting_t *e;
	const char *v;
	int r = cfg_get_string(s, key, false, &v, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	e = config_setting_get_member(s, key);
	if (!*v)
		return diag_add(diag, cfg_file(e), cfg_line(e), "'%s' must not be empty", key);
	if (!strcmp(key, "location") && !usb_location_ok(v))
		return diag_add(diag, cfg_file(e), cfg_line(e),
				"invalid USB location '%s': write the bus and port path, like \"1-1.4\"",
				v);
	*ret = strdup(v);
	return *ret ? 0 : -ENOMEM;
}

int usb_match_parse(const config_setting_t *s, bool need, struct usb_match *m,
		    struct diag *diag)
{
	int r = 0, e;

	memset(m, 0, sizeof(*m));
	e = usb_parse_string(s, "location", &m->location, diag);
	if (e < 0)
		r = e;
	e = usb_parse_string(s, "serial", &m->serial, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	e = usb_parse_id(s, "vid", &m->vid, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	e = usb_parse_id(s, "pid", &m->pid, diag);
	if (e < 0 && r != -ENOMEM)
		r = e;
	if (!r && need && !m->location && !m->serial)
		r = diag_add(diag, cfg_file(s), cfg_line(s),
			     "name the USB device by 'location' or 'serial'");
	if (r < 0)
		usb_match_release(m);
	return r;
}

void usb_match_release(struct usb_match *m)
{
	free(m->serial);
	free(m->location);
	memset(m, 0, sizeof(*m));
}

static int usb_match_copy(const struct usb_match *m, struct usb_match *ret)
{
	*ret = *m;
	ret->serial = m->serial ? strdup(m->serial) : NULL;
	ret->location = m->location ? strdup(m->location) : NULL;
	if ((m->serial && !ret->serial) || (m->location && !ret->location)) {
		usb_match_release(ret);
		return -ENOMEM;
	}
	return 0;
}

void usb_match_describe(const struct usb_match *m, char *buf, size_t len)
{
	char id[16] = "";

	if (m->vid || m->pid)
		snprintf(id, sizeof(id), " %04x:%04x", m->vid, m->pid);
	if (m->location && m->serial)
		snprintf(buf, len, "USB device%s at '%s' with serial '%s'", id, m->location,
			 m->serial);
	else if (m->location)
		snprintf(buf, len, "USB device%s at '%s'", id, m->location);
	else if (m->serial)
		snprintf(buf, len, "USB device%s with serial '%s'", id, m->serial);
	else
		snprintf(buf, len, "USB device%s", *id ? id : " (any)");
}

/* ---- devices: location and sysfs ---- */

int usb_device_location(libusb_device *d, char *buf, size_t len)
{
	uint8_t ports[USB_MAX_DEPTH];
	int n = libusb_get_port_numbers(d, ports, USB_MAX_DEPTH), i;
	size_t at;

	at = (size_t)snprintf(buf, len, "%u", libusb_get_bus_number(d));
	for (i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%c%u", i ? '.' : '-', ports[i]);
	return at < len ? 0 : -ENAMETOOLONG;
}

int usb_device_path(libusb_device *d, char *buf, size_t len)
{
	char loc[USB_LOCATION_MAX];
	int r = usb_device_location(d, loc, sizeof(loc));

	if (r < 0)
		return r;
	if (strchr(loc, '-'))
		r = snprintf(buf, len, "%s/%s", USB_SYSFS_DEVICES, loc);
	else
		r = snprintf(buf, len, "%s/usb%s", USB_SYSFS_DEVICES, loc);
	return (size_t)r < len ? 0 : -ENAMETOOLONG;
}

int usb_device_attr(libusb_device *d, const char *attr, char *buf, size_t len)
{
	char path[USB_ATTR_MAX];
	ssize_t n;
	int fd, r = usb_device_path(d, path, sizeof(path));

	if (r < 0)
		return r;
	if (strlen(path) + strlen(attr) + 2 > sizeof(path))
		return -ENAMETOOLONG;
	strcat(path, "/");
	strcat(path, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static bool usb_device_matches(libusb_device *d, const struct usb_match *m)
{
	struct libusb_device_descriptor desc;
	char buf[USB_ATTR_MAX];

	if (m->vid || m->pid) {
		if (libusb_get_device_descriptor(d, &desc) < 0)
			return false;
		if ((m->vid && desc.idVendor != m->vid) || (m->pid && desc.idProduct != m->pid))
			return false;
	}
	if (m->location && (usb_device_location(d, buf, sizeof(buf)) < 0 ||
			    strcmp(buf, m->location)))
		return false;
	if (m->serial && (usb_device_attr(d, "serial", buf, sizeof(buf)) < 0 ||
			  strcmp(buf, m->serial)))
		return false;
	return true;
}

/* How many of @list match @m (0, 1 or 2 meaning "several"); the first in *@ret. */
static int usb_count(libusb_device **list, ssize_t n, const struct usb_match *m,
		     libusb_device **ret)
{
	int found = 0;
	ssize_t i;

	for (i = 0; i < n && found < 2; i++) {
		if (!usb_device_matches(list[i], m))
			continue;
		if (!found++ && ret)
			*ret = list[i];
	}
	return found;
}

int usb_find(struct usb *u, const struct usb_match *m, libusb_device **ret)
{
	libusb_device **list, *d = NULL;
	ssize_t n = libusb_get_device_list(u->ctx, &list);
	int found;

	if (n < 0)
		return usb_errno((int)n);
	found = usb_count(list, n, m, &d);
	if (found == 1)
		*ret = libusb_ref_device(d);
	libusb_free_device_list(list, 1);
	if (!found)
		return -ENODEV;
	return found == 1 ? 0 : -ENOTUNIQ;
}

/* ---- the context in the loop ---- */

static void usb_arm_timeout(struct usb *u)
{
	struct timeval tv;

	if (u->poll_timer && u->n_unwatched && u->inflight &&
	    !loop_timer_is_armed(u->poll_timer))
		loop_timer_set_rel(u->poll_timer, USB_POLL_FALLBACK);
	if (!u->timeout)
		return;
	if (libusb_get_next_timeout(u->ctx, &tv) == 1)
		loop_timer_set_rel(u->timeout, (uint64_t)tv.tv_sec * USEC_PER_SEC +
				   (uint64_t)tv.tv_usec);
	else
		loop_timer_set(u->timeout, USEC_INFINITY);
}

static void usb_destroy(struct usb *u);

/* Let libusb complete what is ready, without waiting. */
static void usb_handle_events(struct usb *u)
{
	struct timeval zero = { 0, 0 };

	u->busy++;
	libusb_handle_events_timeout_completed(u->ctx, &zero, NULL);
	usb_arm_timeout(u);
	u->busy--;
	if (!u->busy && !u->refcount)
		usb_destroy(u);
}

static int usb_on_fd(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	usb_handle_events(userdata);
	return 0;
}

static int usb_on_timeout(struct loop_source *s, uint64_t now, void *userdata)
{
	usb_handle_events(userdata);
	return 0;
}

static void usb_fd_added(int fd, short events, void *userdata)
{
	struct usb *u = userdata;
	struct usb_fd *f = calloc(1, sizeof(*f));
	int r = f ? 0 : -ENOMEM;

	if (f)
		r = loop_add_io(u->loop, &f->src, fd, (uint32_t)events & (EPOLLIN | EPOLLOUT),
				usb_on_fd, u);
	if (r == -EPERM && !u->poll_timer)
		r = loop_add_timer(u->loop, &u->poll_timer, USEC_INFINITY, usb_on_timeout, u);
	else if (r == -EPERM)
		r = 0;
	if (r < 0) {
		log_error("usb: cannot watch libusb's fd %d: %s", fd, strerror(-r));
		free(f);
		return;
	}
	if (f->src)
		loop_source_set_description(f->src, "usb");
	else
		u->n_unwatched++;
	f->fd = fd;
	f->next = u->fds;
	u->fds = f;
}

static void usb_fd_removed(int fd, void *userdata)
{
	struct usb *u = userdata;
	struct usb_fd **p, *f;

	for (p = &u->fds; (f = *p); p = &f->next) {
		if (f->fd != fd)
			continue;
		*p = f->next;
		if (!f->src)
			u->n_unwatched--;
		loop_source_free(f->src);
		free(f);
		return;
	}
}

static int usb_watch_fds(struct usb *u)
{
	const struct libusb_pollfd **fds = libusb_get_pollfds(u->ctx);
	size_t i;

	if (!fds)
		return -ENOMEM;
	for (i = 0; fds[i]; i++)
		usb_fd_added(fds[i]->fd, fds[i]->events, u);
	libusb_free_pollfds(fds);
	libusb_set_pollfd_notifiers(u->ctx, usb_fd_added, usb_fd_removed, u);
	if (!libusb_pollfds_handle_timeouts(u->ctx))
		return loop_add_timer(u->loop, &u->timeout, USEC_INFINITY, usb_on_timeout, u);
	return 0;
}

static void usb_scan(struct usb *u);
static void usb_close_now(struct usb_dev *dev);

static void usb_deliver(struct usb *u);

static int usb_on_defer(struct loop_source *s, void *userdata)
{
	struct usb *u = userdata;
	struct usb_dev *dev;

	u->busy++;
	usb_deliver(u);
	while ((dev = u->closing)) {
		u->closing = dev->next_closing;
		usb_close_now(dev);
	}
	if (u->rescan_pending) {
		u->rescan_pending = false;
		usb_scan(u);
	}
	u->busy--;
	if (!u->busy && !u->refcount)
		usb_destroy(u);
	return 0;
}

static int usb_on_scan_timer(struct loop_source *s, uint64_t now, void *userdata)
{
	struct usb *u = userdata;

	usb_rescan(u);
	if (u->watches)
		loop_timer_set_rel(s, USB_SCAN_INTERVAL);
	return 0;
}

static int usb_on_hotplug(libusb_context *ctx, libusb_device *d, libusb_hotplug_event ev,
			  void *userdata)
{
	usb_rescan(userdata);
	return 0;	/* stay registered */
}

/* Hot-plug callbacks when libusb has them, else (or with LABD_USB_SCAN=1) a timer. */
static int usb_start_hotplug(struct usb *u)
{
	const char *force_scan = getenv("LABD_USB_SCAN");
	int r;

	if (libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG) && !(force_scan && *force_scan == '1')) {
		r = libusb_hotplug_register_callback(u->ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED |
						     LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, 0,
						     LIBUSB_HOTPLUG_MATCH_ANY,
						     LIBUSB_HOTPLUG_MATCH_ANY,
						     LIBUSB_HOTPLUG_MATCH_ANY, usb_on_hotplug, u,
						     &u->hotplug);
		if (r == LIBUSB_SUCCESS) {
			u->has_hotplug = true;
			return 0;
		}
	}
	return loop_add_timer(u->loop, &u->scan_timer, USEC_INFINITY, usb_on_scan_timer, u);
}

static int usb_new(struct loop *l, struct usb **ret)
{
	struct usb *u = calloc(1, sizeof(*u));
	int r;

	if (!u)
		return -ENOMEM;
	u->refcount = 1;
	u->loop = l;
	r = libusb_init(&u->ctx);
	if (r < 0) {
		free(u);
		return usb_errno(r) == -ENOMEM ? -ENOMEM : -EIO;
	}
	r = usb_watch_fds(u);
	if (r >= 0)
		r = loop_add_defer(l, &u->defer, usb_on_defer, u);
	if (r >= 0)
		r = usb_start_hotplug(u);
	if (r < 0) {
		u->refcount = 0;
		usb_destroy(u);
		return r;
	}
	*ret = u;
	return 0;
}

int usb_get(struct loop *l, struct usb **ret)
{
	int r;

	if (!l)
		return -EINVAL;
	if (usb_shared && usb_shared->refcount) {
		if (usb_shared->loop != l)
			return -EBUSY;
		*ret = usb_ref(usb_shared);
		return 0;
	}
	r = usb_new(l, &usb_shared);
	if (r < 0)
		return r;
	*ret = usb_shared;
	return 0;
}

struct usb *usb_ref(struct usb *u)
{
	if (u)
		u->refcount++;
	return u;
}

static void usb_destroy(struct usb *u)
{
	struct usb_fd *f;

	if (u->has_hotplug)
		libusb_hotplug_deregister_callback(u->ctx, u->hotplug);
	libusb_set_pollfd_notifiers(u->ctx, NULL, NULL, NULL);
	libusb_exit(u->ctx);
	while ((f = u->fds)) {
		u->fds = f->next;
		loop_source_free(f->src);
		free(f);
	}
	loop_source_free(u->timeout);
	loop_source_free(u->poll_timer);
	loop_source_free(u->scan_timer);
	loop_source_free(u->defer);
	if (usb_shared == u)
		usb_shared = NULL;
	free(u);
}

struct usb *usb_unref(struct usb *u)
{
	if (!u || --u->refcount > 0)
		return NULL;
	if (!u->busy)
		usb_destroy(u);
	return NULL;
}

struct loop *usb_loop(const struct usb *u)
{
	return u->loop;
}

libusb_context *usb_context(const struct usb *u)
{
	return u->ctx;
}

/* ---- watches ---- */

static void usb_scan_watches(struct usb *u, libusb_device **list, ssize_t n)
{
	struct usb_watch *w;
	int present;

	for (w = u->watches; w; w = w->next) {
		if (w->dead)
			continue;
		present = usb_count(list, n, &w->match, NULL) > 0;
		if (present == w->present)
			continue;
		w->present = present;
		w->fn(present, w->userdata);	/* may free any watch: they are only marked */
	}
}

static void usb_scan(struct usb *u)
{
	struct usb_watch **p, *w;
	libusb_device **list;
	ssize_t n;

	if (!u->watches)
		return;
	n = libusb_get_device_list(u->ctx, &list);
	if (n < 0) {
		log_warning("usb: cannot list devices: %s", libusb_strerror((int)n));
		return;
	}
	usb_scan_watches(u, list, n);
	libusb_free_device_list(list, 1);
	for (p = &u->watches; (w = *p);) {
		if (!w->dead) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		usb_match_release(&w->match);
		free(w);
		usb_unref(u);
	}
}

void usb_rescan(struct usb *u)
{
	u->rescan_pending = true;
	loop_defer_again(u->defer);
}

int usb_watch_add(struct usb *u, const struct usb_match *m, usb_presence_fn fn, void *userdata,
		  struct usb_watch **ret)
{
	struct usb_watch *w = calloc(1, sizeof(*w));

	if (!w || usb_match_copy(m, &w->match) < 0) {
		free(w);
		return -ENOMEM;
	}
	w->usb = usb_ref(u);
	w->fn = fn;
	w->userdata = userdata;
	w->present = -1;
	w->next = u->watches;
	u->watches = w;
	if (u->scan_timer && !loop_timer_is_armed(u->scan_timer))
		loop_timer_set_rel(u->scan_timer, USB_SCAN_INTERVAL);
	usb_rescan(u);
	*ret = w;
	return 0;
}

struct usb_watch *usb_watch_free(struct usb_watch *w)
{
	if (!w)
		return NULL;
	/* Unlinked by the next scan, which may be running now. */
	w->dead = true;
	w->fn = NULL;
	usb_rescan(w->usb);
	return NULL;
}

/* ---- opened devices ---- */

int usb_dev_open(struct usb *u, libusb_device *d, struct usb_dev **ret)
{
	struct usb_dev *dev = calloc(1, sizeof(*dev));
	int r;

	if (!dev)
		return -ENOMEM;
	r = libusb_open(d, &dev->h);
	if (r < 0) {
		free(dev);
		return usb_errno(r);
	}
	dev->usb = usb_ref(u);
	*ret = dev;
	return 0;
}

libusb_device_handle *usb_dev_handle(struct usb_dev *dev)
{
	return dev->h;
}

libusb_device *usb_dev_device(struct usb_dev *dev)
{
	return libusb_get_device(dev->h);
}

int usb_dev_claim(struct usb_dev *dev, int iface)
{
	int r;

	if (iface < 0 || iface >= 32)
		return -EINVAL;
	/* Errors other than "a driver is bound" mean there is nothing to detach. */
	if (libusb_kernel_driver_active(dev->h, iface) == 1) {
		r = libusb_detach_kernel_driver(dev->h, iface);
		if (r < 0 && r != LIBUSB_ERROR_NOT_FOUND)
			return usb_errno(r);
	}
	r = libusb_claim_interface(dev->h, iface);
	if (r < 0)
		return usb_errno(r);
	dev->claimed |= 1U << iface;
	return 0;
}

static void usb_close_now(struct usb_dev *dev)
{
	int i;

	for (i = 0; i < 32; i++)
		if (dev->claimed & (1U << i))
			libusb_release_interface(dev->h, i);
	libusb_close(dev->h);
	usb_unref(dev->usb);
	free(dev);
}

/* Close from the loop once nothing is in flight: never inside libusb's callbacks. */
static void usb_dev_maybe_close(struct usb_dev *dev)
{
	struct usb *u = dev->usb;

	if (!dev->closing || dev->xfers || dev->queued)
		return;
	dev->queued = true;
	dev->next_closing = u->closing;
	u->closing = dev;
	loop_defer_again(u->defer);
}

static void usb_xfer_unlink(struct usb_xfer *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		x->dev->xfers = x->next;
	if (x->next)
		x->next->prev = x->prev;
}

static int usb_xfer_status(const struct libusb_transfer *t)
{
	switch (t->status) {
	case LIBUSB_TRANSFER_COMPLETED:
		return 0;
	case LIBUSB_TRANSFER_TIMED_OUT:
		return -ETIMEDOUT;
	case LIBUSB_TRANSFER_STALL:
		return -EPIPE;
	case LIBUSB_TRANSFER_NO_DEVICE:
		return -ENODEV;
	case LIBUSB_TRANSFER_OVERFLOW:
		return -EOVERFLOW;
	case LIBUSB_TRANSFER_CANCELLED:
		return -ECANCELED;
	default:
		return -EIO;
	}
}

/*
 * libusb returned a transfer.  Its callback is delivered from the loop's
 * defer, outside libusb's event handling, where libusb_open() and friends
 * would deadlock.
 */
static void LIBUSB_CALL usb_on_transfer(struct libusb_transfer *t)
{
	struct usb_xfer *x = t->user_data;
	struct usb *u = x->dev->usb;

	u->inflight--;
	x->completed = true;
	if (u->done_tail)
		u->done_tail->done_next = x;
	else
		u->done_head = x;
	u->done_tail = x;
	loop_defer_again(u->defer);
}

static void usb_deliver_one(struct usb_xfer *x)
{
	struct libusb_transfer *t = x->t;
	struct usb_dev *dev = x->dev;
	const uint8_t *data = t->buffer;
	int err = usb_xfer_status(t);

	usb_xfer_unlink(x);
	if (t->type == LIBUSB_TRANSFER_TYPE_CONTROL)
		data = libusb_control_transfer_get_data(t);
	if (!x->cancelled && !dev->closing)
		x->done(dev, err, data, err ? 0 : (size_t)t->actual_length, x->userdata);
	free(t->buffer);
	libusb_free_transfer(t);
	free(x);
	usb_dev_maybe_close(dev);
}

static void usb_deliver(struct usb *u)
{
	struct usb_xfer *x;

	while ((x = u->done_head)) {
		u->done_head = x->done_next;
		if (!u->done_head)
			u->done_tail = NULL;
		usb_deliver_one(x);
	}
}

/* The transfer's buffer: the setup packet first for control transfers. */
static uint8_t *usb_xfer_buffer(const struct usb_request *rq, size_t *ret_len)
{
	bool in = (rq->type == USB_XFER_CONTROL ? rq->request_type : rq->endpoint) & 0x80;
	size_t setup = rq->type == USB_XFER_CONTROL ? LIBUSB_CONTROL_SETUP_SIZE : 0;
	uint8_t *buf = calloc(1, setup + rq->len + 1);

	if (!buf)
		return NULL;
	if (setup)
		libusb_fill_control_setup(buf, rq->request_type, rq->request, rq->value, rq->index,
					  (uint16_t)rq->len);
	if (!in && rq->len)
		memcpy(buf + setup, rq->data, rq->len);
	*ret_len = setup + rq->len;
	return buf;
}

static void usb_fill(struct libusb_transfer *t, struct usb_dev *dev,
		     const struct usb_request *rq, uint8_t *buf, size_t len, void *x)
{
	switch (rq->type) {
	case USB_XFER_CONTROL:
		libusb_fill_control_transfer(t, dev->h, buf, usb_on_transfer, x, rq->timeout_ms);
		break;
	case USB_XFER_BULK:
		libusb_fill_bulk_transfer(t, dev->h, rq->endpoint, buf, (int)len, usb_on_transfer,
					  x, rq->timeout_ms);
		break;
	case USB_XFER_INTERRUPT:
		libusb_fill_interrupt_transfer(t, dev->h, rq->endpoint, buf, (int)len,
					       usb_on_transfer, x, rq->timeout_ms);
		break;
	}
}

int usb_dev_submit(struct usb_dev *dev, const struct usb_request *rq, usb_done_fn done,
		   void *userdata)
{
	struct usb_xfer *x;
	uint8_t *buf;
	size_t len;
	int r;

	if (dev->closing || (rq->type == USB_XFER_CONTROL && rq->len > UINT16_MAX) ||
	    rq->len > INT32_MAX)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	buf = usb_xfer_buffer(rq, &len);
	if (x)
		x->t = libusb_alloc_transfer(0);
	if (!x || !buf || !x->t) {
		r = -ENOMEM;
		goto err_free;
	}
	x->dev = dev;
	x->done = done;
	x->userdata = userdata;
	usb_fill(x->t, dev, rq, buf, len, x);
	r = libusb_submit_transfer(x->t);
	if (r < 0) {
		r = usb_errno(r);
		goto err_free;
	}
	x->next = dev->xfers;
	if (x->next)
		x->next->prev = x;
	dev->xfers = x;
	dev->usb->inflight++;
	usb_arm_timeout(dev->usb);
	return 0;

err_free:
	if (x)
		libusb_free_transfer(x->t);
	free(x);
	free(buf);
	return r;
}

void usb_dev_cancel(struct usb_dev *dev)
{
	struct usb_xfer *x;

	for (x = dev->xfers; x; x = x->next) {
		if (x->cancelled)
			continue;
		x->cancelled = true;
		if (!x->completed)
			libusb_cancel_transfer(x->t);
	}
}

struct usb_dev *usb_dev_close(struct usb_dev *dev)
{
	if (!dev || dev->closing)
		return NULL;
	dev->closing = true;
	usb_dev_cancel(dev);
	usb_dev_maybe_close(dev);
	return NULL;
}
