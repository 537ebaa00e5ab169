// SPDX-License-Identifier: GPL-2.0-or-later
/* test-console.c -- drivers/console.c and its drivers on real ptys and loopback sockets */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "drivers/console.h"
#include "tap.h"

#define SEC USEC_PER_SEC
#define MSEC USEC_PER_MSEC

/* What a console reported through its ops. */
struct rec {
	struct strbuf data;
	int ups;
	int downs;
	char reason[256];
	bool free_on_down;		/* console_free() from inside the state callback */
	struct console **self;
};

static void rec_data(struct console *c, const uint8_t *buf, size_t len, void *userdata)
{
	struct rec *r = userdata;

	strbuf_add(&r->data, buf, len);
}

static void rec_state(struct console *c, bool up, const char *reason, void *userdata)
{
	struct rec *r = userdata;

	if (up) {
		r->ups++;
		return;
	}
	r->downs++;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	if (r->free_on_down)
		*r->self = console_free(*r->self);
}

static const struct console_ops rec_ops = { .data = rec_data, .state = rec_state };

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

/* Run the loop until @cond holds or @usec passed. */
#define RUN_UNTIL(l, cond, usec)                                                      \
	do {                                                                          \
		uint64_t _end = now_monotonic() + (usec);                             \
		while (!(cond) && now_monotonic() < _end)                             \
			loop_run_once(l, 10 * MSEC);                                  \
	} while (0)

static void run_for(struct loop *l, uint64_t usec)
{
	uint64_t end = now_monotonic() + usec;

	while (now_monotonic() < end)
		loop_run_once(l, 10 * MSEC);
}

/* Parse a console from libconfig text such as `driver = "pty"; path = "/x";`. */
static int console_from_text(struct loop *l, const char *text, struct console **ret,
			     struct diag *diag)
{
	struct driver_ctx ctx = { .loop = l, .device_name = "test-board" };
	struct driver_config dc = { .file = "test.conf", .line = 1 };
	config_t conf;
	const char *driver = NULL;
	int r = -EINVAL;

	config_init(&conf);
	if (config_read_string(&conf, text) == CONFIG_TRUE) {
		config_lookup_string(&conf, "driver", &driver);
		dc.driver = (char *)driver;
		dc.settings = config_root_setting(&conf);
		r = console_new(&dc, &ctx, ret, diag);
	}
	config_destroy(&conf);
	return r;
}

static struct console *start_console(struct loop *l, const char *text, struct rec *rec)
{
	struct diag diag = DIAG_INIT;
	struct console *c = NULL;

	if (console_from_text(l, text, &c, &diag) < 0) {
		char *msg = diag_join(&diag);

		printf("# console_new failed: %s\n", msg ? msg : "?");
		free(msg);
		diag_release(&diag);
		return NULL;
	}
	diag_release(&diag);
	if (console_start(c, &rec_ops, rec) < 0)
		return console_free(c);
	return c;
}

/* A pty pair whose slave is reachable at tmpdir/@link; returns the master fd. */
static int make_pty(const char *link)
{
	int m, s;
	char name[64];

	if (openpty(&m, &s, name, NULL, NULL) < 0)
		return -1;
	close(s);
	fcntl(m, F_SETFL, O_NONBLOCK);
	unlink(link);
	if (symlink(name, link) < 0) {
		close(m);
		return -1;
	}
	return m;
}

/* Read what is available on @fd into @sb, running the loop meanwhile. */
static void drain_fd(struct loop *l, int fd, struct strbuf *sb, size_t want, uint64_t usec)
{
	uint64_t end = now_monotonic() + usec;
	char buf[4096];

	while (sb->len < want && now_monotonic() < end) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0)
			strbuf_add(sb, buf, (size_t)n);
		else
			loop_run_once(l, 5 * MSEC);
	}
}

