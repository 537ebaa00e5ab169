// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config_bootloader.c -- the bootloader groups of a device type (u-boot,
 * barebox, grub, grub-efi, ipxe, depthcharge, uefi-menu)
 *
 * Every group has the same keys: one engine drives every bootloader
 * (run/actions/action_boot_bootloader.c), configured by the group over the
 * defaults of the method's dialect.  Only what a type sets is stored here;
 * inheritance copies a parent's groups, then the type's own keys override
 * (command sets merge by name, lists replace).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_priv.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/strv.h"

static const char *const bootloader_names[BOOTLOADER_COUNT] = CONFIG_BOOTLOADER_NAMES;

static const char *const group_keys[] = {
	"interrupt_prompt", "interrupt_char", "interrupt_newline", "needs_interrupt",
	"interrupt_delay",
	"bootloader_prompt", "char_delay", "final_message", "error_messages",
	"job_error_messages", "default_commands", "commands", "menu_item", "menu_down",
	"menu_select", NULL
};

const char *config_bootloader_name(enum bootloader b)
{
	return (unsigned int)b < BOOTLOADER_COUNT ? bootloader_names[b] : NULL;
}

int config_bootloader_find(const char *name)
{
	int i;

	for (i = 0; i < BOOTLOADER_COUNT; i++)
		if (!strcmp(bootloader_names[i], name))
			return i;
	return -1;
}

/* An optional boolean into a tri-state flag. */
static int set_flag(int *dst, const config_setting_t *g, const char *key, struct diag *diag)
{
	bool v;
	int r = cfg_get_bool(g, key, false, &v, diag);

	if (r == 0)
		*dst = v;
	return r;
}

