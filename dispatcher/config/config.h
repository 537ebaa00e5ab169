/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.h -- labd's configuration: the daemon settings and the lab's boards
 *
 * config/ owns labd.conf and the board directory: this header, and QEMU's
 * command line as a board definition gives it (qemu_cmdline.h).  It asks the
 * drivers (drivers/console.h, power.h ...) to check their own groups;
 * config_priv.h is shared by the config files only.
 *
 * Lab admins describe boards once, in libconfig files:
 *
 *   labd.conf          daemon settings (state directory, HTTP listener, TFTP
 *                      root, server IP) and `devices_dir`, the board directory;
 *   <devices_dir>/NAME.conf any number of files, each holding `device_types`
 *                      and/or `devices` lists (or a single `device_type` or
 *                      `device` group).
 *
 * A device type carries the boot method parameters (bootloader prompts,
 * command sets with {SUBSTITUTION} variables, load addresses, interrupt prompt
 * and keys, per-character delay, error messages, kernel and login patterns) and may extend
 * another type (`extends = "base-uboot";`).  A device names its type and adds
 * its console and power drivers, tags and parameter overrides.  Drivers are
 * found by name and parse their own settings (drivers/power.h, console.h).
 *
 * config_load() reads and validates everything and reports every problem as
 * "FILE:LINE: cause" (unknown driver, missing key, bad type, unknown key,
 * duplicate device, unknown device type, inheritance loop).  The result is an
 * immutable, refcounted struct lab_config: a reload (SIGHUP) loads a new one
 * and the daemon swaps it in, keeping running jobs on the objects they hold.
 *
 * All strings are owned by the config.  Durations are microseconds.  The file
 * format, with examples, is described at the top of config.c and, for lab
 * admins, in doc/boards.md.
 *
 * Sections of labd.conf owned by other modules (`backends`, `users`,
 * `store`: the table config_sections[] in config.c) are accepted without
 * being parsed here; those modules read them from lab_config.root, e.g.
 * config_setting_get_member(c->root, "backends"), and report with cfg.h.
 */
#ifndef LABD_CONFIG_H
#define LABD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "core/cfg.h"
#include "core/diag.h"
#include "core/kv.h"
#include "drivers/driver.h"	/* struct driver_config */

/* Defaults for labd.conf */
#define CONFIG_DEFAULT_PATH "/etc/labd/labd.conf"
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/labd"
#define CONFIG_DEFAULT_LISTEN "127.0.0.1:8640"
#define CONFIG_DEFAULT_DEVICES_DIR "devices"	/* relative to labd.conf's directory */
#define CONFIG_DEFAULT_SERVER_IP "10.0.2.2"
#define CONFIG_DEFAULT_MAX_ARTIFACT_SIZE (512ULL << 20)
#define CONFIG_DEFAULT_GIT_MAX_SIZE (1ULL << 30)
#define CONFIG_DEFAULT_GIT_TIMEOUT (600 * 1000000ULL)

/*
 * Defaults of a device type, used when neither the type nor its parents set
 * a value: boot_methods ["minimal"], deploy_methods ["none"],
 * qemu.allowed_images ["kernel", "initrd"], power_on_delay
 * POWER_DEFAULT_CYCLE_DELAY.  The bootloader groups (u-boot, grub, ...) have
 * no defaults here: what a type leaves unset, its boot method's dialect
 * supplies when the board boots (run/actions/bootloader.h), so a type only
 * says where its board differs.
 */
#define CONFIG_DEFAULT_START_MESSAGE "Linux version [0-9]"
#define CONFIG_DEFAULT_QEMU_CONSOLE "socket"

/**
 * enum bootloader - the bootloaders a board may be driven through, each a
 * boot method of the same name and a group of the same name in a device type:
 * "u-boot", "barebox", "grub", "grub-efi", "ipxe", "depthcharge", "uefi-menu".
 */
enum bootloader {
	BOOTLOADER_UBOOT,
	BOOTLOADER_BAREBOX,
	BOOTLOADER_GRUB,
	BOOTLOADER_GRUB_EFI,
	BOOTLOADER_IPXE,
	BOOTLOADER_DEPTHCHARGE,
	BOOTLOADER_UEFI_MENU,
	BOOTLOADER_COUNT
};

