// SPDX-License-Identifier: GPL-2.0-or-later
/* lava_device.c -- LAVA device dictionaries (jinja2 or rendered YAML) as labd board files */
#include "import/lava_device.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wordexp.h>

#include <jansson.h>
#include <libconfig.h>

#include "core/diag.h"
#include "core/strbuf.h"
#include "job/job_doc.h"
#include "job/testdef.h"

#define MAX_FILE (1024 * 1024)

/* labd provides these in U-Boot commands (doc/boards.md, doc/nfs.md); parameters add more. */
static const char *const known_vars[] = { "SERVER_IP", "KERNEL", "RAMDISK", "INITRD", "DTB",
					  "KERNEL_ADDR", "RAMDISK_ADDR", "DTB_ADDR", "BOOTX",
					  "EXTRA_KERNEL_ARGS", "DEVICE", "NFSROOTFS", "NFS_SERVER_IP",
					  "NFS_MOUNT_OPTIONS", "EXTRA_NFSROOT_ARGS", NULL };
/* LAVA leaves out a command line whose variable the job does not set (no TEE ...). */
static const char *const optional_vars[] = { "TEE", "TEE_ADDR", "DTBO", NULL };

struct import {
	const char *file;
	struct diag *notes;
	json_t *vars;		/* jinja2: the dictionary's variables */
	json_t *yaml;		/* YAML: the rendered dictionary */
	json_t *commands;	/* LAVA's `commands`: connect, connections, power ... */
	char *type;		/* the board's device type */
	json_t *params;		/* the board's parameters: LAVA_MAC ... (name -> string) */
	bool extra_args;	/* {EXTRA_KERNEL_ARGS} went into a kernel command line */
	bool qemu;		/* the type boots with QEMU: the board's console and power are QEMU's */
	config_t cfg;
};

static void note(struct import *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct import *im, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_add(im->notes, im->file, 0, "not converted: %s", msg);
}

static int read_file(const char *path, struct strbuf *text)
{
	FILE *f = fopen(path, "r");
	char buf[65536];
	size_t n;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		err = text->len + n > MAX_FILE ? -E2BIG : strbuf_add(text, buf, n);
	if (!err && ferror(f))
		err = -EIO;
	fclose(f);
	return err;
}

/* ---- the jinja2 dictionary: {% extends %} and {% set %} lines ---- */

/* A value: a literal (YAML-compatible), ( literal ), or a variable set before. */
static json_t *jinja_value(struct import *im, char *text, int line)
{
	size_t len = strlen(text);
	char err[256];
	json_t *v = NULL;

	while (len && strchr(" \t\n", text[len - 1]))
		text[--len] = '\0';
	text += strspn(text, " \t\n");
	len = strlen(text);
	if (len >= 2 && text[0] == '(' && text[len - 1] == ')') {
		text[len - 1] = '\0';
		return jinja_value(im, text + 1, line);
	}
	if (json_object_get(im->vars, text))
		return json_incref(json_object_get(im->vars, text));
	if (testdef_parse_yaml(text, strlen(text), im->file, &v, err, sizeof(err)) < 0) {
		diag_add(im->notes, im->file, line, "not converted: a value that is no literal: %s",
			 text);
		return NULL;
	}
	return v;
}

/* One "{% ... %}" statement starting at line @line. */
static void jinja_statement(struct import *im, char *stmt, int line)
{
	char name[128], quote;
	char *eq, *p;
	int n = 0;
	json_t *v;

	stmt += strspn(stmt, " \t\n-");
	if (sscanf(stmt, "extends %c%127[^'\"]%c", &quote, name, &quote) == 3) {
		p = strstr(name, ".jinja2");
		if (p)
			*p = '\0';
		free(im->type);
		im->type = strdup(name);
		return;
	}
	if (sscanf(stmt, "set %127[A-Za-z0-9_] %n", name, &n) != 1 || !n || !(eq = strchr(stmt, '='))) {
		diag_add(im->notes, im->file, line, "not converted: '{%% %.60s %%}': only "
			 "'extends' and 'set' lines are read", stmt);
		return;
	}
	v = jinja_value(im, eq + 1, line);
	if (v)
		json_object_set_new(im->vars, name, v);
}

