// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_shell_lab.c -- simboard: shell files (cat, ls, cd) and lab commands (ktap, lava, stream) */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const dirs[][2] = {
	{ "/", "bin  boot  dev  etc  home  lib  media  mnt  opt  proc  root  run  sbin  srv  sys  "
	       "tmp  usr  var" },
	{ "/boot", "" },
	{ "/dev", "console  mmcblk1  mmcblk1p1  mmcblk1p2  null  ttyAMA0  zero" },
	{ "/etc", "fstab  hostname  issue  os-release  passwd" },
	{ "/home", "" },
	{ "/proc", "cmdline  cpuinfo  meminfo  uptime  version" },
	{ "/root", "" },
	{ "/sys", "block  bus  class  dev  devices  firmware  fs  kernel  module  power" },
	{ "/tmp", "" },
	{ "/usr", "bin  games  include  lib  libexec  local  sbin  share  src" },
	{ "/var", "backups  cache  lib  local  lock  log  mail  opt  run  spool  tmp" },
};

static const char *find_dir(const struct board *b, const char *path)
{
	const char *home = sim_env_get(&b->senv, "HOME");
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strcmp(dirs[i][0], path))
			return dirs[i][1];
	return home && !strcmp(home, path) ? "" : NULL;
}

/* The contents of a file, into buf; false when there is no such file. */
static bool read_file(struct board *b, const char *path, char *buf, size_t size)
{
	double up = sim_uptime(b);
	size_t len;
	char *nfs = strncmp(path, "/proc/", 6) ? sim_nfsroot_read(b, path, size - 1, &len) : NULL;
	int i, n = 0;

	if (nfs) {
		memcpy(buf, nfs, len + 1);
		free(nfs);
	} else if (!strcmp(path, "/proc/version")) {
		snprintf(buf, size, SIM_LINUX_BANNER "\n");
	} else if (!strcmp(path, "/proc/cmdline")) {
		snprintf(buf, size, "%s\n", b->cmdline ? b->cmdline : "");
	} else if (!strcmp(path, "/proc/uptime")) {
		snprintf(buf, size, "%.2f %.2f\n", up, up * 3.9);
	} else if (!strcmp(path, "/proc/cpuinfo")) {
		for (i = 0; i < 4; i++)
			n += snprintf(buf + n, size - n, "processor\t: %d\nBogoMIPS\t: 108.00\n"
				      "Features\t: fp asimd evtstrm crc32 cpuid\n"
				      "CPU implementer\t: 0x41\nCPU architecture: 8\n"
				      "CPU variant\t: 0x1\nCPU part\t: 0xd07\n"
				      "CPU revision\t: 0\n\n", i);
	} else if (!strcmp(path, "/proc/meminfo")) {
		snprintf(buf, size, "MemTotal:         944876 kB\nMemFree:          801220 kB\n"
			 "MemAvailable:     846312 kB\nBuffers:           12516 kB\n"
			 "Cached:            61844 kB\n");
	} else if (!strcmp(path, "/etc/hostname")) {
		snprintf(buf, size, "%s\n", sim_cfg.hostname);
	} else if (!strcmp(path, "/etc/issue")) {
		snprintf(buf, size, "Debian GNU/Linux 12 \\n \\l\n\n");
	} else if (!strcmp(path, "/etc/os-release")) {
		snprintf(buf, size, "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian "
			 "GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\n"
			 "VERSION_CODENAME=bookworm\nID=debian\n");
	} else if (!strcmp(path, "/etc/passwd")) {
		snprintf(buf, size, "root:x:0:0:root:/root:/bin/sh\n%s:x:1000:1000::/home/%s:"
			 "/bin/sh\n", sim_cfg.user, sim_cfg.user);
	} else if (!strcmp(path, "/etc/fstab")) {
		snprintf(buf, size, "/dev/mmcblk1p2 / ext4 errors=remount-ro 0 1\n"
			 "/dev/mmcblk1p1 /boot vfat defaults 0 2\n");
	} else {
		return false;
	}
	return true;
}

