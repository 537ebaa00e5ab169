// SPDX-License-Identifier: GPL-2.0-or-later
/* job_boot.c -- the boot action of a job: method, commands, prompts, login */
#include "job/job_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"

/*
 *	boot:
 *	  method: u-boot | barebox | grub | grub-efi | ipxe | depthcharge | uefi-menu
 *	          | bootloader | minimal | qemu | fastboot
 *	  commands: ramdisk | [inline, commands]	(bootloader methods: a set of the
 *						 device type, or a list; uefi-menu:
 *						 menu entries, by their text)
 *	  bootloader: u-boot			(method bootloader: whose prompt to stop at;
 *						 its prompts are then that bootloader's)
 *	  expect_shell: false			(bootloader methods: done when the kernel starts)
 *	  prompts: [regex, ...]			(shell prompts)
 *	  auto_login: {login_prompt, username, password_prompt, password, login_commands}
 *						(username '': an empty line at the prompt)
 *	  parameters: {kernel-start-message: regex}
 *	  ignore_kernel_messages: false
 *	  reset: true				(minimal: power-cycle the board first)
 *	  media: tmpfs				(qemu: the images of the tmpfs deploy)
 *	  docker: {image: kernelci/qemu}	(qemu: the type may map it to its own QEMU)
 *	  transfer_overlay: {download_command, unpack_command}
 *
 * transfer_overlay: once the shell is up, the board fetches the test overlay
 * from labd's HTTP server: labd types "<download_command> <URL> &&
 * <unpack_command> <file>", the file being the URL's last part, as LAVA
 * does (so "cd /tmp; wget" and "tar -C / -xzf" work as in LAVA jobs).
 *
 * The kernel command line a qemu boot may add comes from the job's context
 * (extra_kernel_args, as in LAVA); the device type decides whether it may.
 */

