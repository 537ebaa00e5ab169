// SPDX-License-Identifier: GPL-2.0-or-later
/* child.c -- running programs from the loop: spawning them clean, keeping their output's tail */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "core/child.h"
#include "core/loop.h"

#define CHILD_READ_CHUNK 1024
#define CHILD_READS_PER_WAKEUP 16	/* so a chatty program cannot starve the loop */
#define CHILD_READS_AT_EXIT 64		/* a full pipe (64 KiB) holds the tail we want */

extern char **environ;

static int add_file_actions(posix_spawn_file_actions_t *fa, const struct child_spawn *how)
{
	int r, last = STDERR_FILENO;

	r = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_adddup2(fa, how->out_fd, STDOUT_FILENO);
	if (!r)
		r = posix_spawn_file_actions_adddup2(fa, how->out_fd, STDERR_FILENO);
	if (!r && how->extra_fd >= 0) {
		r = posix_spawn_file_actions_adddup2(fa, how->extra_fd, how->extra_at);
		last = how->extra_at;
	}
	if (!r)
		r = posix_spawn_file_actions_addclosefrom_np(fa, last + 1);
	return r;
}

/* labd's environment with @set's entries replacing or added (an array to free; entries borrowed). */
static char **merge_env(char *const *set)
{
	size_t n = 0, m = 0, i, j, k = 0;
	char **env;

	while (environ[n])
		n++;
	while (set[m])
		m++;
	env = calloc(n + m + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++) {
		for (j = 0; j < m; j++) {
			size_t len = strcspn(set[j], "=");

			if (!strncmp(environ[i], set[j], len) && environ[i][len] == '=')
				break;
		}
		if (j == m)
			env[k++] = environ[i];
	}
	for (j = 0; j < m; j++)
		env[k++] = set[j];
	return env;
}

int child_spawn(const struct child_spawn *how, pid_t *ret)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	char **env = how->setenv ? merge_env(how->setenv) : environ;
	int r;

	if (!env)
		return -ENOMEM;

	sigemptyset(&none);
	sigfillset(&all);
	r = posix_spawn_file_actions_init(&fa);
	if (r)
		return -r;
	r = posix_spawnattr_init(&attr);
	if (r)
		goto out_actions;
	r = add_file_actions(&fa, how);
	/* The loop blocks signals and may ignore some: the program starts clean. */
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	if (!r && how->search_path)
		r = posix_spawnp(ret, how->argv[0], &fa, &attr, how->argv, env);
	else if (!r)
		r = posix_spawn(ret, how->argv[0], &fa, &attr, how->argv, env);
	posix_spawnattr_destroy(&attr);
out_actions:
	posix_spawn_file_actions_destroy(&fa);
	if (env != environ)
		free(env);
	return -r;
}

void child_output_init(struct child_output *o)
{
	o->fd = -1;
	o->src = NULL;
	strbuf_init(&o->tail);
}

/* Append what the program printed, keeping the tail.  Returns 1 at EOF or error. */
static int output_read(struct child_output *o, int max_reads)
{
	char buf[CHILD_READ_CHUNK];
	ssize_t n;
	int i;

	for (i = 0; i < max_reads; i++) {
		n = read(o->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0 || strbuf_add(&o->tail, buf, (size_t)n) < 0)
			return 1;
		if (o->tail.len > CHILD_OUTPUT_MAX)
			strbuf_consume(&o->tail, o->tail.len - CHILD_OUTPUT_MAX);
	}
	return 0;
}

static int on_output(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	struct child_output *o = userdata;

	if (output_read(o, CHILD_READS_PER_WAKEUP))
		child_output_close(o);
	return 0;
}

int child_output_open(struct child_output *o, struct loop *loop, const char *description,
		      int *ret_wfd)
{
	int fds[2], r;

	child_output_close(o);
	strbuf_reset(&o->tail);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	/* Only our end is non-blocking: the program writes as it always does. */
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	o->fd = fds[0];
	r = loop_add_io(loop, &o->src, o->fd, EPOLLIN, on_output, o);
	if (r < 0) {
		child_output_close(o);
		close(fds[1]);
		return r;
	}
	loop_source_set_description(o->src, description);
	*ret_wfd = fds[1];
	return 0;
}

void child_output_drain(struct child_output *o)
{
	if (o->fd >= 0 && output_read(o, CHILD_READS_AT_EXIT))
		child_output_close(o);
}

void child_output_close(struct child_output *o)
{
	o->src = loop_source_free(o->src);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

void child_output_last_line(const struct child_output *o, char *buf, size_t size)
{
	const char *out = o->tail.buf;
	size_t end = o->tail.len, start, i, n;

	while (end && (out[end - 1] == '\n' || out[end - 1] == '\r' || out[end - 1] == ' ' ||
		       out[end - 1] == '\t'))
		end--;
	start = end;
	while (start && out[start - 1] != '\n')
		start--;
	n = end - start < size - 1 ? end - start : size - 1;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)out[start + i];

		buf[i] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	buf[n] = '\0';
}

void child_output_release(struct child_output *o)
{
	child_output_close(o);
	strbuf_release(&o->tail);
}
