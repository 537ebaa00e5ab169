// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_queue.c -- labctl queue: the queue per device type (GET /api/v1/queue) */
#include <getopt.h>
#include <stdio.h>

#include "labctl.h"

/* "-", "42 s", "17 min", "3.5 h" into @buf */
static const char *format_wait(double s, char *buf, size_t len)
{
	if (s <= 0)
		snprintf(buf, len, "-");
	else if (s < 120)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
	return buf;
}

static void print_queue(const json_t *doc)
{
	const json_t *q;
	size_t i;
	char wait[32];

	printf("%-24s %6s %12s  %-12s %5s %5s %5s\n", "DEVICE TYPE", "QUEUED", "RESERVATIONS",
	       "OLDEST WAIT", "FREE", "BUSY", "BAD");
	json_array_foreach(doc, i, q) {
		printf("%-24s %6lld %12lld  %-12s %5lld %5lld %5lld\n",
		       json_string_value(json_object_get(q, "device_type")),
		       (long long)json_integer_value(json_object_get(q, "queued")),
		       (long long)json_integer_value(json_object_get(q, "reservations")),
		       format_wait(json_number_value(json_object_get(q, "oldest_wait")), wait,
				   sizeof(wait)),
		       (long long)json_integer_value(json_object_get(q, "free")),
		       (long long)json_integer_value(json_object_get(q, "busy")),
		       (long long)json_integer_value(json_object_get(q, "bad")));
	}
}

int cmd_queue(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *doc = NULL;
	bool json = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'F' && lc_parse_format(argv[0], optarg, &json))
			return LABCTL_ERROR;
		else if (c == 'h')
			return lc_help(argv[0]);
		else if (c != 'F')
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
	}
	if (optind != argc)
		return lc_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	ret = lc_json(lc, "GET", "/queue", NULL, &doc);
	if (ret)
		return ret;
	if (json)
		lc_print_json(doc);
	else
		print_queue(doc);
	json_decref(doc);
	return LABCTL_OK;
}
