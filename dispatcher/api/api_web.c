// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_web.c -- the dashboard's files: GET / and everything outside /api/ and /metrics
 *
 *   /static/FILE              FILE of the dashboard's directory (web/ in the tree)
 *   /javascript/PKG/FILE      Debian's packaged libraries (libjs-xterm, libjs-chart.js),
 *                             only the packages listed in web_packages[]
 *   any other path            index.html: the dashboard routes by path itself
 *                             (/jobs/12, /boards/sim-01), so '#L1234' stays a line anchor
 *
 * The dashboard's directory is http.web_root, else web/ beside the build
 * directory labd runs from (build/labd: the source tree's copy), else the
 * installed LABD_WEB_DIR.  The files hold no data: everyone may read them;
 * what they show comes from the API with the reader's own token.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "config/config.h"
#include "board/lab.h"

#ifndef LABD_WEB_DIR
#define LABD_WEB_DIR "/usr/share/labd/web"
#endif
#define JAVASCRIPT_DIR "/usr/share/javascript"
#define WEB_MAX_PATH 256

static const char *const web_packages[] = { "xterm", "chart.js" };

static const struct {
	const char *ext;
	const char *type;
} content_types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".png", "image/png" },
	{ ".svg", "image/svg+xml" },
	{ ".ico", "image/x-icon" },
	{ ".json", "application/json" },
	{ ".map", "application/json" },
};

static const char *content_type(const char *path)
{
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot && i < sizeof(content_types) / sizeof(content_types[0]); i++)
		if (!strcmp(dot, content_types[i].ext))
			return content_types[i].type;
	return "application/octet-stream";
}

/* The tree's web/ when labd runs from a build directory (<tree>/build/labd), or NULL. */
static char *tree_web_dir(void)
{
	char exe[PATH_MAX], *slash, *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	if (!strncmp(exe, "/usr/", 5))	/* installed */
		return NULL;
	for (int up = 0; up < 2; up++) {	/* <tree>/build/labd -> <tree> */
		slash = strrchr(exe, '/');
		if (!slash)
			return NULL;
		*slash = '\0';
	}
	if (asprintf(&dir, "%s/web/index.html", exe) < 0)
		return NULL;
	if (access(dir, R_OK) < 0) {
		free(dir);
		return NULL;
	}
	*strrchr(dir, '/') = '\0';
	return dir;
}

static char *web_root(const struct api_deps *d)
{
	const struct lab_config *c = lab_current_config(d->lab);
	char *dir;

	if (c->http.web_root)
		return strdup(c->http.web_root);
	dir = tree_web_dir();
	return dir ? dir : strdup(LABD_WEB_DIR);
}

/* A relative path of plain names: no "..", no hidden files, no odd bytes. */
static bool safe_path(const char *p)
{
	const char *seg;

	if (!*p || strlen(p) >= WEB_MAX_PATH)
		return false;
	for (seg = p; *seg; seg++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/",
			    *seg))
			return false;
	for (seg = p; seg; seg = strchr(seg, '/')) {
		if (*seg == '/')
			seg++;
		if (*seg == '.' || *seg == '/' || !*seg)
			return false;
	}
	return true;
}

static bool known_package(const char *rel)
{
	size_t i, n = strcspn(rel, "/");

	for (i = 0; i < sizeof(web_packages) / sizeof(web_packages[0]); i++)
		if (strlen(web_packages[i]) == n && !strncmp(rel, web_packages[i], n) && rel[n])
			return true;
	return false;
}

static enum MHD_Result reply_file(struct api_request *r, const char *dir, const char *rel,
				  bool cache)
{
	struct MHD_Response *resp;
	struct stat st;
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dir, rel) < 0)
		return MHD_NO;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no such file '%s'", r->url);
	}
	resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(rel));
	/* the packaged libraries change with the package only; ours with labd */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				cache ? "max-age=86400" : "no-cache");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	return api_reply(r, MHD_HTTP_OK, resp);
}

enum MHD_Result api_web_get(struct api_request *r)
{
	const struct lab_config *c = lab_current_config(api_deps_of(r)->lab);
	const char *url = r->url, *rel;
	enum MHD_Result ret;
	char *root;

	if (!strncmp(url, "/javascript/", 12)) {
		rel = url + 12;
		if (!safe_path(rel) || !known_package(rel))
			return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no such file '%s'", url);
		return reply_file(r, c->http.javascript_dir ? c->http.javascript_dir
							    : JAVASCRIPT_DIR,
				  rel, true);
	}
	if (!strncmp(url, "/static/", 8)) {
		rel = url + 8;
		if (!safe_path(rel))
			return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no such file '%s'", url);
	} else {
		rel = "index.html";
	}
	root = web_root(api_deps_of(r));
	if (!root)
		return MHD_NO;
	ret = reply_file(r, root, rel, false);
	free(root);
	return ret;
}
