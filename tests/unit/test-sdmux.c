// SPDX-License-Identifier: GPL-2.0-or-later
/* test-sdmux.c -- the SD-mux core, the fake driver, and usbsdmux over an emulated mux (sg_fake) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "../fakes/sg_fake.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/sdmux.h"
#include "tap.h"

#define WAIT_MAX (10 * USEC_PER_SEC)

struct fixture {
	struct loop *loop;
	config_t cf;
	struct sdmux *m;
	struct diag diag;
	int calls, err;
	char msg[512];
	char dir[64];
};

static void on_done(struct sdmux *m, int err, const char *msg, void *userdata)
{
	struct fixture *f = userdata;

	f->calls++;
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
}

static int fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->diag = (struct diag)DIAG_INIT;
	config_init(&f->cf);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-sdmux.XXXXXX");
	if (!mkdtemp(f->dir) || loop_new(&f->loop) < 0)
		return -EIO;
	return 0;
}

/* f->m from the sdmux group members @fmt... */
static int fixture_mux(struct fixture *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fixture_mux(struct fixture *f, const char *fmt, ...)
{
	struct driver_config cfg = { .file = "test.conf", .line = 1 };
	struct driver_ctx ctx = { .loop = f->loop, .device_name = "board-1" };
	const char *driver;
	char text[1024];
	va_list ap;

	f->m = sdmux_free(f->m);
	config_destroy(&f->cf);
	config_init(&f->cf);
	diag_release(&f->diag);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!config_read_string(&f->cf, text) ||
	    config_lookup_string(&f->cf, "driver", &driver) != CONFIG_TRUE)
		return -EINVAL;
	cfg.driver = (char *)driver;
	cfg.settings = config_root_setting(&f->cf);
	return sdmux_new(&cfg, &ctx, &f->m, &f->diag);
}

static void fixture_release(struct fixture *f)
{
	char cmd[128];

	f->m = sdmux_free(f->m);
	f->loop = loop_free(f->loop);
	config_destroy(&f->cf);
	diag_release(&f->diag);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		printf("# cannot remove '%s'\n", f->dir);
}

static int run_switch(struct fixture *f, enum sdmux_mode mode)
{
	uint64_t end = now_monotonic() + WAIT_MAX;
	int want = f->calls + 1, r = sdmux_switch(f->m, mode, on_done, f);

	if (r < 0)
		return r;
	while (f->calls < want && now_monotonic() < end)
		loop_run_once(f->loop, 100 * USEC_PER_MSEC);
	return f->calls == want ? 0 : -ETIMEDOUT;
}

/* The classic mux's I2C traffic for one switch (PCA9536 at 0x41). */
#define CLASSIC_DISCONNECT(out_before, cfg_before) \
	"r 41 01 -> " out_before "\nw 41 01 fb\nr 41 03 -> " cfg_before "\nw 41 03 f0\n"

TEST(test_sdmux__classic_host_then_dut)
{
	struct fixture f;

	sg_fake_reset("classic");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/sg7\"; "
			      "model = \"classic\"; disk = \"/dev/sdz\";"), ==, 0);
	CHECK_STR(sdmux_disk(f.m), "/dev/sdz");
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_STR(f.msg, "");
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(sg_fake_log(), CLASSIC_DISCONNECT("ff", "ff") "w 41 01 f0\nr 41 00 -> 00\n");
	CHECK_INT(run_switch(&f, SDMUX_DUT), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_CONTAINS(sg_fake_log(), CLASSIC_DISCONNECT("f0", "f0")
		       "w 41 01 ff\nw 41 01 fc\nr 41 00 -> 0c\n");
	CHECK_INT(sg_fake_reg(1), ==, 0xfc);
	fixture_release(&f);
}

TEST(test_sdmux__fast_keeps_its_gpios)
{
	struct fixture f;

	sg_fake_reset("fast");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/sg7\"; "
			      "model = \"fast\"; disk = \"/dev/sdz\";"), ==, 0);
	CHECK_INT(run_switch(&f, SDMUX_DUT), ==, 0);
	CHECK_STR(f.msg, "");
	/* TCA6408 at 0x20: pins 4 and 5 (user GPIOs) keep the level they had. */
	CHECK_STR(sg_fake_log(), "r 20 01 -> ff\nw 20 01 fe\nr 20 03 -> ff\nw 20 03 c0\n"
		  "w 20 01 ff\nw 20 01 f9\nr 20 00 -> 39\n");
	CHECK_INT(run_switch(&f, SDMUX_OFF), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(sg_fake_reg(1), ==, 0xfe);
	fixture_release(&f);
}

TEST(test_sdmux__readback_mismatch)
{
	struct fixture f;

	sg_fake_reset("classic");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/sg7\"; "
			      "model = \"classic\"; disk = \"/dev/sdz\";"), ==, 0);
	sg_fake_fail("stuck", 0x02);	/* power-disable reads high */
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "USB-SD-Mux '/dev/sg7' reads off after switching to host (inputs 0x02)");
	fixture_release(&f);
}

