/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * labctl.h -- what labctl's files share: the connection to labd and the commands
 *
 * labctl talks to labd only through its HTTP API (doc/api.md), with libcurl's
 * easy interface (a command-line client may block) and jansson.
 *
 * Exit status, the same for every command:
 *   0  success (and, for `submit --follow`, a complete job without failed results)
 *   1  labd refused (unknown job, invalid job, conflict ...), or failed test results
 *   2  the followed job ended incomplete or canceled
 *   3  usage errors, labd not reachable, the connection broke
 *   130 Ctrl-C while following a log (the job keeps running)
 */
#ifndef LABCTL_H
#define LABCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/strbuf.h"

#define LABCTL_OK 0
#define LABCTL_FAILED 1
#define LABCTL_INCOMPLETE 2
#define LABCTL_ERROR 3
#define LABCTL_INTERRUPTED 130

#define LABCTL_DEFAULT_URL "http://127.0.0.1:8640"
#define LABCTL_API "/api/v1"
#define LABCTL_TIMEOUT 60L	/* seconds for a request that is not a followed log */
#define LABCTL_CONNECT_TIMEOUT 10L
#define LABCTL_ERR_MAX 512
#define LABCTL_QUEUE_POLL_MS 1000	/* how often a followed queued job is asked about */

struct labctl {
	const char *url;	/* labd's base URL, or "unix:/PATH" */
	const char *token;	/* bearer token, or NULL */
	char base[1024];	/* URL prefix of requests, without trailing slash */
	const char *unix_path;	/* set for unix: URLs */
	void *curl;		/* CURL *, reused for every request */
	char err[LABCTL_ERR_MAX];	/* why the last request got no answer */
	bool conn_refused;	/* ... because nothing listens there */
};

struct lc_response {
	long status;
	struct strbuf body;
};

/* ---- labctl_config.c ---- */

/* Where labctl sends its requests: labd's URL and the token (both owned). */
struct lc_target {
	char *url;
	char *token;
};

/**
 * lc_target_resolve() - complete @t (what --url/--token set stays) from the
 * lab @lab (--lab, else $LABCTL_LAB) of the config file (@config, else
 * $LABCTL_CONFIG, else ~/.config/labctl/config), $LABD_URL/$LABD_TOKEN, the
 * file's default lab or top level, then the built-in URL.
 * Returns 0, or LABCTL_ERROR with the reason printed.
 */
int lc_target_resolve(const char *config, const char *lab, struct lc_target *t);
void lc_target_release(struct lc_target *t);

/* ---- labctl_http.c ---- */

int lc_init(struct labctl *lc, const char *url, const char *token);
void lc_release(struct labctl *lc);

/**
 * lc_request() - one request to labd's API
 * @path: below /api/v1, query included ("/jobs?state=queued")
 * @ctype: Content-Type of @body, or NULL without a body
 *
 * Returns 0 when labd answered (any status, in @ret, release its body with
 * lc_response_release()), or -1 when it could not be reached (lc->err says
 * why; lc_report_unreachable() prints it).
 */
int lc_request(struct labctl *lc, const char *method, const char *path, const char *ctype,
	       const void *body, size_t len, struct lc_response *ret);
void lc_response_release(struct lc_response *resp);

/** lc_report_unreachable() - "labctl: cannot reach labd at URL: cause"; returns LABCTL_ERROR. */
int lc_report_unreachable(const struct labctl *lc);

/** lc_report_error() - print labd's "error" (and "errors") of @resp; returns LABCTL_FAILED. */
int lc_report_error(const struct lc_response *resp);

/**
 * lc_json() - a request whose answer is JSON
 * @body: sent as JSON, or NULL (not stolen)
 *
 * On a 2xx answer stores the parsed document in @ret (caller decrefs) and
 * returns 0; otherwise prints the problem and returns the exit status.
 */
int lc_json(struct labctl *lc, const char *method, const char *path, json_t *body, json_t **ret);

/** Called with each piece of a streamed answer; return false to stop. */
typedef bool (*lc_stream_fn)(const char *data, size_t len, void *userdata);

/**
 * lc_stream() - GET @path and hand the body to @fn as it arrives
 *
 * Ctrl-C stops the transfer: returns LABCTL_INTERRUPTED.  Returns 0 when the
 * answer was complete, or the exit status after printing the problem.
 */