static int read_jinja(struct import *im, char *text)
{
	char *p = text, *start, *end;
	int line = 1;

	im->vars = json_object();
	if (!im->vars)
		return -ENOMEM;
	while ((start = strstr(p, "{%"))) {
		for (; p < start; p++)
			line += *p == '\n';
		end = strstr(start, "%}");
		if (!end) {
			diag_add(im->notes, im->file, line, "'{%%' without '%%}'");
			return -EINVAL;
		}
		*end = '\0';
		jinja_statement(im, start + 2, line);
		for (p = start; *p; p++)
			line += *p == '\n';
		p = end + 2;
	}
	if (!im->type) {
		diag_add(im->notes, im->file, 0, "no '{%% extends 'TYPE.jinja2' %%}' line: not a "
			 "LAVA device dictionary");
		return -EINVAL;
	}
	return 0;
}

/* The dictionary's variables as LAVA's rendered `commands` (base.jinja2's mapping). */
static int jinja_commands(struct import *im)
{
	static const char *const map[][2] = {
		{ "connection_command", "connect" },	{ "power_on_command", "power_on" },
		{ "power_off_command", "power_off" },	{ "hard_reset_command", "hard_reset" },
		{ "soft_reboot_command", "soft_reboot" }, { "pre_power_command", "pre_power_command" },
		{ "pre_os_command", "pre_os_command" }, { "user_commands", "users" },
	};
	json_t *list = json_object_get(im->vars, "connection_list"), *item, *conns;
	const char *key;
	size_t i;

	im->commands = json_object();
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (json_object_get(im->vars, map[i][0]))
			json_object_set(im->commands, map[i][1], json_object_get(im->vars, map[i][0]));
	conns = json_object();
	json_array_foreach(list, i, item) {
		key = json_string_value(item);
		if (key)
			json_object_set_new(conns, key, json_pack("{s:O?, s:O?}", "connect",
				json_object_get(json_object_get(im->vars, "connection_commands"), key),
				"tags", json_object_get(json_object_get(im->vars, "connection_tags"), key)));
	}
	if (json_object_size(conns))
		json_object_set(im->commands, "connections", conns);
	json_decref(conns);
	return im->commands ? 0 : -ENOMEM;
}

/* ---- writing the board file with libconfig ---- */

static config_setting_t *add(config_setting_t *parent, const char *name, int type)
{
	return parent ? config_setting_add(parent, name, type) : NULL;
}

static void add_str(config_setting_t *parent, const char *name, const char *v)
{
	config_setting_t *s = v ? add(parent, name, CONFIG_TYPE_STRING) : NULL;

	if (s)
		config_setting_set_string(s, v);
}

static void add_strings(config_setting_t *parent, const char *name, const json_t *list)
{
	config_setting_t *s = add(parent, name, CONFIG_TYPE_LIST);
	json_t *item;
	size_t i;

	json_array_foreach(list, i, item)
		if (s && json_is_string(item))
			config_setting_set_string_elem(s, -1, json_string_value(item));
}

/* A command or a list of commands (run one after the other) as one shell line. */
static char *command_text(const json_t *v)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *item;
	size_t i;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	json_array_foreach(v, i, item)
		if (json_is_string(item))
			strbuf_addf(&sb, "%s%s", sb.len ? " && " : "", json_string_value(item));
	return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* ---- the device: console and power ---- */

/* A console command as labd's telnet, tcp or tty driver: 0, or -EINVAL. */
static int console_of(config_setting_t *dev, const char *cmd)
{
	config_setting_t *c;
	wordexp_t we;
	char **w;
	size_t n;
	int err = -EINVAL;

	if (wordexp(cmd, &we, WRDE_NOCMD) != 0)
		return -EINVAL;
	w = we.we_wordv;
	n = we.we_wordc;
	c = add(dev, "console", CONFIG_TYPE_GROUP);
	if (n == 3 && (!strcmp(w[0], "telnet") || !strcmp(w[0], "nc") || !strcmp(w[0], "ncat"))) {
		add_str(c, "driver", strcmp(w[0], "telnet") ? "tcp" : "telnet");
		add_str(c, "host", w[1]);
		config_setting_set_int(add(c, "port", CONFIG_TYPE_INT), atoi(w[2]));
		err = 0;
	} else if (n >= 2 && (!strcmp(w[0], "microcom") || !strcmp(w[0], "picocom") ||
			      !strcmp(w[0], "screen")) && !strncmp(w[n - 1], "/dev/", 5)) {
		add_str(c, "driver", "tty");
		add_str(c, "device", w[n - 1]);
		err = 0;
	} else if (n >= 3 && !strcmp(w[0], "screen") && !strncmp(w[1], "/dev/", 5)) {
		add_str(c, "driver", "tty");
		add_str(c, "device", w[1]);
		config_setting_set_int(add(c, "baud", CONFIG_TYPE_INT), atoi(w[2]));
		err = 0;
	}
	wordfree(&we);
	if (err)
		config_setting_remove(dev, "console");
	return err;
}