TEST(test_console__drivers)
{
	const char *const *names = console_driver_names();
	const char *expect[] = { "pty", "tty", "tcp", "unix", "telnet", "qemu" };
	struct diag diag = DIAG_INIT;
	struct console *c = NULL;
	struct loop *l;
	char *msg;
	size_t i;

	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		CHECK(console_find_driver(expect[i]));
		CHECK_STR(names[i], expect[i]);
	}
	CHECK(!names[i]);
	CHECK(!console_find_driver("nope"));
	CHECK(loop_new(&l) == 0);
	CHECK_INT(console_from_text(l, "driver = \"nope\";", &c, &diag), ==, -EINVAL);
	CHECK_INT(console_from_text(l, "driver = \"pty\"; baud = 12345; colour = 1;", &c, &diag),
		  ==, -EINVAL);
	CHECK_INT(console_from_text(l, "driver = \"tcp\"; host = \"\"; port = 0;", &c, &diag),
		  ==, -EINVAL);
	CHECK_INT(console_from_text(l, "driver = \"telnet\"; host = \"h\"; port = 1; "
				    "rfc2217 = 1;", &c, &diag), ==, -EINVAL);
	CHECK_INT(console_from_text(l, "driver = \"telnet\"; host = \"h\"; port = 1; "
				    "baud = 9600;", &c, &diag), ==, -EINVAL);
	msg = diag_join(&diag);
	CHECK_CONTAINS(msg, "test.conf:1: unknown console driver 'nope' (known: pty, tty, tcp");
	CHECK_CONTAINS(msg, "missing key 'path'");
	CHECK_CONTAINS(msg, "'baud' must be a standard rate such as 115200, not 12345");
	CHECK_CONTAINS(msg, "unknown key 'colour'");
	CHECK_CONTAINS(msg, "'host' is empty");
	CHECK_CONTAINS(msg, "'port' must be between 1 and 65535, not 0");
	CHECK_CONTAINS(msg, "'rfc2217' must be true or false");
	CHECK_CONTAINS(msg, "'baud' needs 'rfc2217 = true'");
	free(msg);
	diag_release(&diag);
	CHECK(console_from_text(l, "driver = \"telnet\"; host = \"h\"; port = 1; rfc2217 = true;"
				"baud = 9600;", &c, &diag) == 0);
	CHECK(!console_is_up(c));
	CHECK_INT(console_write(c, "x", 1, 0), ==, -ENOTCONN);
	console_free(c);
	loop_free(l);
}

/* The fixture of the pty tests: a loop, a board's pty, its console started on it. */
struct pty_bed {
	struct loop *l;
	int m;			/* the master: the board's side */
	struct rec rec;
	struct console *c;
	char text[256];		/* the console's settings */
};

/* pty_bed_open() - the pty at tmpdir/@name, a console of driver "pty" with @keys on it. */
static int pty_bed_open(struct pty_bed *p, const char *name, const char *keys)
{
	memset(p, 0, sizeof(*p));
	p->m = -1;
	strbuf_init(&p->rec.data);
	if (loop_new(&p->l) < 0)
		return -1;
	p->m = make_pty(tmp_path(name));
	if (p->m < 0)
		return -1;
	snprintf(p->text, sizeof(p->text), "driver = \"pty\"; path = \"%s\";%s", tmp_path(name),
		 keys ? keys : "");
	p->c = start_console(p->l, p->text, &p->rec);
	return p->c ? 0 : -1;
}

static void pty_bed_close(struct pty_bed *p)
{
	console_free(p->c);
	if (p->m >= 0)
		close(p->m);
	strbuf_release(&p->rec.data);
	loop_free(p->l);
}

