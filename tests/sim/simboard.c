// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * simboard.c -- simulated boards on pseudo-terminals for labd's tests, demo and benchmarks
 *
 * Usage:
 *   simboard --dir DIR [--count N] [--name PREFIX] [--baud B] [--mode MODE] [--powered]
 *            [--user U --password P] [--prompt STR] [--hostname H]
 *            [--firmware u-boot|barebox|depthcharge] [--tftp-root DIR]
 *            [--pdu-port PORT]
 *   simboard ctl DIR COMMAND...
 *
 * The first form plays N boards (default 1) named PREFIX0..PREFIX<N-1>
 * (default "sim0"...).  Each has a pseudo-terminal: DIR/<name>.pty is a
 * symlink to its slave, which is the board's serial console; open it like a
 * serial port.  Output is paced like a UART at B baud (B/10 bytes per second,
 * default 115200; 0 = unpaced).  While nobody has the console open, up to
 * 64 KiB of output is kept and the oldest bytes are dropped.  Boards start
 * powered off (silent, input ignored) unless --powered is given.
 * DIR/simboard.pid holds the pid; SIGTERM or SIGINT end the process and remove
 * the symlinks and the socket.
 *
 * Control socket DIR/ctl.sock (AF_UNIX stream), one command per line, one reply
 * line each ("ok..." or "err <reason>"); NAME may be "all" for power, mode and
 * baud:
 *   power NAME on|off|reset     reset is off then on
 *   mode NAME MODE              misbehaviour from the next power-on; "normal" clears it
 *   firmware NAME FW            u-boot, barebox or depthcharge from the next power-on
 *   unplug NAME                 the serial adapter vanishes: pty closed, symlink removed
 *   plug NAME                   a fresh pty and symlink
 *   status NAME                 "ok power=on|off mode=MODE plugged=yes|no
 *                                stage=off|uboot|kernel|login|shell boots=N"
 *   baud NAME B                 change the pacing
 *   quit                        end the process
 * "simboard ctl DIR power sim0 on" sends one command and prints the reply: exit
 * status 0 for ok, 1 for err, 2 when the socket cannot be reached.
 * --pdu-port PORT also switches them through pdudaemon's HTTP API on
 * 127.0.0.1:PORT, board N its outlet N (sim_pdu.c).
 *
 * A powered-on board runs U-Boot (banner, "Hit any key to stop autoboot"
 * countdown from $bootdelay, "=> " prompt, bootcmd: dhcp, tftp, booti), boots
 * an arm64 Linux with a timestamped log, and offers a login prompt (user
 * --user, default root, password --password, default none) and a shell prompt
 * (default "root@sim:~# ").  See tests/sim/README.md for the commands.
 *
 * Modes: normal, hang-uboot (banner, then nothing), no-autoboot (no countdown,
 * straight through bootcmd), uboot-error (tftp fails, booti finds no image),
 * panic (VFS panic during boot, then silence), oops (an Oops during boot, boot
 * goes on), hang-kernel (the log stops half way), slow (U-Boot and kernel 5x
 * slower), garbage (random bytes between boot lines), login-fail (every login
 * is incorrect), reset-loop (resets half way through the kernel, forever),
 * no-uboot (power-on goes straight to the kernel).
 */
#include "sim.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_BOARDS	4096

struct client {
	int tag;
	int fd;
	struct client *next, *prev;
	size_t len;
	char buf[1024];
};

struct sim_config sim_cfg = {
	.prefix = "sim",
	.user = "root",
	.hostname = "sim",
	.baud = 115200,
	.count = 1,
};

static struct board *boards;
static struct client *clients;
static int epfd = -1, listen_fd = -1, signal_fd = -1;
static int listen_tag = TAG_LISTEN, signal_tag = TAG_SIGNAL;
static bool quitting;

struct board *sim_board_find(const char *name)
{
	int i;

	for (i = 0; i < sim_cfg.count; i++)
		if (!strcmp(boards[i].name, name))
			return &boards[i];
	return NULL;
}

struct board *sim_board_at(int i)
{
	return i >= 0 && i < sim_cfg.count ? &boards[i] : NULL;
}

void sim_quit(void)
{
	quitting = true;
}

static void client_close(struct client *c)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

