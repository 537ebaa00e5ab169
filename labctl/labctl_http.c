// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_http.c -- labctl's requests to labd: libcurl easy, JSON answers, streamed logs */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/version.h"
#include "labctl.h"

static volatile sig_atomic_t interrupted;

int lc_init(struct labctl *lc, const char *url, const char *token)
{
	size_t len = strlen(url);

	memset(lc, 0, sizeof(*lc));
	lc->url = url;
	lc->token = token && *token ? token : NULL;
	while (len && url[len - 1] == '/')
		len--;
	if (!strncmp(url, "unix:/", 6)) {
		lc->unix_path = url + 5;
		snprintf(lc->base, sizeof(lc->base), "http://localhost%s", LABCTL_API);
	} else if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) {
		if (len + strlen(LABCTL_API) >= sizeof(lc->base))
			return -EINVAL;
		snprintf(lc->base, sizeof(lc->base), "%.*s%s", (int)len, url, LABCTL_API);
	} else {
		return -EINVAL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -ENOMEM;
	lc->curl = curl_easy_init();
	return lc->curl ? 0 : -ENOMEM;
}

void lc_release(struct labctl *lc)
{
	if (lc->curl) {
		curl_easy_cleanup(lc->curl);
		curl_global_cleanup();
	}
	lc->curl = NULL;
}

void lc_response_release(struct lc_response *resp)
{
	strbuf_release(&resp->body);
}

char *lc_escape(struct labctl *lc, const char *s)
{
	char *e = curl_easy_escape(lc->curl, s, 0), *copy;

	if (!e)
		return NULL;
	copy = strdup(e);
	curl_free(e);
	return copy;
}

static struct curl_slist *make_headers(const struct labctl *lc, const char *ctype)
{
	struct curl_slist *h = NULL, *n;
	char *line;

	/* no "Expect: 100-continue" round trip before a job is sent */
	h = curl_slist_append(h, "Expect:");
	if (h && ctype && asprintf(&line, "Content-Type: %s", ctype) >= 0) {
		n = curl_slist_append(h, line);
		h = n ? n : h;
		free(line);
	}
	if (h && lc->token && asprintf(&line, "Authorization: Bearer %s", lc->token) >= 0) {
		n = curl_slist_append(h, line);
		h = n ? n : h;
		free(line);
	}
	return h;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	return strbuf_add(ud, data, size * n) < 0 ? 0 : size * n;
}

