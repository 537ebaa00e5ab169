// SPDX-License-Identifier: GPL-2.0-or-later
/* test-power.c -- drivers/power.c and the command, fake and pdudaemon drivers, on a real loop */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <libconfig.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "drivers/power.h"
#include "tap.h"

#define WAIT_MAX (5 * USEC_PER_SEC)

/* One power object on its own loop, built from a libconfig text. */
struct fixture {
	struct loop *loop;
	struct http_client *http;
	config_t cf;
	struct power *p;
	struct diag diag;
	char dir[64];
	/* result of the last operation */
	int calls;
	int err;
	char msg[1024];
	char steps[256];	/* power_run_watched(): each step, with the log file then */
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
	memset(f, 0, sizeof(*f));
	f->diag = (struct diag)DIAG_INIT;
	config_init(&f->cf);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-power.XXXXXX");
	if (!mkdtemp(f->dir) || loop_new(&f->loop) < 0 || http_client_new(f->loop, &f->http) < 0)
		return -EIO;
	return 0;
}

/* Create f->p from the power group members @fmt..., for the board "sim-01". */
static int fixture_power(struct fixture *f, const char *driver, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fixture_power(struct fixture *f, const char *driver, const char *fmt, ...)
{
	struct driver_ctx ctx = { .loop = f->loop, .http = f->http, .device_name = "sim-01" };
	struct driver_config cfg = { .driver = (char *)driver, .file = "test.conf", .line = 1 };
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!config_read_string(&f->cf, text))
		return -EINVAL;
	cfg.settings = config_root_setting(&f->cf);
	return power_new(&cfg, &ctx, &f->p, &f->diag);
}

/* Both steps, for tests that need no directory in the settings. */
static int fixture_new(struct fixture *f, const char *driver, const char *text)
{
	int r = fixture_init(f);

	return r < 0 ? r : fixture_power(f, driver, "%s", text);
}

static void fixture_release(struct fixture *f)
{
	char cmd[128];

	f->p = power_free(f->p);
	f->http = http_client_free(f->http);
	f->loop = loop_free(f->loop);
	config_destroy(&f->cf);
	diag_release(&f->diag);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		printf("# cannot remove '%s'\n", f->dir);
}

/* The file @name in the fixture's directory, as text (static buffer). */
static char *fixture_file(struct fixture *f, const char *name)
{
	static char buf[4096];
	char path[128];
	size_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "r");
	if (!fp)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* Run the loop until the callback was called @n times in all, or WAIT_MAX passed. */
static int wait_calls(struct fixture *f, int n)
{
	uint64_t end = now_monotonic() + WAIT_MAX;

	while (f->calls < n && now_monotonic() < end)
		loop_run_once(f->loop, 20 * USEC_PER_MSEC);
	return f->calls == n;
}

static void spin(struct fixture *f, uint64_t usec)
{
	uint64_t end = now_monotonic() + usec;

	while (now_monotonic() < end)
		loop_run_once(f->loop, 10 * USEC_PER_MSEC);
}

static int run_op(struct fixture *f, enum power_op op)
{
	int n = f->calls + 1;

	if (power_run(f->p, op, on_done, f) < 0)
		return -1000;
	if (!wait_calls(f, n))
		return -1001;
	return f->err;
}

TEST(test_power__driver_table)
{
	const char *const *names = power_driver_names();
	int n = 0;

	for (; *names; names++, n++)
		CHECK(power_find_driver(*names) != NULL);
	CHECK_INT(n, >=, 3);
	CHECK_STR(power_find_driver("command")->name, "command");
	CHECK(power_find_driver("pdudaemon") != NULL);
	CHECK(power_find_driver("fake") != NULL);
	CHECK(power_find_driver("nosuch") == NULL);
	CHECK_STR(power_op_name(POWER_CYCLE), "cycle");
}

/* on, off, then a cycle without `reset`: off, the delay, on, observed in a file. */
TEST(test_power__command_emulated_cycle)
{
	struct fixture f;
	uint64_t t0;

	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "command",
			    "driver = \"command\"; on = \"echo on {DEVICE} >> %s/log\";"
			    " off = \"echo off >> %s/log\"; timeout = 5;", f.dir, f.dir) == 0);
	CHECK_INT(power_last_state(f.p), ==, -1);
	CHECK_INT(run_op(&f, POWER_ON), ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 1);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 0);
	power_set_cycle_delay(f.p, 300 * USEC_PER_MSEC);
	t0 = now_monotonic();
	CHECK_INT(run_op(&f, POWER_CYCLE), ==, 0);
	CHECK_INT(now_monotonic() - t0, >=, 300 * USEC_PER_MSEC);
	CHECK_INT(now_monotonic() - t0, <, 3 * USEC_PER_SEC);
	CHECK_INT(power_last_state(f.p), ==, 1);
	CHECK_STR(fixture_file(&f, "log"), "on sim-01\noff\noff\non sim-01\n");
	fixture_release(&f);
}

