// SPDX-License-Identifier: GPL-2.0-or-later
/* api_results.c -- result documents of a job over HTTP: JUnit XML for CI systems, KCIDB */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "config/config.h"
#include "core/strbuf.h"
#include "results/junit.h"
#include "journal/joblog.h"
#include "results/report.h"
#include "store/store.h"

#define JUNIT_CONTENT_TYPE "application/xml; charset=utf-8"

/* 410 when retention removed job @id's results (answered in *@ret); 404 and 500 are the callers'. */
static bool results_gone(struct api_request *r, int64_t id, enum MHD_Result *ret)
{
	struct job_record rec = { 0 };
	bool gone = store_job_get(api_deps_of(r)->store, id, &rec) == 0 &&
		    api_reply_gone(r, &rec, API_GONE_HISTORY, ret);

	job_record_release(&rec);
	return gone;
}

/* GET /jobs/{id}/junit: built from the store now, so it works with or without a junit backend. */
enum MHD_Result api_results_junit(struct api_request *r)
{
	struct strbuf xml = STRBUF_INIT;
	struct MHD_Response *resp;
	struct report *rep = NULL;
	char *base = api_base_url(r), *data;
	enum MHD_Result ret;
	size_t len;
	int64_t id;
	int err;

	if (api_param_id(r, 0, &id) < 0) {
		free(base);
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid job id '%s'", r->params[0]);
	}
	if (results_gone(r, id, &ret)) {
		free(base);
		return ret;
	}
	err = report_load(api_deps_of(r)->store, lab_current_config(api_deps_of(r)->lab), id, base,
			  &rep);
	free(base);
	if (err == -ENOENT)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no job %lld", (long long)id);
	if (!err)
		err = junit_build(rep, &xml);
	report_free(rep);
	if (err < 0) {
		strbuf_release(&xml);
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot build the JUnit report: %s", strerror(-err));
	}
	data = strbuf_detach(&xml, &len);
	resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, JUNIT_CONTENT_TYPE);
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* GET /jobs/{id}/kcidb: the document a kcidb backend wrote (doc/backends.md), as it is. */
enum MHD_Result api_results_kcidb(struct api_request *r)
{
	struct MHD_Response *resp;
	struct stat st;
	char *dir, *path = NULL;
	enum MHD_Result ret;
	int64_t id;
	int fd = -1;

	if (api_param_id(r, 0, &id) < 0)
		return api_reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid job id '%s'", r->params[0]);
	if (results_gone(r, id, &ret))
		return ret;
	dir = joblog_job_dir(lab_current_config(api_deps_of(r)->lab)->state_dir, id);
	if (dir && asprintf(&path, "%s/kcidb.json", dir) >= 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	free(dir);
	free(path);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return api_reply_error(r, MHD_HTTP_NOT_FOUND,
				       "no KCIDB document for job %lld (labd writes one with a kcidb backend)",
				       (long long)id);
	}
	resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	return api_reply(r, MHD_HTTP_OK, resp);
}
