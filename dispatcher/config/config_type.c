// SPDX-License-Identifier: GPL-2.0-or-later
/* config_type.c -- device types: parse, resolve `extends` chains, check patterns */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "config/config.h"
#include "config/config_priv.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/power.h"

#define TYPE_MAX_ERRMSG 256	/* PCRE2 error message buffer */

static const char *const type_keys[] = {
	"name", "extends", "boot_methods", "deploy_methods", "context_allowed", "power_on_delay",
	"parameters", "bootx", "u-boot", "kernel", "qemu", NULL
};

static const char *const uboot_keys[] = {
	"interrupt_prompt", "interrupt_char", "interrupt_newline", "needs_interrupt",
	"bootloader_prompt", "char_delay", "final_message", "error_messages", "default_commands",
	"commands", NULL
};

static const char *const kernel_keys[] = {
	"start_message", "login_prompt", "prompts", "char_delay", NULL
};

static const char *const qemu_keys[] = {
	"binary", "args", "console", "append", "allowed_images", "append_allowed", NULL
};

static const char *const bootx_commands[] = { "booti", "bootz", "bootm", NULL };
static const char *const bootx_keys[] = { "kernel", "ramdisk", "dtb", "tee", "dtbo", NULL };
static const char *const boot_methods[] = { "minimal", "u-boot", "qemu", "fastboot", NULL };
static const char *const deploy_methods[] = { "tftp", "tmpfs", "none", "sdmux", "fastboot", NULL };
static const char *const qemu_consoles[] = { "socket", "pty", NULL };

/* U-Boot output that means the boot failed (LAVA's list; PCRE2 patterns) */
static const char *const default_error_messages[] = {
	"Resetting CPU",
	"Must RESET board to recover",
	"TIMEOUT",
	"Retry count exceeded",
	"Retry time exceeded; starting again",
	"The remote end did not respond in time.",
	"File not found",
	"Bad Linux ARM64 Image magic!",
	"Bad Linux RISCV Image magic!",
	"Wrong Ramdisk Image Format",
	"Ramdisk image is corrupt or invalid",
	"Wrong Image Format for boot",
	"ERROR: Failed to allocate",
	"ERROR: Did not find a cmdline Flattened Device Tree",
	"ERROR: RD image overlaps OS image",
	"kernel_comp_addr_r or kernel_comp_size is not provided",
	"zimage: Bad magic",
	"TFTP error",
	NULL
};

static const char *const default_boot_methods[] = { "minimal", NULL };
static const char *const default_deploy_methods[] = { "none", NULL };
static const char *const default_allowed_images[] = { "kernel", "initrd", NULL };

/* A type group while types are resolved */
struct type_entry {
	const config_setting_t *group;
	const char *name;
	const char *parent;		/* `extends`, or NULL */
	const config_setting_t *extends;
	struct device_type *type;	/* once resolved */
	enum { TYPE_NEW, TYPE_VISITING, TYPE_DONE } state;
};

static int copy_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

static int copy_strv(char ***dst, const char *const *src)
{
	return strv_copy((char *const *)src, dst);
}

/* The element @i of a list, or @s itself when it is a single string. */
static const config_setting_t *elem_at(const config_setting_t *s, int i)
{
	return config_setting_is_aggregate(s) ? config_setting_get_elem(s, (unsigned int)i) : s;
}

static int check_regex(const config_setting_t *s, const char *key, const char *re,
		       struct diag *diag)
{
	PCRE2_UCHAR msg[TYPE_MAX_ERRMSG];
	PCRE2_SIZE off;
	pcre2_code *code;
	int err;

	code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
	if (code) {
		pcre2_code_free(code);
		return 0;
	}
	pcre2_get_error_message(err, msg, sizeof(msg));
	return diag_add(diag, cfg_file(s), cfg_line(s),
			"invalid regular expression '%s' in '%s': %s at offset %zu", re, key,
			(const char *)msg, (size_t)off);
}