/* The primary connection's command: `connect`, or the one of `connections` tagged primary. */
static const char *primary_connect(struct import *im)
{
	json_t *conns = json_object_get(im->commands, "connections"), *c, *tag;
	const char *name, *found = NULL;
	size_t i;

	json_object_foreach(conns, name, c) {
		bool primary = false;

		json_array_foreach(json_object_get(c, "tags"), i, tag)
			primary = primary || !strcmp(json_string_value(tag) ?: "", "primary");
		if (primary && !found)
			found = json_string_value(json_object_get(c, "connect"));
		else
			note(im, "connection '%s': a board has one console in labd", name);
	}
	return found ? found : json_string_value(json_object_get(im->commands, "connect"));
}

static void device_power(struct import *im, config_setting_t *dev)
{
	char *on = command_text(json_object_get(im->commands, "power_on"));
	char *off = command_text(json_object_get(im->commands, "power_off"));
	char *reset = command_text(json_object_get(im->commands, "hard_reset"));
	config_setting_t *p;

	if (on && off) {
		p = add(dev, "power", CONFIG_TYPE_GROUP);
		add_str(p, "driver", "command");
		add_str(p, "on", on);
		add_str(p, "off", off);
		add_str(p, "reset", reset);
	} else if (on || off || reset) {
		note(im, "power: labd's command power driver needs both power_on and power_off "
			 "commands");
	} else {
		note(im, "power: the dictionary has no power commands");
	}
	free(on);
	free(off);
	free(reset);
}

static void device_leftovers(struct import *im)
{
	static const char *const done[] = { "connect", "connections", "power_on", "power_off",
					    "hard_reset" };
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(im->commands, key, v) {
		for (i = 0; i < sizeof(done) / sizeof(done[0]) && strcmp(key, done[i]); i++)
			;
		if (i == sizeof(done) / sizeof(done[0]))
			note(im, "commands '%s': labd runs no host commands besides power", key);
	}
}

static void device_params(struct import *im, config_setting_t *dev)
{
	config_setting_t *g = json_object_size(im->params) ?
			      add(dev, "parameters", CONFIG_TYPE_GROUP) : NULL;
	const char *key;
	json_t *v;

	json_object_foreach(im->params, key, v)
		add_str(g, key, json_string_value(v));
}

static void add_device(struct import *im, const char *name)
{
	config_setting_t *dev = add(config_root_setting(&im->cfg), "device", CONFIG_TYPE_GROUP);
	const char *connect = primary_connect(im);
	char desc[512];

	add_str(dev, "name", name);
	add_str(dev, "type", im->type);
	snprintf(desc, sizeof(desc), "imported from LAVA's %s", im->file);
	add_str(dev, "description", desc);
	if (!connect && im->qemu) {	/* labd runs QEMU: its serial port and its power */
		add_str(add(dev, "console", CONFIG_TYPE_GROUP), "driver", "qemu");
		add_str(add(dev, "power", CONFIG_TYPE_GROUP), "driver", "qemu");
		device_leftovers(im);
		return;
	}
	if (!connect)
		note(im, "console: the dictionary has no connection command");
	else if (console_of(dev, connect) < 0)
		note(im, "console '%s': labd's consoles are a tty, telnet (ser2net), TCP or a Unix "
			 "socket", connect);
	device_params(im, dev);
	add_str(json_string_length(json_object_get(im->yaml, "fastboot_serial_number")) ?
		add(dev, "fastboot", CONFIG_TYPE_GROUP) : NULL, "serial",
		json_string_value(json_object_get(im->yaml, "fastboot_serial_number")));
	device_power(im, dev);
	device_leftovers(im);
}

/* ---- the device type of a rendered dictionary ---- */

/*
 * Whether every {VAR} of @cmd is one labd gives, or one of @params (the
 * board's parameters), or @optional (then *ret_optional).
 */
static bool vars_known(const char *cmd, const json_t *params, const char **ret_var,
		       bool *ret_optional)
{
	const char *p = cmd, *close;
	char var[64];
	size_t n, i;

	*ret_optional = false;
	while ((p = strchr(p, '{'))) {
		close = strchr(p, '}');
		n = close ? (size_t)(close - p - 1) : 0;
		if (p > cmd && p[-1] == '$') {	/* U-Boot's own ${var} */
			p++;
			continue;
		}
		if (!close || !n || n >= sizeof(var))
			break;
		memcpy(var, p + 1, n);
		var[n] = '\0';
		p = close;
		for (i = 0; known_vars[i] && strcmp(known_vars[i], var); i++)
			;
		if (known_vars[i] || json_object_get(params, var))
			continue;
		for (i = 0; optional_vars[i] && strcmp(optional_vars[i], var); i++)
			;
		*ret_var = strstr(cmd, var);
		*ret_optional = optional_vars[i] != NULL;
		return false;
	}
	return true;
}

