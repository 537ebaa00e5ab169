/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runbed.h -- a lab in the test's process: jobs run through the real
 * scheduler and runner on boards the test plays, in a loop stepped by the
 * test on a test clock (core/loop.h, loop_set_test_clock())
 *
 * Each board's console is a pseudo-terminal: labd opens its slave with the
 * console driver "pty", the test holds the master (read from the same loop)
 * and prints what the board would print.  Power is the driver "fake",
 * recording every operation in <dir>/<board>.power.  The store is SQLite in
 * a temporary directory (removed at exit), with the device types of
 * devices/sim.conf (sim-uboot, sim-minimal, sim-barebox, sim-depthcharge)
 * and what the test adds.
 *
 *	struct bed b;
 *	bed_init(&b, NULL);                       the directory, labd.conf
 *	bed_board(&b, "b1", "sim-uboot", NULL, NULL);  a board (its pty, its power log)
 *	bed_start(&b);                            loop, store, boards, scheduler
 *	id = bed_submit(&b, yaml);                queued; the board claims it
 *	bed_typed(&b, 0, "tftp ");                labd typed this on board 0
 *	bed_say(&b, 0, "=> ");                    board 0 prints a prompt
 *	bed_job_end(&b, id, &rec);                until the job finished
 *	bed_free(&b);
 *
 * Time: the loop's clock moves only when the test says so.  bed_until()
 * steps the loop until a condition holds; whenever nothing is left to do
 * (no source ready for BED_IDLE_WAIT of real time, no child process or HTTP
 * request of labd's in flight) it moves the clock to the next timer's
 * deadline, as if the board stayed silent until then.  So a wait of labd's
 * for a board that never answers ends with its timeout at once, and a test
 * that wants an answer on time gives it before asking for anything more.
 * bed_advance() moves the clock by a given time, firing the timers on the
 * way in order.
 *
 * bed_start_daemon() brings the same lab up as labd's daemon does (the
 * whole of daemon.c: API on a loopback port, sessions, backends) for the
 * API's tests; bed_http() then sends a request through libcurl in the
 * same loop.
 */
#ifndef LABD_RUNBED_H
#define LABD_RUNBED_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "board/board.h"
#include "board/lab.h"
#include "config/config.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "daemon.h"
#include "journal/events.h"
#include "overlay/overlay_files.h"
#include "run/run.h"
#include "sched/sched.h"
#include "store/store.h"

#define BED_MAX_BOARDS 4
#define BED_IDLE_WAIT (2 * USEC_PER_MSEC)	/* real time with nothing ready: idle */
#define BED_REAL_MAX (30 * USEC_PER_SEC)	/* real time one bed_until() may take */
#define BED_HORIZON (48 * 3600 * USEC_PER_SEC)	/* test time one bed_until() may pass */
#define BED_MAX_GRANTS 8

struct bed;

struct bed_board {
	struct bed *bed;
	char name[32];
	char type[32];
	int pty;		/* the master: the test is the board */
	char path[64];		/* the slave, labd's console */
	int slave;		/* the test's own fd on it: what labd has not read yet */
	struct strbuf typed;	/* what labd sent the board, not consumed yet */
	struct loop_source *src;
	struct board *board;	/* bed_start(): the board object */
};

struct bed {
	char dir[64];
	struct bed_board boards[BED_MAX_BOARDS];
	size_t n_boards;
	struct lab_config *cfg;
	struct loop *loop;
	struct http_client *http;
	struct store *store;
	struct events *events;
	struct overlay_files *overlays;
	struct lab lab;
	struct sched *sched;
	struct daemon *daemon;	/* bed_start_daemon() */
	/* reservations the scheduler granted (sched_deps.grant) */
	int64_t granted[BED_MAX_GRANTS];
	char granted_to[BED_MAX_GRANTS][32];
	size_t n_granted;
};

static inline int bed_remove_entry(const char *path, const struct stat *sb, int flag,
				   struct FTW *ftw)
{
	return remove(path);
}

