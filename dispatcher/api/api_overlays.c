// SPDX-License-Identifier: GPL-2.0-or-later
/* api_overlays.c -- GET /overlays/{name}: a running job's test overlay, for its board */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "api/api_internal.h"
#include "api/api.h"
#include "overlay/overlay_files.h"

/*
 * No token: the board downloading its overlay (transfer_overlay) has none.
 * The name is 128 random bits a job registered (overlay/overlay_files.h).
 */
enum MHD_Result api_overlays_get(struct api_request *r)
{
	const char *path = overlay_files_path(api_deps_of(r)->overlays, r->params[0]);
	struct MHD_Response *resp;
	struct stat st;
	int fd;

	if (!path)
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no such overlay");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return api_reply_error(r, MHD_HTTP_NOT_FOUND, "no such overlay");
	}
	resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);	/* takes the fd */
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/gzip");
	return api_reply(r, MHD_HTTP_OK, resp);
}
