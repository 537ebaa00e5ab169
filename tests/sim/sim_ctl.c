// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_ctl.c -- simboard: the control protocol, and the "simboard ctl" client for power scripts */
#include "sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define CTL_TIMEOUT_S	30

/* power/mode/firmware/baud on one board; returns NULL or the reason it failed. */
static const char *board_set(struct board *b, const char *cmd, const char *arg)
{
	char *end;
	long v;
	int m;

	if (!strcmp(cmd, "power")) {
		if (!strcmp(arg, "on")) {
			sim_power_on(b);
		} else if (!strcmp(arg, "off")) {
			sim_power_off(b);
		} else if (!strcmp(arg, "reset") || !strcmp(arg, "cycle")) {
			sim_power_off(b);
			sim_power_on(b);
		} else {
			return "usage: power NAME on|off|reset";
		}
		/* when it was powered on, for bench-multihost's latency (its clock's) */
		if (strcmp(arg, "off"))
			sim_journal(b, "power-on %" PRIu64, sim_realtime_us());
	} else if (!strcmp(cmd, "mode")) {
		m = sim_mode_parse(arg);
		if (m < 0)
			return "unknown mode";
		b->mode = m;
	} else if (!strcmp(cmd, "firmware")) {
		m = sim_firmware_parse(arg);
		if (m < 0)
			return "unknown firmware (u-boot, barebox, depthcharge)";
		b->firmware = m;
	} else {
		v = strtol(arg, &end, 10);
		if (*end || end == arg || v < 0 || v > 10000000)
			return "usage: baud NAME RATE";
		b->baud = (unsigned int)v;
		b->tx_done_at = 0;
	}
	return NULL;
}

/* plug, unplug, status: one board; returns NULL or the reason it failed. */
static const char *board_do(struct board *b, const char *cmd, char *reply, size_t size)
{
	if (!strcmp(cmd, "unplug")) {
		if (b->master < 0)
			return "not plugged";
		sim_board_unplug(b);
	} else if (!strcmp(cmd, "plug")) {
		if (b->master >= 0)
			return "already plugged";
		if (sim_board_plug(b))
			return "cannot create a pty";
	} else {
		snprintf(reply, size, "ok power=%s mode=%s plugged=%s stage=%s boots=%u firmware=%s\n",
			 b->powered ? "on" : "off", sim_mode_name(b->mode),
			 b->master >= 0 ? "yes" : "no", sim_stage_name(b->stage), b->boots,
			 sim_firmware_name(b->firmware));
		return NULL;
	}
	snprintf(reply, size, "ok\n");
	return NULL;
}

/* sent NAME|all: bytes written to the consoles, for the benchmarks' byte count. */
static void sent_command(const char *name, char *reply, size_t size)
{
	unsigned long long sent = 0;
	struct board *b;
	int i;

	if (strcmp(name, "all")) {
		b = sim_board_find(name);
		if (!b) {
			snprintf(reply, size, "err unknown board '%s'\n", name);
			return;
		}
		snprintf(reply, size, "ok %llu\n", (unsigned long long)b->sent);
		return;
	}
	for (i = 0; (b = sim_board_at(i)); i++)
		sent += b->sent;
	snprintf(reply, size, "ok %llu\n", sent);
}

/* One command line in, one reply line out (empty for an empty line). */
void sim_ctl_command(char *line, char *reply, size_t size)
{
	char *argv[8], *save = NULL, *tok;
	const char *err = NULL;
	struct board *b;
	int argc = 0, i;

	reply[0] = '\0';
	for (tok = strtok_r(line, " \t\r", &save); tok && argc < 8;
	     tok = strtok_r(NULL, " \t\r", &save))
		argv[argc++] = tok;
	if (!argc)
		return;
	if (!strcmp(argv[0], "quit")) {
		sim_quit();
		snprintf(reply, size, "ok\n");
		return;
	}
	if (!strcmp(argv[0], "power") || !strcmp(argv[0], "mode") || !strcmp(argv[0], "baud") ||
	    !strcmp(argv[0], "firmware")) {
		if (argc != 3) {
			snprintf(reply, size, "err usage: %s NAME %s\n", argv[0],
				 argv[0][0] == 'p' ? "on|off|reset" :
				 argv[0][0] == 'm' ? "MODE" : argv[0][0] == 'f' ? "FW" : "RATE");
			return;
		}
		if (!strcmp(argv[1], "all")) {
			for (i = 0; (b = sim_board_at(i)) && !err; i++)
				err = board_set(b, argv[0], argv[2]);
		} else if ((b = sim_board_find(argv[1]))) {
			err = board_set(b, argv[0], argv[2]);
		} else {
			snprintf(reply, size, "err unknown board '%s'\n", argv[1]);
			return;
		}
		if (err)
			snprintf(reply, size, "err %s\n", err);
		else
			snprintf(reply, size, "ok\n");
		return;
	}
	if (!strcmp(argv[0], "sent") && argc == 2) {
		sent_command(argv[1], reply, size);
		return;
	}
	if (strcmp(argv[0], "plug") && strcmp(argv[0], "unplug") && strcmp(argv[0], "status")) {
		snprintf(reply, size, "err unknown command '%s'\n", argv[0]);
		return;
	}
	if (argc != 2) {
		snprintf(reply, size, "err usage: %s NAME\n", argv[0]);
		return;
	}
	b = sim_board_find(argv[1]);
	if (!b) {
		snprintf(reply, size, "err unknown board '%s'\n", argv[1]);
		return;
	}
	err = board_do(b, argv[0], reply, size);
	if (err)
		snprintf(reply, size, "err %s %s\n", argv[1], err);
}

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= w;
	}
	return 0;
}

/* simboard ctl DIR WORD...: exit 0 on "ok", 1 on "err", 2 when nobody answers. */
int sim_ctl_client(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };
	char line[1024], reply[4096];
	size_t n = 0, len = 0;
	ssize_t r;
	int fd, i;

	if (argc < 2) {
		fprintf(stderr, "usage: simboard ctl DIR COMMAND...\n");
		return 2;
	}
	for (i = 1; i < argc && n < sizeof(line); i++)
		n += snprintf(line + n, sizeof(line) - n, "%s%s", i > 1 ? " " : "", argv[i]);
	if (n + 2 > sizeof(line) ||
	    (size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", argv[0]) >=
		    sizeof(sa.sun_path)) {
		fprintf(stderr, "simboard: command or path too long\n");
		return 2;
	}
	line[n++] = '\n';
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "simboard: cannot connect to %s: %s\n", sa.sun_path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write_all(fd, line, n) == 0)
		shutdown(fd, SHUT_WR);
	while (len + 1 < sizeof(reply)) {
		r = read(fd, reply + len, sizeof(reply) - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += r;
	}
	reply[len] = '\0';
	close(fd);
	if (!len) {
		fprintf(stderr, "simboard: no reply from %s\n", sa.sun_path);
		return 2;
	}
	fputs(reply, stdout);
	return !strncmp(reply, "ok", 2) ? 0 : !strncmp(reply, "err", 3) ? 1 : 2;
}
