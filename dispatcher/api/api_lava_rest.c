// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_lava_rest.c -- LAVA's REST API (/api/v0.2/) as KernelCI, squad and scripts call it
 *
 * Django REST Framework's conventions: lists are {count, next, previous,
 * results} paged by ?limit= (50 by default) and ?offset=, errors are
 * {"detail": ...}, URLs work with and without their trailing '/', and query
 * keys a route does not read (?format=json, which KernelCI sends on every
 * request) are ignored.  Jobs' state and health are LAVA's display strings
 * (lava_results.h).  doc/lava-compat.md lists the routes and their fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "api/api_lava.h"
#include "board/board.h"
#include "config/config.h"
#include "core/strv.h"
#include "journal/joblog.h"
#include "results/lava_log.h"
#include "results/lava_results.h"
#include "core/version.h"

#define PAGE_DEFAULT 50
#define PAGE_MAX 1000
#define LOG_BLOCK (32 * 1024)	/* libmicrohttpd's buffer for a streamed log */
#define YAML_TYPE "application/yaml"

/* ---- lists: {count, next, previous, results} ---- */

struct page {
	int64_t limit, offset;
};

/* ?limit= and ?offset=; answers 400 itself. */
static int get_page(struct api_request *r, struct page *p, enum MHD_Result *ret)
{
	p->limit = PAGE_DEFAULT;
	p->offset = 0;
	if (api_query_int(r, "limit", 1, PAGE_MAX, &p->limit) < 0 ||
	    api_query_int(r, "offset", 0, INT32_MAX, &p->offset) < 0) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "'limit' must be 1 to %d and 'offset' a count", PAGE_MAX);
		return -EINVAL;
	}
	return 0;
}

struct query_copy {
	struct strbuf *url;
	CURL *curl;
};

static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct query_copy *q = cls;
	char *k, *v;

	if (!strcmp(key, "limit") || !strcmp(key, "offset"))
		return MHD_YES;
	k = curl_easy_escape(q->curl, key, 0);
	v = curl_easy_escape(q->curl, value ? value : "", 0);
	if (k && v)
		strbuf_addf(q->url, "&%s=%s", k, v);
	curl_free(k);
	curl_free(v);
	return MHD_YES;
}

/* The URL of this list at @offset, its other query keys kept; NULL: null. */
static json_t *page_url(struct api_request *r, const struct page *p, int64_t offset)
{
	struct strbuf url = STRBUF_INIT;
	struct query_copy q = { &url, curl_easy_init() };
	char *base = api_base_url(r);
	json_t *v = NULL;

	if (base && q.curl) {
		strbuf_addf(&url, "%s%s?limit=%lld&offset=%lld", base, r->url, (long long)p->limit,
			    (long long)offset);
		MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
		v = json_stringn(url.buf, url.len);
	}
	curl_easy_cleanup(q.curl);
	free(base);
	strbuf_release(&url);
	return v ? v : json_null();
}

static enum MHD_Result reply_page(struct api_request *r, const struct page *p, int64_t count,
				  json_t *results)
{
	json_t *next = p->offset + p->limit < count ? page_url(r, p, p->offset + p->limit) :
						      json_null();
	json_t *prev = p->offset > 0 ? page_url(r, p, p->offset > p->limit ?
							      p->offset - p->limit : 0) :
				       json_null();

	return api_reply_json(r, MHD_HTTP_OK,
			      json_pack("{s:I, s:o, s:o, s:o}", "count", (json_int_t)count, "next",
					next, "previous", prev, "results", results));
}

/* ---- system ---- */

static enum MHD_Result system_version(struct api_request *r)
{
	return api_reply_json(r, MHD_HTTP_OK, json_pack("{s:s}", "version", LAVA_API_VERSION));
}

static enum MHD_Result system_whoami(struct api_request *r)
{
	return api_reply_json(r, MHD_HTTP_OK,
			      json_pack("{s:o}", "user", r->who.is_user ? json_string(r->who.name) :
									  json_null()));
}

