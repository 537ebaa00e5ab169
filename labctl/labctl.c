// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl.c -- labctl, labd's client for people and CI: options and command dispatch */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"
#include "labctl.h"

struct command {
	const char *name;
	int (*fn)(struct labctl *lc, int argc, char **argv);
	const char *args;
	const char *help;
};

static const struct command commands[] = {
	{ "check", cmd_check, "[--strict] JOB...",
	  "validate job files (the schema only when labd is not reachable)" },
	{ "submit", cmd_submit, "JOB [-f|--follow] [-q|--quiet]",
	  "queue a job; print its id, or follow it to its end" },
	{ "jobs", cmd_jobs,
	  "[--state S] [--device NAME] [--device-type TYPE] [--limit N] [--format table|json]",
	  "list jobs, newest first" },
	{ "show", cmd_show, "ID [--json]", "a job's details, results summary and boot phases" },
	{ "cancel", cmd_cancel, "ID", "cancel a queued or running job" },
	{ "log", cmd_log, "ID [-f|--follow] [--timestamps] [--labd] [--raw]",
	  "a job's console log" },
	{ "results", cmd_results, "ID [--json | --junit [FILE]]", "a job's test results" },
	{ "devices", cmd_devices, "[--format table|json]", "every board and its state" },
	{ "queue", cmd_queue, "[--format table|json]",
	  "the queue per device type: waiting jobs, the oldest's wait, boards free, busy, bad" },
	{ "device", cmd_device,
	  "show NAME [--json] | set-state NAME maintenance|idle [--reason TEXT]", "one board" },
	{ "reserve", cmd_reserve,
	  "BOARD|--type TYPE [--tags A,B] [--for 2h] [--priority N] [--no-wait] | BOARD --renew [--for 1h]",
	  "wait in the queue for a board, then hold it (or renew the hold)" },
	{ "release", cmd_release, "BOARD", "end the hold: the board is powered off and freed" },
	{ "reservations", cmd_reservations, "[--all] [--format table|json]", "who holds and waits for what" },
	{ "console", cmd_console, "BOARD [--replay BYTES] [--telnet]",
	  "the board's live console (~. detaches, ~? lists the escapes)" },
	{ "power", cmd_power, "BOARD on|off|cycle", "power a board you hold" },
	{ "boot", cmd_boot,
	  "BOARD [--kernel URL] [--ramdisk URL] [--dtb URL] [--kernel-type T] [--append ARGS]\n"
	  "           [--login USER] [--password PW] | --job FILE  [--no-console]",
	  "deploy and boot a board you hold, then take its shell" },
	{ "telnet", cmd_telnet, "BOARD", "open a loopback telnet port to a board you hold" },
	{ "token-hash", cmd_token_hash, "[TOKEN | --new]",
	  "the sha256: form of a token, for labd.conf (--new makes a token)" },
	{ "token-create", cmd_token_create, "USER ROLE",
	  "a new token for USER (an admin's): kept by labd, known to every host of the lab" },
	{ "whoami", cmd_whoami, "", "who labd takes you for, and your role" },
	{ "reload", cmd_reload, "",
	  "reload labd.conf and the boards (an admin's): what changed, or why not" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: labctl [--lab NAME] [--url URL] [--token TOKEN] COMMAND [ARGS]\n\n"
		   "  -L, --lab NAME  the lab NAME of the config file (default: $LABCTL_LAB)\n"
		   "  --url URL       labd's address (default: $LABD_URL, else the config file,\n"
		   "                  else %s; unix:/PATH for a Unix socket)\n"
		   "  --token TOKEN   API token (default: $LABD_TOKEN, else the config file)\n"
		   "  --config FILE   the config file (default: $LABCTL_CONFIG, else\n"
		   "                  ~/.config/labctl/config; see labctl(1))\n"
		   "  -h, --help      this help\n"
		   "  -V, --version   print the version\n\ncommands:\n", LABCTL_DEFAULT_URL);
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n           %s\n", commands[i].name, commands[i].args,
			commands[i].help);
	fprintf(f, "\nexit status: 0 ok; 1 labd refused, or failed test results; 2 job incomplete\n"
		   "or canceled; 3 usage or connection error; 130 Ctrl-C while following\n");
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int lc_usage_error(const char *cmd, const char *fmt, ...)
{
	const struct command *c = find_command(cmd);
	va_list ap;

	fputs("labctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c)
		fprintf(stderr, "usage: labctl %s %s\n", c->name, c->args);
	return LABCTL_ERROR;
}

int lc_help(const char *cmd)
{
	const struct command *c = find_command(cmd);

	if (c)
		printf("usage: labctl %s %s\n  %s\n", c->name, c->args, c->help);
	return LABCTL_OK;
}

int lc_parse_id(const char *cmd, const char *s, int64_t *ret)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < 1)
		return lc_usage_error(cmd, "invalid job id '%s'", s);
	*ret = v;
	return 0;
}

