// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * submit-jobs.c -- bench-multihost's load: N jobs through labd's API, from
 * one process keeping C requests in flight (libcurl multi)
 *
 *   submit-jobs N FIRST OUT C URL... <JOB.yaml
 *   submit-jobs --rate R N FIRST OUT URL... <JOB.yaml
 *
 * Job k (FIRST to FIRST + N - 1; "JOBNUM" in the job file replaced by k)
 * is POSTed to URL number (k - FIRST) % len(URLs) at /api/v1/jobs.  Client
 * c of C sends its jobs c, c + C, c + 2C, ... one after the other, each
 * once the previous one was answered, as a CI scheduler with C workers
 * would.  With --rate, job k is sent at FIRST + k / R seconds into the
 * run whatever the answers (open loop: a lab with room for them, the
 * latency at that rate).  Up to 16 clients connect to every host before
 * the first job (a GET of /api/v1/health each): the burst measures labd,
 * not connects.
 * OUT gets a line "k id sent answered" per job, the times CLOCK_REALTIME
 * in seconds as the request was handed to libcurl and as its answer was
 * in.  Prints "submit_s S" (the burst's wall time) and "client_cpu_s S".
 * A request that fails (no answer, a status other than 200 or 201) is
 * tried again after half a second, up to 20 times; then the tool exits 1
 * with the reason.
 *
 * One process, not one per client: the 16 Python processes it replaces
 * took a sixth of the bench's CPU on a 2-core machine, as much as the
 * simulated boards, and their run-queue waits counted as labd's latency.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "core/loop.h"
#include "core/strbuf.h"

#define MAX_TRIES 20
#define RETRY_USEC 500000

struct client {
	CURL *easy;
	struct curl_slist *headers;
	struct strbuf body;	/* the request's job text */
	struct strbuf answer;
	long next;		/* index (from 0) of the job it sends now */
	int tries;
	double sent;
	double send_at;	/* 0, or when to send its job: its time (--rate), a retry's */
};

#define WARM_CLIENTS 16

struct run {
	long n, first;
	int concurrency;	/* --rate: n, a client per job */
	double rate;		/* jobs a second, or 0: each client sends its next when answered */
	char **urls;
	int n_urls;
	const char *job;
	CURLM *multi;
	struct client *clients;
	long *ids;
	double *sent, *answered;
	long left;		/* jobs not answered yet */
};

static double now_s(void)
{
	return (double)now_realtime() / USEC_PER_SEC;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct strbuf *sb = ud;

	return strbuf_add(sb, p, size * n) < 0 ? 0 : size * n;
}

/* The job file with its JOBNUM replaced by @k, into @sb. */
static int job_text(struct strbuf *sb, const char *job, long k)
{
	const char *p = job, *hit;
	int r = 0;

	strbuf_reset(sb);
	while (!r && (hit = strstr(p, "JOBNUM"))) {
		r = strbuf_add(sb, p, (size_t)(hit - p));
		if (!r)
			r = strbuf_addf(sb, "%ld", k);
		p = hit + strlen("JOBNUM");
	}
	return r ? r : strbuf_addstr(sb, p);
}

/* Hand client @c's current job (or, with @url set, a GET of it) to libcurl. */
static int client_send(struct run *run, struct client *c, const char *get_url)
{
	char url[512];
	int r;

	curl_multi_remove_handle(run->multi, c->easy);
	strbuf_reset(&c->answer);
	if (get_url) {
		curl_easy_setopt(c->easy, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c->easy, CURLOPT_URL, get_url);
	} else {
		r = job_text(&c->body, run->job, run->first + c->next);
		if (r < 0)
			return r;
		snprintf(url, sizeof(url), "%s/api/v1/jobs", run->urls[c->next % run->n_urls]);
		curl_easy_setopt(c->easy, CURLOPT_URL, url);
		curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body.buf);
		curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE, (long)c->body.len);
	}
	c->sent = now_s();
	return curl_multi_add_handle(run->multi, c->easy) == CURLM_OK ? 0 : -ENOMEM;
}

