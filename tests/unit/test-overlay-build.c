// SPDX-License-Identifier: GPL-2.0-or-later
/* test-overlay-build.c -- dispatcher/overlay/overlay_build.c: plans, and overlays of real repositories */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/testdef.h"
#include "overlay/gitcache.h"
#include "overlay/overlay_build.h"
#include "tap.h"

static char tmp[256];

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "%s/labd-obuild.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		abort();
}

static char *sh_out(const char *fmt, const char *a)
{
	struct strbuf sb = STRBUF_INIT;
	char cmd[4096], buf[1024];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), fmt, a, a, a, a, a, a);
	f = popen(cmd, "r");
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (f)
		pclose(f);
	return strbuf_detach(&sb, NULL);
}

static struct job *parse(const char *text)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;

	if (job_parse(text, strlen(text), "job.yaml", JOB_FORMAT_YAML, &job, &d) < 0) {
		char *m = diag_join(&d);

		printf("# %s\n", m);
		free(m);
	}
	diag_release(&d);
	return job;
}

#define HEAD "job_name: t\ndevice_type: x\ntimeouts: {job: {minutes: 5}}\nactions:\n"
#define GITDEF "- test: {definitions: [{from: git, repository: 'https://x/y.git', path: a.yaml, name: a}]}\n"

TEST(test_overlay_build__plan)
{
	static const struct {
		const char *job;
		enum overlay_delivery want;
		size_t builder;
	} cases[] = {
		{ HEAD "- deploy: {to: tmpfs, kernel: {url: 'http://x/k'}, ramdisk: {url: 'http://x/r'}}\n"
		       "- boot: {method: qemu}\n" GITDEF, OVERLAY_DELIVERY_RAMDISK, 0 },
		{ HEAD "- deploy: {to: tftp, kernel: {url: 'http://x/k'}, ramdisk: {url: 'http://x/r', install_overlay: false}}\n"
		       "- boot: {method: u-boot, commands: ramdisk}\n" GITDEF, OVERLAY_DELIVERY_TYPED, 0 },
		{ HEAD "- deploy: {to: tftp, kernel: {url: 'http://x/k'}, ramdisk: {url: 'http://x/r'}}\n"
		       "- boot: {method: u-boot, commands: ramdisk, transfer_overlay: {download_command: wget, unpack_command: 'tar -C / -xzf'}}\n"
		       "- test: {definitions: [{from: url, repository: 'http://x/t.yaml', name: t}]}\n",
		  OVERLAY_DELIVERY_TRANSFER, 0 },
		{ HEAD "- boot: {method: minimal}\n" GITDEF, OVERLAY_DELIVERY_TYPED, 1 },
		{ HEAD "- deploy: {to: tmpfs, kernel: {url: 'http://x/k'}, ramdisk: {url: 'http://x/r'}}\n"
		       "- boot: {method: qemu}\n"
		       "- test: {definitions: [{from: url, repository: 'http://x/t.yaml', name: t}]}\n",
		  OVERLAY_DELIVERY_NONE, 0 },
	};
	struct overlay_plan p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job *job = parse(cases[i].job);

		CHECK(job);
		overlay_plan(job, &p);
		printf("# case %zu: %s\n", i, overlay_delivery_name(p.delivery));
		CHECK_INT(p.delivery, ==, cases[i].want);
		if (p.delivery != OVERLAY_DELIVERY_NONE)
			CHECK_INT(p.builder, ==, cases[i].builder);
		CHECK_INT(p.n_definitions, ==, 1);
		job_free(job);
	}
}

struct outcome {
	bool done;
	int err;
	enum error_type type;
	char msg[1024];
	struct overlay_build_result res;
};

static void on_built(struct overlay_build_result *res, void *ud)
{
	struct outcome *o = ud;

	o->done = true;
	o->err = res->err;
	o->type = res->type;
	snprintf(o->msg, sizeof(o->msg), "%s", res->msg ? res->msg : "");
	o->res = *res;
	res->defs = NULL;	/* taken */
	res->commits = NULL;
}

static void run_until(struct loop *l, struct outcome *o)
{
	for (int i = 0; i < 3000 && !o->done; i++)
		loop_run_once(l, 10 * USEC_PER_MSEC);
}

/* A repository like Linaro's test-definitions: a definition calling a script of the tree. */
static void make_repo(const char *dir)
{
	free(sh_out("set -e; git init -q -b master %s; cd %s; git config user.email t@t; git config user.name t;"
		    "mkdir -p automated/linux/smoke;"
		    "printf 'metadata: {format: Lava-Test Test Definition 1.0, name: smoke}\\n"
		    "params: {TESTS: pwd}\\nrun: {steps: [./automated/linux/smoke/smoke.sh -s $TESTS]}\\n'"
		    " > automated/linux/smoke/smoke.yaml;"
		    "printf '#!/bin/sh\\nlava-test-case smoke --result pass\\n' > automated/linux/smoke/smoke.sh;"
		    "chmod +x automated/linux/smoke/smoke.sh; git add -A; git commit -qm one; git tag v1;"
		    "echo two > README; git add README; git commit -qm two", dir));
}

