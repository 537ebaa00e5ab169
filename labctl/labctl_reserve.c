// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_reserve.c -- labctl reserve, release and reservations: developers holding boards */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "labctl.h"

#define RESERVE_POLL_MS 300		/* how often a waiting reserve asks where it stands */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
}

int lc_parse_duration(const char *s, double *ret)
{
	double total = 0, v;
	char *end;

	if (!*s)
		return -EINVAL;
	while (*s) {
		errno = 0;
		v = strtod(s, &end);
		if (end == s || errno || v < 0 || !isfinite(v))
			return -EINVAL;
		switch (*end) {
		case 'd':
			v *= 24;
			/* fall through */
		case 'h':
			v *= 60;
			/* fall through */
		case 'm':
			v *= 60;
			/* fall through */
		case 's':
			end++;
			break;
		case '\0':
			break;
		default:
			return -EINVAL;
		}
		total += v;
		s = end;
	}
	*ret = total;
	return 0;
}

/* "a,b" into a JSON array. */
static json_t *tags_array(const char *list)
{
	json_t *arr = json_array();
	char *copy = strdup(list), *save = NULL, *t;

	for (t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
		if (*t)
			json_array_append_new(arr, json_string(t));
	free(copy);
	return arr;
}

static void print_held(const json_t *res)
{
	char until[32];

	printf("%s reserved until %s UTC (reservation %lld)\n", lc_str(res, "device", "?"),
	       lc_time(res, "until", until, sizeof(until)), lc_int(res, "id"));
	fflush(stdout);
}

static void print_waiting(const json_t *res)
{
	const char *board = lc_str(res, "board", NULL);

	if (board)
		printf("waiting for board '%s': position %lld in the queue\n", board,
		       lc_int(res, "position"));
	else
		printf("waiting for a '%s' board: position %lld in the queue\n",
		       lc_str(res, "device_type", "?"), lc_int(res, "position"));
	fflush(stdout);
}

/* Ctrl-C while waiting: the reservation leaves the queue. */
static int give_up(struct labctl *lc, long long id)
{
	char path[64];
	json_t *doc = NULL;

	snprintf(path, sizeof(path), "/reservations/%lld/cancel", id);
	if (lc_json(lc, "POST", path, NULL, &doc) == 0)
		fprintf(stderr, "labctl: reservation %lld canceled\n", id);
	json_decref(doc);
	return LABCTL_INTERRUPTED;
}

/* Poll reservation @res until it holds a board or ends; prints the position as it moves. */
static int wait_granted(struct labctl *lc, json_t *res)
{
	struct timespec ts = { 0, RESERVE_POLL_MS * 1000000L };
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	long long id = lc_int(res, "id"), pos = -1, polls = 0;
	const char *state = lc_str(res, "state", "");
	char path[64];
	int ret = 0;

	snprintf(path, sizeof(path), "/reservations/%lld", id);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	json_incref(res);
	while (!ret && !interrupted && !strcmp(state, "waiting")) {
		/* the first answer is always "waiting": the queue is planned right after */
		if (polls++ && lc_int(res, "position") != pos) {
			pos = lc_int(res, "position");
			print_waiting(res);
		}
		nanosleep(&ts, NULL);
		json_decref(res);
		res = NULL;
		if (!interrupted)
			ret = lc_json(lc, "GET", path, NULL, &res);
		state = ret || !res ? "" : lc_str(res, "state", "");
	}
	sigaction(SIGINT, &old, NULL);
	/* Ctrl-C may also land inside a request and fail it: give up either way */
	if (interrupted || ret == LABCTL_INTERRUPTED) {
		json_decref(res);
		return give_up(lc, id);
	}
	if (!ret && !strcmp(state, "active")) {
		print_held(res);
	} else if (!ret) {
		fprintf(stderr, "labctl: reservation %lld ended: %s\n", id,
			lc_str(res, "end_reason", "?"));
		ret = LABCTL_FAILED;
	}
	json_decref(res);
	return ret;
}

static int renew(struct labctl *lc, const char *board, double seconds)
{
	json_t *body = json_object(), *res = NULL;
	char *esc = lc_escape(lc, board), path[512];
	int ret;

	if (seconds >= 0)
		json_object_set_new(body, "duration", json_real(seconds));
	snprintf(path, sizeof(path), "/devices/%s/renew", esc ? esc : board);
	free(esc);
	ret = lc_json(lc, "POST", path, body, &res);
	json_decref(body);
	if (!ret)
		print_held(res);
	json_decref(res);
	return ret;
}

struct reserve_opts {
	const char *type;
	const char *tags;
	double seconds;		/* -1: labd's default */
	long priority;		/* -1: labd's default */
	bool renew;
	bool no_wait;
};

static int parse_reserve(int argc, char **argv, struct reserve_opts *o)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "tags", required_argument, NULL, 'g' },
		{ "for", required_argument, NULL, 'f' },
		{ "priority", required_argument, NULL, 'p' },
		{ "renew", no_argument, NULL, 'r' },
		{ "no-wait", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "t:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->type = optarg;
			break;
		case 'g':
			o->tags = optarg;
			break;
		case 'f':
			if (lc_parse_duration(optarg, &o->seconds) < 0)
				return lc_usage_error(argv[0], "invalid duration '%s' (2h, 30m, 90s, 1h30m)",
						      optarg);
			break;
		case 'p':
			o->priority = strtol(optarg, &end, 10);
			if (o->priority < 0 || o->priority > 100 || *end || !*optarg)
				return lc_usage_error(argv[0], "invalid priority '%s' (0 to 100)",
						      optarg);
			break;
		case 'r':
			o->renew = true;
			break;
		case 'n':
			o->no_wait = true;
			break;
		case 'h':
			return lc_help(argv[0]) - 1;	/* -1: help shown, nothing more to do */
		default:
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1 || (argc - optind == 0) == !o->type || (o->renew && o->type))
		return lc_usage_error(argv[0], "give a board, or --type (and --renew only a board)");
	return 0;
}