static void on_step(struct power *p, enum power_op step, void *userdata)
{
	struct fixture *f = userdata;
	const char *log = fixture_file(f, "log");
	size_t n = strlen(f->steps);

	snprintf(f->steps + n, sizeof(f->steps) - n, "[%s after '%s']", power_op_name(step),
		 log ? log : "");
}

static int run_watched(struct fixture *f, enum power_op op)
{
	int n = f->calls + 1;

	if (power_run_watched(f->p, op, on_done, on_step, f) < 0)
		return -1000;
	if (!wait_calls(f, n))
		return -1001;
	return f->err;
}

/* The steps of a cycle the core makes are told as they start; a native one has none. */
TEST(test_power__watched_cycle_steps)
{
	struct fixture f;

	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "command", "on = \"echo on >> %s/log\"; off = \"echo off >> %s/log\";",
			    f.dir, f.dir) == 0);
	power_set_cycle_delay(f.p, 10 * USEC_PER_MSEC);
	CHECK_INT(run_watched(&f, POWER_CYCLE), ==, 0);
	/* "on" starts once "off" is done (the board is off): what it sent before is stale */
	CHECK_STR(f.steps, "[off after ''][on after 'off\n']");
	CHECK_STR(fixture_file(&f, "log"), "off\non\n");
	f.steps[0] = '\0';
	CHECK_INT(run_watched(&f, POWER_ON), ==, 0);
	CHECK_STR(f.steps, "");
	fixture_release(&f);

	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "command",
			    "on = \"true\"; off = \"true\"; reset = \"echo reset >> %s/log\";",
			    f.dir) == 0);
	CHECK_INT(run_watched(&f, POWER_CYCLE), ==, 0);
	CHECK_STR(f.steps, "");
	CHECK_STR(fixture_file(&f, "log"), "reset\n");
	fixture_release(&f);
}

/* With `reset`, a cycle is that one command. */
TEST(test_power__command_native_reset)
{
	struct fixture f;

	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "command",
			    "on = \"echo on >> %s/log\"; off = \"echo off >> %s/log\";"
			    " reset = \"echo reset >> %s/log\";", f.dir, f.dir, f.dir) == 0);
	CHECK_INT(run_op(&f, POWER_CYCLE), ==, 0);
	CHECK_STR(fixture_file(&f, "log"), "reset\n");
	CHECK_INT(power_last_state(f.p), ==, 1);
	fixture_release(&f);
}

TEST(test_power__command_exit_status)
{
	struct fixture f;

	CHECK(fixture_new(&f, "command",
			  "on = \"true\"; off = \"echo trying; echo 'pdu-ctl: connection refused'"
			  " >&2; exit 2\";") == 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, -EIO);
	CHECK_STR(f.msg, "power off command 'echo trying; echo 'pdu-ctl: connection refused'"
		  " >&2; exit 2' exited with status 2: pdu-ctl: connection refused");
	CHECK_INT(power_last_state(f.p), ==, -1);
	/* no output at all */
	fixture_release(&f);
	CHECK(fixture_new(&f, "command", "on = \"exit 3\"; off = \"true\";") == 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, -EIO);
	CHECK_STR(f.msg, "power on command 'exit 3' exited with status 3");
	fixture_release(&f);
}

/*
 * A command of plain words runs without the shell.  Told by `printenv PWD`
 * with PWD unset in labd's environment: dash exports PWD to what it runs, so
 * through the shell the command prints it and succeeds, without it fails.
 */
TEST(test_power__command_plain_words)
{
	struct fixture f;

	unsetenv("PWD");
	CHECK(fixture_new(&f, "command", "on = \"printenv PWD\"; off = \"printenv PWD; true\";"
			  " reset = \"X=1 printenv X\";") == 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, -EIO);
	CHECK_STR(f.msg, "power on command 'printenv PWD' exited with status 1");
	/* a ';', an assignment: the shell's */
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(run_op(&f, POWER_CYCLE), ==, 0);
	fixture_release(&f);
	/* a program that is not there fails as the shell says it */
	CHECK(fixture_new(&f, "command", "on = \"no-such-labd-power-tool on 3\"; off = \"true\";")
	      == 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, -EIO);
	CHECK_CONTAINS(f.msg, "power on command 'no-such-labd-power-tool on 3' exited with status 127");
	CHECK_CONTAINS(f.msg, "not found");
	fixture_release(&f);
}