TEST(test_console__pty_read_write)
{
	struct strbuf got = STRBUF_INIT;
	struct pty_bed p;

	CHECK(pty_bed_open(&p, "board", " baud = 9600;") == 0);
	CHECK_INT(p.rec.ups, ==, 1);
	CHECK(console_is_up(p.c));
	CHECK_STR(console_last_error(p.c), "");
	CHECK(write(p.m, "U-Boot 2023.01\r\n\xff\x00!", 19) == 19);
	RUN_UNTIL(p.l, p.rec.data.len >= 19, 2 * SEC);
	CHECK_INT(p.rec.data.len, ==, 19);
	CHECK(!memcmp(p.rec.data.buf, "U-Boot 2023.01\r\n\xff\x00!", 19));
	CHECK(console_write(p.c, "bootm\n\xff", 7, 0) == 0);
	drain_fd(p.l, p.m, &got, 7, 2 * SEC);
	CHECK_INT(got.len, ==, 7);
	CHECK(!memcmp(got.buf, "bootm\n\xff", 7));
	CHECK_INT(console_queued(p.c), ==, 0);
	CHECK_INT(console_send_break(p.c), ==, 0);
	run_for(p.l, 300 * MSEC);
	strbuf_release(&got);
	pty_bed_close(&p);
}


TEST(test_console__char_delay)
{
	struct strbuf got = STRBUF_INIT;
	struct pty_bed p;
	uint64_t t0, t1;

	CHECK(pty_bed_open(&p, "slow", NULL) == 0 && p.rec.ups == 1);
	t0 = now_monotonic();
	CHECK(console_write(p.c, "abcde", 5, 30 * MSEC) == 0);
	CHECK(console_write(p.c, "fg", 2, 0) == 0);
	drain_fd(p.l, p.m, &got, 1, 2 * SEC);
	CHECK_INT(got.len, ==, 1);		/* one byte, then a pause */
	drain_fd(p.l, p.m, &got, 7, 3 * SEC);
	t1 = now_monotonic();
	CHECK_INT(got.len, ==, 7);
	CHECK(!memcmp(got.buf, "abcdefg", 7));
	/* 5 delays of 30 ms (the undelayed "fg" waits for the last one) */
	CHECK_INT(t1 - t0, >=, 140 * MSEC);
	CHECK_INT(t1 - t0, <, 2 * SEC);
	strbuf_release(&got);
	pty_bed_close(&p);
}


TEST(test_console__queue_limit)
{
	struct pty_bed p;
	char *big;

	CHECK(pty_bed_open(&p, "full", NULL) == 0 && p.rec.ups == 1);
	big = calloc(1, CONSOLE_MAX_QUEUE);
	CHECK(big);
	CHECK_INT(console_write(p.c, big, CONSOLE_MAX_QUEUE - 1, SEC), ==, 0);
	CHECK_INT(console_write(p.c, "ab", 2, 0), ==, -ENOBUFS);
	CHECK_INT(console_write(p.c, "a", 1, 0), ==, 0);
	CHECK_INT(console_queued(p.c), ==, CONSOLE_MAX_QUEUE);
	CHECK_INT(console_write(p.c, "b", 1, 0), ==, -ENOBUFS);
	free(big);
	pty_bed_close(&p);
}


/* The board's pty vanishes (USB unplug, simulator exit) and comes back at the same link. */
TEST(test_console__vanish_and_return)
{
	const char *link = tmp_path("replug");
	struct pty_bed p;

	CHECK(pty_bed_open(&p, "replug", NULL) == 0 && p.rec.ups == 1);
	CHECK(console_write(p.c, "queued", 6, SEC) == 0);
	close(p.m);
	unlink(link);
	RUN_UNTIL(p.l, p.rec.downs == 1, 2 * SEC);
	CHECK_INT(p.rec.downs, ==, 1);
	printf("# down: %s\n", p.rec.reason);
	CHECK(p.rec.reason[0]);
	CHECK(!console_is_up(p.c));
	CHECK_INT(console_queued(p.c), ==, 0);
	CHECK_INT(console_write(p.c, "x", 1, 0), ==, -ENOTCONN);
	/* retries fail quietly: still one report */
	run_for(p.l, 2500 * MSEC);
	CHECK_INT(p.rec.downs, ==, 1);
	CHECK_CONTAINS(console_last_error(p.c), "No such file or directory");
	p.m = make_pty(link);
	CHECK(p.m >= 0);
	RUN_UNTIL(p.l, p.rec.ups == 2, 3 * SEC);
	CHECK_INT(p.rec.ups, ==, 2);
	CHECK(write(p.m, "back", 4) == 4);
	RUN_UNTIL(p.l, p.rec.data.len >= 4, 2 * SEC);
	CHECK_INT(p.rec.data.len, ==, 4);
	pty_bed_close(&p);
}