static int client_init(struct client *c)
{
	strbuf_init(&c->body);
	strbuf_init(&c->answer);
	c->easy = curl_easy_init();
	c->headers = curl_slist_append(NULL, "Content-Type: application/yaml");
	if (!c->easy || !c->headers)
		return -ENOMEM;
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, &c->answer);
	curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
	curl_easy_setopt(c->easy, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	return 0;
}

/* Milliseconds to wait for the transfers: 10 at most, less when a client is due sooner. */
static int poll_ms(const struct run *run)
{
	double t = now_s(), next = t + 0.010;
	int i;

	for (i = 0; i < run->concurrency; i++)
		if (run->clients[i].send_at && run->clients[i].send_at < next)
			next = run->clients[i].send_at;
	return next <= t ? 0 : (int)((next - t) * 1000);
}

/*
 * Run the transfers until none is left (and, with @jobs, every job was
 * answered: a retry waits without a transfer); @done is called for each
 * one ending.
 */
static int pump(struct run *run, int (*done)(struct run *, struct client *, CURLcode, long),
		bool jobs)
{
	int running = 1, r = 0, i;

	while (!r && (running || (jobs && run->left))) {
		CURLMsg *m;
		int q;
		double t = now_s();

		for (i = 0; i < run->concurrency; i++) {
			struct client *c = &run->clients[i];

			if (c->send_at && c->send_at <= t) {
				c->send_at = 0;
				r = client_send(run, c, NULL);
			}
		}
		curl_multi_perform(run->multi, &running);
		while (!r && (m = curl_multi_info_read(run->multi, &q))) {
			struct client *c;
			long status = 0;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
			curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
			r = done(run, c, m->data.result, status);
		}
		if (!r && (running || (jobs && run->left)))
			curl_multi_poll(run->multi, NULL, 0, poll_ms(run), NULL);
	}
	return r;
}

static int warmed(struct run *run, struct client *c, CURLcode code, long status)
{
	if (code != CURLE_OK || status != 200) {
		fprintf(stderr, "submit-jobs: a host's health: %s (HTTP %ld)\n",
			curl_easy_strerror(code), status);
		return -EIO;
	}
	return 0;
}

/* Client @c's job answered: the next one, or tried again later. */
static int answered(struct run *run, struct client *c, CURLcode code, long status)
{
	json_t *o;

	if (code != CURLE_OK || (status != 200 && status != 201)) {
		if (++c->tries >= MAX_TRIES) {
			fprintf(stderr, "submit-jobs: job %ld: %s (HTTP %ld): %.200s\n",
				run->first + c->next, curl_easy_strerror(code), status,
				c->answer.buf ? c->answer.buf : "");
			return -EIO;
		}
		c->send_at = now_s() + RETRY_USEC / 1e6;
		return 0;
	}
	o = json_loadb(c->answer.buf, c->answer.len, 0, NULL);
	run->ids[c->next] = o ? (long)json_integer_value(json_object_get(o, "id")) : 0;
	json_decref(o);
	run->sent[c->next] = c->sent;
	run->answered[c->next] = now_s();
	run->left--;
	c->tries = 0;
	c->next += run->concurrency;
	return c->next < run->n ? client_send(run, c, NULL) : 0;
}

/* Every client GETs every host's health: its connections are open before the burst. */
static int warm_up(struct run *run)
{
	char url[512];
	int h, i, r = 0;

	for (h = 0; h < run->n_urls && !r; h++) {
		snprintf(url, sizeof(url), "%s/api/v1/health", run->urls[h]);
		for (i = 0; i < run->concurrency && i < WARM_CLIENTS && !r; i++)
			r = client_send(run, &run->clients[i], url);
		if (!r)
			r = pump(run, warmed, false);
	}
	return r;
}

