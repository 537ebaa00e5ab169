// SPDX-License-Identifier: GPL-2.0-or-later
/* test-config.c -- dispatcher/config/config*.c on the labs in tests/data/config/ */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <unistd.h>

#include "config/config.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "drivers/console.h"
#include "drivers/power.h"
#include "tap.h"

#define USEC 1000000ULL

static char *data;	/* tests/data/config, absolute, as in the messages */

static void data_init(void)
{
	const char *top = getenv("LABD_TOP");
	char cwd[PATH_MAX] = ".";
	struct strbuf sb = STRBUF_INIT;

	if (data)
		return;
	if (!top && getcwd(cwd, sizeof(cwd)))
		top = cwd;
	strbuf_addf(&sb, "%s/tests/data/config", top ? top : ".");
	data = strbuf_detach(&sb, NULL);
}

static char *path_in(const char *rel)
{
	struct strbuf sb = STRBUF_INIT;

	data_init();
	strbuf_addf(&sb, "%s/%s", data, rel);
	return strbuf_detach(&sb, NULL);
}

static int load(const char *file, struct lab_config **ret, struct diag *d)
{
	char *path = path_in(file);
	int r = config_load(path, ret, d);

	free(path);
	return r;
}

/* @fmt with every "@/" replaced by the data directory; caller frees. */
static char *expand(const char *fmt)
{
	struct strbuf sb = STRBUF_INIT;
	const char *at;

	while ((at = strstr(fmt, "@/"))) {
		strbuf_add(&sb, fmt, (size_t)(at - fmt));
		strbuf_addf(&sb, "%s/", data);
		fmt = at + 2;
	}
	strbuf_addstr(&sb, fmt);
	return strbuf_detach(&sb, NULL);
}

static bool diag_holds(const struct diag *d, const char *msg)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->msgs[i], msg))
			return true;
	return false;
}

/* Whether @d holds exactly the messages @want (NULL-terminated, "@/" = data dir). */
static bool diag_is(const struct diag *d, const char *const *want)
{
	bool ok = strv_length((char *const *)want) == d->n;
	size_t i;

	for (i = 0; want[i]; i++) {
		char *msg = expand(want[i]);

		if (!diag_holds(d, msg)) {
			printf("#   missing: %s\n", msg);
			ok = false;
		}
		free(msg);
	}
	for (i = 0; !ok && i < d->n; i++)
		printf("#   got:     %s\n", d->msgs[i]);
	return ok;
}

/* A lab that must fail to load with exactly @want. */
static bool fails_with(const char *lab, const char *const *want)
{
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;
	char file[PATH_MAX];
	bool ok;
	int r;

	snprintf(file, sizeof(file), "%s/labd.conf", lab);
	r = load(file, &c, &d);
	ok = r == -EINVAL && !c && diag_is(&d, want);
	if (r != -EINVAL)
		printf("#   config_load() returned %d\n", r);
	diag_release(&d);
	return ok;
}

/* @v joined with ','; valid until the next call */
static const char *joined(char **v)
{
	static char buf[256];
	char *s = strv_join(v, ",");

	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	free(s);
	return buf;
}

static bool str_is(const char *got, const char *want)
{
	if (got && !strcmp(got, want))
		return true;
	printf("#   '%s' is not '%s'\n", got ? got : "(null)", want);
	return false;
}

static bool path_is(const char *got, const char *rel)
{
	char *want = path_in(rel);
	bool ok = str_is(got, want);

	free(want);
	return ok;
}

