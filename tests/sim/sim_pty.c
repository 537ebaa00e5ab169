// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_pty.c -- simboard: the boards' pseudo-terminals and the UART-paced writer */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <termios.h>
#include <unistd.h>

#define HUP_CHECK_NS	(100 * NSEC_PER_MSEC)	/* how often to look for a new reader */
#define TX_BURST_MIN	64			/* bytes the UART may send at once */

static int epfd = -1;
static struct pollfd *hup_fds;
static struct board **hup_boards;
static uint64_t hup_check_at;

/* Ready to plug n boards whose ptys are watched by epoll instance fd. */
int sim_pty_init(int fd, int n)
{
	epfd = fd;
	hup_fds = calloc(n, sizeof(*hup_fds));
	hup_boards = calloc(n, sizeof(*hup_boards));
	return hup_fds && hup_boards ? 0 : -ENOMEM;
}

void sim_pty_exit(void)
{
	free(hup_fds);
	free(hup_boards);
	hup_fds = NULL;
	hup_boards = NULL;
}

/* When check_hups() wants to run next, 0 for never. */
uint64_t sim_pty_next_check(void)
{
	return hup_check_at;
}

void sim_dir_path(char *buf, size_t size, const char *name, const char *suffix)
{
	snprintf(buf, size, "%s/%s%s", sim_cfg.dir, name, suffix);
}

static void board_watch(struct board *b)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = b };

	if (b->master < 0 || b->hup)
		return;
	if (b->want_out)
		ev.events |= EPOLLOUT;
	if (!epoll_ctl(epfd, b->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, b->master, &ev))
		b->in_epoll = true;
}

static void board_unwatch(struct board *b)
{
	if (b->in_epoll)
		epoll_ctl(epfd, EPOLL_CTL_DEL, b->master, NULL);
	b->in_epoll = false;
}

/*
 * Nobody has the slave open.  A pty master then polls as HUP all the time, so
 * it leaves epoll and check_hups() looks every 100 ms for a new reader.
 */
static void board_hangup(struct board *b)
{
	board_unwatch(b);
	b->hup = true;
	b->want_out = false;
	if (!hup_check_at)
		hup_check_at = sim_now() + HUP_CHECK_NS;
}

void sim_pty_check_hups(void)
{
	struct board *b;
	int i, n = 0;

	for (i = 0; (b = sim_board_at(i)); i++) {
		if (b->master < 0 || !b->hup)
			continue;
		hup_fds[n] = (struct pollfd){ .fd = b->master, .events = POLLIN };
		hup_boards[n++] = b;
	}
	if (n && poll(hup_fds, n, 0) < 0)
		n = 0;
	hup_check_at = 0;
	for (i = 0; i < n; i++) {
		if (hup_fds[i].revents & POLLHUP) {
			hup_check_at = sim_now() + HUP_CHECK_NS;
			continue;
		}
		hup_boards[i]->hup = false;
		board_watch(hup_boards[i]);
		hup_boards[i]->tx_at = sim_now();
	}
}

/* Replace the symlink atomically, so that a reader never misses it. */
static int link_replace(const char *link, const char *target)
{
	char tmp[PATH_MAX];
	int ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", link, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	if (symlink(target, tmp))
		return -errno;
	if (rename(tmp, link)) {
		ret = -errno;
		unlink(tmp);
		return ret;
	}
	return 0;
}

/* A new pty for the board: raw, non-blocking, published as DIR/<name>.pty. */
int sim_board_plug(struct board *b)
{
	char pts[64], link[PATH_MAX];
	struct termios t;
	int m, s, ret;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (m < 0)
		return -errno;
	if (grantpt(m) || unlockpt(m) || ptsname_r(m, pts, sizeof(pts))) {
		ret = -errno;
		goto fail;
	}
	/* termios calls on a Linux pty master act on the slave side */
	if (!tcgetattr(m, &t)) {
		cfmakeraw(&t);
		cfsetispeed(&t, B115200);
		cfsetospeed(&t, B115200);
		tcsetattr(m, TCSANOW, &t);
	}
	/* open and close the slave once: the master then says HUP until a reader comes */
	s = open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s >= 0)
		close(s);
	sim_dir_path(link, sizeof(link), b->name, ".pty");
	ret = link_replace(link, pts);
	if (ret)
		goto fail;
	b->master = m;
	b->qhead = b->qlen = 0;
	board_hangup(b);
	return 0;
