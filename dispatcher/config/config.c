// SPDX-License-Identifier: GPL-2.0-or-later
/* config.c -- load labd.conf and the board directory into a struct lab_config */

/*
 * The format (libconfig 1.5; doc/boards.md is the admin's guide with full
 * examples).  Every key is checked: an unknown key, a value of the wrong type
 * or a missing required key is an error reported as "FILE:LINE: cause", and
 * every problem in every file is reported, not just the first.
 *
 * labd.conf
 *
 *	lab_name = "lab-1";			# default: the host name
 *	state_dir = "/var/lib/labd";		# default CONFIG_DEFAULT_STATE_DIR
 *	devices_dir = "devices";		# default "devices"
 *	tftp_root = "/srv/tftp";		# default <state_dir>/tftp
 *	server_ip = "10.0.2.2";			# the address boards reach labd at
 *	artifact_dir = "/srv/artifacts";	# file:// artifacts must be below it
 *	max_artifact_size = 536870912;		# bytes
 *	git_allow = [ "https://github.com/Linaro/" ];	# repositories jobs may name
 *	git_max_size = 1073741824;		# bytes of one cached repository
 *	git_timeout = 600;			# seconds one fetch may take
 *	http = {
 *		listen = "127.0.0.1:8640";	# "HOST:PORT" or "unix:PATH"
 *		unix_socket = "/run/labd.sock";	# optional second listener
 *		tokens = [ "sha256:<64 hex digits>" ];
 *		require_token = false;		# default: true unless loopback/unix
 *		web_root = "/usr/share/labd/web";	# the dashboard's files (api_web.c)
 *		javascript_dir = "/usr/share/javascript";	# xterm.js, Chart.js
 *	};
 *
 *	store = { driver = "sqlite"; };		# optional; store/store.h
 *
 * Relative paths are relative to the directory holding labd.conf.  The
 * top-level sections named in config_sections[] below (backends, users,
 * store, notify, retention, nfs) are not parsed here: their modules read them from lab_config.root.
 *
 * The board directory
 *
 * Every `*.conf` file of devices_dir (not starting with '.'), in strcmp()
 * order, is parsed; `@include "x.inc"` is relative to the board file's
 * directory, also in an included file (checked first: core/cfgtext.h).
 * Name included fragments anything but *.conf, or they are read twice.  A
 * file holds any of:
 *
 *	device_types = ( { ... }, { ... } );	device_type = { ... };
 *	devices = ( { ... }, { ... } );		device = { ... };
 *
 * Types are collected from all files before any device is checked, so a
 * device may use a type defined in another file.
 *
 * A device type:
 *
 *	name = "qemu-arm64-uboot";		# required, unique
 *	extends = "base-uboot";			# inherit, then override
 *	boot_methods = [ "u-boot" ];		# minimal, u-boot, qemu
 *	deploy_methods = [ "tftp" ];		# tftp, tmpfs, none
 *	context_allowed = [ "extra_kernel_args" ];
 *	power_on_delay = 1.0;			# seconds between off and on
 *	parameters = { KERNEL_ADDR = "0x40400000"; CONSOLE = "ttyAMA0"; };
 *	bootx = { booti = { kernel = "0x40400000"; ramdisk = "0x44000000";
 *			    dtb = "0x40000000"; }; };	# also bootz, bootm
 *	u-boot = {
 *		interrupt_prompt = "Hit any key to stop autoboot";
 *		interrupt_char = " "; interrupt_newline = true;
 *		needs_interrupt = true; bootloader_prompt = "=> ";
 *		char_delay = 0.0; final_message = "Starting kernel";
 *		error_messages = [ "TFTP error" ];
 *		default_commands = "ramdisk";
 *		commands = { ramdisk = ( "tftp {KERNEL_ADDR} {KERNEL}", "{BOOTX}" ); };
 *	};
 *	kernel = { start_message = "Linux version [0-9]"; login_prompt = "login:";
 *		   prompts = [ "# " ]; char_delay = 0.0; };
 *	qemu = { binary = "qemu-system-aarch64"; args = [ "-M", "virt" ];
 *		 console = "socket"; append = "console=ttyAMA0";
 *		 allowed_images = [ "kernel", "initrd" ]; append_allowed = true; };
 *
 * Inheritance: a type starts as a copy of its resolved parent (or of the
 * defaults in config.h) and its own settings override: groups (parameters,
 * bootx, u-boot, kernel, qemu, u-boot.commands) merge key by key, lists
 * (error_messages, prompts, args, boot_methods, ...) replace.  Integer
 * parameters become strings, hex ones stay hex.  Prompts and messages are
 * PCRE2 patterns and must compile.
 *
 * A device:
 *
 *	name = "rpi4-01";			# required, unique across all files
 *	type = "rpi4";				# required
 *	description = "..."; tags = [ "usb", "hdmi" ];
 *	console = { driver = "tty"; ... };	# required; keys: see the driver
 *	power = { driver = "command"; timeout = 30; ... };	# optional
 *	power_on_delay = 2.5;			# seconds; overrides the type's
 *	parameters = { KERNEL_ADDR = "0x80000"; };	# override the type's
 *
 * Drivers are found by name and parse their own keys (console_new() and
 * power_new() without a loop: no hardware is touched).
 */