TEST(test_sdmux__i2c_failure)
{
	struct fixture f;

	sg_fake_reset("classic");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/sg7\"; "
			      "model = \"fast\"; disk = \"/dev/sdz\";"), ==, 0);
	/* A fast mux configured, a classic one there: no expander answers at 0x20. */
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "USB-SD-Mux '/dev/sg7': I2C command failed (SCSI status 0x02, "
		  "host 0x0, driver 0x0)");
	fixture_release(&f);
}

TEST(test_sdmux__control_missing)
{
	struct fixture f;

	sg_fake_reset("classic");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; serial = \"00042\"; "
			      "model = \"classic\"; disk = \"/dev/sdz\";"), ==, 0);
	sg_fake_fail("open", ENOENT);
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, -ENOENT);
	CHECK_STR(f.msg, "cannot open USB-SD-Mux control '/dev/usb-sd-mux/id-00042': "
		  "No such file or directory");
	fixture_release(&f);
}

TEST(test_sdmux__permission_denied)
{
	struct fixture f;

	sg_fake_reset("classic");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/sg7\"; "
			      "model = \"classic\"; disk = \"/dev/sdz\";"), ==, 0);
	sg_fake_fail("open", EACCES);
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, -EACCES);
	CHECK_STR(f.msg, "cannot open USB-SD-Mux control '/dev/sg7': Permission denied");
	fixture_release(&f);
}

TEST(test_sdmux__model_from_sysfs_unknown)
{
	struct fixture f;

	sg_fake_reset("classic");
	/* No model key: detected from sysfs, which /dev/null is not in. */
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/null\"; "
			      "disk = \"/dev/sdz\";"), ==, 0);
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, -ENODEV);
	CHECK_STR(f.msg, "'/dev/null' is not a USB-SD-Mux (SCSI model ''): set 'model'");
	fixture_release(&f);
}

TEST(test_sdmux__command_timeout)
{
	struct fixture f;
	uint64_t start;

	sg_fake_reset("classic");
	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; control = \"/dev/sg7\"; "
			      "model = \"classic\"; disk = \"/dev/sdz\"; timeout = 0.3;"), ==, 0);
	sg_fake_fail("silent", 0);
	start = now_monotonic();
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, -ETIMEDOUT);
	CHECK_STR(f.msg, "switching the SD card to host timed out after 0.3 s");
	CHECK_INT(now_monotonic() - start, <, 2 * USEC_PER_SEC);
	/* The mux is usable again afterwards. */
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, 0);
	fixture_release(&f);
}

TEST(test_sdmux__fake_driver)
{
	struct fixture f;
	char log[128], buf[256];
	FILE *fp;
	size_t n;

	CHECK_INT(fixture_init(&f), ==, 0);
	snprintf(log, sizeof(log), "%s/sdmux.log", f.dir);
	CHECK_INT(fixture_mux(&f, "driver = \"fake\"; disk = \"/tmp/card\"; log = \"%s\"; "
			      "fail = \"dut\";", log), ==, 0);
	CHECK_INT(run_switch(&f, SDMUX_HOST), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(run_switch(&f, SDMUX_DUT), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "fake sdmux: switching to dut failed as configured");
	fp = fopen(log, "r");
	CHECK(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	CHECK_CONTAINS(buf, " board-1 host\n");
	CHECK_CONTAINS(buf, " board-1 dut failed\n");
	fixture_release(&f);
}

TEST(test_sdmux__config_errors)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; disk = \"sdz\"; model = \"big\"; "
			      "speed = 1;"), ==, -EINVAL);
	CHECK_INT(f.diag.n, ==, 3);
	CHECK_CONTAINS(f.diag.msgs[0], "'disk' must be an absolute path");
	CHECK_CONTAINS(f.diag.msgs[1], "unknown key 'speed'");
	CHECK_CONTAINS(f.diag.msgs[2], "unknown USB-SD-Mux model 'big' (known: classic, fast)");
	CHECK_INT(fixture_mux(&f, "driver = \"usbsdmux\"; disk = \"/dev/sdz\";"), ==, -EINVAL);
	CHECK_CONTAINS(f.diag.msgs[0], "name the USB-SD-Mux by 'serial'");
	CHECK_INT(fixture_mux(&f, "driver = \"nope\"; disk = \"/dev/sdz\";"), ==, -EINVAL);
	CHECK_CONTAINS(f.diag.msgs[0], "unknown sdmux driver 'nope'");
	fixture_release(&f);
}

TEST_LIST(test_sdmux__classic_host_then_dut, test_sdmux__fast_keeps_its_gpios,
	  test_sdmux__readback_mismatch, test_sdmux__i2c_failure, test_sdmux__control_missing,
	  test_sdmux__permission_denied, test_sdmux__model_from_sysfs_unknown,
	  test_sdmux__command_timeout, test_sdmux__fake_driver, test_sdmux__config_errors);