TEST(test_config__lab)
{
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;

	CHECK_INT(load("good/labd.conf", &c, &d), ==, 0);
	CHECK_INT(d.n, ==, 0);
	CHECK_INT(c->refcount, ==, 1);
	CHECK(path_is(c->path, "good/labd.conf"));
	CHECK_STR(c->lab_name, "test-lab");
	CHECK(path_is(c->state_dir, "good/state"));
	CHECK(path_is(c->devices_dir, "good/devices"));
	CHECK(path_is(c->tftp_root, "good/state/tftp"));
	CHECK_STR(c->server_ip, "10.0.2.2");
	CHECK_STR(c->artifact_dir, "/srv/artifacts");
	CHECK_INT(c->max_artifact_size, ==, 1048576);
	CHECK_STR(c->http.listen, "127.0.0.1:8640");
	CHECK(path_is(c->http.unix_socket, "good/run/labd.sock"));
	CHECK_INT(strv_length(c->http.tokens), ==, 1);
	CHECK(!c->http.require_token);
	CHECK_INT(c->n_types, ==, 3);
	CHECK_INT(c->n_devices, ==, 3);
	CHECK_INT(c->n_files, ==, 4);	/* labd.conf and three board files, not README */
	CHECK(config_ref(c) == c);
	CHECK_INT(c->refcount, ==, 2);
	CHECK(config_unref(c) == NULL);
	CHECK_INT(c->refcount, ==, 1);
	CHECK(config_unref(c) == NULL);
	CHECK(config_unref(NULL) == NULL);
}

/* Other modules' sections stay reachable from lab_config.root. */
TEST(test_config__sections)
{
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;
	const config_setting_t *s;
	const char *url = NULL;

	CHECK_INT(load("good/labd.conf", &c, &d), ==, 0);
	CHECK(c->root);
	s = config_setting_get_member(c->root, "backends");
	CHECK(s && config_setting_is_group(s));
	CHECK(config_setting_lookup_string(config_setting_get_member(s, "kcidb"), "url", &url));
	CHECK_STR(url, "https://kcidb.example.invalid/submit");
	CHECK(config_setting_get_member(c->root, "users"));
	config_unref(c);
}

/* A type without a parent: its own values, and the defaults of config.h for the rest;
 * bootloader keys it does not set stay unset (the dialect's defaults apply at boot). */
TEST(test_config__type_defaults)
{
	const struct device_type *t;
	struct lab_config *c = NULL;
	const struct bootloader_params *ub;
	struct diag d = DIAG_INIT;

	CHECK_INT(load("good/labd.conf", &c, &d), ==, 0);
	t = config_find_type(c, "base-uboot");
	CHECK(t && !t->extends);
	CHECK(path_is(t->file, "good/devices/00-uboot.conf"));
	CHECK_INT(t->line, ==, 3);
	ub = &t->bootloaders[BOOTLOADER_UBOOT];
	CHECK(ub->configured && !t->bootloaders[BOOTLOADER_GRUB].configured);
	CHECK(!ub->interrupt_prompt && !ub->interrupt_char && !ub->bootloader_prompt);
	CHECK(ub->interrupt_newline == -1 && ub->needs_interrupt == -1);
	CHECK(!ub->final_message && !ub->error_messages && !ub->job_error_messages);
	CHECK_INT(ub->char_delay, ==, 10000);
	CHECK_STR(ub->default_commands, "ramdisk");
	CHECK_STR(kv_get(&ub->command_sets, "ramdisk"),
		  "setenv serverip {SERVER_IP}\ntftp {KERNEL_ADDR} {KERNEL}\n"
		  "tftp {RAMDISK_ADDR} {RAMDISK}\n{BOOTX}");
	CHECK_STR(kv_get(&ub->command_sets, "nfs"), "setenv serverip {SERVER_IP}\n{BOOTX}");
	CHECK_STR(t->kernel.start_message, "Linux version [0-9]");
	CHECK_STR(t->kernel.login_prompt, "login:");
	CHECK_STR(t->kernel.prompts[0], "root@[a-z0-9-]+:[^#]*# ");
	CHECK_INT(t->kernel.char_delay, ==, 0);
	CHECK_INT(t->power_on_delay, ==, POWER_DEFAULT_CYCLE_DELAY);
	CHECK(!t->has_qemu);
	CHECK_STR(joined(t->boot_methods), "u-boot,minimal");
	CHECK_STR(t->deploy_methods[1], "none");
	CHECK_STR(t->context_allowed[0], "extra_kernel_args");
	CHECK_STR(kv_get(&t->parameters, "KERNEL_ADDR"), "0x40400000");
	CHECK_STR(kv_get(&t->parameters, "RAMDISK_ADDR"), "0x44000000");	/* hex int */
	CHECK_STR(kv_get(&t->parameters, "BAUD"), "115200");
	CHECK_STR(kv_get(&t->bootx, "booti.kernel"), "0x40400000");
	CHECK_STR(kv_get(&t->bootx, "booti.dtb"), "0x40000000");
	CHECK_INT(t->bootx.n, ==, 3);
	config_unref(c);
}