static const struct job_doc_key boot_keys[] = {
	{ "method", JOB_KEY_KNOWN, NULL },
	{ "commands", JOB_KEY_KNOWN, NULL },
	{ "prompts", JOB_KEY_KNOWN, NULL },
	{ "auto_login", JOB_KEY_KNOWN, NULL },
	{ "parameters", JOB_KEY_KNOWN, NULL },
	{ "ignore_kernel_messages", JOB_KEY_KNOWN, NULL },
	{ "reset", JOB_KEY_KNOWN, NULL },
	{ "media", JOB_KEY_KNOWN, NULL },
	{ "bootloader", JOB_KEY_KNOWN, NULL },
	{ "expect_shell", JOB_KEY_KNOWN, NULL },
	{ "use_bootscript", JOB_KEY_UNSUPPORTED,
	  "iPXE commands are typed at its prompt, not loaded as a script" },
	{ "boot_finished", JOB_KEY_UNSUPPORTED, "installers are not supported" },
	{ "line_separator", JOB_KEY_UNSUPPORTED,
	  "lines typed on the console end with a newline" },
	{ "transfer_overlay", JOB_KEY_KNOWN, NULL },
	{ "soft_reboot", JOB_KEY_UNSUPPORTED, "boards are reset by their power control" },
	{ "connection", JOB_KEY_UNSUPPORTED,
	  "the console is the board's, as the lab configured it" },
	{ "type", JOB_KEY_UNSUPPORTED,
	  "booti, bootz or bootm follows the kernel 'type' of the deploy action" },
	{ "docker", JOB_KEY_KNOWN, NULL },	/* qemu: an image the type maps to its QEMU */
	/* LAVA's boot from a secondary medium (deploy to usb, sata) */
	{ "kernel", JOB_KEY_UNSUPPORTED, "booting from a secondary medium (usb, sata) is not supported" },
	{ "ramdisk", JOB_KEY_UNSUPPORTED, "booting from a secondary medium (usb, sata) is not supported" },
	{ "dtb", JOB_KEY_UNSUPPORTED, "booting from a secondary medium (usb, sata) is not supported" },
	{ "root_uuid", JOB_KEY_UNSUPPORTED, "booting from a secondary medium (usb, sata) is not supported" },
	{ "boot_part", JOB_KEY_UNSUPPORTED, "booting from a secondary medium (usb, sata) is not supported" },
	{ "kernel_type", JOB_KEY_UNSUPPORTED, "booting from a secondary medium (usb, sata) is not supported" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key docker_keys[] = {
	{ "image", JOB_KEY_KNOWN, NULL },
	{ "binary", JOB_KEY_IGNORED, "the device type's QEMU binary runs" },
	{ "local", JOB_KEY_IGNORED, "no image is pulled: the device type's QEMU runs" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key login_keys[] = {
	{ "login_prompt", JOB_KEY_KNOWN, NULL },
	{ "username", JOB_KEY_KNOWN, NULL },
	{ "password_prompt", JOB_KEY_KNOWN, NULL },
	{ "password", JOB_KEY_KNOWN, NULL },
	{ "login_commands", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

static const struct job_doc_key param_keys[] = {
	{ "kernel-start-message", JOB_KEY_KNOWN, NULL },
	{ "shutdown-message", JOB_KEY_IGNORED,
	  "only awaited when rebooting from the shell: labd resets boards by their power control" },
	{ "bootloader-final-message", JOB_KEY_UNSUPPORTED,
	  "the device type sets U-Boot's final message" },
	{ NULL, 0, NULL },
};

static int boot_walk_method(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	const char *m;

	int i;

	if (job_doc_get_str(doc, obj, "method", true, &m) <= 0)
		return -EINVAL;
	for (i = 0; i <= BOOT_METHOD_BOOTLOADER; i++) {
		if (strcmp(m, boot_method_name((enum boot_method)i)))
			continue;
		b->method = (enum boot_method)i;
		b->bootloader = boot_method_bootloader(b->method);
		return 0;
	}
	return job_doc_error(doc, "method", "unsupported boot method '%.100s' (supported: minimal, u-boot, qemu, fastboot, barebox, grub, grub-efi, ipxe, depthcharge, uefi-menu, bootloader)",
			     m);
}

/* method bootloader: `bootloader` names the bootloader whose prompt the board stops at. */
static int boot_walk_bootloader(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	const char *name;
	int i, r;

	if (b->method != BOOT_METHOD_BOOTLOADER) {
		if (json_object_get(obj, "bootloader"))
			return job_doc_error(doc, "bootloader", "'bootloader' only applies to method 'bootloader'");
		return 0;
	}
	r = job_doc_get_str(doc, obj, "bootloader", true, &name);
	if (r <= 0)
		return -EINVAL;
	for (i = 0; i <= BOOT_METHOD_UEFI_MENU; i++) {
		if (boot_method_bootloader((enum boot_method)i) < 0 ||
		    strcmp(name, boot_method_name((enum boot_method)i)))
			continue;
		b->bootloader = boot_method_bootloader((enum boot_method)i);
		return 0;
	}
	return job_doc_error(doc, "bootloader", "unsupported bootloader '%.100s' (supported: u-boot, barebox, grub, grub-efi, ipxe, depthcharge, uefi-menu)",
			     name);
}

/* A key that only one method reads: present with another method is an error. */
static int boot_only_for(struct job_doc *doc, const json_t *obj, const char *key,
			 const struct job_boot *b, enum boot_method m)
{
	if (!json_object_get(obj, key) || b->method == m)
		return 0;
	return job_doc_error(doc, key, "'%s' only applies to method '%s'", key, boot_method_name(m));
}

/* commands: a command set of the device type, or a list (empty only for method bootloader) */
static int boot_walk_commands(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	json_t *v = json_object_get(obj, "commands");

	if (!v)
		return 0;
	if (b->bootloader < 0 && b->method != BOOT_METHOD_BOOTLOADER)
		return job_doc_error(doc, "commands", "'commands' only applies to the bootloader methods (u-boot, barebox, grub, grub-efi, ipxe, depthcharge, uefi-menu, bootloader)");
	if (json_is_string(v)) {
		if (!json_string_length(v))
			return job_doc_error(doc, "commands", "'commands' must not be empty");
		return job_doc_dup_str(doc, obj, "commands", true, &b->commands_name) < 0 ? -EINVAL : 0;
	}
	if (!json_is_array(v))
		return job_doc_error(doc, "commands", "'commands' must be the name of a command set or a list of commands, not %s",
				     job_doc_type_name(v));
	if (!json_array_size(v) && b->method != BOOT_METHOD_BOOTLOADER)
		return job_doc_error(doc, "commands", "'commands' must not be empty");
	if (job_doc_get_strv(doc, obj, "commands", &b->commands) < 0)
		return -EINVAL;
	if (!b->commands && !(b->commands = calloc(1, sizeof(*b->commands))))
		return job_doc_nomem(doc);	/* commands: [] -- none, not the default set */
	return 0;
}

static int boot_walk_login(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	struct job_auto_login *l = &b->auto_login;
	json_t *al;
	size_t mark;
	int r = job_doc_get(doc, obj, "auto_login", JSON_OBJECT, false, &al);

	if (r <= 0)
		return r;
	b->has_auto_login = true;
	mark = job_doc_enter(doc, "auto_login");
	r = job_doc_check_keys(doc, al, login_keys, NULL);
	if (job_doc_get_regex(doc, al, "login_prompt", true, &l->login_prompt) <= 0)
		r = -EINVAL;
	/* '' answers the login prompt with an empty line (a console that logs in
	 * as root on Enter, as Mesa's boards do) */
	if (json_is_string(json_object_get(al, "username")) &&
	    !json_string_length(json_object_get(al, "username")))
		r = (l->username = strdup("")) ? r : job_doc_nomem(doc);
	else if (job_doc_dup_str(doc, al, "username", true, &l->username) <= 0)
		r = -EINVAL;
	if (job_doc_get_regex(doc, al, "password_prompt", false, &l->password_prompt) < 0)
		r = -EINVAL;
	if (job_doc_dup_str(doc, al, "password", false, &l->password) < 0)
		r = -EINVAL;
	if (job_doc_get_strv(doc, al, "login_commands", &l->login_commands) < 0)
		r = -EINVAL;
	if (!l->password_prompt != !l->password && !r)
		r = job_doc_error(doc, l->password ? "password" : "password_prompt",
				  "'password' and 'password_prompt' go together");
	job_doc_leave(doc, mark);
	return r;
}

static const struct job_doc_key transfer_keys[] = {
	{ "download_command", JOB_KEY_KNOWN, NULL },
	{ "unpack_command", JOB_KEY_KNOWN, NULL },
	{ "transfer_method", JOB_KEY_UNSUPPORTED,
	  "the overlay is downloaded over HTTP (download_command), not sent over the console" },
	{ NULL, 0, NULL },
};

static int boot_walk_transfer(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	json_t *t;
	size_t mark;
	int r = job_doc_get(doc, obj, "transfer_overlay", JSON_OBJECT, false, &t);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "transfer_overlay");
	r = job_doc_check_keys(doc, t, transfer_keys, NULL);
	if (job_doc_dup_str(doc, t, "download_command", true, &b->download_command) <= 0)
		r = -EINVAL;
	if (job_doc_dup_str(doc, t, "unpack_command", true, &b->unpack_command) <= 0)
		r = -EINVAL;
	job_doc_leave(doc, mark);
	return r;
}

/* prompts: a list of regexes, or one as a string (LAVA's older jobs). */
static int boot_walk_prompts(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	json_t *v = json_object_get(obj, "prompts");
	char *re;

	if (!json_is_string(v))
		return job_doc_get_regexv(doc, obj, "prompts", &b->prompts);
	if (job_doc_get_regex(doc, obj, "prompts", true, &re) <= 0)
		return -EINVAL;
	if (strv_consume(&b->prompts, re) < 0)
		return job_doc_nomem(doc);
	return 1;
}

static int boot_walk_parameters(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	json_t *p;
	size_t mark;
	int r = job_doc_get(doc, obj, "parameters", JSON_OBJECT, false, &p);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "parameters");
	r = job_doc_check_keys(doc, p, param_keys, NULL);
	if (job_doc_get_regex(doc, p, "kernel-start-message", false, &b->kernel_start_message) < 0)
		r = -EINVAL;
	job_doc_leave(doc, mark);
	return r;
}

/*
 * docker: {image, binary} on a qemu boot: LAVA runs QEMU from that container
 * image; a device type may map the image to its own QEMU (checked against
 * the type).  Containers are not run, so on other methods it is refused.
 */
static int boot_walk_docker(struct job_doc *doc, const json_t *obj, struct job_boot *b)
{
	json_t *d;
	size_t mark;
	int r = 0;

	if (!json_object_get(obj, "docker"))
		return 0;
	if (b->method != BOOT_METHOD_QEMU)
		return job_doc_error(doc, "docker", "unsupported key 'docker': %s runs on the lab host; containers are not supported",
				     b->method == BOOT_METHOD_FASTBOOT ? "fastboot" : "the boot");
	if (job_doc_get(doc, obj, "docker", JSON_OBJECT, true, &d) <= 0)
		return -EINVAL;
	mark = job_doc_enter(doc, "docker");
	r = job_doc_check_keys(doc, d, docker_keys, NULL);
	if (job_doc_dup_str(doc, d, "image", true, &b->qemu_image) <= 0)
		r = -EINVAL;
	job_doc_leave(doc, mark);
	return r;
}

/* qemu: media, and the kernel command line from the job's context */
static int boot_walk_qemu(struct job_doc *doc, const json_t *obj, const struct job *job,
			  struct job_boot *b)
{
	const char *media;
	json_t *append = json_object_get(job->context, "extra_kernel_args");
	int r = 0;

	if (boot_only_for(doc, obj, "media", b, BOOT_METHOD_QEMU) < 0)
		r = -EINVAL;
	else if (job_doc_get_str(doc, obj, "media", false, &media) > 0 && strcmp(media, "tmpfs"))
		r = job_doc_error(doc, "media", "unsupported media '%.100s' (supported: tmpfs)", media);
	if (b->method == BOOT_METHOD_QEMU && json_is_string(append) &&
	    !(b->qemu_append = strdup(json_string_value(append))))
		r = job_doc_nomem(doc);
	return r;
}

int job_boot_parse(struct job_doc *doc, const json_t *obj, const struct job *job,
		   struct job_boot *ret)
{
	int r;

	ret->reset = true;
	ret->expect_shell = true;
	ret->bootloader = -1;
	if (boot_walk_method(doc, obj, ret) < 0)
		return -EINVAL;
	r = job_doc_check_keys(doc, obj, boot_keys, job_action_keys);
	if (boot_walk_bootloader(doc, obj, ret) < 0)
		r = -EINVAL;
	if (json_object_get(obj, "expect_shell") && ret->bootloader < 0 &&
	    ret->method != BOOT_METHOD_BOOTLOADER)
		r = job_doc_error(doc, "expect_shell", "'expect_shell' only applies to the bootloader methods");
	else if (job_doc_get_bool(doc, obj, "expect_shell", &ret->expect_shell) < 0)
		r = -EINVAL;
	if (boot_walk_commands(doc, obj, ret) < 0)
		r = -EINVAL;
	if (boot_walk_prompts(doc, obj, ret) < 0)
		r = -EINVAL;
	if (boot_walk_transfer(doc, obj, ret) < 0)
		r = -EINVAL;
	if (boot_walk_login(doc, obj, ret) < 0)
		r = -EINVAL;
	if (boot_walk_parameters(doc, obj, ret) < 0)
		r = -EINVAL;
	if (boot_walk_qemu(doc, obj, job, ret) < 0 || boot_walk_docker(doc, obj, ret) < 0)
		r = -EINVAL;
	if (job_doc_get_bool(doc, obj, "ignore_kernel_messages", &ret->ignore_kernel_messages) < 0)
		r = -EINVAL;
	if (boot_only_for(doc, obj, "reset", ret, BOOT_METHOD_MINIMAL) < 0 ||
	    job_doc_get_bool(doc, obj, "reset", &ret->reset) < 0)
		r = -EINVAL;
	return r < 0 ? -EINVAL : 0;
}

void job_boot_release(struct job_boot *b)
{
	free(b->commands_name);
	strv_free(b->commands);
	strv_free(b->prompts);
	free(b->auto_login.login_prompt);
	free(b->auto_login.username);
	free(b->auto_login.password_prompt);
	free(b->auto_login.password);
	strv_free(b->auto_login.login_commands);
	free(b->kernel_start_message);
	free(b->qemu_append);
	free(b->qemu_image);
	free(b->download_command);
	free(b->unpack_command);
	memset(b, 0, sizeof(*b));
}