#define CONFIG_BOOTLOADER_NAMES { "u-boot", "barebox", "grub", "grub-efi", "ipxe", \
				  "depthcharge", "uefi-menu" }

/** config_bootloader_name() - the method and group name of @b ("u-boot"); NULL if invalid. */
const char *config_bootloader_name(enum bootloader b);

/** config_bootloader_find() - the bootloader named @name, or -1. */
int config_bootloader_find(const char *name);

/**
 * Parameters of a bootloader (a device type's `u-boot`, `grub`, ... group).
 * NULL strings, NULL lists and -1 flags are unset: the dialect's default
 * applies (run/actions/bootloader.h).  Key bytes (interrupt_char, menu_down,
 * menu_select) are sent as they are: "\x02" is Ctrl-B, "\x1b[B" cursor down.
 */
struct bootloader_params {
	char *interrupt_prompt;	/* regex: the autoboot countdown, the firmware starting */
	char *interrupt_char;	/* bytes that stop it: " ", "\x02" (Ctrl-B), "\x1b" (Esc) */
	int interrupt_newline;	/* send "\n" after them: 0, 1, or -1 unset */
	int needs_interrupt;	/* 0: the board stops at its prompt by itself; -1 unset */
	uint64_t interrupt_delay;	/* after the interrupt prompt, before its keys; default 0 */
	char *bootloader_prompt;	/* regex */
	uint64_t char_delay;	/* between characters typed; default 0 */
	char *final_message;	/* regex ending the bootloader stage; "" for none */
	char **error_messages;	/* strv of regexes: failures of the lab (a download,
				 * the network): infrastructure errors */
	char **job_error_messages;	/* strv of regexes: the job's commands or images are
					 * wrong (unknown command, bad image magic): job errors */
	struct kv command_sets;	/* name -> commands joined with '\n' */
	char *default_commands;	/* name of the set used when the job names none */
	char *menu_item;	/* menus: regex whose group (?<item>...) is the highlighted entry */
	char *menu_down;	/* menus: the key moving the highlight to the next entry */
	char *menu_select;	/* menus: the key choosing the highlighted entry */
	bool configured;	/* the type or a parent has this group */
};

/** Parameters shared by all boot methods once the kernel runs (`kernel` group). */
struct kernel_params {
	char *start_message;	/* regex; default "Linux version [0-9]" */
	char *login_prompt;	/* regex used when the job's auto_login has none */
	char **prompts;		/* default shell prompts (strv) */
	uint64_t char_delay;	/* between characters sent to the shell; default 0 */
};

/** QEMU device types (`qemu` group): real kernels on emulated boards. */
struct qemu_params {
	char *binary;		/* "qemu-system-aarch64" */
	char **args;		/* strv: fixed arguments, with {SUBSTITUTIONS} */
	char *console;		/* "socket" (default) or "pty" */
	char *append_default;	/* kernel command line used when the job gives none */
	char **allowed_images;	/* labels the job may deploy: kernel, initrd, dtb, ... */
	bool append_allowed;	/* the job may add to the kernel command line */
	long long max_memory;	/* MiB a job may ask for (-m, context memory); 0: none */
	long long max_cpus;	/* CPUs a job may ask for (-smp); 0: none */
	char **container_images;	/* strv of fnmatch() patterns: the images a job's
					 * `docker:` may name, this QEMU standing in for theirs */
	char **arch;		/* strv: the context `arch` values it runs; NULL: unchecked */
};

struct device_type {
	char *name;
	char *file;		/* where it was defined */
	int line;
	char *extends;		/* parent type name, or NULL */
	char **boot_methods;	/* strv: "minimal", "u-boot", "qemu", "grub" ... */
	char **deploy_methods;	/* strv: "tftp", "tmpfs", "none" */
	struct bootloader_params bootloaders[BOOTLOADER_COUNT];
	struct kernel_params kernel;
	struct qemu_params qemu;
	bool has_qemu;
	struct kv parameters;	/* substitution variables: KERNEL_ADDR, ... */
	struct kv bootx;	/* "booti.kernel" -> "0x40400000", "bootz.ramdisk", ... */
	char **context_allowed;	/* strv: job context keys this type accepts */
	uint64_t power_on_delay;	/* wait after power-off before power-on (cycle) */
	char *fingerprint;	/* canonical text of the type and its parents */
};