TEST(test_console__flock_conflict)
{
	struct rec b = { .data = STRBUF_INIT };
	struct console *cb;
	struct pty_bed p;

	CHECK(pty_bed_open(&p, "shared", NULL) == 0);
	cb = start_console(p.l, p.text, &b);
	CHECK(cb);
	CHECK_INT(p.rec.ups, ==, 1);
	CHECK_INT(b.ups, ==, 0);
	CHECK_INT(b.downs, ==, 1);
	CHECK_CONTAINS(b.reason, "is in use by another process");
	CHECK_CONTAINS(b.reason, tmp_path("shared"));
	/* the first owner goes away: the second takes over at its next retry */
	p.c = console_free(p.c);
	RUN_UNTIL(p.l, b.ups == 1, 3 * SEC);
	CHECK_INT(b.ups, ==, 1);
	console_free(cb);
	strbuf_release(&b.data);
	pty_bed_close(&p);
}


/* Feed @in to the telnet decoder of @c; append the data bytes to @out. */
static void telnet_feed(struct console *c, const char *in, size_t len, struct strbuf *out)
{
	const struct console_driver *d = console_find_driver("telnet");
	uint8_t buf[256];
	size_t n;

	memcpy(buf, in, len);
	n = d->decode(c, buf, len);
	strbuf_add(out, buf, n);
}

TEST(test_console__telnet_decode)
{
	struct diag diag = DIAG_INIT;
	struct strbuf out = STRBUF_INIT;
	const struct console_driver *d = console_find_driver("telnet");
	struct console *c = NULL;
	struct loop *l;

	CHECK(loop_new(&l) == 0);
	CHECK(console_from_text(l, "driver = \"telnet\"; host = \"127.0.0.1\"; port = 2;",
				&c, &diag) == 0);
	/* IAC IAC split across reads */
	telnet_feed(c, "ab\xff", 3, &out);
	CHECK_INT(out.len, ==, 2);
	telnet_feed(c, "\xff" "c", 2, &out);
	CHECK_INT(out.len, ==, 4);
	CHECK(!memcmp(out.buf, "ab\xff" "c", 4));
	/* negotiation split between IAC, command and option */
	strbuf_reset(&out);
	telnet_feed(c, "1\xff", 2, &out);
	telnet_feed(c, "\xfb", 1, &out);
	telnet_feed(c, "\x01" "2\xff\xfd\x00" "3", 6, &out);
	CHECK_INT(out.len, ==, 3);
	CHECK(!memcmp(out.buf, "123", 3));
	/* a subnegotiation with IAC IAC inside, across three reads */
	strbuf_reset(&out);
	telnet_feed(c, "x\xff\xfa\x2c\x6b", 5, &out);
	telnet_feed(c, "\xff\xff\x00", 3, &out);
	telnet_feed(c, "\xff", 1, &out);
	telnet_feed(c, "\xf0y", 2, &out);
	CHECK_INT(out.len, ==, 2);
	CHECK(!memcmp(out.buf, "xy", 2));
	/* NOP, GA, BREAK vanish; data around them stays */
	strbuf_reset(&out);
	telnet_feed(c, "\xff\xf1p\xff\xf9q\xff\xf3r", 9, &out);
	CHECK_INT(out.len, ==, 3);
	CHECK(!memcmp(out.buf, "pqr", 3));
	/* an unterminated subnegotiation ends at the next command */
	strbuf_reset(&out);
	telnet_feed(c, "\xff\xfa\x18junk\xff\xf1z", 10, &out);
	CHECK_INT(out.len, ==, 1);
	CHECK(out.buf[0] == 'z');
	/* encoding doubles IAC */
	strbuf_reset(&out);
	CHECK(d->encode(c, (const uint8_t *)"\xff" "a\xff\xff", 4, &out) == 0);
	CHECK_INT(out.len, ==, 7);
	CHECK(!memcmp(out.buf, "\xff\xff" "a\xff\xff\xff\xff", 7));
	console_free(c);
	strbuf_release(&out);
	diag_release(&diag);
	loop_free(l);
}