/* squad reads EVENT_SOCKET; labd publishes no ZMQ events (EVENT_NOTIFICATION false). */
static enum MHD_Result system_master_config(struct api_request *r)
{
	return api_reply_json(r, MHD_HTTP_OK,
			      json_pack("{s:s, s:s, s:b, s:i}", "EVENT_TOPIC", "org.labd",
					"EVENT_SOCKET", "tcp://*:5500", "EVENT_NOTIFICATION", 0,
					"LOG_SIZE_LIMIT", 0));
}

/* ---- jobs ---- */

/* The job of path segment 0; answers 404/500 itself. */
static int get_job(struct api_request *r, struct job_record *rec, enum MHD_Result *ret)
{
	int64_t id;
	int err;

	if (api_lava_job_id(r->params[0], &id) < 0) {
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
		return -ENOENT;
	}
	err = api_lava_job(r, id, rec);
	if (err == -ENOENT)
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
	else if (err < 0)
		*ret = api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read job %lld: %s",
				       (long long)id, strerror(-err));
	return err;
}

/* DRF's ISO-8601 time, or null. */
static json_t *drf_time(uint64_t usec)
{
	char buf[40];

	if (!usec)
		return json_null();
	joblog_format_time(usec, buf, sizeof(buf));
	return json_string(buf);
}

/* TestJobSerializer's fields. */
static json_t *job_json(const struct job_record *rec)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(rec->id));
	json_object_set_new(o, "submitter", api_json_str(rec->submitter));
	json_object_set_new(o, "viewing_groups", json_array());
	json_object_set_new(o, "description", api_json_str(rec->name));
	json_object_set_new(o, "health_check", json_false());
	json_object_set_new(o, "requested_device_type", api_json_str(rec->device_type));
	json_object_set_new(o, "tags", api_lava_tags(rec));
	json_object_set_new(o, "actual_device", api_json_str(rec->device));
	json_object_set_new(o, "submit_time", drf_time(rec->submitted));
	json_object_set_new(o, "start_time", drf_time(rec->started));
	json_object_set_new(o, "end_time", drf_time(rec->ended));
	json_object_set_new(o, "state", json_string(lava_job_state_name(rec->state)));
	json_object_set_new(o, "health", json_string(lava_job_health_name(rec->health)));
	json_object_set_new(o, "priority", json_integer(rec->priority));
	json_object_set_new(o, "definition", api_json_str(rec->definition));
	json_object_set_new(o, "original_definition", api_json_str(rec->definition));
	json_object_set_new(o, "multinode_definition", json_string(""));
	json_object_set_new(o, "metadata", api_lava_metadata(rec));
	json_object_set_new(o, "failure_tags", json_array());
	json_object_set_new(o, "failure_comment", api_json_str(rec->error_msg));
	return o;
}

static enum MHD_Result jobs_show(struct api_request *r)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;

	if (get_job(r, &rec, &ret) < 0)
		return ret;
	ret = api_reply_json(r, MHD_HTTP_OK, job_json(&rec));
	job_record_release(&rec);
	return ret;
}