fail:
	close(m);
	return ret;
}

void sim_board_unplug(struct board *b)
{
	char link[PATH_MAX];

	if (b->master < 0)
		return;
	board_unwatch(b);
	close(b->master);
	b->master = -1;
	b->hup = b->want_out = false;
	b->qhead = b->qlen = 0;
	sim_dir_path(link, sizeof(link), b->name, ".pty");
	unlink(link);
}

static size_t tx_chunk(const struct board *b)
{
	return b->baud >= 1000 ? b->baud / 1000 : 1;	/* 10 ms worth */
}

static void tx_refill(struct board *b, uint64_t now)
{
	double cap = 2.0 * tx_chunk(b);

	if (cap < TX_BURST_MIN)
		cap = TX_BURST_MIN;
	b->tokens += (double)(now - b->tok_at) * b->baud / 10 / NSEC_PER_SEC;
	if (b->tokens > cap)
		b->tokens = cap;
	b->tok_at = now;
}

/* When the bucket will hold need bytes. */
static uint64_t tx_when(const struct board *b, uint64_t now, size_t need)
{
	return now + (uint64_t)((need - b->tokens) * 10 * NSEC_PER_SEC / b->baud) + 1;
}

/* The stream command: a new line only when the last one is out, stamped now. */
static bool stream_fill(struct board *b, uint64_t now)
{
	char line[128];
	size_t n;

	if (!b->stream_until || now >= b->stream_until || !b->powered)
		return false;
	n = sim_stream_line(b, line, sizeof(line));
	if (b->baud && b->tokens < n) {
		b->tx_at = tx_when(b, now, n);
		return false;
	}
	sim_queue(b, line, n);
	b->stream_seq++;
	return b->qlen > 0;
}

/* Write queued output to the pty master as fast as the baud rate allows. */
void sim_board_tx(struct board *b)
{
	uint64_t now = sim_now();
	int writes;

	b->tx_at = 0;
	if (b->master < 0 || b->hup || b->want_out)
		return;
	for (writes = 0; writes < 64; writes++) {
		size_t n = SIM_OUTQ_SIZE - b->qhead, need;
		ssize_t w;

		if (b->baud)
			tx_refill(b, now);
		if (!b->qlen) {
			b->tx_at = 0;
			if (!stream_fill(b, now))
				return;
		}
		if (n > b->qlen)
			n = b->qlen;
		if (b->baud) {
			need = b->qlen < tx_chunk(b) ? b->qlen : tx_chunk(b);
			if (b->tokens < need) {
				b->tx_at = tx_when(b, now, need);
				return;
			}
			if (n > (size_t)b->tokens)
				n = (size_t)b->tokens;
		}
		w = write(b->master, b->q + b->qhead, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			b->tx_at = 0;
			if (errno == EAGAIN) {
				b->want_out = true;	/* the reader is slow: wait for EPOLLOUT */
				board_watch(b);
			} else {
				board_hangup(b);
			}
			return;
		}
		b->qhead = (b->qhead + w) % SIM_OUTQ_SIZE;
		b->qlen -= w;
		b->sent += w;
		if (b->baud)
			b->tokens -= w;
	}
	b->tx_at = now;		/* more to write: let the other boards go first */
}

/* Input typed on the console. */
static void board_read(struct board *b)
{
	unsigned char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(b->master, buf, sizeof(buf));
		if (n > 0) {
			sim_input(b, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		board_hangup(b);	/* EIO: the last reader closed the slave */
		return;
	}
}

void sim_board_event(struct board *b, uint32_t events)
{
	if (events & EPOLLIN)
		board_read(b);
	if ((events & EPOLLOUT) && !b->hup) {
		b->want_out = false;
		board_watch(b);
		b->tx_at = sim_now();
	}
	if ((events & (EPOLLHUP | EPOLLERR)) && !b->hup && b->master >= 0)
		board_hangup(b);
}
