// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_session.c -- labctl power, boot, telnet and token-hash: a holder's board at hand */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "labctl.h"

#define TOKEN_BYTES 24		/* of a new token: 48 hex digits */

/* "/devices/<board escaped>/<what>" */
static void device_path(struct labctl *lc, const char *board, const char *what, char *buf,
			size_t len)
{
	char *esc = lc_escape(lc, board);

	snprintf(buf, len, "/devices/%s/%s", esc ? esc : board, what);
	free(esc);
}

int cmd_power(struct labctl *lc, int argc, char **argv)
{
	json_t *body, *res = NULL;
	char path[512];
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return lc_help(argv[0]);
	if (argc != 3 || (strcmp(argv[2], "on") && strcmp(argv[2], "off") &&
			  strcmp(argv[2], "cycle")))
		return lc_usage_error(argv[0], "give a board and on, off or cycle");
	device_path(lc, argv[1], "power", path, sizeof(path));
	body = json_pack("{s:s}", "action", argv[2]);
	ret = lc_json(lc, "POST", path, body, &res);
	json_decref(body);
	if (!ret)
		printf("%s: power %s done\n", argv[1], argv[2]);
	json_decref(res);
	return ret;
}

/* The telnet port of @board, opened for its holder; 0 with the port. */
static int telnet_port(struct labctl *lc, const char *board, long long *ret)
{
	json_t *res = NULL;
	char path[512];
	int err;

	device_path(lc, board, "telnet", path, sizeof(path));
	err = lc_json(lc, "POST", path, NULL, &res);
	if (!err)
		*ret = lc_int(res, "port");
	json_decref(res);
	return err;
}

int cmd_telnet(struct labctl *lc, int argc, char **argv)
{
	long long port;
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return lc_help(argv[0]);
	if (argc == 2 && argv[1][0] == '-')
		return lc_usage_error(argv[0], "unknown option '%s'", argv[1]);
	if (argc != 2)
		return lc_usage_error(argv[0], "give one board");
	ret = telnet_port(lc, argv[1], &port);
	if (!ret)
		printf("%s: telnet 127.0.0.1 %lld (on labd's host, while you hold the board)\n",
		       argv[1], port);
	return ret;
}

int cmd_console(struct labctl *lc, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replay", required_argument, NULL, 'r' },
		{ "telnet", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long replay = -1;
	bool telnet = false;
	char *end, port[16];
	long long p;
	int c, ret;

	while ((c = getopt_long(argc, argv, "r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			replay = strtol(optarg, &end, 10);
			if (replay < 0 || *end || !*optarg)
				return lc_usage_error(argv[0], "invalid byte count '%s'", optarg);
			break;
		case 't':
			telnet = true;
			break;
		case 'h':
			return lc_help(argv[0]);
		default:
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return lc_usage_error(argv[0], "give one board");
	if (!telnet)
		return lc_console(lc, argv[optind], replay);
	ret = telnet_port(lc, argv[optind], &p);
	if (ret)
		return ret;
	snprintf(port, sizeof(port), "%lld", p);
	fflush(stdout);
	execlp("telnet", "telnet", "127.0.0.1", port, (char *)NULL);
	fprintf(stderr, "labctl: cannot run telnet: %s (the port is %s)\n", strerror(errno), port);
	return LABCTL_ERROR;
}

/* ---- boot ---- */

struct boot_opts {
	json_t *body;
	const char *job;
	bool no_console;
};

/* The options that become keys of the boot request. */
static const char *boot_key(int c)
{
	static const struct {
		int c;
		const char *key;
	} keys[] = {
		{ 'k', "kernel" }, { 'r', "ramdisk" }, { 'd', "dtb" }, { 'T', "kernel_type" },
		{ 'a', "append" }, { 'l', "login" }, { 'p', "password" },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].c == c)
			return keys[i].key;
	return NULL;
}

static int parse_boot(int argc, char **argv, struct boot_opts *o)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "ramdisk", required_argument, NULL, 'r' },
		{ "dtb", required_argument, NULL, 'd' },
		{ "kernel-type", required_argument, NULL, 'T' },
		{ "append", required_argument, NULL, 'a' },
		{ "login", required_argument, NULL, 'l' },
		{ "password", required_argument, NULL, 'p' },
		{ "job", required_argument, NULL, 'j' },
		{ "no-console", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "k:r:d:a:j:h", opts, NULL)) != -1) {
		if (c == 'j')
			o->job = optarg;
		else if (c == 'n')
			o->no_console = true;
		else if (c == 'h')
			return lc_help(argv[0]) - 1;	/* -1: help shown, nothing more to do */
		else if (boot_key(c))
			json_object_set_new(o->body, boot_key(c), json_string(optarg));
		else
			return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
	}
	if (argc - optind != 1)
		return lc_usage_error(argv[0], "give one board");
	if (o->job && json_object_size(o->body))
		return lc_usage_error(argv[0], "--job and the files of a boot do not go together");
	return 0;
}