/* An absolute, normalised path for arg relative to the working directory. */
static void resolve(const struct board *b, const char *arg, char *out, size_t size)
{
	char tmp[600], *tok, *save = NULL;
	const char *home = sim_env_get(&b->senv, "HOME");
	size_t n = 0;

	if (arg[0] == '~' && (!arg[1] || arg[1] == '/'))
		snprintf(tmp, sizeof(tmp), "%s%s", home ? home : "/", arg + 1);
	else if (arg[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", arg);
	else
		snprintf(tmp, sizeof(tmp), "%s/%s", b->cwd, arg);
	out[0] = '\0';
	for (tok = strtok_r(tmp, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			char *slash = strrchr(out, '/');

			n = slash ? (size_t)(slash - out) : 0;
			out[n] = '\0';
			continue;
		}
		n += snprintf(out + n, size - n, "/%s", tok);
		if (n >= size)
			n = size - 1;
	}
	if (!out[0])
		snprintf(out, size, "/");
}

/* Text with \n line ends, written with the tty's \r\n. */
static void put_text(struct board *b, const char *s)
{
	const char *nl;

	while ((nl = strchr(s, '\n'))) {
		sim_write(b, s, nl - s);
		sim_puts(b, "\r\n");
		s = nl + 1;
	}
	sim_puts(b, s);
}

int sim_sh_cat(struct board *b, int argc, char **argv)
{
	char path[512], buf[2048];
	int i, ret = 0;

	for (i = 1; i < argc; i++) {
		struct sim_file *f = sim_file_find(b, argv[i]);
		size_t j;

		for (j = 0; f && j < f->len; j++) {
			if (f->data[j] == '\n')
				sim_puts(b, "\r\n");
			else
				sim_write(b, &f->data[j], 1);
		}
		if (f)
			continue;
		resolve(b, argv[i], path, sizeof(path));
		if (read_file(b, path, buf, sizeof(buf))) {
			put_text(b, buf);
		} else {
			sim_printf(b, "cat: %s: %s\r\n", argv[i], find_dir(b, path) ?
				   "Is a directory" : "No such file or directory");
			ret = 1;
		}
	}
	return ret;
}

static int ls_one(struct board *b, const char *arg)
{
	char path[512], buf[2048];
	const char *list;

	resolve(b, arg, path, sizeof(path));
	list = find_dir(b, path);
	if (list) {
		if (*list)
			sim_printf(b, "%s\r\n", list);
		return 0;
	}
	if (read_file(b, path, buf, sizeof(buf))) {
		sim_printf(b, "%s\r\n", arg);
		return 0;
	}
	sim_printf(b, "ls: cannot access '%s': No such file or directory\r\n", arg);
	return 2;
}

int sim_sh_ls(struct board *b, int argc, char **argv)
{
	int i, ret = 0, shown = 0;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;	/* options change nothing here */
		ret |= ls_one(b, argv[i]);
		shown++;
	}
	return shown ? ret : ls_one(b, ".");
}

/* cd [DIR] and pwd. */
int sim_sh_cd(struct board *b, int argc, char **argv)
{
	const char *home = sim_env_get(&b->senv, "HOME");
	char path[512], buf[2048];

	if (!strcmp(argv[0], "pwd")) {
		sim_printf(b, "%s\r\n", b->cwd);
		return 0;
	}
	resolve(b, argc > 1 ? argv[1] : home ? home : "/", path, sizeof(path));
	if (find_dir(b, path) || sim_nfsroot_has(b, path, true)) {
		snprintf(b->cwd, sizeof(b->cwd), "%s", path);
		return 0;
	}
	sim_printf(b, "-sh: cd: can't cd to %s: %s\r\n", argv[1],
		   read_file(b, path, buf, sizeof(buf)) ? "Not a directory" :
		   "No such file or directory");
	return 2;
}

/* test / [ with -d, -f or -e PATH: the shell's files, the NFS root, the board's own. */
int sim_sh_test(struct board *b, int argc, char **argv)
{
	char path[512], buf[2048];
	bool dir;

	if (!strcmp(argv[0], "[") && (argc < 2 || strcmp(argv[argc - 1], "]"))) {
		sim_puts(b, "-sh: [: missing ]\r\n");
		return 2;
	}
	argc -= !strcmp(argv[0], "[");
	if (argc != 3 || argv[1][0] != '-' || !strchr("dfe", argv[1][1]) || argv[1][2])
		return 2;	/* not this shell's: false */
	resolve(b, argv[2], path, sizeof(path));
	dir = find_dir(b, path) || sim_nfsroot_has(b, path, true);
	if (argv[1][1] == 'd')
		return dir ? 0 : 1;
	if (sim_file_find(b, path) || read_file(b, path, buf, sizeof(buf)) ||
	    (sim_nfsroot_has(b, path, false) && !dir))
		return 0;
	return argv[1][1] == 'e' && dir ? 0 : 1;
}

int sim_sh_ktap(struct board *b, int argc, char **argv)
{
	sim_kernel_ktap(b);
	return 0;
}

/*
 * lava-test-case NAME --shell CMD...: run CMD, pass or fail by its status.  A
 * command that takes time (sleep) is reported as it starts.
 */
static int lava_case_shell(struct board *b, int argc, char **argv)
{
	static char buf[SIM_LINE_MAX];
	char *words[SIM_MAX_ARGS + 1];
	int n = argc - 3, ret;

	sim_printf(b, "<LAVA_SIGNAL_STARTTC %s>\r\n", argv[1]);
	if (n == 1 && strchr(argv[3], ' ')) {
		n = sim_words(b, argv[3], words, SIM_MAX_ARGS, buf, sizeof(buf));
		ret = n ? b->exec(b, n, words) : 0;
	} else {
		ret = n > 0 ? b->exec(b, n, argv + 3) : 0;
	}
	if (ret == CMD_GONE)
		return ret;
	sim_printf(b, "<LAVA_SIGNAL_ENDTC %s>\r\n", argv[1]);
	sim_printf(b, "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=%s RESULT=%s>\r\n", argv[1],
		   ret && ret != CMD_ASYNC ? "fail" : "pass");
	return ret;
}

/* lava-test-case NAME --result R [--measurement M] [--units U] | NAME --shell CMD... */
int sim_sh_lava_case(struct board *b, int argc, char **argv)
{
	const char *result = NULL, *meas = NULL, *units = NULL;
	int i;

	if (argc > 2 && !strcmp(argv[2], "--shell"))
		return lava_case_shell(b, argc, argv);

	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--result"))
			result = argv[i + 1];
		else if (!strcmp(argv[i], "--measurement"))
			meas = argv[i + 1];
		else if (!strcmp(argv[i], "--units"))
			units = argv[i + 1];
		else
			break;
	}
	if (argc < 2 || i + 1 == argc || !result ||
	    (strcmp(result, "pass") && strcmp(result, "fail") && strcmp(result, "skip") &&
	     strcmp(result, "unknown"))) {
		sim_puts(b, "Usage: lava-test-case <test-case-id> --result pass|fail|skip|unknown "
			    "[--measurement <value>] [--units <units>]\r\n");
		return 1;
	}
	sim_printf(b, "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=%s RESULT=%s", argv[1], result);
	if (meas)
		sim_printf(b, " MEASUREMENT=%s", meas);
	if (units)
		sim_printf(b, " UNITS=%s", units);
	sim_puts(b, ">\r\n");
	return 0;
}