/* ?NAME= of display strings, also NAME__in=a,b: a mask of what @parse accepts. */
static int query_mask(struct api_request *r, const char *name, int (*parse)(const char *, int *),
		      unsigned *mask)
{
	char key[32], *list, *save = NULL, *tok;
	const char *v = api_query(r, name);
	int one, err = 0;

	*mask = 0;
	if (v) {
		if (parse(v, &one) < 0)
			return -EINVAL;
		*mask = 1U << one;
	}
	snprintf(key, sizeof(key), "%s__in", name);
	v = api_query(r, key);
	if (!v || !(list = strdup(v)))
		return 0;
	for (tok = strtok_r(list, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		err = parse(tok, &one);
		*mask |= 1U << one;
	}
	free(list);
	return err;
}

static int parse_state(const char *name, int *ret)
{
	enum job_state s;
	int err = lava_job_state_from_name(name, &s);

	*ret = (int)s;
	return err;
}

static int parse_health(const char *name, int *ret)
{
	enum job_health h;
	int err = lava_job_health_from_name(name, &h);

	*ret = (int)h;
	return err;
}

/* TestJobFilter's state, health, requested_device_type, actual_device, submitter. */
static int job_filter_of(struct api_request *r, struct job_filter *f, enum MHD_Result *ret)
{
	unsigned states;

	f->state = -1;
	if (query_mask(r, "state", parse_state, &states) < 0 ||
	    query_mask(r, "health", parse_health, &f->healths) < 0) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST,
				       "Select a valid choice: state is one of Submitted, Running, "
				       "Canceling, Finished; health one of Unknown, Complete, "
				       "Incomplete, Canceled");
		return -EINVAL;
	}
	if (states & (states - 1)) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "one state at a time");
		return -EINVAL;
	}
	if (states)
		f->state = __builtin_ctz(states);
	f->device_type = api_query(r, "requested_device_type");
	f->device = api_query(r, "actual_device");
	f->submitter = api_query(r, "submitter");
	return 0;
}

static int add_job(const struct job_record *rec, void *ud)
{
	return json_array_append_new(ud, job_json(rec)) ? -ENOMEM : 0;
}

static enum MHD_Result jobs_list(struct api_request *r)
{
	struct job_filter f = { 0 };
	struct page p;
	enum MHD_Result ret;
	int64_t count = 0;
	json_t *list;
	int err;

	if (get_page(r, &p, &ret) < 0 || job_filter_of(r, &f, &ret) < 0)
		return ret;
	f.limit = (unsigned)p.limit;
	f.offset = (unsigned)p.offset;
	list = json_array();
	err = store_job_count_matching(api_lava_store(r), &f, &count);
	if (!err)
		err = store_job_list(api_lava_store(r), &f, add_job, list);
	if (err < 0) {
		json_decref(list);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot list jobs: %s",
				       strerror(-err));
	}
	return reply_page(r, &p, count, list);
}

/* ---- POST jobs/: {"definition": ...} as JSON, a form or multipart ---- */

struct form {
	struct strbuf def;
	bool found;
};

static enum MHD_Result form_field(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *filename, const char *type, const char *encoding,
				  const char *data, uint64_t off, size_t size)
{
	struct form *f = cls;

	if (strcmp(key, "definition"))
		return MHD_YES;
	f->found = true;
	return strbuf_add(&f->def, data, size) < 0 ? MHD_NO : MHD_YES;
}

/* The "definition" of the body (caller releases @def): 1, 0 when absent, or -EINVAL. */
static int body_definition(struct api_request *r, struct strbuf *def)
{
	const char *type = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_TYPE);
	struct MHD_PostProcessor *pp;
	struct form f = { STRBUF_INIT, false };
	json_t *doc, *v;
	int ret = 0;

	if (type && !strncasecmp(type, "application/json", 16)) {
		doc = json_loadb(r->body.buf, r->body.len, 0, NULL);
		v = json_object_get(doc, "definition");
		if (!doc)
			ret = -EINVAL;
		else if (json_is_string(v))
			ret = strbuf_add(def, json_string_value(v), json_string_length(v)) < 0 ?
				      -ENOMEM : 1;
		json_decref(doc);
		return ret;
	}
	pp = MHD_create_post_processor(r->conn, 16 * 1024, form_field, &f);
	if (!pp)
		return -EINVAL;	/* neither a form nor multipart */
	if (MHD_post_process(pp, r->body.buf, r->body.len) != MHD_YES)
		ret = -EINVAL;
	MHD_destroy_post_processor(pp);
	if (!ret && f.found)
		ret = strbuf_add(def, f.def.buf, f.def.len) < 0 ? -ENOMEM : 1;
	strbuf_release(&f.def);
	return ret;
}

