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

/** config_types_load() - check, resolve (extends) and store the type groups in @c->types. */
int config_types_load(struct lab_config *c, const struct config_groups *groups,
		      struct diag *diag);

/** config_type_free() - free a resolved type; accepts NULL; returns NULL. */
struct device_type *config_type_free(struct device_type *t);

/* config_device.c */

/** config_devices_load() - check the device groups against @c->types and store them. */
int config_devices_load(struct lab_config *c, const struct config_groups *groups,
			struct diag *diag);

/** config_device_free() - accepts NULL; returns NULL. */
struct device *config_device_free(struct device *d);

#endif
