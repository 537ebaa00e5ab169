// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_devices.c -- labctl's board commands: devices, device show, device set-state */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labctl.h"

/* "up", "down", or "-" for a board of another host (its console is there). */
static const char *console_text(const json_t *b)
{
	const json_t *up = json_object_get(b, "console_up");

	return json_is_boolean(up) ? json_is_true(up) ? "up" : "down" : "-";
}

static void print_devices(const json_t *list)
{
	const json_t *b, *job;
	char jobtext[24], until[32];
	bool hosts = false;	/* a lab of several hosts: a column for each board's */
	size_t i;

	json_array_foreach(list, i, b)
		hosts |= json_is_string(json_object_get(b, "host"));
	printf("%-16s %-16s %-12s %-6s %-12s %-19s %-8s ", "NAME", "TYPE", "STATE", "JOB",
	       "HOLDER", "UNTIL (UTC)", "CONSOLE");
	if (hosts)
		printf("%-12s ", "HOST");
	printf("REASON\n");
	json_array_foreach(list, i, b) {
		job = json_object_get(b, "job");
		if (json_is_integer(job))
			snprintf(jobtext, sizeof(jobtext), "%lld", lc_int(b, "job"));
		else
			snprintf(jobtext, sizeof(jobtext), "-");
		printf("%-16s %-16s %-12s %-6s %-12s %-19s %-8s ", lc_str(b, "name", "?"),
		       lc_str(b, "type", "?"), lc_str(b, "state", "?"), jobtext,
		       lc_str(b, "holder", "-"), lc_time(b, "hold_until", until, sizeof(until)),
		       console_text(b));
		if (hosts)
			printf("%-12s ", lc_str(b, "host", "-"));
		printf("%s\n", lc_str(b, "reason", ""));
	}
}

static void print_device(const json_t *b)
{
	const json_t *tag, *job = json_object_get(b, "job");
	char when[32];
	size_t i;

	printf("%-13s%s\n", "name:", lc_str(b, "name", "?"));
	printf("%-13s%s\n", "type:", lc_str(b, "type", "?"));
	printf("%-13s%s\n", "description:", lc_str(b, "description", "-"));
	printf("%-13s", "tags:");
	json_array_foreach(json_object_get(b, "tags"), i, tag)
		printf("%s%s", i ? ", " : "", json_string_value(tag));
	printf("%s\n", json_array_size(json_object_get(b, "tags")) ? "" : "-");
	printf("%-13s%s\n", "state:", lc_str(b, "state", "?"));
	printf("%-13s%s\n", "reason:", lc_str(b, "reason", "-"));
	if (json_is_integer(job))
		printf("%-13s%lld\n", "job:", lc_int(b, "job"));
	else
		printf("%-13s-\n", "job:");
	printf("%-13s%s\n", "holder:", lc_str(b, "holder", "-"));
	printf("%-13s%s\n", "hold until:", lc_time(b, "hold_until", when, sizeof(when)));
	printf("%-13s%s\n", "console:", console_text(b));
	if (json_is_string(json_object_get(b, "host")))
		printf("%-13s%s\n", "host:", lc_str(b, "host", "-"));
	printf("%-13s%s\n", "power:", json_is_true(json_object_get(b, "power")) ? "yes" : "none");
}

/* Options of the board commands: --json and --reason TEXT. */
static int parse_options(int argc, char **argv, const char *cmd, bool *json, const char **reason)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "reason", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "jr:h", opts, NULL)) != -1) {
		if (c == 'j' && json)
			*json = true;
		else if (c == 'F' && json && lc_parse_format(cmd, optarg, json))
			return LABCTL_ERROR;
		else if (c == 'F' && json)
			continue;
		else if (c == 'r' && reason)
			*reason = optarg;
		else if (c == 'h')
			return lc_help(cmd) - 1;	/* -1: help shown, nothing more to do */
		else
			return lc_usage_error(cmd, "invalid option '%s'", argv[optind - 1]);
	}
	return 0;
}

int cmd_devices(struct labctl *lc, int argc, char **argv)
{
	json_t *doc = NULL;
	bool json = false;
	int ret;

	ret = parse_options(argc, argv, argv[0], &json, NULL);
	if (ret)
		return ret < 0 ? LABCTL_OK : ret;
	if (optind != argc)
		return lc_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	ret = lc_json(lc, "GET", "/devices", NULL, &doc);
	if (ret)
		return ret;
	if (json)
		lc_print_json(doc);
	else
		print_devices(doc);
	json_decref(doc);
	return LABCTL_OK;
}

static int device_show(struct labctl *lc, const char *name, bool json)
{
	char *esc = lc_escape(lc, name), *path = NULL;
	json_t *doc = NULL;
	int ret = LABCTL_ERROR;

	if (esc && asprintf(&path, "/devices/%s", esc) >= 0)
		ret = lc_json(lc, "GET", path, NULL, &doc);
	free(esc);
	free(path);
	if (ret)
		return ret;
	if (json)
		lc_print_json(doc);
	else
		print_device(doc);
	json_decref(doc);
	return LABCTL_OK;
}

static int device_set_state(struct labctl *lc, const char *name, const char *state,
			    const char *reason)
{
	char *esc = lc_escape(lc, name), *path = NULL;
	json_t *body, *doc = NULL;
	int ret = LABCTL_ERROR;

	if (strcmp(state, "maintenance") && strcmp(state, "idle")) {
		free(esc);
		return lc_usage_error("device", "the state is 'maintenance' or 'idle', not '%s'",
				      state);
	}
	body = json_pack("{s:s, s:s?}", "state", state, "reason", reason);
	if (esc && body && asprintf(&path, "/devices/%s/state", esc) >= 0)
		ret = lc_json(lc, "POST", path, body, &doc);
	json_decref(body);
	free(esc);
	free(path);
	if (ret)
		return ret;
	printf("%s: %s%s%s\n", lc_str(doc, "name", name), lc_str(doc, "state", state),
	       lc_str(doc, "reason", NULL) ? ": " : "", lc_str(doc, "reason", ""));
	json_decref(doc);
	return LABCTL_OK;
}

/* labctl device show NAME [--json] | device set-state NAME STATE [--reason TEXT] */
int cmd_device(struct labctl *lc, int argc, char **argv)
{
	const char *reason = NULL;
	bool json = false;
	int ret;

	ret = parse_options(argc, argv, argv[0], &json, &reason);
	if (ret)
		return ret < 0 ? LABCTL_OK : ret;
	argc -= optind;
	argv += optind;
	if (argc == 2 && !strcmp(argv[0], "show"))
		return device_show(lc, argv[1], json);
	if (argc == 3 && !strcmp(argv[0], "set-state"))
		return device_set_state(lc, argv[1], argv[2], reason);
	return lc_usage_error("device", "expected 'show NAME' or 'set-state NAME STATE'");
}
