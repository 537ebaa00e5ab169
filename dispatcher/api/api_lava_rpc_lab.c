// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_lava_rpc_lab.c -- LAVA's XML-RPC methods about the lab: devices, device
 * types, workers, tags, aliases, as lavacli's commands call them
 *
 * labd's boards are LAVA's devices, its device types LAVA's, this labd host
 * the one worker, the boards' tags LAVA's tags (ids given in name order, as
 * REST numbers them: api_lava_tag_names()).  What lavacli reads is answered
 * in LAVA's shapes (every key its plain output prints, and those `system
 * export` reads).  Of the changes, an admin may take a device or a worker's
 * devices out (health MAINTENANCE, RETIRED, BAD) and put them back (GOOD,
 * UNKNOWN, ACTIVE): what `lavacli devices maintenance` and `workers
 * maintenance` do.  The others (adding devices, tags, templates) would
 * change board files labd only reads: refused with a fault 400 saying where
 * to make the change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_lava_rpc.h"
#include "board/board.h"
#include "config/config.h"
#include "core/strv.h"
#include "core/version.h"
#include "results/lava_results.h"

#define LAVA_RPC_API_VERSION 2	/* system.api_version of LAVA's server */

/* The board named by parameter @i, or NULL with a fault (400, 404). */
static struct board *param_board(xmlrpc_env *env, xmlrpc_value *params, int i,
				 struct api_request *r)
{
	struct board **boards;
	char *name = NULL;
	size_t n, k;

	if (rpc_param_str(env, params, i, "hostname", &name, NULL) < 0)
		return NULL;
	boards = api_lava_boards(r, &n);
	for (k = 0; k < n && strcmp(board_name(boards[k]), name); k++)
		;
	if (k == n)
		xmlrpc_env_set_fault_formatted(env, 404, "Device '%s' was not found.", name);
	free(name);
	return k < n ? boards[k] : NULL;
}

/* A board file's change refused: @what, of @board (or the lab). */
static xmlrpc_value *refuse_change(xmlrpc_env *env, const char *what)
{
	xmlrpc_env_set_fault_formatted(env, 400, "labd's boards, device types and tags are defined in files: %s in the board directory (labd.conf's devices_dir), then 'labctl reload'",
				       what);
	return NULL;
}

static xmlrpc_value *names_value(xmlrpc_env *env, char *const *names)
{
	xmlrpc_value *a = xmlrpc_array_new(env);

	STRV_FOREACH(n, names)
		rpc_append(env, a, rpc_str(env, *n));
	return a;
}

/* ---- devices ---- */

/* scheduler.devices.list(all=False): hostname, type, health, state, current_job, pipeline */
static xmlrpc_value *devices_list(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	xmlrpc_value *list = xmlrpc_array_new(env), *st;
	struct board **boards;
	size_t n, i;

	boards = api_lava_boards(r, &n);
	for (i = 0; i < n && !env->fault_occurred; i++) {
		int64_t job = board_job(boards[i]);

		st = xmlrpc_struct_new(env);
		rpc_put(env, st, "hostname", rpc_str(env, board_name(boards[i])));
		rpc_put(env, st, "type", rpc_str(env, board_device(boards[i])->type_name));
		rpc_put(env, st, "health", xmlrpc_string_new(env, lava_device_health_name(
								      board_state(boards[i]))));
		rpc_put(env, st, "state", xmlrpc_string_new(env, lava_device_state_name(
								     board_state(boards[i]))));
		rpc_put(env, st, "current_job", job ? xmlrpc_int_new(env, (int)job) :
						      xmlrpc_nil_new(env));
		rpc_put(env, st, "pipeline", xmlrpc_bool_new(env, 1));
		rpc_append(env, list, st);
	}
	return rpc_done(env, list);
}

/* scheduler.devices.show(hostname): what `lavacli devices show` and `system export` read. */
static xmlrpc_value *devices_show(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct board *b = param_board(env, params, 0, r);
	const struct device *dev;
	xmlrpc_value *st;
	int64_t job;

	if (!b)
		return NULL;
	dev = board_device(b);
	job = board_job(b);
	st = xmlrpc_struct_new(env);
	rpc_put(env, st, "hostname", rpc_str(env, board_name(b)));
	rpc_put(env, st, "device_type", rpc_str(env, dev->type_name));
	rpc_put(env, st, "state", xmlrpc_string_new(env, lava_device_state_name(board_state(b))));
	rpc_put(env, st, "health", xmlrpc_string_new(env, lava_device_health_name(board_state(b))));
	rpc_put(env, st, "health_job", xmlrpc_bool_new(env, 0));
	rpc_put(env, st, "description", rpc_str(env, dev->description ? dev->description : ""));
	rpc_put(env, st, "public", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "user", xmlrpc_nil_new(env));
	rpc_put(env, st, "group", xmlrpc_nil_new(env));
	rpc_put(env, st, "pipeline", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "has_device_dict", xmlrpc_bool_new(env, 0));
	rpc_put(env, st, "worker", rpc_str(env, api_lava_worker()));
	rpc_put(env, st, "current_job", job ? xmlrpc_int_new(env, (int)job) : xmlrpc_nil_new(env));
	rpc_put(env, st, "tags", names_value(env, dev->tags));
	return rpc_done(env, st);
}

static xmlrpc_value *devices_tags_list(xmlrpc_env *env, xmlrpc_value *params,
				       struct api_request *r)
{
	struct board *b = param_board(env, params, 0, r);

	return b ? names_value(env, board_device(b)->tags) : NULL;
}

/*
 * LAVA's device health as an admin sets it, as labd's board state: 0 with
 * @ret, or a fault 400 (LOOPING: labd has no looping health checks).
 */
static int health_state(xmlrpc_env *env, const char *health, enum device_state *ret)
{
	static const char *const out[] = { "MAINTENANCE", "RETIRED", "BAD", NULL };
	static const char *const in[] = { "GOOD", "UNKNOWN", "ACTIVE", NULL };
	size_t i;

	for (i = 0; out[i]; i++)
		if (!strcasecmp(health, out[i])) {
			*ret = DEVICE_STATE_MAINTENANCE;
			return 0;
		}
	for (i = 0; in[i]; i++)
		if (!strcasecmp(health, in[i])) {
			*ret = DEVICE_STATE_IDLE;
			return 0;
		}
	xmlrpc_env_set_fault_formatted(env, 400, "Invalid health '%s': labd takes GOOD, UNKNOWN, MAINTENANCE, RETIRED or BAD",
				       health);
	return -EINVAL;
}

/* Board @b to the state of @health (LAVA's name), by r->who. */
static int set_health(xmlrpc_env *env, struct api_request *r, struct board *b,
		      const char *health)
{
	enum device_state s;

	if (health_state(env, health, &s) < 0)
		return -EINVAL;
	if (s == DEVICE_STATE_IDLE && board_state(b) != DEVICE_STATE_MAINTENANCE &&
	    board_state(b) != DEVICE_STATE_BAD)
		return 0;	/* good already: a running job is left alone */
	if (api_board_set_state(r, b, s, "health set through LAVA's API") < 0) {
		xmlrpc_env_set_fault_formatted(env, 500, "cannot set the health of '%s'",
					       board_name(b));
		return -EIO;
	}
	return 0;
}

/*
 * scheduler.devices.update(hostname, worker, user, group, public, health,
 * description): the health alone (`lavacli devices maintenance`, `update
 * --health`); the others are the board file's.
 */
static xmlrpc_value *devices_update(xmlrpc_env *env, xmlrpc_value *params,
				    struct api_request *r)
{
	static const char *const fields[] = { NULL, "worker", "user", "group", "public", NULL,
					      "description" };
	struct board *b = param_board(env, params, 0, r);
	char *health = NULL, what[128];
	xmlrpc_value *v;
	int i;

	if (!b)
		return NULL;
	for (i = 1; i < 7; i++) {
		if (!fields[i] || !(v = rpc_param(env, params, i)))
			continue;
		xmlrpc_DECREF(v);
		snprintf(what, sizeof(what), "change the %s of board '%s' in its file", fields[i],
			 board_name(b));
		return refuse_change(env, what);
	}
	if (rpc_param_opt_str(env, params, 5, "health", &health) < 0)
		return NULL;
	if (health)
		set_health(env, r, b, health);
	free(health);
	return env->fault_occurred ? NULL : xmlrpc_nil_new(env);
}

/* scheduler.devices.get_dictionary: labd's boards are no jinja2 device dictionaries. */
static xmlrpc_value *devices_get_dictionary(xmlrpc_env *env, xmlrpc_value *params,
					    struct api_request *r)
{
	struct board *b = param_board(env, params, 0, r);

	if (b)
		xmlrpc_env_set_fault_formatted(env, 404, "Device '%s' has no LAVA device dictionary: labd defines it in %s:%d",
					       board_name(b), board_device(b)->file,
					       board_device(b)->line);
	return NULL;
}

static xmlrpc_value *devices_change(xmlrpc_env *env, xmlrpc_value *params,
				    struct api_request *r)
{
	return refuse_change(env, "add or change the board (its tags too)");
}

/* ---- device types ---- */

/* The device types of the lab's boards, each once, in board order (strv). */
static char **board_types(struct api_request *r)
{
	struct board **boards;
	char **types = NULL;
	size_t n, i;

	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		if (!strv_contains(types, board_device(boards[i])->type_name))
			strv_push(&types, board_device(boards[i])->type_name);
	return types;
}

/* The boards of device type @type (strv). */
static char **boards_of_type(struct api_request *r, const char *type)
{
	struct board **boards;
	char **names = NULL;
	size_t n, i;

	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(board_device(boards[i])->type_name, type))
			strv_push(&names, board_name(boards[i]));
	return names;
}

/* scheduler.device_types.list(all=False): name, devices (count), installed, template */
static xmlrpc_value *device_types_list(xmlrpc_env *env, xmlrpc_value *params,
				       struct api_request *r)
{
	xmlrpc_value *list = xmlrpc_array_new(env), *st;
	char **types = board_types(r), **names;

	STRV_FOREACH(t, types) {
		names = boards_of_type(r, *t);
		st = xmlrpc_struct_new(env);
		rpc_put(env, st, "name", rpc_str(env, *t));
		rpc_put(env, st, "devices", xmlrpc_int_new(env, (int)strv_length(names)));
		rpc_put(env, st, "installed", xmlrpc_bool_new(env, 1));
		rpc_put(env, st, "template", xmlrpc_bool_new(env, 1));
		rpc_append(env, list, st);
		strv_free(names);
	}
	strv_free(types);
	return rpc_done(env, list);
}

/* The device type named by parameter 0 (caller frees), or NULL with a fault 404. */
static char *param_type(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	char **types, *name = NULL;

	if (rpc_param_str(env, params, 0, "name", &name, NULL) < 0)
		return NULL;
	types = board_types(r);
	if (!strv_contains(types, name)) {
		xmlrpc_env_set_fault_formatted(env, 404, "Device-type '%s' was not found.", name);
		free(name);
		name = NULL;
	}
	strv_free(types);
	return name;
}

static xmlrpc_value *device_types_show(xmlrpc_env *env, xmlrpc_value *params,
				       struct api_request *r)
{
	char *name = param_type(env, params, r), **boards;
	const struct device_type *t;
	xmlrpc_value *st;

	if (!name)
		return NULL;
	t = config_find_type(lab_current_config(api_deps_of(r)->lab), name);
	boards = boards_of_type(r, name);
	st = xmlrpc_struct_new(env);
	rpc_put(env, st, "name", rpc_str(env, name));
	rpc_put(env, st, "description", rpc_str(env, t && t->extends ? t->extends : ""));
	rpc_put(env, st, "display", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "owners_only", xmlrpc_bool_new(env, 0));
	rpc_put(env, st, "health_disabled", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "health_denominator", xmlrpc_string_new(env, "hours"));
	rpc_put(env, st, "health_frequency", xmlrpc_int_new(env, 24));
	rpc_put(env, st, "aliases", xmlrpc_array_new(env));
	rpc_put(env, st, "devices", names_value(env, boards));
	strv_free(boards);
	free(name);
	return rpc_done(env, st);
}

static xmlrpc_value *device_types_template(xmlrpc_env *env, xmlrpc_value *params,
					   struct api_request *r)
{
	char *name = param_type(env, params, r);
	const struct device_type *t;

	if (!name)
		return NULL;
	t = config_find_type(lab_current_config(api_deps_of(r)->lab), name);
	xmlrpc_env_set_fault_formatted(env, 404, "Device-type '%s' has no jinja2 template: labd defines it in %s:%d",
				       name, t ? t->file : "?", t ? t->line : 0);
	free(name);
	return NULL;
}

static xmlrpc_value *device_types_aliases(xmlrpc_env *env, xmlrpc_value *params,
					  struct api_request *r)
{
	char *name = param_type(env, params, r);

	free(name);
	return name ? xmlrpc_array_new(env) : NULL;
}

/* ---- workers: this labd host ---- */

static xmlrpc_value *workers_list(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	xmlrpc_value *a = xmlrpc_array_new(env);

	rpc_append(env, a, rpc_str(env, api_lava_worker()));
	return rpc_done(env, a);
}

/* Parameter 0 names this host: 0, or a fault 404. */
static int param_worker(xmlrpc_env *env, xmlrpc_value *params)
{
	char *name = NULL;
	int err = rpc_param_str(env, params, 0, "hostname", &name, NULL);

	if (!err && strcmp(name, api_lava_worker())) {
		xmlrpc_env_set_fault_formatted(env, 404, "Worker '%s' was not found.", name);
		err = -ENOENT;
	}
	free(name);
	return err;
}

static xmlrpc_value *workers_show(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct board **boards;
	char **names = NULL;
	xmlrpc_value *st;
	size_t n, i;

	if (param_worker(env, params) < 0)
		return NULL;
	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		strv_push(&names, board_name(boards[i]));
	st = xmlrpc_struct_new(env);
	rpc_put(env, st, "hostname", rpc_str(env, api_lava_worker()));
	rpc_put(env, st, "description", xmlrpc_string_new(env, "labd"));
	rpc_put(env, st, "state", xmlrpc_string_new(env, "Online"));
	rpc_put(env, st, "health", xmlrpc_string_new(env, "Active"));
	rpc_put(env, st, "devices", names_value(env, names));
	rpc_put(env, st, "last_ping", rpc_time(env, api_lava_now(r)));
	rpc_put(env, st, "job_limit", xmlrpc_int_new(env, 0));
	rpc_put(env, st, "version", xmlrpc_string_new(env, LABD_VERSION));
	rpc_put(env, st, "default_config", xmlrpc_bool_new(env, 1));
	rpc_put(env, st, "default_env", xmlrpc_bool_new(env, 1));
	strv_free(names);
	return rpc_done(env, st);
}

/*
 * scheduler.workers.update(hostname, description, health, job_limit): the
 * health (MAINTENANCE, ACTIVE, RETIRED) of every board of this host, as
 * `lavacli workers maintenance` and `system maintenance` set it.
 */
static xmlrpc_value *workers_update(xmlrpc_env *env, xmlrpc_value *params,
				    struct api_request *r)
{
	char *health = NULL;
	struct board **boards;
	xmlrpc_value *v;
	size_t n, i;

	if (param_worker(env, params) < 0)
		return NULL;
	if ((v = rpc_param(env, params, 1)) || (v = rpc_param(env, params, 3))) {
		xmlrpc_DECREF(v);
		return refuse_change(env, "the worker's description and job limit are labd.conf's: change them");
	}
	if (rpc_param_opt_str(env, params, 2, "health", &health) < 0)
		return NULL;
	boards = api_lava_boards(r, &n);
	for (i = 0; health && i < n && !env->fault_occurred; i++)
		set_health(env, r, boards[i], health);
	free(health);
	return env->fault_occurred ? NULL : xmlrpc_nil_new(env);
}

/* ---- tags ---- */

static xmlrpc_value *tags_list(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	xmlrpc_value *list = xmlrpc_array_new(env), *st;
	char **tags = api_lava_tag_names(r);

	STRV_FOREACH(t, tags) {
		st = xmlrpc_struct_new(env);
		rpc_put(env, st, "name", rpc_str(env, *t));
		rpc_put(env, st, "description", xmlrpc_nil_new(env));
		rpc_append(env, list, st);
	}
	strv_free(tags);
	return rpc_done(env, list);
}

static xmlrpc_value *tags_show(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	struct board **boards;
	char *name = NULL, **names = NULL;
	xmlrpc_value *st = NULL;
	size_t n, i;

	if (rpc_param_str(env, params, 0, "name", &name, NULL) < 0)
		return NULL;
	boards = api_lava_boards(r, &n);
	for (i = 0; i < n; i++)
		if (strv_contains(board_device(boards[i])->tags, name))
			strv_push(&names, board_name(boards[i]));
	if (!names) {
		xmlrpc_env_set_fault_formatted(env, 404, "Tag '%s' was not found.", name);
	} else {
		st = xmlrpc_struct_new(env);
		rpc_put(env, st, "name", rpc_str(env, name));
		rpc_put(env, st, "description", xmlrpc_nil_new(env));
		rpc_put(env, st, "devices", names_value(env, names));
	}
	strv_free(names);
	free(name);
	return rpc_done(env, st);
}

static xmlrpc_value *tags_change(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	return refuse_change(env, "add or remove the tag in the boards' files");
}

/* ---- aliases (labd has none), system ---- */

static xmlrpc_value *aliases_list(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	return xmlrpc_array_new(env);
}

static xmlrpc_value *aliases_show(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	xmlrpc_env_set_fault(env, 404, "labd has no device type aliases.");
	return NULL;
}

/* A lava-worker's files (configuration, environment, certificate): labd has none. */
static xmlrpc_value *workers_files(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	xmlrpc_env_set_fault(env, 404, "labd has no lava-worker configuration, environment or certificate: labd.conf configures the host");
	return NULL;
}

/* LAVA's ZMQ event publisher and its certificate: labd's events are Server-Sent Events. */
static xmlrpc_value *no_zmq(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	xmlrpc_env_set_fault(env, 404, "labd publishes no ZMQ events: its events stream as Server-Sent Events at /api/v1/stream");
	return NULL;
}

static xmlrpc_value *types_change(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r)
{
	return refuse_change(env, "add or change the device type (its aliases, template, health check)");
}

static xmlrpc_value *workers_change(xmlrpc_env *env, xmlrpc_value *params,
				    struct api_request *r)
{
	return refuse_change(env, "a labd host is a worker: start labd there, with the lab's store");
}

static xmlrpc_value *system_api_version(xmlrpc_env *env, xmlrpc_value *params,
					struct api_request *r)
{
	return xmlrpc_int_new(env, LAVA_RPC_API_VERSION);
}

const struct rpc_method api_rpc_lab_methods[] = {
	{ "system.api_version", USER_ROLE_NONE, "ask", system_api_version },
	{ "scheduler.devices.list", USER_ROLE_READER, "list boards", devices_list },
	{ "scheduler.devices.show", USER_ROLE_READER, "read boards", devices_show },
	{ "scheduler.devices.tags.list", USER_ROLE_READER, "read boards", devices_tags_list },
	{ "scheduler.devices.update", USER_ROLE_ADMIN, "set the health of boards",
	  devices_update },
	{ "scheduler.devices.get_dictionary", USER_ROLE_READER, "read boards",
	  devices_get_dictionary },
	{ "scheduler.devices.add", USER_ROLE_ADMIN, "add boards", devices_change },
	{ "scheduler.devices.set_dictionary", USER_ROLE_ADMIN, "change boards", devices_change },
	{ "scheduler.devices.tags.add", USER_ROLE_ADMIN, "change boards", devices_change },
	{ "scheduler.devices.tags.delete", USER_ROLE_ADMIN, "change boards", devices_change },
	{ "scheduler.device_types.list", USER_ROLE_READER, "list device types",
	  device_types_list },
	{ "scheduler.device_types.show", USER_ROLE_READER, "read device types",
	  device_types_show },
	{ "scheduler.device_types.get_template", USER_ROLE_READER, "read device types",
	  device_types_template },
	{ "scheduler.device_types.get_health_check", USER_ROLE_READER, "read device types",
	  device_types_template },
	{ "scheduler.device_types.aliases.list", USER_ROLE_READER, "read device types",
	  device_types_aliases },
	{ "scheduler.workers.list", USER_ROLE_READER, "list workers", workers_list },
	{ "scheduler.workers.show", USER_ROLE_READER, "read workers", workers_show },
	{ "scheduler.workers.update", USER_ROLE_ADMIN, "set the health of workers",
	  workers_update },
	{ "scheduler.tags.list", USER_ROLE_READER, "list tags", tags_list },
	{ "scheduler.tags.show", USER_ROLE_READER, "read tags", tags_show },
	{ "scheduler.tags.add", USER_ROLE_ADMIN, "add tags", tags_change },
	{ "scheduler.tags.delete", USER_ROLE_ADMIN, "delete tags", tags_change },
	{ "scheduler.aliases.list", USER_ROLE_READER, "list aliases", aliases_list },
	{ "scheduler.aliases.show", USER_ROLE_READER, "read aliases", aliases_show },
	/* what lavacli changes or reads of LAVA's own: said why not, never -506 */
	{ "scheduler.aliases.add", USER_ROLE_ADMIN, "add aliases", types_change },
	{ "scheduler.aliases.delete", USER_ROLE_ADMIN, "delete aliases", types_change },
	{ "scheduler.device_types.add", USER_ROLE_ADMIN, "add device types", types_change },
	{ "scheduler.device_types.update", USER_ROLE_ADMIN, "change device types", types_change },
	{ "scheduler.device_types.set_template", USER_ROLE_ADMIN, "change device types",
	  types_change },
	{ "scheduler.device_types.set_health_check", USER_ROLE_ADMIN, "change device types",
	  types_change },
	{ "scheduler.device_types.aliases.add", USER_ROLE_ADMIN, "change device types",
	  types_change },
	{ "scheduler.device_types.aliases.delete", USER_ROLE_ADMIN, "change device types",
	  types_change },
	{ "scheduler.workers.add", USER_ROLE_ADMIN, "add workers", workers_change },
	{ "scheduler.workers.get_config", USER_ROLE_ADMIN, "read workers", workers_files },
	{ "scheduler.workers.set_config", USER_ROLE_ADMIN, "change workers", workers_files },
	{ "scheduler.workers.get_env", USER_ROLE_ADMIN, "read workers", workers_files },
	{ "scheduler.workers.set_env", USER_ROLE_ADMIN, "change workers", workers_files },
	{ "scheduler.workers.get_certificate", USER_ROLE_ADMIN, "read workers", workers_files },
	{ "scheduler.workers.set_certificate", USER_ROLE_ADMIN, "change workers", workers_files },
	{ "scheduler.get_publisher_event_socket", USER_ROLE_NONE, "ask", no_zmq },
	{ "system.get_master_certificate", USER_ROLE_NONE, "ask", no_zmq },
};

const size_t api_rpc_lab_n_methods = sizeof(api_rpc_lab_methods) / sizeof(api_rpc_lab_methods[0]);