static enum MHD_Result jobs_submit(struct api_request *r)
{
	struct strbuf def = STRBUF_INIT;
	enum MHD_Result ret;
	char *why = NULL;
	int64_t id = 0;
	int err;

	err = body_definition(r, &def);
	if (err <= 0) {
		strbuf_release(&def);
		if (err < 0)
			return api_reply_json(r, MHD_HTTP_BAD_REQUEST,
					      json_pack("{s:s}", "detail", "Malformed request."));
		return api_reply_json(r, MHD_HTTP_BAD_REQUEST,
				      json_pack("{s:[s]}", "definition",
						"This field is required."));
	}
	err = api_lava_submit(r, def.buf, def.len, &id, &why);
	strbuf_release(&def);
	if (err == -EINVAL || err == -E2BIG)
		ret = api_reply_json(r, MHD_HTTP_BAD_REQUEST,
				     json_pack("{s:s++}", "message", "Problem with submitted job data: ",
					       why ? why : "invalid job", ""));
	else if (err < 0)
		ret = api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "job submission failed: %s",
				      why ? why : strerror(-err));
	else
		ret = api_reply_json(r, MHD_HTTP_CREATED,
				     json_pack("{s:s, s:[I]}", "message",
					       "job(s) successfully submitted", "job_ids",
					       (json_int_t)id));
	free(why);
	return ret;
}

static enum MHD_Result jobs_validate(struct api_request *r)
{
	struct strbuf def = STRBUF_INIT;
	enum MHD_Result ret;
	char *why = NULL;
	int err;

	err = body_definition(r, &def);
	if (err <= 0) {
		strbuf_release(&def);
		return api_reply_json(r, MHD_HTTP_BAD_REQUEST,
				      json_pack("{s:[s]}", "definition",
						"This field is required."));
	}
	err = api_lava_check(r, def.buf, def.len, &why);
	strbuf_release(&def);
	ret = api_reply_json(r, MHD_HTTP_OK,
			     json_pack("{s:s++}", "message", err ? "Job invalid: " : "Job valid.",
				       err && why ? why : "", ""));
	free(why);
	return ret;
}

/*
 * The answer to a cancel (an api_answer_fn), once the job is read back: a
 * job read queued that another host started before the cancel was written
 * is left to that host (store_job_finish()), which cancels it and answers.
 */
static enum MHD_Result reply_canceled(struct api_request *r, unsigned status, int64_t unused)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (get_job(r, &rec, &ret) < 0)
		return ret;
	ret = api_reply_canceled(r, &rec, status,
				 json_pack("{s:s}", "message", "Job cancel signal sent."));
	job_record_release(&rec);
	return ret;
}

static enum MHD_Result jobs_cancel(struct api_request *r)
{
	struct job_record rec = { 0 };
	struct api_denial d;
	enum MHD_Result ret;
	int err;

	if (api_forwarding(r))
		return api_forward_answer(r);	/* the host that runs it answered */
	if (get_job(r, &rec, &ret) < 0)
		return ret;
	err = api_lava_cancel(r, &rec, &d);
	if (err == -EREMOTE)	/* its run is on another host: that host cancels it */
		ret = api_job_forward(r, rec.id, rec.host);
	job_record_release(&rec);
	if (err == -EREMOTE)
		return ret;
	if (err == -EACCES)
		return api_reply_denial(r, &d);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot cancel: %s",
				       strerror(-err));
	return api_answer_after(r, reply_canceled, MHD_HTTP_OK, 0);
}

static enum MHD_Result jobs_metadata(struct api_request *r)
{
	struct job_record rec = { 0 };
	enum MHD_Result ret;

	if (get_job(r, &rec, &ret) < 0)
		return ret;
	ret = api_reply_json(r, MHD_HTTP_OK, json_pack("{s:o}", "metadata",
						       api_lava_metadata(&rec)));
	job_record_release(&rec);
	return ret;
}

