// SPDX-License-Identifier: GPL-2.0-or-later
/* pdudaemon.c -- power driver "pdudaemon": PDU outlets switched through pdudaemon's HTTP API */
/*
 * Board definition:
 *
 *	power = {
 *		driver = "pdudaemon";
 *		url = "http://127.0.0.1:16421";	// optional, the default
 *		hostname = "pdu01";		// the PDU's name in pdudaemon's config
 *		port = 3;			// outlet: an integer or a string
 *		// or instead of hostname and port: alias = "board1";
 *		delay = 5;			// optional: seconds off during a reboot
 *		timeout = 30;			// optional, seconds
 *	};
 *
 * Each operation is one request, GET {url}/power/control/{on|off|reboot}
 * ?hostname=H&port=P (or ?alias=A), with &delay=D for reboot, which is the
 * native cycle.  pdudaemon answers once the PDU acted: 200 means done, any
 * other status is a failure (500 "Invalid request" for an unknown PDU or a
 * failed action).  Set `timeout` above `delay` plus pdudaemon's retries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/http_client.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "drivers/power.h"
#include "drivers/power/drivers.h"

#define PDUDAEMON_DEFAULT_URL "http://127.0.0.1:16421"
#define PDUDAEMON_DEFAULT_DELAY 5	/* seconds, pdudaemon's own default */
#define PDUDAEMON_MAX_DELAY 3600
#define PDUDAEMON_MAX_BODY (64 * 1024)
#define PDUDAEMON_REASON_MAX 200	/* bytes of the reply quoted in a reason */

struct pdudaemon {
	char *url;		/* without a trailing '/' */
	char *query;		/* "hostname=pdu01&port=3" or "alias=board1", escaped */
	char *target;		/* for messages: "pdu01 port 3" or "alias board1" */
	long long delay;
	enum power_op op;
	struct http_request *req;
};

static const char *const pdudaemon_verbs[] = {
	[POWER_OFF] = "off",
	[POWER_ON] = "on",
	[POWER_CYCLE] = "reboot",
};

/* `port`: an integer or a non-empty string, as text into @buf. */
static int pdudaemon_get_port(const config_setting_t *s, char *buf, size_t size,
			      struct diag *diag)
{
	config_setting_t *e = config_setting_get_member(s, "port");

	if (!e)
		return -ENOENT;
	switch (config_setting_type(e)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		snprintf(buf, size, "%lld", config_setting_get_int64(e));
		return 0;
	case CONFIG_TYPE_STRING:
		if (*config_setting_get_string(e) &&
		    strlen(config_setting_get_string(e)) < size) {
			strcpy(buf, config_setting_get_string(e));
			return 0;
		}
		return diag_add(diag, cfg_file(e), cfg_line(e),
				"'port' must be a non-empty string of at most %zu bytes", size - 1);
	default:
		return diag_add(diag, cfg_file(e), cfg_line(e),
				"'port' must be an integer or a string, not %s", cfg_type_name(e));
	}
}

/* Append "&@key=@value" (without '&' first), URL-encoded. */
static int pdudaemon_add_param(struct strbuf *sb, const char *key, const char *value)
{
	char *esc = curl_easy_escape(NULL, value, 0);
	int r;

	if (!esc)
		return -ENOMEM;
	r = strbuf_addf(sb, "%s%s=%s", sb->len ? "&" : "", key, esc);
	curl_free(esc);
	return r;
}

static int pdudaemon_set_target(struct pdudaemon *d, const char *host, const char *port,
				const char *alias)
{
	struct strbuf q = STRBUF_INIT;
	int r;

	if (alias) {
		r = pdudaemon_add_param(&q, "alias", alias);
		if (!r && asprintf(&d->target, "alias %s", alias) < 0)
			r = -ENOMEM;
	} else {
		r = pdudaemon_add_param(&q, "hostname", host);
		if (!r)
			r = pdudaemon_add_param(&q, "port", port);
		if (!r && asprintf(&d->target, "%s port %s", host, port) < 0)
			r = -ENOMEM;
	}
	if (r) {
		strbuf_release(&q);
		return r;
	}
	d->query = strbuf_detach(&q, NULL);
	return 0;
}

/* Either `alias`, or `hostname` and `port`. */
static int pdudaemon_parse_target(struct pdudaemon *d, const config_setting_t *s,
				  struct diag *diag)
{
	const char *host = NULL, *alias = NULL;
	config_setting_t *e;
	char port[64];
	int ra, rh, rp;

	ra = cfg_get_string(s, "alias", false, &alias, diag);
	rh = cfg_get_string(s, "hostname", false, &host, diag);
	rp = pdudaemon_get_port(s, port, sizeof(port), diag);
	if (ra == -EINVAL || rh == -EINVAL || rp == -EINVAL)
		return -EINVAL;
	if (alias && (host || !rp)) {
		e = config_setting_get_member(s, "alias");
		return diag_add(diag, cfg_file(e), cfg_line(e),
				"'alias' cannot be combined with 'hostname' or 'port'");
	}
	if (!alias && !host)
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"missing key 'hostname' (or 'alias')");
	if (!alias && rp)
		return diag_add(diag, cfg_file(s), cfg_line(s), "missing key 'port'");
	if ((alias && !*alias) || (host && !*host))
		return diag_add(diag, cfg_file(s), cfg_line(s), "'%s' must not be empty",
				alias ? "alias" : "hostname");
	return pdudaemon_set_target(d, host, port, alias);
}

