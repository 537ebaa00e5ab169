/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * url_check.h -- a job's artifact URLs checked before its board is touched
 *
 * Before a run powers anything, every artifact its deploy actions name is
 * asked for once: an http(s) URL with a HEAD (or, from a server that
 * refuses HEAD with 405 or 501, a GET of its first byte, given up once the
 * answer's status is in), all at once through the daemon's HTTP client in
 * the loop; a file:// URL with file_url_check().  An artifact the download cache holds already
 * (deploy_cache.h) is not asked for: the deploy will not fetch it either;
 * nor is a URL of another scheme (the deploy's own business).
 *
 * Whose fault a failure is, as LAVA sees it: an answer 4xx (404, 403 ...)
 * and a file:// URL that is missing or outside the lab's artifact
 * directory are the job's (error type job: the job is not retried); no
 * answer (connection refused, a name that does not resolve, a timeout) and
 * an answer 5xx are the lab's (infrastructure: retried on another board
 * when the job allows).  Every URL is checked; the reason names each one
 * that failed, the job's failures first.
 *
 * The check is a step of the run (run.c), not of the deploy action, which
 * downloads (action_deploy.c): it runs once per attempt, before the first
 * action.
 */
#ifndef LABD_URL_CHECK_H
#define LABD_URL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/jobstate.h"

struct http_client;
struct job;
struct loop;
struct lab_config;
struct url_check;

#define URL_CHECK_TIMEOUT (30ULL * 1000000)		/* usec for one URL's answer */
#define URL_CHECK_CONNECT_TIMEOUT (10ULL * 1000000)	/* usec to connect */
#define URL_CHECK_MAX_REASON 1024

/*
 * The check is over: @type ERROR_NONE when every URL answered, else why
 * (@reason, borrowed for the call).  @checked is the number of URLs asked.
 */
typedef void (*url_check_done_fn)(enum error_type type, const char *reason, size_t checked,
				  void *userdata);

/**
 * url_check_start() - check the artifact URLs of @job's deploy actions
 * @c: the lab (artifact_dir for file URLs, state_dir for the cache)
 *
 * @done is called once from @loop (also when there is nothing to check),
 * unless url_check_free() came first.  Returns 0 with *@ret set, or -ENOMEM.
 */
int url_check_start(struct loop *loop, struct http_client *http, const struct lab_config *c,
		    const struct job *job, url_check_done_fn done, void *userdata,
		    struct url_check **ret);

/** url_check_free() - cancel what is still asked (no callback); accepts NULL; returns NULL. */
struct url_check *url_check_free(struct url_check *uc);

#endif