/* extends: groups merge key by key, lists replace, the rest is inherited. */
TEST(test_config__type_extends)
{
	const struct device_type *t;
	struct lab_config *c = NULL;
	const struct bootloader_params *ub;
	struct diag d = DIAG_INIT;

	CHECK_INT(load("good/labd.conf", &c, &d), ==, 0);
	t = config_find_type(c, "qemu-arm64-uboot");
	CHECK(t);
	CHECK_STR(t->extends, "base-uboot");
	ub = &t->bootloaders[BOOTLOADER_UBOOT];
	CHECK_STR(ub->interrupt_prompt, "Hit any key to stop autoboot: [0-9]");
	CHECK(!ub->bootloader_prompt);
	CHECK_INT(ub->char_delay, ==, 10000);
	CHECK_INT(strv_length(ub->error_messages), ==, 2);
	CHECK_STR(ub->error_messages[0], "TFTP error");
	CHECK_STR(kv_get(&ub->command_sets, "nfs"), "setenv bootargs root=/dev/nfs");
	CHECK(kv_get(&ub->command_sets, "ramdisk"));
	CHECK_STR(ub->default_commands, "ramdisk");
	CHECK_STR(t->kernel.login_prompt, "login:");
	CHECK_STR(joined(t->boot_methods), "u-boot,minimal");
	CHECK_INT(t->power_on_delay, ==, USEC / 2);
	CHECK_STR(kv_get(&t->parameters, "KERNEL_ADDR"), "0x40400000");
	CHECK_STR(kv_get(&t->parameters, "DTB_ADDR"), "0x40000000");
	CHECK_STR(kv_get(&t->bootx, "booti.kernel"), "0x40400000");
	CHECK_STR(kv_get(&t->bootx, "booti.dtb"), "0x48000000");
	CHECK_STR(kv_get(&t->bootx, "bootz.kernel"), "0x40008000");
	CHECK(!kv_get(&t->bootx, "bootm.kernel"));
	config_unref(c);
}

TEST(test_config__type_qemu)
{
	const struct device_type *t;
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;

	CHECK_INT(load("good/labd.conf", &c, &d), ==, 0);
	t = config_find_type(c, "qemu-x86");
	CHECK(t && t->has_qemu);
	CHECK_STR(t->qemu.binary, "qemu-system-x86_64");
	CHECK_INT(strv_length(t->qemu.args), ==, 10);
	CHECK_STR(t->qemu.args[7], "{KERNEL}");
	CHECK_STR(t->qemu.console, "socket");
	CHECK_STR(t->qemu.append_default, "console=ttyS0 panic=-1");
	CHECK_STR(joined(t->qemu.allowed_images), "kernel,initrd");
	CHECK(t->qemu.append_allowed);
	CHECK_STR(t->boot_methods[0], "qemu");
	CHECK_STR(t->kernel.start_message, "Linux version");
	CHECK_INT(t->kernel.char_delay, ==, 2000);
	CHECK(!config_find_type(c, "nosuch"));
	config_unref(c);
}