/* Optional string @key of @g replaces *@dst; @regex: it must compile. */
static int set_str(char **dst, const config_setting_t *g, const char *key, bool regex,
		   struct diag *diag)
{
	const char *v;
	char *n;
	int r = cfg_get_string(g, key, false, &v, diag);

	if (r < 0)
		return r;
	if (regex)
		r = check_regex(config_setting_get_member(g, key), key, v, diag);
	n = strdup(v);
	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return r;
}

/* Optional string list @key of @g replaces *@dst (lists do not merge). */
static int set_strv(char ***dst, const config_setting_t *g, const char *key, bool regex,
		    struct diag *diag)
{
	const config_setting_t *s;
	char **v = NULL;
	size_t i;
	int r = cfg_get_strv(g, key, false, &v, diag);

	if (r < 0)
		return r;
	s = config_setting_get_member(g, key);
	for (i = 0; regex && v && v[i]; i++)
		if (check_regex(elem_at(s, (int)i), key, v[i], diag) == -ENOMEM)
			r = -ENOMEM;
	strv_free(*dst);
	*dst = v;
	return r;
}

/* A list of method names, each of which must be in @known. */
static int set_methods(char ***dst, const config_setting_t *g, const char *key,
		       const char *const *known, const char *what, struct diag *diag)
{
	const config_setting_t *s;
	char *names;
	size_t i;
	int r = set_strv(dst, g, key, false, diag);

	if (r < 0)
		return r;
	s = config_setting_get_member(g, key);
	for (i = 0; *dst && (*dst)[i]; i++) {
		if (strv_contains((char *const *)known, (*dst)[i]))
			continue;
		names = strv_join((char *const *)known, ", ");
		if (!names)
			return -ENOMEM;
		r = diag_add(diag, cfg_file(elem_at(s, (int)i)), cfg_line(elem_at(s, (int)i)),
			     "unknown %s '%s' (known: %s)", what, (*dst)[i], names);
		free(names);
	}
	return r;
}

static int set_choice(char **dst, const config_setting_t *g, const char *key,
		      const char *const *known, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	char *names;
	int r = set_str(dst, g, key, false, diag);

	if (r < 0 || strv_contains((char *const *)known, *dst))
		return r;
	names = strv_join((char *const *)known, ", ");
	if (!names)
		return -ENOMEM;
	r = diag_add(diag, cfg_file(s), cfg_line(s), "unknown %s '%s' (known: %s)", key, *dst,
		     names);
	free(names);
	return r;
}

/* u-boot.commands: each set is a command list, stored joined with '\n'; sets merge by name. */
static int parse_commands(struct kv *sets, const config_setting_t *ub, struct diag *diag)
{
	const config_setting_t *g;
	int i, n, r = config_get_group(ub, "commands", &g, diag);

	if (r < 0)
		return r;
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(g, (unsigned int)i);
		const char *name = config_setting_name(e);
		char **cmds = NULL, *joined;

		r = cfg_get_strv(g, name, true, &cmds, diag);
		if (r == -ENOMEM)
			return r;
		if (r == 0 && !cmds)
			r = diag_add(diag, cfg_file(e), cfg_line(e), "command set '%s' is empty",
				     name);
		if (r < 0)
			continue;
		joined = strv_join(cmds, "\n");
		strv_free(cmds);
		if (!joined || kv_set(sets, name, joined) < 0) {
			free(joined);
			return -ENOMEM;
		}
		free(joined);
	}
	return 0;
}

static int parse_uboot(struct uboot_params *u, const config_setting_t *g, struct diag *diag)
{
	const config_setting_t *ub;
	int r = config_get_group(g, "u-boot", &ub, diag);

	if (r < 0)
		return r;
	if (config_oom(cfg_check_keys(ub, uboot_keys, diag)) ||
	    config_oom(set_str(&u->interrupt_prompt, ub, "interrupt_prompt", true, diag)) ||
	    config_oom(set_str(&u->interrupt_char, ub, "interrupt_char", false, diag)) ||
	    config_oom(cfg_get_bool(ub, "interrupt_newline", false, &u->interrupt_newline, diag)) ||
	    config_oom(cfg_get_bool(ub, "needs_interrupt", false, &u->needs_interrupt, diag)) ||
	    config_oom(set_str(&u->bootloader_prompt, ub, "bootloader_prompt", true, diag)) ||
	    config_oom(cfg_get_duration(ub, "char_delay", false, &u->char_delay, diag)) ||
	    config_oom(set_str(&u->final_message, ub, "final_message", true, diag)) ||
	    config_oom(set_strv(&u->error_messages, ub, "error_messages", true, diag)) ||
	    config_oom(set_str(&u->default_commands, ub, "default_commands", false, diag)) ||
	    config_oom(parse_commands(&u->command_sets, ub, diag)))
		return -ENOMEM;
	return 0;
}

