// SPDX-License-Identifier: GPL-2.0-or-later
/* gitcache.c -- bare mirrors of git repositories, updated by git children of the loop */
#include "overlay/gitcache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/child.h"
#include "core/loop.h"
#include "core/strbuf.h"

#define GITCACHE_HASH_BYTES 16	/* of the URL's sha256: the mirror's name */
#define GITCACHE_MSG_MAX 1024

/* git's environment: never ask for credentials, never page, no locale surprises. */
static char *const git_env[] = { "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=",
				 "GIT_PAGER=cat", "LC_ALL=C", NULL };

enum op_step {
	STEP_QUEUED,
	STEP_CLONE,		/* git clone --bare URL TMP */
	STEP_FETCH,		/* git fetch --prune URL heads and tags */
	STEP_RESOLVE,		/* git rev-parse REV^{commit} */
	STEP_FETCH_ID,		/* git fetch URL COMMIT: a commit no ref holds */
	STEP_RESOLVE_AGAIN,
	STEP_ARCHIVE,		/* git archive --format=tar -o TAR COMMIT */
};

struct mirror {
	struct gitcache *cache;
	char *url;
	char *dir;			/* <cache>/<hash>.git */
	struct gitcache_op *queue;	/* in order; the first one runs */
	struct mirror *next;
};

struct gitcache_op {
	struct mirror *m;
	char *rev;			/* NULL: HEAD */
	bool update;
	char *tar;
	gitcache_fn fn;
	void *userdata;
	enum op_step step;
	char *tmp;			/* clone in progress */
	pid_t pid;
	struct loop_source *child;
	struct loop_source *timer;	/* timeout */
	struct loop_source *size_timer;
	struct loop_source *defer;	/* start from the loop */
	struct child_output out;
	bool updated;
	uint64_t step_started;
	uint64_t fetch_usec;
	bool too_big;
	bool timed_out;
	uint64_t size;
	char commit[41];
	struct gitcache_op *next;
};

struct gitcache {
	struct loop *loop;
	char *dir;
	uint64_t max_size;
	uint64_t timeout;
	char *git;
	struct mirror *mirrors;
	unsigned tmp_seq;
};

static void op_next_step(struct gitcache_op *op);

/* ---- files ---- */

static uint64_t tree_bytes;

static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_F)
		tree_bytes += (uint64_t)st->st_size;
	return 0;
}

/* Bytes of the files below @dir (0 when absent). */
static uint64_t dir_size(const char *dir)
{
	tree_bytes = 0;
	nftw(dir, add_size, 16, FTW_PHYS);
	return tree_bytes;
}

/* Remove @path by an `rm -rf` child the loop reaps: a big tree must not block labd. */
static void remove_later(struct gitcache *c, const char *path)
{
	char *argv[] = { "rm", "-rf", "--", (char *)path, NULL };
	struct child_spawn how = { .argv = argv, .search_path = true, .extra_fd = -1 };
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid_t pid;

	if (devnull < 0)
		return;
	how.out_fd = devnull;
	if (child_spawn(&how, &pid) == 0)
		loop_add_child(c->loop, NULL, pid, NULL, NULL);
	close(devnull);
}

/* Move a mirror out of the way at once, then remove it in the background. */
static void discard(struct gitcache *c, const char *dir)
{
	char *tmp;

	if (asprintf(&tmp, "%s.tmp.%d.%u", dir, (int)getpid(), c->tmp_seq++) < 0)
		return;
	if (rename(dir, tmp) == 0)
		remove_later(c, tmp);
	free(tmp);
}

/* Remove clones a crash left behind: <hash>.git.tmp.<n>. */
static void remove_stale(struct gitcache *c)
{
	DIR *d = opendir(c->dir);
	struct dirent *e;
	char *path;

	while (d && (e = readdir(d))) {
		if (!strstr(e->d_name, ".git.tmp."))
			continue;
		if (asprintf(&path, "%s/%s", c->dir, e->d_name) >= 0) {
			remove_later(c, path);
			free(path);
		}
	}
	if (d)
		closedir(d);
}