TEST(test_config__devices)
{
	const struct device *a, *b, *x;
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;

	CHECK_INT(load("good/labd.conf", &c, &d), ==, 0);
	a = config_find_device(c, "arm64-01");
	b = config_find_device(c, "arm64-02");
	x = config_find_device(c, "x86-01");
	CHECK(a && b && x && !config_find_device(c, "nosuch"));
	CHECK(c->devices[0] == a && c->devices[2] == x);
	CHECK(a->type == config_find_type(c, "qemu-arm64-uboot"));
	CHECK_STR(a->type_name, "qemu-arm64-uboot");
	CHECK(path_is(a->file, "good/devices/10-boards.conf"));
	CHECK_INT(a->line, ==, 3);
	CHECK_STR(a->description, "QEMU virt arm64 with U-Boot");
	CHECK_STR(joined(a->tags), "arm64,tftp");
	CHECK_STR(a->console.driver, "pty");
	CHECK(a->console.settings && config_setting_is_group(a->console.settings));
	CHECK_INT(a->console.line, ==, 8);
	CHECK(a->has_power);
	CHECK_STR(a->power.driver, "command");
	CHECK_INT(a->power_on_delay, ==, 2 * USEC);
	CHECK_STR(device_param(a, "KERNEL_ADDR"), "0x41000000");	/* the device's */
	CHECK_STR(device_param(a, "DTB_ADDR"), "0x40000000");		/* its type's */
	CHECK_STR(device_param(a, "CONSOLE"), "ttyAMA0");		/* the parent's */
	CHECK(!device_param(a, "NOSUCH"));
	CHECK(!b->has_power && !b->power.driver && !b->tags && !b->description);
	CHECK_STR(b->console.driver, "tcp");
	CHECK_INT(b->power_on_delay, ==, USEC / 2);
	CHECK_STR(device_param(b, "KERNEL_ADDR"), "0x40400000");
	CHECK(x->type->has_qemu && x->has_power);
	CHECK_STR(x->power.driver, "fake");
	CHECK_INT(x->power_on_delay, ==, POWER_DEFAULT_CYCLE_DELAY);
	CHECK_INT(x->storage_info.n, ==, 2);	/* in order: lava-target-storage lists them so */
	CHECK_STR(x->storage_info.keys[0], "SATA");
	CHECK_STR(x->storage_info.vals[0], "/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001");
	CHECK_STR(x->storage_info.keys[1], "USB");
	CHECK_INT(a->storage_info.n, ==, 0);
	config_unref(c);
}

TEST(test_config__missing_file)
{
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;

	CHECK_INT(load("nosuch/labd.conf", &c, &d), ==, -ENOENT);
	CHECK(!c);
	CHECK(diag_is(&d, (const char *const[]){
		"@/nosuch/labd.conf: cannot read file: No such file or directory", NULL }));
	diag_release(&d);
}

TEST(test_config__bad_driver)
{
	char *cons = strv_join((char *const *)console_driver_names(), ", ");
	char *pow = strv_join((char *const *)power_driver_names(), ", ");
	char want_c[512], want_p[512];

	snprintf(want_c, sizeof(want_c),
		 "@/bad-driver/devices/boards.conf:5: unknown console driver 'serial' (known: %s)",
		 cons);
	snprintf(want_p, sizeof(want_p),
		 "@/bad-driver/devices/boards.conf:6: unknown power driver 'apc' (known: %s)", pow);
	free(cons);
	free(pow);
	CHECK(fails_with("bad-driver", (const char *const[]){ want_c, want_p, NULL }));
}

TEST(test_config__missing_key)
{
	CHECK(fails_with("missing-key", (const char *const[]){
		"@/missing-key/devices/boards.conf:2: missing key 'type'",
		"@/missing-key/devices/boards.conf:9: missing key 'driver'",
		"@/missing-key/devices/boards.conf:11: missing key 'name'",
		"@/missing-key/devices/boards.conf:15: missing key 'console'",
		"@/missing-key/devices/boards.conf:22: missing key 'name'",
		NULL }));
}

/* Including a driver's own check: its diagnostics land in the same diag. */
TEST(test_config__bad_type)
{
	CHECK(fails_with("bad-type", (const char *const[]){
		"@/bad-type/devices/boards.conf:3: 'power_on_delay' must be a number of seconds, not string",
		"@/bad-type/devices/boards.conf:4: 'needs_interrupt' must be true or false, not string",
		"@/bad-type/devices/boards.conf:9: 'tags' must be a string or a list of strings, not integer",
		"@/bad-type/devices/boards.conf:10: 'baud' must be an integer, not string",
		"@/bad-type/devices/boards.conf:11: 'BAUD' must be a string or an integer, not float",
		"@/bad-type/devices/boards.conf:12: storage_info: 'sda' of 'SATA' must be an absolute path without blanks or quotes",
		"@/bad-type/devices/boards.conf:12: storage_info: '/dev/sd b' of 'USB' must be an absolute path without blanks or quotes",
		NULL }));
}