struct device {
	char *name;
	char *file;
	int line;
	char *type_name;
	const struct device_type *type;	/* resolved, owned by the lab_config */
	char **tags;		/* strv */
	char *description;
	struct driver_config console;
	struct driver_config power;
	bool has_power;		/* a board without power control cannot be reset */
	struct driver_config sdmux;	/* the SD-mux of its card (deploy to: sdmux) */
	bool has_sdmux;
	const config_setting_t *fastboot;	/* how it shows up in fastboot mode, or NULL
						 * (drivers/usb/fastboot.h parses it) */
	struct kv parameters;	/* overrides of the type's parameters */
	struct kv storage_info;	/* disks by kind ("SATA" -> "/dev/..."): lava-target-storage */
	uint64_t power_on_delay;	/* power_set_cycle_delay(): the device's, else its type's */
	char *fingerprint;	/* canonical text of the definition, to detect changes */
};

/** HTTP API settings (`http` group of labd.conf). */
struct http_config {
	char *listen;		/* "127.0.0.1:8640"; "unix:/run/labd.sock" */
	char *unix_socket;	/* optional second listener on a Unix socket */
	char **tokens;		/* strv of accepted bearer tokens (hashed "sha256:<hex>" or plain) */
	bool require_token;	/* default: true unless listening on loopback only */
	char *web_root;		/* the dashboard's files, or NULL: see api_web.c */
	char *javascript_dir;	/* Debian's /usr/share/javascript, or NULL: that */
};

struct lab_config {
	int refcount;
	char *path;		/* labd.conf, made absolute; so are all paths below */
	char *lab_name;
	char *state_dir;
	char *devices_dir;
	char *tftp_root;	/* default <state_dir>/tftp */
	char *server_ip;	/* what boards use to reach labd's TFTP/HTTP; default "10.0.2.2" */
	char *artifact_dir;	/* file:// URLs must point below this; NULL forbids them */
	uint64_t max_artifact_size;
	char **git_allow;	/* strv: URL prefixes of the git repositories jobs may use;
				 * NULL: none */
	uint64_t git_max_size;	/* bytes of one cached repository */
	uint64_t git_timeout;	/* one fetch, usec */
	struct http_config http;
	struct device_type **types;
	size_t n_types;
	struct device **devices;
	size_t n_devices;
	config_t **files;	/* parsed libconfig files kept alive for driver settings */
	size_t n_files;
	const config_setting_t *root;	/* labd.conf's top level (files[0]), for other sections */
	bool unparsed_files;	/* a board file could not be read: its names are unknown */
	struct diag warnings;	/* valid, but probably not meant ("FILE:LINE: cause"):
				 * check-config prints them, the daemon logs them */
};

/**
 * config_load() - read labd.conf and the board directory
 * @path: labd.conf; NULL means CONFIG_DEFAULT_PATH
 * @ret: the configuration, to be released with config_unref()
 * @diag: every problem found
 *
 * Driver settings are checked through the drivers' parse operations (no
 * hardware is touched).  Returns 0, -EINVAL (see @diag), -ENOENT or -ENOMEM.
 */
int config_load(const char *path, struct lab_config **ret, struct diag *diag);

/**
 * config_check() - `labd check-config`: load @path and drop the result
 *
 * Returns what config_load() returns; the problems are in @diag.
 */
int config_check(const char *path, struct diag *diag);

/** config_log_warnings() - log each of @c->warnings (the daemon, at load and reload). */
void config_log_warnings(const struct lab_config *c);

/** config_ref() / config_unref() - share a configuration; unref accepts NULL, returns NULL. */
struct lab_config *config_ref(struct lab_config *c);
struct lab_config *config_unref(struct lab_config *c);

/** config_find_device() / config_find_type() - lookup by name; NULL if absent; borrowed. */
const struct device *config_find_device(const struct lab_config *c, const char *name);
const struct device_type *config_find_type(const struct lab_config *c, const char *name);

/**
 * device_param() - a substitution variable for @dev: the device's override,
 * else its type's (and parents', already merged at load), else NULL.
 */
const char *device_param(const struct device *dev, const char *key);

/**
 * config_device_changed() - whether two definitions of a board differ (in the
 * device group or in any type of its chain), e.g. across a reload.  Where the
 * definition sits (file, line, order) does not count.
 */
bool config_device_changed(const struct device *a, const struct device *b);

#endif