static char *url_hash(const char *url)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0, i;
	char *hex = malloc(2 * GITCACHE_HASH_BYTES + 1);

	if (!hex || !EVP_Digest(url, strlen(url), md, &len, EVP_sha256(), NULL)) {
		free(hex);
		return NULL;
	}
	for (i = 0; i < GITCACHE_HASH_BYTES; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	return hex;
}

char *gitcache_mirror_dir(const struct gitcache *c, const char *url)
{
	char *hash = url_hash(url), *dir = NULL;

	if (hash && asprintf(&dir, "%s/%s.git", c->dir, hash) < 0)
		dir = NULL;
	free(hash);
	return dir;
}

/* ---- the cache ---- */

int gitcache_new(struct loop *loop, const struct gitcache_opts *o, struct gitcache **ret)
{
	struct gitcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->max_size = o->max_size;
	c->timeout = o->timeout;
	c->dir = strdup(o->dir);
	c->git = strdup(o->git ? o->git : "git");
	if (!c->dir || !c->git) {
		gitcache_free(c);
		return -ENOMEM;
	}
	if (mkdir(c->dir, 0755) < 0 && errno != EEXIST) {
		int err = -errno;

		gitcache_free(c);
		return err;
	}
	remove_stale(c);
	*ret = c;
	return 0;
}

void gitcache_set_limits(struct gitcache *c, uint64_t max_size, uint64_t timeout)
{
	c->max_size = max_size;
	c->timeout = timeout;
}

static void op_free(struct gitcache_op *op);

struct gitcache *gitcache_free(struct gitcache *c)
{
	struct mirror *m, *next;

	if (!c)
		return NULL;
	for (m = c->mirrors; m; m = next) {
		next = m->next;
		while (m->queue) {
			struct gitcache_op *op = m->queue;

			m->queue = op->next;
			op_free(op);
		}
		free(m->url);
		free(m->dir);
		free(m);
	}
	free(c->dir);
	free(c->git);
	free(c);
	return NULL;
}

static struct mirror *mirror_get(struct gitcache *c, const char *url)
{
	struct mirror *m;

	for (m = c->mirrors; m; m = m->next)
		if (!strcmp(m->url, url))
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cache = c;
	m->url = strdup(url);
	m->dir = gitcache_mirror_dir(c, url);
	if (!m->url || !m->dir) {
		free(m->url);
		free(m->dir);
		free(m);
		return NULL;
	}
	m->next = c->mirrors;
	c->mirrors = m;
	return m;
}

/* ---- one git command ---- */

/* Stop the running git, if any (its whole process group). */
static void op_kill(struct gitcache_op *op)
{
	if (op->child && op->pid > 0)
		kill(-op->pid, SIGKILL);
	op->child = loop_source_free(op->child);
	op->timer = loop_source_free(op->timer);
	op->size_timer = loop_source_free(op->size_timer);
	child_output_close(&op->out);
	op->pid = 0;
}

static void op_free(struct gitcache_op *op)
{
	op_kill(op);
	op->defer = loop_source_free(op->defer);
	if (op->tmp)
		remove_later(op->m->cache, op->tmp);
	child_output_release(&op->out);
	free(op->tmp);
	free(op->rev);
	free(op->tar);
	free(op);
}

/* The operation is over: tell the caller, then start the mirror's next one. */
static void op_finish(struct gitcache_op *op, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int on_start(struct loop_source *s, void *ud);

static void op_finish(struct gitcache_op *op, int err, const char *fmt, ...)
{
	struct mirror *m = op->m;
	struct gitcache_result res = { .err = err, .updated = op->updated, .size = op->size,
				       .fetch_usec = op->fetch_usec };
	char msg[GITCACHE_MSG_MAX];
	va_list ap;

	op_kill(op);
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		res.msg = msg;
	}
	if (!err)
		res.commit = op->commit;
	m->queue = op->next;
	if (m->queue)
		loop_add_defer(m->cache->loop, &m->queue->defer, on_start, m->queue);
	op->fn(&res, op->userdata);
	op_free(op);
}

/*
 * The line of git's output that says what went wrong: its first "fatal:"
 * line (later ones are advice: "Please make sure you have the correct access
 * rights"), else the last line.
 */
