// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-run-bootloader.c -- the bootloader engine (action_boot_bootloader.c)
 * and its dialects run by the real runner on a board the test plays
 * (runbed.h): U-Boot's interrupt, commands with the deploy's substitutions,
 * echo and prompt, the final message and the kernel; the dialects' error
 * messages (the lab's, the job's), each wait's timeout, a lost echo, a
 * board that boots past its bootloader, the job's stage timeouts; barebox,
 * depthcharge's command line file, GRUB, iPXE, a firmware menu, the
 * interrupt delay, the method `bootloader` and expect_shell: false
 */
#include "runbed.h"
#include "tap.h"

#define SEC(n) ((uint64_t)(n) * USEC_PER_SEC)

static struct bed b;

/* Device types of the bed beside devices/sim.conf's. */
static const char types[] =
	"device_types = (\n"
	"  { name = \"bed-grub\"; boot_methods = [ \"grub\" ]; deploy_methods = [ \"tftp\" ];\n"
	"    grub = { commands = { net = ( \"linux (tftp)/{KERNEL} console=ttyS0\", \"boot\" ); };\n"
	"             default_commands = \"net\"; };\n"
	"    kernel = { prompts = [ \"root@sim:[^#]*# \" ]; }; },\n"
	"  { name = \"bed-ipxe\"; boot_methods = [ \"ipxe\" ];\n"
	"    ipxe = { commands = { net = ( \"dhcp\", \"boot tftp://{SERVER_IP}/x\" ); };\n"
	"             default_commands = \"net\"; };\n"
	"    kernel = { prompts = [ \"# \" ]; }; },\n"
	"  { name = \"bed-menu\"; boot_methods = [ \"uefi-menu\" ];\n"
	"    uefi-menu = { commands = { usb = ( \"Boot Manager\", \"USB Disk\" ); };\n"
	"                  default_commands = \"usb\"; };\n"
	"    kernel = { prompts = [ \"# \" ]; }; },\n"
	"  { name = \"bed-slow-uboot\"; extends = \"sim-uboot\"; boot_methods = [ \"u-boot\" ];\n"
	"    u-boot = { interrupt_delay = 2.0; commands = { one = ( \"boot\" ); };\n"
	"               default_commands = \"one\"; }; }\n"
	");\n";

/* The fixture: one board of device type @type, the bed's types, artifacts to deploy. */
static int bed_one(const char *type)
{
	int err = bed_init(&b, NULL);

	if (!err)
		err = bed_file(&b, "devices/01-bed.conf", types);
	if (!err)
		err = bed_file(&b, "artifacts/Image", "ARM64 kernel image\n");
	if (!err)
		err = bed_file(&b, "artifacts/initrd.cpio", "070701 a ramdisk\n");
	if (!err)
		err = bed_file(&b, "artifacts/sim.dtb", "a device tree\n");
	if (!err)
		err = bed_board(&b, "b1", type, NULL, NULL);
	if (err >= 0)
		err = bed_start(&b);
	return err;
}

/* A job for @type: a TFTP deploy of the three artifacts when @deploy, then @boot. */
static const char *job(const char *type, bool deploy, const char *boot)
{
	static char text[4096];

	snprintf(text, sizeof(text),
		 "job_name: bootloader\n"
		 "device_type: %s\n"
		 "timeouts: {job: {minutes: 30}, action: {minutes: 10}, connection: {minutes: 2}}\n"
		 "actions:\n%s%s%s%s%s"
		 "- boot:\n%s",
		 type, deploy ? "- deploy:\n    to: tftp\n" : "",
		 deploy ? "    kernel: {url: 'file://" : "", deploy ? b.dir : "",
		 deploy ? "/artifacts/Image', type: image}\n" : "",
		 deploy ? "    ramdisk: {url: 'file://ARTIFACTS/initrd.cpio'}\n"
			  "    dtb: {url: 'file://ARTIFACTS/sim.dtb'}\n" : "", boot);
	/* ARTIFACTS: the bed's artifact directory */
	for (char *p; (p = strstr(text, "ARTIFACTS"));) {
		char rest[4096];

		snprintf(rest, sizeof(rest), "%s", p + 9);
		snprintf(p, sizeof(text) - (size_t)(p - text), "%s/artifacts%s", b.dir, rest);
	}
	return text;
}