TEST(test_overlay_build__git_and_inline)
{
	char repo[512], cache[512], path[512], text[4096], id[64], *out;
	struct gitcache_opts gopts = { .timeout = 60 * USEC_PER_SEC };
	struct overlay_build_deps deps = { 0 };
	struct overlay_build_req req = { .job_id = 42, .format = OVERLAY_CPIO_GZ, .tests = true,
					 .os = "debian" };
	struct outcome o = { 0 };
	struct overlay_build *b;
	struct gitcache *git;
	struct loop *l;
	struct job *job;

	setup();
	snprintf(repo, sizeof(repo), "%s/repo", tmp);
	snprintf(cache, sizeof(cache), "%s/git", tmp);
	snprintf(path, sizeof(path), "%s/overlay.cpio.gz", tmp);
	make_repo(repo);
	out = sh_out("git -C %s/repo rev-parse HEAD~1", tmp);
	snprintf(id, sizeof(id), "%.40s", out);
	free(out);
	snprintf(text, sizeof(text), HEAD
		 "- test:\n    definitions:\n"
		 "    - {from: git, repository: 'file://%s', path: automated/linux/smoke/smoke.yaml, name: smoke-tag, revision: v1}\n"
		 "    - {from: git, repository: 'file://%s', path: automated/linux/smoke/smoke.yaml, name: smoke-commit, revision: %s,"
		 " parameters: {TESTS: ls}, lava-signal: kmsg}\n"
		 "- test:\n    definitions:\n"
		 "    - from: inline\n      name: inline\n      path: inline/x.yaml\n"
		 "      repository: {metadata: {format: Lava-Test Test Definition 1.0, name: x},"
		 " install: {deps: [curl]}, run: {steps: [lava-test-case x --result pass]}}\n",
		 repo, repo, id);
	job = parse(text);
	CHECK(job);
	CHECK_INT(loop_new(&l), ==, 0);
	gopts.dir = cache;
	CHECK_INT(gitcache_new(l, &gopts, &git), ==, 0);
	deps.loop = l;
	deps.git = git;
	req.job = job;
	req.work_dir = tmp;
	req.path = path;
	CHECK_INT(overlay_build_start(&deps, &req, on_built, &o, &b), ==, 0);
	run_until(l, &o);
	CHECK(o.done);
	CHECK_STR(o.msg, "");
	CHECK_INT(o.res.n, ==, 3);
	CHECK_STR(o.res.defs[0]->suite, "0_smoke-tag");
	CHECK_STR(o.res.defs[1]->suite, "1_smoke-commit");
	CHECK_STR(o.res.defs[2]->suite, "2_inline");
	CHECK_STR(o.res.commits[1], id);
	CHECK_INT(strlen(o.res.commits[0]), ==, 40);
	CHECK_STR(o.res.commits[2], "");
	CHECK_INT(o.res.size, >, 100);
	out = sh_out("cd %s && zcat overlay.cpio.gz | cpio -t --quiet | grep -v '/automated/linux$\\|/automated$' | sort", tmp);
	CHECK_STR(out, "lava-42\n"
		       "lava-42/bin\n"
		       "lava-42/bin/labd-signal\n"
		       "lava-42/bin/lava-target-storage\n"
		       "lava-42/bin/lava-test-case\n"
		       "lava-42/bin/lava-test-raise\n"
		       "lava-42/bin/lava-test-reference\n"
		       "lava-42/bin/lava-test-set\n"
		       "lava-42/tests\n"
		       "lava-42/tests/0_smoke-tag\n"
		       "lava-42/tests/0_smoke-tag/automated/linux/smoke\n"
		       "lava-42/tests/0_smoke-tag/automated/linux/smoke/smoke.sh\n"
		       "lava-42/tests/0_smoke-tag/automated/linux/smoke/smoke.yaml\n"
		       "lava-42/tests/0_smoke-tag/run.sh\n"
		       "lava-42/tests/1_smoke-commit\n"
		       "lava-42/tests/1_smoke-commit/automated/linux/smoke\n"
		       "lava-42/tests/1_smoke-commit/automated/linux/smoke/smoke.sh\n"
		       "lava-42/tests/1_smoke-commit/automated/linux/smoke/smoke.yaml\n"
		       "lava-42/tests/1_smoke-commit/run.sh\n"
		       "lava-42/tests/2_inline\n"
		       "lava-42/tests/2_inline/run.sh\n");
	free(out);
	/* the script: LAVA's environment, the tree as working directory, kmsg when asked */
	out = sh_out("cd %s && zcat overlay.cpio.gz | cpio -i --quiet --to-stdout lava-42/tests/1_smoke-commit/run.sh", tmp);
	CHECK_STR(out, "#!/bin/sh\n"
		       "export PATH=/lava-42/bin:$PATH\n"
		       "export TESTRUN_ID=1_smoke-commit\n"
		       "export LAVA_SIGNAL=kmsg\n"
		       "cd '/lava-42/tests/1_smoke-commit'\n"
		       "export TESTS='ls'\n"
		       "sh /lava-42/bin/labd-signal STARTRUN 1_smoke-commit 42_1\n"
		       "./automated/linux/smoke/smoke.sh -s $TESTS\n");
	free(out);
	out = sh_out("cd %s && zcat overlay.cpio.gz | cpio -i --quiet --to-stdout lava-42/tests/2_inline/run.sh | grep apt-get", tmp);
	CHECK(strstr(out, "DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends 'curl'"));
	free(out);
	overlay_build_result_release(&o.res);
	job_free(job);
	gitcache_free(git);
	loop_free(l);
	free(sh_out("rm -rf %s", tmp));
}

