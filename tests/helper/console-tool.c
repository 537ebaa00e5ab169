// SPDX-License-Identifier: GPL-2.0-or-later
/* console-tool.c -- open a labd console from the command line, print it, send to it */
/*
 * Usage:
 *	console-tool [-t SECONDS] [-e PATTERN] [-u UPS] [-s TEXT]... [-d USEC] [-o FILE]
 *		     [-b] [-v] SETTINGS
 *
 * SETTINGS is a board's `console` group written as libconfig members, as in a
 * board definition:
 *
 *	console-tool 'driver = "telnet"; host = "127.0.0.1"; port = 2001;'
 *	console-tool 'driver = "pty"; path = "/run/sim/ttyA";' -s 'help\n' -e '=> '
 *
 * The console is opened through the same core and driver as in labd, and kept
 * open (reopened after losing it) until the tool exits.  Everything received
 * goes to stdout, or to FILE with -o, byte for byte.  State changes go to
 * stderr as "console-tool: up" and "console-tool: down: <reason>".
 *
 *	-s TEXT   send TEXT once the console is up the first time (repeatable;
 *	          escapes \n \r \t \\ \xHH)
 *	-d USEC   per-character delay for -s
 *	-b        send a break after the -s texts
 *	-e PAT    exit 0 once the received bytes contain PAT (same escapes)
 *	-u UPS    exit 0 once the console came up UPS times
 *	-t SEC    give up after SEC seconds (default 10): exit 1 if -e or -u was
 *	          given, else 0
 *	-v        debug messages of the drivers on stderr
 *
 * Exit status: 0 done, 1 timed out, 2 bad usage or settings.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/console.h"

#define TOOL_SOURCE "<command line>"
#define TOOL_DEFAULT_TIMEOUT 10

struct tool {
	struct loop *loop;
	int out_fd;
	char **sends;			/* strv of raw -s texts */
	uint64_t char_delay;
	bool send_break;
	bool sent;
	struct strbuf pattern;
	struct strbuf window;		/* received bytes not yet ruled out for -e */
	int want_ups;
	int ups;
};

