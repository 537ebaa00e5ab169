// SPDX-License-Identifier: GPL-2.0-or-later
/* test-job-ci.c -- what CI jobs carry: git definitions, secrets, notify, queue timeouts, protocols */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "core/strv.h"
#include "tap.h"

static int parse(const char *text, struct job **ret, struct diag *d)
{
	return job_parse(text, strlen(text), "job.yaml", JOB_FORMAT_YAML, ret, d);
}

/* The joined messages of a failed parse (caller frees), or "(parsed)". */
static char *errors(const char *text)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	char *msgs;

	if (parse(text, &job, &d) == 0) {
		job_free(job);
		return strdup("(parsed)");
	}
	msgs = diag_join(&d);
	diag_release(&d);
	return msgs;
}

#define HEADER                                                                      \
	"job_name: ci\ndevice_type: qemu-x86_64\ntimeouts: {job: {minutes: 10}}\n"

TEST(test_job_ci__git_definitions)
{
	static const char text[] = HEADER
		"actions:\n"
		"- test:\n"
		"    definitions:\n"
		"    - from: git\n"
		"      repository: https://github.com/Linaro/test-definitions.git\n"
		"      path: automated/linux/smoke/smoke.yaml\n"
		"      name: smoke-tests\n"
		"      revision: 2023.01\n"
		"      history: false\n"
		"      params: {SKIP_INSTALL: true}\n"
		"      lava-signal: kmsg\n"
		"    - from: git\n"
		"      repository: git://127.0.0.1/tests\n"
		"      path: t.yaml\n"
		"      name: t\n"
		"      branch: stable\n"
		"      parameters: {A: 1}\n"
		"      skip_install: true\n";
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	const struct job_testdef *t;

	CHECK_INT(parse(text, &job, &d), ==, 0);
	t = &job->actions[0].test.definitions[0];
	CHECK_INT(t->source, ==, TESTDEF_GIT);
	CHECK_STR(t->url, "https://github.com/Linaro/test-definitions.git");
	CHECK_STR(t->path, "automated/linux/smoke/smoke.yaml");
	CHECK_STR(t->revision, "2023.01");
	CHECK(!t->branch);
	CHECK(!t->history);
	CHECK(t->kmsg);
	CHECK_INT(t->skip_install, ==, 0);
	CHECK_STR(kv_get(&t->parameters, "SKIP_INSTALL"), "true");
	t = &job->actions[0].test.definitions[1];
	CHECK_STR(t->branch, "stable");
	CHECK(!t->revision);
	CHECK(t->history);
	CHECK(!t->kmsg);
	CHECK_INT(t->skip_install, ==, TESTDEF_SKIP_ALL);
	CHECK_STR(kv_get(&t->parameters, "A"), "1");
	job_free(job);
}

TEST(test_job_ci__git_refusals)
{
	static const char text[] = HEADER
		"actions:\n"
		"- test:\n"
		"    definitions:\n"
		"    - from: git\n"
		"      repository: git@github.com:x/y.git\n"
		"      path: /etc/passwd\n"
		"      name: a\n"
		"      branch: 'a b'\n"
		"    - from: inline\n"
		"      name: b\n"
		"      revision: v1\n"
		"      params: {A: 1}\n"
		"      parameters: {B: 2}\n"
		"      lava-signal: uart\n"
		"      repository: {metadata: {format: Lava-Test Test Definition 1.0, name: b},"
		" run: {steps: [true]}}\n";
	char *m = errors(text);

	CHECK(strstr(m, "job.yaml:8: actions[0].test.definitions[0]: unsupported repository 'git@github.com:x/y.git'"));
	CHECK(strstr(m, "job.yaml:9: actions[0].test.definitions[0]: 'path' must be a file of the repository"));
	CHECK(strstr(m, "job.yaml:11: actions[0].test.definitions[0]: invalid branch 'a b'"));
	CHECK(strstr(m, "job.yaml:14: actions[0].test.definitions[1]: 'revision' only applies to test definitions from git"));
	CHECK(strstr(m, "job.yaml:15: actions[0].test.definitions[1]: give 'parameters' or 'params', not both"));
	CHECK(strstr(m, "job.yaml:17: actions[0].test.definitions[1]: unsupported lava-signal 'uart' (supported: stdout, kmsg)"));
	free(m);
}

