// SPDX-License-Identifier: GPL-2.0-or-later
/* bootjob.c -- write the deploy-and-boot job of a holder's `labctl boot` for the board's type */
#include "session/bootjob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "config/config.h"
#include "core/strv.h"

/* The first boot method of the type that boots to a shell from files or as it is. */
static const char *pick_method(const struct device_type *t)
{
	STRV_FOREACH(m, t->boot_methods)
		if (!strcmp(*m, "u-boot") || !strcmp(*m, "qemu") || !strcmp(*m, "minimal"))
			return *m;
	return NULL;
}

/* Where the files go: QEMU reads them from the host, U-Boot over TFTP. */
static const char *pick_deploy(const struct device_type *t, const char *method)
{
	if (!strcmp(method, "qemu"))
		return strv_contains(t->deploy_methods, "tmpfs") ? "tmpfs" : NULL;
	if (strv_contains(t->deploy_methods, "tftp"))
		return "tftp";
	return strv_contains(t->deploy_methods, "tmpfs") ? "tmpfs" : NULL;
}

static void add_file(json_t *deploy, const char *label, const char *url, const char *type)
{
	json_t *f;

	if (!url)
		return;
	f = json_pack("{s:s}", "url", url);
	if (type)
		json_object_set_new(f, "type", json_string(type));
	json_object_set_new(deploy, label, f);
}

static json_t *boot_action(const struct device_type *t, const char *method,
			   const struct bootjob_params *p)
{
	json_t *boot = json_pack("{s:s}", "method", method), *login;

	if (!strcmp(method, "qemu"))
		json_object_set_new(boot, "media", json_string("tmpfs"));
	if (t->kernel.login_prompt) {
		login = json_pack("{s:s, s:s}", "login_prompt", t->kernel.login_prompt, "username",
				  p->login ? p->login : BOOTJOB_DEFAULT_LOGIN);
		if (p->password) {
			json_object_set_new(login, "password_prompt", json_string("[Pp]assword:"));
			json_object_set_new(login, "password", json_string(p->password));
		}
		json_object_set_new(boot, "auto_login", login);
	}
	return json_pack("{s:o}", "boot", boot);
}

int bootjob_build(const struct device *dev, const struct bootjob_params *p, char **ret,
		  char err[BOOTJOB_ERR_MAX])
{
	const struct device_type *t = dev->type;
	const char *method = pick_method(t), *to;
	json_t *job, *actions, *deploy;
	char name[256], *text;

	if (!method) {
		snprintf(err, BOOTJOB_ERR_MAX, "device type '%s' has no boot method labd can drive",
			 t->name);
		return -EINVAL;
	}
	to = pick_deploy(t, method);
	if ((p->kernel || p->ramdisk || p->dtb) && !to) {
		snprintf(err, BOOTJOB_ERR_MAX, "device type '%s' cannot take files to boot",
			 t->name);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "boot of %s for %s", dev->name, p->holder);
	actions = json_array();
	if (p->kernel || p->ramdisk || p->dtb) {
		deploy = json_pack("{s:s}", "to", to);
		add_file(deploy, "kernel", p->kernel, p->kernel_type);
		add_file(deploy, "ramdisk", p->ramdisk, NULL);
		add_file(deploy, "dtb", p->dtb, NULL);
		json_array_append_new(actions, json_pack("{s:o}", "deploy", deploy));
	}
	json_array_append_new(actions, boot_action(t, method, p));
	job = json_pack("{s:s, s:s, s:{s:{s:i}}, s:o}", "job_name", name, "device_type", t->name,
			"timeouts", "job", "minutes", BOOTJOB_TIMEOUT_MINUTES, "actions", actions);
	if (job && p->append)
		json_object_set_new(job, "context",
				    json_pack("{s:s}", "extra_kernel_args", p->append));
	text = job ? json_dumps(job, JSON_INDENT(2)) : NULL;
	json_decref(job);
	if (!text)
		return -ENOMEM;
	*ret = text;
	return 0;
}