static void git_error_line(const struct child_output *out, char *buf, size_t size)
{
	const char *s = out->tail.buf, *end = s + out->tail.len, *fatal;
	size_t len, i;

	fatal = out->tail.len ? memmem(s, out->tail.len, "fatal: ", 7) : NULL;
	if (!fatal || (fatal != s && fatal[-1] != '\n')) {
		child_output_last_line(out, buf, size);
		return;
	}
	len = strcspn(fatal, "\n");
	if (len > (size_t)(end - fatal))
		len = (size_t)(end - fatal);
	if (len >= size)
		len = size - 1;
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)fatal[i] < ' ' ? ' ' : fatal[i];
	buf[len] = '\0';
}

/* Why git failed, for a message: "git exited with status 128: fatal: ...". */
static void git_reason(struct gitcache_op *op, const siginfo_t *si, char *buf, size_t size)
{
	char last[512];

	git_error_line(&op->out, last, sizeof(last));
	if (op->timed_out)
		snprintf(buf, size, "git took longer than %llu s (git_timeout)%s%s",
			 (unsigned long long)(op->m->cache->timeout / USEC_PER_SEC),
			 *last ? "; its last line: " : "", last);
	else if (si->si_code == CLD_EXITED)
		snprintf(buf, size, "git exited with status %d%s%s", si->si_status,
			 *last ? ": " : "", last);
	else
		snprintf(buf, size, "git was killed by signal %d%s%s", si->si_status,
			 *last ? ": " : "", last);
}

static void step_done(struct gitcache_op *op, const siginfo_t *si);

static int on_git_exit(struct loop_source *s, const siginfo_t *si, void *ud)
{
	struct gitcache_op *op = ud;

	child_output_drain(&op->out);
	op->child = loop_source_free(op->child);	/* reaped: nothing to kill */
	op->pid = 0;
	op->timer = loop_source_free(op->timer);
	op->size_timer = loop_source_free(op->size_timer);
	step_done(op, si);
	return 0;
}

static int on_timeout(struct loop_source *s, uint64_t now, void *ud)
{
	struct gitcache_op *op = ud;

	op->timed_out = true;
	if (op->pid > 0)
		kill(-op->pid, SIGKILL);
	return 0;
}

/* While a clone or fetch runs: the mirror must stay below max_size. */
static int on_size_poll(struct loop_source *s, uint64_t now, void *ud)
{
	struct gitcache_op *op = ud;
	uint64_t size = dir_size(op->tmp ? op->tmp : op->m->dir);

	if (size > op->m->cache->max_size) {
		op->too_big = true;
		op->size = size;
		if (op->pid > 0)
			kill(-op->pid, SIGKILL);
		return 0;
	}
	return loop_timer_set_rel(s, GITCACHE_SIZE_POLL);
}

