// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_shell.c -- simboard: getty/login and a small POSIX-like shell with test helpers */
#include "sim.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void login_prompt(struct board *b);
static void shell_prompt(struct board *b);
static int shell_exec(struct board *b, int argc, char **argv);

static bool is_root(const struct board *b)
{
	return !strcmp(b->user, "root");
}

static const char *home(const struct board *b)
{
	return sim_env_get(&b->senv, "HOME") ?: "/";
}

/* getty: the issue line and the login prompt (after boot and after logout). */
void sim_login_start(struct board *b)
{
	sim_cancel(b);
	sim_cmd_clear(b);
	b->stage = STAGE_LOGIN;
	b->prompt_fn = login_prompt;
	b->stream_until = 0;
	b->spew_left = 0;
	sim_printf(b, "\r\nDebian GNU/Linux 12 %s ttyAMA0\r\n\r\n", sim_cfg.hostname);
	login_prompt(b);
}

static void shell_start(struct board *b)
{
	char buf[128];

	b->stage = STAGE_SHELL;
	b->exec = shell_exec;
	b->prompt_fn = shell_prompt;
	b->status = 0;
	sim_env_clear(&b->senv);
	if (is_root(b))
		snprintf(buf, sizeof(buf), "/root");
	else
		snprintf(buf, sizeof(buf), "/home/%s", b->user);
	sim_env_set(&b->senv, "HOME", buf);
	sim_env_set(&b->senv, "LOGNAME", b->user);
	sim_env_set(&b->senv, "PATH",
		    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	sim_env_set(&b->senv, "SHELL", "/bin/sh");
	sim_env_set(&b->senv, "TERM", "vt220");
	sim_env_set(&b->senv, "USER", b->user);
	snprintf(b->cwd, sizeof(b->cwd), "%s", buf);
	sim_printf(b, "Linux %s 6.1.0-sim " SIM_UNAME_V " aarch64\r\n\r\n"
		   "This is %s, a simulated board: nothing here is real.\r\n",
		   sim_cfg.hostname, b->name);
	shell_prompt(b);
}

static void login_failed(struct board *b)
{
	sim_puts(b, "\r\nLogin incorrect\r\n");
	login_prompt(b);
}

static void login_check(struct board *b, const char *password)
{
	bool ok = !strcmp(b->user, sim_cfg.user) && b->cur != MODE_LOGIN_FAIL;

	if (sim_cfg.password)
		ok = ok && password && !strcmp(password, sim_cfg.password);
	if (password)
		sim_puts(b, "\r\n");	/* the Enter that was not echoed */
	if (ok) {
		shell_start(b);
	} else {
		b->in = IN_HOLD;
		sim_after(b, 500, login_failed);
	}
}

static void login_pass(struct board *b, char *line)
{
	login_check(b, line);
}

static void login_user(struct board *b, char *line)
{
	if (!*line) {
		login_prompt(b);
		return;
	}
	snprintf(b->user, sizeof(b->user), "%s", line);
	/* an unknown user is asked for a password too, as login does */
	if (sim_cfg.password || strcmp(b->user, sim_cfg.user)) {
		sim_puts(b, "Password: ");
		sim_readline(b, true, login_pass);
		return;
	}
	login_check(b, NULL);
}

static void login_prompt(struct board *b)
{
	sim_printf(b, "%s login: ", sim_cfg.hostname);
	sim_readline(b, false, login_user);
}

/* The working directory as the prompt shows it: ~ for home. */
static void pretty_cwd(const struct board *b, char *buf, size_t size)
{
	size_t n = strlen(home(b));

	if (!strncmp(b->cwd, home(b), n) && (b->cwd[n] == '/' || !b->cwd[n]))
		snprintf(buf, size, "~%s", b->cwd + n);
	else
		snprintf(buf, size, "%s", b->cwd);
}

/* PS1 with the usual escapes: \u \h \H \w \W \$ \n \r \e \\, \[ \] ignored. */
static void expand_ps1(const struct board *b, const char *ps1, char *buf, size_t size)
{
	char cwd[600];
	size_t n = 0;
	const char *add, *slash;
	char one[2] = { 0, 0 };

	pretty_cwd(b, cwd, sizeof(cwd));
	for (; *ps1 && n + 1 < size; ps1++) {
		add = one;
		one[0] = *ps1;
		if (*ps1 == '\\' && ps1[1]) {
			switch (*++ps1) {
			case 'u': add = b->user; break;
			case 'h': case 'H': add = sim_cfg.hostname; break;
			case 'w': add = cwd; break;
			case 'W':
				slash = strrchr(b->cwd, '/');
				add = slash && slash[1] ? slash + 1 : b->cwd;
				break;
			case '$': one[0] = is_root(b) ? '#' : '$'; break;
			case 'n': one[0] = '\n'; break;
			case 'r': one[0] = '\r'; break;
			case 'e': one[0] = '\033'; break;
			case '[': case ']': add = ""; break;
			default: one[0] = *ps1; break;
			}
		}
		n += snprintf(buf + n, size - n, "%s", add);
	}
	if (n >= size)
		n = size - 1;
	buf[n] = '\0';
}

static void shell_line(struct board *b, char *line)
{
	sim_cmd_line(b, line);
}

static void shell_prompt(struct board *b)
{
	const char *ps1 = sim_env_get(&b->senv, "PS1");
	char buf[1024], cwd[600];

	if (ps1) {
		expand_ps1(b, ps1, buf, sizeof(buf));
	} else if (sim_cfg.prompt) {
		snprintf(buf, sizeof(buf), "%s", sim_cfg.prompt);
	} else {
		pretty_cwd(b, cwd, sizeof(cwd));
		snprintf(buf, sizeof(buf), "%s@%s:%s%c ", b->user, sim_cfg.hostname, cwd,
			 is_root(b) ? '#' : '$');
	}
	sim_puts(b, buf);
	sim_readline(b, false, shell_line);
}

/* Text as a tty with onlcr writes it: \n becomes \r\n. */
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

/* echo -e: backslash escapes. */
static void put_escaped(struct board *b, const char *s)
{
	for (; *s; s++) {
		char c = *s;

		if (c == '\\' && s[1]) {
			switch (*++s) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'e': c = '\033'; break;
			case '\\': c = '\\'; break;
			default: sim_write(b, "\\", 1); c = *s; break;
			}
		}
		if (c == '\n')
			sim_puts(b, "\r\n");	/* the tty's onlcr */
		else
			sim_write(b, &c, 1);
	}
}

