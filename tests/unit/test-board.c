// SPDX-License-Identifier: GPL-2.0-or-later
/* test-board.c -- a board turns bad while a part of its hardware is missing, and comes back */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "board/board.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/loop.h"
#include "tap.h"

struct fixture {
	char dir[64];
	struct loop *loop;
	struct lab_config *cfg;
	struct board *b;
	int changes;
};

static void on_changed(struct board *b, void *userdata)
{
	struct fixture *f = userdata;

	f->changes++;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	if (!fp)
		return -errno;
	fputs(text, fp);
	return fclose(fp) ? -errno : 0;
}

/* A lab with one board, "b1", whose console is a pty that is never opened. */
static int fixture_init(struct fixture *f)
{
	struct board_deps deps = { 0 };
	struct diag diag = DIAG_INIT;
	char path[128], devs[96];
	int r;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-board.XXXXXX");
	if (!mkdtemp(f->dir) || loop_new(&f->loop) < 0)
		return -EIO;
	snprintf(devs, sizeof(devs), "%s/devices", f->dir);
	snprintf(path, sizeof(path), "%s/labd.conf", f->dir);
	if (mkdir(devs, 0755) < 0 ||
	    write_file(f->dir, "labd.conf", "state_dir = \"state\";\n") < 0 ||
	    write_file(devs, "b.conf", "device_type = { name = \"t\"; };\n"
		       "device = { name = \"b1\"; type = \"t\";\n"
		       "  console = { driver = \"pty\"; path = \"/nonexistent/pty\"; }; };\n") < 0)
		return -EIO;
	r = config_load(path, &f->cfg, &diag);
	diag_release(&diag);
	if (r < 0)
		return r;
	deps.loop = f->loop;
	deps.changed = on_changed;
	deps.userdata = f;
	return board_new(&deps, f->cfg, config_find_device(f->cfg, "b1"), &f->b);
}

static void fixture_release(struct fixture *f)
{
	char cmd[128];

	f->b = board_unref(f->b);
	f->cfg = config_unref(f->cfg);
	f->loop = loop_free(f->loop);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		printf("# cannot remove '%s'\n", f->dir);
}

TEST(test_board__missing_part_makes_it_bad_until_it_returns)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	/* Not started: bad because of the console, whatever the parts. */
	CHECK_STR(board_state_reason(f.b), "console not opened yet");
	board_set_part_missing(f.b, "power", "YKUSH 'YK31337'");
	CHECK_INT(board_state(f.b), ==, DEVICE_STATE_BAD);
	CHECK_STR(board_state_reason(f.b), "YKUSH 'YK31337' (power) is missing");
	CHECK_INT(f.changes, ==, 1);
	/* The same report again changes nothing. */
	board_set_part_missing(f.b, "power", "YKUSH 'YK31337'");
	CHECK_INT(f.changes, ==, 1);
	board_set_part_missing(f.b, "sdmux", "USB-SD-Mux '0001'");
	board_set_part_missing(f.b, "power", NULL);
	CHECK_STR(board_state_reason(f.b), "USB-SD-Mux '0001' (sdmux) is missing");
	board_set_part_missing(f.b, "sdmux", NULL);
	CHECK_STR(board_state_reason(f.b), "console not opened yet");
	CHECK_INT(f.changes, ==, 4);
	/* Present parts that were never missing: nothing to do. */
	board_set_part_missing(f.b, "power", NULL);
	CHECK_INT(f.changes, ==, 4);
	fixture_release(&f);
}

TEST(test_board__power_fault_comes_first)
{
	struct fixture f;

	CHECK_INT(fixture_init(&f), ==, 0);
	board_set_part_missing(f.b, "power", "USB device at '1-1'");
	board_set_power_fault(f.b, "power off failed");
	CHECK_STR(board_state_reason(f.b), "power off failed");
	fixture_release(&f);
}

TEST_LIST(test_board__missing_part_makes_it_bad_until_it_returns,
	  test_board__power_fault_comes_first);