/* Where a command set gives the kernel its command line: the line's index, or -1. */
static long cmdline_index(const json_t *lines)
{
	static const char *const starts[] = { "setenv bootargs", "set extraargs",
					      "global linux.bootargs", "linux ", "linuxefi ",
					      "kernel " };
	const json_t *line;
	size_t i, k;

	for (k = 0; k < sizeof(starts) / sizeof(starts[0]); k++)
		json_array_foreach(lines, i, line)
			if (json_is_string(line) &&
			    !strncmp(json_string_value(line), starts[k], strlen(starts[k])))
				return (long)i;
	return -1;
}

/*
 * @lines with {EXTRA_KERNEL_ARGS} at the end of their kernel command line,
 * inside its quotes (LAVA renders a job's `context: extra_kernel_args` there:
 * labd substitutes it at each job).  A new reference.
 */
static json_t *with_extra_args(struct import *im, const char *method, const char *set,
			       json_t *lines)
{
	long i = cmdline_index(lines);
	const char *line = i < 0 ? NULL : json_string_value(json_array_get(lines, (size_t)i));
	size_t end;
	char *text;

	if (!line) {
		note(im, "%s commands '%s': no kernel command line to add the job's extra_kernel_args to",
		     method, set);
		return json_incref(lines);
	}
	if (strstr(line, "{EXTRA_KERNEL_ARGS}"))
		return json_incref(lines);
	for (end = strlen(line); end && strchr("'\"", line[end - 1]); end--)
		;
	if (asprintf(&text, "%.*s {EXTRA_KERNEL_ARGS}%s", (int)end, line, line + end) < 0)
		return json_incref(lines);
	lines = json_deep_copy(lines);
	json_array_set_new(lines, (size_t)i, json_string(text));
	free(text);
	im->extra_args = true;
	return lines;
}

/* A LAVA command set as labd's: lines with TEE/DTBO left out, sets needing NBD ... refused. */
static void bootloader_commands(struct import *im, config_setting_t *cmds, const char *method,
				const char *set, const json_t *lines)
{
	json_t *kept = json_array(), *line, *with;
	const char *var = NULL;
	bool optional;
	size_t i;

	json_array_foreach(lines, i, line) {
		const char *cmd = json_string_value(line);

		if (!cmd)
			continue;
		if (vars_known(cmd, im->params, &var, &optional)) {
			json_array_append(kept, line);
		} else if (!optional) {
			note(im, "%s commands '%s': '%s' needs {%.*s}, which labd does not provide",
			     method, set, cmd, (int)strcspn(var, "}"), var);
			json_decref(kept);
			return;
		}
	}
	if (json_array_size(kept) < json_array_size(lines))
		note(im, "%s commands '%s': the TEE/DTBO lines (labd deploys neither)", method, set);
	with = with_extra_args(im, method, set, kept);
	add_strings(cmds, set, with);
	json_decref(with);
	json_decref(kept);
}

/* A uefi-menu set: LAVA's list of {select: {items: [...]}} as the entries to choose. */
static void menu_entries(struct import *im, config_setting_t *cmds, const char *set,
			 const json_t *steps)
{
	json_t *entries = json_array(), *step, *sel, *item;
	size_t i, k;

	json_array_foreach(steps, i, step) {
		sel = json_object_get(step, "select");
		json_array_foreach(json_object_get(sel, "items"), k, item)
			json_array_append(entries, item);
		if (json_object_size(sel) > 1 || json_object_size(step) > 1)
			note(im, "uefi-menu commands '%s': step %zu: only its items are chosen (labd "
				 "moves the highlight to each; its 'enter', 'wait' are not taken)",
			     set, i + 1);
	}
	if (json_array_size(entries))
		add_strings(cmds, set, entries);
	json_decref(entries);
}

/*
 * A method's parameters that are the board's own (LAVA's `lava_mac`, which
 * its commands use as {LAVA_MAC}): the board's parameters, upper case.
 */