/* An echo option word: "-" followed only by n, e and E. */
static bool echo_flags(const char *a)
{
	return a[0] == '-' && a[1] && !a[1 + strspn(a + 1, "neE")];
}

static int sh_echo(struct board *b, int argc, char **argv)
{
	bool nl = true, esc = false;
	int i;

	for (i = 1; i < argc && echo_flags(argv[i]); i++) {
		nl = nl && !strchr(argv[i], 'n');
		esc = strchr(argv[i], 'e') != NULL;
	}
	for (; i < argc; i++) {
		if (esc)
			put_escaped(b, argv[i]);
		else
			sim_puts(b, argv[i]);
		if (i + 1 < argc)
			sim_puts(b, " ");
	}
	if (nl)
		sim_puts(b, "\r\n");
	return 0;
}

/* One conversion of printf: flags/width of flen bytes, then conv. */
static int printf_conv(char *out, size_t size, const char *flags, int flen, char conv,
		       const char *arg)
{
	const char *len = "ll";
	char spec[32];

	if (conv == 'c' || !strchr("diuxX", conv))
		len = "";
	snprintf(spec, sizeof(spec), "%%%.*s%s%c", flen, flags, len, strchr("diuxXc", conv) ?
		 conv : 's');
	if (conv == 'c')
		return snprintf(out, size, spec, arg[0]);
	if (strchr("diuxX", conv))
		return snprintf(out, size, spec, strtoll(arg, NULL, 0));
	return snprintf(out, size, spec, arg);
}