TEST(test_overlay_build__failures)
{
	char repo[512], cache[512], path[512], text[4096], want[1024];
	struct gitcache_opts gopts = { .timeout = 60 * USEC_PER_SEC };
	struct overlay_build_deps deps = { 0 };
	struct overlay_build_req req = { .job_id = 7, .format = OVERLAY_TAR_GZ, .tests = true };
	struct outcome o = { 0 };
	struct overlay_build *b;
	struct gitcache *git;
	struct loop *l;
	struct job *job;

	setup();
	snprintf(repo, sizeof(repo), "%s/repo", tmp);
	snprintf(cache, sizeof(cache), "%s/git", tmp);
	snprintf(path, sizeof(path), "%s/overlay.tar.gz", tmp);
	make_repo(repo);
	CHECK_INT(loop_new(&l), ==, 0);
	gopts.dir = cache;
	CHECK_INT(gitcache_new(l, &gopts, &git), ==, 0);
	deps.loop = l;
	deps.git = git;
	req.work_dir = tmp;
	req.path = path;

	/* a path the repository does not have: the job's error */
	snprintf(text, sizeof(text), HEAD
		 "- test: {definitions: [{from: git, repository: 'file://%s', path: nope.yaml, name: n}]}\n",
		 repo);
	job = parse(text);
	req.job = job;
	CHECK_INT(overlay_build_start(&deps, &req, on_built, &o, &b), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.err, ==, -ENOENT);
	CHECK_INT(o.type, ==, ERROR_JOB);
	CHECK(!strncmp(o.msg, "test definition 'n': no file 'nope.yaml' in 'file://", 52));
	CHECK(access(path, F_OK) < 0);
	job_free(job);

	/* a repository that cannot be fetched: infrastructure, with git's reason */
	memset(&o, 0, sizeof(o));
	job = parse(HEAD "- test: {definitions: [{from: git, repository: 'file:///nonexistent', path: a.yaml, name: n}]}\n");
	req.job = job;
	CHECK_INT(overlay_build_start(&deps, &req, on_built, &o, &b), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.type, ==, ERROR_INFRASTRUCTURE);
	snprintf(want, sizeof(want), "test definition 'n': cannot fetch 'file:///nonexistent': git exited with status 128: fatal: '/nonexistent' does not appear to be a git repository");
	CHECK_STR(o.msg, want);
	job_free(job);

	/* a definition that is not one */
	memset(&o, 0, sizeof(o));
	snprintf(text, sizeof(text), HEAD
		 "- test: {definitions: [{from: git, repository: 'file://%s', path: automated/linux/smoke/smoke.sh, name: s}]}\n",
		 repo);
	job = parse(text);
	req.job = job;
	CHECK_INT(overlay_build_start(&deps, &req, on_built, &o, &b), ==, 0);
	run_until(l, &o);
	CHECK_INT(o.type, ==, ERROR_JOB);
	CHECK(strstr(o.msg, "test definition 's' from file://"));
	/* canceled: no callback, nothing left */
	memset(&o, 0, sizeof(o));
	CHECK_INT(overlay_build_start(&deps, &req, on_built, &o, &b), ==, 0);
	loop_run_once(l, 0);
	overlay_build_cancel(b);
	CHECK(!o.done);
	CHECK(access(path, F_OK) < 0);
	job_free(job);
	gitcache_free(git);
	loop_free(l);
	free(sh_out("rm -rf %s", tmp));
}

TEST_LIST(test_overlay_build__plan, test_overlay_build__git_and_inline, test_overlay_build__failures);