/* The command is killed with its whole process group when it takes too long. */
TEST(test_power__command_timeout_kills_group)
{
	struct fixture f;
	char proc[64], state = 0, *pid_text;
	uint64_t t0, end;
	FILE *fp;
	int pid;

	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "command",
			    "on = \"sleep 30 & echo $! > %s/pid; echo waiting; wait\";"
			    " off = \"true\"; timeout = 0.3;", f.dir) == 0);
	t0 = now_monotonic();
	CHECK_INT(run_op(&f, POWER_ON), ==, -ETIMEDOUT);
	CHECK_INT(now_monotonic() - t0, >=, 300 * USEC_PER_MSEC);
	CHECK_INT(now_monotonic() - t0, <, 2 * USEC_PER_SEC);
	CHECK_CONTAINS(f.msg, "power on command 'sleep 30 & echo $! > /tmp/test-power.");
	CHECK_CONTAINS(f.msg, "' timed out after 0.3 s: waiting");
	pid_text = fixture_file(&f, "pid");
	CHECK(pid_text);
	pid = atoi(pid_text);
	CHECK_INT(pid, >, 1);
	/* Gone, or a zombie waiting for init to reap it: no longer sleeping either way. */
	snprintf(proc, sizeof(proc), "/proc/%d/stat", pid);
	end = now_monotonic() + 2 * USEC_PER_SEC;
	do {
		fp = fopen(proc, "r");
		if (fp) {
			if (fscanf(fp, "%*d %*s %c", &state) != 1)
				state = '?';
			fclose(fp);
		}
		if (!fp || state == 'Z')
			break;
		usleep(20000);
	} while (now_monotonic() < end);
	CHECK(!fp || state == 'Z');
	fixture_release(&f);
}

TEST(test_power__busy_and_abort)
{
	struct fixture f;

	CHECK(fixture_new(&f, "command", "on = \"sleep 30\"; off = \"true\";") == 0);
	CHECK_INT(power_run(f.p, POWER_ON, on_done, &f), ==, 0);
	CHECK(power_is_busy(f.p));
	CHECK_INT(power_run(f.p, POWER_OFF, on_done, &f), ==, -EBUSY);
	spin(&f, 100 * USEC_PER_MSEC);
	power_abort(f.p);
	CHECK(!power_is_busy(f.p));
	spin(&f, 200 * USEC_PER_MSEC);
	CHECK_INT(f.calls, ==, 0);
	/* the power object is usable again */
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(f.calls, ==, 1);
	/* aborting a finished operation whose result was not delivered yet */
	CHECK_INT(power_run(f.p, POWER_OFF, on_done, &f), ==, 0);
	spin(&f, 0);
	power_abort(f.p);
	spin(&f, 300 * USEC_PER_MSEC);
	CHECK_INT(f.calls, ==, 1);
	fixture_release(&f);
}

/* The callback never runs inside power_run(), even when the driver is instant. */
TEST(test_power__completion_from_loop)
{
	struct fixture f;

	CHECK(fixture_new(&f, "fake", "driver = \"fake\";") == 0);
	CHECK_INT(power_run(f.p, POWER_ON, on_done, &f), ==, 0);
	CHECK_INT(f.calls, ==, 0);
	CHECK(wait_calls(&f, 1));
	CHECK_INT(f.err, ==, 0);
	CHECK_STR(f.msg, "");
	fixture_release(&f);
}

static void on_done_chain(struct power *p, int err, const char *msg, void *userdata)
{
	struct fixture *f = userdata;

	on_done(p, err, msg, userdata);
	if (f->calls == 1)
		f->err = power_run(p, POWER_OFF, on_done, f);
}

static void on_done_free(struct power *p, int err, const char *msg, void *userdata)
{
	struct fixture *f = userdata;

	on_done(p, err, msg, userdata);
	f->p = power_free(p);
}

/* A callback may start the next operation, or free the power object. */
TEST(test_power__run_from_callback)
{
	struct fixture f;

	CHECK(fixture_new(&f, "fake", "") == 0);
	CHECK_INT(power_run(f.p, POWER_ON, on_done_chain, &f), ==, 0);
	CHECK(wait_calls(&f, 2));
	CHECK_INT(f.err, ==, 0);
	CHECK_INT(power_last_state(f.p), ==, 0);
	CHECK_INT(power_run(f.p, POWER_ON, on_done_free, &f), ==, 0);
	CHECK(wait_calls(&f, 3));
	CHECK(f.p == NULL);
	spin(&f, 50 * USEC_PER_MSEC);
	fixture_release(&f);
}

