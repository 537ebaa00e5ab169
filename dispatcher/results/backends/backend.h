/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * backend.h -- results backends: where labd reports jobs besides its own store
 *
 * labd always keeps every job, event, result and console log itself (the
 * `local` backend: SQLite and the log files, served by the API).  The
 * `backends` list of labd.conf adds more, any number at once:
 *
 *   backends = (
 *     { type = "http";  url = "https://ci.example.org/labd"; token = "..."; },
 *     { type = "kcidb"; url = "https://db.kernelci.org/submit"; token = "...";
 *       origin = "mylab"; },
 *     { type = "junit"; dir = "/srv/junit"; }
 *   );
 *
 * Every group has `type` and an optional `name` (default: the type; it names
 * the backend in logs and events and its spool directory, so two backends of
 * one type need names).  The other keys belong to the type; doc/backends.md
 * lists them.  Unknown keys and bad values are "FILE:LINE: cause" errors at
 * start and in `labd check-config`.  Backends are set up at start; a SIGHUP
 * reload leaves them as they are.
 *
 * The framework listens to job events and to console log growth (events.h)
 * once and hands both to every backend.  Backends run in
 * the loop and never block: uploads go through http_client, files are local.
 * A backend reports a delivery problem about a job with backend_report(): a
 * log line, and a "backend-error" event of that job (emitted from the loop
 * later, never from inside an event dispatch).
 */
#ifndef LABD_BACKEND_H
#define LABD_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

struct backend;
struct backends;
struct diag;
struct event;
struct events;
struct http_client;
struct job;
struct lab;
struct lab_config;
struct loop;
struct store;

#define BACKEND_NAME_MAX 64
#define BACKENDS_DRAIN_GRACE (5 * 1000000ULL)	/* usec a stopping labd waits for deliveries */

/* What the backends get from the daemon at creation, and share. */
struct backends_deps {
	struct loop *loop;
	struct http_client *http;
	struct store *store;
	struct events *events;	/* listened to; "backend-error" events are emitted there */
	const struct lab *lab;	/* the configuration (state_dir, lab_name), board/lab.h */
	/*
	 * optional: the parsed definition of job @id while it runs on this
	 * host, or NULL (borrowed for the call): what a backend can know of a
	 * job without reading it from the store
	 */
	const struct job *(*running_job)(int64_t id, void *userdata);
	void *userdata;
};

/** What every backend is; a type embeds it first in its own struct. */
struct backend {
	const struct backend_ops *ops;
	char *name;
	char *file;		/* where it was configured */
	int line;
	struct backends *set;	/* NULL when only checked */
	const struct backends_deps *deps;	/* the set's; NULL when only checked */
};

/** What /metrics shows of a backend. */
struct backend_stats {
	const char *name;
	uint64_t spool_bytes;	/* spooled, not yet delivered */
	uint64_t lag_usec;	/* how long items have waited without a delivery, 0: none */
};

/** A backend type: one file per type (backend_http.c, ...), listed in backend.c. */
struct backend_ops {
	const char *type;
	/** keys of the group besides `type` and `name` (NULL-terminated) */
	const char *const *keys;
	/** required: parse @group into a new backend; -EINVAL with causes in @diag */
	int (*parse)(const config_setting_t *group, struct backend **ret, struct diag *diag);
	/** optional: start working (b->deps is set); a failure stops labd's start */
	int (*start)(struct backend *b);
	/** required: stop (cancel requests, close files) and free; started or not */
	void (*free)(struct backend *b);
	/** optional: a job event, as events.h broadcasts it */
	void (*event)(struct backend *b, const struct event *ev);
	/** optional: the console log of running job @job_id grew */
	void (*log_grew)(struct backend *b, int64_t job_id);
	/** optional: whether deliveries are under way that may finish soon */
	bool (*busy)(struct backend *b);
	/** optional: spool and lag, for /metrics (ret->name is set by the caller) */
	void (*stats)(struct backend *b, struct backend_stats *ret);
};

extern const struct backend_ops backend_http_ops;
extern const struct backend_ops backend_kcidb_ops;
extern const struct backend_ops backend_junit_ops;
/* always there, named "notify", set up from labd.conf's top-level `notify` group */
extern const struct backend_ops backend_notify_ops;