/* Undo \n \r \t \\ \xHH escapes of @s into @out. */
static int tool_unescape(const char *s, struct strbuf *out)
{
	for (; *s; s++) {
		char c = *s;

		if (c == '\\' && s[1]) {
			s++;
			switch (*s) {
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'x': {
				char hex[3] = { s[1], s[1] ? s[2] : 0, 0 }, *end;

				c = (char)strtoul(hex, &end, 16);
				if (end != hex + 2)
					return -EINVAL;
				s += 2;
				break;
			}
			default: c = *s; break;
			}
		}
		if (strbuf_addch(out, c) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void tool_write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void tool_data(struct console *c, const uint8_t *buf, size_t len, void *userdata)
{
	struct tool *t = userdata;
	struct strbuf *w = &t->window;

	tool_write_all(t->out_fd, buf, len);
	if (!t->pattern.len)
		return;
	strbuf_add(w, buf, len);
	if (memmem(w->buf, w->len, t->pattern.buf, t->pattern.len)) {
		loop_exit(t->loop, 0);
		return;
	}
	if (w->len >= t->pattern.len)
		strbuf_consume(w, w->len - (t->pattern.len - 1));
}

static void tool_send(struct tool *t, struct console *c)
{
	struct strbuf sb = STRBUF_INIT;
	char **s;

	for (s = t->sends; s && *s; s++) {
		strbuf_reset(&sb);
		tool_unescape(*s, &sb);
		if (console_write(c, sb.buf, sb.len, t->char_delay) < 0)
			fprintf(stderr, "console-tool: cannot send '%s'\n", *s);
	}
	if (t->send_break && console_send_break(c) < 0)
		fprintf(stderr, "console-tool: cannot send a break\n");
	strbuf_release(&sb);
	t->sent = true;
}

static void tool_state(struct console *c, bool up, const char *reason, void *userdata)
{
	struct tool *t = userdata;

	if (!up) {
		fprintf(stderr, "console-tool: down: %s\n", reason);
		return;
	}
	fprintf(stderr, "console-tool: up\n");
	if (!t->sent)
		tool_send(t, c);
	if (t->want_ups && ++t->ups >= t->want_ups)
		loop_exit(t->loop, 0);
}

static const struct console_ops tool_ops = { .data = tool_data, .state = tool_state };

static int tool_timeout(struct loop_source *s, uint64_t now, void *userdata)
{
	struct tool *t = userdata;

	loop_exit(t->loop, t->pattern.len || t->want_ups ? 1 : 0);
	return 0;
}

/* Parse SETTINGS into a console; problems go to stderr. */
static int tool_console(struct tool *t, const char *text, struct console **ret)
{
	struct driver_ctx ctx = { .loop = t->loop, .device_name = "console-tool" };
	struct driver_config dc = { .file = TOOL_SOURCE, .line = 1 };
	struct diag diag = DIAG_INIT;
	const char *driver = NULL;
	config_t conf;
	int r = -EINVAL;
	size_t i;

	config_init(&conf);
	if (config_read_string(&conf, text) != CONFIG_TRUE) {
		fprintf(stderr, "%s:%d: %s\n", TOOL_SOURCE, config_error_line(&conf),
			config_error_text(&conf));
		goto destroy;
	}
	config_lookup_string(&conf, "driver", &driver);
	if (!driver) {
		fprintf(stderr, "%s: missing key 'driver'\n", TOOL_SOURCE);
		goto destroy;
	}
	dc.driver = (char *)driver;
	dc.settings = config_root_setting(&conf);
	r = console_new(&dc, &ctx, ret, &diag);
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "%s\n", diag.msgs[i]);
	diag_release(&diag);
destroy:
	config_destroy(&conf);
	return r;
}

static int tool_options(struct tool *t, int argc, char **argv, long *timeout)
{
	int opt;

	while ((opt = getopt(argc, argv, "t:e:u:s:d:o:bv")) != -1) {
		switch (opt) {
		case 't': *timeout = atol(optarg); break;
		case 'e':
			if (tool_unescape(optarg, &t->pattern) < 0)
				return -EINVAL;
			break;
		case 'u': t->want_ups = atoi(optarg); break;
		case 's':
			if (strv_push(&t->sends, optarg) < 0)
				return -ENOMEM;
			break;
		case 'd': t->char_delay = strtoull(optarg, NULL, 10); break;
		case 'o':
			t->out_fd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (t->out_fd < 0) {
				fprintf(stderr, "console-tool: cannot open '%s': %m\n", optarg);
				return -errno;
			}
			break;
		case 'b': t->send_break = true; break;
		case 'v': log_set_level(LOG_LEVEL_DEBUG); break;
		default: return -EINVAL;
		}
	}
	return optind == argc - 1 ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct tool t = { .out_fd = STDOUT_FILENO, .pattern = STRBUF_INIT, .window = STRBUF_INIT };
	long timeout = TOOL_DEFAULT_TIMEOUT;
	struct console *c = NULL;
	int r = 2;

	if (tool_options(&t, argc, argv, &timeout) < 0) {
		fputs("usage: console-tool [-t SECONDS] [-e PATTERN] [-u UPS] [-s TEXT]... [-d USEC] [-o FILE] [-b] [-v] SETTINGS\n",
		      stderr);
		goto out;
	}
	if (loop_new(&t.loop) < 0)
		goto out;
	if (tool_console(&t, argv[optind], &c) < 0)
		goto out;
	if (loop_add_timer(t.loop, NULL, now_monotonic() + (uint64_t)timeout * USEC_PER_SEC,
			   tool_timeout, &t) < 0 || console_start(c, &tool_ops, &t) < 0)
		goto out;
	r = loop_run(t.loop);
out:
	console_free(c);
	loop_free(t.loop);
	strv_free(t.sends);
	strbuf_release(&t.pattern);
	strbuf_release(&t.window);
	return r;
}
