// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_reload.c -- POST /reload: an admin reloads labd.conf and the board
 * directory, and is told what changed or why the new files were refused
 *
 * The reload is the daemon's (lab_reload(), the same as SIGHUP's): the
 * request waits, its connection suspended, until it ran.  200 {"status":
 * "reloaded", "added", "changed", "removed", "boards", "device_types"}, or
 * 422 {"status": "refused", "error", "errors": ["file:line: cause" ...]}:
 * the running configuration stays, and GET /health says the lab is
 * degraded until a reload succeeds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "board/lab.h"
#include "core/strv.h"

/* A reload the request waits for. */
struct reload_wait {
	struct api_request *r;
	json_t *answer;		/* once it ran */
	bool refused;
	bool suspended;		/* the request waits (a reload that did not run at once) */
	bool gone;		/* its connection went first: on_reloaded() frees it */
};

static json_t *names_json(char *const *names)
{
	json_t *a = json_array();

	STRV_FOREACH(n, names)
		json_array_append_new(a, api_json_str(*n));
	return a;
}

static void on_reloaded(const struct lab_reload_report *rep, void *ud)
{
	struct reload_wait *w = ud;

	w->refused = rep->refused;
	w->answer = json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:I}", "status",
			      rep->refused ? "refused" : "reloaded", "errors",
			      names_json(rep->errors), "added", names_json(rep->added), "changed",
			      names_json(rep->changed), "removed", names_json(rep->removed),
			      "boards", (json_int_t)rep->boards, "device_types",
			      (json_int_t)rep->device_types);
	if (w->answer && rep->refused)
		json_object_set_new(w->answer, "error",
				    json_string("reload refused: the running configuration stays"));
	if (w->gone) {
		json_decref(w->answer);
		free(w);
	} else if (w->suspended) {
		api_resume(w->r);
	}	/* else it ran at once: api_reload() answers */
}

static void reload_gone(struct api_request *r)
{
	struct reload_wait *w = r->pending;

	r->pending = NULL;
	if (w->answer) {	/* it ran: nobody else holds it */
		json_decref(w->answer);
		free(w);
		return;
	}
	w->gone = true;	/* on_reloaded() frees it */
}

static enum MHD_Result reload_answer(struct api_request *r)
{
	struct reload_wait *w = r->pending;
	enum MHD_Result ret;

	r->pending = NULL;
	r->pending_gone = NULL;
	ret = w->answer ? api_reply_json(r, w->refused ? MHD_HTTP_UNPROCESSABLE_CONTENT :
					 MHD_HTTP_OK, w->answer) : MHD_NO;
	free(w);
	return ret;
}

enum MHD_Result api_reload(struct api_request *r)
{
	struct reload_wait *w;
	int err;

	if (r->pending)
		return reload_answer(r);
	w = calloc(1, sizeof(*w));
	if (!w)
		return MHD_NO;
	w->r = r;
	err = lab_reload(api_deps_of(r)->lab, on_reloaded, w);
	if (err < 0) {
		free(w);
		return api_reply_error(r, err == -ENOTSUP ? MHD_HTTP_NOT_IMPLEMENTED :
				       MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot reload: %s",
				       strerror(-err));
	}
	r->pending = w;
	if (w->answer)	/* the store answered at once (SQLite) */
		return reload_answer(r);
	w->suspended = true;
	r->pending_gone = reload_gone;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}
