// SPDX-License-Identifier: GPL-2.0-or-later
/* test-gpio.c -- the gpio power driver over a recording libgpiod v1 stand-in (tests/fakes/) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <libconfig.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/loop.h"
#include "drivers/power.h"
#include "tap.h"

#ifndef LABD_GPIOD_V2
#include "../fakes/gpiod_fake.h"

#define WAIT_MAX (5 * USEC_PER_SEC)
#define MAX_BOARDS 2

struct fixture {
	struct loop *loop;
	config_t cf[MAX_BOARDS];
	struct power *p[MAX_BOARDS];
	struct diag diag;
	int calls, err;
	char msg[512];
};

static void on_done(struct power *p, int err, const char *msg, void *userdata)
{
	struct fixture *f = userdata;

	f->calls++;
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
}

static int fixture_init(struct fixture *f)
{
	int i;

	memset(f, 0, sizeof(*f));
	f->diag = (struct diag)DIAG_INIT;
	for (i = 0; i < MAX_BOARDS; i++)
		config_init(&f->cf[i]);
	gpiod_fake_reset();
	return loop_new(&f->loop);
}

/* Board "board-<i+1>" with power group members @fmt... */
static int fixture_power(struct fixture *f, int i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fixture_power(struct fixture *f, int i, const char *fmt, ...)
{
	static const char *const names[MAX_BOARDS] = { "board-1", "board-2" };
	struct driver_ctx ctx = { .loop = f->loop, .device_name = names[i] };
	struct driver_config cfg = { .driver = "gpio", .file = "test.conf", .line = 1 };
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!config_read_string(&f->cf[i], text))
		return -EINVAL;
	cfg.settings = config_root_setting(&f->cf[i]);
	return power_new(&cfg, &ctx, &f->p[i], &f->diag);
}

static void fixture_release(struct fixture *f)
{
	int i;

	for (i = 0; i < MAX_BOARDS; i++) {
		f->p[i] = power_free(f->p[i]);
		config_destroy(&f->cf[i]);
	}
	f->loop = loop_free(f->loop);
	diag_release(&f->diag);
}

static int run_op(struct fixture *f, int i, enum power_op op)
{
	uint64_t end = now_monotonic() + WAIT_MAX;
	int want = f->calls + 1, r = power_run(f->p[i], op, on_done, f);

	if (r < 0)
		return r;
	while (f->calls < want && now_monotonic() < end)
		loop_run_once(f->loop, 50 * USEC_PER_MSEC);
	return f->calls == want ? 0 : -ETIMEDOUT;
}

TEST(test_gpio__on_off_holds_the_line)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 17;"), ==, 0);
	CHECK_STR(gpiod_fake_log(), "");	/* parsing touches no hardware */
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip0", 17), ==, 1);
	CHECK_INT(run_op(&f, 0, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip0", 17), ==, 0);
	CHECK_STR(gpiod_fake_log(), "open gpiochip0\n"
		  "request gpiochip0 17 consumer=labd:board-1 active_low=0 value=1\n"
		  "set gpiochip0 17 0\n");
	f.p[0] = power_free(f.p[0]);
	CHECK_CONTAINS(gpiod_fake_log(),
		       "set gpiochip0 17 0\nrelease gpiochip0 17\nclose gpiochip0\n");
	CHECK_INT(gpiod_fake_open_chips(), ==, 0);
	fixture_release(&f);
}

TEST(test_gpio__active_low)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 3; active_low = true;"), ==,
		  0);
	CHECK_INT(run_op(&f, 0, POWER_OFF), ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip0", 3), ==, 1);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip0", 3), ==, 0);
	CHECK_CONTAINS(gpiod_fake_log(),
		       "request gpiochip0 3 consumer=labd:board-1 active_low=1 value=0\n");
	fixture_release(&f);
}