static const char uboot_boot[] =
	"    method: u-boot\n"
	"    commands: ramdisk\n"
	"    auto_login: {login_prompt: 'login:', username: root}\n"
	"    prompts: ['root@sim:~# ']\n";

/*
 * The board answers @n commands typed at its prompt @prompt: each line's
 * echo, then the prompt (after the last, @last instead); the lines typed,
 * joined by '|', in @lines.
 */
static bool answers(size_t n, const char *prompt, const char *last, char *lines, size_t size)
{
	size_t i, len = 0;

	lines[0] = '\0';
	for (i = 0; i < n; i++) {
		const char *line = bed_line(&b, 0);

		if (!line)
			return false;
		len += (size_t)snprintf(lines + len, size - len, "%s%s", i ? "|" : "", line);
		bed_say(&b, 0, "%s\r\n%s", line, i + 1 < n ? prompt : last);
	}
	return true;
}

/* The board's U-Boot, up to its prompt after the interrupt. */
static bool uboot_prompt(unsigned power_ons)
{
	if (!bed_powered_on(&b, 0, power_ons))
		return false;
	bed_say(&b, 0, "\r\nU-Boot 2023.01\r\nHit any key to stop autoboot:  2 ");
	if (!bed_typed(&b, 0, " \n"))
		return false;
	bed_say(&b, 0, "\r\n=> ");
	return true;
}

static const char kernel_to_login[] =
	"Starting kernel ...\r\n\r\n[    0.000000] Linux version 6.1.0\r\nsim login: ";

/* Deploy, interrupt, the command set substituted, kernel, login: complete. */
TEST(test_run_bootloader__uboot)
{
	char lines[4096], path[256];
	struct stat st;
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", true, uboot_boot));
	CHECK(id > 0);
	CHECK(uboot_prompt(1));
	CHECK(answers(7, "=> ", kernel_to_login, lines, sizeof(lines)));
	snprintf(path, sizeof(path), "%s/state/tftp/%lld/Image", b.dir, (long long)id);
	CHECK(stat(path, &st) == 0 && st.st_size == 19);	/* deployed to the job's TFTP dir */
	CHECK_STR(lines, "setenv serverip 10.0.2.2|"
		  "tftp 0x40400000 1/Image|tftp 0x44000000 1/initrd.cpio|"
		  "setenv initrd_size ${filesize}|tftp 0x40000000 1/sim.dtb|"
		  "setenv bootargs 'console=ttyAMA0,115200 root=/dev/ram0 '|"
		  "booti 0x40400000 0x44000000:${initrd_size} 0x40000000");
	CHECK(bed_typed(&b, 0, "root\n"));
	bed_say(&b, 0, "root\r\nroot@sim:~# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(bed_labd_says(&b, id, "action 1 of 2: deploy"));
	CHECK(bed_labd_says(&b, id, "action 2 of 2: boot-u-boot"));
	CHECK(bed_labd_says(&b, id, " bootloader-prompt at "));
	CHECK(bed_labd_says(&b, id, " bootloader-final at "));
	CHECK(bed_labd_says(&b, id, " kernel-start at "));
	bed_free(&b);
}

/* The lab's error (TFTP): infrastructure, naming the command and the board's line. */
TEST(test_run_bootloader__uboot_lab_error)
{
	const char *line;
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", true, uboot_boot));
	CHECK(uboot_prompt(1));
	CHECK((line = bed_line(&b, 0)));	/* setenv serverip */
	bed_say(&b, 0, "%s\r\n=> ", line);
	CHECK((line = bed_line(&b, 0)));
	CHECK_STR(line, "tftp 0x40400000 1/Image");
	bed_say(&b, 0, "%s\r\nUsing ethernet@0 device\r\nTFTP error: 'File not found' (1)\r\n=> ",
		line);
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure",
		   "u-boot error after tftp 0x40400000 1/Image: TFTP error: 'File not found' (1)"));
	bed_free(&b);
}