/* A listening socket on 127.0.0.1; its port in *@port. */
static int tcp_listener(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)*port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Accept one connection on @lfd while running the loop. */
static int accept_running(struct loop *l, int lfd)
{
	uint64_t end = now_monotonic() + 3 * SEC;
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd;

	while (now_monotonic() < end) {
		loop_run_once(l, 5 * MSEC);
		if (poll(&p, 1, 0) == 1)
			break;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	return fd;
}

static bool contains(const struct strbuf *sb, const char *needle, size_t len)
{
	return memmem(sb->buf, sb->len, needle, len) != NULL;
}

TEST(test_console__telnet_server)
{
	struct rec rec = { .data = STRBUF_INIT };
	struct strbuf got = STRBUF_INIT;
	struct console *c;
	struct loop *l;
	char text[256];
	int lfd, fd, port = 0;

	CHECK(loop_new(&l) == 0);
	lfd = tcp_listener(&port);
	CHECK(lfd >= 0);
	snprintf(text, sizeof(text), "driver = \"telnet\"; host = \"127.0.0.1\"; port = %d;"
		 "rfc2217 = true; baud = 255;", port);
	c = start_console(l, text, &rec);
	CHECK(c);
	fd = accept_running(l, lfd);
	CHECK(fd >= 0);
	RUN_UNTIL(l, rec.ups == 1, 2 * SEC);
	CHECK_INT(rec.ups, ==, 1);
	/* what ser2net says first, plus requests to refuse */
	CHECK(write(fd, "\xff\xfb\x03\xff\xfd\x03\xff\xfb\x01\xff\xfe\x01\xff\xfd\x00\xff\xfb\x00"
		  "\xff\xfd\x2c\xff\xfd\x18\xff\xfb\x05hi", 29) == 29);
	RUN_UNTIL(l, rec.data.len >= 2, 2 * SEC);
	CHECK_INT(rec.data.len, ==, 2);
	drain_fd(l, fd, &got, 35, SEC);
	CHECK(contains(&got, "\xff\xfb\x2c", 3));		/* WILL COM-PORT */
	CHECK(contains(&got, "\xff\xfd\x03", 3));		/* DO SGA */
	CHECK(contains(&got, "\xff\xfb\x03", 3));		/* WILL SGA */
	CHECK(contains(&got, "\xff\xfd\x01", 3));		/* DO ECHO */
	CHECK(contains(&got, "\xff\xfb\x00", 3));		/* WILL BINARY */
	CHECK(contains(&got, "\xff\xfd\x00", 3));		/* DO BINARY */
	CHECK(contains(&got, "\xff\xfc\x18", 3));		/* WONT TERMINAL-TYPE */
	CHECK(contains(&got, "\xff\xfe\x05", 3));		/* DONT STATUS */
	CHECK(!contains(&got, "\xff\xfc\x01", 3));		/* DONT ECHO needs no answer */
	/* SET-BAUDRATE 255, its 0xFF doubled */
	CHECK(contains(&got, "\xff\xfa\x2c\x01\x00\x00\x00\xff\xff\xff\xf0", 11));
	/* a repeated request is not answered again */
	strbuf_reset(&got);
	CHECK(write(fd, "\xff\xfd\x00!", 4) == 4);
	RUN_UNTIL(l, rec.data.len >= 3, 2 * SEC);
	CHECK(console_write(c, "\xff" "a", 2, 0) == 0);
	CHECK(console_send_break(c) == 0);
	drain_fd(l, fd, &got, 5, SEC);
	CHECK_INT(got.len, ==, 5);
	CHECK(!memcmp(got.buf, "\xff\xff" "a\xff\xf3", 5));
	/* the server goes away */
	close(fd);
	RUN_UNTIL(l, rec.downs == 1, 2 * SEC);
	CHECK_INT(rec.downs, ==, 1);
	CHECK_CONTAINS(rec.reason, "end of file");
	console_free(c);
	close(lfd);
	strbuf_release(&got);
	strbuf_release(&rec.data);
	loop_free(l);
}

TEST(test_console__tcp_refused_then_up)
{
	struct rec rec = { .data = STRBUF_INIT };
	struct strbuf got = STRBUF_INIT;
	struct console *c;
	struct loop *l;
	char text[256];
	int lfd, fd, port = 0;

	CHECK(loop_new(&l) == 0);
	lfd = tcp_listener(&port);	/* find a free port, then free it */
	CHECK(lfd >= 0);
	close(lfd);
	snprintf(text, sizeof(text), "driver = \"tcp\"; host = \"127.0.0.1\"; port = %d;", port);
	c = start_console(l, text, &rec);
	CHECK(c);
	RUN_UNTIL(l, rec.downs == 1, 2 * SEC);
	CHECK_INT(rec.downs, ==, 1);
	CHECK_CONTAINS(rec.reason, "Connection refused");
	printf("# down: %s\n", rec.reason);
	lfd = tcp_listener(&port);
	CHECK(lfd >= 0);
	fd = accept_running(l, lfd);
	CHECK(fd >= 0);
	RUN_UNTIL(l, rec.ups == 1, 2 * SEC);
	CHECK_INT(rec.ups, ==, 1);
	CHECK_INT(rec.downs, ==, 1);
	CHECK(write(fd, "raw\xff", 4) == 4);
	RUN_UNTIL(l, rec.data.len >= 4, 2 * SEC);
	CHECK(rec.data.len == 4 && !memcmp(rec.data.buf, "raw\xff", 4));
	CHECK(console_write(c, "\xff\n", 2, 0) == 0);
	drain_fd(l, fd, &got, 2, SEC);
	CHECK(got.len == 2 && !memcmp(got.buf, "\xff\n", 2));
	CHECK_INT(console_send_break(c), ==, -EOPNOTSUPP);
	console_free(c);
	close(fd);
	close(lfd);
	strbuf_release(&got);
	strbuf_release(&rec.data);
	loop_free(l);
}

/* A host name (from /etc/hosts) goes through the non-blocking lookup and address rotation. */
TEST(test_console__tcp_localhost)
{
	struct rec rec = { .data = STRBUF_INIT };
	struct console *c;
	struct loop *l;
	char text[256];
	int lfd, fd, port = 0;

	CHECK(loop_new(&l) == 0);
	lfd = tcp_listener(&port);
	CHECK(lfd >= 0);
	snprintf(text, sizeof(text), "driver = \"tcp\"; host = \"localhost\"; port = %d;", port);
	c = start_console(l, text, &rec);
	CHECK(c);
	fd = accept_running(l, lfd);
	CHECK(fd >= 0);
	RUN_UNTIL(l, rec.ups == 1, 3 * SEC);
	CHECK_INT(rec.ups, ==, 1);
	console_free(c);
	close(fd);
	close(lfd);
	/* (no test of a failing lookup: it would send DNS queries off this machine) */
	strbuf_release(&rec.data);
	loop_free(l);
}

TEST(test_console__unix_socket)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rec rec = { .data = STRBUF_INIT };
	struct strbuf got = STRBUF_INIT;
	struct console *c;
	struct loop *l;
	char text[256];
	int lfd, fd;

	CHECK(loop_new(&l) == 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tmp_path("qemu.sock"));
	snprintf(text, sizeof(text), "driver = \"unix\"; path = \"%s\";", sa.sun_path);
	c = start_console(l, text, &rec);
	CHECK(c);
	CHECK_INT(rec.downs, ==, 1);
	CHECK_CONTAINS(rec.reason, "cannot connect to '");
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 1) == 0);
	fd = accept_running(l, lfd);
	CHECK(fd >= 0);
	RUN_UNTIL(l, rec.ups == 1, 2 * SEC);
	CHECK_INT(rec.ups, ==, 1);
	CHECK(write(fd, "login: ", 7) == 7);
	RUN_UNTIL(l, rec.data.len >= 7, 2 * SEC);
	CHECK_INT(rec.data.len, ==, 7);
	CHECK(console_write(c, "root\n", 5, 0) == 0);
	drain_fd(l, fd, &got, 5, SEC);
	CHECK(got.len == 5 && !memcmp(got.buf, "root\n", 5));
	console_free(c);
	close(fd);
	close(lfd);
	unlink(sa.sun_path);
	strbuf_release(&got);
	strbuf_release(&rec.data);
	loop_free(l);
}

