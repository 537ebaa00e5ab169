/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cfg.h -- typed reads of libconfig settings with "FILE:LINE: cause" errors
 *
 * Used by config.c for labd.conf and board definitions, and by drivers to
 * parse their own group.  Each getter reports into @diag and returns 0,
 * -ENOENT (absent and not required; *ret untouched) or -EINVAL (reported).
 * Strings returned are borrowed from the setting: copy them to keep them
 * beyond the life of the parsed file.
 */
#ifndef LABD_CFG_H
#define LABD_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

struct diag;

int cfg_get_string(const config_setting_t *group, const char *key, bool required,
		   const char **ret, struct diag *diag);
int cfg_get_int(const config_setting_t *group, const char *key, bool required,
		long long min, long long max, long long *ret, struct diag *diag);
int cfg_get_bool(const config_setting_t *group, const char *key, bool required, bool *ret,
		 struct diag *diag);
/** cfg_get_duration() - seconds, as an int or a float, into usec. */
int cfg_get_duration(const config_setting_t *group, const char *key, bool required,
		     uint64_t *ret, struct diag *diag);
/**
 * cfg_get_size() - a number of bytes: an integer above 0, or a string with a
 * binary unit, "512M", "200G", "1T" (K, M, G, T); absent: *@ret untouched.
 */
int cfg_get_size(const config_setting_t *group, const char *key, uint64_t *ret,
		 struct diag *diag);
/** cfg_get_strv() - a string, or a list/array of strings, as a new strv (caller frees). */
int cfg_get_strv(const config_setting_t *group, const char *key, bool required, char ***ret,
		 struct diag *diag);
/** cfg_check_keys() - report each member of @group whose name is not in @known (NULL-terminated). */
int cfg_check_keys(const config_setting_t *group, const char *const *known, struct diag *diag);
/** cfg_file() / cfg_line() - where a setting was defined ("<unknown>" / 0). */
const char *cfg_file(const config_setting_t *s);
int cfg_line(const config_setting_t *s);
/** cfg_type_name() - "string", "integer", "group", ... for messages. */
const char *cfg_type_name(const config_setting_t *s);

#endif
