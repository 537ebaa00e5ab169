// SPDX-License-Identifier: GPL-2.0-or-later
/* test-usbhub.c -- the usb-hub power driver on hubs emulated by umockdev (sysfs and libusb paths) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <libconfig.h>

#include "config.h"
#include "diag.h"
#include "loop.h"
#include "power.h"
#include "usbbed.h"

#ifdef HAVE_UMOCKDEV

#define WAIT_MAX (10 * USEC_PER_SEC)

/* USB2 hub descriptor: 4 ports, per-port power switching (wHubCharacteristics 0x0009). */
#define DESC_PER_PORT "ctrl a0 06 2900 0000 000c reply=0929040900326400ff\n"
/* The same hub with ganged power switching (0x0008). */
#define DESC_GANGED "ctrl a0 06 2900 0000 000c reply=0929040800326400ff\n"
/* SuperSpeed hub descriptor (type 0x2a), 4 ports, per-port switching. */
#define DESC_SS "ctrl a0 06 2a00 0000 000c reply=0c2a0409003200000000ffff\n"
#define CLEAR_POWER_2 "ctrl 23 01 0008 0002 0000\n"
#define SET_POWER_2 "ctrl 23 03 0008 0002 0000\n"
#define STATUS_2_OFF "ctrl a3 00 0000 0002 0004 reply=00000000\n"
#define STATUS_2_ON "ctrl a3 00 0000 0002 0004 reply=03010000\n"
#define SS_STATUS_2_ON "ctrl a3 00 0000 0002 0004 reply=03020000\n"
#define SS_STATUS_2_OFF "ctrl a3 00 0000 0002 0004 reply=00000000\n"

struct fixture {
	struct bed bed;
	struct loop *loop;
	config_t cf;
	struct power *p;
	struct diag diag;
	int calls, err;
	char msg[512];
	int presence[8];	/* 1 present, 0 gone, in order reported */
	int n_presence;
};

static void on_done(struct power *p, int err, const char *msg, void *userdata)
{
	struct fixture *f = userdata;

	f->calls++;
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
}

static void on_presence(const char *part, bool present, const char *what, void *userdata)
{
	struct fixture *f = userdata;

	if (f->n_presence < 8)
		f->presence[f->n_presence++] = present;
}

static int fixture_init(struct fixture *f, const char *second)
{
	memset(f, 0, sizeof(*f));
	f->diag = (struct diag)DIAG_INIT;
	config_init(&f->cf);
	if (bed_new(&f->bed, "roothubs", second, NULL) < 0 || loop_new(&f->loop) < 0)
		return -EIO;
	return 0;
}

static int fixture_power(struct fixture *f, bool watch, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fixture_power(struct fixture *f, bool watch, const char *fmt, ...)
{
	struct driver_ctx ctx = { .loop = f->loop, .device_name = "board-1" };
	struct driver_config cfg = { .driver = "usb-hub", .file = "test.conf", .line = 1 };
	char text[1024];
	va_list ap;

	if (watch) {
		ctx.presence = on_presence;
		ctx.presence_userdata = f;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!config_read_string(&f->cf, text))
		return -EINVAL;
	cfg.settings = config_root_setting(&f->cf);
	return power_new(&cfg, &ctx, &f->p, &f->diag);
}

static void fixture_release(struct fixture *f)
{
	f->p = power_free(f->p);
	/* Let deferred closes run before the loop goes. */
	loop_run_once(f->loop, 0);
	f->loop = loop_free(f->loop);
	config_destroy(&f->cf);
	diag_release(&f->diag);
	bed_free(&f->bed);
}

static int run_op(struct fixture *f, enum power_op op)
{
	uint64_t end = now_monotonic() + WAIT_MAX;
	int want = f->calls + 1, r = power_run(f->p, op, on_done, f);

	if (r < 0)
		return r;
	while (f->calls < want && now_monotonic() < end)
		loop_run_once(f->loop, 100 * USEC_PER_MSEC);
	return f->calls == want ? 0 : -ETIMEDOUT;
}

/* Run the loop until @n presence reports arrived. */
static int wait_presence(struct fixture *f, int n)
{
	uint64_t end = now_monotonic() + WAIT_MAX;

	while (f->n_presence < n && now_monotonic() < end)
		loop_run_once(f->loop, 50 * USEC_PER_MSEC);
	return f->n_presence >= n ? 0 : -ETIMEDOUT;
}

#define PORT2_DISABLE "1-1:1.0/1-1-port2/disable"

TEST(test_usbhub__sysfs_off_on)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	bed_attr(&f.bed, "usb1/1-1", PORT2_DISABLE, "0");
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(bed_read_attr(&f.bed, "usb1/1-1", PORT2_DISABLE), "1");
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(bed_read_attr(&f.bed, "usb1/1-1", PORT2_DISABLE), "0");
	CHECK_INT(power_last_state(f.p), ==, 1);
	fixture_release(&f);
}

