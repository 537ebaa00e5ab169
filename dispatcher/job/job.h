/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job.h -- a job definition, parsed and validated into typed structs
 *
 * job/ owns the job document: its two front ends and the document tree
 * they build (job_yaml.c, job_json.c, job_doc.h), this typed struct job and
 * its schema (job.c, job_boot.c, job_deploy.c, job_test.c), and LAVA test
 * definitions (testdef.h).  labctl links job/ to check jobs without labd.
 *
 * CI systems and people submit jobs as YAML or JSON; both front ends
 * (job_yaml.c with libyaml, job_json.c with jansson) feed one schema walker
 * (job.c), so both formats accept exactly the same documents.  The schema
 * follows LAVA's job format where the two overlap (see README "Job files"):
 *
 *	job_name, device_type, tags, priority, timeouts, context, metadata,
 *	infrastructure_retries (labd), actions: [deploy | boot | test]
 *
 * A job is validated completely before any board is touched: job_parse()
 * checks the document against the schema, job_check_device_type() checks it
 * against the device type that will run it (boot method supported, named
 * command set exists, ...).  Every problem is reported as "FILE:LINE: cause";
 * a key labd does not implement is reported as unsupported, never ignored,
 * except LAVA keys that do not change what happens on the board (they are
 * listed in job.c with the reason they are harmless).
 *
 * Ownership: struct job and everything it points to is owned by the job and
 * freed by job_free().  Structs here are plain data: the runner reads them.
 * All durations are microseconds.
 */
#ifndef LABD_JOB_H
#define LABD_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/diag.h"
#include "core/kv.h"

struct device_type;

/* Limits on what one job may ask for. */
#define JOB_MAX_SIZE (1024 * 1024)	/* bytes of job definition */
#define JOB_MAX_ACTIONS 64
#define JOB_MAX_TIMEOUT (7 * 24 * 3600 * 1000000ULL)
#define JOB_DEFAULT_ACTION_TIMEOUT (5 * 60 * 1000000ULL)
#define JOB_DEFAULT_CONNECTION_TIMEOUT (2 * 60 * 1000000ULL)
#define JOB_MAX_NAME 200		/* bytes of job_name (LAVA's limit) */
#define JOB_MAX_FAILURE_RETRY 10	/* LAVA failure_retry: attempts of one action */
#define JOB_MAX_INFRASTRUCTURE_RETRIES 5
#define JOB_MAX_SECRET_NAME 100	/* bytes of a secret's name */
#define JOB_MAX_CALLBACKS 8	/* notify callbacks of one job */

enum job_format {
	JOB_FORMAT_AUTO,	/* JSON if the first non-blank byte is '{', else YAML */
	JOB_FORMAT_YAML,
	JOB_FORMAT_JSON,
};

enum job_action_kind {
	JOB_ACTION_DEPLOY,
	JOB_ACTION_BOOT,
	JOB_ACTION_TEST,
};

enum deploy_to {
	DEPLOY_TO_NONE,		/* nothing to download (board boots what it has) */
	DEPLOY_TO_TFTP,		/* stage artifacts in the job's TFTP directory */
	DEPLOY_TO_TMPFS,	/* stage artifacts in a job directory (QEMU, host-side use) */
	DEPLOY_TO_SDMUX,	/* write the one image to the board's SD card through its SD-mux */
	DEPLOY_TO_FASTBOOT,	/* flash each image to the partition named by its label */
	DEPLOY_TO_NFS,		/* only an NFS root (and a kernel kept as tmpfs keeps it) */
};