static int pdudaemon_parse(struct power *p, const config_setting_t *s, struct diag *diag)
{
	static const char *const known[] = {
		POWER_COMMON_KEYS, "url", "hostname", "port", "alias", "delay", NULL
	};
	struct pdudaemon *d = power_priv(p);
	const char *url = PDUDAEMON_DEFAULT_URL;
	long long delay = PDUDAEMON_DEFAULT_DELAY;
	size_t len;
	int r, e;

	r = cfg_check_keys(s, known, diag);
	e = cfg_get_string(s, "url", false, &url, diag);
	if (e == -EINVAL)
		r = e;
	if (!e && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		r = diag_add(diag, cfg_file(s), cfg_line(s),
			     "'url' must start with http:// or https://, not '%s'", url);
	e = cfg_get_int(s, "delay", false, 0, PDUDAEMON_MAX_DELAY, &delay, diag);
	if (e == -EINVAL)
		r = e;
	e = pdudaemon_parse_target(d, s, diag);
	if (e < 0)
		r = e;
	if (r < 0)
		return r;
	len = strlen(url);
	while (len && url[len - 1] == '/')
		len--;
	d->url = strndup(url, len);
	d->delay = delay;
	return d->url ? 0 : -ENOMEM;
}

/* The first line of a reply, bounded and printable, into @buf. */
static void pdudaemon_reply_line(const struct http_response *resp, char *buf, size_t size)
{
	size_t i, n = 0;

	for (i = 0; resp->body && i < resp->body_len && n < size - 1; i++) {
		unsigned char ch = (unsigned char)resp->body[i];

		if (ch == '\n' || ch == '\r')
			break;
		buf[n++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
}

/* No HTTP answer: timeout, connection refused, name resolution, ... */
static void pdudaemon_unreachable(struct power *p, const struct http_response *resp)
{
	struct pdudaemon *d = power_priv(p);
	const char *verb = pdudaemon_verbs[d->op];
	int err = resp->err ? resp->err : -EIO;
	const char *why = resp->error ? resp->error : strerror(-err);

	if (err == -ETIMEDOUT) {
		power_complete(p, err, "pdudaemon at '%s' did not answer '%s' for %s within %g s",
			       d->url, verb, d->target, (double)power_timeout(p) / USEC_PER_SEC);
		return;
	}
	/* curl's text says "Couldn't connect to server" for a refused connection. */
	if (err == -ECONNREFUSED)
		why = strerror(ECONNREFUSED);
	power_complete(p, err, "cannot reach pdudaemon at '%s': %s", d->url, why);
}

static void pdudaemon_on_reply(struct http_request *req, const struct http_response *resp,
			       void *userdata)
{
	struct power *p = userdata;
	struct pdudaemon *d = power_priv(p);
	char line[PDUDAEMON_REASON_MAX + 1];

	d->req = NULL;
	pdudaemon_reply_line(resp, line, sizeof(line));
	if (resp->status == 200)
		power_complete(p, 0, NULL);
	else if (resp->status)
		power_complete(p, -EIO, "pdudaemon refused '%s' for %s: HTTP %ld%s%s",
			       pdudaemon_verbs[d->op], d->target, resp->status, *line ? ": " : "",
			       line);
	else
		pdudaemon_unreachable(p, resp);
}

static int pdudaemon_start(struct power *p, enum power_op op)
{
	struct pdudaemon *d = power_priv(p);
	struct http_request_opts o = { 0 };
	struct strbuf url = STRBUF_INIT;
	int r;

	if (!power_ctx(p)->http)
		return -ENOTCONN;
	r = strbuf_addf(&url, "%s/power/control/%s?%s", d->url, pdudaemon_verbs[op], d->query);
	if (!r && op == POWER_CYCLE)
		r = strbuf_addf(&url, "&delay=%lld", d->delay);
	if (r)
		goto out;
	o.url = url.buf;
	o.timeout = power_timeout(p);
	o.max_size = PDUDAEMON_MAX_BODY;
	d->op = op;
	r = http_request_start(power_ctx(p)->http, &o, pdudaemon_on_reply, p, &d->req);
out:
	strbuf_release(&url);
	return r;
}

static void pdudaemon_abort(struct power *p)
{
	struct pdudaemon *d = power_priv(p);

	http_request_cancel(d->req);
	d->req = NULL;
}

static void pdudaemon_release(struct power *p)
{
	struct pdudaemon *d = power_priv(p);

	pdudaemon_abort(p);
	free(d->url);
	free(d->query);
	free(d->target);
}

const struct power_driver power_pdudaemon_driver = {
	.name = "pdudaemon",
	.priv_size = sizeof(struct pdudaemon),
	.parse = pdudaemon_parse,
	.start = pdudaemon_start,
	.abort = pdudaemon_abort,
	.release = pdudaemon_release,
	.cycles = true,		/* "reboot" */
};