static void board_params(struct import *im, const json_t *p)
{
	static const char *const own[] = { "lava_mac" };
	char name[32];
	size_t i, k;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		if (!json_is_string(json_object_get(p, own[i])))
			continue;
		for (k = 0; own[i][k] && k < sizeof(name) - 1; k++)
			name[k] = (char)toupper((unsigned char)own[i][k]);
		name[k] = '\0';
		json_object_set(im->params, name, json_object_get(p, own[i]));
	}
}

/* LAVA's constants of bootloader @method (grub-efi's default to grub's). */
static const json_t *method_constants(struct import *im, const char *method)
{
	const json_t *all = json_object_get(im->yaml, "constants");
	const json_t *c = json_object_get(all, method);

	return c || strcmp(method, "grub-efi") ? c : json_object_get(all, "grub");
}

/* The keys that stop the autoboot: the method's, the constants', or Ctrl-X of a ctrl list. */
static void interrupt_keys(config_setting_t *g, const json_t *p, const json_t *c)
{
	const json_t *v = json_object_get(p, "interrupt_char");
	const json_t *ctrl = json_object_get(c, "interrupt_ctrl_list");
	const char *letter = json_string_value(json_array_get(ctrl, 0));
	char keys[2] = "";

	if (!json_string_length(v))
		v = json_object_get(p, "interrupt_string");
	if (!json_string_length(v))
		v = json_object_get(c, "interrupt-character");
	if (json_string_length(v)) {
		add_str(g, "interrupt_char", json_string_value(v));
	} else if (letter && *letter >= 'a' && *letter <= 'z') {
		keys[0] = (char)(*letter - 'a' + 1);	/* Ctrl-B: "\x02" */
		add_str(g, "interrupt_char", keys);
	}
}

/* The prompts, keys and messages of a bootloader group (constants, method parameters). */
static void bootloader_settings(struct import *im, config_setting_t *g, const char *method,
				const json_t *p, const json_t *c)
{
	json_t *delay = json_object_get(json_object_get(im->yaml, "character_delays"), "boot");

	add_str(g, "interrupt_prompt", json_string_value(json_object_get(p, "interrupt_prompt")) ?:
		json_string_value(json_object_get(c, "interrupt-prompt")));
	interrupt_keys(g, p, c);
	if (json_is_boolean(json_object_get(c, "interrupt-newline")))
		config_setting_set_bool(add(g, "interrupt_newline", CONFIG_TYPE_BOOL),
					json_is_true(json_object_get(c, "interrupt-newline")));
	if (json_is_boolean(json_object_get(p, "needs_interrupt")))
		config_setting_set_bool(add(g, "needs_interrupt", CONFIG_TYPE_BOOL),
					json_is_true(json_object_get(p, "needs_interrupt")));
	if (strcmp(method, "uefi-menu"))	/* a menu's prompt is its highlighted entry */
		add_str(g, "bootloader_prompt",
			json_string_value(json_object_get(p, "bootloader_prompt")));
	else if (json_object_get(p, "bootloader_prompt"))
		note(im, "uefi-menu: LAVA types item numbers at '%s'; labd moves the highlight "
			 "(menu_item, menu_down: labd's defaults)",
		     json_string_value(json_object_get(p, "bootloader_prompt")));
	add_str(g, "final_message", json_string_value(json_object_get(c, "final-message")));
	if (json_is_array(json_object_get(c, "error-messages")))
		add_strings(g, "error_messages", json_object_get(c, "error-messages"));
	if (json_is_integer(delay))
		config_setting_set_float(add(g, "char_delay", CONFIG_TYPE_FLOAT),
					 (double)json_integer_value(delay) / 1000);
}

/*
 * The group of bootloader @method: its settings and its command sets (the
 * method's keys holding `commands`, or uefi-menu's lists of choices).
 * false when there is no set to boot with: labd needs one.
 */
static bool type_bootloader(struct import *im, config_setting_t *type, const char *method,
			    const json_t *m)
{
	const json_t *p = json_object_get(m, "parameters"), *v;
	const char *key, *menu = json_string_value(json_object_get(m, "menu_options"));
	config_setting_t *g = add(type, method, CONFIG_TYPE_GROUP), *cmds, *first = NULL;
	bool is_menu = !strcmp(method, "uefi-menu");

	bootloader_settings(im, g, method, p, method_constants(im, method));
	board_params(im, p);
	cmds = add(g, "commands", CONFIG_TYPE_GROUP);
	json_object_foreach((json_t *)m, key, v) {
		if (is_menu && json_is_array(v))
			menu_entries(im, cmds, key, v);
		else if (!is_menu && json_is_array(json_object_get(v, "commands")))
			bootloader_commands(im, cmds, method, key, json_object_get(v, "commands"));
		if (!first || !strcmp(key, "ramdisk") || (menu && !strcmp(key, menu)))
			first = config_setting_get_member(cmds, key) ?: first;
	}
	if (!config_setting_length(cmds)) {
		config_setting_remove(type, method);
		note(im, "boot method '%s': the dictionary has no command set labd could take "
			 "(jobs of LAVA give their own commands): add one to the device type", method);
		return false;
	}
	add_str(g, "default_commands", config_setting_name(first));
	return true;
}