/* ---- jobs/<id>/logs/: the YAML log, streamed in bounded chunks ---- */

struct log_stream {
	struct lava_log *lg;
	struct strbuf out;
	size_t pos;
	bool limited;
	uint64_t left;		/* records still to send when limited */
};

static void log_stream_free(void *cls)
{
	struct log_stream *ls = cls;

	lava_log_close(ls->lg);
	strbuf_release(&ls->out);
	free(ls);
}

/* The next records (0: the end); at most LAVA_LOG_CHUNK bytes and one record more. */
static long log_fill(struct log_stream *ls)
{
	long n;

	strbuf_reset(&ls->out);
	ls->pos = 0;
	if (ls->limited && !ls->left)
		return 0;
	n = lava_log_read(ls->lg, LAVA_LOG_CHUNK, ls->limited ? ls->left : 0, &ls->out);
	if (n > 0 && ls->limited)
		ls->left -= (uint64_t)n;
	return n;
}

static ssize_t log_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct log_stream *ls = cls;
	size_t n;

	if (ls->pos == ls->out.len) {
		long got = log_fill(ls);

		if (got < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (!got)
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = ls->out.len - ls->pos < max ? ls->out.len - ls->pos : max;
	memcpy(buf, ls->out.buf + ls->pos, n);
	ls->pos += n;
	return (ssize_t)n;
}

/* Open the log of @rec at ?start=, limited by ?end=; answers 400 itself. */
static int open_log(struct api_request *r, const struct job_record *rec, struct log_stream *ls,
		    bool *ranged, enum MHD_Result *ret)
{
	int64_t start = 0, end = 0;
	int has_start, has_end, err;
	char **suites;
	char *dir;

	has_start = api_query_int(r, "start", 0, INT64_MAX, &start);
	has_end = api_query_int(r, "end", 0, INT64_MAX, &end);
	if (has_start < 0 || has_end < 0) {
		*ret = api_reply_error(r, MHD_HTTP_BAD_REQUEST, "'start' and 'end' are line numbers");
		return -EINVAL;
	}
	*ranged = has_start || has_end;
	ls->limited = has_end;
	ls->left = has_end && end > start ? (uint64_t)(end - start) : 0;
	dir = api_lava_job_dir(r, rec->id);
	suites = api_lava_suites(r, rec->id);
	err = dir ? lava_log_open(dir, suites, rec->state == JOB_STATE_FINISHED, &ls->lg) :
		    -ENOMEM;
	if (!err)
		err = lava_log_seek(ls->lg, (uint64_t)start);
	free(dir);
	strv_free(suites);
	if (err < 0)
		*ret = api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the log: %s",
				       strerror(-err));
	return err;
}

static enum MHD_Result jobs_logs(struct api_request *r)
{
	struct job_record rec = { 0 };
	struct MHD_Response *resp;
	struct log_stream *ls;
	enum MHD_Result ret;
	char disposition[64];
	bool ranged;
	long n;

	if (api_forwarding(r))
		return api_forward_answer(r);
	if (get_job(r, &rec, &ret) < 0)
		return ret;
	if (api_reply_gone(r, &rec, API_GONE_LOG, &ret) ||
	    api_elsewhere(r, rec.host, &ret)) {	/* the log is on the host that ran it */
		job_record_release(&rec);
		return ret;
	}
	ls = calloc(1, sizeof(*ls));
	if (!ls || open_log(r, &rec, ls, &ranged, &ret) < 0) {
		if (ls)
			log_stream_free(ls);
		job_record_release(&rec);
		return ls ? ret : MHD_NO;
	}
	snprintf(disposition, sizeof(disposition), "attachment; filename=job_%lld.yaml",
		 (long long)rec.id);
	job_record_release(&rec);
	n = log_fill(ls);
	if (n < 0 || (!n && ranged)) {	/* LAVA: an empty slice is 404 */
		log_stream_free(ls);
		return n < 0 ? api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					       "cannot read the log") :
			       api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
	}
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, LOG_BLOCK, log_read, ls,
						 log_stream_free);
	if (!resp) {
		log_stream_free(ls);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, YAML_TYPE);
	MHD_add_response_header(resp, "Content-Disposition", disposition);
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* ---- results: suites and tests ---- */