TEST(test_config__unknown_key)
{
	CHECK(fails_with("unknown-key", (const char *const[]){
		"@/unknown-key/labd.conf:2: unknown key 'listen_port'",
		"@/unknown-key/labd.conf:3: unknown key 'port'",
		"@/unknown-key/devices/boards.conf:3: unknown key 'bootloader-prompt'",
		"@/unknown-key/devices/boards.conf:4: unknown key 'bootq'",
		"@/unknown-key/devices/boards.conf:4: unknown key 'kernal'",
		"@/unknown-key/devices/boards.conf:9: unknown key 'consol'",
		"@/unknown-key/devices/boards.conf:10: unknown key 'speed'",
		"@/unknown-key/devices/boards.conf:12: unknown key 'devics'",
		NULL }));
}

TEST(test_config__duplicates)
{
	CHECK(fails_with("dup-device", (const char *const[]){
		"@/dup-device/devices/b.conf:3: duplicate device 'board-1' (first defined at @/dup-device/devices/a.conf:2)",
		"@/dup-device/devices/b.conf:9: duplicate device type 't' (first defined at @/dup-device/devices/a.conf:1)",
		NULL }));
}

TEST(test_config__unknown_type)
{
	CHECK(fails_with("unknown-type", (const char *const[]){
		"@/unknown-type/devices/boards.conf:3: unknown device type 'nosuch-parent'",
		"@/unknown-type/devices/boards.conf:7: unknown device type 'nosuch'",
		NULL }));
}

/* Each loop is reported once; a type extending a loop member is not reported again. */
TEST(test_config__extends_loop)
{
	CHECK(fails_with("extends-loop", (const char *const[]){
		"@/extends-loop/devices/types.conf:2: device type 'a' extends itself through 'b'",
		"@/extends-loop/devices/types.conf:4: device type 'c' extends itself",
		"@/extends-loop/devices/types.conf:5: device type 'd' extends itself through 'e', 'f'",
		NULL }));
}

TEST(test_config__bad_regex)
{
	CHECK(fails_with("bad-regex", (const char *const[]){
		"@/bad-regex/devices/types.conf:4: invalid regular expression '=> (' in 'bootloader_prompt': missing closing parenthesis at offset 4",
		"@/bad-regex/devices/types.conf:6: invalid regular expression 'bad [x' in 'error_messages': missing terminating ] for character class at offset 6",
		"@/bad-regex/devices/types.conf:8: invalid regular expression '*# ' in 'prompts': quantifier does not follow a repeatable item at offset 0",
		NULL }));
}

/* A broken board file does not hide the problems of the others. */
TEST(test_config__syntax)
{
	CHECK(fails_with("syntax", (const char *const[]){
		"@/syntax/devices/a.conf:3: syntax error: a value is missing after '=' in 'type = ;'",
		"@/syntax/devices/b.conf:2: unknown key 'colour'",
		NULL }));
	CHECK(fails_with("syntax-main", (const char *const[]){
		"@/syntax-main/labd.conf:3: syntax error: a value is missing after '=' in 'http = { listen = }'", NULL }));
}

TEST(test_config__bad_main)
{
	CHECK(fails_with("bad-main", (const char *const[]){
		"@/bad-main/labd.conf:1: 'server_ip' must be an IPv4 or IPv6 address, not 'lab-host'",
		"@/bad-main/labd.conf:2: 'max_artifact_size' must be between 1 and 9223372036854775807, not 0",
		"@/bad-main/labd.conf:5: token 'sha256:...' must have 64 hex digits",
		"@/bad-main/devices/open-api.conf:1: unknown boot method 'pxe' (known: minimal, u-boot, qemu, fastboot, barebox, grub, grub-efi, ipxe, depthcharge, uefi-menu)",
		NULL }));
	CHECK(fails_with("nodevs", (const char *const[]){
		"@/nodevs/labd.conf:1: cannot open devices directory '@/nodevs/missing': No such file or directory",
		NULL }));
}