/* The job's error (a command U-Boot does not know): the job's error type. */
TEST(test_run_bootloader__uboot_job_error)
{
	const char *line;
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", false,
				"    method: u-boot\n    commands: [frobnicate]\n"
				"    prompts: ['root@sim:~# ']\n"));
	CHECK(uboot_prompt(1));
	CHECK((line = bed_line(&b, 0)));
	CHECK_STR(line, "frobnicate");
	bed_say(&b, 0, "frobnicate\r\nUnknown command 'frobnicate' - try 'help'\r\n=> ");
	CHECK(bed_job_ends(&b, id, "incomplete", "job",
		   "u-boot error after frobnicate: Unknown command 'frobnicate' - try 'help'"));
	bed_free(&b);
}

/* No autoboot prompt: infrastructure; a board that boots on: autoboot not interrupted. */
TEST(test_run_bootloader__uboot_interrupt_missed)
{
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", false, uboot_boot));
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure",
		   "timed out waiting for the u-boot autoboot prompt"));

	id = bed_submit(&b, job("sim-uboot", false, uboot_boot));
	CHECK(bed_powered_on(&b, 0, 2));
	bed_say(&b, 0, "U-Boot 2023.01\r\n[    0.000000] Linux version 6.1.0\r\n");
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "autoboot was not interrupted"));
	bed_free(&b);
}

/*
 * A lost echo: the prompt is awaited without it after a while; a command
 * naming what the job did not deploy is not typed.
 */
TEST(test_run_bootloader__uboot_lost_echo_and_missing_variable)
{
	const char *line;
	uint64_t t0;
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", false,
				"    method: u-boot\n    commands: ['setenv a {NOPE}', 'version', 'boot']\n"
				"    auto_login: {login_prompt: 'login:', username: root}\n"
				"    prompts: ['root@sim:~# ']\n"));
	CHECK(uboot_prompt(1));
	CHECK((line = bed_line(&b, 0)));
	CHECK_STR(line, "version");
	t0 = loop_now(b.loop);
	bed_say(&b, 0, "U-Boot 2023.01\r\n=> ");	/* no echo */
	CHECK((line = bed_line(&b, 0)));
	CHECK_STR(line, "boot");
	CHECK_INT((loop_now(b.loop) - t0) / USEC_PER_SEC, ==, 10);	/* ECHO_TIMEOUT */
	bed_say(&b, 0, "boot\r\n%s", kernel_to_login);
	CHECK(bed_typed(&b, 0, "root\n"));
	bed_say(&b, 0, "root@sim:~# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(bed_labd_says(&b, id, "skipping command 'setenv a {NOPE}': {NOPE} is not defined"));
	CHECK(bed_labd_says(&b, id, "u-boot: no echo of 'version' seen: waiting for the prompt"));
	bed_free(&b);
}

/* The job's own timeout for the bootloader's commands ends the boot at its end. */
TEST(test_run_bootloader__stage_timeout)
{
	const char *line;
	uint64_t t0;
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", false,
				"    method: u-boot\n    commands: ['version']\n"
				"    timeouts: {bootloader-commands: {seconds: 30}}\n"
				"    prompts: ['root@sim:~# ']\n"));
	CHECK(uboot_prompt(1));
	CHECK((line = bed_line(&b, 0)));
	t0 = loop_now(b.loop);
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure",
		   "u-boot: the job's bootloader-commands timeout ran out after 'version'"));
	CHECK_INT((loop_now(b.loop) - t0) / USEC_PER_SEC, ==, 30);
	bed_free(&b);
}