static int parse_kernel(struct kernel_params *k, const config_setting_t *g, struct diag *diag)
{
	const config_setting_t *kg;
	int r = config_get_group(g, "kernel", &kg, diag);

	if (r < 0)
		return r;
	if (config_oom(cfg_check_keys(kg, kernel_keys, diag)) ||
	    config_oom(set_str(&k->start_message, kg, "start_message", true, diag)) ||
	    config_oom(set_str(&k->login_prompt, kg, "login_prompt", true, diag)) ||
	    config_oom(set_strv(&k->prompts, kg, "prompts", true, diag)) ||
	    config_oom(cfg_get_duration(kg, "char_delay", false, &k->char_delay, diag)))
		return -ENOMEM;
	return 0;
}

static int parse_qemu(struct device_type *t, const config_setting_t *g, struct diag *diag)
{
	struct qemu_params *q = &t->qemu;
	const config_setting_t *qg;
	int r = config_get_group(g, "qemu", &qg, diag);

	if (r < 0)
		return r;
	t->has_qemu = true;
	if (config_oom(cfg_check_keys(qg, qemu_keys, diag)) ||
	    config_oom(set_str(&q->binary, qg, "binary", false, diag)) ||
	    config_oom(set_strv(&q->args, qg, "args", false, diag)) ||
	    config_oom(set_choice(&q->console, qg, "console", qemu_consoles, diag)) ||
	    config_oom(set_str(&q->append_default, qg, "append", false, diag)) ||
	    config_oom(set_strv(&q->allowed_images, qg, "allowed_images", false, diag)) ||
	    config_oom(cfg_get_bool(qg, "append_allowed", false, &q->append_allowed, diag)))
		return -ENOMEM;
	return 0;
}

/* bootx = { booti = { kernel = "0x..."; ... }; ... } -> "booti.kernel" = "0x..." */
static int parse_bootx(struct kv *bootx, const config_setting_t *g, struct diag *diag)
{
	const config_setting_t *bg, *cg;
	struct kv m = KV_INIT;
	size_t i, j;
	int r = config_get_group(g, "bootx", &bg, diag);

	if (r < 0)
		return r;
	if (config_oom(cfg_check_keys(bg, bootx_commands, diag)))
		return -ENOMEM;
	for (i = 0; bootx_commands[i] && r != -ENOMEM; i++) {
		if (config_get_group(bg, bootx_commands[i], &cg, diag) < 0)
			continue;
		r = cfg_check_keys(cg, bootx_keys, diag);
		if (r != -ENOMEM)
			r = config_get_kv(bg, bootx_commands[i], &m, diag);
		for (j = 0; j < m.n && r != -ENOMEM; j++) {
			char key[32];

			if (!strv_contains((char *const *)bootx_keys, m.keys[j]))
				continue;	/* reported above */
			snprintf(key, sizeof(key), "%s.%s", bootx_commands[i], m.keys[j]);
			r = kv_set(bootx, key, m.vals[j]);
		}
		kv_release(&m);
	}
	return r;
}

/* Checks on the merged result: what the type's boot methods need. */
static int check_type(const struct device_type *t, const config_setting_t *g,
		      struct diag *diag)
{
	const struct uboot_params *u = &t->uboot;
	int r = 0;

