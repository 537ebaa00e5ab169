// SPDX-License-Identifier: GPL-2.0-or-later
/* test-gitcache.c -- dispatcher/overlay/gitcache.c against real repositories made here */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/gitcache.h"
#include "core/loop.h"
#include "tap.h"

static char tmp[256];		/* a scratch directory per run */

struct outcome {
	bool done;
	int err;
	char msg[1024];
	char commit[41];
	bool updated;
};

static void on_done(const struct gitcache_result *res, void *ud)
{
	struct outcome *o = ud;

	o->done = true;
	o->err = res->err;
	o->updated = res->updated;
	snprintf(o->msg, sizeof(o->msg), "%s", res->msg ? res->msg : "");
	snprintf(o->commit, sizeof(o->commit), "%s", res->commit ? res->commit : "");
}

static int sh(const char *fmt, const char *arg)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	return system(cmd);
}

/* The output of a shell command, first line. */
static void sh_out(const char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");

	buf[0] = '\0';
	if (f && fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		pclose(f);
}

/* A repository with two commits, tag v1 on the first, branch 'stable' at the first. */
static void make_repo(const char *dir)
{
	sh("set -e; git init -q -b main %s; cd %s; git config user.email t@t; git config user.name t;"
	   "mkdir -p automated/linux/smoke; echo one > README;"
	   "printf '#!/bin/sh\\necho smoke\\n' > automated/linux/smoke/smoke.sh;"
	   "chmod +x automated/linux/smoke/smoke.sh; git add -A; git commit -qm one; git tag -a v1 -m v1;"
	   "git branch stable; echo two > README; git commit -qam two", dir);
}

static void run_until(struct loop *l, struct outcome *o)
{
	int i;

	for (i = 0; i < 3000 && !o->done; i++)
		loop_run_once(l, 10 * USEC_PER_MSEC);
}

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "%s/labd-gitcache.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		abort();
}

static void cleanup(void)
{
	sh("rm -rf %s", tmp);
}

TEST(test_gitcache__clone_and_revisions)
{
	struct gitcache_opts opts = { .timeout = 60 * USEC_PER_SEC };
	char repo[512], url[600], cache[512], tar[512], want[64], list[4096];
	struct outcome o = { 0 };
	struct gitcache_op *op;
	struct gitcache *c;
	struct loop *l;

	setup();
	snprintf(repo, sizeof(repo), "%s/origin", tmp);
	snprintf(url, sizeof(url), "file://%s", repo);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	snprintf(tar, sizeof(tar), "%s/tree.tar", tmp);
	make_repo(repo);
	opts.dir = cache;
	CHECK_INT(loop_new(&l), ==, 0);
	CHECK_INT(gitcache_new(l, &opts, &c), ==, 0);

	/* the default branch: cloned, archived */
	CHECK_INT(gitcache_checkout(c, url, NULL, true, tar, on_done, &o, &op), ==, 0);
	CHECK(!o.done);		/* callbacks come from the loop */
	run_until(l, &o);
	CHECK(o.done);
	CHECK_STR(o.msg, "");
	CHECK(o.updated);
	snprintf(list, sizeof(list), "git -C %s rev-parse main", repo);
	sh_out(list, want, sizeof(want));
	CHECK_STR(o.commit, want);
	snprintf(list, sizeof(list), "tar -tvf %s | grep -c smoke.sh", tar);
	sh_out(list, want, sizeof(want));
	CHECK_STR(want, "1");
	snprintf(list, sizeof(list), "tar -tf %s | grep -c '^.git'", tar);
	sh_out(list, want, sizeof(want));
	CHECK_STR(want, "0");

	/* a tag, without fetching */
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, "v1", false, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_STR(o.msg, "");
	CHECK(!o.updated);
	snprintf(list, sizeof(list), "git -C %s rev-parse v1^{commit}", repo);
	sh_out(list, want, sizeof(want));
	CHECK_STR(o.commit, want);
	snprintf(list, sizeof(list), "tar -xOf %s README", tar);
	sh_out(list, want, sizeof(want));
	CHECK_STR(want, "one");

	/* a branch, and a commit by id */
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, "stable", false, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_STR(o.msg, "");
	snprintf(list, sizeof(list), "git -C %s rev-parse main~1", repo);
	sh_out(list, want, sizeof(want));
	CHECK_STR(o.commit, want);

	/* a new commit upstream is seen after an update */
	sh("cd %s && echo three > README && git commit -qam three", repo);
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, "main", true, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_STR(o.msg, "");
	CHECK(o.updated);
	snprintf(list, sizeof(list), "git -C %s rev-parse main", repo);
	sh_out(list, want, sizeof(want));
	CHECK_STR(o.commit, want);

	/* an unknown revision names itself and the repository */
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, "nope", false, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.err, ==, -ENOENT);
	snprintf(list, sizeof(list), "no commit, tag or branch 'nope' in '%s'", url);
	CHECK_STR(o.msg, list);
	gitcache_free(c);
	loop_free(l);
	cleanup();
}

