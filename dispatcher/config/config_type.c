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
	"parameters", "bootx", "u-boot", "barebox", "grub", "grub-efi", "ipxe", "depthcharge",
	"uefi-menu", "kernel", "qemu", NULL
};

static const char *const kernel_keys[] = {
	"start_message", "login_prompt", "prompts", "char_delay", NULL
};

static const char *const qemu_keys[] = {
	"binary", "args", "console", "append", "allowed_images", "append_allowed", "max_memory",
	"max_cpus", "container_images", "arch", NULL
};

static const char *const bootx_commands[] = { "booti", "bootz", "bootm", NULL };
static const char *const bootx_keys[] = { "kernel", "ramdisk", "dtb", "tee", "dtbo", NULL };
static const char *const boot_methods[] = {
	"minimal", "u-boot", "qemu", "fastboot", "barebox", "grub", "grub-efi", "ipxe",
	"depthcharge", "uefi-menu", NULL
};
static const char *const deploy_methods[] = { "tftp", "tmpfs", "none", "sdmux", "fastboot", "nfs",
					       NULL };
static const char *const qemu_consoles[] = { "socket", "pty", NULL };

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

int config_set_str(char **dst, const config_setting_t *g, const char *key, bool regex,
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

int config_set_strv(char ***dst, const config_setting_t *g, const char *key, bool regex,
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
	if (!v && !(v = calloc(1, sizeof(*v))))	/* set, but empty: not the default */
		return -ENOMEM;
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
	int r = config_set_strv(dst, g, key, false, diag);

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
	int r = config_set_str(dst, g, key, false, diag);

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

static int parse_kernel(struct kernel_params *k, const config_setting_t *g, struct diag *diag)
{
	const config_setting_t *kg;
	int r = config_get_group(g, "kernel", &kg, diag);

	if (r < 0)
		return r;
	if (config_oom(cfg_check_keys(kg, kernel_keys, diag)) ||
	    config_oom(config_set_str(&k->start_message, kg, "start_message", true, diag)) ||
	    config_oom(config_set_str(&k->login_prompt, kg, "login_prompt", true, diag)) ||
	    config_oom(config_set_strv(&k->prompts, kg, "prompts", true, diag)) ||
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
	    config_oom(config_set_str(&q->binary, qg, "binary", false, diag)) ||
	    config_oom(config_set_strv(&q->args, qg, "args", false, diag)) ||
	    config_oom(set_choice(&q->console, qg, "console", qemu_consoles, diag)) ||
	    config_oom(config_set_str(&q->append_default, qg, "append", false, diag)) ||
	    config_oom(config_set_strv(&q->allowed_images, qg, "allowed_images", false, diag)) ||
	    config_oom(cfg_get_bool(qg, "append_allowed", false, &q->append_allowed, diag)) ||
	    config_oom(cfg_get_int(qg, "max_memory", false, 0, 1 << 30, &q->max_memory, diag)) ||
	    config_oom(cfg_get_int(qg, "max_cpus", false, 0, 1024, &q->max_cpus, diag)) ||
	    config_oom(config_set_strv(&q->container_images, qg, "container_images", false, diag)) ||
	    config_oom(config_set_strv(&q->arch, qg, "arch", false, diag)))
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
	int r = 0;

	if (strv_contains(t->boot_methods, "qemu") && !t->has_qemu)
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "device type '%s' has boot method 'qemu' but no 'qemu' group", t->name);
	else if (strv_contains(t->boot_methods, "qemu") && !t->qemu.binary)
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "device type '%s' has boot method 'qemu' but no 'binary' in its 'qemu' group",
			     t->name);
	if (config_bootloaders_check(t, g, diag) < 0)
		r = -EINVAL;
	return r;
}

/* Apply the type's own group over what it inherited. */
static int parse_type(struct device_type *t, const config_setting_t *g, struct config_lint *lint,
		      struct diag *diag)
{
	if (config_oom(cfg_check_keys(g, type_keys, diag)) ||
	    config_oom(set_methods(&t->boot_methods, g, "boot_methods", boot_methods,
				   "boot method", diag)) ||
	    config_oom(set_methods(&t->deploy_methods, g, "deploy_methods", deploy_methods,
				   "deploy method", diag)) ||
	    config_oom(config_set_strv(&t->context_allowed, g, "context_allowed", false, diag)) ||
	    config_oom(cfg_get_duration(g, "power_on_delay", false, &t->power_on_delay, diag)) ||
	    config_oom(config_get_kv(g, "parameters", &t->parameters, diag)) ||
	    config_oom(parse_bootx(&t->bootx, g, diag)) ||
	    config_oom(config_bootloaders_parse(t, g, lint, diag)) ||
	    config_oom(parse_kernel(&t->kernel, g, diag)) ||
	    config_oom(parse_qemu(t, g, diag)))
		return -ENOMEM;
	return check_type(t, g, diag);
}

static int type_defaults(struct device_type *t)
{
	config_bootloaders_init(t);
	t->power_on_delay = POWER_DEFAULT_CYCLE_DELAY;
	if (copy_str(&t->kernel.start_message, CONFIG_DEFAULT_START_MESSAGE) < 0 ||
	    copy_str(&t->qemu.console, CONFIG_DEFAULT_QEMU_CONSOLE) < 0 ||
	    copy_strv(&t->qemu.allowed_images, default_allowed_images) < 0 ||
	    copy_strv(&t->boot_methods, default_boot_methods) < 0 ||
	    copy_strv(&t->deploy_methods, default_deploy_methods) < 0)
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
	d->max_memory = s->max_memory;
	d->max_cpus = s->max_cpus;
	if (strv_copy(s->container_images, &d->container_images) < 0 ||
	    strv_copy(s->arch, &d->arch) < 0)
		return -ENOMEM;
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
	if (config_bootloaders_copy(d, s) < 0 || kernel_copy(&d->kernel, &s->kernel) < 0 ||
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
static int type_build(struct type_entry *e, const struct device_type *parent,
		      struct config_lint *lint, struct diag *diag)
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
	return parse_type(t, e->group, lint, diag);
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
		   struct type_entry *e, struct type_entry **chain, struct config_lint *lint,
		   struct diag *diag)
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
		r = type_build(chain[len], p ? p->type : NULL, lint, diag);
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
	struct config_lint *lint = NULL;
	size_t i, n = 0;
	int r = -ENOMEM;

	c->types = calloc(groups->n + 1, sizeof(*c->types));
	if (!entries || !chain || !c->types || config_lint_new(&c->warnings, &lint) < 0)
		goto out;
	for (i = 0; i < groups->n; i++)
		if (entry_init(&entries[n], groups->v[i], entries, n, diag) == 0)
			n++;
	r = 0;
	for (i = 0; i < n && r != -ENOMEM; i++)
		if (entries[i].state == TYPE_NEW)
			r = resolve(c, entries, n, &entries[i], chain, lint, diag);
	/* the lab_config owns every type built, even after a failure */
	for (i = 0; i < n; i++)
		if (entries[i].type)
			c->types[c->n_types++] = entries[i].type;
out:
	config_lint_free(lint);
	free(chain);
	free(entries);
	return r == -ENOMEM ? r : 0;
}

static void qemu_release(struct qemu_params *q)
{
	free(q->binary);
	strv_free(q->args);
	free(q->console);
	free(q->append_default);
	strv_free(q->allowed_images);
	strv_free(q->container_images);
	strv_free(q->arch);
}

struct device_type *config_type_free(struct device_type *t)
{
	if (!t)
		return NULL;
	config_bootloaders_release(t);
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