TEST(test_job_ci__git_allow)
{
	static const char text[] = HEADER
		"actions:\n"
		"- test:\n"
		"    definitions:\n"
		"    - {from: git, repository: 'https://github.com/Linaro/test-definitions.git', path: a.yaml, name: a}\n"
		"    - {from: git, repository: 'https://example.com/evil.git', path: a.yaml, name: b}\n";
	char *allow[] = { "https://github.com/Linaro/", NULL };
	struct diag d = DIAG_INIT, d2 = DIAG_INIT;
	struct job *job = NULL;

	CHECK_INT(parse(text, &job, &d), ==, 0);
	CHECK_INT(job_check_git_allow(job, allow, &d), ==, -EINVAL);
	CHECK_INT(d.n, ==, 1);
	CHECK_STR(d.msgs[0], "job.yaml:8: actions[0].test.definitions[1]: repository 'https://example.com/evil.git' is not allowed in this lab (git_allow in labd.conf lists the URL prefixes it fetches from)");
	/* nothing is allowed unless the admin lists it */
	CHECK_INT(job_check_git_allow(job, NULL, &d2), ==, -EINVAL);
	CHECK_INT(d2.n, ==, 2);
	CHECK(strstr(d2.msgs[0], "fetches from: none)"));
	diag_release(&d);
	diag_release(&d2);
	job_free(job);
}

TEST(test_job_ci__secrets_notify_queue)
{
	static const char text[] =
		"job_name: ci\ndevice_type: qemu-x86_64\n"
		"timeouts: {job: {minutes: 10}, queue: {days: 2}}\n"
		"visibility: {group: [ci]}\n"
		"secrets: {API_TOKEN: s3cr3t, PIN: 1234}\n"
		"notify:\n"
		"  criteria: {status: complete}\n"
		"  callback:\n"
		"    url: https://kernelci.example.org/node/{ID}\n"
		"    method: POST\n"
		"    token: kernelci-callback\n"
		"    dataset: all\n"
		"    content-type: json\n"
		"actions:\n"
		"- test:\n"
		"    definitions:\n"
		"    - {from: url, repository: 'https://example.com/t.yaml', name: t}\n";
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	const struct job_callback *cb;

	CHECK_INT(parse(text, &job, &d), ==, 0);
	CHECK_INT(job->queue_timeout, ==, 2 * 86400 * 1000000ULL);
	CHECK_STR(job->visibility, "group");
	CHECK_STR(kv_get(&job->secrets, "API_TOKEN"), "s3cr3t");
	CHECK_STR(kv_get(&job->secrets, "PIN"), "1234");
	CHECK(job->has_notify);
	CHECK_INT(job->notify.status, ==, NOTIFY_COMPLETE);
	CHECK_INT(job->notify.n_callbacks, ==, 1);
	cb = &job->notify.callbacks[0];
	CHECK_STR(cb->url, "https://kernelci.example.org/node/{ID}");
	CHECK(cb->post);
	CHECK(cb->json);
	CHECK_STR(cb->token, "kernelci-callback");
	CHECK(!cb->header);
	CHECK_INT(cb->dataset, ==, NOTIFY_DATASET_ALL);
	CHECK_INT(cb->line, ==, 8);
	job_free(job);
}

