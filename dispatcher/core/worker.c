// SPDX-License-Identifier: GPL-2.0-or-later
/* worker.c -- a function run in a forked child, its report lines read by the loop */
#include "core/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "core/loop.h"
#include "core/strbuf.h"

struct worker {
	const struct worker_ops *ops;
	void *userdata;
	int fd;			/* read end of the report pipe */
	struct loop_source *io, *child;
	struct strbuf line;	/* a partial line */
	struct strbuf last;	/* the last complete line */
	bool exited, eof;
	int status;
};

/* Report once the child exited and its pipe is drained. */
static void worker_finish(struct worker *w)
{
	const struct worker_ops *ops = w->ops;

	if (!w->exited || !w->eof || !ops)
		return;
	w->ops = NULL;		/* exactly once */
	ops->done(w, w->status, w->last.buf ? w->last.buf : "", w->userdata);
}

static void worker_line(struct worker *w, const char *line)
{
	strbuf_reset(&w->last);
	strbuf_addstr(&w->last, line);
	if (w->ops && w->ops->line)
		w->ops->line(w, line, w->userdata);
}

static int worker_on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
	struct worker *w = userdata;
	char buf[WORKER_LINE_MAX], *nl;
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0) {
		w->io = loop_source_free(w->io);
		w->eof = true;
		worker_finish(w);
		return 0;
	}
	if (strbuf_add(&w->line, buf, (size_t)n) < 0)
		return -ENOMEM;
	while ((nl = memchr(w->line.buf, '\n', w->line.len))) {
		*nl = '\0';
		worker_line(w, w->line.buf);
		strbuf_consume(&w->line, (size_t)(nl - w->line.buf) + 1);
	}
	if (w->line.len > WORKER_LINE_MAX)
		strbuf_reset(&w->line);
	return 0;
}

static int worker_on_exit(struct loop_source *s, const siginfo_t *si, void *userdata)
{
	struct worker *w = userdata;

	w->child = loop_source_free(w->child);
	w->exited = true;
	w->status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
	worker_finish(w);
	return 0;
}

static int worker_fork(worker_fn fn, void *arg, int *pipefd, pid_t *ret)
{
	sigset_t none;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(pipefd[0]);
		_exit(fn(pipefd[1], arg));
	}
	*ret = pid;
	return 0;
}

int worker_start(struct loop *l, worker_fn fn, void *arg, const struct worker_ops *ops,
		 void *userdata, struct worker **ret)
{
	struct worker *w = calloc(1, sizeof(*w));
	int pipefd[2], r;
	pid_t pid = 0;

	if (!w)
		return -ENOMEM;
	w->ops = ops;
	w->userdata = userdata;
	strbuf_init(&w->line);
	strbuf_init(&w->last);
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		free(w);
		return -errno;
	}
	w->fd = pipefd[0];
	r = worker_fork(fn, arg, pipefd, &pid);
	close(pipefd[1]);
	if (r >= 0)
		r = fcntl(w->fd, F_SETFL, O_NONBLOCK) < 0 ? -errno : 0;
	if (r >= 0)
		r = loop_add_io(l, &w->io, w->fd, EPOLLIN, worker_on_io, w);
	if (r >= 0)
		r = loop_add_child(l, &w->child, pid, worker_on_exit, w);
	if (r < 0 && pid > 0 && !w->child) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);	/* killed: reaped at once */
	}
	if (r < 0) {
		worker_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

struct worker *worker_free(struct worker *w)
{
	if (!w)
		return NULL;
	loop_source_free(w->child);	/* kills the child if it still runs */
	loop_source_free(w->io);
	close(w->fd);
	strbuf_release(&w->line);
	strbuf_release(&w->last);
	free(w);
	return NULL;
}