static void client_reply(struct client *c, char *line)
{
	char reply[512];

	sim_ctl_command(line, reply, sizeof(reply));
	if (reply[0] && send(c->fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
		return;	/* the client is gone; its EOF comes next */
}

/* Control commands, one a line; the last line may lack its newline. */
static void client_input(struct client *c)
{
	char *nl;
	ssize_t n;

	for (;;) {
		n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			c->buf[c->len] = '\0';
			if (c->len)
				client_reply(c, c->buf);
			client_close(c);
			return;
		}
		c->len += n;
		while ((nl = memchr(c->buf, '\n', c->len))) {
			*nl = '\0';
			client_reply(c, c->buf);
			c->len -= nl + 1 - c->buf;
			memmove(c->buf, nl + 1, c->len);
		}
		if (c->len == sizeof(c->buf) - 1) {
			send(c->fd, "err line too long\n", 18, MSG_NOSIGNAL);
			client_close(c);
			return;
		}
	}
}

static void accept_clients(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct client *c;
	int fd;

	while ((fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->tag = TAG_CLIENT;
		c->fd = fd;
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		c->next = clients;
		if (clients)
			clients->prev = c;
		clients = c;
	}
}

static void dispatch(struct epoll_event *ev)
{
	struct signalfd_siginfo si;

	switch (*(int *)ev->data.ptr) {
	case TAG_BOARD:
		sim_board_event(ev->data.ptr, ev->events);
		break;
	case TAG_LISTEN:
		accept_clients();
		break;
	case TAG_CLIENT:
		client_input(ev->data.ptr);
		break;
	case TAG_SIGNAL:
		if (read(signal_fd, &si, sizeof(si)) > 0)
			quitting = true;
		break;
	case TAG_PDU:
		sim_pdu_run();
		break;
	}
}

static void run_timers(void)
{
	uint64_t now = sim_now();
	int i;

	for (i = 0; i < sim_cfg.count; i++) {
		struct board *b = &boards[i];

		if (b->wake_at && b->wake_at <= now) {
			sim_run_wake(b);
			now = sim_now();
		}
		if (b->tx_at && b->tx_at <= now)
			sim_board_tx(b);
	}
	if (sim_pty_next_check() && sim_pty_next_check() <= now)
		sim_pty_check_hups();
}

/* Milliseconds until the next timer, rounded up; -1 when there is none. */
static int next_timeout(void)
{
	uint64_t next = sim_pty_next_check(), now;
	int i, pdu_ms = sim_pdu_timeout_ms(), ms;

	for (i = 0; i < sim_cfg.count; i++) {
		if (boards[i].wake_at && (!next || boards[i].wake_at < next))
			next = boards[i].wake_at;
		if (boards[i].tx_at && (!next || boards[i].tx_at < next))
			next = boards[i].tx_at;
	}
	if (!next)
		return pdu_ms;
	now = sim_now();
	ms = next <= now ? 0 : (int)((next - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
	return pdu_ms >= 0 && pdu_ms < ms ? pdu_ms : ms;
}

static int run(void)
{
	struct epoll_event evs[64];
	int i, n;

	while (!quitting) {
		run_timers();
		n = epoll_wait(epfd, evs, 64, next_timeout());
		if (n < 0 && errno != EINTR)
			return -errno;
		for (i = 0; i < n; i++)
			dispatch(&evs[i]);
		/*
		 * its timeouts, and the requests it has read but not answered
		 * yet (timeout 0): its epoll fd does not wake for those, and
		 * 256 busy consoles leave no idle turn to wait for
		 */
		if (!n || !sim_pdu_timeout_ms())
			sim_pdu_run();
	}
	return 0;
}

static int listen_ctl(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_tag };
	int ret;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", sim_cfg.dir) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return -errno;
	unlink(sa.sun_path);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(listen_fd, 64))
		return -errno;
	ret = epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev);
	return ret ? -errno : 0;
}

/* SIGTERM, SIGINT and SIGHUP end the loop through a signalfd. */
static int watch_signals(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &signal_tag };
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (signal_fd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, signal_fd, &ev))
		return -errno;
	return 0;
}

static int write_pidfile(void)
{
	char path[PATH_MAX];
	FILE *f;

	sim_dir_path(path, sizeof(path), "simboard.pid", "");
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f) ? -errno : 0;
}