/* A commit no branch or tag holds is fetched by id. */
TEST(test_gitcache__commit_by_id)
{
	struct gitcache_opts opts = { .timeout = 60 * USEC_PER_SEC };
	char repo[512], url[600], cache[512], tar[512], id[64], cmd[1024];
	struct outcome o = { 0 };
	struct gitcache_op *op;
	struct gitcache *c;
	struct loop *l;

	setup();
	snprintf(repo, sizeof(repo), "%s/origin", tmp);
	snprintf(url, sizeof(url), "file://%s", repo);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	snprintf(tar, sizeof(tar), "%s/tree.tar", tmp);
	make_repo(repo);
	opts.dir = cache;
	CHECK_INT(loop_new(&l), ==, 0);
	CHECK_INT(gitcache_new(l, &opts, &c), ==, 0);
	CHECK_INT(gitcache_checkout(c, url, NULL, true, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_STR(o.msg, "");
	/* a dangling commit upstream (as a pull request's head is) */
	sh("cd %s && git checkout -q -b pr && echo pr > README && git commit -qam pr", repo);
	snprintf(cmd, sizeof(cmd), "git -C %s rev-parse pr", repo);
	sh_out(cmd, id, sizeof(id));
	sh("cd %s && git checkout -q main && git update-ref refs/pull/1/head pr && git branch -qD pr", repo);
	sh("cd %s && git config uploadpack.allowAnySHA1InWant true", repo);
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, id, false, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_STR(o.msg, "");
	CHECK_STR(o.commit, id);
	gitcache_free(c);
	loop_free(l);
	cleanup();
}

TEST(test_gitcache__failures)
{
	struct gitcache_opts opts = { .timeout = 60 * USEC_PER_SEC };
	char repo[512], url[600], cache[512], tar[512], fake[512], want[1024], mirror[600];
	struct outcome o = { 0 };
	struct gitcache_op *op;
	struct gitcache *c;
	struct loop *l;
	struct stat st;
	char *dir;

	setup();
	snprintf(repo, sizeof(repo), "%s/origin", tmp);
	snprintf(url, sizeof(url), "file://%s", repo);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	snprintf(tar, sizeof(tar), "%s/tree.tar", tmp);
	make_repo(repo);
	opts.dir = cache;
	CHECK_INT(loop_new(&l), ==, 0);

	/* no such repository: git's last line */
	CHECK_INT(gitcache_new(l, &opts, &c), ==, 0);
	CHECK_INT(gitcache_checkout(c, "file:///nonexistent/repo", NULL, true, tar, on_done, &o,
				    &op), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.err, ==, -EIO);
	CHECK(!strncmp(o.msg, "cannot fetch 'file:///nonexistent/repo': git exited with status 128: fatal: ", 76));

	/* larger than max_size: refused, and nothing kept */
	gitcache_free(c);
	opts.max_size = 1000;
	CHECK_INT(gitcache_new(l, &opts, &c), ==, 0);
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, NULL, true, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.err, ==, -EFBIG);
	snprintf(want, sizeof(want), "cannot fetch '%s': the repository is larger than the lab's git_max_size of 1000 bytes",
		 url);
	CHECK_STR(o.msg, want);
	dir = gitcache_mirror_dir(c, url);
	snprintf(mirror, sizeof(mirror), "%s", dir);
	free(dir);
	CHECK(stat(mirror, &st) < 0);

	/* a git that hangs: killed at the timeout, with its last line */
	gitcache_free(c);
	snprintf(fake, sizeof(fake), "%s/slow-git", tmp);
	sh("printf '#!/bin/sh\\necho Cloning into x...\\nexec sleep 30\\n' > %s; chmod +x %s", fake);
	opts.max_size = 0;
	opts.timeout = 300 * USEC_PER_MSEC;
	opts.git = fake;
	CHECK_INT(gitcache_new(l, &opts, &c), ==, 0);
	memset(&o, 0, sizeof(o));
	CHECK_INT(gitcache_checkout(c, url, NULL, true, tar, on_done, &o, &op), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.err, ==, -EIO);
	snprintf(want, sizeof(want), "cannot fetch '%s': git took longer than 0 s (git_timeout); its last line: Cloning into x...",
		 url);
	CHECK_STR(o.msg, want);
	gitcache_free(c);
	loop_free(l);
	cleanup();
}

/* Checkouts of one URL queue; a canceled one never calls back. */
TEST(test_gitcache__queue_and_cancel)
{
	struct gitcache_opts opts = { .timeout = 60 * USEC_PER_SEC };
	char repo[512], url[600], cache[512], tar1[512], tar2[512], tar3[512];
	struct outcome a = { 0 }, b = { 0 }, x = { 0 };
	struct gitcache_op *opa, *opb, *opx;
	struct gitcache *c;
	struct loop *l;

	setup();
	snprintf(repo, sizeof(repo), "%s/origin", tmp);
	snprintf(url, sizeof(url), "file://%s", repo);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	snprintf(tar1, sizeof(tar1), "%s/1.tar", tmp);
	snprintf(tar2, sizeof(tar2), "%s/2.tar", tmp);
	snprintf(tar3, sizeof(tar3), "%s/3.tar", tmp);
	make_repo(repo);
	opts.dir = cache;
	CHECK_INT(loop_new(&l), ==, 0);
	CHECK_INT(gitcache_new(l, &opts, &c), ==, 0);
	CHECK_INT(gitcache_checkout(c, url, NULL, true, tar1, on_done, &a, &opa), ==, 0);
	CHECK_INT(gitcache_checkout(c, url, "v1", true, tar2, on_done, &x, &opx), ==, 0);
	CHECK_INT(gitcache_checkout(c, url, "stable", true, tar3, on_done, &b, &opb), ==, 0);
	gitcache_cancel(opx);
	run_until(l, &b);
	CHECK(a.done && b.done && !x.done);
	CHECK_STR(a.msg, "");
	CHECK_STR(b.msg, "");
	CHECK(a.updated && b.updated);
	CHECK(access(tar2, F_OK) < 0);
	/* freeing the cache cancels what runs */
	memset(&a, 0, sizeof(a));
	CHECK_INT(gitcache_checkout(c, url, NULL, true, tar1, on_done, &a, &opa), ==, 0);
	loop_run_once(l, 0);
	gitcache_free(c);
	CHECK(!a.done);
	loop_free(l);
	cleanup();
}

TEST_LIST(test_gitcache__clone_and_revisions, test_gitcache__commit_by_id,
	  test_gitcache__failures, test_gitcache__queue_and_cancel);
