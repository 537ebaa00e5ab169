// SPDX-License-Identifier: GPL-2.0-or-later
/* qemu.c -- power driver "qemu": power on starts the device type's QEMU, power off kills it */
/*
 * Board definition (the device type carries the `qemu` group):
 *
 *	console = { driver = "qemu"; };
 *	power = { driver = "qemu"; timeout = 10; };	// timeout optional, seconds
 *
 * Power on starts QEMU (the board builds its argv from the device type, the
 * running job's allowed variables and the serial line: driver_ctx.qemu_argv,
 * config/qemu_cmdline.h) as a child of labd watched through a pidfd; it is
 * on as soon as QEMU runs, and its serial line has been connected since
 * before it started (qemu_line.h).
 * Power off sends SIGTERM, then SIGKILL after QEMU_KILL_GRACE, and is done
 * when the loop has reaped QEMU.  Cycle is off then on, with no delay.  On
 * when QEMU runs and off when it does not are no-ops, as with a PDU.
 *
 * QEMU writes what it sends on the serial line to qemu-serial.log in the
 * board's directory, except for a job with secrets (POWER_VAR_SECRETS): the
 * board's own log has the bytes, masked (board_set_mask()).
 *
 * QEMU's stdout and stderr go to a pipe read by the loop; the last
 * CHILD_OUTPUT_MAX bytes are kept so that a failure quotes QEMU's last line:
 * "qemu exited with status 1: qemu-system-x86_64: -kernel /x: No such file".
 * QEMU dying on its own takes the console down with that reason (a running
 * job ends with it; the board is not marked bad); a clean exit (the guest
 * powered off under -no-reboot) leaves the board off and silent, like a real
 * board that shut itself down.  Power operations fail only when QEMU cannot
 * be started at all (no such binary, a command line the type cannot build).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/child.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"
#include "drivers/qemu_line.h"

#define QEMU_KILL_GRACE (3 * USEC_PER_SEC)	/* SIGTERM to SIGKILL */
#define QEMU_REASON_MAX 300		/* bytes of its last line quoted in a reason */
#define QEMU_SERIAL_FD 3		/* where QEMU finds its serial line */
#define QEMU_SERIAL_LOG "qemu-serial.log"	/* chardev logfile in the board's directory */
#define QEMU_ERR_MAX 1024
#define QEMU_SETPRIV "/usr/bin/setpriv"	/* util-linux: --pdeathsig */

enum qemu_state {
	QEMU_OFF,
	QEMU_RUNNING,
	QEMU_STOPPING,	/* SIGTERM sent, waiting for the exit */
};

struct qemu {
	struct qemu_line *line;
	enum qemu_state state;
	bool pending;		/* an operation waits for power_complete() */
	enum power_op op;
	int result;		/* what the done timer reports */
	char *reason;
	pid_t pid;
	struct loop_source *child;
	struct loop_source *done;	/* completes the operation from the loop */
	struct loop_source *kill;	/* SIGKILL after the grace */
	struct child_output out;	/* QEMU's stdout and stderr */
};

static const char *qemu_name(struct power *p)
{
	return power_ctx(p)->device_name ? power_ctx(p)->device_name : "-";
}

static int qemu_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = { POWER_COMMON_KEYS, NULL };
	struct qemu *q = power_priv(p);
	int r;

	child_output_init(&q->out);
	r = cfg_check_keys(s, known, diag);
	if (r < 0)
		return r;
	return qemu_line_get(power_ctx(p), &q->line);
}

/* ---- completion ---- */

static void qemu_complete_later(struct power *p, int err, const char *reason)
{
	struct qemu *q = power_priv(p);

	q->result = err;
	free(q->reason);
	q->reason = reason ? strdup(reason) : NULL;
	loop_timer_set_rel(q->done, 0);
}

static int qemu_on_done(struct loop_source *s, uint64_t now, void *userdata)
{
	struct power *p = userdata;
	struct qemu *q = power_priv(p);

	if (!q->pending)
		return 0;
	q->pending = false;
	power_complete(p, q->result, "%s", q->reason ? q->reason : "");
	return 0;
}

/* "qemu exited with status 1: <last line>" from waitid()'s @code and @status. */
static void qemu_describe_exit(const struct qemu *q, int code, int status, char *buf,
			       size_t size)
{
	char line[QEMU_REASON_MAX + 1];
	const char *sep;

	child_output_last_line(&q->out, line, sizeof(line));
	sep = *line ? ": " : "";
	if (code == CLD_EXITED)
		snprintf(buf, size, "qemu exited with status %d%s%s", status, sep, line);
	else
		snprintf(buf, size, "qemu was killed by signal %d (%s)%s%s", status,
			 strsignal(status), sep, line);
}

/* ---- starting ---- */

