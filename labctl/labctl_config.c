// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * labctl_config.c -- ~/.config/labctl/config: labd's URL and token, per lab
 *
 * A libconfig file, like labd.conf:
 *
 *	url = "http://lab1.example.org:8640";	# used when no lab is chosen
 *	token = "...";
 *	lab = "lab2";				# the lab chosen by default (optional)
 *	labs = {
 *		lab2 = { url = "http://10.1.2.3:8640"; token = "..."; };
 *		local = { url = "unix:/run/labd/labd.sock"; };
 *	};
 *
 * What wins, for the URL and the token each: --url/--token, then the lab
 * chosen with --lab (or $LABCTL_LAB), then $LABD_URL/$LABD_TOKEN, then the
 * file's default lab (`lab`) or its top-level url/token, then the built-in
 * default.  The file is $LABCTL_CONFIG, else $XDG_CONFIG_HOME/labctl/config,
 * else ~/.config/labctl/config; a missing file is no error (unless named by
 * $LABCTL_CONFIG or --config).  It holds tokens: labctl warns when others
 * may read it.  `@include "FILE"` is relative to the file's directory, and
 * every file an include reaches is checked before libconfig reads any, as
 * labd does (core/cfgtext.h): libconfig 1.5 would exit labctl on some.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include "core/cfgtext.h"
#include "core/diag.h"
#include "labctl.h"

static const char *const top_keys[] = { "url", "token", "lab", "labs", NULL };
static const char *const lab_keys[] = { "url", "token", NULL };

/* The config file's path (caller frees), or NULL without HOME. */
static char *default_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *path = NULL;

	if (xdg && *xdg)
		return asprintf(&path, "%s/labctl/config", xdg) < 0 ? NULL : path;
	if (home && *home)
		return asprintf(&path, "%s/.config/labctl/config", home) < 0 ? NULL : path;
	return NULL;
}

static int config_error(const char *path, int line, const char *fmt, const char *what)
{
	fprintf(stderr, "labctl: %s:%d: ", path, line);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	return LABCTL_ERROR;
}

/* Every member of @g has a name in @known, and is a string unless it is "labs". */
static int check_group(const char *path, const config_setting_t *g, const char *const *known)
{
	int i, n = config_setting_length(g);

	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(g, (unsigned int)i);
		const char *name = config_setting_name(e);
		size_t k;

		for (k = 0; known[k] && strcmp(known[k], name); k++)
			;
		if (!known[k])
			return config_error(path, config_setting_source_line(e), "unknown key '%s'",
					    name);
		if (strcmp(name, "labs") && config_setting_type(e) != CONFIG_TYPE_STRING)
			return config_error(path, config_setting_source_line(e),
					    "'%s' must be a string", name);
		if (!strcmp(name, "labs") && !config_setting_is_group(e))
			return config_error(path, config_setting_source_line(e),
					    "'%s' must be a group of labs", name);
	}
	return 0;
}

/* Copy the string @key of @g into *@ret unless already set. */
static int take(const config_setting_t *g, const char *key, char **ret)
{
	const char *v;

	if (*ret || !config_setting_lookup_string(g, key, &v))
		return 0;
	*ret = strdup(v);
	return *ret ? 0 : -ENOMEM;
}

static void warn_if_readable(const char *path)
{
	struct stat st;

	if (!stat(path, &st) && (st.st_mode & 077))
		fprintf(stderr, "labctl: warning: %s holds tokens but others may read it "
			"(chmod 600 %s)\n", path, path);
}

/* The chosen lab's group, or NULL (an error printed) when the file has no such lab. */
static const config_setting_t *find_lab(const char *path, config_t *cf, const char *lab)
{
	const config_setting_t *labs = config_lookup(cf, "labs");
	const config_setting_t *g = labs ? config_setting_get_member(labs, lab) : NULL;

	if (!g || !config_setting_is_group(g))
		fprintf(stderr, "labctl: %s: no lab '%s' in 'labs'\n", path, lab);
	return g && config_setting_is_group(g) ? g : NULL;
}

static int check_labs(const char *path, config_t *cf)
{
	const config_setting_t *labs = config_lookup(cf, "labs");
	int i, r = check_group(path, config_root_setting(cf), top_keys);

	for (i = 0; !r && labs && i < config_setting_length(labs); i++) {
		const config_setting_t *g = config_setting_get_elem(labs, (unsigned int)i);

		if (!config_setting_is_group(g))
			return config_error(path, config_setting_source_line(g),
					    "lab '%s' must be a group { url = ...; token = ...; }",
					    config_setting_name(g));
		r = check_group(path, g, lab_keys);
	}
	return r;
}