enum boot_method {
	BOOT_METHOD_MINIMAL,	/* power on, wait for login and shell prompts */
	BOOT_METHOD_UBOOT,	/* interrupt U-Boot, type the command set, then as minimal */
	BOOT_METHOD_QEMU,	/* start the QEMU of the device type with the deployed images */
	BOOT_METHOD_FASTBOOT,	/* "fastboot reboot" the flashed board, then as minimal */
	/* the bootloader methods: one engine, each with the dialect of its name */
	BOOT_METHOD_BAREBOX,
	BOOT_METHOD_GRUB,
	BOOT_METHOD_GRUB_EFI,
	BOOT_METHOD_IPXE,
	BOOT_METHOD_DEPTHCHARGE,
	BOOT_METHOD_UEFI_MENU,	/* select firmware menu entries by their text */
	BOOT_METHOD_BOOTLOADER,	/* LAVA's: stop at the prompt of `bootloader` (u-boot ...),
				 * run `commands`, stay there: no kernel */
};

enum test_kind {
	TEST_KIND_INTERACTIVE,	/* scripted commands with expected answers */
	TEST_KIND_MONITORS,	/* results from patterns in the console output */
	TEST_KIND_DEFINITIONS,	/* LAVA test definitions typed into the shell */
};

/** A downloadable file of a deploy action (kernel, ramdisk, dtb, modules, rootfs...). */
struct job_artifact {
	char *label;		/* "kernel", "ramdisk", "dtb", ... */
	char *url;		/* http(s):// or file:// */
	char *sha256sum;	/* 64 lowercase hex digits, or NULL */
	char *md5sum;		/* 32 lowercase hex digits, or NULL (checked too) */
	char *sha512sum;	/* 128 lowercase hex digits, or NULL (checked too) */
	char *compression;	/* NULL, "gz", "xz", "bz2", "zstd" or "zip": decompress */
	char *kernel_type;	/* kernel only: "image", "zimage", "uimage" or NULL */
	bool uboot_header;	/* ramdisk only: `header: u-boot` */
	bool no_overlay;	/* ramdisk, nfsrootfs: `install_overlay: false`, tests not added */
	bool no_modules;	/* ramdisk, nfsrootfs: `install_modules: false`, modules not added */
	bool apply_overlay;	/* a tmpfs root image (`apply-overlay: true`, `overlays: {lava:
				 * true}`): the test overlay and the modules written into
				 * the job's copy of it (format ext2, ext3 or ext4); on an
				 * nfsrootfs, LAVA's spelling of what labd does anyway */
	char *format;		/* "ext4", "qcow2" ...: what the image is, or NULL */
	char *prefix;		/* nfsrootfs: the archive's directory that is the root, or NULL */
	char *path;		/* modules, the root's overlays: where in the root file system
				 * they go ("/" when NULL) */
	bool into_root;		/* one of nfsrootfs' `overlays`: unpacked into the NFS root,
				 * not staged for the board (label "nfsrootfs-overlay-<name>") */
	bool sparse;		/* fastboot: an Android sparse image, flashed as it is */
	int line;
};

/** A file of the job attached to its QEMU as a drive (-drive file={label},..., -hda ...). */
struct job_qemu_drive {
	char *label;		/* the artifact of the same deploy */
	char *format;		/* "raw" (default) or "qcow2" */
	char *interface;	/* "virtio", "ide", "scsi", "sd", or NULL: the machine's */
	char *media;		/* "disk", "cdrom", or NULL */
	int index;		/* -1 when not given (-hda is 0, -hdb 1 ... -cdrom 2) */
	bool readonly;
	int line;
};

/**
 * What a job gives its QEMU, from image_arg and context (extra_options,
 * memory): only the allowed set (job_qemu.c), each within the limits of the
 * device type (job_check_device_type()).  Labels are of the deploy's artifacts.
 */
struct job_qemu_args {
	char *append;		/* -append / --append: kernel command line, or NULL */
	uint64_t memory_mib;	/* -m, context memory; 0: the device type's */
	unsigned cpus;		/* -smp; 0: the device type's */
	char *kernel;		/* -kernel {label}: the label, or NULL */
	char *initrd;		/* -initrd {label} */
	char *dtb;		/* -dtb {label} */
	struct job_qemu_drive *drives;
	size_t n_drives;
	int append_line, memory_line, cpus_line;	/* where they were given, 0 if not */
};

