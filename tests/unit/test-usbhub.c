// SPDX-License-Identifier: GPL-2.0-or-later
/* test-usbhub.c -- the usb-hub power driver on hubs emulated by umockdev: sysfs and libusb */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "usbbed.h"

#ifdef HAVE_UMOCKDEV

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

#define PORT2_DISABLE "1-1:1.0/1-1-port2/disable"

TEST(test_usbhub__sysfs_off_on)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	bed_attr(&f.bed, "usb1/1-1", PORT2_DISABLE, "0");
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(bed_read_attr(&f.bed, "usb1/1-1", PORT2_DISABLE), "1");
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(bed_read_attr(&f.bed, "usb1/1-1", PORT2_DISABLE), "0");
	CHECK_INT(power_last_state(f.p), ==, 1);
	bed_power_release(&f);
}

TEST(test_usbhub__sysfs_companion_by_path)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	bed_attr(&f.bed, "usb1/1-1", PORT2_DISABLE, "0");
	bed_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable", "0");
	CHECK_INT(bed_power_new(&f, "usb-hub", false, "location = \"1-1\"; port = 2;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_STR(bed_read_attr(&f.bed, "usb1/1-1", PORT2_DISABLE), "1");
	CHECK_STR(bed_read_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable"), "1");
	bed_power_release(&f);
}

TEST(test_usbhub__sysfs_companion_by_peer_link)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	bed_attr(&f.bed, "usb1/1-1", PORT2_DISABLE, "0");
	bed_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port3/disable", "0");
	bed_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable", "0");
	/* The kernel says our port 2 is the SuperSpeed hub's port 3. */
	umockdev_testbed_set_attribute_link(f.bed.tb, BED_PCI "usb1/1-1",
					    "1-1:1.0/1-1-port2/peer",
					    "../../../../usb2/2-1/2-1:1.0/2-1-port3");
	CHECK_INT(bed_power_new(&f, "usb-hub", false, "location = \"1-1\"; port = 2;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_STR(bed_read_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port3/disable"), "1");
	CHECK_STR(bed_read_attr(&f.bed, "usb2/2-1", "2-1:1.0/2-1-port2/disable"), "0");
	bed_power_release(&f);
}

TEST(test_usbhub__libusb_off)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT CLEAR_POWER_2
			   CLEAR_POWER_2 CLEAR_POWER_2 STATUS_2_OFF), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 0);
	bed_power_release(&f);
}

TEST(test_usbhub__libusb_on)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   STATUS_2_ON), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false, "location = \"1-1\"; vid = 0x2109; port = 2; "
				"companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 1);
	bed_power_release(&f);
}

TEST(test_usbhub__libusb_both_companions)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   STATUS_2_ON), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb2/2-1", "device 2 2\n" DESC_SS SET_POWER_2
			   SS_STATUS_2_ON), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; sysfs = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	bed_power_release(&f);
}

TEST(test_usbhub__ganged_hub_fails_clearly)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_GANGED), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EOPNOTSUPP);
	CHECK_STR(f.msg, "hub 1-1 has no per-port power switching (ganged)");
	bed_power_release(&f);
}

TEST(test_usbhub__port_beyond_the_hub)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 7; companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EINVAL);
	CHECK_STR(f.msg, "hub 1-1 has 4 ports, not 7");
	bed_power_release(&f);
}

TEST(test_usbhub__readback_mismatch)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT CLEAR_POWER_2
			   STATUS_2_ON), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false; "
				"off_repeat = 1;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "port 2 of hub 1-1 is still on after power off (status 0x0103)");
	bed_power_release(&f);
}

TEST(test_usbhub__stall)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT
			   "ctrl 23 03 0008 0002 0000 status=-32\n"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EPIPE);
	CHECK_STR(f.msg, "hub 1-1: switching port power failed: Broken pipe");
	bed_power_release(&f);
}

TEST(test_usbhub__short_status)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   "ctrl a3 00 0000 0002 0004 reply=01\n"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "hub 1-1 sent a short port status (1 bytes)");
	bed_power_release(&f);
}

/*
 * The status read never completes.  Its request gets what is left of the 2 s
 * timeout (not the driver's 5 s per request) and fails at 2 s from the step's
 * start, however long the descriptor and switch requests took; the core's own
 * timer, whose message differs, is a second later.  Were the request given 5 s,
 * the core's message would be the one.
 */
TEST(test_usbhub__timeout)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-1", "device 1 2\n" DESC_PER_PORT SET_POWER_2
			   "ctrl a3 00 0000 0002 0004 noreply\n"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false; "
				"timeout = 2;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ETIMEDOUT);
	CHECK_STR(f.msg, "hub 1-1: reading the port status failed: Connection timed out");
	bed_power_release(&f);
}