/* The directory of @path (caller frees), or NULL without memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

/* Print what cfg_check_text() found in @path's files; -EINVAL when it found anything. */
static int check_text(const char *path, const char *dir)
{
	struct diag diag = DIAG_INIT;
	size_t i;
	int err = dir ? cfg_check_text(path, dir, &diag) : -ENOMEM;

	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "labctl: %s\n", diag.msgs[i]);
	if (err < 0 && err != -EINVAL)
		fprintf(stderr, "labctl: cannot read %s: %s\n", path, strerror(-err));
	diag_release(&diag);
	return err;
}

/* Why libconfig could not read @path: an included file named relative to @dir. */
static void read_error(const char *path, const char *dir, const config_t *cf)
{
	const char *file = config_error_file(cf);

	if (!config_error_line(cf))
		fprintf(stderr, "labctl: cannot read %s: %s\n", path, strerror(errno));
	else if (file && strcmp(file, path))
		fprintf(stderr, "labctl: %s/%s:%d: %s\n", dir, file, config_error_line(cf),
			config_error_text(cf));
	else
		fprintf(stderr, "labctl: %s:%d: %s\n", path, config_error_line(cf),
			config_error_text(cf));
}

/*
 * Read @path into @cf as labd reads labd.conf: every file an @include reaches
 * checked first (libconfig 1.5 exits the process on some), the includes
 * relative to @path's directory.  0, or LABCTL_ERROR (said why).
 */
static int read_config(const char *path, config_t *cf)
{
	char *dir = path ? dir_of(path) : NULL;
	int r = LABCTL_ERROR;

	if (!path) {
		fprintf(stderr, "labctl: cannot read the config: %s\n", strerror(errno));
		goto out;
	}
	if (check_text(path, dir))
		goto out;
	config_set_include_dir(cf, dir);
	if (config_read_file(cf, path)) {
		r = 0;
		goto out;
	}
	read_error(path, dir, cf);
out:
	free(dir);
	return r;
}

/* Fill what --lab's group, $LABD_*, then the default lab or the top level give. */
static int resolve(const char *path, config_t *cf, const char *lab, struct lc_target *t)
{
	const config_setting_t *g;
	const char *def = NULL;
	int r = 0;

	if (lab) {
		g = find_lab(path, cf, lab);
		if (!g)
			return LABCTL_ERROR;
		r = take(g, "url", &t->url) ?: take(g, "token", &t->token);
	}
	if (!r && !t->url && getenv("LABD_URL") && *getenv("LABD_URL"))
		t->url = strdup(getenv("LABD_URL"));
	if (!r && !t->token && getenv("LABD_TOKEN") && *getenv("LABD_TOKEN"))
		t->token = strdup(getenv("LABD_TOKEN"));
	if (!r && !lab && config_lookup_string(cf, "lab", &def)) {
		g = find_lab(path, cf, def);
		if (!g)
			return LABCTL_ERROR;
		r = take(g, "url", &t->url) ?: take(g, "token", &t->token);
	}
	if (!r)
		r = take(config_root_setting(cf), "url", &t->url) ?:
			take(config_root_setting(cf), "token", &t->token);
	return r < 0 ? LABCTL_ERROR : 0;
}

int lc_target_resolve(const char *config, const char *lab, struct lc_target *t)
{
	const char *env = getenv("LABCTL_CONFIG");
	char *path = config ? strdup(config) : env && *env ? strdup(env) : default_path();
	bool named = config || (env && *env);
	config_t cf;
	int r = 0;

	if (!lab && getenv("LABCTL_LAB") && *getenv("LABCTL_LAB"))
		lab = getenv("LABCTL_LAB");
	config_init(&cf);
	if (path && access(path, F_OK) && !named && !lab) {
		r = resolve(path, &cf, NULL, t);	/* no file: the environment only */
	} else if (read_config(path, &cf)) {
		r = LABCTL_ERROR;
	} else {
		warn_if_readable(path);
		r = check_labs(path, &cf) ?: resolve(path, &cf, lab, t);
	}
	config_destroy(&cf);
	free(path);
	if (!r && !t->url)
		t->url = strdup(LABCTL_DEFAULT_URL);
	return r;
}

void lc_target_release(struct lc_target *t)
{
	free(t->url);
	free(t->token);
	t->url = t->token = NULL;
}