/** backends_stats() - @fn with each backend that has stats; stops at its first < 0. */
int backends_stats(struct backends *set, int (*fn)(const struct backend_stats *bs, void *ud),
		   void *ud);

/**
 * backends_check() - parse the `backends` list of @cfg and drop the result
 *
 * Returns 0 or -EINVAL (every problem in @diag), -ENOMEM.
 */
int backends_check(const struct lab_config *cfg, struct diag *diag);

/**
 * backends_new() - parse the `backends` list and start every backend
 * @deps: copied; what it points to outlives the backends
 *
 * Call once the daemon's loop, store, events and HTTP client exist, before
 * recovered jobs emit their events.  Returns 0, -EINVAL (see @diag) or the
 * error of a backend that could not start (also in @diag).
 */
int backends_new(const struct backends_deps *deps, struct backends **ret, struct diag *diag);

/** backends_free() - stop and free every backend; accepts NULL; returns NULL. */
struct backends *backends_free(struct backends *set);

/**
 * backends_draining() - whether a stopping labd should wait for deliveries
 *
 * True while a backend is busy, for at most BACKENDS_DRAIN_GRACE after the
 * first call.  What is left stays spooled for the next start.
 */
bool backends_draining(struct backends *set, uint64_t now);

/* ---- for backend types ---- */

/** backend_init() - fill the common part from @group (name, file, line). */
int backend_init(struct backend *b, const struct backend_ops *ops, const config_setting_t *group);

/** backend_release() - free the common part. */
void backend_release(struct backend *b);

/**
 * backend_report() - a delivery problem about job @job_id (0: none)
 *
 * Logs "backend 'NAME': MESSAGE" as a warning and, for a job, queues a
 * "backend-error" event {"backend": NAME, "error": MESSAGE} emitted from the
 * loop shortly after.
 */
void backend_report(struct backend *b, int64_t job_id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** backend_state_path() - "<state_dir>/<what>/<name>" (caller frees), e.g. the spool. */
char *backend_state_path(struct backend *b, const char *what);

/** backend_config() - labd's current configuration (state_dir, lab_name ...). */
const struct lab_config *backend_config(const struct backend *b);

/** backend_job_dir() - the log directory of job @id (caller frees), or NULL. */
char *backend_job_dir(const struct backend *b, int64_t id);

/**
 * backend_job_dir_here() - backend_job_dir() when this host has it; NULL
 * when it does not (the job ran on another host of the lab, or never ran:
 * ended in the queue, or by the host that reaped the one it ran on), or out
 * of memory.  A report is copied into the job's directory only then.
 */
char *backend_job_dir_here(const struct backend *b, int64_t id);

struct report;

/**
 * backend_report_later() - @use(@b, @id, report, err) once job @id's report
 * (report_load(), links from @log_url_base, may be NULL) is read, without
 * waiting in the loop for the store (store_read_later(): PostgreSQL's
 * answers come later, SQLite's at once).  @use gets the report (NULL with
 * @err < 0) and frees it (report_free()).  Calls for several jobs keep their
 * order.  backend_forget_reports(@b) drops those not made yet (@b's free).
 */
void backend_report_later(struct backend *b, int64_t id, const char *log_url_base,
			  void (*use)(struct backend *b, int64_t id, struct report *r, int err));
void backend_forget_reports(struct backend *b);

/* ---- shared config checks ---- */

/** backend_check_url() - @key of @group is an http:// or https:// URL (if present). */
int backend_check_url(const config_setting_t *group, const char *key, bool required,
		      const char **ret, struct diag *diag);

/**
 * backend_get_retry_max() - the optional `retry_max_ms` of @group: the longest
 * delay between two attempts of a failing delivery
 *
 * Leaves *@ret_ms alone when the key is absent (the caller's default); returns
 * 0, or -EINVAL (not an integer between UPLOAD_RETRY_MAX_MS_MIN and
 * UPLOAD_RETRY_MAX_MS_MAX, reported in @diag).
 */
int backend_get_retry_max(const config_setting_t *group, uint64_t *ret_ms, struct diag *diag);

#endif
