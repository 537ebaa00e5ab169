// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-upload.c -- dispatcher/results/backends/upload.c against a receiver in the same
 * loop that answers when the test says: several requests in flight, each
 * stream in order, retries, and exactly once across a restart.
 *
 * Records are "STREAM.SEQ" texts; the stream is the number before the dot.
 * A request's body is its records joined by spaces.  The backend's deps
 * carry the test's loop and HTTP client, as the daemon's would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "core/http_client.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "results/backends/backend.h"
#include "results/backends/spool.h"
#include "results/backends/upload.h"
#include "tap.h"

#define WAIT_MAX (5 * USEC_PER_SEC)
#define MAX_CONNS 16
#define MAX_REQS 64

struct conn {
	int fd;
	struct loop_source *src;
	struct strbuf in;
};

struct req {
	struct conn *c;
	char body[512];
	int status;		/* answered with; 0: not yet */
};

static struct loop *loop;
static struct http_client *http;
static int listen_fd = -1, port;
static struct loop_source *listen_src;
static struct conn conns[MAX_CONNS];
static struct req reqs[MAX_REQS];
static int n_reqs;
static char dir[64];
static struct backends_deps deps;	/* what the backend gets: the loop and http above */

/* ---- the receiver ---- */

/* A whole request at the start of @c->in becomes reqs[n_reqs]; returns whether one did. */
static bool parse_request(struct conn *c)
{
	char *end = c->in.len ? strstr(c->in.buf, "\r\n\r\n") : NULL, *cl;
	size_t head, len;

	if (!end || n_reqs == MAX_REQS)
		return false;
	*end = '\0';
	cl = strcasestr(c->in.buf, "Content-Length:");
	len = cl ? strtoul(cl + 15, NULL, 10) : 0;
	*end = '\r';
	head = (size_t)(end - c->in.buf) + 4;
	if (c->in.len < head + len || len >= sizeof(reqs[0].body))
		return false;
	reqs[n_reqs] = (struct req){ .c = c };
	memcpy(reqs[n_reqs++].body, c->in.buf + head, len);
	memmove(c->in.buf, c->in.buf + head + len, c->in.len - head - len);
	c->in.len -= head + len;
	c->in.buf[c->in.len] = '\0';
	return true;
}

static void conn_close(struct conn *c)
{
	c->src = loop_source_free(c->src);
	close(c->fd);
	strbuf_release(&c->in);
	c->fd = -1;
}

static int on_conn(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct conn *c = ud;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n <= 0) {
		conn_close(c);
		return 0;
	}
	strbuf_add(&c->in, buf, (size_t)n);
	while (parse_request(c))
		;
	return 0;
}

static int on_accept(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC), i;

	for (i = 0; cfd >= 0 && i < MAX_CONNS; i++) {
		if (conns[i].src)
			continue;
		conns[i] = (struct conn){ .fd = cfd, .in = STRBUF_INIT };
		loop_add_io(loop, &conns[i].src, cfd, EPOLLIN, on_conn, &conns[i]);
		return 0;
	}
	if (cfd >= 0)
		close(cfd);
	return 0;
}

/* Answer request @i with @status. */
static int answer(int i, int status)
{
	char text[128];
	int n = snprintf(text, sizeof(text), "HTTP/1.1 %d X\r\nContent-Length: 2\r\n\r\n{}",
			 status);

	reqs[i].status = status;
	return write(reqs[i].c->fd, text, (size_t)n) == n ? 0 : -EIO;
}

static int unanswered(void)
{
	int i, n = 0;

	for (i = 0; i < n_reqs; i++)
		n += !reqs[i].status;
	return n;
}

/* ---- fixture ---- */

static int setup(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);

	n_reqs = 0;
	memset(conns, 0, sizeof(conns));
	strcpy(dir, "/tmp/test-upload-XXXXXX");
	if (!mkdtemp(dir) || loop_new(&loop) < 0 || http_client_new(loop, &http) < 0)
		return -EIO;
	deps = (struct backends_deps){ .loop = loop, .http = http };
	strcat(dir, "/spool");
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(listen_fd, 16) < 0 || getsockname(listen_fd, (struct sockaddr *)&a, &alen) < 0)
		return -EIO;
	port = ntohs(a.sin_port);
	return loop_add_io(loop, &listen_src, listen_fd, EPOLLIN, on_accept, NULL);
}