/* ---- qemu and fastboot ---- */

/* LAVA's QEMU options as labd's arguments: one word each, without what labd sets itself. */
static void qemu_args(struct import *im, config_setting_t *q, const json_t *p)
{
	static const char *const labds[] = { "-nographic", "-monitor", "-serial", "-display" };
	config_setting_t *args = add(q, "args", CONFIG_TYPE_ARRAY);
	const char *order = json_string_value(json_object_get(json_object_get(p, "boot_options"),
							      "boot_order"));
	json_t *opt;
	size_t i, k;
	wordexp_t we;

	json_array_foreach(json_object_get(p, "options"), i, opt) {
		if (!json_is_string(opt) || wordexp(json_string_value(opt), &we, WRDE_NOCMD))
			continue;
		for (k = 0; k < sizeof(labds) / sizeof(labds[0]) && we.we_wordc &&
		     strcmp(we.we_wordv[0], labds[k]); k++)
			;
		if (k < sizeof(labds) / sizeof(labds[0]))
			note(im, "qemu option '%s': labd sets the display, monitor and serial port",
			     json_string_value(opt));
		for (size_t w = 0; k == sizeof(labds) / sizeof(labds[0]) && w < we.we_wordc; w++)
			config_setting_set_string_elem(args, -1, we.we_wordv[w]);
		wordfree(&we);
	}
	if (order) {
		config_setting_set_string_elem(args, -1, "-boot");
		config_setting_set_string_elem(args, -1, order);
	}
	for (i = 0; i < 6; i++)
		config_setting_set_string_elem(args, -1, (const char *[]){ "-kernel", "{KERNEL}",
			"-initrd", "{RAMDISK}", "-append", "{APPEND}" }[i]);
}

/* The qemu group: the binary, its arguments, the kernel command line. */
static bool type_qemu(struct import *im, config_setting_t *type, const json_t *m)
{
	const json_t *p = json_object_get(m, "parameters");
	const json_t *bo = json_object_get(p, "boot_options");
	const char *binary = json_string_value(json_object_get(p, "command"));
	config_setting_t *q;
	struct strbuf append = STRBUF_INIT;
	json_t *images = json_pack("[sss]", "kernel", "ramdisk", "initrd");

	if (!binary) {
		note(im, "boot method 'qemu': no 'command' (the QEMU binary)");
		json_decref(images);
		return false;
	}
	q = add(type, "qemu", CONFIG_TYPE_GROUP);
	add_str(q, "binary", binary);
	qemu_args(im, q, p);
	if (json_string_value(json_object_get(bo, "root")))
		strbuf_addf(&append, "root=%s", json_string_value(json_object_get(bo, "root")));
	if (json_string_value(json_object_get(bo, "console")))
		strbuf_addf(&append, "%sconsole=%s", append.len ? " " : "",
			    json_string_value(json_object_get(bo, "console")));
	add_str(q, "append", append.buf);
	add_strings(q, "allowed_images", images);
	config_setting_set_bool(add(q, "append_allowed", CONFIG_TYPE_BOOL), 1);
	note(im, "boot method 'qemu': LAVA's jobs give each image's QEMU argument (image_arg); "
		 "labd's type passes {KERNEL}, {RAMDISK} and {APPEND}: add a disk's to 'args'");
	strbuf_release(&append);
	json_decref(images);
	im->qemu = true;
	im->extra_args = true;
	return true;
}

/* The boot method fastboot: the board's fastboot serial number is its device's. */
static bool type_fastboot(struct import *im, const json_t *m)
{
	if (json_array_size(m))
		note(im, "boot method 'fastboot': LAVA's options %s are not labd's",
		     json_string_value(json_array_get(m, 0)));
	if (!json_string_length(json_object_get(im->yaml, "fastboot_serial_number")))
		note(im, "fastboot: no fastboot_serial_number: set the board's fastboot = { serial = ...; }");
	return true;
}