/* LAVA's method `bootloader`: stop at the prompt, run the commands, stay there. */
TEST(test_run_bootloader__method_bootloader)
{
	const char *line;
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", false,
				"    method: bootloader\n    bootloader: u-boot\n"
				"    commands: [printenv bootdelay]\n    prompts: ['=> ']\n"));
	CHECK(uboot_prompt(1));
	CHECK((line = bed_line(&b, 0)));
	CHECK_STR(line, "printenv bootdelay");
	bed_say(&b, 0, "printenv bootdelay\r\nbootdelay=2\r\n=> ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* expect_shell: false: done once the kernel started (an installer). */
TEST(test_run_bootloader__no_shell_expected)
{
	char lines[512];
	int64_t id;

	CHECK(bed_one("sim-uboot") == 0);
	id = bed_submit(&b, job("sim-uboot", false,
				"    method: u-boot\n    commands: [boot]\n    expect_shell: false\n"));
	CHECK(uboot_prompt(1));
	CHECK(answers(1, "=> ", "Starting kernel ...\r\n[    0.0] Linux version 6.1\r\n", lines,
		      sizeof(lines)));
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* barebox: Enter stops it, its prompt names the board, bootm. */
TEST(test_run_bootloader__barebox)
{
	char lines[2048];
	int64_t id;

	CHECK(bed_one("sim-barebox") == 0);
	id = bed_submit(&b, job("sim-barebox", true,
				"    method: barebox\n    commands: ramdisk\n"
				"    prompts: ['root@sim:~# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "barebox 2023.01\r\nHit m for menu or any other key to stop autoboot:  3");
	CHECK(bed_typed(&b, 0, "\n"));
	bed_say(&b, 0, "\r\nbarebox@sim:/ ");
	CHECK(answers(3, "barebox@sim:/ ", "Starting kernel\r\n[ 0.0] Linux version 6.1\r\n"
		      "root@sim:~# ", lines, sizeof(lines)));
	CHECK_CONTAINS(lines, "bootm -v -r /mnt/tftp/1/initrd.cpio -o /mnt/tftp/1/sim.dtb "
		       "/mnt/tftp/1/Image");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* depthcharge: no interrupt; the kernel command line goes to a file in the TFTP dir. */
TEST(test_run_bootloader__depthcharge)
{
	char lines[1024], path[256], *cmdline;
	int64_t id;

	CHECK(bed_one("sim-depthcharge") == 0);
	id = bed_submit(&b, job("sim-depthcharge", true,
				"    method: depthcharge\n    commands: ramdisk\n"
				"    prompts: ['root@sim:~# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "Starting netboot on sim...\r\ndpch: ");
	CHECK(answers(1, "dpch: ", "Starting kernel\r\n[ 0.0] Linux version 6.1\r\nroot@sim:~# ",
		      lines, sizeof(lines)));
	CHECK_STR(lines, "tftpboot 10.0.2.2 1/Image 1/cmdline 1/initrd.cpio");
	snprintf(path, sizeof(path), "%s/state/tftp/1/cmdline", b.dir);
	cmdline = bed_read(path);
	CHECK_CONTAINS(cmdline, "console=ttyAMA0,115200 root=/dev/ram0");
	free(cmdline);
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* GRUB: 'c' for its command line, no final message: the kernel's start ends it. */
TEST(test_run_bootloader__grub)
{
	char lines[1024];
	int64_t id;

	CHECK(bed_one("bed-grub") == 0);
	id = bed_submit(&b, job("bed-grub", true, "    method: grub\n    prompts: ['root@sim:~# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "GNU GRUB 2.06\r\nPress enter to boot, or 'c' for a command-line.");
	CHECK(bed_typed(&b, 0, "c"));
	bed_say(&b, 0, "\r\ngrub> ");
	CHECK(answers(2, "grub> ", "[ 0.0] Linux version 6.1\r\nroot@sim:~# ", lines, sizeof(lines)));
	CHECK_STR(lines, "linux (tftp)/1/Image console=ttyS0|boot");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* iPXE: Ctrl-B, its own error messages (the lab's). */
TEST(test_run_bootloader__ipxe_error)
{
	const char *line;
	int64_t id;

	CHECK(bed_one("bed-ipxe") == 0);
	id = bed_submit(&b, job("bed-ipxe", false, "    method: ipxe\n    prompts: ['# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "iPXE 1.21\r\nPress Ctrl-B for the iPXE command line...");
	CHECK(bed_typed(&b, 0, "\x02"));
	bed_say(&b, 0, "\r\niPXE> ");
	CHECK((line = bed_line(&b, 0)));
	CHECK_STR(line, "dhcp");
	bed_say(&b, 0, "dhcp\r\nConfiguring (net0 52:54:00:12:34:56)...... No configuration "
		"methods succeeded (http://ipxe.org/040ee119)\r\niPXE> ");
	CHECK(bed_job_ends(&b, id, "incomplete", "infrastructure", "ipxe error after dhcp: "));
	bed_free(&b);
}

/* A firmware menu: entries chosen by their text, the highlight moved with the arrow key. */
TEST(test_run_bootloader__uefi_menu)
{
	static const char hl[] = "\x1b[0m\x1b[37m\x1b[40m\x1b[%d;3H%s  \x1b[0m";
	int64_t id;

	CHECK(bed_one("bed-menu") == 0);
	id = bed_submit(&b, job("bed-menu", false, "    method: uefi-menu\n    prompts: ['# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "\x1b[=3hTianoCore\r\n");
	CHECK(bed_typed(&b, 0, "\x1b"));
	bed_say(&b, 0, hl, 5, "Continue");
	CHECK(bed_typed(&b, 0, "\x1b[B"));	/* not that one: down */
	bed_say(&b, 0, hl, 6, "Boot Manager");
	CHECK(bed_typed(&b, 0, "\r"));		/* chosen */
	bed_say(&b, 0, hl, 3, "UEFI Shell");
	CHECK(bed_typed(&b, 0, "\x1b[B"));
	bed_say(&b, 0, hl, 4, "USB Disk");
	CHECK(bed_typed(&b, 0, "\r"));
	bed_say(&b, 0, "[ 0.0] Linux version 6.1\r\n# ");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	bed_free(&b);
}

/* A firmware menu without the entry: the entries seen are the reason. */
TEST(test_run_bootloader__uefi_menu_entry_missing)
{
	static const char hl[] = "\x1b[0m\x1b[37m\x1b[40m\x1b[%d;3H%s  \x1b[0m";
	int64_t id;

	CHECK(bed_one("bed-menu") == 0);
	id = bed_submit(&b, job("bed-menu", false, "    method: uefi-menu\n    prompts: ['# ']\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "Press ESCAPE for boot options\r\n");
	CHECK(bed_typed(&b, 0, "\x1b"));
	bed_say(&b, 0, hl, 5, "Continue");
	CHECK(bed_typed(&b, 0, "\x1b[B"));
	bed_say(&b, 0, hl, 6, "Reset");
	CHECK(bed_typed(&b, 0, "\x1b[B"));
	bed_say(&b, 0, hl, 5, "Continue");	/* wrapped around */
	CHECK(bed_job_ends(&b, id, "incomplete", "job",
		   "uefi-menu: no menu entry 'Boot Manager' (seen: 'Continue', 'Reset')"));
	bed_free(&b);
}

/* interrupt_delay: the keys go that long after the interrupt prompt, not before. */
TEST(test_run_bootloader__interrupt_delay)
{
	int64_t id;

	CHECK(bed_one("bed-slow-uboot") == 0);
	id = bed_submit(&b, job("bed-slow-uboot", false, "    method: u-boot\n    expect_shell: false\n"));
	CHECK(bed_powered_on(&b, 0, 1));
	bed_say(&b, 0, "Hit any key to stop autoboot:  2 ");
	bed_advance(&b, SEC(1));
	CHECK(!bed_has_typed(&b, &(struct bed_wait_text){ &b.boards[0], " \n" }));
	bed_advance(&b, SEC(1));
	CHECK(bed_has_typed(&b, &(struct bed_wait_text){ &b.boards[0], " \n" }));
	bed_forget_typed(&b, 0);
	bed_say(&b, 0, "\r\n=> ");
	CHECK(bed_typed(&b, 0, "boot\n"));
	bed_say(&b, 0, "boot\r\nStarting kernel ...\r\n[ 0.0] Linux version 6.1\r\n");
	CHECK(bed_job_ends(&b, id, "complete", NULL, NULL));
	CHECK(bed_labd_says(&b, id, "u-boot: autoboot prompt seen, interrupting in 2 s"));
	bed_free(&b);
}

TEST_LIST(test_run_bootloader__uboot, test_run_bootloader__uboot_lab_error, test_run_bootloader__uboot_job_error,
	  test_run_bootloader__uboot_interrupt_missed,
	  test_run_bootloader__uboot_lost_echo_and_missing_variable, test_run_bootloader__stage_timeout,
	  test_run_bootloader__method_bootloader, test_run_bootloader__no_shell_expected,
	  test_run_bootloader__barebox, test_run_bootloader__depthcharge, test_run_bootloader__grub,
	  test_run_bootloader__ipxe_error, test_run_bootloader__uefi_menu,
	  test_run_bootloader__uefi_menu_entry_missing, test_run_bootloader__interrupt_delay);