/* lava-test-raise MESSAGE and lava-test-reference NAME --result R --reference URL */
int sim_sh_lava_other(struct board *b, int argc, char **argv)
{
	int i;

	if (!strcmp(argv[0], "lava-test-reference")) {
		if (argc != 6 || strcmp(argv[2], "--result") || strcmp(argv[4], "--reference")) {
			sim_puts(b, "usage: lava-test-reference NAME --result R --reference URL\r\n");
			return 1;
		}
		sim_printf(b, "<LAVA_SIGNAL_TESTREFERENCE %s %s %s>\r\n", argv[1], argv[3], argv[5]);
		return 0;
	}
	sim_puts(b, "<LAVA_SIGNAL_TESTRAISE");
	for (i = 1; i < argc; i++)
		sim_printf(b, " %s", argv[i]);
	sim_puts(b, ">\r\n");
	return 0;
}

/* lava-test-set start NAME | stop */
int sim_sh_lava_set(struct board *b, int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "start")) {
		sim_printf(b, "<LAVA_SIGNAL_TESTSET START %s>\r\n", argv[2]);
	} else if (argc >= 2 && !strcmp(argv[1], "stop")) {
		sim_puts(b, "<LAVA_SIGNAL_TESTSET STOP>\r\n");
	} else {
		sim_puts(b, "Usage: lava-test-set start <name> | stop\r\n");
		return 1;
	}
	return 0;
}

/* oops, warn and panic: kernel trouble on request. */
int sim_sh_crash(struct board *b, int argc, char **argv)
{
	if (!strcmp(argv[0], "warn")) {
		sim_kernel_warn(b);
		return 0;
	}
	if (!strcmp(argv[0], "oops")) {
		sim_kernel_oops(b, true);
		sim_puts(b, "Segmentation fault\r\n");
		return 139;
	}
	sim_klog(b, "sysrq: Trigger a crash");
	sim_kernel_panic(b, "sysrq triggered crash", true);
	return CMD_GONE;
}