TEST(test_gpio__line_by_name_chip_by_label)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"relay-board\"; line = \"R6\";"), ==, 0);
	CHECK_INT(fixture_power(&f, 1, "chip = \"pinctrl-fake\"; line = \"RELAY1\";"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(run_op(&f, 1, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip1", 6), ==, 1);
	CHECK_INT(gpiod_fake_level("gpiochip0", 5), ==, 1);
	CHECK_STR(gpiod_fake_log(), "open relay-board\nfind gpiochip1 R6\n"
		  "request gpiochip1 6 consumer=labd:board-1 active_low=0 value=1\n"
		  "open pinctrl-fake\nfind gpiochip0 RELAY1\n"
		  "request gpiochip0 5 consumer=labd:board-2 active_low=0 value=1\n");
	fixture_release(&f);
}

TEST(test_gpio__chip_by_number_and_path)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"1\"; line = 0;"), ==, 0);
	CHECK_INT(fixture_power(&f, 1, "chip = \"/dev/gpiochip1\"; line = 1;"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(run_op(&f, 1, POWER_ON), ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip1", 0), ==, 1);
	CHECK_INT(gpiod_fake_level("gpiochip1", 1), ==, 1);
	fixture_release(&f);
}

TEST(test_gpio__boards_share_a_chip)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip1\"; line = 2;"), ==, 0);
	CHECK_INT(fixture_power(&f, 1, "chip = \"gpiochip1\"; line = 3;"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(run_op(&f, 1, POWER_OFF), ==, 0);
	CHECK_INT(gpiod_fake_open_chips(), ==, 1);
	CHECK_STR(gpiod_fake_log(), "open gpiochip1\n"
		  "request gpiochip1 2 consumer=labd:board-1 active_low=0 value=1\n"
		  "request gpiochip1 3 consumer=labd:board-2 active_low=0 value=0\n");
	/* The chip stays open while the other board holds its line. */
	f.p[0] = power_free(f.p[0]);
	CHECK_INT(gpiod_fake_open_chips(), ==, 1);
	CHECK_INT(gpiod_fake_level("gpiochip1", 3), ==, 0);
	f.p[1] = power_free(f.p[1]);
	CHECK_INT(gpiod_fake_open_chips(), ==, 0);
	fixture_release(&f);
}

TEST(test_gpio__same_line_twice_is_busy)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 5;"), ==, 0);
	CHECK_INT(fixture_power(&f, 1, "chip = \"gpiochip0\"; line = \"RELAY1\";"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(run_op(&f, 1, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EBUSY);
	CHECK_STR(f.msg, "cannot request line 'RELAY1' of GPIO chip 'gpiochip0': "
		  "Device or resource busy");
	CHECK_INT(power_last_state(f.p[1]), ==, -1);
	fixture_release(&f);
}

TEST(test_gpio__chip_missing)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip7\"; line = 1;"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ENOENT);
	CHECK_STR(f.msg, "cannot open GPIO chip 'gpiochip7': No such file or directory");
	fixture_release(&f);
}

TEST(test_gpio__permission_denied)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 1;"), ==, 0);
	gpiod_fake_fail("open", EACCES);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EACCES);
	CHECK_STR(f.msg, "cannot open GPIO chip 'gpiochip0': Permission denied");
	/* The next operation tries again, and works. */
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(gpiod_fake_level("gpiochip0", 1), ==, 1);
	fixture_release(&f);
}

TEST(test_gpio__line_busy_elsewhere)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 9;"), ==, 0);
	gpiod_fake_fail("request", EBUSY);
	CHECK_INT(run_op(&f, 0, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EBUSY);
	CHECK_STR(f.msg, "cannot request line 9 of GPIO chip 'gpiochip0': Device or resource busy");
	CHECK_INT(gpiod_fake_open_chips(), ==, 0);
	fixture_release(&f);
}

TEST(test_gpio__set_fails)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 9;"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	gpiod_fake_fail("set", EIO);
	CHECK_INT(run_op(&f, 0, POWER_OFF), ==, 0);
	CHECK_INT(f.err, ==, -EIO);
	CHECK_STR(f.msg, "cannot set line 9 of GPIO chip 'gpiochip0' inactive: Input/output error");
	fixture_release(&f);
}