static int write_out(const struct run *run, const char *path)
{
	FILE *f = fopen(path, "w");
	long i;

	if (!f)
		return -errno;
	for (i = 0; i < run->n; i++)
		fprintf(f, "%ld %ld %.6f %.6f\n", run->first + i, run->ids[i], run->sent[i],
			run->answered[i]);
	return fclose(f) ? -errno : 0;
}

static char *read_stdin(void)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;

	while ((n = read(0, buf, sizeof(buf))) > 0) {
		if (strbuf_add(&sb, buf, (size_t)n) < 0) {
			strbuf_release(&sb);
			return NULL;
		}
	}
	return sb.len ? sb.buf : NULL;
}

static int submit(struct run *run, const char *out)
{
	struct rusage ru;
	double t0;
	int i, r;

	r = warm_up(run);
	t0 = now_s();
	for (i = 0; !r && i < run->concurrency && i < run->n; i++) {
		run->clients[i].next = i;
		if (run->rate)	/* sent by pump() once due */
			run->clients[i].send_at = t0 + i / run->rate;
		else
			r = client_send(run, &run->clients[i], NULL);
	}
	if (!r)
		r = pump(run, answered, true);
	if (r < 0)
		return r;
	printf("submit_s %.2f\n", now_s() - t0);
	getrusage(RUSAGE_SELF, &ru);
	printf("client_cpu_s %.2f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return write_out(run, out);
}

int main(int argc, char **argv)
{
	struct run run = { 0 };
	int i, r = -ENOMEM;

	if (argc > 2 && !strcmp(argv[1], "--rate")) {
		run.rate = atof(argv[2]);
		if (run.rate <= 0)
			run.rate = -1;	/* refused below */
		argv += 2;
		argc -= 2;
	}
	if (argc < (run.rate ? 5 : 6) || run.rate < 0) {
		fprintf(stderr, "usage: submit-jobs N FIRST OUT CONCURRENCY URL... <JOB.yaml\n"
				"       submit-jobs --rate R N FIRST OUT URL... <JOB.yaml\n");
		return 2;
	}
	run.n = run.left = atol(argv[1]);
	run.first = atol(argv[2]);
	run.concurrency = run.rate ? (int)run.n : atoi(argv[4]);
	run.urls = argv + (run.rate ? 4 : 5);
	run.n_urls = argc - (run.rate ? 4 : 5);
	run.job = read_stdin();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	run.multi = curl_multi_init();
	run.clients = calloc((size_t)run.concurrency, sizeof(*run.clients));
	run.ids = calloc((size_t)run.n, sizeof(*run.ids));
	run.sent = calloc((size_t)run.n, sizeof(*run.sent));
	run.answered = calloc((size_t)run.n, sizeof(*run.answered));
	if (run.n <= 0 || run.concurrency <= 0 || !run.job || !run.multi || !run.clients ||
	    !run.ids || !run.sent || !run.answered)
		goto out;
	for (i = 0, r = 0; i < run.concurrency && !r; i++)
		r = client_init(&run.clients[i]);
	if (!r)
		r = submit(&run, argv[3]);
out:
	if (r < 0)
		fprintf(stderr, "submit-jobs: %s\n", strerror(-r));
	for (i = 0; run.clients && i < run.concurrency; i++) {
		if (run.clients[i].easy) {
			curl_multi_remove_handle(run.multi, run.clients[i].easy);
			curl_easy_cleanup(run.clients[i].easy);
		}
		curl_slist_free_all(run.clients[i].headers);
		strbuf_release(&run.clients[i].body);
		strbuf_release(&run.clients[i].answer);
	}
	curl_multi_cleanup(run.multi);
	curl_global_cleanup();
	free(run.clients);
	free(run.ids);
	free(run.sent);
	free(run.answered);
	free((char *)run.job);
	return r < 0 ? 1 : 0;
}