static void teardown(void)
{
	char cmd[128];
	int i;

	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].src)
			conn_close(&conns[i]);
	listen_src = loop_source_free(listen_src);
	close(listen_fd);
	http = http_client_free(http);
	loop = loop_free(loop);
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strlen(dir) - 6), dir);
	if (system(cmd) != 0)
		printf("# cannot remove '%s'\n", dir);
}

/* Run the loop until @n requests wait for an answer (true), or WAIT_MAX passed. */
static bool wait_unanswered(int n)
{
	uint64_t end = now_monotonic() + WAIT_MAX;

	while (unanswered() < n && now_monotonic() < end)
		loop_run_once(loop, 10 * USEC_PER_MSEC);
	return unanswered() == n;
}

static void spin(uint64_t usec)
{
	uint64_t end = now_monotonic() + usec;

	while (now_monotonic() < end)
		loop_run_once(loop, 10 * USEC_PER_MSEC);
}

/* ---- the backend side ---- */

static uint64_t stream_of(const void *data, size_t len, void *ud)
{
	return strtoull(data, NULL, 10);
}

static int add_record(const void *data, size_t len, void *ud)
{
	struct strbuf *body = ud;

	if (body->len)
		strbuf_addch(body, ' ');
	return strbuf_add(body, data, len);
}

static bool not_yet;	/* compose() cannot compose yet: -EAGAIN */

static int compose(struct upload *u, struct strbuf *body, void *ud)
{
	int r = upload_take(u, 1 << 20, add_record, body);

	if (not_yet)
		return -EAGAIN;

	return r < 0 ? r : 0;
}

static void rejected(struct upload *u, const struct http_response *resp, void *ud)
{
}

static const struct upload_ops ops = {
	.compose = compose,
	.stream = stream_of,
	.rejected = rejected,
};

static struct backend backend = { .name = "test", .deps = &deps };

static int start(unsigned in_flight, struct spool **sp, struct upload **u)
{
	char url[64];
	struct upload_opts o = { .url = url, .max_in_flight = in_flight, .retry_max_ms = 100 };
	int err;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/in", port);
	err = spool_open(dir, 1 << 20, sp);
	return err < 0 ? err : upload_new(&backend, *sp, &o, &ops, NULL, u);
}

static int append(struct upload *u, int stream, int seq)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%d.%d", stream, seq);

	return upload_append(u, text, (size_t)n);
}

/* ---- cases ---- */

