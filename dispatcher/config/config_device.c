// SPDX-License-Identifier: GPL-2.0-or-later
/* config_device.c -- devices: parse, check their drivers, fingerprint their definition */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_priv.h"
#include "core/cfg.h"
#include "core/diag.h"
#include "core/kv.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/console.h"
#include "drivers/power.h"
#include "drivers/sdmux.h"
#include "drivers/usb/fastboot.h"

static const char *const device_keys[] = {
	"name", "type", "description", "tags", "console", "power", "parameters", "power_on_delay",
	"sdmux", "fastboot", "storage_info", NULL
};

/* The `console` or `power` group of @g: its driver name and settings. */
static int driver_parse(const config_setting_t *g, const char *key, bool required,
			struct driver_config *cfg, struct diag *diag)
{
	const config_setting_t *s;
	const char *driver;
	int r = config_get_group(g, key, &s, diag);

	if (r == -ENOENT && required)
		return diag_add(diag, cfg_file(g), cfg_line(g), "missing key '%s'", key);
	if (r < 0)
		return r;
	r = cfg_get_string(s, "driver", true, &driver, diag);
	if (r < 0)
		return r;
	cfg->driver = strdup(driver);
	cfg->file = strdup(cfg_file(s));
	cfg->settings = s;
	cfg->line = cfg_line(s);
	return cfg->driver && cfg->file ? 0 : -ENOMEM;
}

static int unknown_driver(const char *kind, const char *const *names,
			  const struct driver_config *cfg, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(cfg->settings, "driver");
	char *known = strv_join((char *const *)names, ", ");
	int r;

	if (!known)
		return -ENOMEM;
	r = diag_add(diag, cfg_file(s), cfg_line(s), "unknown %s driver '%s' (known: %s)", kind,
		     cfg->driver, known);
	free(known);
	return r;
}

/* Let the drivers parse their settings, without a loop: nothing is opened. */
static int check_drivers(const struct lab_config *c, const struct device *d, struct diag *diag)
{
	const struct driver_ctx ctx = {
		.config = c,
		.device_name = d->name ? d->name : "(unnamed)",
	};
	struct console *con = NULL;
	struct power *pow = NULL;
	int r = 0;

	if (d->console.driver && !console_find_driver(d->console.driver))
		r = unknown_driver("console", console_driver_names(), &d->console, diag);
	else if (d->console.driver && console_new(&d->console, &ctx, &con, diag) == 0)
		console_free(con);
	if (r == -ENOMEM || !d->has_power)
		return r;
	if (!power_find_driver(d->power.driver))
		return unknown_driver("power", power_driver_names(), &d->power, diag);
	if (power_new(&d->power, &ctx, &pow, diag) == 0)
		power_free(pow);
	return 0;
}

/* The SD-mux and fastboot groups, checked by their modules without a loop. */
static int check_usb_parts(const struct lab_config *c, const struct device *d, struct diag *diag)
{
	const struct driver_ctx ctx = { .config = c, .device_name = d->name };
	struct fastboot_config fb;
	struct sdmux *m = NULL;

	if (d->has_sdmux && sdmux_new(&d->sdmux, &ctx, &m, diag) == 0)
		sdmux_free(m);
	if (d->fastboot && fastboot_config_parse(d->fastboot, &fb, diag) == 0)
		fastboot_config_release(&fb);
	return 0;
}

static int device_fingerprint(struct device *d, const config_setting_t *g)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_addstr(&sb, "device ") < 0 || config_dump(g, &sb) < 0 ||
	    (d->type && strbuf_addf(&sb, "\n%s", d->type->fingerprint) < 0)) {
		strbuf_release(&sb);
		return -ENOMEM;
	}
	d->fingerprint = strbuf_detach(&sb, NULL);
	return d->fingerprint ? 0 : -ENOMEM;
}

static int device_type(const struct lab_config *c, struct device *d, const config_setting_t *g,
		       struct diag *diag)
{
	const config_setting_t *s;
	const char *name;
	int r = cfg_get_string(g, "type", true, &name, diag);

	if (r < 0)
		return r;
	d->type_name = strdup(name);
	if (!d->type_name)
		return -ENOMEM;
	d->type = config_find_type(c, name);
	if (d->type)
		return 0;
	if (c->unparsed_files)
		return -EINVAL;	/* maybe in the file that could not be read: reported */
	s = config_setting_get_member(g, "type");
	return diag_add(diag, cfg_file(s), cfg_line(s), "unknown device type '%s'", name);
}

/*
 * storage_info = { SATA = "/dev/disk/by-id/ata-..."; }: the board's disks by
 * kind, which lava-target-storage gives test definitions: absolute paths,
 * typed into a shell word, so without blanks or quotes.
 */