TEST(test_power__fake_log_and_failure)
{
	struct fixture f;
	char *log;

	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "fake", "log = \"%s/power.log\"; fail = \"on\"; delay = 0.1;",
			    f.dir) == 0);
	power_set_cycle_delay(f.p, 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, -EIO);
	CHECK_STR(f.msg, "fake power on of 'sim-01' failed as configured");
	CHECK_INT(power_last_state(f.p), ==, -1);
	CHECK_INT(run_op(&f, POWER_CYCLE), ==, -EIO);
	log = fixture_file(&f, "power.log");
	CHECK(log);
	/* off, on failed, then the cycle: off, on failed; "<seconds>.<usec> <device> <op>" */
	CHECK(strstr(log, " sim-01 off\n"));
	CHECK(strstr(strstr(strstr(log, " sim-01 on failed\n") + 1, " sim-01 off\n"),
		     " sim-01 on failed\n"));
	CHECK_INT(log[10], ==, '.');
	CHECK_INT(log[17], ==, ' ');
	fixture_release(&f);
}

/* A driver that ignores the timeout is stopped by the core. */
TEST(test_power__core_timeout)
{
	struct fixture f;

	CHECK(fixture_new(&f, "fake", "delay = 30; timeout = 0.2;") == 0);
	CHECK_INT(run_op(&f, POWER_OFF), ==, -ETIMEDOUT);
	CHECK_STR(f.msg, "power off of 'sim-01' timed out after 0.2 s");
	CHECK(!power_is_busy(f.p));
	fixture_release(&f);
}

/*
 * A request of a step gets the driver's own limit or what is left of the step's
 * timeout, the less of the two; outside a step, the driver's limit.  (The 10 s
 * timeout, the core's timer at 11 s, stays far beyond the 50 ms the test waits.)
 */
TEST(test_power__request_timeout)
{
	struct fixture f;
	unsigned left;

	CHECK(fixture_new(&f, "fake", "delay = 30; timeout = 10;") == 0);
	CHECK_INT(power_request_timeout_ms(f.p, 5000), ==, 5000);
	CHECK_INT(power_run(f.p, POWER_ON, on_done, &f), ==, 0);
	/* no loop iteration yet: the clock has not moved since the step started */
	CHECK_INT(power_request_timeout_ms(f.p, 60000), ==, 10000);
	CHECK_INT(power_request_timeout_ms(f.p, 100), ==, 100);
	spin(&f, 50 * USEC_PER_MSEC);
	CHECK(power_is_busy(f.p));
	left = power_request_timeout_ms(f.p, 60000);
	CHECK_INT(left, <=, 9950);
	CHECK_INT(left, >, 0);
	power_abort(f.p);
	CHECK_INT(power_request_timeout_ms(f.p, 60000), ==, 60000);
	fixture_release(&f);
}

TEST(test_power__pdudaemon_unreachable)
{
	struct fixture f;

	/* port 1 on loopback: nothing listens there */
	CHECK(fixture_new(&f, "pdudaemon",
			  "url = \"http://127.0.0.1:1/\"; hostname = \"pdu01\"; port = 3;") == 0);
	CHECK_INT(run_op(&f, POWER_CYCLE), ==, -ECONNREFUSED);
	CHECK_STR(f.msg, "cannot reach pdudaemon at 'http://127.0.0.1:1': Connection refused");
	fixture_release(&f);
}

/* A daemon that accepts the connection but never answers: the request times out. */
TEST(test_power__pdudaemon_timeout)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sa);
	struct fixture f;
	char want[256];
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(fd, 4) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	CHECK(fixture_init(&f) == 0);
	CHECK(fixture_power(&f, "pdudaemon", "url = \"http://127.0.0.1:%d\"; alias = \"b1\";"
			    " timeout = 0.3;", ntohs(sa.sin_port)) == 0);
	CHECK_INT(run_op(&f, POWER_ON), ==, -ETIMEDOUT);
	snprintf(want, sizeof(want), "pdudaemon at 'http://127.0.0.1:%d' did not answer 'on'"
		 " for alias b1 within 0.3 s", ntohs(sa.sin_port));
	CHECK_STR(f.msg, want);
	close(fd);
	fixture_release(&f);
}