#include "config/config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_priv.h"
#include "core/cfg.h"
#include "core/cfgtext.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "core/strv.h"

#define CONFIG_MAX_NAME 64		/* device, type names: they end up in paths and URLs */
#define CONFIG_MAX_BOARD_FILES 16384	/* *.conf files in devices_dir (4096 boards fit 4 times) */
#define CONFIG_SHA256_HEX 64

/* Top-level keys of labd.conf that this file parses */
static const char *const main_keys[] = {
	"lab_name", "state_dir", "devices_dir", "tftp_root", "server_ip", "artifact_dir",
	"max_artifact_size", "http", "git_allow", "git_max_size", "git_timeout", NULL
};

/* Top-level sections of labd.conf that other modules parse from lab_config.root */
static const char *const config_sections[] = { "backends", "users", "store", "notify",
						"retention", "nfs", NULL };

static const char *const http_keys[] = {
	"listen", "unix_socket", "tokens", "require_token", "web_root", "javascript_dir", NULL
};

static const char *const board_keys[] = {
	"device_types", "device_type", "devices", "device", NULL
};

bool config_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (!n || n > CONFIG_MAX_NAME || name[0] == '.' || name[0] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    name[i]))
			return false;
	return true;
}

int config_get_name(const config_setting_t *group, const char *what, const char **ret,
		    struct diag *diag)
{
	const config_setting_t *s;
	const char *name;
	int r = cfg_get_string(group, "name", true, &name, diag);

	if (r < 0)
		return r;
	s = config_setting_get_member(group, "name");
	if (!config_name_ok(name))
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"invalid %s name '%s': use up to %d letters, digits, '.', '_' and '-'",
				what, name, CONFIG_MAX_NAME);
	*ret = name;
	return 0;
}

int config_get_group(const config_setting_t *group, const char *key,
		     const config_setting_t **ret, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(group, key);

	if (!s)
		return -ENOENT;
	if (!config_setting_is_group(s))
		return diag_add(diag, cfg_file(s), cfg_line(s), "'%s' must be a group, not %s", key,
				cfg_type_name(s));
	*ret = s;
	return 0;
}

/* An integer as text; hex stays hex so that U-Boot load addresses read as written. */
static void format_int(const config_setting_t *s, char *buf, size_t size)
{
	bool hex = config_setting_get_format(s) == CONFIG_FORMAT_HEX;

	if (config_setting_type(s) == CONFIG_TYPE_INT64)
		snprintf(buf, size, hex ? "0x%llx" : "%lld",
			 (long long)config_setting_get_int64(s));
	else if (hex)
		snprintf(buf, size, "0x%x", (unsigned int)config_setting_get_int(s));
	else
		snprintf(buf, size, "%d", config_setting_get_int(s));
}

