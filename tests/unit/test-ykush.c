// SPDX-License-Identifier: GPL-2.0-or-later
/* test-ykush.c -- the ykush power driver on a YKUSH3 emulated by umockdev */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "usbbed.h"

#ifdef HAVE_UMOCKDEV

/* A YKUSH3 at 1-2 (bus 1, device 3): reports go out on 0x01 and come back on 0x81. */
#define DEV "device 1 3\n"
#define SEND(cmd) "intr 01 64 data=" cmd cmd " pad=64\n"
#define REPLY(hex) "intr 81 64 reply=" hex " pad=64\n"

TEST(test_ykush__port_on)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("12") REPLY("0112") SEND("22")
			   REPLY("0111")), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = 2;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 1);
	bed_power_release(&f);
}

TEST(test_ykush__port_off)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("03") REPLY("0103") SEND("23")
			   REPLY("0101")), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = 3;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(power_last_state(f.p), ==, 0);
	bed_power_release(&f);
}

TEST(test_ykush__all_ports_cycle)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("0a") REPLY("010a") SEND("2a")
			   REPLY("01010101") SEND("1a") REPLY("011a") SEND("2a")
			   REPLY("01111111")), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = \"all\";"), ==,
		  0);
	power_set_cycle_delay(f.p, 10 * USEC_PER_MSEC);
	CHECK_INT(bed_power_run(&f, POWER_CYCLE), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	bed_power_release(&f);
}

TEST(test_ykush__state_not_switched)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("0a") REPLY("010a") SEND("2a")
			   REPLY("01011101")), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = \"all\";"), ==,
		  0);
	CHECK_INT(bed_power_run(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "port 2 of YKUSH 'YK31337' is still up after power off");
	bed_power_release(&f);
}

TEST(test_ykush__command_refused)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("11") REPLY("ff11")), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = 1;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "YKUSH 'YK31337' refused command 0x11 (reply 0xff)");
	bed_power_release(&f);
}

TEST(test_ykush__short_reply)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("11")
			   "intr 81 64 reply=01 actual=1\n"), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = 1;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "YKUSH 'YK31337' sent a short reply to command 0x11 (1 bytes)");
	bed_power_release(&f);
}

TEST(test_ykush__short_write)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV "intr 01 64 data=1111 pad=64 actual=8\n"), ==,
		  0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = 1;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "YKUSH 'YK31337': sending the report of command 0x11 failed: "
		  "Input/output error");
	bed_power_release(&f);
}

/*
 * The reply never comes: its read fails after the driver's 1 s per report, well
 * inside the 3 s timeout, and before the core's own timer (4 s, another message).
 */
TEST(test_ykush__reply_timeout)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_pcap(&f.bed, "usb1/1-2", DEV SEND("11") "intr 81 64 noreply\n"), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false,
				"serial = \"YK31337\"; port = 1; timeout = 3;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ETIMEDOUT);
	CHECK_STR(f.msg, "YKUSH 'YK31337': reading the reply of command 0x11 failed: "
		  "Connection timed out");
	bed_power_release(&f);
}

TEST(test_ykush__wrong_serial)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK00000\"; port = 1;"), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ENODEV);
	CHECK_STR(f.msg, "YKUSH 'YK00000' not found");
	bed_power_release(&f);
}

TEST(test_ykush__not_a_ykush)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	/* The root hub's serial: a device, but no Microchip one. */
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"0000:00:14.0\"; port = 1;"), ==,
		  0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ENODEV);
	bed_power_release(&f);
}

TEST(test_ykush__permission_denied)
{
	struct bed_power f;
	char node[256];

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	bed_node(&f.bed, 1, 3, node, sizeof(node));
	CHECK_INT(chmod(node, 0), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK31337\"; port = 1;"), ==, 0);
	CHECK_INT(bed_drop_dac(), ==, 0);
	CHECK_INT(bed_power_run(&f, POWER_ON), ==, 0);
	bed_restore_dac();
	CHECK_INT(f.err, ==, -EACCES);
	CHECK_STR(f.msg, "cannot open YKUSH 'YK31337': Permission denied");
	bed_power_release(&f);
}

TEST(test_ykush__unplugged_and_back)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", true, "serial = \"YK31337\"; port = 1;"), ==, 0);
	CHECK_INT(bed_power_wait_presence(&f, 1), ==, 0);
	CHECK_INT(f.presence[0], ==, 1);
	bed_remove(&f.bed, "usb1/1-2");
	CHECK_INT(bed_power_wait_presence(&f, 2), ==, 0);
	CHECK_INT(f.presence[1], ==, 0);
	CHECK_INT(bed_plug(&f.bed, "ykush", "usb1/1-2"), ==, 0);
	CHECK_INT(bed_power_wait_presence(&f, 3), ==, 0);
	CHECK_INT(f.presence[2], ==, 1);
	bed_power_release(&f);
}

TEST(test_ykush__config_errors)
{
	struct bed_power f;

	CHECK_INT(bed_power_init(&f, "ykush"), ==, 0);
	CHECK_INT(bed_power_new(&f, "ykush", false, "port = \"some\";"), ==, -EINVAL);
	CHECK_INT(f.diag.n, ==, 2);
	CHECK_CONTAINS(f.diag.msgs[0], "missing key 'serial'");
	CHECK_CONTAINS(f.diag.msgs[1], "'port' must be 1 to 3 or \"all\", not 'some'");
	CHECK_INT(bed_power_new(&f, "ykush", false, "serial = \"YK1\"; port = 4;"), ==, -EINVAL);
	CHECK_CONTAINS(f.diag.msgs[0], "'port'");
	bed_power_release(&f);
}

TEST_LIST(test_ykush__port_on, test_ykush__port_off, test_ykush__all_ports_cycle,
	  test_ykush__state_not_switched, test_ykush__command_refused, test_ykush__short_reply,
	  test_ykush__short_write, test_ykush__reply_timeout, test_ykush__wrong_serial,
	  test_ykush__not_a_ykush, test_ykush__permission_denied, test_ykush__unplugged_and_back,
	  test_ykush__config_errors);
#endif