struct job_deploy {
	enum deploy_to to;
	struct job_artifact *artifacts;
	size_t n_artifacts;
	char *os;		/* "debian", "oe", ...: how test definitions install their deps */
	struct job_qemu_args qemu;	/* tmpfs: what its images' image_arg give QEMU */
};

struct job_auto_login {
	char *login_prompt;	/* regex */
	char *username;
	char *password_prompt;	/* regex or NULL */
	char *password;		/* or NULL */
	char **login_commands;	/* strv: sent after the first shell prompt */
};

struct job_boot {
	enum boot_method method;
	char *commands_name;	/* a command set of the device type, or NULL */
	char **commands;	/* inline command list (strv), or NULL */
	char **prompts;		/* shell prompt regexes (strv); may be empty */
	bool has_auto_login;
	struct job_auto_login auto_login;
	bool reset;		/* minimal: power-cycle the board (default true) */
	char *kernel_start_message;	/* regex override, or NULL */
	bool ignore_kernel_messages;	/* do not fail on panic patterns */
	/* qemu method: what the device type allows the job to choose */
	char *qemu_append;	/* extra kernel command line */
	char *qemu_image;	/* docker: {image}: the container image LAVA would run QEMU
				 * from, which the device type maps to its own QEMU */
	/* bootloader methods */
	int bootloader;		/* enum bootloader driven (method bootloader: its
				 * `bootloader` key), -1 for the other methods */
	bool expect_shell;	/* false: done once the kernel starts (installers);
				 * default true */
	/* transfer_overlay: the board fetches the test overlay from labd over HTTP */
	char *download_command;	/* typed with the overlay's URL appended, or NULL */
	char *unpack_command;	/* typed with the downloaded file's name appended */
};

/** One step of an interactive test: send a command, wait for one of the patterns. */
struct job_interactive_pattern {
	char *message;		/* regex */
	char *exception;	/* failures: raise "JobError" etc. or NULL; error text */
	char *error;		/* failures: message used as the failure reason */
};

struct job_interactive_step {
	char *name;		/* result name, or NULL: no result recorded */
	char *command;		/* NULL: only wait */
	struct job_interactive_pattern *successes;
	size_t n_successes;
	struct job_interactive_pattern *failures;
	size_t n_failures;
	bool wait_for_prompt;	/* default true */
	int line;
};

struct job_interactive {
	char *name;		/* test suite name */
	char **prompts;		/* strv of regexes */
	bool echo_discard;	/* skip the echo of the command before matching */
	struct job_interactive_step *steps;
	size_t n_steps;
	int line;
};

struct job_monitor {
	char *name;		/* test suite name */
	char *start;		/* regex starting the monitored region */
	char *end;		/* regex ending it */
	char *pattern;		/* regex with (?P<test_case_id>..), (?P<result>..), optionally
				 * (?P<measurement>..) and (?P<units>..) */
	struct kv fixupdict;	/* maps raw result strings to pass/fail/skip/unknown */
	int line;
};

/* skip_install: true skips it all, or a list of parts (LAVA: deps, steps, keys, ...) */
#define TESTDEF_SKIP_DEPS 1u
#define TESTDEF_SKIP_STEPS 2u
#define TESTDEF_SKIP_ALL (TESTDEF_SKIP_DEPS | TESTDEF_SKIP_STEPS)

enum testdef_source {
	TESTDEF_INLINE,		/* the document is in the job */
	TESTDEF_URL,		/* fetched from a URL */
	TESTDEF_GIT,		/* a file of a git repository, with the repository's tree */
};

