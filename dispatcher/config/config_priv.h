/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config_priv.h -- what config.c, config_type.c and config_device.c share
 *
 * Not for other modules: they use config.h.  config.c reads labd.conf and
 * the board files and hands the collected `device_type` and `device` groups
 * to config_types_load() and config_devices_load(), in that order.
 *
 * Errors: problems in the files go to @diag and loading goes on, so that one
 * run reports them all; config_load() fails when @diag grew.  Functions return
 * 0, -ENOENT (an optional key is absent), -EINVAL (reported) or -ENOMEM, and
 * only -ENOMEM stops loading: callers chain steps with config_oom().
 */
#ifndef LABD_CONFIG_PRIV_H
#define LABD_CONFIG_PRIV_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <libconfig.h>

#include "config/config.h"

struct diag;
struct kv;
struct strbuf;

/** A growable array of borrowed settings, in the order they were found. */
struct config_groups {
	const config_setting_t **v;
	size_t n;
	size_t alloc;
};

/** config_oom() - whether @r stops loading (-ENOMEM); other errors are in the diag. */
static inline bool config_oom(int r)
{
	return r == -ENOMEM;
}

/* config.c */

/** config_name_ok() - whether @name may name a device, a type or a lab (letters, digits, ._-). */
bool config_name_ok(const char *name);

/** config_get_name() - the required, well-formed `name` of @group, borrowed. */
int config_get_name(const config_setting_t *group, const char *what, const char **ret,
		    struct diag *diag);

/** config_get_group() - member @key of @group, which must be a group; -ENOENT when absent. */
int config_get_group(const config_setting_t *group, const char *key,
		     const config_setting_t **ret, struct diag *diag);

/**
 * config_get_kv() - merge the group @key (members: strings or integers) into @m;
 * integers written in hex stay hex ("0x40400000").  -ENOENT when absent.
 */
int config_get_kv(const config_setting_t *group, const char *key, struct kv *m,
		  struct diag *diag);

/** config_dump() - append a canonical text of @s (group members sorted by name) to @sb. */
int config_dump(const config_setting_t *s, struct strbuf *sb);

/* config_error.c */

/**
 * config_report_read_error() - report why libconfig could not read @path
 * (@cf's error) as "FILE:LINE: cause", FILE absolute (included files are
 * named by libconfig relative to @include_dir), the cause told in full: the
 * include that cannot be opened and why, what breaks the syntax.
 * Returns -EINVAL (reported) or -ENOMEM.
 */
int config_report_read_error(const config_t *cf, const char *path, const char *include_dir,
			     struct diag *diag);

/* config_type.c */

/**
 * config_set_str() - the optional string @key of @g replaces *@dst;
 * @regex: it must compile (reported otherwise).  -ENOENT when absent.
 */
int config_set_str(char **dst, const config_setting_t *g, const char *key, bool regex,
		   struct diag *diag);

/**
 * config_set_strv() - the optional string list @key of @g replaces *@dst
 * (lists do not merge); a present but empty list becomes an empty strv, not
 * NULL.  -ENOENT when absent.
 */
int config_set_strv(char ***dst, const config_setting_t *g, const char *key, bool regex,
		    struct diag *diag);

/** config_types_load() - check, resolve (extends) and store the type groups in
 * @c->types; warnings go to @c->warnings. */
int config_types_load(struct lab_config *c, const struct config_groups *groups,
		      struct diag *diag);

/** config_type_free() - free a resolved type; accepts NULL; returns NULL. */
struct device_type *config_type_free(struct device_type *t);

/* config_lint.c: warnings about valid files that probably mean something else */

struct config_lint;

/** config_lint_new() - a linter adding its warnings to @warnings (borrowed). */
int config_lint_new(struct diag *warnings, struct config_lint **ret);

/** config_lint_free() - accepts NULL; returns NULL. */
struct config_lint *config_lint_free(struct config_lint *l);

/**
 * config_lint_joined() - warn when the string setting @e is two adjacent
 * literals the parser joined ("dhcp" "setenv ..."); @what names it in the
 * warning ("u-boot command set 'ramdisk'").  @l may be NULL (no linting).
 * Returns 0 or -ENOMEM.
 */
int config_lint_joined(struct config_lint *l, const config_setting_t *e, const char *what);

/* config_bootloader.c: the u-boot, barebox, grub ... groups of a type */

/** config_bootloaders_init() - every group unset (flags -1), for a type without parent. */
void config_bootloaders_init(struct device_type *t);

/** config_bootloaders_parse() - apply the groups of type group @g over what @t
 * inherited; command lists are linted with @lint (may be NULL). */
int config_bootloaders_parse(struct device_type *t, const config_setting_t *g,
			     struct config_lint *lint, struct diag *diag);

/** config_bootloaders_check() - checks on the resolved type (default command sets exist). */
int config_bootloaders_check(const struct device_type *t, const config_setting_t *g,
			     struct diag *diag);

/** config_bootloaders_copy() - @s's groups into @d (a child type inherits them). */
int config_bootloaders_copy(struct device_type *d, const struct device_type *s);

/** config_bootloaders_release() - free what the groups of @t own. */
void config_bootloaders_release(struct device_type *t);

/* config_device.c */

/** config_devices_load() - check the device groups against @c->types and store them. */
int config_devices_load(struct lab_config *c, const struct config_groups *groups,
			struct diag *diag);

/** config_device_free() - accepts NULL; returns NULL. */
struct device *config_device_free(struct device *d);

#endif
