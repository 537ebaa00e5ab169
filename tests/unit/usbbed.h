/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * usbbed.h -- USB devices emulated by libumockdev, for the unit tests of the USB code
 *
 * The host kernel of the CI machine has no USB at all, so tests run the real
 * libusb code paths against umockdev's emulation: a sysfs tree and usbfs
 * nodes from the hand-written descriptions tests/usb/NAME.umockdev, and for
 * each device a usbmon capture (pcap, DLT 220) that umockdev replays in
 * order, written from a readable transfer list by tests/usb/mkpcap.py.
 *
 *	#include "usbbed.h"           the test re-runs itself under
 *	                              umockdev-wrapper (LD_PRELOAD) before main()
 *	bed_new(&bed, "roothubs", "hub", NULL);   a fresh testbed
 *	bed_pcap(&bed, "usb1/1-1", "ctrl a3 00 0000 0002 0004 reply=00010000\n");
 *	bed_remove(&bed, "usb1/1-1");             unplug (a uevent is sent)
 *	bed_free(&bed);
 *
 * Power drivers are driven through struct bed_power: a loop, a power object
 * made from a libconfig text, run_op() and the presence reports.
 *
 * Without libumockdev (HAVE_UMOCKDEV undefined) every case is skipped.
 */
#ifndef LABD_USBBED_H
#define LABD_USBBED_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/power.h"
#include "tap.h"

#define BED_PCI "/sys/devices/pci0000:00/0000:00:14.0/"
#define BED_WAIT_MAX (10 * USEC_PER_SEC)
#define BED_MAX_REPORTS 8

#ifdef HAVE_UMOCKDEV
#include <linux/capability.h>
#include <sys/syscall.h>
#include <umockdev.h>

struct bed {
	UMockdevTestbed *tb;
	char dir[64];		/* scratch directory for specs and captures */
	int n_pcaps;
};

/* tests/usb/NAME.umockdev, from the top of the tree (tests run there). */
static inline int bed_add(struct bed *b, const char *name)
{
	GError *err = NULL;
	char path[256];

	snprintf(path, sizeof(path), "tests/usb/%s.umockdev", name);
	if (!umockdev_testbed_add_from_file(b->tb, path, &err)) {
		printf("# cannot load '%s': %s\n", path, err ? err->message : "?");
		g_clear_error(&err);
		return -EINVAL;
	}
	return 0;
}

/* A fresh testbed holding the named descriptions (NULL-terminated). */
static inline int bed_new(struct bed *b, ...)
{
	const char *name;
	va_list ap;
	int r = 0;

	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/labd-usbbed.XXXXXX");
	if (!mkdtemp(b->dir))
		return -errno;
	b->tb = umockdev_testbed_new();
	va_start(ap, b);
	while (!r && (name = va_arg(ap, const char *)))
		r = bed_add(b, name);
	va_end(ap);
	return r;
}