/* bootx from LAVA's load addresses (parameters.booti/bootz/bootm). */
static void type_bootx(struct import *im, config_setting_t *type)
{
	static const char *const cmds[] = { "booti", "bootz", "bootm" };
	static const char *const keys[] = { "kernel", "ramdisk", "dtb", "tee", "dtbo" };
	const json_t *params = json_object_get(im->yaml, "parameters"), *addrs;
	config_setting_t *bootx = NULL, *g;
	size_t i, j;

	for (i = 0; i < 3; i++) {
		addrs = json_object_get(params, cmds[i]);
		if (!json_is_object(addrs))
			continue;
		if (!bootx)
			bootx = add(type, "bootx", CONFIG_TYPE_GROUP);
		g = add(bootx, cmds[i], CONFIG_TYPE_GROUP);
		for (j = 0; j < 5; j++)
			add_str(g, keys[j], json_string_value(json_object_get(addrs, keys[j])));
	}
}

/* The group of boot method @name of @m, when it has one: false when it could not be made. */
static bool type_boot_method(struct import *im, config_setting_t *type, const char *name,
			     const json_t *m)
{
	static const char *const bootloaders[] = { "u-boot", "barebox", "grub", "grub-efi",
						   "ipxe", "depthcharge", "uefi-menu" };
	size_t i;

	for (i = 0; i < sizeof(bootloaders) / sizeof(bootloaders[0]); i++)
		if (!strcmp(name, bootloaders[i]))
			return type_bootloader(im, type, name, m);
	if (!strcmp(name, "qemu"))
		return type_qemu(im, type, m);
	if (!strcmp(name, "fastboot"))
		return type_fastboot(im, m);
	return true;	/* minimal: nothing more */
}

/*
 * `actions.<what>.methods` as labd's list @key: the methods labd has (@ours,
 * its default first, always there), each with its group when it needs one;
 * the others are named in the notes.
 */
static void type_methods(struct import *im, config_setting_t *type, const char *what,
			 const char *key, const char *const *ours)
{
	const json_t *methods = json_object_get(json_object_get(json_object_get(
		im->yaml, "actions"), what), "methods");
	config_setting_t *list = add(type, key, CONFIG_TYPE_ARRAY);
	const char *name;
	json_t *v;
	size_t i;

	config_setting_set_string_elem(list, -1, ours[0]);
	json_object_foreach((json_t *)methods, name, v) {
		for (i = 0; ours[i] && strcmp(ours[i], name); i++)
			;
		if (!ours[i])
			note(im, "%s method '%s': labd has no such method", what, name);
		else if (i && (strcmp(what, "boot") || type_boot_method(im, type, name, v)))
			config_setting_set_string_elem(list, -1, name);
	}
}

static void add_type(struct import *im)
{
	/* the first is always there (labd's default) */
	static const char *const boots[] = { "minimal", "u-boot", "barebox", "grub", "grub-efi",
					     "ipxe", "depthcharge", "uefi-menu", "qemu",
					     "fastboot", NULL };
	static const char *const deploys[] = { "none", "tftp", "tmpfs", "nfs", "fastboot", NULL };
	config_setting_t *type = add(config_root_setting(&im->cfg), "device_type",
				     CONFIG_TYPE_GROUP), *k;
	const char *start = json_string_value(json_object_get(
		json_object_get(im->yaml, "constants"), "kernel-start-message"));
	json_t *ctx;

	add_str(type, "name", im->type);
	type_methods(im, type, "boot", "boot_methods", boots);
	type_methods(im, type, "deploy", "deploy_methods", deploys);
	type_bootx(im, type);
	if (im->extra_args) {	/* jobs' `context: extra_kernel_args`, as LAVA renders them */
		ctx = json_pack("[s]", "extra_kernel_args");
		add_strings(type, "context_allowed", ctx);
		json_decref(ctx);
	}
	if (start) {
		k = add(type, "kernel", CONFIG_TYPE_GROUP);
		add_str(k, "start_message", start);
	}
}

/* ---- the whole import ---- */

/*
 * A rendered dictionary: YAML, into im->yaml.  A key given twice is taken
 * as PyYAML takes it, the last value winning (some of LAVA's templates
 * render one twice), and noted; any other problem refuses the file.
 */