TEST(test_gpio__no_such_line_name)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip1\"; line = \"R9\";"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -ENOENT);
	CHECK_STR(f.msg, "GPIO chip 'gpiochip1' has no line named 'R9'");
	fixture_release(&f);
}

TEST(test_gpio__offset_beyond_the_chip)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip1\"; line = 8;"), ==, 0);
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	CHECK_INT(f.err, ==, -EINVAL);
	CHECK_STR(f.msg, "cannot request line 8 of GPIO chip 'gpiochip1': Invalid argument");
	fixture_release(&f);
}

TEST(test_gpio__reset_pulse)
{
	struct fixture f;
	uint64_t start;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 4; reset_pulse = 0.2;"), ==,
		  0);
	power_set_cycle_delay(f.p[0], 5 * USEC_PER_SEC);	/* not used by a pulse */
	CHECK_INT(run_op(&f, 0, POWER_ON), ==, 0);
	start = now_monotonic();
	CHECK_INT(run_op(&f, 0, POWER_CYCLE), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(now_monotonic() - start, >=, 200 * USEC_PER_MSEC);
	CHECK_INT(now_monotonic() - start, <, 2 * USEC_PER_SEC);
	CHECK_STR(gpiod_fake_log(), "open gpiochip0\n"
		  "request gpiochip0 4 consumer=labd:board-1 active_low=0 value=1\n"
		  "set gpiochip0 4 0\nset gpiochip0 4 1\n");
	CHECK_INT(gpiod_fake_level("gpiochip0", 4), ==, 1);
	fixture_release(&f);
}

TEST(test_gpio__cycle_without_pulse)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "chip = \"gpiochip0\"; line = 4;"), ==, 0);
	power_set_cycle_delay(f.p[0], 10 * USEC_PER_MSEC);
	CHECK_INT(run_op(&f, 0, POWER_CYCLE), ==, 0);
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(gpiod_fake_log(), "open gpiochip0\n"
		  "request gpiochip0 4 consumer=labd:board-1 active_low=0 value=0\n"
		  "set gpiochip0 4 1\n");
	fixture_release(&f);
}

TEST(test_gpio__config_errors)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	CHECK_INT(fixture_power(&f, 0, "line = \"\"; reset_pulse = 0; active_low = 1; pin = 2;"),
		  ==, -EINVAL);
	CHECK_INT(f.diag.n, ==, 5);
	CHECK_CONTAINS(f.diag.msgs[0], "unknown key 'pin'");
	CHECK_CONTAINS(f.diag.msgs[1], "missing key 'chip'");
	CHECK_CONTAINS(f.diag.msgs[2], "'line' must not be empty");
	CHECK_CONTAINS(f.diag.msgs[3], "'active_low'");
	CHECK_CONTAINS(f.diag.msgs[4], "'reset_pulse' must be more than 0 and at most 60 seconds");
	CHECK_INT(fixture_power(&f, 1, "chip = \"\"; line = 17;"), ==, -EINVAL);
	CHECK_INT(f.diag.n, ==, 6);
	CHECK_CONTAINS(f.diag.msgs[5], "'chip' must not be empty");
	CHECK_STR(gpiod_fake_log(), "");
	fixture_release(&f);
}

TEST_LIST(test_gpio__on_off_holds_the_line, test_gpio__active_low,
	  test_gpio__line_by_name_chip_by_label, test_gpio__chip_by_number_and_path,
	  test_gpio__boards_share_a_chip, test_gpio__same_line_twice_is_busy,
	  test_gpio__chip_missing, test_gpio__permission_denied, test_gpio__line_busy_elsewhere,
	  test_gpio__set_fails, test_gpio__no_such_line_name, test_gpio__offset_beyond_the_chip,
	  test_gpio__reset_pulse, test_gpio__cycle_without_pulse, test_gpio__config_errors);

#else

TEST(test_gpio__v2)
{
	TEST_SKIP("built against libgpiod v2: the recording stand-in speaks the v1 API");
}

TEST_LIST(test_gpio__v2);
#endif