static int qemu_board_dir(struct power *p, char **ret)
{
	const char *state = power_ctx(p)->state_dir;
	char *dir;

	if (asprintf(&dir, "%s/boards", state) < 0)
		return -ENOMEM;
	mkdir(state, 0755);
	mkdir(dir, 0755);
	free(dir);
	if (asprintf(&dir, "%s/boards/%s", state, qemu_name(p)) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		free(dir);
		return -errno;
	}
	*ret = dir;
	return 0;
}

/* The board builds QEMU's argv from its definition (driver_ctx.qemu_argv). */
static int qemu_argv(struct power *p, char ***ret, char *err, size_t errlen)
{
	const struct driver_ctx *ctx = power_ctx(p);
	char *dir = NULL, *log = NULL;
	int r;

	if (!ctx->qemu_argv || !ctx->state_dir) {
		snprintf(err, errlen, "no device '%s' in the lab configuration", qemu_name(p));
		return -EINVAL;
	}
	if (qemu_board_dir(p, &dir) == 0 && asprintf(&log, "%s/%s", dir, QEMU_SERIAL_LOG) < 0)
		log = NULL;
	/* a job with secrets: QEMU's own copy of the console would keep them unmasked */
	if (log && kv_get(power_vars(p), POWER_VAR_SECRETS)) {
		unlink(log);
		free(log);
		log = NULL;
	}
	r = ctx->qemu_argv(ctx->board_userdata, power_vars(p), QEMU_SERIAL_FD, log, ret, err,
			   errlen);
	free(log);
	free(dir);
	return r;
}

/*
 * @argv behind `setpriv --pdeathsig KILL --` when the host has it, so that a
 * QEMU never outlives a labd that crashed or was killed (a U-Boot prompt left
 * behind would burn a core forever).  NULL on ENOMEM; free the vector only.
 */
static char **qemu_guarded_argv(char **argv)
{
	static const char *const guard[] = { QEMU_SETPRIV, "--pdeathsig", "KILL", "--" };
	size_t n = strv_length(argv), g = access(QEMU_SETPRIV, X_OK) ? 0 : 4, i;
	char **v = calloc(n + g + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < g; i++)
		v[i] = (char *)guard[i];
	for (i = 0; i < n; i++)
		v[g + i] = argv[i];
	return v;
}

/* QEMU with its output into @out_fd and the line at QEMU_SERIAL_FD. */
static int qemu_spawn_argv(char **argv, int out_fd, int line_fd, pid_t *ret)
{
	struct child_spawn how = { .search_path = true, .out_fd = out_fd,
				   .extra_fd = line_fd, .extra_at = QEMU_SERIAL_FD };
	char **run = qemu_guarded_argv(argv);
	int r;

	if (!run)
		return -ENOMEM;
	how.argv = run;
	r = child_spawn(&how, ret);
	free(run);
	return r;
}

static int qemu_on_exit(struct loop_source *s, const siginfo_t *si, void *userdata);

/* Watch QEMU in the loop. */
static int qemu_watch(struct power *p)
{
	struct qemu *q = power_priv(p);
	int r;

	r = loop_add_child(power_ctx(p)->loop, &q->child, q->pid, qemu_on_exit, p);
	if (r < 0) {
		kill(q->pid, SIGKILL);
		child_output_close(&q->out);
		return r;
	}
	loop_source_set_description(q->child, "power-qemu");
	q->state = QEMU_RUNNING;
	return 0;
}

/* The line's board end, never at QEMU_SERIAL_FD itself (dup2 onto itself keeps CLOEXEC). */
static int qemu_line_fd(struct qemu *q, int *tmp)
{
	int fd = qemu_line_board_fd(q->line);

	*tmp = -1;
	if (fd != QEMU_SERIAL_FD)
		return fd;
	*tmp = fcntl(fd, F_DUPFD_CLOEXEC, QEMU_SERIAL_FD + 1);
	return *tmp;
}

static int qemu_spawn(struct power *p, char **argv, char *err, size_t errlen)
{
	struct qemu *q = power_priv(p);
	int out_fd, tmp, line_fd, r;

	line_fd = qemu_line_fd(q, &tmp);
	if (line_fd < 0) {
		snprintf(err, errlen, "the console of '%s' is not open: use the 'qemu' console driver",
			 qemu_name(p));
		return -ENOTCONN;
	}
	r = child_output_open(&q->out, power_ctx(p)->loop, "power-qemu-output", &out_fd);
	if (r < 0)
		goto out;
	qemu_line_drain(q->line);
	r = qemu_spawn_argv(argv, out_fd, line_fd, &q->pid);
	close(out_fd);
	if (r < 0)
		child_output_close(&q->out);
	else
		r = qemu_watch(p);
out:
	if (tmp >= 0)
		close(tmp);
	if (r < 0 && !*err)
		snprintf(err, errlen, "cannot start '%s': %s", argv[0], strerror(-r));
	return r;
}