/** A LAVA test definition: inline, from a URL or from a git repository. */
struct job_testdef {
	char *name;		/* test suite name */
	char *from;		/* "inline", "url" or "git" */
	enum testdef_source source;
	char *path;		/* inline: a name; git: the file inside the repository */
	json_t *definition;	/* inline: the "Lava-Test Test Definition 1.0" document */
	char *url;		/* from: url, the definition; from: git, the repository */
	char *revision;		/* git: commit, tag or branch to check out, or NULL */
	char *branch;		/* git: branch, when no revision is given, or NULL */
	bool history;		/* git: LAVA's `history` (labd never ships .git) */
	bool kmsg;		/* lava-signal: kmsg, signals written to /dev/kmsg */
	unsigned skip_install;	/* TESTDEF_SKIP_*: parts of the install section skipped */
	struct kv parameters;	/* exported as shell variables before the steps */
	char **expected;	/* strv: test cases that must appear */
	int line;
};

struct job_test {
	enum test_kind kind;
	struct job_interactive *interactive;
	size_t n_interactive;
	struct job_monitor *monitors;
	size_t n_monitors;
	struct job_testdef *definitions;
	size_t n_definitions;
};

struct job_action {
	enum job_action_kind kind;
	int line;
	uint64_t timeout;	/* effective timeout of the whole action */
	bool timeout_skip;	/* timeout: {skip: true}: timing out does not fail the job */
	unsigned failure_retry;	/* attempts after the first one (LAVA failure_retry - 1) */
	struct kv timeouts;	/* "stage-name" -> usec as decimal string, for this action */
	union {
		struct job_deploy deploy;
		struct job_boot boot;
		struct job_test test;
	};
};

enum notify_status {
	NOTIFY_RUNNING,		/* when the job starts running */
	NOTIFY_FINISHED,	/* whatever the outcome */
	NOTIFY_COMPLETE,
	NOTIFY_INCOMPLETE,
	NOTIFY_CANCELED,
	NOTIFY_ALL,		/* running, then finished */
};

enum notify_dataset {
	NOTIFY_DATASET_MINIMAL,	/* the job's fields */
	NOTIFY_DATASET_LOGS,	/* + the log in LAVA's YAML format */
	NOTIFY_DATASET_RESULTS,	/* + the results per suite */
	NOTIFY_DATASET_ALL,	/* logs and results */
};

/** An HTTP callback of LAVA's notify block. */
struct job_callback {
	char *url;		/* http(s)://, may hold {ID}, {STATUS}, {STATUS_STRING} ... */
	bool post;		/* method POST (default GET) */
	char *token;		/* LAVA: a token *name*, sent as the @header value, or NULL */
	char *header;		/* default "Authorization" */
	enum notify_dataset dataset;	/* default minimal */
	bool json;		/* content-type json (default urlencoded) */
	int line;
};

struct job_notify {
	enum notify_status status;
	struct job_callback *callbacks;
	size_t n_callbacks;
};

struct job {
	char *file;		/* name used in diagnostics */
	char *name;
	char *device_type;
	char **tags;		/* strv: the board must have all of them */
	int priority;		/* 0..100; LAVA's low/medium/high are 0/50/100 */
	uint64_t timeout;	/* whole job */
	uint64_t action_timeout;	/* default per action */
	uint64_t connection_timeout;	/* default per console wait (one expect) */
	struct kv stage_timeouts;	/* timeouts.actions: "stage-name" -> usec */
	struct kv connection_timeouts;	/* timeouts.connections: "stage-name" -> usec */
	unsigned infrastructure_retries;	/* re-runs on another board after an
						 * infrastructure error (labd) */
	json_t *context;	/* object; only whitelisted keys (see job.c) */
	struct job_qemu_args qemu_context;	/* context extra_options and memory */
	json_t *metadata;	/* object; free-form, copied to results */
	uint64_t queue_timeout;	/* timeouts.queue: still queued after it, the job is
				 * canceled; 0 = wait forever */
	struct kv secrets;	/* secrets: NAME -> value, exported to the test definitions */
	bool has_notify;
	struct job_notify notify;
	char *visibility;	/* "public", "personal" or "group" (informational) */
	struct job_action *actions;
	size_t n_actions;
	json_t *line_map;	/* private: source line of every value, for job_check_device_type() */
	char **notices;		/* strv: "FILE:LINE: warning: cause" (a duplicate key ...)
				 * and "FILE:LINE: note: cause" (what labd ignores, why) */
	unsigned n_warnings;	/* of @notices: `labctl check --strict` refuses them */
	/* set by labd, never from a job file: a holder's session boot (labctl boot) */
	bool session;		/* labctl boot: test actions are skipped and the board stays
				 * as the job leaves it (no final power-off): the shell
				 * goes to the holder */
};