/* ---- output helpers ---- */

const char *lc_str(const json_t *o, const char *key, const char *fallback)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : fallback;
}

long long lc_int(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

const char *lc_time(const json_t *o, const char *key, char *buf, size_t len)
{
	const char *iso = json_string_value(json_object_get(o, key));

	if (!iso || strlen(iso) < 19)
		return "-";
	/* "2026-12-03T10:00:00.123456Z" -> "2026-12-03 10:00:00" (UTC) */
	snprintf(buf, len, "%.10s %.8s", iso, iso + 11);
	return buf;
}

void lc_print_json(const json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	putchar('\n');
}

/* Keep what a terminal needs (newlines, tabs, carriage returns, escape sequences). */
static bool is_safe(unsigned char c)
{
	return c >= 0x20 ? c != 0x7f : c == '\n' || c == '\t' || c == '\r' || c == 0x1b;
}

bool lc_write_log(const char *data, size_t len, bool raw)
{
	size_t i, start = 0;

	if (raw)
		return fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0;
	for (i = 0; i < len; i++) {
		if (is_safe((unsigned char)data[i]))
			continue;
		fwrite(data + start, 1, i - start, stdout);
		printf("\\x%02x", (unsigned char)data[i]);
		start = i + 1;
	}
	fwrite(data + start, 1, len - start, stdout);
	return fflush(stdout) == 0;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "token", required_argument, NULL, 't' },
		{ "lab", required_argument, NULL, 'L' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = NULL, *token = NULL, *lab = NULL, *config = NULL;
	struct lc_target target = { NULL, NULL };
	const struct command *cmd;
	struct labctl lc;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+hVL:", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 't':
			token = optarg;
			break;
		case 'L':
			lab = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'h':
			usage(stdout);
			return LABCTL_OK;
		case 'V':
			printf("labctl %s\n", LABD_VERSION);
			return LABCTL_OK;
		default:
			usage(stderr);
			return LABCTL_ERROR;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return LABCTL_ERROR;
	}
	if (!strcmp(argv[optind], "help")) {
		usage(stdout);
		return LABCTL_OK;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "labctl: unknown command '%s' (try 'labctl --help')\n",
			argv[optind]);
		return LABCTL_ERROR;
	}
	target.url = url && *url ? strdup(url) : NULL;
	target.token = token && *token ? strdup(token) : NULL;
	ret = lc_target_resolve(config, lab, &target);
	if (ret) {
		lc_target_release(&target);
		return ret;
	}
	if (lc_init(&lc, target.url, target.token) < 0) {
		fprintf(stderr, "labctl: invalid URL '%s': use http://HOST:PORT or unix:/PATH\n",
			target.url);
		lc_release(&lc);
		lc_target_release(&target);
		return LABCTL_ERROR;
	}
	argv += optind;
	argc -= optind;
	optind = 0;	/* the command parses its own options */
	ret = cmd->fn(&lc, argc, argv);
	lc_release(&lc);
	lc_target_release(&target);
	return ret;
}

int lc_parse_format(const char *cmd, const char *arg, bool *json)
{
	if (!strcmp(arg, "table") || !strcmp(arg, "json")) {
		*json = !strcmp(arg, "json");
		return 0;
	}
	return lc_usage_error(cmd, "--format is 'table' or 'json', not '%s'", arg);
}