	if (strv_contains(t->boot_methods, "qemu") && !t->has_qemu)
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "device type '%s' has boot method 'qemu' but no 'qemu' group", t->name);
	else if (strv_contains(t->boot_methods, "qemu") && !t->qemu.binary)
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "device type '%s' has boot method 'qemu' but no 'binary' in its 'qemu' group",
			     t->name);
	if (strv_contains(t->boot_methods, "u-boot") && u->default_commands &&
	    !kv_get(&u->command_sets, u->default_commands))
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "device type '%s' has default_commands '%s' but no such command set",
			     t->name, u->default_commands);
	return r;
}

/* Apply the type's own group over what it inherited. */
static int parse_type(struct device_type *t, const config_setting_t *g, struct diag *diag)
{
	if (config_oom(cfg_check_keys(g, type_keys, diag)) ||
	    config_oom(set_methods(&t->boot_methods, g, "boot_methods", boot_methods,
				   "boot method", diag)) ||
	    config_oom(set_methods(&t->deploy_methods, g, "deploy_methods", deploy_methods,
				   "deploy method", diag)) ||
	    config_oom(set_strv(&t->context_allowed, g, "context_allowed", false, diag)) ||
	    config_oom(cfg_get_duration(g, "power_on_delay", false, &t->power_on_delay, diag)) ||
	    config_oom(config_get_kv(g, "parameters", &t->parameters, diag)) ||
	    config_oom(parse_bootx(&t->bootx, g, diag)) ||
	    config_oom(parse_uboot(&t->uboot, g, diag)) ||
	    config_oom(parse_kernel(&t->kernel, g, diag)) ||
	    config_oom(parse_qemu(t, g, diag)))
		return -ENOMEM;
	return check_type(t, g, diag);
}

static int type_defaults(struct device_type *t)
{
	struct uboot_params *u = &t->uboot;

	u->interrupt_newline = true;
	u->needs_interrupt = true;
	t->power_on_delay = POWER_DEFAULT_CYCLE_DELAY;
	if (copy_str(&u->interrupt_prompt, CONFIG_DEFAULT_INTERRUPT_PROMPT) < 0 ||
	    copy_str(&u->interrupt_char, CONFIG_DEFAULT_INTERRUPT_CHAR) < 0 ||
	    copy_str(&u->bootloader_prompt, CONFIG_DEFAULT_BOOTLOADER_PROMPT) < 0 ||
	    copy_str(&u->final_message, CONFIG_DEFAULT_FINAL_MESSAGE) < 0 ||
	    copy_strv(&u->error_messages, default_error_messages) < 0 ||
	    copy_str(&t->kernel.start_message, CONFIG_DEFAULT_START_MESSAGE) < 0 ||
	    copy_str(&t->qemu.console, CONFIG_DEFAULT_QEMU_CONSOLE) < 0 ||
	    copy_strv(&t->qemu.allowed_images, default_allowed_images) < 0 ||
	    copy_strv(&t->boot_methods, default_boot_methods) < 0 ||
	    copy_strv(&t->deploy_methods, default_deploy_methods) < 0)
		return -ENOMEM;
	return 0;
}

static int uboot_copy(struct uboot_params *d, const struct uboot_params *s)
{
	d->interrupt_newline = s->interrupt_newline;
	d->needs_interrupt = s->needs_interrupt;
	d->char_delay = s->char_delay;
	if (copy_str(&d->interrupt_prompt, s->interrupt_prompt) < 0 ||
	    copy_str(&d->interrupt_char, s->interrupt_char) < 0 ||
	    copy_str(&d->bootloader_prompt, s->bootloader_prompt) < 0 ||
	    copy_str(&d->final_message, s->final_message) < 0 ||
	    strv_copy(s->error_messages, &d->error_messages) < 0 ||
	    kv_merge(&d->command_sets, &s->command_sets) < 0 ||
	    copy_str(&d->default_commands, s->default_commands) < 0)
		return -ENOMEM;
	return 0;
}

static int kernel_copy(struct kernel_params *d, const struct kernel_params *s)
{
	d->char_delay = s->char_delay;
	if (copy_str(&d->start_message, s->start_message) < 0 ||
	    copy_str(&d->login_prompt, s->login_prompt) < 0 ||
	    strv_copy(s->prompts, &d->prompts) < 0)
		return -ENOMEM;
	return 0;
}