/* Whether request @i holds only streams that are @chan modulo @n, each in order from @seq. */
static bool holds_channel(int i, int chan, int n, int seq)
{
	char body[512], *tok, *save = NULL;
	int next[64] = { 0 };

	snprintf(body, sizeof(body), "%s", reqs[i].body);
	for (tok = strtok_r(body, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int s = atoi(tok), q = atoi(strchr(tok, '.') + 1);

		if (s % n != chan || q != (next[s] ? next[s] + 1 : seq))
			return false;
		next[s] = q;
	}
	return true;
}

/*
 * Eight streams on four channels: four requests at once, each with the two
 * streams of its channel in order; a stream's next records wait for the
 * answer to its channel's request, whatever order the answers come in.
 */
TEST(test_upload__in_flight_keeps_stream_order)
{
	struct spool *sp = NULL;
	struct upload *u = NULL;
	int s, q, i;

	CHECK(setup() == 0);
	CHECK(start(4, &sp, &u) == 0);
	for (q = 1; q <= 3; q++)
		for (s = 0; s < 8; s++)
			CHECK(append(u, s, q) == 0);
	upload_kick(u);
	CHECK(wait_unanswered(4));
	for (i = 0; i < 4; i++)
		CHECK(holds_channel(i, atoi(reqs[i].body) % 4, 4, 1));
	CHECK(strstr(reqs[0].body, "0.3") || strstr(reqs[1].body, "0.3") ||
	      strstr(reqs[2].body, "0.3") || strstr(reqs[3].body, "0.3"));
	/* stream 0 again: its channel is busy, nothing more goes out */
	CHECK(append(u, 0, 4) == 0 && append(u, 5, 4) == 0);
	upload_kick(u);
	spin(200 * USEC_PER_MSEC);
	CHECK_INT(n_reqs, ==, 4);
	/* answers in reverse order: each channel sends its next records once answered */
	for (i = 3; i >= 0; i--)
		CHECK(answer(i, 200) == 0);
	CHECK(wait_unanswered(2));
	CHECK_INT(n_reqs, ==, 6);
	CHECK((!strcmp(reqs[4].body, "0.4") && !strcmp(reqs[5].body, "5.4")) ||
	      (!strcmp(reqs[4].body, "5.4") && !strcmp(reqs[5].body, "0.4")));
	CHECK(answer(4, 200) == 0 && answer(5, 200) == 0);
	spin(100 * USEC_PER_MSEC);
	CHECK(!upload_busy(u));
	CHECK_INT(spool_head(sp), ==, spool_tail(sp));
	upload_free(u);
	spool_close(sp);
	teardown();
}

/*
 * Two channels answered out of order, one with a 500: it is retried with the
 * same records; after a restart only what no answer covered is sent again.
 */
TEST(test_upload__retry_and_restart_exactly_once)
{
	struct spool *sp = NULL;
	struct upload *u = NULL;
	int first;

	CHECK(setup() == 0);
	CHECK(start(2, &sp, &u) == 0);
	CHECK(append(u, 0, 1) == 0 && append(u, 1, 1) == 0 && append(u, 0, 2) == 0);
	upload_kick(u);
	CHECK(wait_unanswered(2));
	first = reqs[0].body[0] == '0' ? 0 : 1;
	CHECK_STR(reqs[first].body, "0.1 0.2");
	CHECK_STR(reqs[1 - first].body, "1.1");
	CHECK(answer(1 - first, 200) == 0);
	CHECK(answer(first, 500) == 0);
	CHECK(wait_unanswered(1));
	CHECK(upload_failing(u));
	CHECK_STR(reqs[2].body, "0.1 0.2");	/* the same records, after a backoff */
	/* labd stops before the answer: the restarted one sends stream 0 only */
	u = upload_free(u);
	sp = spool_close(sp);
	CHECK(start(2, &sp, &u) == 0);
	CHECK(upload_busy(u));
	upload_kick(u);
	CHECK(wait_unanswered(2));
	CHECK_INT(n_reqs, ==, 4);
	CHECK_STR(reqs[3].body, "0.1 0.2");
	CHECK(answer(3, 200) == 0);
	spin(100 * USEC_PER_MSEC);
	CHECK(!upload_busy(u));
	u = upload_free(u);
	sp = spool_close(sp);
	/* everything was answered: nothing comes again, and a channel count can change */
	CHECK(start(3, &sp, &u) == 0);
	CHECK(!upload_busy(u));
	upload_free(u);
	spool_close(sp);
	teardown();
}

/*
 * A request its backend cannot compose yet (-EAGAIN: a notify callback's
 * body being read): nothing is sent and nothing is a failure (no backoff)
 * until the backend kicks again.
 */
TEST(test_upload__compose_not_yet)
{
	struct spool *sp = NULL;
	struct upload *u = NULL;

	CHECK(setup() == 0);
	CHECK(start(1, &sp, &u) == 0);
	CHECK(append(u, 0, 1) == 0);
	not_yet = true;
	upload_kick(u);
	spin(300 * USEC_PER_MSEC);	/* past a backoff of retry_max_ms (100 ms) */
	not_yet = false;
	CHECK_INT(n_reqs, ==, 0);
	CHECK(!upload_failing(u));
	CHECK(upload_busy(u));
	upload_kick(u);
	CHECK(wait_unanswered(1));
	CHECK_STR(reqs[0].body, "0.1");
	CHECK(answer(0, 200) == 0);
	spin(100 * USEC_PER_MSEC);
	CHECK(!upload_busy(u));
	upload_free(u);
	spool_close(sp);
	teardown();
}

TEST_LIST(test_upload__in_flight_keeps_stream_order,
	  test_upload__retry_and_restart_exactly_once, test_upload__compose_not_yet);