int cmd_reserve(struct labctl *lc, int argc, char **argv)
{
	struct reserve_opts o = { .seconds = -1, .priority = -1 };
	const char *board;
	json_t *body, *res = NULL;
	int ret;

	ret = parse_reserve(argc, argv, &o);
	if (ret)
		return ret < 0 ? LABCTL_OK : ret;
	board = optind < argc ? argv[optind] : NULL;
	if (o.renew)
		return renew(lc, board, o.seconds);
	body = json_object();
	if (board)
		json_object_set_new(body, "board", json_string(board));
	if (o.type)
		json_object_set_new(body, "device_type", json_string(o.type));
	if (o.tags)
		json_object_set_new(body, "tags", tags_array(o.tags));
	if (o.seconds >= 0)
		json_object_set_new(body, "duration", json_real(o.seconds));
	if (o.priority >= 0)
		json_object_set_new(body, "priority", json_integer(o.priority));
	ret = lc_json(lc, "POST", "/reservations", body, &res);
	json_decref(body);
	if (ret)
		return ret;
	if (o.no_wait && !strcmp(lc_str(res, "state", ""), "waiting"))
		print_waiting(res);
	else
		ret = wait_granted(lc, res);
	json_decref(res);
	return ret;
}

int cmd_release(struct labctl *lc, int argc, char **argv)
{
	json_t *res = NULL;
	char *esc, path[512];
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return lc_help(argv[0]);
	if (argc == 2 && argv[1][0] == '-')
		return lc_usage_error(argv[0], "unknown option '%s'", argv[1]);
	if (argc != 2)
		return lc_usage_error(argv[0], "give one board");
	esc = lc_escape(lc, argv[1]);
	snprintf(path, sizeof(path), "/devices/%s/release", esc ? esc : argv[1]);
	free(esc);
	ret = lc_json(lc, "POST", path, NULL, &res);
	if (!ret)
		printf("%s released (reservation %lld): powered off, then free\n", argv[1],
		       lc_int(res, "id"));
	json_decref(res);
	return ret;
}

static void print_reservations(const json_t *list)
{
	char until[32], what[80];
	const json_t *r;
	size_t i;

	printf("%-6s %-8s %-16s %-24s %s\n", "ID", "STATE", "HOLDER", "BOARD", "UNTIL / POSITION");
	json_array_foreach(list, i, r) {
		const char *state = lc_str(r, "state", "?");

		if (lc_str(r, "device", NULL))
			snprintf(what, sizeof(what), "%s", lc_str(r, "device", ""));
		else if (lc_str(r, "board", NULL))
			snprintf(what, sizeof(what), "%s", lc_str(r, "board", ""));
		else
			snprintf(what, sizeof(what), "any %s", lc_str(r, "device_type", "?"));
		printf("%-6lld %-8s %-16s %-24s ", lc_int(r, "id"), state,
		       lc_str(r, "holder", "?"), what);
		if (!strcmp(state, "waiting"))
			printf("position %lld\n", lc_int(r, "position"));
		else if (!strcmp(state, "active"))
			printf("%s UTC\n", lc_time(r, "until", until, sizeof(until)));
		else
			printf("%s\n", lc_str(r, "end_reason", "-"));
	}
}

int cmd_reservations(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool all = false, json = false;
	json_t *doc = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "ajh", opts, NULL)) != -1) {
		if (c == 'a')
			all = true;
		else if (c == 'j')
			json = true;
		else if (c == 'F' && lc_parse_format(argv[0], optarg, &json))
			return LABCTL_ERROR;
		else if (c == 'F')
			continue;
		else if (c == 'h')
			return lc_help(argv[0]);
		else
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
	}
	if (optind != argc)
		return lc_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	ret = lc_json(lc, "GET", all ? "/reservations?all=1" : "/reservations", NULL, &doc);
	if (ret)
		return ret;
	if (json)
		lc_print_json(doc);
	else
		print_reservations(doc);
	json_decref(doc);
	return LABCTL_OK;
}