/* Common options of every request; @url and @errbuf must outlive the transfer. */
static void setup(struct labctl *lc, const char *method, const char *url,
		  struct curl_slist *headers, char *errbuf)
{
	CURL *c = lc->curl;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (lc->unix_path)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, lc->unix_path);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, LABCTL_CONNECT_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "labctl/" LABD_VERSION);
	if (strcmp(method, "GET"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	errbuf[0] = '\0';
}

static void set_error(struct labctl *lc, CURLcode res, const char *errbuf)
{
	long oserr = 0;

	curl_easy_getinfo(lc->curl, CURLINFO_OS_ERRNO, &oserr);
	lc->conn_refused = res == CURLE_COULDNT_CONNECT;
	if (res == CURLE_COULDNT_CONNECT && oserr)
		snprintf(lc->err, sizeof(lc->err), "%s (is labd running?)", strerror((int)oserr));
	else if (*errbuf)
		snprintf(lc->err, sizeof(lc->err), "%s", errbuf);
	else
		snprintf(lc->err, sizeof(lc->err), "%s", curl_easy_strerror(res));
}

static char *request_url(const struct labctl *lc, const char *path)
{
	char *url;

	return asprintf(&url, "%s%s", lc->base, path) < 0 ? NULL : url;
}

int lc_request(struct labctl *lc, const char *method, const char *path, const char *ctype,
	       const void *body, size_t len, struct lc_response *ret)
{
	struct curl_slist *headers = make_headers(lc, body ? ctype : NULL);
	char errbuf[CURL_ERROR_SIZE], *url = request_url(lc, path);
	CURLcode res = CURLE_OUT_OF_MEMORY;

	ret->status = 0;
	strbuf_init(&ret->body);
	if (url && headers) {
		setup(lc, method, url, headers, errbuf);
		curl_easy_setopt(lc->curl, CURLOPT_TIMEOUT, LABCTL_TIMEOUT);
		curl_easy_setopt(lc->curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(lc->curl, CURLOPT_WRITEDATA, &ret->body);
		if (body || !strcmp(method, "POST")) {
			curl_easy_setopt(lc->curl, CURLOPT_POSTFIELDS, body ? body : "");
			curl_easy_setopt(lc->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		}
		res = curl_easy_perform(lc->curl);
	}
	if (res == CURLE_OK)
		curl_easy_getinfo(lc->curl, CURLINFO_RESPONSE_CODE, &ret->status);
	else
		set_error(lc, res, url && headers ? errbuf : "out of memory");
	curl_slist_free_all(headers);
	free(url);
	if (res != CURLE_OK)
		lc_response_release(ret);
	return res == CURLE_OK ? 0 : -1;
}

int lc_report_unreachable(const struct labctl *lc)
{
	fprintf(stderr, "labctl: cannot reach labd at %s: %s\n", lc->url, lc->err);
	return LABCTL_ERROR;
}

int lc_report_error(const struct lc_response *resp)
{
	json_t *doc = json_loadb(resp->body.buf, resp->body.len, 0, NULL);
	json_t *error = json_object_get(doc, "error"), *v;
	size_t i;

	if (json_is_string(error))
		fprintf(stderr, "labctl: %s\n", json_string_value(error));
	else
		fprintf(stderr, "labctl: labd answered %ld: %.200s\n", resp->status,
			resp->body.buf);
	json_array_foreach(json_object_get(doc, "errors"), i, v)
		if (json_is_string(v))
			fprintf(stderr, "%s\n", json_string_value(v));
	json_decref(doc);
	return LABCTL_FAILED;
}

int lc_json(struct labctl *lc, const char *method, const char *path, json_t *body, json_t **ret)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct lc_response resp;
	json_error_t jerr;
	json_t *doc;
	int err;

	err = lc_request(lc, method, path, "application/json", text, text ? strlen(text) : 0,
			 &resp);
	free(text);
	if (err < 0)
		return lc_report_unreachable(lc);
	if (resp.status < 200 || resp.status > 299) {
		err = lc_report_error(&resp);
		lc_response_release(&resp);
		return err;
	}
	doc = json_loadb(resp.body.buf, resp.body.len, 0, &jerr);
	lc_response_release(&resp);
	if (!doc) {
		fprintf(stderr, "labctl: labd's answer is not JSON: %s\n", jerr.text);
		return LABCTL_ERROR;
	}
	*ret = doc;
	return 0;
}

/* ---- streamed answers (logs) ---- */

struct stream {
	CURL *curl;
	lc_stream_fn fn;
	void *userdata;
	bool stopped;
	struct lc_response error;	/* the body of an error answer */
};

static size_t on_stream(char *data, size_t size, size_t n, void *ud)
{
	struct stream *s = ud;
	long status = 0;

	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		s->error.status = status;
		return strbuf_add(&s->error.body, data, size * n) < 0 ? 0 : size * n;
	}
	if (!s->fn(data, size * n, s->userdata)) {
		s->stopped = true;
		return 0;
	}
	return size * n;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	return interrupted ? 1 : 0;
}

static void on_sigint(int sig)
{
	interrupted = 1;
}

static CURLcode perform_interruptible(CURL *c)
{
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	CURLcode res;

	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);	/* no SA_RESTART: Ctrl-C wakes curl's poll() */
	res = curl_easy_perform(c);
	sigaction(SIGINT, &old, NULL);
	return res;
}

static int stream_failed(struct labctl *lc, CURLcode res, const char *errbuf)
{
	long status = 0;

	curl_easy_getinfo(lc->curl, CURLINFO_RESPONSE_CODE, &status);
	set_error(lc, res, errbuf);
	if (!status)
		return lc_report_unreachable(lc);
	fprintf(stderr, "labctl: the answer of labd at %s broke off: %s\n", lc->url, lc->err);
	return LABCTL_ERROR;
}

bool lc_pause(unsigned ms)
{
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	struct timespec left = { ms / 1000, (long)(ms % 1000) * 1000000L };

	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	while (!interrupted && nanosleep(&left, &left) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old, NULL);
	return interrupted;
}

int lc_stream(struct labctl *lc, const char *path, lc_stream_fn fn, void *userdata)
{
	struct curl_slist *headers = make_headers(lc, NULL);
	struct stream s = { .curl = lc->curl, .fn = fn, .userdata = userdata };
	char errbuf[CURL_ERROR_SIZE], *url = request_url(lc, path);
	CURLcode res;
	int ret = 0;

	strbuf_init(&s.error.body);
	if (!url || !headers) {
		fprintf(stderr, "labctl: out of memory\n");
		ret = LABCTL_ERROR;
		goto out;
	}
	setup(lc, "GET", url, headers, errbuf);
	curl_easy_setopt(lc->curl, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(lc->curl, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(lc->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(lc->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	res = perform_interruptible(lc->curl);
	if (interrupted)
		ret = LABCTL_INTERRUPTED;
	else if (s.error.status)
		ret = lc_report_error(&s.error);
	else if (res != CURLE_OK && !s.stopped)
		ret = stream_failed(lc, res, errbuf);
out:
	lc_response_release(&s.error);
	curl_slist_free_all(headers);
	free(url);
	return ret;
}