static int read_rendered(struct import *im, const struct strbuf *text)
{
	struct diag diag = DIAG_INIT, warnings = DIAG_INIT;
	struct job_doc doc;
	size_t i;
	int r = job_doc_init(&doc, im->file);

	if (r < 0)
		return r;
	doc.notices = &warnings;	/* keys rendered twice: "FILE:LINE: warning: ..." */
	r = job_yaml_load(&doc, text->buf, text->len, false);
	if (!r)
		r = job_doc_check_shape(&doc);
	im->yaml = r ? NULL : json_incref(doc.root);
	if (job_doc_finish(&doc, &diag) == -ENOMEM)
		r = -ENOMEM;
	if (!r && !diag.n && json_is_object(im->yaml)) {
		for (i = 0; i < warnings.n; i++)
			diag_add_message(im->notes, warnings.msgs[i]);
	} else if (r != -ENOMEM) {
		diag_add(im->notes, diag.n ? NULL : im->file, 0, "%s",
			 diag.n ? diag.msgs[0] : "not a device dictionary (a YAML mapping)");
		r = -EINVAL;
	}
	diag_release(&diag);
	diag_release(&warnings);
	return r;
}

/*
 * The board's device type: @type, the one the dictionary names (jinja2:
 * `extends`; rendered: `devicetype`, as lava-server renders it), else
 * "<board>-type", which no LAVA job asks for: said.
 */
static int type_name(struct import *im, const char *type, const char *board)
{
	const char *named = json_string_value(json_object_get(im->yaml, "devicetype"));

	if (type || (named && *named)) {
		free(im->type);
		im->type = strdup(type ? type : named);
		return im->type ? 0 : -ENOMEM;
	}
	if (im->type)
		return 0;
	note(im, "the dictionary does not name its device type (devicetype is empty): named "
		 "'%s-type', which LAVA's jobs do not ask for; give --type (LAVA's name, as in "
		 "the jobs' device_type)", board);
	return asprintf(&im->type, "%s-type", board) < 0 ? -ENOMEM : 0;
}

/* The board's name: @name, the dictionary's hostname, or the file's name. */
static char *board_name(struct import *im, const char *name, const char *path)
{
	const char *host = json_string_value(json_object_get(im->yaml, "hostname"));
	char *copy, *base, *dot, *ret;

	if (name)
		return strdup(name);
	if (host && *host)
		return strdup(host);
	copy = strdup(path);
	if (!copy)
		return NULL;
	base = basename(copy);
	dot = strrchr(base, '.');
	if (dot && dot != base)
		*dot = '\0';
	ret = strdup(base);
	free(copy);
	return ret;
}

static int write_config(struct import *im, struct strbuf *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "# %s: converted by labd import-lava-device (doc/lava-compat.md)\n", im->file);
	config_write(&im->cfg, f);
	fclose(f);
	strbuf_add(out, text, len);
	free(text);
	return 0;
}

static void note_unused_vars(struct import *im)
{
	static const char *const used[] = { "connection_command", "connection_list",
					    "connection_commands", "connection_tags",
					    "power_on_command", "power_off_command",
					    "hard_reset_command", "soft_reboot_command",
					    "pre_power_command", "pre_os_command", "user_commands" };
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(im->vars, key, v) {
		for (i = 0; i < sizeof(used) / sizeof(used[0]) && strcmp(key, used[i]); i++)
			;
		if (i == sizeof(used) / sizeof(used[0]))
			note(im, "'%s': a variable of LAVA's template '%s.jinja2': set it in labd's "
				 "device type '%s' if the board needs it", key, im->type, im->type);
	}
}

int lava_device_import(const char *path, const char *name, const char *type,
		       struct strbuf *out, struct diag *notes)
{
	struct import im = { .file = path, .notes = notes, .params = json_object() };
	struct strbuf text = STRBUF_INIT;
	const char *ext = strrchr(path, '.');
	char *board = NULL;
	int r;

	config_init(&im.cfg);
	config_set_options(&im.cfg, CONFIG_OPTION_SEMICOLON_SEPARATORS);
	config_set_tab_width(&im.cfg, 8);
	r = read_file(path, &text);
	if (r < 0)
		goto out;
	if (ext && !strcmp(ext, ".jinja2")) {
		r = read_jinja(&im, text.buf);
		if (!r)
			r = jinja_commands(&im);
	} else {
		r = read_rendered(&im, &text);
		if (r < 0)
			goto out;
		im.commands = json_incref(json_object_get(im.yaml, "commands"));
	}
	board = r ? NULL : board_name(&im, name, path);
	if (!r)
		r = board ? type_name(&im, type, board) : -ENOMEM;
	if (r < 0)
		goto out;
	if (im.yaml)
		add_type(&im);
	add_device(&im, board);
	note_unused_vars(&im);
	r = write_config(&im, out);
out:
	config_destroy(&im.cfg);
	json_decref(im.vars);
	json_decref(im.yaml);
	json_decref(im.commands);
	json_decref(im.params);
	free(im.type);
	free(board);
	strbuf_release(&text);
	return r;
}