/* Warn about each command of set @e that libconfig made of two joined strings. */
static int lint_set(struct config_lint *lint, const config_setting_t *e, int bl)
{
	char what[128];
	int i, n = config_setting_is_aggregate(e) ? config_setting_length(e) : 0;

	snprintf(what, sizeof(what), "%s command set '%s'", bootloader_names[bl],
		 config_setting_name(e));
	for (i = 0; i < n; i++) {
		const config_setting_t *c = config_setting_get_elem(e, (unsigned int)i);

		if (config_setting_type(c) == CONFIG_TYPE_STRING &&
		    config_lint_joined(lint, c, what) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* commands: each set is a command list, stored joined with '\n'; sets merge by name. */
static int parse_commands(struct kv *sets, const config_setting_t *bg, int bl,
			  struct config_lint *lint, struct diag *diag)
{
	const config_setting_t *g;
	int i, n, r = config_get_group(bg, "commands", &g, diag);

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
		if (lint_set(lint, e, bl) < 0) {
			strv_free(cmds);
			return -ENOMEM;
		}
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

static int parse_group(struct bootloader_params *p, const config_setting_t *bg, int bl,
		       struct config_lint *lint, struct diag *diag)
{
	p->configured = true;
	if (config_oom(cfg_check_keys(bg, group_keys, diag)) ||
	    config_oom(config_set_str(&p->interrupt_prompt, bg, "interrupt_prompt", true, diag)) ||
	    config_oom(config_set_str(&p->interrupt_char, bg, "interrupt_char", false, diag)) ||
	    config_oom(set_flag(&p->interrupt_newline, bg, "interrupt_newline", diag)) ||
	    config_oom(set_flag(&p->needs_interrupt, bg, "needs_interrupt", diag)) ||
	    config_oom(cfg_get_duration(bg, "interrupt_delay", false, &p->interrupt_delay,
					diag)) ||
	    config_oom(config_set_str(&p->bootloader_prompt, bg, "bootloader_prompt", true,
				      diag)) ||
	    config_oom(cfg_get_duration(bg, "char_delay", false, &p->char_delay, diag)) ||
	    config_oom(config_set_str(&p->final_message, bg, "final_message", true, diag)) ||
	    config_oom(config_set_strv(&p->error_messages, bg, "error_messages", true, diag)) ||
	    config_oom(config_set_strv(&p->job_error_messages, bg, "job_error_messages", true,
				       diag)) ||
	    config_oom(config_set_str(&p->default_commands, bg, "default_commands", false,
				      diag)) ||
	    config_oom(parse_commands(&p->command_sets, bg, bl, lint, diag)) ||
	    config_oom(config_set_str(&p->menu_item, bg, "menu_item", true, diag)) ||
	    config_oom(config_set_str(&p->menu_down, bg, "menu_down", false, diag)) ||
	    config_oom(config_set_str(&p->menu_select, bg, "menu_select", false, diag)))
		return -ENOMEM;
	return 0;
}

int config_bootloaders_parse(struct device_type *t, const config_setting_t *g,
			     struct config_lint *lint, struct diag *diag)
{
	const config_setting_t *bg;
	int i, r;

	for (i = 0; i < BOOTLOADER_COUNT; i++) {
		r = config_get_group(g, bootloader_names[i], &bg, diag);
		if (r == -ENOMEM || (r == 0 && parse_group(&t->bootloaders[i], bg, i, lint, diag) < 0))
			return -ENOMEM;
	}
	return 0;
}

/* What a type using a bootloader method needs: its default command set must exist. */
int config_bootloaders_check(const struct device_type *t, const config_setting_t *g,
			     struct diag *diag)
{
	const struct bootloader_params *p;
	int i, r = 0;

	for (i = 0; i < BOOTLOADER_COUNT; i++) {
		p = &t->bootloaders[i];
		if (!strv_contains(t->boot_methods, bootloader_names[i]) || !p->default_commands ||
		    kv_get(&p->command_sets, p->default_commands))
			continue;
		r = diag_add(diag, cfg_file(g), cfg_line(g),
			     "device type '%s' has %s default_commands '%s' but no such command set",
			     t->name, bootloader_names[i], p->default_commands);
	}
	return r;
}

static int dup_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

static int copy_one(struct bootloader_params *d, const struct bootloader_params *s)
{
	d->interrupt_newline = s->interrupt_newline;
	d->needs_interrupt = s->needs_interrupt;
	d->char_delay = s->char_delay;
	d->interrupt_delay = s->interrupt_delay;
	d->configured = s->configured;
	if (dup_str(&d->interrupt_prompt, s->interrupt_prompt) < 0 ||
	    dup_str(&d->interrupt_char, s->interrupt_char) < 0 ||
	    dup_str(&d->bootloader_prompt, s->bootloader_prompt) < 0 ||
	    dup_str(&d->final_message, s->final_message) < 0 ||
	    (s->error_messages && strv_copy(s->error_messages, &d->error_messages) < 0) ||
	    (s->job_error_messages &&
	     strv_copy(s->job_error_messages, &d->job_error_messages) < 0) ||
	    kv_merge(&d->command_sets, &s->command_sets) < 0 ||
	    dup_str(&d->default_commands, s->default_commands) < 0 ||
	    dup_str(&d->menu_item, s->menu_item) < 0 || dup_str(&d->menu_down, s->menu_down) < 0 ||
	    dup_str(&d->menu_select, s->menu_select) < 0)
		return -ENOMEM;
	return 0;
}

void config_bootloaders_init(struct device_type *t)
{
	int i;

	for (i = 0; i < BOOTLOADER_COUNT; i++) {
		t->bootloaders[i].interrupt_newline = -1;
		t->bootloaders[i].needs_interrupt = -1;
	}
}

int config_bootloaders_copy(struct device_type *d, const struct device_type *s)
{
	int i;

	for (i = 0; i < BOOTLOADER_COUNT; i++)
		if (copy_one(&d->bootloaders[i], &s->bootloaders[i]) < 0)
			return -ENOMEM;
	return 0;
}

void config_bootloaders_release(struct device_type *t)
{
	struct bootloader_params *p;
	int i;

	for (i = 0; i < BOOTLOADER_COUNT; i++) {
		p = &t->bootloaders[i];
		free(p->interrupt_prompt);
		free(p->interrupt_char);
		free(p->bootloader_prompt);
		free(p->final_message);
		strv_free(p->error_messages);
		strv_free(p->job_error_messages);
		kv_release(&p->command_sets);
		free(p->default_commands);
		free(p->menu_item);
		free(p->menu_down);
		free(p->menu_select);
	}
}
