// SPDX-License-Identifier: GPL-2.0-or-later
/* test-qemu-cmdline.c -- QEMU's argv from a device type: substitution and what jobs cannot do */
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "config/qemu_cmdline.h"
#include "core/kv.h"
#include "core/strv.h"
#include "tap.h"

static char *x86_args[] = {
	"-m", "{MEMORY}", "-kernel", "{KERNEL}", "-initrd", "{RAMDISK}", "-append", "{APPEND}",
	"-netdev", "user,id=n0,tftp={TFTP_ROOT}", "-drive", "file={BOARD_DIR}/disk.img,if=virtio",
	NULL
};
static char *allowed[] = { "kernel", "initrd", NULL };

struct fixture {
	struct lab_config config;
	struct device_type type;
	struct device dev;
	struct kv vars;
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->config.state_dir = "/var/lib/labd";
	f->config.tftp_root = "/srv/tftp";
	f->type.name = "qemu-x86_64";
	f->type.has_qemu = true;
	f->type.qemu.binary = "qemu-system-x86_64";
	f->type.qemu.args = x86_args;
	f->type.qemu.append_default = "console=ttyS0";
	f->type.qemu.allowed_images = allowed;
	f->dev.name = "qx-01";
	f->dev.type = &f->type;
	kv_set(&f->type.parameters, "MEMORY", "256");
	kv_set(&f->vars, "KERNEL", "/var/lib/labd/jobs/7/images/vmlinux");
	kv_set(&f->vars, "RAMDISK", "/var/lib/labd/jobs/7/images/initrd.cpio.gz");
}

static void fixture_release(struct fixture *f)
{
	kv_release(&f->type.parameters);
	kv_release(&f->dev.parameters);
	kv_release(&f->vars);
}

static int build(struct fixture *f, char ***argv, char *err, size_t len)
{
	struct qemu_cmdline_in in = {
		.config = &f->config,
		.dev = &f->dev,
		.job_vars = &f->vars,
		.serial_fd = 3,
		.serial_log = "/var/lib/labd/boards/qx-01/qemu-serial.log",
	};

	err[0] = '\0';
	return qemu_cmdline_build(&in, argv, err, len);
}

/* The argument after the first @opt in @argv, or NULL. */
static const char *arg_after(char **argv, const char *opt)
{
	for (size_t i = 0; argv[i]; i++)
		if (!strcmp(argv[i], opt))
			return argv[i + 1];
	return NULL;
}

TEST(test_qemu_cmdline__fixed_part_first)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	CHECK_STR(argv[0], "qemu-system-x86_64");
	CHECK_STR(argv[1], "-display");
	CHECK_STR(argv[5], "-chardev");
	CHECK_STR(argv[6], "socket,id=labd-serial,fd=3,logfile=/var/lib/labd/boards/qx-01/qemu-serial.log");
	CHECK_STR(argv[7], "-serial");
	CHECK_STR(argv[8], "chardev:labd-serial");
	CHECK_STR(argv[9], "-m");
	CHECK_INT(strv_length(argv), ==, 9 + strv_length(x86_args));
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__substitutions)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	kv_set(&f.dev.parameters, "MEMORY", "512");	/* the device overrides its type */
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	CHECK_STR(arg_after(argv, "-m"), "512");
	CHECK_STR(arg_after(argv, "-kernel"), "/var/lib/labd/jobs/7/images/vmlinux");
	CHECK_STR(arg_after(argv, "-initrd"), "/var/lib/labd/jobs/7/images/initrd.cpio.gz");
	CHECK_STR(arg_after(argv, "-append"), "console=ttyS0");	/* no job: the type's */
	CHECK_STR(arg_after(argv, "-netdev"), "user,id=n0,tftp=/srv/tftp");
	CHECK_STR(arg_after(argv, "-drive"), "file=/var/lib/labd/boards/qx-01/disk.img,if=virtio");
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__append_is_one_argument)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	kv_set(&f.vars, "APPEND", "console=ttyS0 quiet -snapshot, -device foo");
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	CHECK_STR(arg_after(argv, "-append"), "console=ttyS0 quiet -snapshot, -device foo");
	CHECK(!arg_after(argv, "-device"));
	CHECK(!arg_after(argv, "-snapshot"));
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__job_cannot_set_other_variables)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	/* a job deploying "memory" or "tftp_root" images does not reach QEMU */
	kv_set(&f.vars, "MEMORY", "/jobs/7/images/x");
	kv_set(&f.vars, "TFTP_ROOT", "/etc");
	kv_set(&f.vars, "BOARD_DIR", "/etc");
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	CHECK_STR(arg_after(argv, "-m"), "256");
	CHECK_STR(arg_after(argv, "-netdev"), "user,id=n0,tftp=/srv/tftp");
	CHECK_STR(arg_after(argv, "-drive"), "file=/var/lib/labd/boards/qx-01/disk.img,if=virtio");
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__comma_in_a_job_value_inside_an_option)
{
	static char *args[] = { "-drive", "file={KERNEL},if=virtio", NULL };
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	f.type.qemu.args = args;
	kv_set(&f.vars, "KERNEL", "/x/vmlinux,if=none,file=/etc/shadow");
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, -EINVAL);
	CHECK(!argv);
	CHECK_CONTAINS(err, "{KERNEL} holds a comma");
	fixture_release(&f);
}

