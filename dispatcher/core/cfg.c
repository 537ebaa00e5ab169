// SPDX-License-Identifier: GPL-2.0-or-later
/* cfg.c -- typed reads of libconfig settings with file:line diagnostics */
#include "core/cfg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/strv.h"

const char *cfg_file(const config_setting_t *s)
{
	const char *f = s ? config_setting_source_file(s) : NULL;

	return f ? f : "<unknown>";
}

int cfg_line(const config_setting_t *s)
{
	return s ? (int)config_setting_source_line(s) : 0;
}

const char *cfg_type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP:
		return "group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "integer";
	case CONFIG_TYPE_FLOAT:
		return "float";
	case CONFIG_TYPE_STRING:
		return "string";
	case CONFIG_TYPE_BOOL:
		return "boolean";
	case CONFIG_TYPE_ARRAY:
		return "array";
	case CONFIG_TYPE_LIST:
		return "list";
	default:
		return "nothing";
	}
}

/* Look up @key in @group; report a missing required key at the group's line. */
static int lookup(const config_setting_t *group, const char *key, bool required,
		  config_setting_t **ret, struct diag *diag)
{
	config_setting_t *s = group ? config_setting_get_member(group, key) : NULL;

	if (!s) {
		if (required)
			return diag_add(diag, cfg_file(group), cfg_line(group),
					"missing key '%s'", key);
		return -ENOENT;
	}
	*ret = s;
	return 0;
}

static int bad_type(config_setting_t *s, const char *key, const char *want, struct diag *diag)
{
	return diag_add(diag, cfg_file(s), cfg_line(s), "'%s' must be %s, not %s", key, want,
			cfg_type_name(s));
}

int cfg_get_string(const config_setting_t *group, const char *key, bool required,
		   const char **ret, struct diag *diag)
{
	config_setting_t *s = NULL;
	int r = lookup(group, key, required, &s, diag);

	if (r < 0)
		return r;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return bad_type(s, key, "a string", diag);
	*ret = config_setting_get_string(s);
	return 0;
}

int cfg_get_int(const config_setting_t *group, const char *key, bool required,
		long long min, long long max, long long *ret, struct diag *diag)
{
	config_setting_t *s = NULL;
	long long v;
	int r = lookup(group, key, required, &s, diag);

	if (r < 0)
		return r;
	if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
		return bad_type(s, key, "an integer", diag);
	v = config_setting_get_int64(s);
	if (v < min || v > max)
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"'%s' must be between %lld and %lld, not %lld", key, min, max, v);
	*ret = v;
	return 0;
}

int cfg_get_size(const config_setting_t *group, const char *key, uint64_t *ret,
		 struct diag *diag)
{
	const config_setting_t *s = group ? config_setting_get_member(group, key) : NULL;
	const char *text, *units = "KMGT";
	unsigned long long v;
	char *end;

	if (!s)
		return -ENOENT;
	if (config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64) {
		if (config_setting_get_int64(s) < 1)
			goto bad;
		*ret = (uint64_t)config_setting_get_int64(s);
		return 0;
	}
	text = config_setting_get_string(s);
	if (!text)
		goto bad;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || !v)
		goto bad;
	if (*end && (!strchr(units, *end) || end[1]))
		goto bad;
	for (const char *u = units; *end && u <= strchr(units, *end); u++)
		v *= 1024;
	*ret = v;
	return 0;
bad:
	return diag_add(diag, cfg_file(s), cfg_line(s),
			"'%s' must be a number of bytes, or one with K, M, G or T (\"200G\")", key);
}

int cfg_get_bool(const config_setting_t *group, const char *key, bool required, bool *ret,
		 struct diag *diag)
{
	config_setting_t *s = NULL;
	int r = lookup(group, key, required, &s, diag);

	if (r < 0)
		return r;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return bad_type(s, key, "true or false", diag);
	*ret = config_setting_get_bool(s);
	return 0;
}

int cfg_get_duration(const config_setting_t *group, const char *key, bool required,
		     uint64_t *ret, struct diag *diag)
{
	config_setting_t *s = NULL;
	double v;
	int r = lookup(group, key, required, &s, diag);

	if (r < 0)
		return r;
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		v = (double)config_setting_get_int64(s);
		break;
	case CONFIG_TYPE_FLOAT:
		v = config_setting_get_float(s);
		break;
	default:
		return bad_type(s, key, "a number of seconds", diag);
	}
	if (!isfinite(v) || v < 0 || v > 7 * 24 * 3600.0)
		return diag_add(diag, cfg_file(s), cfg_line(s),
				"'%s' must be between 0 and 604800 seconds", key);
	*ret = (uint64_t)(v * 1e6 + 0.5);
	return 0;
}

int cfg_get_strv(const config_setting_t *group, const char *key, bool required, char ***ret,
		 struct diag *diag)
{
	config_setting_t *s = NULL;
	char **v = NULL;
	int r = lookup(group, key, required, &s, diag);
	int i, n;

	if (r < 0)
		return r;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		if (strv_push(&v, config_setting_get_string(s)) < 0)
			return -ENOMEM;
		*ret = v;
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return bad_type(s, key, "a string or a list of strings", diag);
	n = config_setting_length(s);
	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			strv_free(v);
			return diag_add(diag, cfg_file(e), cfg_line(e),
					"'%s' must hold strings only, not %s", key,
					cfg_type_name(e));
		}
		if (strv_push(&v, config_setting_get_string(e)) < 0) {
			strv_free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

int cfg_check_keys(const config_setting_t *group, const char *const *known, struct diag *diag)
{
	int i, n = config_setting_length(group), r = 0;

	for (i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(e);
		const char *const *k;

		for (k = known; *k; k++)
			if (name && !strcmp(*k, name))
				break;
		if (!*k)
			r = diag_add(diag, cfg_file(e), cfg_line(e), "unknown key '%s'",
				     name ? name : "(unnamed)");
	}
	return r;
}