TEST(test_usbhub__sysfs_companion_by_path)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	bed_attr(&f.bed, "usb1/1-1", PORT2_DISABLE, "0");
	bed_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable", "0");
	CHECK_INT(fixture_power(&f, false, "location = \"1-1\"; port = 2;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_STR(bed_read_attr(&f.bed, "usb1/1-1", PORT2_DISABLE), "1");
	CHECK_STR(bed_read_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable"), "1");
	fixture_release(&f);
}

TEST(test_usbhub__sysfs_companion_by_peer_link)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	bed_attr(&f.bed, "usb1/1-1", PORT2_DISABLE, "0");
	bed_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port3/disable", "0");
	bed_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable", "0");
	/* The kernel says our port 2 is the SuperSpeed hub's port 3. */
	umockdev_testbed_set_attribute_link(f.bed.tb, BED_PCI "usb1/1-1",
					    "1-1:1.0/1-1-port2/peer",
					    "../../../../usb2/2-1/2-1:1.0/2-1-port3");
	CHECK_INT(fixture_power(&f, false, "location = \"1-1\"; port = 2;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_STR(bed_read_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port3/disable"), "1");
	CHECK_STR(bed_read_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable"), "0");
	fixture_release(&f);
}

TEST(test_usbhub__libusb_off)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT CLEAR_POWER_2
			   CLEAR_POWER_2 CLEAR_POWER_2 STATUS_2_OFF), ==, 0);
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 0);
	fixture_release(&f);
}

TEST(test_usbhub__libusb_on)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   STATUS_2_ON), ==, 0);
	CHECK_INT(fixture_power(&f, false, "location = \"1-1\"; vid = 0x2109; port = 2; "
				"companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 1);
	fixture_release(&f);
}

TEST(test_usbhub__libusb_both_companions)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   STATUS_2_ON), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb2/2-1", "device 2 2\n" DESC_SS SET_POWER_2
			   SS_STATUS_2_ON), ==, 0);
	CHECK_INT(fixture_power(&f, false, "location = \"1-1\"; port = 2; sysfs = false;"), ==,
		  0);
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	fixture_release(&f);
}

TEST(test_usbhub__ganged_hub_fails_clearly)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_GANGED), ==, 0);
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EOPNOTSUPP);
	CHECK_STR(f.msg, "hub 1-1 has no per-port power switching (ganged)");
	fixture_release(&f);
}

TEST(test_usbhub__port_beyond_the_hub)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT), ==, 0);
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 7; companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EINVAL);
	CHECK_STR(f.msg, "hub 1-1 has 4 ports, not 7");
	fixture_release(&f);
}

TEST(test_usbhub__readback_mismatch)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT CLEAR_POWER_2
			   STATUS_2_ON), ==, 0);
	CHECK_INT(fixture_power(&f, false, "location = \"1-1\"; port = 2; companion = false; "
				"off_repeat = 1;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "port 2 of hub 1-1 is still on after power off (status 0x0103)");
	fixture_release(&f);
}

TEST(test_usbhub__stall)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT
			   "ctrl 23 03 0008 0002 0000 status=-32\n"), ==, 0);
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EPIPE);
	CHECK_STR(f.msg, "hub 1-1: switching port power failed: Broken pipe");
	fixture_release(&f);
}

TEST(test_usbhub__short_status)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   "ctrl a3 00 0000 0002 0004 reply=01\n"), ==, 0);
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "hub 1-1 sent a short port status (1 bytes)");
	fixture_release(&f);
}