/* libserialport 0.1.1 cannot open ptys: the tty driver must say so and point at "pty". */
TEST(test_console__tty_on_pty)
{
	struct rec rec = { .data = STRBUF_INIT };
	struct diag diag = DIAG_INIT;
	struct console *c = NULL;
	struct loop *l;
	char text[256], pts[64], *msg;
	ssize_t n;
	int m;

	CHECK(loop_new(&l) == 0);
	m = make_pty(tmp_path("uart"));
	CHECK(m >= 0);
	n = readlink(tmp_path("uart"), pts, sizeof(pts) - 1);
	CHECK(n > 0);
	pts[n] = '\0';
	snprintf(text, sizeof(text), "driver = \"tty\"; device = \"%s\"; parity = \"even\";"
		 "data_bits = 7; stop_bits = 2; flow_control = \"rtscts\";", tmp_path("uart"));
	c = start_console(l, text, &rec);
	CHECK(c);
	CHECK_INT(rec.downs, ==, 1);
	printf("# %s\n", rec.reason);
	CHECK_CONTAINS(rec.reason, "libserialport cannot open '");
	CHECK_CONTAINS(rec.reason, pts);
	CHECK_CONTAINS(rec.reason, "use driver \"pty\" for pseudo-terminals");
	console_free(c);
	CHECK_INT(console_from_text(l, "driver = \"tty\"; device = \"/dev/x\"; parity = \"bogus\";"
				    "data_bits = 9; stop_bits = 3; flow_control = \"cts\";",
				    &c, &diag), ==, -EINVAL);
	msg = diag_join(&diag);
	CHECK_CONTAINS(msg, "unknown parity 'bogus' (known: none, odd, even, mark, space)");
	CHECK_CONTAINS(msg, "'data_bits' must be between 5 and 8, not 9");
	CHECK_CONTAINS(msg, "'stop_bits' must be between 1 and 2, not 3");
	CHECK_CONTAINS(msg, "unknown flow_control 'cts'");
	free(msg);
	diag_release(&diag);
	close(m);
	strbuf_release(&rec.data);
	loop_free(l);
}