/* The job's results in LAVA's shapes; answers 404/500 itself. */
static struct lava_results *get_results(struct api_request *r, enum MHD_Result *ret)
{
	struct job_record rec = { 0 };
	struct lava_results *lr = NULL;
	int64_t id;
	int err = api_lava_job_id(r->params[0], &id);

	if (!err)
		err = api_lava_job(r, id, &rec);
	if (!err && api_reply_gone(r, &rec, API_GONE_HISTORY, ret)) {
		job_record_release(&rec);
		return NULL;
	}
	job_record_release(&rec);
	if (!err)
		err = api_lava_results(r, id, &lr);
	if (err == -ENOENT || err == -EINVAL)
		*ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
	else if (err < 0)
		*ret = api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read results: %s",
				       strerror(-err));
	return err < 0 ? NULL : lr;
}

static enum MHD_Result suites_list(struct api_request *r)
{
	struct lava_results *lr;
	enum MHD_Result ret;
	char *base = NULL;
	json_t *list;
	struct page p;
	int64_t i, n;

	if (get_page(r, &p, &ret) < 0 || !(lr = get_results(r, &ret)))
		return ret;
	base = api_base_url(r);
	n = (int64_t)strv_length(lr->suites);
	list = json_array();
	for (i = p.offset; base && i < n && i < p.offset + p.limit; i++)
		json_array_append_new(list, lava_suite_json(lr, (size_t)i, base));
	ret = reply_page(r, &p, n, list);
	free(base);
	lava_results_free(lr);
	return ret;
}

/* jobs/<id>/tests/ and jobs/<id>/suites/<sid>/tests/, ?result= */
static enum MHD_Result tests_list(struct api_request *r)
{
	const char *result = api_query(r, "result");
	struct lava_results *lr;
	int64_t suite = 0, n = 0;
	enum MHD_Result ret;
	char *base;
	json_t *list;
	struct page p;
	size_t i;

	if (get_page(r, &p, &ret) < 0 || !(lr = get_results(r, &ret)))
		return ret;
	if (r->params[1] && (api_lava_job_id(r->params[1], &suite) < 0 ||
			     suite > (int64_t)strv_length(lr->suites))) {
		lava_results_free(lr);
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
	}
	base = api_base_url(r);
	list = json_array();
	for (i = 0; base && i < lr->n_cases; i++) {
		const struct lava_case *c = &lr->cases[i];

		if ((suite && c->suite + 1 != (size_t)suite) || (result && strcmp(result, c->result)))
			continue;
		if (n >= p.offset && n < p.offset + p.limit)
			json_array_append_new(list, lava_case_json(lr, c, base));
		n++;
	}
	ret = reply_page(r, &p, n, list);
	free(base);
	lava_results_free(lr);
	return ret;
}

/* ---- devices, device types, workers ---- */

/* A board as LAVA's DeviceSerializer has a device; its tags as ids of @tags. */
static json_t *device_json(struct board *b, char *const *tags)
{
	const struct device *dev = board_device(b);
	int64_t job = board_job(b);
	json_t *ids = json_array();

	STRV_FOREACH(t, dev->tags)
		json_array_append_new(ids, json_integer(api_lava_tag_id(tags, *t)));
	return json_pack("{s:o, s:o, s:n, s:n, s:n, s:o, s:o, s:s, s:s, s:o, s:s, s:b}",
			 "hostname", api_json_str(board_name(b)), "device_type",
			 api_json_str(dev->type_name), "device_version", "physical_owner",
			 "physical_group", "description", api_json_str(dev->description), "tags",
			 ids, "state", lava_device_state_name(board_state(b)), "health",
			 lava_device_health_name(board_state(b)), "current_job",
			 job ? json_integer(job) : json_null(), "worker_host", api_lava_worker(),
			 "is_synced", 1);
}