/* Room for a pty per board and then some. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < (rlim_t)sim_cfg.count * 2 + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int setup(void)
{
	int i, ret;

	if (mkdir(sim_cfg.dir, 0755) && errno != EEXIST)
		return -errno;
	raise_fd_limit();
	boards = calloc(sim_cfg.count, sizeof(*boards));
	if (!boards)
		return -ENOMEM;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -errno;
	ret = sim_pty_init(epfd, sim_cfg.count);
	if (ret)
		return ret;
	ret = watch_signals();
	if (ret)
		return ret;
	for (i = 0; i < sim_cfg.count; i++) {
		struct board *b = &boards[i];

		b->tag = TAG_BOARD;
		b->idx = i;
		b->master = -1;
		b->mode = sim_cfg.mode;
		b->firmware = sim_cfg.firmware;
		b->baud = sim_cfg.baud;
		b->in = IN_DISCARD;
		snprintf(b->name, sizeof(b->name), "%s%d", sim_cfg.prefix, i);
		ret = sim_board_plug(b);
		if (ret)
			return ret;
	}
	ret = listen_ctl();
	if (!ret && sim_cfg.pdu_port)
		ret = sim_pdu_start(epfd, sim_cfg.pdu_port);
	if (ret)
		return ret;
	return write_pidfile();
}

static void cleanup(void)
{
	char path[PATH_MAX];
	int i;

	sim_pdu_stop();
	while (clients)
		client_close(clients);
	for (i = 0; boards && i < sim_cfg.count; i++) {
		sim_board_unplug(&boards[i]);
		sim_board_free(&boards[i]);
	}
	free(boards);
	sim_pty_exit();
	if (listen_fd >= 0) {
		sim_dir_path(path, sizeof(path), "ctl.sock", "");
		unlink(path);
		close(listen_fd);
	}
	sim_dir_path(path, sizeof(path), "simboard.pid", "");
	unlink(path);
	if (signal_fd >= 0)
		close(signal_fd);
	if (epfd >= 0)
		close(epfd);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: simboard --dir DIR [--count N] [--name PREFIX] [--baud B]\n"
		   "                [--mode MODE] [--powered] [--user U] [--password P]\n"
		   "                [--prompt STR] [--hostname H]\n"
		   "                [--firmware u-boot|barebox|depthcharge] [--tftp-root DIR]\n"
		   "                [--pdu-port PORT]\n"
		   "       simboard ctl DIR COMMAND...\n"
		   "modes:");
	for (int m = 0; m < MODE_COUNT; m++)
		fprintf(f, " %s", sim_mode_name(m));
	fprintf(f, "\n");
}

static int parse_uint(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'n' },
		{ "baud", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "powered", no_argument, NULL, 'P' },
		{ "user", required_argument, NULL, 'u' },
		{ "password", required_argument, NULL, 'p' },
		{ "prompt", required_argument, NULL, 'r' },
		{ "hostname", required_argument, NULL, 'H' },
		{ "firmware", required_argument, NULL, 'f' },
		{ "tftp-root", required_argument, NULL, 't' },
		{ "pdu-port", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c, m;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': sim_cfg.dir = optarg; break;
		case 'n': sim_cfg.prefix = optarg; break;
		case 'P': sim_cfg.powered = true; break;
		case 'u': sim_cfg.user = optarg; break;
		case 'p': sim_cfg.password = optarg; break;
		case 'r': sim_cfg.prompt = optarg; break;
		case 'H': sim_cfg.hostname = optarg; break;
		case 't': sim_cfg.tftp_root = optarg; break;
		case 'f':
			m = sim_firmware_parse(optarg);
			if (m < 0)
				return -EINVAL;
			sim_cfg.firmware = m;
			break;
		case 'c':
			if (parse_uint(optarg, MAX_BOARDS, &v) || !v)
				return -EINVAL;
			sim_cfg.count = (int)v;
			break;
		case 'D':
			if (parse_uint(optarg, 65535, &v) || !v)
				return -EINVAL;
			sim_cfg.pdu_port = (unsigned int)v;
			break;
		case 'b':
			if (parse_uint(optarg, 10000000, &v))
				return -EINVAL;
			sim_cfg.baud = (unsigned int)v;
			break;
		case 'm':
			m = sim_mode_parse(optarg);
			if (m < 0)
				return -EINVAL;
			sim_cfg.mode = m;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind < argc || !sim_cfg.dir || strlen(sim_cfg.prefix) > 20)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret;

	if (argc > 1 && !strcmp(argv[1], "ctl"))
		return sim_ctl_client(argc - 2, argv + 2);
	if (parse_options(argc, argv)) {
		usage(stderr);
		return 2;
	}
	ret = setup();
	if (ret) {
		fprintf(stderr, "simboard: setting up in %s: %s\n", sim_cfg.dir, strerror(-ret));
		cleanup();
		return 1;
	}
	if (sim_cfg.powered)
		for (i = 0; i < sim_cfg.count; i++)
			sim_power_on(&boards[i]);
	ret = run();
	if (ret)
		fprintf(stderr, "simboard: %s\n", strerror(-ret));
	cleanup();
	return ret ? 1 : 0;
}