int lc_stream(struct labctl *lc, const char *path, lc_stream_fn fn, void *userdata);

/** lc_pause() - wait @ms milliseconds; true when Ctrl-C came meanwhile. */
bool lc_pause(unsigned ms);

/** lc_escape() - @s escaped for a URL path or query (caller frees); NULL on ENOMEM. */
char *lc_escape(struct labctl *lc, const char *s);

/* ---- output helpers (labctl.c) ---- */

/** lc_str() - a string member of @o, or @fallback when absent or null. */
const char *lc_str(const json_t *o, const char *key, const char *fallback);

/** lc_int() - an integer member of @o, 0 when absent. */
long long lc_int(const json_t *o, const char *key);

/** lc_time() - "2026-12-03 10:00:00" (UTC) from an ISO-8601 member, "-" when null. */
const char *lc_time(const json_t *o, const char *key, char *buf, size_t len);

/** lc_print_json() - @doc indented on stdout. */
void lc_print_json(const json_t *doc);

/** lc_write_log() - console bytes to stdout: as they are if @raw, else made safe for a terminal. */
bool lc_write_log(const char *data, size_t len, bool raw);

/**
 * lc_parse_format() - --format's argument: "table" (false) or "json" (true)
 * into @json; a usage error (LABCTL_ERROR) for anything else, 0 otherwise.
 */
int lc_parse_format(const char *cmd, const char *arg, bool *json);

/* labctl_queue.c */
int cmd_queue(struct labctl *lc, int argc, char **argv);

/** lc_usage_error() - "labctl: <message>" and a hint; returns LABCTL_ERROR. */
int lc_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** lc_parse_id() - a job id argument of @cmd; prints a usage error (LABCTL_ERROR) if invalid. */
int lc_parse_id(const char *cmd, const char *s, int64_t *ret);

/** lc_help() - the usage of command @cmd on stdout; returns LABCTL_OK. */
int lc_help(const char *cmd);

/**
 * lc_follow_job() - stream job @id's log (with labd's lines) until it ends,
 * then print its outcome; returns the exit status of `submit --follow`.
 * @quiet: print only the outcome
 */
int lc_follow_job(struct labctl *lc, int64_t id, bool quiet);

/** lc_read_job() - a job file ("-": stdin) into @out; prints why not (LABCTL_ERROR). */
int lc_read_job(const char *file, struct strbuf *out);

/** lc_parse_duration() - "2h", "30m", "90s", "1h30m", "3" (seconds) into seconds. */
int lc_parse_duration(const char *s, double *ret);

/**
 * lc_console() - attach the terminal to @board's live console (labctl_console.c)
 * @replay: bytes of scrollback shown first
 *
 * Returns 0 when the person detached (~.), else the exit status.
 */
int lc_console(struct labctl *lc, const char *board, long replay);

/* ---- commands: argv[0] is the command's name ---- */

int cmd_check(struct labctl *lc, int argc, char **argv);
int cmd_submit(struct labctl *lc, int argc, char **argv);
int cmd_jobs(struct labctl *lc, int argc, char **argv);
int cmd_show(struct labctl *lc, int argc, char **argv);
int cmd_cancel(struct labctl *lc, int argc, char **argv);
int cmd_log(struct labctl *lc, int argc, char **argv);
int cmd_results(struct labctl *lc, int argc, char **argv);
int cmd_devices(struct labctl *lc, int argc, char **argv);
int cmd_device(struct labctl *lc, int argc, char **argv);
int cmd_reserve(struct labctl *lc, int argc, char **argv);
int cmd_release(struct labctl *lc, int argc, char **argv);
int cmd_reservations(struct labctl *lc, int argc, char **argv);
int cmd_power(struct labctl *lc, int argc, char **argv);
int cmd_boot(struct labctl *lc, int argc, char **argv);
int cmd_console(struct labctl *lc, int argc, char **argv);
int cmd_telnet(struct labctl *lc, int argc, char **argv);
int cmd_token_hash(struct labctl *lc, int argc, char **argv);
int cmd_token_create(struct labctl *lc, int argc, char **argv);
int cmd_whoami(struct labctl *lc, int argc, char **argv);
int cmd_reload(struct labctl *lc, int argc, char **argv);

#endif