/**
 * job_parse() - parse and validate a job definition
 * @text: the document (need not be NUL-terminated)
 * @filename: used in diagnostics ("job.yaml:12: unknown key 'foo'")
 * @ret: the job on success, to be freed with job_free()
 * @diag: every problem found, in document order
 *
 * Warnings and notes of a valid job are in its @notices; those of an invalid
 * one are in @diag with its errors, in document order.
 *
 * Returns 0, -EINVAL when the document is invalid (see @diag), -E2BIG when
 * larger than JOB_MAX_SIZE, or -ENOMEM.
 */
int job_parse(const char *text, size_t len, const char *filename, enum job_format fmt,
	      struct job **ret, struct diag *diag);

/**
 * job_check_device_type() - check that @type can run @job
 *
 * Boot and deploy methods supported, named command sets defined, context keys
 * allowed.  Returns 0 or -EINVAL with the causes in @diag.
 */
int job_check_device_type(const struct job *job, const struct device_type *type,
			  struct diag *diag);

/**
 * job_check_git_allow() - every git repository of @job starts with one of the
 * URL prefixes of @allow (labd.conf `git_allow`; NULL or empty allows none).
 * Returns 0 or -EINVAL with "FILE:LINE: ..." for each other one in @diag.
 */
int job_check_git_allow(const struct job *job, char *const *allow, struct diag *diag);

/**
 * job_redact() - @job's text (as parsed, in format @fmt: YAML or JSON) as labd
 * stores it: every value of `secrets` and every auto_login password
 * replaced by "[secret]" (job_redact.c).  *@ret is a new text of *@ret_len
 * bytes, a plain copy when there is nothing to hide.  Returns 0, -ENOMEM or
 * -EINVAL (a value that is not a scalar of the text).
 */
int job_redact(const struct job *job, const char *text, size_t len, enum job_format fmt,
	       char **ret, size_t *ret_len);

/** job_stage_timeout() - timeout of a named stage ("bootloader-commands", ...) of @a:
 * the action's own, then the job's timeouts.actions, then @fallback. */
uint64_t job_stage_timeout(const struct job *job, const struct job_action *a,
			   const char *stage, uint64_t fallback);

/** job_connection_timeout() - timeout of one console wait in @stage. */
uint64_t job_connection_timeout(const struct job *job, const char *stage);

/** job_free() - free a job and all it owns; accepts NULL; returns NULL. */
struct job *job_free(struct job *job);

/* Names for the enums, as they appear in job files and in the API. */
const char *job_action_kind_name(enum job_action_kind k);
const char *deploy_to_name(enum deploy_to t);

/** job_deploy_nfsrootfs() - the deploy's `nfsrootfs` artifact, or NULL. */
const struct job_artifact *job_deploy_nfsrootfs(const struct job_deploy *d);

/** job_uses_nfs() - whether a deploy of @job unpacks an NFS root. */
bool job_uses_nfs(const struct job *job);
const char *boot_method_name(enum boot_method m);

/** boot_method_bootloader() - the enum bootloader of a bootloader method
 * (u-boot, grub ...; not `bootloader`, whose dialect a job names), else -1. */
int boot_method_bootloader(enum boot_method m);
const char *test_kind_name(enum test_kind k);

#endif