int config_get_kv(const config_setting_t *group, const char *key, struct kv *m,
		  struct diag *diag)
{
	const config_setting_t *g;
	char num[32];
	int i, n, r = config_get_group(group, key, &g, diag);

	if (r < 0)
		return r;
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(g, (unsigned int)i);
		const char *val = num;

		if (config_setting_type(e) == CONFIG_TYPE_STRING) {
			val = config_setting_get_string(e);
		} else if (config_setting_type(e) == CONFIG_TYPE_INT ||
			   config_setting_type(e) == CONFIG_TYPE_INT64) {
			format_int(e, num, sizeof(num));
		} else {
			r = diag_add(diag, cfg_file(e), cfg_line(e),
				     "'%s' must be a string or an integer, not %s",
				     config_setting_name(e), cfg_type_name(e));
			continue;
		}
		if (kv_set(m, config_setting_name(e), val) < 0)
			return -ENOMEM;
	}
	return r;
}

static int dump_string(const char *s, struct strbuf *sb)
{
	int r = strbuf_addch(sb, '"');

	for (; *s && r == 0; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			r = strbuf_addf(sb, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			r = strbuf_addf(sb, "\\x%02x", ch);
		else
			r = strbuf_addch(sb, ch);
	}
	return r < 0 ? r : strbuf_addch(sb, '"');
}

static int dump_scalar(const config_setting_t *s, struct strbuf *sb)
{
	char num[32];

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_STRING:
		return dump_string(config_setting_get_string(s), sb);
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		format_int(s, num, sizeof(num));
		return strbuf_addstr(sb, num);
	case CONFIG_TYPE_FLOAT:
		return strbuf_addf(sb, "%.17g", config_setting_get_float(s));
	case CONFIG_TYPE_BOOL:
		return strbuf_addstr(sb, config_setting_get_bool(s) ? "true" : "false");
	default:
		return 0;
	}
}

static int by_name(const void *a, const void *b)
{
	const config_setting_t *const *x = a, *const *y = b;

	return strcmp(config_setting_name(*x), config_setting_name(*y));
}