TEST(test_job_ci__notify_refusals)
{
	static const char text[] = HEADER
		"secrets: {1X: a, B: [1]}\n"
		"notify:\n"
		"  criteria: {status: regressed, type: regression}\n"
		"  recipients: [{to: {method: email, user: me}}]\n"
		"  callbacks:\n"
		"  - {url: 'ftp://x/y', method: PUT, dataset: some, content-type: xml}\n"
		"  - {url: 'http://x/y', header: 'Bad Header'}\n"
		"actions:\n"
		"- boot: {method: qemu, role: [a]}\n";
	char *m = errors(text);

	CHECK(strstr(m, "job.yaml:4: secrets: invalid secret name '1X'"));
	CHECK(strstr(m, "job.yaml:4: secrets: secret 'B' must be a string, not a list"));
	CHECK(strstr(m, "job.yaml:6: notify.criteria: unsupported status 'regressed' (supported: running, finished, complete, incomplete, canceled, all)"));
	CHECK(strstr(m, "job.yaml:6: notify.criteria: unsupported key 'type'"));
	CHECK(strstr(m, "job.yaml:7: notify: unsupported key 'recipients': email and IRC notifications are not supported"));
	CHECK(strstr(m, "job.yaml:9: notify.callbacks[0]: unsupported callback URL 'ftp://x/y'"));
	CHECK(strstr(m, "job.yaml:9: notify.callbacks[0]: unsupported method 'PUT' (supported: GET, POST)"));
	CHECK(strstr(m, "job.yaml:9: notify.callbacks[0]: unsupported dataset 'some'"));
	CHECK(strstr(m, "job.yaml:9: notify.callbacks[0]: unsupported content-type 'xml'"));
	CHECK(strstr(m, "job.yaml:10: notify.callbacks[1]: invalid header name 'Bad Header'"));
	CHECK(strstr(m, "job.yaml:12: actions[0].boot: 'role' only applies to multinode jobs"));
	free(m);
}

/* A multinode job is refused for that, and for every other mistake too. */
TEST(test_job_ci__multinode_refused_after_other_checks)
{
	static const char text[] =
		"job_name: mn\n"
		"timeouts: {job: {minutes: 10}, queue: {hours: 1}}\n"
		"protocols:\n"
		"  lava-multinode:\n"
		"    roles: {server: {device_type: qemu, count: 1}}\n"
		"actions:\n"
		"- deploy: {to: tmpfs, role: [server], kernel: {url: 'ftp://x'}}\n"
		"- boot: {method: grubby, role: [server]}\n";
	struct diag d = DIAG_INIT;
	struct job *job = NULL;

	CHECK_INT(parse(text, &job, &d), ==, -EINVAL);
	CHECK_INT(d.n, ==, 3);
	CHECK_STR(d.msgs[0], "job.yaml:4: protocols: unsupported key 'lava-multinode': multinode jobs are not supported: labd runs a job on one board");
	CHECK(strstr(d.msgs[1], "job.yaml:7: actions[0].deploy.kernel: unsupported URL 'ftp://x'"));
	CHECK(strstr(d.msgs[2], "job.yaml:8: actions[1].boot: unsupported boot method 'grubby'"));
	diag_release(&d);
}

TEST(test_job_ci__transfer_overlay_and_prompt_string)
{
	static const char text[] = HEADER
		"actions:\n"
		"- boot:\n"
		"    method: qemu\n"
		"    prompts: 'root@guest:'\n"
		"    parameters: {shutdown-message: 'reboot: Restarting system'}\n"
		"    transfer_overlay:\n"
		"      download_command: cd /tmp ; wget\n"
		"      unpack_command: tar -C / -xzf\n";
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	const struct job_boot *b;

	CHECK_INT(parse(text, &job, &d), ==, 0);
	b = &job->actions[0].boot;
	CHECK_INT(strv_length(b->prompts), ==, 1);
	CHECK_STR(b->prompts[0], "root@guest:");
	CHECK_STR(b->download_command, "cd /tmp ; wget");
	CHECK_STR(b->unpack_command, "tar -C / -xzf");
	job_free(job);
}