static int storage_info_parse(const config_setting_t *g, struct device *d, struct diag *diag)
{
	const config_setting_t *s = config_setting_get_member(g, "storage_info");
	const char *v;
	size_t i;
	int r = config_get_kv(g, "storage_info", &d->storage_info, diag);

	if (r == -ENOMEM)
		return r;
	for (i = 0; i < d->storage_info.n; i++) {
		v = d->storage_info.vals[i];
		if (v[0] == '/' && !v[strcspn(v, " \t\n'\"\\$`")])
			continue;
		r = diag_add(diag, cfg_file(s), cfg_line(s),
			     "storage_info: '%s' of '%s' must be an absolute path without blanks or quotes",
			     v, d->storage_info.keys[i]);
	}
	return r;
}

static int device_parse(const struct lab_config *c, struct device *d, const config_setting_t *g,
			struct diag *diag)
{
	const char *desc = NULL;
	int r;

	if (config_oom(cfg_check_keys(g, device_keys, diag)) ||
	    config_oom(device_type(c, d, g, diag)) ||
	    config_oom(cfg_get_string(g, "description", false, &desc, diag)) ||
	    config_oom(cfg_get_strv(g, "tags", false, &d->tags, diag)) ||
	    config_oom(config_get_kv(g, "parameters", &d->parameters, diag)) ||
	    config_oom(storage_info_parse(g, d, diag)))
		return -ENOMEM;
	d->description = desc ? strdup(desc) : NULL;
	if (desc && !d->description)
		return -ENOMEM;
	d->power_on_delay = d->type ? d->type->power_on_delay : POWER_DEFAULT_CYCLE_DELAY;
	r = driver_parse(g, "power", false, &d->power, diag);
	d->has_power = r == 0;
	if (config_oom(r))
		return -ENOMEM;
	r = driver_parse(g, "sdmux", false, &d->sdmux, diag);
	d->has_sdmux = r == 0;
	if (config_oom(r) || config_oom(config_get_group(g, "fastboot", &d->fastboot, diag)) ||
	    config_oom(check_usb_parts(c, d, diag)) ||
	    config_oom(cfg_get_duration(g, "power_on_delay", false, &d->power_on_delay, diag)) ||
	    config_oom(driver_parse(g, "console", true, &d->console, diag)) ||
	    config_oom(check_drivers(c, d, diag)))
		return -ENOMEM;
	return device_fingerprint(d, g);
}

/* Parse one device group into *@ret; nothing is stored without a name or for a duplicate. */
static int device_load(const struct lab_config *c, const config_setting_t *g, struct device **ret,
		       struct diag *diag)
{
	const struct device *first;
	struct device *d = calloc(1, sizeof(*d));
	const char *name = NULL;
	int r = -ENOMEM;

	if (!d)
		return -ENOMEM;
	d->line = cfg_line(g);
	d->file = strdup(cfg_file(g));
	if (!d->file)
		goto err_free_device;
	if (config_get_name(g, "device", &name, diag) == 0) {
		r = 0;
		first = config_find_device(c, name);
		if (first)
			r = diag_add(diag, d->file, d->line,
				     "duplicate device '%s' (first defined at %s:%d)", name,
				     first->file, first->line);
		else
			d->name = strdup(name);
		if (config_oom(r) || (!first && !d->name))
			goto err_free_device;
	}
	r = device_parse(c, d, g, diag);
	if (config_oom(r) || !d->name)
		goto err_free_device;
	*ret = d;
	return 0;

err_free_device:
	config_device_free(d);
	return config_oom(r) ? r : 0;
}

int config_devices_load(struct lab_config *c, const struct config_groups *groups,
			struct diag *diag)
{
	size_t i;

	c->devices = calloc(groups->n + 1, sizeof(*c->devices));
	if (!c->devices)
		return -ENOMEM;
	for (i = 0; i < groups->n; i++) {
		struct device *d = NULL;

		if (device_load(c, groups->v[i], &d, diag) == -ENOMEM)
			return -ENOMEM;
		if (d)
			c->devices[c->n_devices++] = d;
	}
	return 0;
}

struct device *config_device_free(struct device *d)
{
	if (!d)
		return NULL;
	free(d->name);
	free(d->file);
	free(d->type_name);
	strv_free(d->tags);
	free(d->description);
	free(d->console.driver);
	free(d->console.file);
	free(d->power.driver);
	free(d->power.file);
	free(d->sdmux.driver);
	free(d->sdmux.file);
	kv_release(&d->parameters);
	kv_release(&d->storage_info);
	free(d->fingerprint);
	free(d);
	return NULL;
}

const char *device_param(const struct device *dev, const char *key)
{
	const char *v = kv_get(&dev->parameters, key);

	if (!v && dev->type)
		v = kv_get(&dev->type->parameters, key);
	return v;
}

bool config_device_changed(const struct device *a, const struct device *b)
{
	if (a == b)
		return false;
	if (!a || !b || !a->fingerprint || !b->fingerprint)
		return true;
	return strcmp(a->fingerprint, b->fingerprint) != 0;
}