/* Start `git -C DIR ARGS...` (DIR NULL: no -C) for the current step. */
static int run_git(struct gitcache_op *op, const char *dir, const char *const *args)
{
	struct gitcache *c = op->m->cache;
	const char *argv[16];
	struct child_spawn how = { .argv = (char *const *)argv, .search_path = true,
				   .extra_fd = -1, .setenv = git_env };
	size_t n = 0;
	int wfd, err;

	argv[n++] = c->git;
	if (dir) {
		argv[n++] = "-C";
		argv[n++] = dir;
	}
	argv[n++] = "-c";
	argv[n++] = "gc.auto=0";
	while (*args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	op->step_started = loop_now(c->loop);
	err = child_output_open(&op->out, c->loop, "git-output", &wfd);
	if (err < 0)
		return err;
	how.out_fd = wfd;
	err = child_spawn(&how, &op->pid);
	close(wfd);
	if (!err)
		err = loop_add_child(c->loop, &op->child, op->pid, on_git_exit, op);
	if (!err && c->timeout)
		err = loop_add_timer(c->loop, &op->timer, loop_now(c->loop) + c->timeout,
				     on_timeout, op);
	if (!err && c->max_size && (op->step == STEP_CLONE || op->step == STEP_FETCH ||
				    op->step == STEP_FETCH_ID))
		err = loop_add_timer(c->loop, &op->size_timer,
				     loop_now(c->loop) + GITCACHE_SIZE_POLL, on_size_poll, op);
	if (err < 0)
		op_kill(op);
	return err;
}

/* ---- the steps ---- */

static void start_clone(struct gitcache_op *op)
{
	struct gitcache *c = op->m->cache;
	const char *args[] = { "clone", "--bare", "--quiet", "--", op->m->url, NULL, NULL };
	int err;

	op->step = STEP_CLONE;
	if (asprintf(&op->tmp, "%s.tmp.%d.%u", op->m->dir, (int)getpid(), c->tmp_seq++) < 0) {
		op->tmp = NULL;
		op_finish(op, -ENOMEM, "out of memory");
		return;
	}
	args[5] = op->tmp;
	err = run_git(op, NULL, args);
	if (err < 0)
		op_finish(op, err, "cannot fetch '%s': cannot run git: %s", op->m->url, strerror(-err));
}

static void start_fetch(struct gitcache_op *op, enum op_step step)
{
	const char *args[] = { "fetch", "--prune", "--quiet", "--", op->m->url,
			       "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", NULL };
	int err;

	op->step = step;
	if (step == STEP_FETCH_ID) {
		args[1] = "--quiet";
		args[2] = "--";
		args[3] = op->m->url;
		args[4] = op->rev;
		args[5] = NULL;
	}
	err = run_git(op, op->m->dir, args);
	if (err < 0)
		op_finish(op, err, "cannot fetch '%s': cannot run git: %s", op->m->url, strerror(-err));
}

static void start_resolve(struct gitcache_op *op, enum op_step step)
{
	char *rev = NULL;
	const char *args[] = { "rev-parse", "--verify", "--quiet", "--end-of-options", NULL, NULL };
	int err;

	op->step = step;
	if (asprintf(&rev, "%s^{commit}", op->rev ? op->rev : "HEAD") < 0) {
		op_finish(op, -ENOMEM, "out of memory");
		return;
	}
	args[4] = rev;
	err = run_git(op, op->m->dir, args);
	free(rev);
	if (err < 0)
		op_finish(op, err, "cannot resolve '%s' in '%s': cannot run git: %s",
			  op->rev ? op->rev : "HEAD", op->m->url, strerror(-err));
}

static void start_archive(struct gitcache_op *op)
{
	const char *args[] = { "archive", "--format=tar", "-o", op->tar, op->commit, NULL };
	int err;

	op->step = STEP_ARCHIVE;
	err = run_git(op, op->m->dir, args);
	if (err < 0)
		op_finish(op, err, "cannot archive '%s' of '%s': cannot run git: %s", op->commit,
			  op->m->url, strerror(-err));
}

/* The last line of git's output that is a commit id, into op->commit. */
static bool read_commit(struct gitcache_op *op)
{
	const char *s = op->out.tail.buf, *end = s + op->out.tail.len, *line;
	bool found = false;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s), i;

		line = s;
		for (i = 0; i < len && isxdigit((unsigned char)line[i]); i++)
			;
		if (len == 40 && i == 40) {
			memcpy(op->commit, line, 40);
			op->commit[40] = '\0';
			found = true;
		}
		s = nl ? nl + 1 : end;
	}
	return found;
}

static bool is_commit_id(const char *rev)
{
	size_t i;

	for (i = 0; rev && isxdigit((unsigned char)rev[i]); i++)
		;
	return rev && i == 40 && !rev[i];
}

/* A clone or fetch finished well: the mirror must still be below max_size. */
static bool updated(struct gitcache_op *op)
{
	struct gitcache *c = op->m->cache;

	op->updated = true;
	op->fetch_usec = loop_now(c->loop) - op->step_started;
	if (op->tmp) {
		if (rename(op->tmp, op->m->dir) < 0) {
			op_finish(op, -errno, "cannot fetch '%s': cannot rename '%s': %s", op->m->url,
				  op->tmp, strerror(errno));
			return false;
		}
		free(op->tmp);
		op->tmp = NULL;
	}
	op->size = dir_size(op->m->dir);
	if (c->max_size && op->size > c->max_size)
		op->too_big = true;	/* step_failed() discards it */
	return true;
}