/* The stored text keeps everything but the secrets' and passwords' values. */
TEST(test_job_ci__redact)
{
	static const char text[] =
		"# a comment that stays\n"
		"job_name: ci\ndevice_type: qemu-x86_64\ntimeouts: {job: {minutes: 10}}\n"
		"metadata:\n  pw: &pw 'hunter2'\n"
		"secrets:\n"
		"  PLAIN: s3cr3t-plain\n"
		"  QUOTED: \"s3cr3t \\\"quoted\\\"\"\n"
		"  FLOW: {a: b}\n"
		"  BLOCK: |\n"
		"    s3cr3t-block\n"
		"  SAME: SAME\n"
		"actions:\n"
		"- boot: {method: minimal, prompts: ['# '], auto_login: {login_prompt: 'login:', username: root, password_prompt: 'Password:', password: *pw}}\n";
	static const char json[] =
		"{\"job_name\": \"ci\", \"device_type\": \"x\", \"timeouts\": {\"job\": {\"minutes\": 1}},"
		" \"secrets\": {\"A\": \"s3cr3t-json\"}, \"actions\": [{\"boot\": {\"method\": \"minimal\","
		" \"auto_login\": {\"login_prompt\": \"l:\", \"username\": \"u\", \"password_prompt\": \"p:\","
		" \"password\": \"hunter3\"}}}]}";
	struct diag d = DIAG_INIT;
	struct job *job = NULL, *again = NULL;
	char *out = NULL;
	size_t len;

	/* a secret must be a scalar */
	CHECK_INT(parse(text, &job, &d), ==, -EINVAL);
	CHECK(strstr(d.msgs[0], "secret 'FLOW' must be a string, not a mapping"));
	diag_release(&d);
	{
		char fixed[sizeof(text)];
		char *p;

		memcpy(fixed, text, sizeof(text));
		p = strstr(fixed, "  FLOW: {a: b}\n");
		memmove(p, p + 15, strlen(p + 15) + 1);
		CHECK_INT(parse(fixed, &job, &d), ==, 0);
		CHECK_STR(kv_get(&job->secrets, "BLOCK"), "s3cr3t-block\n");
		CHECK_INT(job_redact(job, fixed, strlen(fixed), JOB_FORMAT_YAML, &out, &len), ==, 0);
	}
	CHECK(!strstr(out, "s3cr3t") && !strstr(out, "hunter2"));
	CHECK(strstr(out, "# a comment that stays\n"));
	CHECK(strstr(out, "  pw: &pw \"[secret]\"\n"));
	CHECK(strstr(out, "  SAME: \"[secret]\"\n"));
	CHECK(strstr(out, "  BLOCK: \"[secret]\"\n"));
	CHECK_INT(job_parse(out, len, "stored.yaml", JOB_FORMAT_YAML, &again, &d), ==, 0);
	CHECK_STR(kv_get(&again->secrets, "PLAIN"), "[secret]");
	CHECK_STR(kv_get(&again->secrets, "BLOCK"), "[secret]");
	CHECK_STR(again->actions[0].boot.auto_login.password, "[secret]");
	free(out);
	job_free(job);
	job_free(again);
	CHECK_INT(job_parse(json, strlen(json), "job.json", JOB_FORMAT_JSON, &job, &d), ==, 0);
	CHECK_INT(job_redact(job, json, strlen(json), JOB_FORMAT_JSON, &out, &len), ==, 0);
	CHECK(!strstr(out, "s3cr3t") && !strstr(out, "hunter3"));
	CHECK(strstr(out, "\"A\": \"[secret]\""));
	free(out);
	job_free(job);
}

TEST_LIST(test_job_ci__git_definitions, test_job_ci__redact, test_job_ci__git_refusals, test_job_ci__git_allow,
	  test_job_ci__secrets_notify_queue, test_job_ci__notify_refusals,
	  test_job_ci__multinode_refused_after_other_checks,
	  test_job_ci__transfer_overlay_and_prompt_string);