static int add_job(struct boot_opts *o)
{
	struct strbuf text = STRBUF_INIT;
	const char *base = strrchr(o->job, '/');
	int ret;

	ret = lc_read_job(o->job, &text);
	if (!ret) {
		json_object_set_new(o->body, "job", json_stringn(text.buf ? text.buf : "", text.len));
		json_object_set_new(o->body, "filename", json_string(base ? base + 1 : o->job));
	}
	strbuf_release(&text);
	if (!ret && !json_object_get(o->body, "job")) {
		fprintf(stderr, "labctl: '%s' is not UTF-8 text\n", o->job);
		ret = LABCTL_ERROR;
	}
	return ret;
}

int cmd_boot(struct labctl *lc, int argc, char **argv)
{
	struct boot_opts o = { .body = json_object() };
	json_t *res = NULL;
	char path[512];
	int ret;
	long long id;

	ret = parse_boot(argc, argv, &o);
	if (!ret && o.job)
		ret = add_job(&o);
	if (ret) {
		json_decref(o.body);
		return ret < 0 ? LABCTL_OK : ret;
	}
	device_path(lc, argv[optind], "boot", path, sizeof(path));
	ret = lc_json(lc, "POST", path, o.body, &res);
	json_decref(o.body);
	if (ret)
		return ret;
	id = lc_int(res, "id");
	json_decref(res);
	printf("job %lld boots %s (labctl log %lld)\n", id, argv[optind], id);
	fflush(stdout);
	ret = lc_follow_job(lc, id, false);
	if (ret || o.no_console)
		return ret;
	return lc_console(lc, argv[optind], 0);
}

/* ---- token-hash ---- */

static int new_token(char *buf, size_t len)
{
	unsigned char raw[TOKEN_BYTES];
	size_t i;

	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw) || len < 2 * sizeof(raw) + 1)
		return -EIO;
	for (i = 0; i < sizeof(raw); i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int cmd_token_hash(struct labctl *lc, int argc, char **argv)
{
	unsigned char hash[SHA256_DIGEST_LENGTH];
	char line[1024], token[2 * TOKEN_BYTES + 1] = "";
	const char *t = argc == 2 ? argv[1] : NULL;
	size_t i;

	if (t && (!strcmp(t, "-h") || !strcmp(t, "--help")))
		return lc_help(argv[0]);
	if (argc > 2)
		return lc_usage_error(argv[0], "give one token, --new, or none to read it from stdin");
	if (t && !strncmp(t, "--", 2) && strcmp(t, "--new"))
		return lc_usage_error(argv[0], "unknown option '%s'", t);
	if (t && !strcmp(t, "--new")) {
		if (new_token(token, sizeof(token)) < 0)
			return lc_usage_error(argv[0], "cannot make a random token");
		printf("token: %s\n", token);
		t = token;
	} else if (!t) {
		if (!fgets(line, sizeof(line), stdin))
			return lc_usage_error(argv[0], "no token on stdin");
		line[strcspn(line, "\r\n")] = '\0';
		t = line;
	}
	SHA256((const unsigned char *)t, strlen(t), hash);
	printf("%ssha256:", t == token ? "hash:  " : "");
	for (i = 0; i < sizeof(hash); i++)
		printf("%02x", hash[i]);
	printf("\n");
	return LABCTL_OK;
}

/* ---- token-create ---- */

int cmd_token_create(struct labctl *lc, int argc, char **argv)
{
	json_t *doc = NULL, *body;
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return lc_help(argv[0]);
	if (argc != 3)
		return lc_usage_error(argv[0], "give a user name and a role");
	body = json_pack("{s:s, s:s}", "user", argv[1], "role", argv[2]);
	ret = lc_json(lc, "POST", "/tokens", body, &doc);
	json_decref(body);
	if (ret)
		return ret;
	printf("token: %s\nuser:  %s (%s)\n", lc_str(doc, "token", "?"), lc_str(doc, "user", "?"),
	       lc_str(doc, "role", "?"));
	json_decref(doc);
	return LABCTL_OK;
}