/* printf FORMAT [ARG...]: %s %d %i %u %x %X %c %% with flags, and backslash escapes. */
static int sh_printf(struct board *b, int argc, char **argv)
{
	char out[SIM_LINE_MAX];
	const char *f;
	size_t n = 0, flen;
	int a = 2, first;

	if (argc < 2) {
		sim_puts(b, "printf: usage: printf format [arguments]\r\n");
		return 2;
	}
	do {	/* the format is used again while arguments remain, as POSIX says */
		first = a;
		for (f = argv[1]; *f && n + 1 < sizeof(out); f++) {
			if (*f == '\\' && f[1]) {
				f++;
				out[n++] = *f == 'n' ? '\n' : *f == 't' ? '\t' : *f == 'r' ? '\r' :
					   *f == 'e' ? '\033' : *f;
				continue;
			}
			if (*f != '%' || !f[1]) {
				out[n++] = *f;
				continue;
			}
			flen = strspn(f + 1, "-+ #0123456789.");
			if (flen > 16 || !f[1 + flen])
				break;
			if (f[1 + flen] == '%') {
				out[n++] = '%';
			} else {
				n += printf_conv(out + n, sizeof(out) - n, f + 1, (int)flen,
						 f[1 + flen], a < argc ? argv[a] : "");
				a++;
			}
			f += 1 + flen;
			if (n >= sizeof(out))
				n = sizeof(out) - 1;
		}
	} while (a > first && a < argc && n + 1 < sizeof(out));
	out[n] = '\0';
	put_text(b, out);
	return 0;
}

static int sh_true(struct board *b, int argc, char **argv)
{
	return !strcmp(argv[0], "false");
}

static int sh_exit(struct board *b, int argc, char **argv)
{
	sim_puts(b, "logout\r\n");
	sim_login_start(b);
	return CMD_GONE;
}

static int sh_uname(struct board *b, int argc, char **argv)
{
	static const char order[] = "snrvmo";
	const char *vals[] = { "Linux", sim_cfg.hostname, "6.1.0-sim", SIM_UNAME_V, "aarch64",
			       "GNU/Linux" };
	char want[8] = "";
	const char *p;
	int i, first = 1;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] != '-') {
			sim_printf(b, "uname: extra operand '%s'\r\n", argv[i]);
			return 1;
		}
		for (p = argv[i] + 1; *p; p++) {
			if (*p == 'a') {
				strcpy(want, order);
			} else if (strchr(order, *p)) {
				if (!strchr(want, *p))
					strncat(want, p, 1);
			} else {
				sim_printf(b, "uname: invalid option -- '%c'\r\n", *p);
				return 1;
			}
		}
	}
	if (!want[0])
		strcpy(want, "s");
	for (i = 0; order[i]; i++) {
		if (!strchr(want, order[i]))
			continue;
		sim_printf(b, "%s%s", first ? "" : " ", vals[i]);
		first = 0;
	}
	sim_puts(b, "\r\n");
	return 0;
}

static int sh_id(struct board *b, int argc, char **argv)
{
	int id = is_root(b) ? 0 : 1000;

	if (!strcmp(argv[0], "whoami"))
		sim_printf(b, "%s\r\n", b->user);
	else
		sim_printf(b, "uid=%d(%s) gid=%d(%s) groups=%d(%s)\r\n", id, b->user, id, b->user,
			   id, b->user);
	return 0;
}

static int sh_hostname(struct board *b, int argc, char **argv)
{
	sim_printf(b, "%s\r\n", sim_cfg.hostname);
	return 0;
}

static int sh_date(struct board *b, int argc, char **argv)
{
	char buf[64];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S UTC %Y", &tm);
	sim_printf(b, "%s\r\n", buf);
	return 0;
}

static int sh_uptime(struct board *b, int argc, char **argv)
{
	char buf[16];
	time_t t = time(NULL);
	struct tm tm;
	double up = sim_uptime(b);

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	sim_printf(b, " %s up %d min,  1 user,  load average: 0.08, 0.03, 0.01\r\n", buf,
		   (int)(up / 60));
	return 0;
}

static int sh_dmesg(struct board *b, int argc, char **argv)
{
	const char *p = b->dmesg, *end = b->dmesg + b->dmesg_len, *nl;

	while (p && p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			break;
		sim_write(b, p, nl - p);
		sim_puts(b, "\r\n");
		p = nl + 1;
	}
	return 0;
}

static void sleep_done(struct board *b)
{
	sim_cmd_done(b, 0);
}

static int sh_sleep(struct board *b, int argc, char **argv)
{
	char *end;
	double s;

	if (argc < 2) {
		sim_puts(b, "sleep: missing operand\r\n");
		return 1;
	}
	s = strtod(argv[1], &end);
	if (end == argv[1] || *end || s < 0 || s > 86400) {
		sim_printf(b, "sleep: invalid time interval '%s'\r\n", argv[1]);
		return 1;
	}
	sim_wake(b, sim_now() + (uint64_t)(s * NSEC_PER_SEC), sleep_done);
	return CMD_ASYNC;
}