/* DeviceFilter's device_type, hostname, state, health (any case, as LAVA upper-cases it). */
static bool device_matches(struct api_request *r, struct board *b)
{
	const char *type = api_query(r, "device_type"), *host = api_query(r, "hostname");
	const char *state = api_query(r, "state"), *health = api_query(r, "health");
	enum device_state s = board_state(b);

	return (!type || !strcmp(type, board_device(b)->type_name)) &&
	       (!host || !strcmp(host, board_name(b))) &&
	       (!state || !strcasecmp(state, lava_device_state_name(s))) &&
	       (!health || !strcasecmp(health, lava_device_health_name(s)));
}

static enum MHD_Result devices_list(struct api_request *r)
{
	struct board **boards;
	enum MHD_Result ret;
	int64_t n = 0;
	json_t *list;
	struct page p;
	size_t nb, i;

	char **tags;

	if (get_page(r, &p, &ret) < 0)
		return ret;
	boards = api_lava_boards(r, &nb);
	tags = api_lava_tag_names(r);
	list = json_array();
	for (i = 0; i < nb; i++) {
		if (!device_matches(r, boards[i]))
			continue;
		if (n >= p.offset && n < p.offset + p.limit)
			json_array_append_new(list, device_json(boards[i], tags));
		n++;
	}
	strv_free(tags);
	return reply_page(r, &p, n, list);
}

static enum MHD_Result devices_show(struct api_request *r)
{
	struct board **boards;
	enum MHD_Result ret;
	char **tags;
	size_t n, i;

	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(board_name(boards[i]), r->params[0])) {
			tags = api_lava_tag_names(r);
			ret = api_reply_json(r, MHD_HTTP_OK, device_json(boards[i], tags));
			strv_free(tags);
			return ret;
		}
	return api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
}

/* The device types of the lab's boards, each once, in board order. */
static char **device_types(struct api_request *r)
{
	struct board **boards;
	char **types = NULL;
	size_t n, i;

	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		if (!strv_contains(types, board_device(boards[i])->type_name) &&
		    strv_push(&types, board_device(boards[i])->type_name) < 0)
			return strv_free(types);
	return types;
}

static enum MHD_Result devicetypes_list(struct api_request *r)
{
	const char *name = api_query(r, "name");
	enum MHD_Result ret;
	char **types;
	int64_t n = 0;
	json_t *list;
	struct page p;

	if (get_page(r, &p, &ret) < 0)
		return ret;
	types = device_types(r);
	list = json_array();
	STRV_FOREACH(t, types) {
		if (name && strcmp(name, *t))
			continue;
		if (n >= p.offset && n < p.offset + p.limit)
			json_array_append_new(
				list, json_pack("{s:s, s:n, s:n, s:n, s:[], s:n, s:[], s:n, s:n, "
						"s:i, s:b, s:s, s:b}",
						"name", *t, "architecture", "processor", "cpu_model",
						"aliases", "bits", "cores", "core_count", "description",
						"health_frequency", 24, "disable_health_check", 1,
						"health_denominator", "hours", "display", 1));
		n++;
	}
	strv_free(types);
	return reply_page(r, &p, n, list);
}

/* One worker: this labd host. */
static enum MHD_Result workers_list(struct api_request *r)
{
	struct page p;
	enum MHD_Result ret;
	char now[40];

	if (get_page(r, &p, &ret) < 0)
		return ret;
	joblog_format_time(api_lava_now(r), now, sizeof(now));
	return reply_page(r, &p, 1,
			  json_pack("[{s:s, s:s, s:s, s:s, s:s, s:i, s:s}]", "hostname",
				    api_lava_worker(), "description", "labd", "last_ping", now,
				    "state", "Online", "health", "Active", "job_limit", 0,
				    "version", LABD_VERSION));
}