static int qemu_copy(struct qemu_params *d, const struct qemu_params *s)
{
	d->append_allowed = s->append_allowed;
	if (copy_str(&d->binary, s->binary) < 0 || strv_copy(s->args, &d->args) < 0 ||
	    copy_str(&d->console, s->console) < 0 ||
	    copy_str(&d->append_default, s->append_default) < 0 ||
	    strv_copy(s->allowed_images, &d->allowed_images) < 0)
		return -ENOMEM;
	return 0;
}

/* Everything @s resolved to, except what names it (name, file, line, extends, fingerprint). */
static int type_copy(struct device_type *d, const struct device_type *s)
{
	d->has_qemu = s->has_qemu;
	d->power_on_delay = s->power_on_delay;
	if (uboot_copy(&d->uboot, &s->uboot) < 0 || kernel_copy(&d->kernel, &s->kernel) < 0 ||
	    qemu_copy(&d->qemu, &s->qemu) < 0 || strv_copy(s->boot_methods, &d->boot_methods) < 0 ||
	    strv_copy(s->deploy_methods, &d->deploy_methods) < 0 ||
	    strv_copy(s->context_allowed, &d->context_allowed) < 0 ||
	    kv_merge(&d->parameters, &s->parameters) < 0 || kv_merge(&d->bootx, &s->bootx) < 0)
		return -ENOMEM;
	return 0;
}

/* The type's own group, then its parent's fingerprint: the whole chain. */
static int type_fingerprint(struct device_type *t, const config_setting_t *g,
			    const struct device_type *parent)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_addstr(&sb, "type ") < 0 || config_dump(g, &sb) < 0 ||
	    (parent && strbuf_addf(&sb, "\n%s", parent->fingerprint) < 0)) {
		strbuf_release(&sb);
		return -ENOMEM;
	}
	t->fingerprint = strbuf_detach(&sb, NULL);
	return t->fingerprint ? 0 : -ENOMEM;
}

/* Build the resolved type of @e over @parent (NULL: the defaults). */
static int type_build(struct type_entry *e, const struct device_type *parent, struct diag *diag)
{
	struct device_type *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	e->type = t;
	e->state = TYPE_DONE;
	t->line = cfg_line(e->group);
	if (copy_str(&t->name, e->name) < 0 || copy_str(&t->file, cfg_file(e->group)) < 0 ||
	    copy_str(&t->extends, e->parent) < 0 ||
	    type_fingerprint(t, e->group, parent) < 0)
		return -ENOMEM;
	r = parent ? type_copy(t, parent) : type_defaults(t);
	if (r < 0)
		return r;
	return parse_type(t, e->group, diag);
}

static struct type_entry *find_entry(struct type_entry *entries, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(entries[i].name, name))
			return &entries[i];
	return NULL;
}

/* "device type 'a' extends itself through 'b', 'c'": @chain[k..n-1] is the loop. */
static int report_loop(struct type_entry **chain, size_t k, size_t n, struct diag *diag)
{
	const struct type_entry *e = chain[k];
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int r;

	for (i = k + 1; i < n; i++)
		strbuf_addf(&sb, "%s'%s'", i > k + 1 ? ", " : " through ", chain[i]->name);
	r = diag_add(diag, cfg_file(e->extends), cfg_line(e->extends),
		     "device type '%s' extends itself%s", e->name, sb.len ? sb.buf : "");
	strbuf_release(&sb);
	return r;
}

/*
 * Resolve @e: follow `extends` up to a resolved type or a root, then build
 * the chain from the top down.  An unknown parent or a loop is reported and
 * the chain is built from the defaults there, so that its own keys are still
 * checked.  @chain has room for every entry.
 */
static int resolve(const struct lab_config *c, struct type_entry *entries, size_t n,
		   struct type_entry *e, struct type_entry **chain, struct diag *diag)
{
	struct type_entry *p;
	size_t len = 0, k;
	int r = 0;