static void step_failed(struct gitcache_op *op, const siginfo_t *si)
{
	struct gitcache *c = op->m->cache;
	char why[768];

	if (op->too_big) {
		discard(c, op->m->dir);
		op_finish(op, -EFBIG, "cannot fetch '%s': the repository is larger than the lab's git_max_size of %llu bytes",
			  op->m->url, (unsigned long long)c->max_size);
		return;
	}
	git_reason(op, si, why, sizeof(why));
	if (op->step == STEP_ARCHIVE)
		op_finish(op, -EIO, "cannot archive %s of '%s': %s", op->commit, op->m->url, why);
	else if (op->step == STEP_RESOLVE || op->step == STEP_RESOLVE_AGAIN)
		op_finish(op, -ENOENT, "no commit, tag or branch '%s' in '%s'",
			  op->rev ? op->rev : "HEAD", op->m->url);
	else
		op_finish(op, -EIO, "cannot fetch '%s': %s", op->m->url, why);
}

static void step_done(struct gitcache_op *op, const siginfo_t *si)
{
	bool ok = si->si_code == CLD_EXITED && !si->si_status && !op->timed_out && !op->too_big;

	if (ok && (op->step == STEP_CLONE || op->step == STEP_FETCH) && !updated(op))
		return;
	if (!ok || op->too_big) {
		if (!ok && op->step == STEP_RESOLVE && is_commit_id(op->rev) && !op->timed_out) {
			start_fetch(op, STEP_FETCH_ID);
			return;
		}
		step_failed(op, si);
		return;
	}
	op_next_step(op);
}

static void op_next_step(struct gitcache_op *op)
{
	switch (op->step) {
	case STEP_QUEUED:
		if (access(op->m->dir, F_OK) < 0)
			start_clone(op);
		else if (op->update)
			start_fetch(op, STEP_FETCH);
		else
			start_resolve(op, STEP_RESOLVE);
		break;
	case STEP_CLONE:
	case STEP_FETCH:
		start_resolve(op, STEP_RESOLVE);
		break;
	case STEP_FETCH_ID:
		start_resolve(op, STEP_RESOLVE_AGAIN);
		break;
	case STEP_RESOLVE:
	case STEP_RESOLVE_AGAIN:
		if (!read_commit(op)) {
			op_finish(op, -EIO, "cannot resolve '%s' in '%s': git printed no commit id",
				  op->rev ? op->rev : "HEAD", op->m->url);
			return;
		}
		start_archive(op);
		break;
	case STEP_ARCHIVE:
		if (!op->size)
			op->size = dir_size(op->m->dir);
		op_finish(op, 0, NULL);
		break;
	}
}

static int on_start(struct loop_source *s, void *ud)
{
	struct gitcache_op *op = ud;

	op->defer = loop_source_free(op->defer);
	op_next_step(op);
	return 0;
}

/* ---- public ---- */

int gitcache_checkout(struct gitcache *c, const char *url, const char *rev, bool update,
		      const char *tar_path, gitcache_fn fn, void *userdata,
		      struct gitcache_op **ret)
{
	struct gitcache_op *op = calloc(1, sizeof(*op)), **p;
	struct mirror *m = mirror_get(c, url);

	if (!op || !m) {
		free(op);
		return -ENOMEM;
	}
	op->m = m;
	op->update = update;
	op->fn = fn;
	op->userdata = userdata;
	child_output_init(&op->out);
	op->tar = strdup(tar_path);
	op->rev = rev ? strdup(rev) : NULL;
	if (!op->tar || (rev && !op->rev)) {
		op_free(op);
		return -ENOMEM;
	}
	for (p = &m->queue; *p; p = &(*p)->next)
		;
	*p = op;
	if (m->queue == op && loop_add_defer(c->loop, &op->defer, on_start, op) < 0) {
		m->queue = NULL;
		op_free(op);
		return -ENOMEM;
	}
	*ret = op;
	return 0;
}

void gitcache_cancel(struct gitcache_op *op)
{
	struct gitcache_op **p;
	struct mirror *m;

	if (!op)
		return;
	m = op->m;
	for (p = &m->queue; *p && *p != op; p = &(*p)->next)
		;
	if (*p)
		*p = op->next;
	if (p == &m->queue && m->queue)
		loop_add_defer(m->cache->loop, &m->queue->defer, on_start, m->queue);
	op_free(op);
}