/* A group's members sorted by name, so that their order in the file does not count. */
static int dump_group(const config_setting_t *s, struct strbuf *sb)
{
	int i, n = config_setting_length(s), r = 0;
	const config_setting_t **m = calloc((size_t)n + 1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		m[i] = config_setting_get_elem(s, (unsigned int)i);
	qsort(m, (size_t)n, sizeof(*m), by_name);
	r = strbuf_addch(sb, '{');
	for (i = 0; i < n && r == 0; i++) {
		r = strbuf_addf(sb, "%s=", config_setting_name(m[i]));
		if (r == 0)
			r = config_dump(m[i], sb);
		if (r == 0)
			r = strbuf_addch(sb, ';');
	}
	free(m);
	return r < 0 ? r : strbuf_addch(sb, '}');
}

int config_dump(const config_setting_t *s, struct strbuf *sb)
{
	int i, n, r;
	bool list = config_setting_type(s) == CONFIG_TYPE_LIST;

	if (config_setting_is_group(s))
		return dump_group(s, sb);
	if (!config_setting_is_aggregate(s))
		return dump_scalar(s, sb);
	n = config_setting_length(s);
	r = strbuf_addch(sb, list ? '(' : '[');
	for (i = 0; i < n && r == 0; i++) {
		if (i)
			r = strbuf_addch(sb, ',');
		if (r == 0)
			r = config_dump(config_setting_get_elem(s, (unsigned int)i), sb);
	}
	return r < 0 ? r : strbuf_addch(sb, list ? ')' : ']');
}

/* The directory holding @path (absolute: see abs_path()). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? strndup(path, slash > path ? (size_t)(slash - path) : 1) : strdup(".");
}

/* @path made absolute, so that nothing depends on the working directory later. */
static char *abs_path(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return strdup(path);
	while (!strncmp(path, "./", 2))
		path += 2;
	if (strbuf_addf(&sb, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < 0)
		return NULL;
	return strbuf_detach(&sb, NULL);
}

static char *path_join(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;

	if (name[0] != '/') {
		strbuf_addstr(&sb, dir);
		if (sb.len && sb.buf[sb.len - 1] != '/')
			strbuf_addch(&sb, '/');
	}
	if (strbuf_addstr(&sb, name) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* Parse @path into a new config_t kept in @c->files. -ENOENT, -EINVAL (reported), -ENOMEM. */
static int read_file(struct lab_config *c, const char *path, config_t **ret, struct diag *diag)
{
	config_t *cf, **files;
	char *dir;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = errno;

	if (fd < 0) {
		diag_add(diag, path, 0, "cannot read file: %s", strerror(err));
		return err == ENOENT ? -ENOENT : -EINVAL;
	}
	close(fd);
	files = realloc(c->files, (c->n_files + 1) * sizeof(*files));
	cf = malloc(sizeof(*cf));
	dir = dir_of(path);
	if (files)
		c->files = files;
	err = files && cf && dir ? cfg_check_text(path, dir, diag) : -ENOMEM;
	if (err < 0) {
		/* never handed to libconfig, which would exit the process */
		if (err == -EINVAL)
			c->unparsed_files = true;
		free(cf);
		free(dir);
		return err;
	}
	config_init(cf);
	config_set_include_dir(cf, dir);
	if (!config_read_file(cf, path)) {
		/* what it would have defined is unknown: say nothing about that */
		c->unparsed_files = true;
		err = config_report_read_error(cf, path, dir, diag);
		free(dir);
		config_destroy(cf);
		free(cf);
		return err == -ENOMEM ? err : -EINVAL;
	}
	free(dir);
	c->files[c->n_files++] = cf;
	*ret = cf;
	return 0;
}

/* Optional string @key of @g into *@ret (a copy), else a copy of @def (may be NULL). */
static int get_str(const config_setting_t *g, const char *key, const char *def, char **ret,
		   struct diag *diag)
{
	const char *v = def;
	int r = cfg_get_string(g, key, false, &v, diag);

	if (r == 0 && !*v)
		r = diag_add(diag, cfg_file(g), cfg_line(config_setting_get_member(g, key)),
			     "'%s' must not be empty", key);
	free(*ret);
	*ret = v ? strdup(v) : NULL;
	if (v && !*ret)
		return -ENOMEM;
	return r == -ENOENT ? 0 : r;
}

/* Like get_str(), for a path: relative paths are relative to @dir. */
static int get_path(const config_setting_t *g, const char *key, const char *dir, const char *def,
		    char **ret, struct diag *diag)
{
	char *p = NULL;
	int r = get_str(g, key, def, &p, diag);

	if (r == -ENOMEM || !p)
		return r;
	free(*ret);
	*ret = path_join(dir, p);
	free(p);
	return *ret ? r : -ENOMEM;
}

/* Member @key of @g, NULL when @g is (an absent group). */
static const config_setting_t *member(const config_setting_t *g, const char *key)
{
	return g ? config_setting_get_member(g, key) : NULL;
}

static bool listen_is_local(const char *listen)
{
	return !strncmp(listen, "unix:", 5) || !strncmp(listen, "127.", 4) ||
	       !strncmp(listen, "localhost:", 10) || !strncmp(listen, "[::1]:", 6);
}

static int check_listen(const config_setting_t *http, const char *listen, struct diag *diag)
{
	const config_setting_t *s = member(http, "listen");
	const char *colon = strrchr(listen, ':');
	char *end;
	long port;

	if (!strncmp(listen, "unix:/", 6))
		return 0;
	port = colon ? strtol(colon + 1, &end, 10) : 0;
	if (colon && colon > listen && colon[1] && !*end && port > 0 && port <= 65535)
		return 0;
	return diag_add(diag, cfg_file(s), cfg_line(s),
			"'listen' must be 'HOST:PORT' or 'unix:/PATH', not '%s'", listen);
}

static int check_tokens(const config_setting_t *http, char *const *tokens, struct diag *diag)
{
	const config_setting_t *s = member(http, "tokens");
	int r = 0;

	STRV_FOREACH(t, tokens) {
		const char *hex = *t + strlen("sha256:");

		if (!**t)
			r = diag_add(diag, cfg_file(s), cfg_line(s), "empty token in 'tokens'");
		else if (!strncmp(*t, "sha256:", 7) &&
			 (strlen(hex) != CONFIG_SHA256_HEX ||
			  strspn(hex, "0123456789abcdefABCDEF") != CONFIG_SHA256_HEX))
			r = diag_add(diag, cfg_file(s), cfg_line(s),
				     "token 'sha256:...' must have %d hex digits", CONFIG_SHA256_HEX);
	}
	return r;
}

/* Whether labd.conf lists users (users.c checks them): their tokens open the API too. */
static bool has_users(const config_setting_t *root)
{
	const config_setting_t *u = config_setting_get_member(root, "users");

	return u && config_setting_length(u) > 0;
}

static int parse_http(struct lab_config *c, const char *dir, struct diag *diag)
{
	struct http_config *h = &c->http;
	const config_setting_t *g = NULL;
	size_t n0 = diag->n;

	if (config_oom(config_get_group(c->root, "http", &g, diag)))
		return -ENOMEM;
	if (g && config_oom(cfg_check_keys(g, http_keys, diag)))
		return -ENOMEM;
	if (config_oom(get_str(g, "listen", CONFIG_DEFAULT_LISTEN, &h->listen, diag)) ||
	    config_oom(get_path(g, "unix_socket", dir, NULL, &h->unix_socket, diag)) ||
	    config_oom(cfg_get_strv(g, "tokens", false, &h->tokens, diag)) ||
	    config_oom(get_path(g, "web_root", dir, NULL, &h->web_root, diag)) ||
	    config_oom(get_path(g, "javascript_dir", dir, NULL, &h->javascript_dir, diag)))
		return -ENOMEM;
	h->require_token = !listen_is_local(h->listen);
	if (config_oom(cfg_get_bool(g, "require_token", false, &h->require_token, diag)) ||
	    config_oom(check_listen(g, h->listen, diag)) ||
	    config_oom(check_tokens(g, h->tokens, diag)))
		return -ENOMEM;
	/* an open API on the network is a mistake unless said so; users' tokens count */
	if (h->require_token && !h->tokens && !has_users(c->root) && diag->n == n0)
		return diag_add(diag, g ? cfg_file(g) : c->path, cfg_line(g),
				"listener '%s' requires a token but neither 'tokens' nor 'users' has one (or set require_token = false)",
				h->listen);
	return 0;
}

static int check_server_ip(const config_setting_t *root, const char *ip, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(root, "server_ip");
	unsigned char addr[sizeof(struct in6_addr)];

	if (inet_pton(AF_INET, ip, addr) == 1 || inet_pton(AF_INET6, ip, addr) == 1)
		return 0;
	return diag_add(diag, cfg_file(s), cfg_line(s),
			"'server_ip' must be an IPv4 or IPv6 address, not '%s'", ip);
}

static int check_main_keys(const config_setting_t *root, struct diag *diag)
{
	int i, n = config_setting_length(root), r = 0;

	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(root, (unsigned int)i);
		const char *name = config_setting_name(e);

		if (!strv_contains((char *const *)main_keys, name) &&
		    !strv_contains((char *const *)config_sections, name))
			r = diag_add(diag, cfg_file(e), cfg_line(e), "unknown key '%s'", name);
	}
	return r;
}

static int parse_main(struct lab_config *c, const char *dir, struct diag *diag)
{
	const config_setting_t *root = c->root;
	char host[HOST_NAME_MAX + 1] = "lab", *tftp = NULL;
	long long max = (long long)CONFIG_DEFAULT_MAX_ARTIFACT_SIZE;
	long long git_max = (long long)CONFIG_DEFAULT_GIT_MAX_SIZE;

	gethostname(host, sizeof(host) - 1);
	if (config_oom(check_main_keys(root, diag)) ||
	    config_oom(get_str(root, "lab_name", host, &c->lab_name, diag)) ||
	    config_oom(get_path(root, "state_dir", dir, CONFIG_DEFAULT_STATE_DIR, &c->state_dir,
				   diag)) ||
	    config_oom(get_path(root, "devices_dir", dir, CONFIG_DEFAULT_DEVICES_DIR,
				   &c->devices_dir, diag)) ||
	    config_oom(get_path(root, "artifact_dir", dir, NULL, &c->artifact_dir, diag)) ||
	    config_oom(get_str(root, "server_ip", CONFIG_DEFAULT_SERVER_IP, &c->server_ip, diag)) ||
	    config_oom(check_server_ip(root, c->server_ip, diag)) ||
	    config_oom(cfg_get_int(root, "max_artifact_size", false, 1, INT64_MAX, &max, diag)) ||
	    config_oom(cfg_get_strv(root, "git_allow", false, &c->git_allow, diag)) ||
	    config_oom(cfg_get_int(root, "git_max_size", false, 1, INT64_MAX, &git_max, diag)) ||
	    config_oom(cfg_get_duration(root, "git_timeout", false, &c->git_timeout, diag)))
		return -ENOMEM;
	c->max_artifact_size = (uint64_t)max;
	c->git_max_size = (uint64_t)git_max;
	tftp = path_join(c->state_dir, "tftp");
	if (!tftp || config_oom(get_path(root, "tftp_root", dir, tftp, &c->tftp_root, diag))) {
		free(tftp);
		return -ENOMEM;
	}
	free(tftp);
	return parse_http(c, dir, diag);
}

static int groups_push(struct config_groups *g, const config_setting_t *s)
{
	if (g->n == g->alloc) {
		size_t alloc = g->alloc ? 2 * g->alloc : 16;
		const config_setting_t **v = realloc(g->v, alloc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->alloc = alloc;
	}
	g->v[g->n++] = s;
	return 0;
}

/* Collect `device_types`/`devices` (@list) or `device_type`/`device` groups into @out. */
static int collect(const config_setting_t *root, const char *key, bool list,
		   struct config_groups *out, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(root, key);
	int i, n, r = 0;

	if (!s)
		return 0;
	if (!list)
		return config_setting_is_group(s) ? groups_push(out, s) :
			diag_add(diag, cfg_file(s), cfg_line(s), "'%s' must be a group, not %s", key,
				 cfg_type_name(s));
	n = config_setting_length(s);
	if (config_setting_type(s) != CONFIG_TYPE_LIST &&
	    !(config_setting_type(s) == CONFIG_TYPE_ARRAY && n == 0))
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"'%s' must be a list of groups ( { ... }, ... ), not %s", key,
				cfg_type_name(s));
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned int)i);

		if (!config_setting_is_group(e))
			r = diag_add(diag, cfg_file(e), cfg_line(e),
				     "'%s' must hold groups only, not %s", key, cfg_type_name(e));
		else if (groups_push(out, e) < 0)
			return -ENOMEM;
	}
	return r;
}