	for (p = e; p && p->state == TYPE_NEW;) {
		struct type_entry *cur = p;

		cur->state = TYPE_VISITING;
		chain[len++] = cur;
		p = cur->parent ? find_entry(entries, n, cur->parent) : NULL;
		/* a parent maybe in a file that could not be read: that is reported */
		if (cur->parent && !p)
			r = c->unparsed_files ? -EINVAL :
				diag_add(diag, cfg_file(cur->extends), cfg_line(cur->extends),
					 "unknown device type '%s'", cur->parent);
		if (p && p->state == TYPE_VISITING) {
			for (k = 0; chain[k] != p; k++)
				;
			r = report_loop(chain, k, len, diag);
			p = NULL;
		}
	}
	if (r == -ENOMEM)
		return r;
	while (len--) {
		r = type_build(chain[len], p ? p->type : NULL, diag);
		if (r == -ENOMEM)
			return r;
		p = chain[len];
	}
	return 0;
}

/* Name and `extends` of a type group; duplicates are reported and dropped. */
static int entry_init(struct type_entry *e, const config_setting_t *g,
		      struct type_entry *entries, size_t n, struct diag *diag)
{
	const struct type_entry *first;
	const char *name;
	int r = config_get_name(g, "device type", &name, diag);

	if (r < 0)
		return r;
	first = find_entry(entries, n, name);
	if (first)
		return diag_add(diag, cfg_file(g), cfg_line(g),
				"duplicate device type '%s' (first defined at %s:%d)", name,
				cfg_file(first->group), cfg_line(first->group));
	e->group = g;
	e->name = name;
	e->state = TYPE_NEW;
	r = cfg_get_string(g, "extends", false, &e->parent, diag);
	e->extends = config_setting_get_member(g, "extends");
	if (r < 0)
		e->parent = NULL;
	return 0;
}

int config_types_load(struct lab_config *c, const struct config_groups *groups,
		      struct diag *diag)
{
	struct type_entry *entries = calloc(groups->n + 1, sizeof(*entries));
	struct type_entry **chain = calloc(groups->n + 1, sizeof(*chain));
	size_t i, n = 0;
	int r = -ENOMEM;

	c->types = calloc(groups->n + 1, sizeof(*c->types));
	if (!entries || !chain || !c->types)
		goto out;
	for (i = 0; i < groups->n; i++)
		if (entry_init(&entries[n], groups->v[i], entries, n, diag) == 0)
			n++;
	r = 0;
	for (i = 0; i < n && r != -ENOMEM; i++)
		if (entries[i].state == TYPE_NEW)
			r = resolve(c, entries, n, &entries[i], chain, diag);
	/* the lab_config owns every type built, even after a failure */
	for (i = 0; i < n; i++)
		if (entries[i].type)
			c->types[c->n_types++] = entries[i].type;
out:
	free(chain);
	free(entries);
	return r == -ENOMEM ? r : 0;
}

static void uboot_release(struct uboot_params *u)
{
	free(u->interrupt_prompt);
	free(u->interrupt_char);
	free(u->bootloader_prompt);
	free(u->final_message);
	strv_free(u->error_messages);
	kv_release(&u->command_sets);
	free(u->default_commands);
}

static void qemu_release(struct qemu_params *q)
{
	free(q->binary);
	strv_free(q->args);
	free(q->console);
	free(q->append_default);
	strv_free(q->allowed_images);
}

struct device_type *config_type_free(struct device_type *t)
{
	if (!t)
		return NULL;
	uboot_release(&t->uboot);
	free(t->kernel.start_message);
	free(t->kernel.login_prompt);
	strv_free(t->kernel.prompts);
	qemu_release(&t->qemu);
	free(t->name);
	free(t->file);
	free(t->extends);
	strv_free(t->boot_methods);
	strv_free(t->deploy_methods);
	strv_free(t->context_allowed);
	kv_release(&t->parameters);
	kv_release(&t->bootx);
	free(t->fingerprint);
	free(t);
	return NULL;
}