/* ---- tags: those of the lab's boards, numbered in name order ---- */

static json_t *tag_json(char *const *tags, size_t i)
{
	return json_pack("{s:I, s:s, s:n}", "id", (json_int_t)i + 1, "name", tags[i],
			 "description");
}

static enum MHD_Result tags_list(struct api_request *r)
{
	char **tags = api_lava_tag_names(r);
	enum MHD_Result ret;
	json_t *list;
	struct page p;
	size_t i, n = strv_length(tags);

	if (get_page(r, &p, &ret) < 0) {
		strv_free(tags);
		return ret;
	}
	list = json_array();
	for (i = (size_t)p.offset; i < n && i < (size_t)(p.offset + p.limit); i++)
		json_array_append_new(list, tag_json(tags, i));
	strv_free(tags);
	return reply_page(r, &p, (int64_t)n, list);
}

static enum MHD_Result tags_show(struct api_request *r)
{
	char **tags = api_lava_tag_names(r), *end;
	long id = strtol(r->params[0], &end, 10);
	enum MHD_Result ret;

	if (*end || id < 1 || (size_t)id > strv_length(tags))
		ret = api_reply_error(r, MHD_HTTP_NOT_FOUND, "Not found.");
	else
		ret = api_reply_json(r, MHD_HTTP_OK, tag_json(tags, (size_t)id - 1));
	strv_free(tags);
	return ret;
}

const struct api_route api_lava_rest_routes[] = {
	{ "GET", "/system/version", USER_ROLE_NONE, system_version, "ask" },
	{ "GET", "/system/whoami", USER_ROLE_NONE, system_whoami, "ask" },
	{ "GET", "/system/master_config", USER_ROLE_READER, system_master_config, "ask" },
	{ "GET", "/jobs", USER_ROLE_READER, jobs_list, "list jobs" },
	{ "POST", "/jobs", USER_ROLE_CI, jobs_submit, "submit jobs" },
	{ "POST", "/jobs/validate", USER_ROLE_READER, jobs_validate, "validate jobs" },
	{ "GET", "/jobs/*", USER_ROLE_READER, jobs_show, "read job %s" },
	{ "GET", "/jobs/*/logs", USER_ROLE_READER, jobs_logs, "read the log of job %s" },
	{ "GET", "/jobs/*/metadata", USER_ROLE_READER, jobs_metadata, "read job %s" },
	{ "GET", "/jobs/*/suites", USER_ROLE_READER, suites_list, "read the results of job %s" },
	{ "GET", "/jobs/*/suites/*/tests", USER_ROLE_READER, tests_list,
	  "read the results of job %s" },
	{ "GET", "/jobs/*/tests", USER_ROLE_READER, tests_list, "read the results of job %s" },
	{ "GET", "/jobs/*/junit", USER_ROLE_READER, api_results_junit,
	  "read the results of job %s" },
	{ "GET", "/jobs/*/cancel", USER_ROLE_CI, jobs_cancel, "cancel job %s" },
	{ "POST", "/jobs/*/cancel", USER_ROLE_CI, jobs_cancel, "cancel job %s" },
	{ "GET", "/devices", USER_ROLE_READER, devices_list, "list boards" },
	{ "GET", "/devices/*", USER_ROLE_READER, devices_show, "read board '%s'" },
	{ "GET", "/devicetypes", USER_ROLE_READER, devicetypes_list, "list device types" },
	{ "GET", "/workers", USER_ROLE_READER, workers_list, "list workers" },
	{ "GET", "/tags", USER_ROLE_READER, tags_list, "list tags" },
	{ "GET", "/tags/*", USER_ROLE_READER, tags_show, "read tag %s" },
	{ NULL, NULL, 0, NULL, NULL },
};