static void restart(struct board *b)
{
	sim_boot_begin(b);
	if (b->cur == MODE_NO_UBOOT)
		sim_kernel_boot(b, NULL, true);
	else
		sim_firmware_start(b);
}

/* poweroff, reboot and halt: systemd's goodbye, then the kernel's last words. */
int sim_sh_poweroff(struct board *b, int argc, char **argv)
{
	static const char ok[] = "[\033[0;32m  OK  \033[0m] ";
	char what = argv[0][0];	/* 'p', 'r' or 'h' */

	b->in = IN_DISCARD;
	sim_cmd_clear(b);
	sim_printf(b, "         Stopping session-1.scope - Session 1 of User %s...\r\n", b->user);
	sim_printf(b, "%sStopped target multi-user.target - Multi-User System.\r\n", ok);
	sim_printf(b, "%sReached target shutdown.target - System Shutdown.\r\n", ok);
	if (what == 'h') {
		sim_klog(b, "reboot: System halted");
		return CMD_GONE;
	}
	sim_printf(b, "%sFinished systemd-%s.service - System %s.\r\n", ok,
		   what == 'r' ? "reboot" : "poweroff", what == 'r' ? "Reboot" : "Power Off");
	sim_klog(b, "systemd-shutdown[1]: %s", what == 'r' ? "Rebooting." : "Powering off.");
	sim_klog(b, "reboot: %s", what == 'r' ? "Restarting system" : "Power down");
	sim_after_tx(b, 20, what == 'r' ? restart : sim_power_off);
	return CMD_GONE;
}

/* 1 KiB of random bytes at a time; a reader that is late (a loaded machine) is
 * waited for, so the queue never drops any of them. */
static void spew_step(struct board *b)
{
	unsigned char buf[1024];
	size_t i, n = b->spew_left < sizeof(buf) ? b->spew_left : sizeof(buf);

	if (sim_tx_backlog(b)) {
		sim_after_tx(b, 0, spew_step);
		return;
	}
	for (i = 0; i < n; i++)
		buf[i] = sim_rand(b) & 0xff;
	sim_write(b, buf, n);
	b->spew_left -= n;
	if (b->spew_left) {
		sim_after_tx(b, 0, spew_step);
		return;
	}
	sim_puts(b, "\r\n");
	sim_cmd_done(b, 0);
}

/* spew N: N bytes of noise, always with a NUL, 0xff and a broken UTF-8 sequence. */
int sim_sh_spew(struct board *b, int argc, char **argv)
{
	static const unsigned char nasty[] = { 0x00, 0xff, 0xc3, 0x28, 0xe2, 0x82 };
	char *end;
	unsigned long long n = argc > 1 ? strtoull(argv[1], &end, 10) : 0;

	if (argc < 2 || *end || argv[1][0] == '-') {
		sim_puts(b, "usage: spew BYTES\r\n");
		return 1;
	}
	if (!n)
		return 0;
	sim_write(b, nasty, n < sizeof(nasty) ? n : sizeof(nasty));
	b->spew_left = n < sizeof(nasty) ? 0 : n - sizeof(nasty);
	if (!b->spew_left) {
		sim_puts(b, "\r\n");
		return 0;
	}
	spew_step(b);
	return CMD_ASYNC;
}

static void stream_end(struct board *b)
{
	b->stream_until = 0;
	sim_cmd_done(b, 0);
}

/* stream SECONDS: the pty writer makes the lines, stamped when they are written. */
int sim_sh_stream(struct board *b, int argc, char **argv)
{
	char *end;
	double s = argc > 1 ? strtod(argv[1], &end) : -1;

	if (argc < 2 || *end || s < 0 || s > 86400) {
		sim_puts(b, "usage: stream SECONDS\r\n");
		return 1;
	}
	b->stream_seq = 0;
	b->stream_until = sim_now() + (uint64_t)(s * NSEC_PER_SEC);
	b->tx_at = sim_now();
	sim_wake(b, b->stream_until, stream_end);
	return CMD_ASYNC;
}

/* The next stream line, with the time now; the writer bumps stream_seq once it is queued. */
size_t sim_stream_line(struct board *b, char *buf, size_t size)
{
	struct timespec ts;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, size, "SIMSTREAM %s %llu %llu\r\n", b->name,
		     (unsigned long long)b->stream_seq + 1,
		     (unsigned long long)ts.tv_sec * NSEC_PER_SEC + (unsigned long long)ts.tv_nsec);
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}