TEST(test_qemu_cmdline__undefined_variable)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	kv_release(&f.vars);
	kv_set(&f.vars, "KERNEL", "/k");
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, -EINVAL);
	CHECK_CONTAINS(err, "QEMU argument '{RAMDISK}' of device type 'qemu-x86_64' needs {RAMDISK}");
	fixture_release(&f);
}

TEST(test_qemu_cmdline__braces_that_are_no_variable)
{
	static char *args[] = { "-device", "{\"driver\":\"virtio-rng-pci\"}", "-name", "{x}{}", NULL };
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	f.type.qemu.args = args;
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	CHECK_STR(arg_after(argv, "-device"), "{\"driver\":\"virtio-rng-pci\"}");
	CHECK_STR(arg_after(argv, "-name"), "{x}{}");
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__no_qemu_group)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	f.type.has_qemu = false;
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, -EINVAL);
	CHECK_CONTAINS(err, "device type 'qemu-x86_64' has no 'qemu' group");
	fixture_release(&f);
}

TEST(test_qemu_cmdline__pty_console_refused)
{
	struct fixture f;
	char **argv = NULL, err[512];

	fixture_init(&f);
	f.type.qemu.console = "pty";
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, -EINVAL);
	CHECK_CONTAINS(err, "qemu console 'pty' is not supported");
	f.type.qemu.console = "socket";
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__commas_in_the_log_path_are_escaped)
{
	struct fixture f;
	struct qemu_cmdline_in in = { .config = &f.config, .dev = &f.dev, .serial_fd = 9,
				      .serial_log = "/var/a,b/log" };
	char **argv = NULL, err[512];

	fixture_init(&f);
	in.job_vars = &f.vars;
	CHECK_INT(qemu_cmdline_build(&in, &argv, err, sizeof(err)), ==, 0);
	CHECK_STR(argv[6], "socket,id=labd-serial,fd=9,logfile=/var/a,,b/log");
	strv_free(argv);
	fixture_release(&f);
}

TEST(test_qemu_cmdline__job_arguments_last_one_each)
{
	struct fixture f;
	char **argv = NULL, err[512];
	size_t n;

	fixture_init(&f);
	kv_set(&f.vars, QEMU_CMDLINE_JOB_ARGS,
	       "-m\n4096M\n-drive\nfile=/var/lib/labd/jobs/7/images/r.ext4,format=raw,index=0,media=disk");
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	n = strv_length(argv);
	CHECK_INT(n, ==, 9 + strv_length(x86_args) + 4);
	CHECK_STR(argv[n - 4], "-m");	/* after the type's: QEMU takes the last -m */
	CHECK_STR(argv[n - 3], "4096M");
	CHECK_STR(argv[n - 1], "file=/var/lib/labd/jobs/7/images/r.ext4,format=raw,index=0,media=disk");
	strv_free(argv);
	kv_set(&f.vars, QEMU_CMDLINE_JOB_ARGS, "-append\n");	/* an empty argument at the end */
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	n = strv_length(argv);
	CHECK_STR(argv[n - 2], "-append");
	CHECK_STR(argv[n - 1], "");
	strv_free(argv);
	kv_set(&f.vars, QEMU_CMDLINE_JOB_ARGS, "");
	CHECK_INT(build(&f, &argv, err, sizeof(err)), ==, 0);
	CHECK_INT(strv_length(argv), ==, 9 + strv_length(x86_args));
	strv_free(argv);
	fixture_release(&f);
}

TEST_LIST(test_qemu_cmdline__fixed_part_first, test_qemu_cmdline__job_arguments_last_one_each, test_qemu_cmdline__substitutions,
	  test_qemu_cmdline__append_is_one_argument,
	  test_qemu_cmdline__job_cannot_set_other_variables,
	  test_qemu_cmdline__comma_in_a_job_value_inside_an_option,
	  test_qemu_cmdline__undefined_variable, test_qemu_cmdline__braces_that_are_no_variable,
	  test_qemu_cmdline__no_qemu_group, test_qemu_cmdline__pty_console_refused,
	  test_qemu_cmdline__commas_in_the_log_path_are_escaped);