/* labd check-config */
TEST(test_config__check)
{
	char *good = path_in("good/labd.conf"), *bad = path_in("syntax/labd.conf");
	struct diag d = DIAG_INIT;
	int r1 = config_check(good, &d);
	size_t n1 = d.n;
	int r2 = config_check(bad, &d);

	free(good);
	free(bad);
	CHECK_INT(r1, ==, 0);
	CHECK_INT(n1, ==, 0);
	CHECK_INT(r2, ==, -EINVAL);
	CHECK_INT(d.n, ==, 2);
	diag_release(&d);
}

/*
 * a -> b: f1's console path changed, f2 is written differently but means the
 * same, f3 is untouched.  a -> c: a parameter of the base type changed, which
 * changes every device of the base type and of the type extending it.
 */
TEST(test_config__fingerprint)
{
	struct lab_config *a = NULL, *a2 = NULL, *b = NULL, *c = NULL;
	struct diag d = DIAG_INIT;
	const char *names[] = { "f1", "f2", "f3" };
	size_t i;

	CHECK_INT(load("fingerprint/labd-a.conf", &a, &d), ==, 0);
	CHECK_INT(load("fingerprint/labd-a.conf", &a2, &d), ==, 0);
	CHECK_INT(load("fingerprint/labd-b.conf", &b, &d), ==, 0);
	CHECK_INT(load("fingerprint/labd-c.conf", &c, &d), ==, 0);
	for (i = 0; i < 3; i++) {
		const struct device *da = config_find_device(a, names[i]);

		CHECK(da && da->fingerprint);
		CHECK(!config_device_changed(da, da));
		CHECK(!config_device_changed(da, config_find_device(a2, names[i])));
		CHECK(config_device_changed(da, config_find_device(c, names[i])));
		CHECK(config_device_changed(da, NULL));
	}
	CHECK(config_device_changed(config_find_device(a, "f1"), config_find_device(b, "f1")));
	CHECK(!config_device_changed(config_find_device(a, "f2"), config_find_device(b, "f2")));
	CHECK(!config_device_changed(config_find_device(a, "f3"), config_find_device(b, "f3")));
	CHECK(config_find_device(a, "f2")->line != config_find_device(b, "f2")->line);
	config_unref(a);
	config_unref(a2);
	config_unref(b);
	config_unref(c);
}

/* Two strings of a command list joined by libconfig: a warning each, with their line. */
TEST(test_config__joined_strings_warn)
{
	struct lab_config *c = NULL;
	struct diag d = DIAG_INIT;
	char *want;

	CHECK_INT(load("joined/labd.conf", &c, &d), ==, 0);
	CHECK_INT(c->warnings.n, ==, 2);
	want = expand("@/joined/devices/types.conf:8: u-boot command set 'ramdisk': "
		      "'dhcptftp {KERNEL_ADDR} {KERNEL}' is two strings the config parser "
		      "joined (from line 8): is a comma missing between them?");
	CHECK_STR(c->warnings.msgs[0], want);
	free(want);
	want = expand("@/joined/devices/types.conf:18: grub command set 'ramdisk': "
		      "'linux (tftp)/{KERNEL}initrd (tftp)/{RAMDISK}' is two strings the config "
		      "parser joined (from line 17): is a comma missing between them?");
	CHECK_STR(c->warnings.msgs[1], want);
	free(want);
	config_unref(c);
}

TEST_LIST(test_config__joined_strings_warn, test_config__lab, test_config__sections, test_config__type_defaults,
	  test_config__type_extends, test_config__type_qemu, test_config__devices,
	  test_config__missing_file, test_config__bad_driver, test_config__missing_key,
	  test_config__bad_type, test_config__unknown_key, test_config__duplicates,
	  test_config__unknown_type, test_config__extends_loop, test_config__bad_regex,
	  test_config__syntax, test_config__bad_main, test_config__check,
	  test_config__fingerprint);