static int read_board(struct lab_config *c, const char *path, struct config_groups *types,
		      struct config_groups *devices, struct diag *diag)
{
	const config_setting_t *root;
	config_t *cf;
	int r = read_file(c, path, &cf, diag);

	if (r < 0)
		return r == -ENOMEM ? r : 0;
	root = config_root_setting(cf);
	if (config_oom(cfg_check_keys(root, board_keys, diag)) ||
	    config_oom(collect(root, "device_types", true, types, diag)) ||
	    config_oom(collect(root, "device_type", false, types, diag)) ||
	    config_oom(collect(root, "devices", true, devices, diag)) ||
	    config_oom(collect(root, "device", false, devices, diag)))
		return -ENOMEM;
	return 0;
}

static int board_filter(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 && !strcmp(e->d_name + n - 5, ".conf");
}

static int board_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Parse every board file; a broken one does not stop the others. */
static int read_boards(struct lab_config *c, struct config_groups *types,
		       struct config_groups *devices, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(c->root, "devices_dir");
	struct dirent **list = NULL;
	int i, n = scandir(c->devices_dir, &list, board_filter, board_cmp), r = 0;

	if (n < 0)
		return diag_add(diag, s ? cfg_file(s) : c->path, cfg_line(s),
				"cannot open devices directory '%s': %s", c->devices_dir,
				strerror(errno));
	if (n > CONFIG_MAX_BOARD_FILES)
		r = diag_add(diag, c->devices_dir, 0, "more than %d board files",
			     CONFIG_MAX_BOARD_FILES);
	for (i = 0; i < n && r != -ENOMEM && i < CONFIG_MAX_BOARD_FILES; i++) {
		char *path = path_join(c->devices_dir, list[i]->d_name);

		r = path ? read_board(c, path, types, devices, diag) : -ENOMEM;
		free(path);
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return r == -ENOMEM ? r : 0;
}

static int read_main(struct lab_config *c, struct diag *diag)
{
	config_t *cf;
	char *dir;
	int r = read_file(c, c->path, &cf, diag);

	if (r < 0)
		return r;
	c->root = config_root_setting(cf);
	dir = dir_of(c->path);
	if (!dir)
		return -ENOMEM;
	r = parse_main(c, dir, diag);
	free(dir);
	return r == -ENOMEM ? r : 0;
}

int config_load(const char *path, struct lab_config **ret, struct diag *diag)
{
	struct config_groups types = { 0 }, devices = { 0 };
	struct lab_config *c = calloc(1, sizeof(*c));
	size_t n0 = diag->n;
	int r = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->refcount = 1;
	c->git_timeout = CONFIG_DEFAULT_GIT_TIMEOUT;
	c->path = abs_path(path ? path : CONFIG_DEFAULT_PATH);
	if (!c->path)
		goto err_unref;
	r = read_main(c, diag);
	if (r < 0)
		goto err_unref;
	r = read_boards(c, &types, &devices, diag);
	if (r != -ENOMEM)
		r = config_types_load(c, &types, diag);
	if (r != -ENOMEM)
		r = config_devices_load(c, &devices, diag);
	if (r == -ENOMEM)
		goto err_free_groups;
	r = diag->n > n0 ? -EINVAL : 0;
	if (r < 0)
		goto err_free_groups;
	free(types.v);
	free(devices.v);
	*ret = c;
	return 0;

err_free_groups:
	free(types.v);
	free(devices.v);
err_unref:
	config_unref(c);
	return r;
}

void config_log_warnings(const struct lab_config *c)
{
	size_t i;

	for (i = 0; i < c->warnings.n; i++)
		log_warning("%s", c->warnings.msgs[i]);
}

int config_check(const char *path, struct diag *diag)
{
	struct lab_config *c = NULL;
	int r = config_load(path, &c, diag);

	config_unref(c);
	return r;
}

struct lab_config *config_ref(struct lab_config *c)
{
	if (c)
		c->refcount++;
	return c;
}

static void http_release(struct http_config *h)
{
	free(h->listen);
	free(h->unix_socket);
	free(h->web_root);
	free(h->javascript_dir);
	strv_free(h->tokens);
}

struct lab_config *config_unref(struct lab_config *c)
{
	size_t i;

	if (!c || --c->refcount > 0)
		return NULL;
	for (i = 0; i < c->n_devices; i++)
		config_device_free(c->devices[i]);
	for (i = 0; i < c->n_types; i++)
		config_type_free(c->types[i]);
	for (i = 0; i < c->n_files; i++) {
		config_destroy(c->files[i]);
		free(c->files[i]);
	}
	free(c->devices);
	free(c->types);
	free(c->files);
	http_release(&c->http);
	free(c->path);
	free(c->lab_name);
	free(c->state_dir);
	free(c->devices_dir);
	free(c->tftp_root);
	free(c->server_ip);
	free(c->artifact_dir);
	diag_release(&c->warnings);
	strv_free(c->git_allow);
	free(c);
	return NULL;
}

const struct device *config_find_device(const struct lab_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_devices; i++)
		if (!strcmp(c->devices[i]->name, name))
			return c->devices[i];
	return NULL;
}

const struct device_type *config_find_type(const struct lab_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_types; i++)
		if (!strcmp(c->types[i]->name, name))
			return c->types[i];
	return NULL;
}