TEST(test_usbhub__hub_missing)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false, "location = \"1-4\"; port = 2;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -ENODEV);
	CHECK_STR(f.msg, "USB device at '1-4' not found");
	bed_power_release(&f);
}

TEST(test_usbhub__not_a_hub)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false, "serial = \"YK31337\"; port = 2;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -ENOTTY);
	CHECK_STR(f.msg, "USB device with serial 'YK31337' is not a hub");
	bed_power_release(&f);
}

TEST(test_usbhub__permission_denied)
{
	struct bed_power f;
	char node[256];

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	bed_node(&f.bed, 1, 2, node, sizeof(node));
	CHECK_INT(chmod(node, 0), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-1\"; port = 2; companion = false;"), ==, 0);
	CHECK_INT(bed_drop_dac(), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	bed_restore_dac();
	CHECK_INT(f.err, ==, -EACCES);
	CHECK_STR(f.msg, "cannot open hub 1-1: Permission denied");
	bed_power_release(&f);
}

TEST(test_usbhub__hub_unplugged_and_back)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", true, "location = \"1-1\"; port = 2;"), ==, 0);
	CHECK_INT(bed_power_wait_presence(&f, 1), ==, 0);
	CHECK_INT(f.presence[0], ==, 1);
	/* A USB3 hub leaves both buses. */
	bed_remove(&f.bed, "usb1/1-1");
	bed_remove(&f.bed, "usb2/2-1");
	CHECK_INT(bed_power_wait_presence(&f, 2), ==, 0);
	CHECK_INT(f.presence[1], ==, 0);
	CHECK_INT(bed_plug(&f.bed, "hub", "usb1/1-1"), ==, 0);
	CHECK_INT(bed_power_wait_presence(&f, 3), ==, 0);
	CHECK_INT(f.presence[2], ==, 1);
	bed_power_release(&f);
}

/* Without libusb hot-plug events: the periodic rescan notices too. */
TEST(test_usbhub__unplugged_seen_by_rescan)
{
	struct bed_power f;

	setenv("LABD_USB_SCAN", "1", 1);
	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", true, "location = \"1-1\"; port = 2;"), ==, 0);
	unsetenv("LABD_USB_SCAN");
	CHECK_INT(bed_power_wait_presence(&f, 1), ==, 0);
	CHECK_INT(f.presence[0], ==, 1);
	bed_remove(&f.bed, "usb1/1-1");
	bed_remove(&f.bed, "usb2/2-1");
	CHECK_INT(bed_power_wait_presence(&f, 2), ==, 0);
	CHECK_INT(f.presence[1], ==, 0);
	CHECK_INT(bed_plug(&f.bed, "hub", "usb1/1-1"), ==, 0);
	CHECK_INT(bed_power_wait_presence(&f, 3), ==, 0);
	CHECK_INT(f.presence[2], ==, 1);
	bed_power_release(&f);
}

TEST(test_usbhub__config_errors)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "hub"), ==, 0);
	CHECK_INT(bed_power_new(&f, "usb-hub", false,
				"location = \"1-x\"; port = 0; colour = 1;"), ==, -EINVAL);
	CHECK_INT(f.diag.n, ==, 3);
	CHECK_CONTAINS(f.diag.msgs[0], "unknown key 'colour'");
	CHECK_CONTAINS(f.diag.msgs[1],
		       "invalid USB location '1-x': write the bus and port path, like \"1-1.4\"");
	CHECK_CONTAINS(f.diag.msgs[2], "'port'");
	/* vid and pid alone could name several hubs. */
	CHECK_INT(bed_power_new(&f, "usb-hub", false, "vid = 0x2109; pid = 0x2817; port = 2;"),
		  ==, -EINVAL);
	CHECK_CONTAINS(f.diag.msgs[0], "name the USB device by 'location' or 'serial'");
	bed_power_release(&f);
}

TEST_LIST(test_usbhub__sysfs_off_on, test_usbhub__sysfs_companion_by_path,
	  test_usbhub__sysfs_companion_by_peer_link, test_usbhub__libusb_off,
	  test_usbhub__libusb_on, test_usbhub__libusb_both_companions,
	  test_usbhub__ganged_hub_fails_clearly, test_usbhub__port_beyond_the_hub,
	  test_usbhub__readback_mismatch, test_usbhub__stall, test_usbhub__short_status,
	  test_usbhub__timeout, test_usbhub__hub_missing, test_usbhub__not_a_hub,
	  test_usbhub__permission_denied, test_usbhub__hub_unplugged_and_back,
	  test_usbhub__unplugged_seen_by_rescan, test_usbhub__config_errors);
#endif