/* Replay @spec (tests/usb/mkpcap.py's format) on device BED_PCI @dev ("usb1/1-1"). */
static inline int bed_pcap(struct bed *b, const char *dev, const char *spec)
{
	char specfile[128], pcap[128], cmd[512], sys[256];
	GError *err = NULL;
	FILE *f;

	snprintf(specfile, sizeof(specfile), "%s/%d.spec", b->dir, b->n_pcaps);
	snprintf(pcap, sizeof(pcap), "%s/%d.pcap", b->dir, b->n_pcaps++);
	f = fopen(specfile, "w");
	if (!f)
		return -errno;
	fputs(spec, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/usb/mkpcap.py %s %s", specfile, pcap);
	if (system(cmd) != 0)
		return -EINVAL;
	snprintf(sys, sizeof(sys), BED_PCI "%s", dev);
	if (!umockdev_testbed_load_pcap(b->tb, sys, pcap, &err)) {
		printf("# cannot replay '%s' on '%s': %s\n", pcap, sys, err ? err->message : "?");
		g_clear_error(&err);
		return -EINVAL;
	}
	return 0;
}

/* Set sysfs attribute @name of device @dev ("usb1/1-1", "1-1:1.0/1-1-port2/disable"). */
static inline void bed_attr(struct bed *b, const char *dev, const char *name, const char *value)
{
	char sys[256];

	snprintf(sys, sizeof(sys), BED_PCI "%s", dev);
	umockdev_testbed_set_attribute(b->tb, sys, name, value);
}

/* The content of an attribute (static buffer; "" when absent). */
static inline const char *bed_read_attr(struct bed *b, const char *dev, const char *name)
{
	static char buf[256];
	gchar *root = umockdev_testbed_get_root_dir(b->tb);
	char path[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s" BED_PCI "%s/%s", root, dev, name);
	g_free(root);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* The usbfs node of device bus/dev, in the testbed, e.g. to chmod it. */
static inline void bed_node(struct bed *b, int bus, int dev, char *buf, size_t len)
{
	gchar *root = umockdev_testbed_get_root_dir(b->tb);

	snprintf(buf, len, "%s/dev/bus/usb/%03d/%03d", root, bus, dev);
	g_free(root);
}

/*
 * Tests run as root here: to see permission errors, drop CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH from the effective set (kept permitted, restored after).
 */
static inline int bed_set_dac(int on)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	unsigned bits = (1U << CAP_DAC_OVERRIDE) | (1U << CAP_DAC_READ_SEARCH);

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	if (on)
		data[0].effective |= bits & data[0].permitted;
	else
		data[0].effective &= ~bits;
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

static inline int bed_drop_dac(void)
{
	return bed_set_dac(0);
}

static inline void bed_restore_dac(void)
{
	bed_set_dac(1);
}

/* Unplug @dev: a "remove" uevent, then the device is gone. */
static inline void bed_remove(struct bed *b, const char *dev)
{
	char sys[256];

	snprintf(sys, sizeof(sys), BED_PCI "%s", dev);
	umockdev_testbed_uevent(b->tb, sys, "remove");
	umockdev_testbed_remove_device(b->tb, sys);
}

/* Plug description @name back in: the device, then an "add" uevent for @dev. */
static inline int bed_plug(struct bed *b, const char *name, const char *dev)
{
	char sys[256];
	int r = bed_add(b, name);

	snprintf(sys, sizeof(sys), BED_PCI "%s", dev);
	if (!r)
		umockdev_testbed_uevent(b->tb, sys, "add");
	return r;
}

static inline void bed_free(struct bed *b)
{
	char cmd[128];

	if (b->tb)
		g_object_unref(b->tb);
	b->tb = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
	if (b->dir[0] && system(cmd) != 0)
		printf("# cannot remove '%s'\n", b->dir);
}

/* One power object of a board "board-1" on its own loop, over a testbed. */
struct bed_power {
	struct bed bed;
	struct loop *loop;
	config_t cf;
	struct power *p;
	struct diag diag;
	int calls, err;
	char msg[512];
	int presence[BED_MAX_REPORTS];	/* 1 present, 0 gone, in the order reported */
	int n_presence;
};

static inline void bed_on_done(struct power *p, int err, const char *msg, void *userdata)
{
	struct bed_power *f = userdata;

	f->calls++;
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
}

static inline void bed_on_presence(const char *part, bool present, const char *what,
				   void *userdata)
{
	struct bed_power *f = userdata;

	if (f->n_presence < BED_MAX_REPORTS)
		f->presence[f->n_presence++] = present;
}

/* A testbed with "roothubs" and description @second, and a loop. */
static inline int bed_power_init(struct bed_power *f, const char *second)
{
	memset(f, 0, sizeof(*f));
	f->diag = (struct diag)DIAG_INIT;
	config_init(&f->cf);
	if (bed_new(&f->bed, "roothubs", second, NULL) < 0 || loop_new(&f->loop) < 0)
		return -EIO;
	return 0;
}

/* f->p from power group members @fmt...; @watch: report presence like a board. */
static inline int bed_power_new(struct bed_power *f, const char *driver, bool watch,
				const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static inline int bed_power_new(struct bed_power *f, const char *driver, bool watch,
				const char *fmt, ...)
{
	struct driver_ctx ctx = { .loop = f->loop, .device_name = "board-1" };
	struct driver_config cfg = { .driver = (char *)driver, .file = "test.conf", .line = 1 };
	char text[1024];
	va_list ap;

	if (watch) {
		ctx.presence = bed_on_presence;
		ctx.board_userdata = f;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	config_destroy(&f->cf);
	config_init(&f->cf);
	diag_release(&f->diag);
	if (!config_read_string(&f->cf, text))
		return -EINVAL;
	cfg.settings = config_root_setting(&f->cf);
	return power_new(&cfg, &ctx, &f->p, &f->diag);
}

static inline void bed_power_release(struct bed_power *f)
{
	f->p = power_free(f->p);
	loop_run_once(f->loop, 0);	/* deferred closes */
	f->loop = loop_free(f->loop);
	config_destroy(&f->cf);
	diag_release(&f->diag);
	bed_free(&f->bed);
}

/* Run @op to its end (or BED_WAIT_MAX): f->err and f->msg hold the result. */
static inline int bed_power_run(struct bed_power *f, enum power_op op)
{
	uint64_t end = now_monotonic() + BED_WAIT_MAX;
	int want = f->calls + 1, r = power_run(f->p, op, bed_on_done, f);

	if (r < 0)
		return r;
	while (f->calls < want && now_monotonic() < end)
		loop_run_once(f->loop, 100 * USEC_PER_MSEC);
	return f->calls == want ? 0 : -ETIMEDOUT;
}

/* Run the loop until @n presence reports arrived. */
static inline int bed_power_wait_presence(struct bed_power *f, int n)
{
	uint64_t end = now_monotonic() + BED_WAIT_MAX;

	while (f->n_presence < n && now_monotonic() < end)
		loop_run_once(f->loop, 50 * USEC_PER_MSEC);
	return f->n_presence >= n ? 0 : -ETIMEDOUT;
}

/* Run under umockdev's preload library: exec ourselves through umockdev-wrapper
 * (glibc passes argc and argv to constructors). */
__attribute__((constructor)) static void bed_reexec(int argc, char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	char **args;
	int i;

	/* umockdev_in_mock_environment() is not usable before main(). */
	if (preload && strstr(preload, "libumockdev-preload"))
		return;
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		exit(1);
	args[0] = "umockdev-wrapper";
	for (i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	/* ASan wants to be first in the preload list; umockdev's library is. */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 0);
	execvp(args[0], args);
	printf("1..1\nok 1 - usb tests # SKIP umockdev-wrapper not found (make deps)\n");
	exit(0);
}
#else /* !HAVE_UMOCKDEV */

/* The test's cases are left out with libumockdev: the program is this skip. */
int main(void)
{
	printf("1..1\nok 1 - usb tests # SKIP built without libumockdev\n");
	return 0;
}

#endif
#endif