/* The user may free the console from its state callback. */
TEST(test_console__free_from_callback)
{
	struct rec rec = { .data = STRBUF_INIT, .free_on_down = true };
	struct console *c;
	struct loop *l;
	char text[256];
	int m;

	CHECK(loop_new(&l) == 0);
	m = make_pty(tmp_path("gone"));
	CHECK(m >= 0);
	snprintf(text, sizeof(text), "driver = \"pty\"; path = \"%s\";", tmp_path("gone"));
	c = start_console(l, text, &rec);
	CHECK(c && rec.ups == 1);
	rec.self = &c;
	close(m);
	RUN_UNTIL(l, rec.downs == 1, 2 * SEC);
	CHECK_INT(rec.downs, ==, 1);
	CHECK(!c);
	run_for(l, 50 * MSEC);
	strbuf_release(&rec.data);
	loop_free(l);
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-console-XXXXXX");
	if (!mkdtemp(tmpdir))
		abort();
}

static void cleanup(void) __attribute__((destructor));
static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "cannot remove '%s'\n", tmpdir);
}

TEST_LIST(test_console__drivers, test_console__pty_read_write, test_console__char_delay,
	  test_console__queue_limit, test_console__vanish_and_return,
	  test_console__flock_conflict, test_console__telnet_decode,
	  test_console__telnet_server, test_console__tcp_refused_then_up,
	  test_console__tcp_localhost, test_console__unix_socket, test_console__tty_on_pty,
	  test_console__free_from_callback)