/* Problems are reported with the file and line of the setting. */
TEST(test_power__config_errors)
{
	static const char text[] =
		"a = { driver = \"command\"; bogus = 1;\n"
		"      on = \"\";\n"
		"      timeout = \"x\"; };\n"
		"b = { driver = \"pdudaemon\"; alias = \"board1\";\n"
		"      port = 3; delay = 1.5; };\n"
		"c = { driver = \"pdudaemon\"; hostname = \"pdu01\"; };\n"
		"d = { driver = \"fake\"; fail = \"sometimes\"; };\n";
	struct driver_config cfg = { .file = "boards.conf", .line = 9 };
	struct driver_ctx ctx = { .device_name = "sim-01" };
	struct diag diag = DIAG_INIT;
	char path[] = "/tmp/test-power-conf.XXXXXX", *all;
	struct power *p = NULL;
	config_t cf;
	FILE *fp;
	int fd;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	fp = fdopen(fd, "w");
	fputs(text, fp);
	fclose(fp);
	config_init(&cf);
	CHECK(config_read_file(&cf, path));
	unlink(path);

	cfg.driver = "nosuch";
	cfg.settings = config_lookup(&cf, "a");
	CHECK_INT(power_new(&cfg, &ctx, &p, &diag), ==, -EINVAL);
	cfg.driver = "command";
	CHECK_INT(power_new(&cfg, &ctx, &p, &diag), ==, -EINVAL);
	cfg.driver = "pdudaemon";
	cfg.settings = config_lookup(&cf, "b");
	CHECK_INT(power_new(&cfg, &ctx, &p, &diag), ==, -EINVAL);
	cfg.settings = config_lookup(&cf, "c");
	CHECK_INT(power_new(&cfg, &ctx, &p, &diag), ==, -EINVAL);
	cfg.driver = "fake";
	cfg.settings = config_lookup(&cf, "d");
	CHECK_INT(power_new(&cfg, &ctx, &p, &diag), ==, -EINVAL);
	CHECK(p == NULL);
	for (size_t i = 0; i < diag.n; i++)
		printf("# %s\n", diag.msgs[i]);
	all = diag_join(&diag);
	CHECK_CONTAINS(all, "boards.conf:9: unknown power driver 'nosuch' (one of: command,");
	CHECK_CONTAINS(all, ":1: unknown key 'bogus'");
	CHECK_CONTAINS(all, ":2: 'on' must not be empty");
	CHECK_CONTAINS(all, ":1: missing key 'off'");
	CHECK_CONTAINS(all, ":3: 'timeout' must be a number of seconds, not string");
	CHECK_CONTAINS(all, ":4: 'alias' cannot be combined with 'hostname' or 'port'");
	CHECK_CONTAINS(all, ":5: 'delay' must be an integer, not float");
	CHECK_CONTAINS(all, ":6: missing key 'port'");
	CHECK_CONTAINS(all, ":7: 'fail' must name \"on\" or \"off\", not 'sometimes'");
	CHECK_CONTAINS(all, "/tmp/test-power-conf.");
	free(all);
	diag_release(&diag);
	config_destroy(&cf);
}

/* check-config mode: no loop, no HTTP client; parsing works, running does not. */
TEST(test_power__without_loop)
{
	struct driver_config cfg = { .driver = "pdudaemon", .file = "x.conf", .line = 1 };
	struct driver_ctx ctx = { .device_name = "sim-01" };
	struct diag diag = DIAG_INIT;
	struct power *p = NULL;
	config_t cf;

	config_init(&cf);
	CHECK(config_read_string(&cf, "alias = \"board 1&2\";"));
	cfg.settings = config_root_setting(&cf);
	CHECK_INT(power_new(&cfg, &ctx, &p, &diag), ==, 0);
	CHECK_INT(power_run(p, POWER_ON, on_done, NULL), ==, -ENOTCONN);
	CHECK(!power_is_busy(p));
	CHECK_INT(power_last_state(p), ==, -1);
	CHECK_INT(power_timeout(p), ==, POWER_DEFAULT_TIMEOUT);
	power_free(p);
	config_destroy(&cf);
}

TEST_LIST(test_power__driver_table, test_power__command_emulated_cycle,
	  test_power__command_native_reset, test_power__watched_cycle_steps,
	  test_power__command_exit_status, test_power__command_plain_words,
	  test_power__command_timeout_kills_group, test_power__busy_and_abort,
	  test_power__completion_from_loop, test_power__run_from_callback,
	  test_power__fake_log_and_failure, test_power__core_timeout, test_power__request_timeout,
	  test_power__pdudaemon_unreachable, test_power__pdudaemon_timeout,
	  test_power__config_errors, test_power__without_loop);