/* bed_path() - @rel below the bed's directory (a static buffer per call site's use). */
static inline const char *bed_path(struct bed *b, const char *rel)
{
	static char buf[4][512];
	static unsigned n;
	char *p = buf[n++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", b->dir, rel);
	return p;
}

/* bed_file() - write @text into @rel below the bed's directory. */
static inline int bed_file(struct bed *b, const char *rel, const char *text)
{
	FILE *f = fopen(bed_path(b, rel), "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

/* bed_read() - the whole of file @path, NUL-terminated (caller frees), or NULL. */
static inline char *bed_read(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	if (!sb.buf)
		return strdup("");
	return strbuf_detach(&sb, NULL);
}

/*
 * bed_init() - the bed's directory: labd.conf (with @conf added to it: a
 * `store`, `users`, `http` group ...), devices/00-sim.conf, artifacts/ (the
 * lab's artifact_dir: file:// URLs below it are allowed).
 */
static inline int bed_init(struct bed *b, const char *conf)
{
	const char *top = getenv("LABD_TOP");
	char cmd[1024];

	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/runbed.XXXXXX");
	if (!mkdtemp(b->dir))
		return -errno;
	if (mkdir(bed_path(b, "devices"), 0755) < 0 || mkdir(bed_path(b, "artifacts"), 0755) < 0 ||
	    mkdir(bed_path(b, "state"), 0755) < 0 || mkdir(bed_path(b, "state/tftp"), 0755) < 0)
		return -errno;
	snprintf(cmd, sizeof(cmd), "cp %s/devices/sim.conf %s", top ? top : ".",
		 bed_path(b, "devices/00-sim.conf"));
	if (system(cmd) != 0)
		return -EIO;
	snprintf(cmd, sizeof(cmd), "lab_name = \"bed\";\nstate_dir = \"state\";\n"
		 "devices_dir = \"devices\";\nartifact_dir = \"artifacts\";\n%s\n", conf ? conf : "");
	return bed_file(b, "labd.conf", cmd);
}

/*
 * bed_board() - a board @name of device type @type, before bed_start(): its
 * pty, and its device file.  @power is its power group (NULL: the fake
 * driver, logging to <dir>/<name>.power; "": no power control); @keys are
 * added to the device (tags, parameters ...).  Returns its index, or a
 * negative errno.
 */
static inline int bed_board(struct bed *b, const char *name, const char *type, const char *power,
			    const char *keys)
{
	struct bed_board *bb = &b->boards[b->n_boards];
	char text[4096], fake[512], rel[64];

	if (b->n_boards == BED_MAX_BOARDS)
		return -E2BIG;
	bb->bed = b;
	snprintf(bb->name, sizeof(bb->name), "%s", name);
	snprintf(bb->type, sizeof(bb->type), "%s", type);
	strbuf_init(&bb->typed);
	bb->pty = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	bb->slave = -1;
	if (bb->pty < 0 || grantpt(bb->pty) < 0 || unlockpt(bb->pty) < 0 ||
	    ptsname_r(bb->pty, bb->path, sizeof(bb->path)))
		return -errno;
	bb->slave = open(bb->path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (bb->slave < 0)
		return -errno;
	snprintf(fake, sizeof(fake), "power = { driver = \"fake\"; log = \"%s/%s.power\"; };",
		 b->dir, name);
	snprintf(text, sizeof(text),
		 "device = { name = \"%s\"; type = \"%s\";\n"
		 "  console = { driver = \"pty\"; path = \"%s\"; };\n  %s\n%s\n};\n",
		 name, type, bb->path, power ? power : fake, keys ? keys : "");
	snprintf(rel, sizeof(rel), "devices/10-%s.conf", name);
	if (bed_file(b, rel, text) < 0)
		return -EIO;
	return (int)b->n_boards++;
}

/* ---- the lab as the modules see it (board/lab.h) ---- */

static inline const struct lab_config *bed_lab_config(void *ud)
{
	return ((struct bed *)ud)->cfg;
}

static inline const struct users *bed_lab_users(void *ud)
{
	return NULL;
}

static inline struct board **bed_lab_boards(void *ud, size_t *ret_n)
{
	static struct board *list[BED_MAX_BOARDS];
	struct bed *b = ud;
	size_t i;

	for (i = 0; i < b->n_boards; i++)
		list[i] = b->boards[i].board;
	*ret_n = b->n_boards;
	return list;
}

static inline struct board *bed_lab_board(void *ud, const char *name)
{
	struct bed *b = ud;
	size_t i;

	for (i = 0; i < b->n_boards; i++)
		if (!strcmp(b->boards[i].name, name))
			return b->boards[i].board;
	return NULL;
}

static inline void bed_board_changed(struct board *board, void *ud)
{
	struct bed *b = ud;

	if (b->sched)
		sched_board_changed(b->sched, board);
}

static inline void bed_grant(const struct reservation_record *rec, struct board *board,
			     void *ud)
{
	struct bed *b = ud;

	if (b->n_granted == BED_MAX_GRANTS)
		return;
	b->granted[b->n_granted] = rec->id;
	snprintf(b->granted_to[b->n_granted], sizeof(b->granted_to[0]), "%s", board_name(board));
	b->n_granted++;
}

/* What labd typed on a board's console: kept until a bed_typed() consumes it. */
static inline int bed_on_console(struct loop_source *s, int fd, uint32_t revents, void *ud)
{
	struct bed_board *bb = ud;
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&bb->typed, buf, (size_t)n);
	if (n < 0 && errno == EIO)	/* labd closed its end: nothing until it opens again */
		loop_io_set_events(s, 0);
	return 0;
}

static inline int bed_watch_consoles(struct bed *b)
{
	size_t i;
	int err;

	for (i = 0; i < b->n_boards; i++) {
		err = loop_add_io(b->loop, &b->boards[i].src, b->boards[i].pty, EPOLLIN,
				  bed_on_console, &b->boards[i]);
		if (err < 0)
			return err;
	}
	loop_set_test_clock(b->loop, loop_now(b->loop));
	return 0;
}

static inline int bed_load_config(struct bed *b)
{
	struct diag diag = DIAG_INIT;
	int err = config_load(bed_path(b, "labd.conf"), &b->cfg, &diag);

	for (size_t i = 0; i < diag.n; i++)
		printf("# %s\n", diag.msgs[i]);
	diag_release(&diag);
	return err;
}

static inline int bed_start_boards(struct bed *b)
{
	struct board_deps deps = { .loop = b->loop, .http = b->http, .store = b->store,
				   .changed = bed_board_changed, .userdata = b };
	size_t i;
	int err;

	for (i = 0; i < b->n_boards; i++) {
		const struct device *dev = config_find_device(b->cfg, b->boards[i].name);

		err = dev ? board_new(&deps, b->cfg, dev, &b->boards[i].board) : -ENOENT;
		if (!err)
			err = board_start(b->boards[i].board);
		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * bed_start() - the lab's modules as daemon.c wires them, but for the API
 * and the sessions: loop (on the test clock), HTTP client, store, events,
 * overlays, the boards, the scheduler, which recovers what was left
 * running (sched_recover()).  Returns 0 or a negative errno.
 */
static inline int bed_start(struct bed *b)
{
	struct store_params sp = { .state_dir = bed_path(b, "state") };
	struct diag diag = DIAG_INIT;
	struct sched_deps sd;
	int err;

	b->lab = (struct lab){ .config = bed_lab_config, .users = bed_lab_users,
			       .boards = bed_lab_boards, .board = bed_lab_board, .userdata = b };
	err = bed_load_config(b);
	if (!err)
		err = loop_new(&b->loop);
	if (!err)
		err = bed_watch_consoles(b);
	if (!err)
		err = http_client_new(b->loop, &b->http);
	sp.loop = b->loop;
	if (!err)
		err = store_open(&sp, &b->store, &diag);
	diag_release(&diag);
	if (!err)
		err = events_new(b->store, &b->events);
	if (!err)
		err = overlay_files_new(&b->overlays);
	if (!err)
		err = bed_start_boards(b);
	sd = (struct sched_deps){
		.run = { .loop = b->loop, .http = b->http, .store = b->store, .events = b->events,
			 .config = b->cfg, .overlays = b->overlays },
		.lab = &b->lab,
		.grant = bed_grant,
		.userdata = b,
	};
	if (!err)
		err = sched_new(&sd, &b->sched);
	if (!err)
		err = sched_recover(b->sched);	/* what a bed_stop() left running */
	if (!err)
		sched_kick(b->sched);
	return err;
}

/*
 * bed_start_daemon() - the lab as labd runs it (daemon_new()): the API on
 * 127.0.0.1 (a free port), the sessions, backends, retention.  The bed's
 * store and scheduler are the daemon's own then: not in struct bed.
 */
static inline int bed_start_daemon(struct bed *b)
{
	struct daemon_options o = { .config_path = bed_path(b, "labd.conf"),
				    .listen = "127.0.0.1:0" };
	struct diag diag = DIAG_INIT;
	int err = daemon_new(&o, &b->daemon, &diag);

	for (size_t i = 0; i < diag.n; i++)
		printf("# %s\n", diag.msgs[i]);
	diag_release(&diag);
	if (err < 0)
		return err;
	b->loop = daemon_loop(b->daemon);
	err = bed_watch_consoles(b);
	if (!err)
		err = http_client_new(b->loop, &b->http);
	return err;
}

/*
 * bed_stop() - labd's modules down, as when labd stops (or dies: a running
 * job is left running in the store, its board powered); the directory and
 * the boards' ptys stay, for bed_start() again.
 */
static inline void bed_stop(struct bed *b)
{
	size_t i;

	b->http = http_client_free(b->http);
	for (i = 0; i < b->n_boards && b->loop; i++)
		b->boards[i].src = loop_source_free(b->boards[i].src);
	if (b->daemon) {
		b->daemon = daemon_free(b->daemon);	/* its loop too */
	} else {
		b->sched = sched_free(b->sched);
		for (i = 0; i < b->n_boards; i++)
			b->boards[i].board = board_unref(b->boards[i].board);
		b->overlays = overlay_files_free(b->overlays);
		b->events = events_free(b->events);
		b->store = store_close(b->store);
		loop_free(b->loop);
	}
	b->loop = NULL;
	b->cfg = config_unref(b->cfg);
}

static inline void bed_free(struct bed *b)
{
	size_t i;

	bed_stop(b);
	for (i = 0; i < b->n_boards; i++) {
		strbuf_release(&b->boards[i].typed);
		if (b->boards[i].pty >= 0)
			close(b->boards[i].pty);
		if (b->boards[i].slave >= 0)
			close(b->boards[i].slave);
	}
	if (!getenv("KEEP_TMP"))
		nftw(b->dir, bed_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	memset(b, 0, sizeof(*b));
}

#define BED_MARK "\xff\xfe" "bed" "\xfd"	/* bed_flush_console()'s marker: never typed */

/* bed_console_wait() - a short real-time wait for a pty's bytes to move. */
static inline void bed_console_wait(void)
{
	usleep(50);
}

/*
 * bed_flush_console() - what labd wrote on board @bb's console, to the
 * test's buffer: a pty moves bytes from one end to the other after the
 * write returned (the kernel's flip buffer work), so the test writes a
 * marker after them from its own fd on the slave and reads the master up
 * to it (labd writes nothing meanwhile: it runs only in loop_run_once()).
 * Returns whether labd had written something not read yet.
 */
static inline bool bed_flush_console(struct bed_board *bb)
{
	const size_t mlen = sizeof(BED_MARK) - 1;
	size_t before = bb->typed.len;
	char buf[4096];
	unsigned tries;
	ssize_t n;

	if (bb->pty < 0 || bb->slave < 0 || write(bb->slave, BED_MARK, mlen) != (ssize_t)mlen)
		return false;
	for (tries = 0; tries < 200000; tries++) {
		n = read(bb->pty, buf, sizeof(buf));
		if (n > 0)
			strbuf_add(&bb->typed, buf, (size_t)n);
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return false;
		else
			bed_console_wait();
		if (bb->typed.len >= before + mlen &&
		    !memcmp(bb->typed.buf + bb->typed.len - mlen, BED_MARK, mlen)) {
			bb->typed.len -= mlen;
			bb->typed.buf[bb->typed.len] = '\0';
			return bb->typed.len > before;
		}
	}
	printf("# board %s: the console's marker never came back\n", bb->name);
	return false;
}

/*
 * Whether labd has work in flight outside the loop: a child process, a
 * request of its HTTP client (bed_start(): b->http is labd's, for downloads;
 * with bed_start_daemon() it is the test's, whose requests labd answers in
 * the loop: they do not hold the clock), console bytes on their way to the
 * test (now read).
 */
static inline bool bed_busy(struct bed *b)
{
	siginfo_t si = { 0 };
	bool busy = false;
	size_t i;

	for (i = 0; i < b->n_boards; i++)
		busy = bed_flush_console(&b->boards[i]) || busy;
	if (busy || (!b->daemon && b->http && http_client_active(b->http)))
		return true;
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/*
 * bed_until() - step the loop until @cond(@ud) holds, moving the clock to
 * the next timer whenever labd is idle (see the top).  Returns true, or
 * false when nothing is left to happen, BED_HORIZON of test time or
 * BED_REAL_MAX of real time passed.
 */
static inline bool bed_until(struct bed *b, bool (*cond)(struct bed *b, void *ud), void *ud)
{
	uint64_t horizon = loop_now(b->loop) + BED_HORIZON, real_end = now_monotonic() + BED_REAL_MAX;

	while (now_monotonic() < real_end) {
		uint64_t next;

		if (cond(b, ud))
			return true;
		if (loop_run_once(b->loop, 0) > 0)
			continue;
		if (loop_run_once(b->loop, BED_IDLE_WAIT) > 0 || cond(b, ud) || bed_busy(b))
			continue;
		next = loop_next_timer(b->loop);
		if (next > horizon)
			return false;
		loop_set_test_clock(b->loop, next);
	}
	printf("# bed_until: still waiting after %llu s of real time\n",
	       (unsigned long long)(BED_REAL_MAX / USEC_PER_SEC));
	return false;
}

static inline bool bed_never(struct bed *b, void *ud)
{
	return false;
}

/*
 * bed_advance() - move the clock by @usec, firing the timers on the way in
 * the order of their deadlines, labd settling after each.
 */
static inline void bed_advance(struct bed *b, uint64_t usec)
{
	uint64_t end = loop_now(b->loop) + usec;

	for (;;) {
		uint64_t next;

		while (loop_run_once(b->loop, 0) > 0 || loop_run_once(b->loop, BED_IDLE_WAIT) > 0 ||
		       bed_busy(b))
			;
		next = loop_next_timer(b->loop);
		if (next > end)
			break;
		loop_set_test_clock(b->loop, next);
	}
	loop_set_test_clock(b->loop, end);
	while (loop_run_once(b->loop, 0) > 0)
		;
}

/* bed_settle() - run what is ready now, without moving the clock. */
static inline void bed_settle(struct bed *b)
{
	bed_advance(b, 0);
}

/* ---- the boards' side ---- */

struct bed_wait_text {
	struct bed_board *bb;
	const char *text;
};

static inline bool bed_has_typed(struct bed *b, void *ud)
{
	struct bed_wait_text *w = ud;

	return w->bb->typed.len && memmem(w->bb->typed.buf, w->bb->typed.len, w->text,
					  strlen(w->text));
}

/*
 * bed_typed() - until labd typed @text on board @i's console; what it typed
 * up to the end of @text is consumed.  Returns false (and says what it got)
 * when it never came.
 */
static inline bool bed_typed(struct bed *b, size_t i, const char *text)
{
	struct bed_wait_text w = { &b->boards[i], text };
	struct strbuf *t = &b->boards[i].typed;
	const char *at;

	if (!bed_until(b, bed_has_typed, &w)) {
		printf("# board %s: '%s' never typed; got '%.*s'\n", b->boards[i].name, text,
		       (int)t->len, t->buf ? t->buf : "");
		return false;
	}
	at = memmem(t->buf, t->len, text, strlen(text));
	strbuf_consume(t, (size_t)(at - t->buf) + strlen(text));
	return true;
}

static inline bool bed_has_line(struct bed *b, void *ud)
{
	struct bed_board *bb = ud;

	return bb->typed.len && memchr(bb->typed.buf, '\n', bb->typed.len);
}

/*
 * bed_line() - until labd typed a whole line on board @i: the line, without
 * its '\n' (a static buffer), consumed; NULL when none came.
 */
static inline const char *bed_line(struct bed *b, size_t i)
{
	static char line[4096];
	struct strbuf *t = &b->boards[i].typed;
	size_t n;

	if (!bed_until(b, bed_has_line, &b->boards[i])) {
		printf("# board %s: no line typed; got '%.*s'\n", b->boards[i].name, (int)t->len,
		       t->buf ? t->buf : "");
		return NULL;
	}
	n = (size_t)((char *)memchr(t->buf, '\n', t->len) - t->buf);
	snprintf(line, sizeof(line), "%.*s", (int)n, t->buf);
	strbuf_consume(t, n + 1);
	return line;
}

/* bed_forget_typed() - drop what labd typed on board @i so far. */
static inline void bed_forget_typed(struct bed *b, size_t i)
{
	strbuf_reset(&b->boards[i].typed);
}

/*
 * bed_send() - board @i prints @len bytes of @data: written to the pty, and
 * back once they are all in labd's end of it (a pty moves them after the
 * write returned), so that labd reads them at its next step.  Big outputs
 * go in pieces, labd reading each.
 */
static inline int bed_send(struct bed *b, size_t i, const char *data, size_t len)
{
	struct bed_board *bb = &b->boards[i];
	int queued, want;
	unsigned tries;
	ssize_t n;

	while (len) {
		if (ioctl(bb->slave, FIONREAD, &queued) < 0)
			return -errno;
		if (queued > 2048) {	/* labd reads some first */
			loop_run_once(b->loop, BED_IDLE_WAIT);
			continue;
		}
		n = write(bb->pty, data, len < 2048 ? len : 2048);
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if (n <= 0) {
			loop_run_once(b->loop, BED_IDLE_WAIT);
			continue;
		}
		want = queued + (int)n;
		for (tries = 0; queued < want && tries < 200000; tries++) {
			bed_console_wait();
			if (ioctl(bb->slave, FIONREAD, &queued) < 0)
				return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* bed_say() - board @i prints @fmt (printf-like); labd reads it at its next step. */
static inline int bed_say(struct bed *b, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int bed_say(struct bed *b, size_t i, const char *fmt, ...)
{
	char *text;
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	err = bed_send(b, i, text, (size_t)n);
	free(text);
	return err;
}

/* bed_power_log() - board @i's power operations: "on\n", "off\n" ... (caller frees). */
static inline char *bed_power_log(struct bed *b, size_t i)
{
	char rel[64], *raw, *out, *line, *save = NULL;
	struct strbuf sb = STRBUF_INIT;

	snprintf(rel, sizeof(rel), "%s.power", b->boards[i].name);
	raw = bed_read(bed_path(b, rel));
	for (line = raw ? strtok_r(raw, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		const char *op = strchr(line, ' ') ? strchr(strchr(line, ' ') + 1, ' ') : NULL;

		if (op)
			strbuf_addf(&sb, "%s\n", op + 1);
	}
	free(raw);
	out = strbuf_detach(&sb, NULL);
	return out ? out : strdup("");
}

struct bed_wait_power {
	struct bed *b;
	size_t i;
	unsigned n;	/* "on" operations wanted */
};

static inline bool bed_has_power_on(struct bed *b, void *ud)
{
	struct bed_wait_power *w = ud;
	char *log = bed_power_log(b, w->i), *p;
	unsigned n = 0;

	for (p = log; (p = strstr(p, "on\n")); p += 3)
		n += p == log || p[-1] == '\n';
	free(log);
	return n >= w->n;
}

/* bed_powered_on() - until board @i was powered on @n times in all. */
static inline bool bed_powered_on(struct bed *b, size_t i, unsigned n)
{
	struct bed_wait_power w = { b, i, n };

	return bed_until(b, bed_has_power_on, &w);
}

/* ---- jobs ---- */

/* bed_submit() - queue job @yaml (sched_submit()); its id, or -1 with the reasons printed. */
static inline int64_t bed_submit(struct bed *b, const char *yaml)
{
	struct diag diag = DIAG_INIT;
	int64_t id = -1;

	if (sched_submit(b->sched, yaml, strlen(yaml), "job.yaml", JOB_FORMAT_YAML, "bed", &id,
			 &diag) < 0) {
		for (size_t i = 0; i < diag.n; i++)
			printf("# %s\n", diag.msgs[i]);
		id = -1;
	}
	diag_release(&diag);
	return id;
}

struct bed_wait_job {
	int64_t id;
	enum job_state state;
};

static inline bool bed_job_in_state(struct bed *b, void *ud)
{
	struct bed_wait_job *w = ud;
	struct job_record rec = { 0 };
	bool in = store_job_get(b->store, w->id, &rec) == 0 && rec.state == w->state;

	job_record_release(&rec);
	return in;
}

/* bed_job_reaches() - until job @id is in @state (in the store). */
static inline bool bed_job_reaches(struct bed *b, int64_t id, enum job_state state)
{
	struct bed_wait_job w = { id, state };

	return bed_until(b, bed_job_in_state, &w);
}

/*
 * bed_job_end() - until job @id finished; its record in @rec (release it
 * with job_record_release()).  Returns false when it did not finish.
 */
static inline bool bed_job_end(struct bed *b, int64_t id, struct job_record *rec)
{
	bool done = bed_job_reaches(b, id, JOB_STATE_FINISHED);

	memset(rec, 0, sizeof(*rec));
	if (store_job_get(b->store, id, rec) < 0)
		return false;
	if (!done)
		printf("# job %lld: still %s\n", (long long)id, job_state_name(rec->state));
	return done;
}

/*
 * bed_job_ends() - until job @id finished: whether it ended with @health,
 * and (unless NULL) error type @type and a message containing @msg; what it
 * ended with is said when not.
 */
static inline bool bed_job_ends(struct bed *b, int64_t id, const char *health, const char *type,
				const char *msg)
{
	struct job_record rec;
	bool ok;

	if (!bed_job_end(b, id, &rec)) {
		job_record_release(&rec);
		return false;
	}
	ok = !strcmp(job_health_name(rec.health), health) &&
	     (!type || !strcmp(error_type_name(rec.error_type), type)) &&
	     (!msg || (rec.error_msg && strstr(rec.error_msg, msg)));
	if (!ok)
		printf("# job %lld: %s, %s: %s\n", (long long)id, job_health_name(rec.health),
		       error_type_name(rec.error_type), rec.error_msg ? rec.error_msg : "-");
	job_record_release(&rec);
	return ok;
}

/* bed_job_file() - file @name of job @id's log directory (caller frees), or NULL. */
static inline char *bed_job_file(struct bed *b, int64_t id, const char *name)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "state/jobs/%lld/%s", (long long)id, name);
	return bed_read(bed_path(b, rel));
}

/* bed_labd_log() - labd's lines about job @id (labd.log; caller frees). */
static inline char *bed_labd_log(struct bed *b, int64_t id)
{
	return bed_job_file(b, id, "labd.log");
}

/*
 * bed_labd_says() - whether labd's lines about job @id (labd.log) hold
 * @text; when not, they are shown.
 */
static inline bool bed_labd_says(struct bed *b, int64_t id, const char *text)
{
	char *log = bed_labd_log(b, id);
	bool says = log && strstr(log, text);

	if (!says)
		printf("# labd.log of job %lld:\n%s", (long long)id, log ? log : "(none)\n");
	free(log);
	return says;
}

/* One result, as "suite.name=result" lines, for CHECK_CONTAINS. */
static inline int bed_add_result(const struct result_record *rec, void *ud)
{
	strbuf_addf(ud, "%s.%s=%s\n", rec->suite, rec->name, rec->result);
	return 0;
}

/* bed_results() - job @id's results, "suite.name=result\n" each (caller frees). */
static inline char *bed_results(struct bed *b, int64_t id)
{
	struct strbuf sb = STRBUF_INIT;
	char *out;

	store_result_list(b->store, id, bed_add_result, &sb);
	out = strbuf_detach(&sb, NULL);
	return out ? out : strdup("");
}

/* One event as "kind" or "kind:data" lines. */
static inline int bed_add_event(const struct event_record *rec, void *ud)
{
	strbuf_addf(ud, "%s %s\n", rec->kind, rec->data ? rec->data : "");
	return 0;
}

/* bed_events() - job @id's events, "kind {data}\n" each (caller frees). */
static inline char *bed_events(struct bed *b, int64_t id)
{
	struct strbuf sb = STRBUF_INIT;
	char *out;

	store_event_list(b->store, id, 0, bed_add_event, &sb);
	out = strbuf_detach(&sb, NULL);
	return out ? out : strdup("");
}

/* bed_run() - the run of job @id while it runs, else NULL. */
static inline struct run *bed_run(struct bed *b, int64_t id)
{
	return sched_run_of(b->sched, id);
}

/* ---- HTTP, for bed_start_daemon() ---- */

struct bed_response {
	bool done;
	long status;
	char *body;		/* NUL-terminated, once done; bed_response_release() */
	char *type;		/* Content-Type, Allow and WWW-Authenticate, or NULL */
	char *allow;
	char *auth;
	struct strbuf got;	/* the body as it comes (a followed log, events) */
	struct http_request *req;	/* while in flight: bed_http_cancel() */
};

static inline void bed_response_release(struct bed_response *r)
{
	free(r->body);
	free(r->type);
	free(r->allow);
	free(r->auth);
	strbuf_release(&r->got);
	memset(r, 0, sizeof(*r));
}

static inline char *bed_header(struct http_request *req, const char *name)
{
	const char *v = http_request_header(req, name);

	return v ? strdup(v) : NULL;
}

static inline int bed_on_head(struct http_request *req, long status, void *ud)
{
	struct bed_response *r = ud;

	r->type = bed_header(req, "Content-Type");
	r->allow = bed_header(req, "Allow");
	r->auth = bed_header(req, "WWW-Authenticate");
	return 0;
}

static inline int bed_on_body(const void *buf, size_t len, void *ud)
{
	struct bed_response *r = ud;

	return strbuf_add(&r->got, buf, len);
}

static inline void bed_on_response(struct http_request *req, const struct http_response *resp,
				   void *ud)
{
	struct bed_response *r = ud;

	r->done = true;
	r->req = NULL;
	r->status = resp->status;
	r->body = strndup(r->got.buf ? r->got.buf : "", r->got.len);
}

static inline bool bed_response_done(struct bed *b, void *ud)
{
	return ((struct bed_response *)ud)->done;
}

/*
 * bed_http_start() - send @method @path (on the daemon's API) with @body
 * (NULL: none) and @headers (NULL-terminated "Name: value" list, or NULL),
 * and return: the answer comes in @resp as labd steps (resp->got as it
 * arrives, resp->done at its end; bed_response_release() it).
 */
static inline bool bed_http_start(struct bed *b, const char *method, const char *path,
				  const char *body, const char *const *headers,
				  struct bed_response *resp)
{
	char url[512];
	struct http_request_opts o = { .method = method, .url = url, .headers = headers,
				       .body = body, .body_len = body ? strlen(body) : 0,
				       .head = bed_on_head, .data = bed_on_body,
				       .timeout = HTTP_NO_TIMEOUT };

	memset(resp, 0, sizeof(*resp));
	strbuf_init(&resp->got);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", daemon_api_port(b->daemon), path);
	return http_request_start(b->http, &o, bed_on_response, resp, &resp->req) == 0;
}

/* bed_http_cancel() - give up a request in flight (a stream that never ends). */
static inline void bed_http_cancel(struct bed_response *resp)
{
	http_request_cancel(resp->req);
	resp->req = NULL;
}

/*
 * bed_http() - bed_http_start(), then until the answer came whole.  Returns
 * false when it never came.
 */
static inline bool bed_http(struct bed *b, const char *method, const char *path,
			    const char *body, const char *const *headers,
			    struct bed_response *resp)
{
	if (!bed_http_start(b, method, path, body, headers, resp))
		return false;
	return bed_until(b, bed_response_done, resp);
}

#endif