/*
 * journal WORDS...: the board's own record of what it ran, for tests that
 * check no job ran twice whatever labd believes: "<board> WORDS" appended to
 * <dir>/journal, one write per line (several boards, several simboards).
 */
static int sh_journal(struct board *b, int argc, char **argv)
{
	char line[1024];
	size_t n = 0;
	int i;

	line[0] = '\0';
	for (i = 1; i < argc && n < sizeof(line) - 1; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i > 1 ? " " : "", argv[i]);
	if (sim_journal(b, "%s", line) < 0) {
		sim_puts(b, "journal: cannot write\r\n");
		return 1;
	}
	return 0;
}

static bool valid_name(const char *s, size_t n)
{
	size_t i;

	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* NAME=VALUE: set a variable.  Returns 1 if arg is an assignment. */
static int assign(struct board *b, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[128];

	if (!eq || !valid_name(arg, eq - arg) || eq - arg >= (long)sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	sim_env_set(&b->senv, name, eq + 1);
	return 1;
}

static int sh_env(struct board *b, int argc, char **argv)
{
	int i;

	for (i = 0; i < b->senv.n; i++)
		sim_printf(b, "%s=%s\r\n", b->senv.v[i].name, b->senv.v[i].value);
	return 0;
}

static int sh_export(struct board *b, int argc, char **argv)
{
	int i, ret = 0;

	if (argc == 1) {
		for (i = 0; i < b->senv.n; i++)
			sim_printf(b, "export %s='%s'\r\n", b->senv.v[i].name, b->senv.v[i].value);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (!assign(b, argv[i]) && !valid_name(argv[i], strlen(argv[i]))) {
			sim_printf(b, "-sh: export: `%s': not a valid identifier\r\n", argv[i]);
			ret = 1;
		}
	}
	return ret;
}

static int sh_unset(struct board *b, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		sim_env_set(&b->senv, argv[i], NULL);
	return 0;
}

static const struct {
	const char *name;
	sim_exec_fn fn;
} cmds[] = {
	{ ".", sim_sh_source },
	{ ":", sh_true },
	{ "[", sim_sh_test },
	{ "cat", sim_sh_cat },
	{ "cd", sim_sh_cd },
	{ "chmod", sim_sh_mkdir },
	{ "date", sh_date },
	{ "dmesg", sh_dmesg },
	{ "echo", sh_echo },
	{ "env", sh_env },
	{ "exit", sh_exit },
	{ "export", sh_export },
	{ "false", sh_true },
	{ "halt", sim_sh_poweroff },
	{ "hostname", sh_hostname },
	{ "id", sh_id },
	{ "journal", sh_journal },
	{ "ktap", sim_sh_ktap },
	{ "lava-test-case", sim_sh_lava_case },
	{ "lava-test-raise", sim_sh_lava_other },
	{ "lava-test-reference", sim_sh_lava_other },
	{ "lava-test-set", sim_sh_lava_set },
	{ "logout", sh_exit },
	{ "ls", sim_sh_ls },
	{ "mkdir", sim_sh_mkdir },
	{ "oops", sim_sh_crash },
	{ "panic", sim_sh_crash },
	{ "poweroff", sim_sh_poweroff },
	{ "printenv", sh_env },
	{ "printf", sh_printf },
	{ "pwd", sim_sh_cd },
	{ "reboot", sim_sh_poweroff },
	{ "sh", sim_sh_source },
	{ "sleep", sh_sleep },
	{ "spew", sim_sh_spew },
	{ "stream", sim_sh_stream },
	{ "test", sim_sh_test },
	{ "true", sh_true },
	{ "uname", sh_uname },
	{ "unset", sh_unset },
	{ "uptime", sh_uptime },
	{ "warn", sim_sh_crash },
	{ "whoami", sh_id },
};

static int shell_exec(struct board *b, int argc, char **argv)
{
	size_t i;

	/* leading NAME=VALUE words set variables */
	while (argc && assign(b, argv[0])) {
		argc--;
		argv++;
	}
	if (!argc)
		return 0;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, argv[0]))
			return cmds[i].fn(b, argc, argv);
	sim_printf(b, "-sh: %s: not found\r\n", argv[0]);
	return 127;
}
