// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_files.c -- simboard: files written by the shell (a tmpfs that a boot empties),
 * output redirection, and sh/. to run them
 *
 * Enough for labd's test definitions: `mkdir -p D`, `printf '%s\n' ... > F`
 * (and >>), `chmod`, `cat F` and `sh F` / `. F`, which runs the file's lines
 * in this shell (after the running command, before the rest of its line).
 * Files never run as commands: the shell's own commands (lava-test-case ...)
 * answer whatever a script on PATH would have.  A board booted with an NFS
 * root (root=/dev/nfs nfsroot=SERVER:DIR) reads the files of DIR on this
 * host, as the real board would read them from the lab's NFS server.
 */
#include "sim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SIM_MAX_FILES 64
#define SIM_MAX_FILE (256 * 1024)

/* An absolute path for @arg: relative to the working directory. */
static void abs_path(const struct board *b, const char *arg, char *out, size_t size)
{
	if (arg[0] == '/')
		snprintf(out, size, "%s", arg);
	else
		snprintf(out, size, "%s/%s", strcmp(b->cwd, "/") ? b->cwd : "", arg);
}

struct sim_file *sim_file_find(struct board *b, const char *arg)
{
	char path[600];
	int i;

	abs_path(b, arg, path, sizeof(path));
	for (i = 0; i < b->nfiles; i++)
		if (!strcmp(b->files[i].path, path))
			return &b->files[i];
	return NULL;
}

/* The file @arg, created empty if needed; truncated unless @append. */
static struct sim_file *file_open(struct board *b, const char *arg, bool append)
{
	struct sim_file *f = sim_file_find(b, arg);
	char path[600];

	if (!f && b->nfiles < SIM_MAX_FILES) {
		abs_path(b, arg, path, sizeof(path));
		f = &b->files[b->nfiles];
		f->path = strdup(path);
		if (!f->path)
			return NULL;
		f->data = NULL;
		f->len = 0;
		b->nfiles++;
	}
	if (f && !append)
		f->len = 0;
	return f;
}

/* Output into a file: no terminal turns '\n' into "\r\n" there. */
void sim_file_append(struct sim_file *f, const void *p, size_t n)
{
	const char *s = p;
	char *grown;
	size_t i;

	if (f->len + n > SIM_MAX_FILE)
		return;
	grown = realloc(f->data, f->len + n);
	if (!grown)
		return;
	f->data = grown;
	for (i = 0; i < n; i++)
		if (s[i] != '\r')
			f->data[f->len++] = s[i];
}

char *sim_nfsroot_read(const struct board *b, const char *path, size_t max, size_t *ret_len)
{
	char host[1200], *data;
	FILE *f;
	size_t n;

	if (!b->nfsroot || path[0] != '/')
		return NULL;
	snprintf(host, sizeof(host), "%s%s", b->nfsroot, path);
	f = fopen(host, "r");
	if (!f)
		return NULL;
	data = malloc(max + 1);
	n = data ? fread(data, 1, max, f) : 0;
	fclose(f);
	if (data)
		data[n] = '\0';
	*ret_len = n;
	return data;
}

bool sim_nfsroot_has(const struct board *b, const char *path, bool dir)
{
	char host[1200];
	struct stat st;

	if (!b->nfsroot || path[0] != '/')
		return false;
	snprintf(host, sizeof(host), "%s%s", b->nfsroot, path);
	return stat(host, &st) == 0 && (!dir || S_ISDIR(st.st_mode));
}

void sim_files_clear(struct board *b)
{
	int i;

	for (i = 0; i < b->nfiles; i++) {
		free(b->files[i].path);
		free(b->files[i].data);
	}
	b->nfiles = 0;
	b->redir = NULL;
	b->redir_null = false;
}

/* Where the redirection at @p (just after '>' or ">>") points; sets *@end past it. */
static void redirect_target(struct board *b, char *p, bool append, bool out, char **end)
{
	char word[512];
	size_t n = 0;

	if (*p == '&') {	/* >&2, 2>&1: the console either way */
		for (p++; isdigit((unsigned char)*p); p++)
			;
		*end = p;
		return;
	}
	while (*p == ' ')
		p++;
	for (; *p && !isspace((unsigned char)*p) && n + 1 < sizeof(word); p++)
		word[n++] = *p;
	word[n] = '\0';
	*end = p;
	if (!out || !n)
		return;
	if (!strcmp(word, "/dev/null"))
		b->redir_null = true;
	else
		b->redir = file_open(b, word, append);
}

/*
 * Take the redirections ("> F", ">> F", "2> F", ">&2", "2>&1") out of @cmd,
 * outside quotes, and point the output of the command at the file.
 */
void sim_redirect(struct board *b, char *cmd)
{
	char quote = 0, *p, *start, *end;
	int fd;

	b->redir = NULL;
	b->redir_null = false;
	for (p = cmd; *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
			else if (*p == '\\' && quote == '"' && p[1])
				p++;
			continue;
		}
		if (*p == '\'' || *p == '"' || (*p == '\\' && p[1])) {
			if (*p == '\\')
				p++;
			else
				quote = *p;
			continue;
		}
		if (*p != '>')
			continue;
		start = p;
		fd = 1;
		if (p > cmd && isdigit((unsigned char)p[-1]) && (p - 1 == cmd || p[-2] == ' ')) {
			fd = p[-1] - '0';
			start--;
		}
		redirect_target(b, p + 1 + (p[1] == '>'), p[1] == '>', fd == 1, &end);
		memmove(start, end, strlen(end) + 1);
		p = start - 1;
	}
}

int sim_sh_mkdir(struct board *b, int argc, char **argv)
{
	return 0;	/* any directory exists as soon as a file is written in it */
}

/* sh FILE, . FILE: the file's commands run next, in this shell. */
int sim_sh_source(struct board *b, int argc, char **argv)
{
	struct sim_file *f = argc > 1 ? sim_file_find(b, argv[1]) : NULL;
	char *text = NULL, path[600];
	size_t len;

	if (argc < 2) {
		sim_printf(b, "%s: a script is needed here\r\n", argv[0]);
		return 2;
	}
	abs_path(b, argv[1], path, sizeof(path));
	if (!f && !(text = sim_nfsroot_read(b, path, SIM_MAX_FILE, &len))) {
		sim_printf(b, "%s: can't open '%s': No such file or directory\r\n", argv[0], argv[1]);
		return 2;
	}
	if (f)
		text = strndup(f->data ? f->data : "", f->len);
	if (!text || sim_cmd_splice(b, text) < 0) {
		free(text);
		sim_puts(b, "out of memory\r\n");
		return 1;
	}
	free(text);
	return 0;
}
