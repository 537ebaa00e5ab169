// SPDX-License-Identifier: GPL-2.0-or-later
/* power-tool.c -- run one power operation of a labd power driver from the command line */
/*
 * Usage:
 *	power-tool [-n BOARD] [-d DELAY] [-t TIMEOUT] SETTINGS on|off|cycle
 *	power-tool [-n BOARD] [-d DELAY] [-t TIMEOUT] -f FILE on|off|cycle
 *
 * SETTINGS is a board's `power` group written as libconfig members, exactly
 * as in a board definition, for example:
 *
 *	power-tool 'driver = "pdudaemon"; hostname = "pdu01"; port = 3;' cycle
 *	power-tool 'driver = "command"; on = "pdu-ctl on 3"; off = "pdu-ctl off 3";' on
 *
 * With -f, the settings are read from FILE: its top level, or its `power`
 * group if it has one.  -n names the board ({DEVICE} in commands; default
 * "power-tool"), -d sets the delay between off and on of a cycle that the
 * driver does not do itself, -t the operation timeout (seconds).
 *
 * Lab admins use it to check a power setup before labd relies on it; the
 * scenario tests use it to drive the drivers against real daemons.  It runs
 * the same code as labd: the driver, the power core, the event loop and the
 * HTTP client.
 *
 * Output: "ok", or "error: <reason>" (the reason labd would log).  Exit
 * status: 0 done, 1 the operation failed, 2 bad usage or settings (the
 * problems are printed on stderr as "FILE:LINE: cause").
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "config/config.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "drivers/power.h"

#define TOOL_SOURCE "<command line>"

struct tool {
	const char *file;
	const char *board;
	uint64_t delay, timeout;
	bool has_delay, has_timeout;
	enum power_op op;
	bool finished;
	int err;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: power-tool [-n BOARD] [-d DELAY] [-t TIMEOUT] SETTINGS|-f FILE "
		"on|off|cycle\n");
}

static int parse_seconds(const char *s, uint64_t *ret)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0 || v > 7 * 24 * 3600.0)
		return -EINVAL;
	*ret = (uint64_t)(v * USEC_PER_SEC + 0.5);
	return 0;
}

static int parse_op(const char *s, enum power_op *ret)
{
	enum power_op op;

	for (op = POWER_OFF; op <= POWER_CYCLE; op++) {
		if (!strcmp(s, power_op_name(op))) {
			*ret = op;
			return 0;
		}
	}
	return -EINVAL;
}

/* Options and operands; returns the SETTINGS operand (NULL with -f) or exits. */
static const char *parse_args(struct tool *t, int argc, char **argv)
{
	const char *settings = NULL;
	int c, want;

	while ((c = getopt(argc, argv, "hn:d:t:f:")) != -1) {
		switch (c) {
		case 'n':
			t->board = optarg;
			break;
		case 'd':
			t->has_delay = !parse_seconds(optarg, &t->delay);
			if (!t->has_delay)
				goto bad;
			break;
		case 't':
			t->has_timeout = !parse_seconds(optarg, &t->timeout);
			if (!t->has_timeout || !t->timeout)
				goto bad;
			break;
		case 'f':
			t->file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	want = t->file ? 1 : 2;
	if (argc - optind != want || parse_op(argv[argc - 1], &t->op) < 0)
		goto bad;
	if (!t->file)
		settings = argv[optind];
	return settings;
bad:
	usage(stderr);
	exit(2);
}

/* Read the settings into @cf; returns the power group or NULL (reported). */
static const config_setting_t *load_settings(config_t *cf, const struct tool *t,
					     const char *text)
{
	const config_setting_t *root, *power;
	int ok;

	config_init(cf);
	ok = t->file ? config_read_file(cf, t->file) : config_read_string(cf, text);
	if (!ok) {
		fprintf(stderr, "%s:%d: %s\n", t->file ? t->file : TOOL_SOURCE,
			config_error_line(cf), config_error_text(cf));
		return NULL;
	}
	root = config_root_setting(cf);
	power = config_setting_get_member(root, "power");
	if (power && config_setting_is_group(power))
		return power;
	return root;
}

static void on_done(struct power *p, int err, const char *msg, void *userdata)
{
	struct tool *t = userdata;

	t->finished = true;
	t->err = err;
	if (err)
		printf("error: %s\n", msg);
	else
		printf("ok\n");
}

/* Settings from the command line have no file name: libconfig reports none. */
static int print_diag(const struct diag *diag, int r)
{
	static const char unknown[] = "<unknown>:";
	size_t i;

	for (i = 0; i < diag->n; i++) {
		const char *m = diag->msgs[i];

		if (!strncmp(m, unknown, strlen(unknown)))
			fprintf(stderr, "%s:%s\n", TOOL_SOURCE, m + strlen(unknown));
		else
			fprintf(stderr, "%s\n", m);
	}
	if (!diag->n)
		fprintf(stderr, "%s\n", strerror(-r));
	return 2;
}

/* Build the power object and run the operation to its end. */
static int run(struct tool *t, const config_setting_t *group)
{
	struct driver_config dc = { .file = (char *)(t->file ? t->file : TOOL_SOURCE) };
	struct driver_ctx ctx = { .device_name = t->board };
	struct diag diag = DIAG_INIT;
	struct http_client *http = NULL;
	struct power *p = NULL;
	struct loop *l = NULL;
	const char *driver = NULL;
	int r, status = 2;

	cfg_get_string(group, "driver", true, &driver, &diag);
	dc.driver = (char *)driver;
	dc.settings = group;
	dc.line = cfg_line(group);
	r = loop_new(&l);
	if (!r)
		r = http_client_new(l, &http);
	if (r < 0) {
		fprintf(stderr, "cannot set up the event loop: %s\n", strerror(-r));
		goto out;
	}
	ctx.loop = l;
	ctx.http = http;
	r = diag_has_errors(&diag) ? -EINVAL : power_new(&dc, &ctx, &p, &diag);
	if (r < 0) {
		status = print_diag(&diag, r);
		goto out;
	}
	if (t->has_delay)
		power_set_cycle_delay(p, t->delay);
	if (t->has_timeout)
		power_set_timeout(p, t->timeout);
	r = power_run(p, t->op, on_done, t);
	if (r < 0) {
		printf("error: cannot start power %s: %s\n", power_op_name(t->op), strerror(-r));
		status = 1;
		goto out;
	}
	while (!t->finished && loop_run_once(l, USEC_INFINITY) >= 0)
		;
	status = t->finished && !t->err ? 0 : 1;
out:
	power_free(p);
	http_client_free(http);
	loop_free(l);
	diag_release(&diag);
	return status;
}

int main(int argc, char **argv)
{
	struct tool t = { .board = "power-tool" };
	const config_setting_t *group;
	const char *settings;
	config_t cf;
	int status;

	settings = parse_args(&t, argc, argv);
	group = load_settings(&cf, &t, settings);
	status = group ? run(&t, group) : 2;
	config_destroy(&cf);
	return status;
}