/* Start QEMU and complete the operation from the loop, with the reason if it failed. */
static void qemu_start_and_complete(struct power *p)
{
	struct qemu *q = power_priv(p);
	char err[QEMU_ERR_MAX] = "";
	char **argv = NULL;
	int r;

	r = qemu_argv(p, &argv, err, sizeof(err));
	if (r == -ENOMEM)
		snprintf(err, sizeof(err), "out of memory");
	if (!r)
		r = qemu_spawn(p, argv, err, sizeof(err));
	if (!r) {
		char *cmd = strv_join(argv, " ");

		log_info("board '%s': started qemu (pid %d): %s", qemu_name(p), (int)q->pid,
			 cmd ? cmd : argv[0]);
		free(cmd);
	}
	strv_free(argv);
	qemu_complete_later(p, r, r ? err : NULL);
}

/* ---- stopping and exits ---- */

static void qemu_stop(struct power *p)
{
	struct qemu *q = power_priv(p);

	q->state = QEMU_STOPPING;
	loop_child_kill(q->child, SIGTERM);
	loop_timer_set_rel(q->kill, QEMU_KILL_GRACE);
}

static int qemu_on_kill(struct loop_source *s, uint64_t now, void *userdata)
{
	struct qemu *q = userdata;

	if (q->state == QEMU_STOPPING && q->child)
		loop_child_kill(q->child, SIGKILL);
	return 0;
}

/*
 * QEMU ended without labd asking.  Not a power failure, which would take the
 * board out of service until an admin looks: the job's kernel may be what
 * QEMU refused.  The console goes down with QEMU's reason instead, which
 * ends a running job, and comes back by itself.
 */
static void qemu_died(struct power *p, int code, int status)
{
	struct qemu *q = power_priv(p);
	char reason[QEMU_ERR_MAX];

	qemu_describe_exit(q, code, status, reason, sizeof(reason));
	if (code == CLD_EXITED && !status) {
		log_info("board '%s': %s: the guest powered off", qemu_name(p), reason);
		return;
	}
	log_warning("board '%s': %s", qemu_name(p), reason);
	qemu_line_lost(q->line, reason);
}

static int qemu_on_exit(struct loop_source *s, const siginfo_t *si, void *userdata)
{
	struct power *p = userdata;
	struct qemu *q = power_priv(p);
	enum qemu_state was = q->state;

	q->child = loop_source_free(q->child);
	q->state = QEMU_OFF;
	loop_timer_set(q->kill, USEC_INFINITY);
	child_output_drain(&q->out);
	child_output_close(&q->out);
	if (was != QEMU_STOPPING) {
		qemu_died(p, si->si_code, si->si_status);
		return 0;
	}
	if (!q->pending)
		return 0;
	if (q->op == POWER_OFF)
		qemu_complete_later(p, 0, NULL);
	else
		qemu_start_and_complete(p);
	return 0;
}

/* ---- the driver operations ---- */

static int qemu_make_timers(struct power *p)
{
	struct qemu *q = power_priv(p);
	struct loop *l = power_ctx(p)->loop;
	int r;

	if (q->done)
		return 0;
	if (!l)
		return -ENOTCONN;
	r = loop_add_timer(l, &q->done, USEC_INFINITY, qemu_on_done, p);
	if (r < 0)
		return r;
	loop_source_set_description(q->done, "power-qemu-done");
	r = loop_add_timer(l, &q->kill, USEC_INFINITY, qemu_on_kill, q);
	if (r < 0)
		return r;
	loop_source_set_description(q->kill, "power-qemu-kill");
	return 0;
}

static int qemu_start(struct power *p, enum power_op op)
{
	struct qemu *q = power_priv(p);
	int r = qemu_make_timers(p);

	if (r < 0)
		return r;
	q->op = op;
	q->pending = true;
	if (q->state == QEMU_STOPPING)
		return 0;	/* the exit goes on with @op */
	if (q->state == QEMU_RUNNING && op != POWER_ON)
		qemu_stop(p);
	else if (q->state == QEMU_RUNNING || op == POWER_OFF)
		qemu_complete_later(p, 0, NULL);
	else
		qemu_start_and_complete(p);
	return 0;
}

static void qemu_abort(struct power *p)
{
	struct qemu *q = power_priv(p);

	/* A kill in progress goes on; only the report is dropped. */
	q->pending = false;
	if (q->done)
		loop_timer_set(q->done, USEC_INFINITY);
}

static void qemu_release(struct power *p)
{
	struct qemu *q = power_priv(p);

	/* Freeing the child source kills QEMU; the loop reaps it. */
	q->child = loop_source_free(q->child);
	q->done = loop_source_free(q->done);
	q->kill = loop_source_free(q->kill);
	child_output_release(&q->out);
	free(q->reason);
	q->line = qemu_line_put(q->line);
}

const struct power_driver power_qemu_driver = {
	.name = "qemu",
	.priv_size = sizeof(struct qemu),
	.parse = qemu_parse,
	.start = qemu_start,
	.abort = qemu_abort,
	.release = qemu_release,
	.cycles = true,
};