TEST(test_usbhub__timeout)
{
	struct fixture f;
	uint64_t start;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   "ctrl a3 00 0000 0002 0004 noreply\n"), ==, 0);
	CHECK_INT(fixture_power(&f, false, "location = \"1-1\"; port = 2; companion = false; "
				"timeout = 0.5;"), ==, 0);
	start = now_monotonic();
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ETIMEDOUT);
	CHECK_STR(f.msg, "hub 1-1: reading the port status failed: Connection timed out");
	CHECK_INT(now_monotonic() - start, <, 1400 * USEC_PER_MSEC);
	fixture_release(&f);
}

TEST(test_usbhub__hub_missing)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(fixture_power(&f, false, "location = \"1-4\"; port = 2;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -ENODEV);
	CHECK_STR(f.msg, "USB device at '1-4' not found");
	fixture_release(&f);
}

TEST(test_usbhub__not_a_hub)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "ykush"), ==, 0);
	CHECK_INT(fixture_power(&f, false, "serial = \"YK31337\"; port = 2;"), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -ENOTTY);
	CHECK_STR(f.msg, "USB device with serial 'YK31337' is not a hub");
	fixture_release(&f);
}

TEST(test_usbhub__permission_denied)
{
	struct fixture f;
	char node[256];

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	bed_node(&f.bed, 1, 2, node, sizeof(node));
	CHECK_INT(chmod(node, 0), ==, 0);
	CHECK_INT(fixture_power(&f, false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_drop_dac(), ==, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	bed_restore_dac();
	CHECK_INT(f.err, ==, -EACCES);
	CHECK_STR(f.msg, "cannot open hub 1-1: Permission denied");
	fixture_release(&f);
}

TEST(test_usbhub__hub_unplugged_and_back)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(fixture_power(&f, true, "location = \"1-1\"; port = 2;"), ==, 0);
	CHECK_INT(wait_presence(&f, 1), ==, 0);
	CHECK_INT(f.presence[0], ==, 1);
	/* A USB3 hub leaves both buses. */
	bed_remove(&f.bed, "usb1/1-1");
	bed_remove(&f.bed, "usb2/2-1");
	CHECK_INT(wait_presence(&f, 2), ==, 0);
	CHECK_INT(f.presence[1], ==, 0);
	CHECK_INT(bed_plug(&f.bed, "hub", "usb1/1-1"), ==, 0);
	CHECK_INT(wait_presence(&f, 3), ==, 0);
	CHECK_INT(f.presence[2], ==, 1);
	fixture_release(&f);
}

TEST(test_usbhub__config_errors)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f, "hub"), ==, 0);
	CHECK_INT(fixture_power(&f, false, "location = \"1-x\"; port = 0; colour = 1;"), ==,
		  -EINVAL);
	CHECK_INT(f.diag.n, ==, 3);
	CHECK_CONTAINS(f.diag.msgs[0], "unknown key 'colour'");
	CHECK_CONTAINS(f.diag.msgs[1],
		       "invalid USB location '1-x': write the bus and port path, like \"1-1.4\"");
	CHECK_CONTAINS(f.diag.msgs[2], "'port'");
	config_destroy(&f.cf);
	config_init(&f.cf);
	diag_release(&f.diag);
	/* vid and pid alone could name several hubs. */
	CHECK_INT(fixture_power(&f, false, "vid = 0x2109; pid = 0x2817; port = 2;"), ==, -EINVAL);
	CHECK_CONTAINS(f.diag.msgs[0], "name the USB device by 'location' or 'serial'");
	fixture_release(&f);
}

TEST_LIST(test_usbhub__sysfs_off_on, test_usbhub__sysfs_companion_by_path,
	  test_usbhub__sysfs_companion_by_peer_link, test_usbhub__libusb_off,
	  test_usbhub__libusb_on, test_usbhub__libusb_both_companions,
	  test_usbhub__ganged_hub_fails_clearly, test_usbhub__port_beyond_the_hub,
	  test_usbhub__readback_mismatch, test_usbhub__stall, test_usbhub__short_status,
	  test_usbhub__timeout, test_usbhub__hub_missing, test_usbhub__not_a_hub,
	  test_usbhub__permission_denied, test_usbhub__hub_unplugged_and_back,
	  test_usbhub__config_errors);
#endif
