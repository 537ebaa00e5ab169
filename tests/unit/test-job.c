// SPDX-License-Identifier: GPL-2.0-or-later
/* test-job.c -- dispatcher/job/job*.c: the schema, both front ends, lines, limits, LAVA's jobs */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config/config.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "tap.h"

/* Jobs of LAVA's tree that labd runs as they are; see test_job__lava_corpus. */
static const char *const lava_expected_ok[] = {
	"doc_content_admin_basic-tutorials_device-setup_u-boot__embedded-2.yaml",
	"tests_lava_scheduler_app_health-checks__rk3399-puma-haikou.yaml",
	/* QEMU jobs whose image_arg are in the allowed set */
	"doc_v2_examples_test-jobs__inline-test-definition-example.yaml",
	"tests_lava_dispatcher_sample_jobs__kvm-inline.yaml",
	"tests_lava_dispatcher_sample_jobs__kvm-notest.yaml",
	"tests_lava_dispatcher_sample_jobs__kvm-notest-noprompts.yaml",
	"tests_lava_dispatcher_sample_jobs__qemu-monitor.yaml",
	"tests_lava_dispatcher_sample_jobs__zephyr-qemu-test-task.yaml",
	/* the bootloader methods (grub, ipxe, depthcharge, bootloader) */
	"doc_v2_examples_test-jobs__bbb-uboot-interactive.yaml",
	"tests_lava_dispatcher_sample_jobs__b2260-bootloader.yaml",
	"tests_lava_dispatcher_sample_jobs__bbb-uboot-interactive.yaml",
	"tests_lava_dispatcher_sample_jobs__depthcharge.yaml",
	"tests_lava_dispatcher_sample_jobs__depthcharge_commands_override.yaml",
	"tests_lava_dispatcher_sample_jobs__grub-centos-installed-x86.yaml",
	"tests_lava_dispatcher_sample_jobs__grub-installed-x86.yaml",
	"tests_lava_dispatcher_sample_jobs__grub-ramdisk-monitor.yaml",
	"tests_lava_dispatcher_sample_jobs__ipxe-monitor.yaml",
	"tests_lava_dispatcher_sample_jobs__synquacer-dtb.yaml",
	/* parameters: shutdown-message is accepted (labd never reboots from the shell) */
	"tests_lava_dispatcher_sample_jobs__bbb-ramdisk-nfs.yaml",
	NULL,
};

/* Helpers */

static const char *top_dir(void)
{
	const char *top = getenv("LABD_TOP");

	return top ? top : ".";
}

static char *read_file(const char *path, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb, len);
}

static char *data_file(const char *name, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/tests/data/jobs/%s", top_dir(), name);
	return read_file(path, len);
}

static int parse(const char *text, enum job_format fmt, struct job **ret, struct diag *d)
{
	return job_parse(text, strlen(text), fmt == JOB_FORMAT_JSON ? "job.json" : "job.yaml",
			 fmt, ret, d);
}

/* Parse @text expecting failure; the joined messages (caller frees). */
static char *parse_errors(const char *text, enum job_format fmt)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	char *msgs;

	if (parse(text, fmt, &job, &d) == 0) {
		job_free(job);
		return strdup("(parsed)");
	}
	msgs = diag_join(&d);
	diag_release(&d);
	return msgs;
}

static void dump_strv(struct strbuf *sb, const char *what, char **v)
{
	strbuf_addf(sb, "%s:", what);
	STRV_FOREACH(s, v)
		strbuf_addf(sb, " [%s]", *s);
	strbuf_addch(sb, '\n');
}

static void dump_kv(struct strbuf *sb, const char *what, const struct kv *m)
{
	size_t i;

	strbuf_addf(sb, "%s:", what);
	for (i = 0; i < m->n; i++)
		strbuf_addf(sb, " %s=%s", m->keys[i], m->vals[i]);
	strbuf_addch(sb, '\n');
}

static void dump_json(struct strbuf *sb, const char *what, const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;

	strbuf_addf(sb, "%s: %s\n", what, s ? s : "(null)");
	free(s);
}

#define S(x) ((x) ? (x) : "(null)")

static void dump_deploy(struct strbuf *sb, const struct job_deploy *d)
{
	size_t i;

	strbuf_addf(sb, "deploy to=%s os=%s\n", deploy_to_name(d->to), S(d->os));
	for (i = 0; i < d->n_artifacts; i++)
		strbuf_addf(sb, " artifact %s %s sha=%s comp=%s type=%s uhdr=%d\n",
			    d->artifacts[i].label, d->artifacts[i].url, S(d->artifacts[i].sha256sum),
			    S(d->artifacts[i].compression), S(d->artifacts[i].kernel_type),
			    d->artifacts[i].uboot_header);
}

static void dump_boot(struct strbuf *sb, const struct job_boot *b)
{
	strbuf_addf(sb, "boot method=%s set=%s reset=%d kstart=%s ignore=%d append=%s\n",
		    boot_method_name(b->method), S(b->commands_name), b->reset,
		    S(b->kernel_start_message), b->ignore_kernel_messages, S(b->qemu_append));
	dump_strv(sb, " commands", b->commands);
	dump_strv(sb, " prompts", b->prompts);
	if (b->has_auto_login) {
		strbuf_addf(sb, " login %s %s %s %s\n", b->auto_login.login_prompt,
			    b->auto_login.username, S(b->auto_login.password_prompt),
			    S(b->auto_login.password));
		dump_strv(sb, " login_commands", b->auto_login.login_commands);
	}
}

static void dump_patterns(struct strbuf *sb, const char *what,
			  const struct job_interactive_pattern *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		strbuf_addf(sb, "   %s %s %s %s\n", what, p[i].message, S(p[i].exception),
			    S(p[i].error));
}

static void dump_interactive(struct strbuf *sb, const struct job_interactive *t)
{
	size_t i;

	strbuf_addf(sb, " interactive %s echo_discard=%d\n", t->name, t->echo_discard);
	dump_strv(sb, "  prompts", t->prompts);
	for (i = 0; i < t->n_steps; i++) {
		strbuf_addf(sb, "  step %s cmd=%s wait=%d\n", S(t->steps[i].name),
			    S(t->steps[i].command), t->steps[i].wait_for_prompt);
		dump_patterns(sb, "ok", t->steps[i].successes, t->steps[i].n_successes);
		dump_patterns(sb, "fail", t->steps[i].failures, t->steps[i].n_failures);
	}
}

static void dump_test(struct strbuf *sb, const struct job_test *t)
{
	size_t i;

	strbuf_addf(sb, "test %s\n", test_kind_name(t->kind));
	for (i = 0; i < t->n_interactive; i++)
		dump_interactive(sb, &t->interactive[i]);
	for (i = 0; i < t->n_monitors; i++) {
		strbuf_addf(sb, " monitor %s %s %s %s\n", t->monitors[i].name, t->monitors[i].start,
			    t->monitors[i].end, t->monitors[i].pattern);
		dump_kv(sb, "  fixupdict", &t->monitors[i].fixupdict);
	}
	for (i = 0; i < t->n_definitions; i++) {
		const struct job_testdef *d = &t->definitions[i];

		strbuf_addf(sb, " def %s from=%s path=%s url=%s\n", d->name, d->from, S(d->path),
			    S(d->url));
		dump_json(sb, "  definition", d->definition);
		dump_kv(sb, "  parameters", &d->parameters);
		dump_strv(sb, "  expected", d->expected);
	}
}

/* Everything in @job but source lines, as text. */
static char *dump_job(const struct job *job)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addf(&sb, "name=%s type=%s prio=%d retries=%u\n", job->name, job->device_type,
		    job->priority, job->infrastructure_retries);
	dump_strv(&sb, "tags", job->tags);
	strbuf_addf(&sb, "timeouts %llu %llu %llu\n", (unsigned long long)job->timeout,
		    (unsigned long long)job->action_timeout,
		    (unsigned long long)job->connection_timeout);
	dump_kv(&sb, "stages", &job->stage_timeouts);
	dump_kv(&sb, "connections", &job->connection_timeouts);
	dump_json(&sb, "context", job->context);
	dump_json(&sb, "metadata", job->metadata);
	for (i = 0; i < job->n_actions; i++) {
		const struct job_action *a = &job->actions[i];

		strbuf_addf(&sb, "action %s timeout=%llu retry=%u\n", job_action_kind_name(a->kind),
			    (unsigned long long)a->timeout, a->failure_retry);
		dump_kv(&sb, " timeouts", &a->timeouts);
		if (a->kind == JOB_ACTION_DEPLOY)
			dump_deploy(&sb, &a->deploy);
		else if (a->kind == JOB_ACTION_BOOT)
			dump_boot(&sb, &a->boot);
		else
			dump_test(&sb, &a->test);
	}
	return strbuf_detach(&sb, NULL);
}

static struct job *parse_data(const char *name, struct diag *d)
{
	struct job *job = NULL;
	size_t len;
	char *text = data_file(name, &len);

	if (!text)
		return NULL;
	if (job_parse(text, len, name, JOB_FORMAT_AUTO, &job, d) < 0) {
		char *msgs = diag_join(d);

		printf("# %s\n", msgs);
		free(msgs);
	}
	free(text);
	return job;
}

#define MIN 60000000ULL

/* Good jobs */

TEST(test_job__good_uboot)
{
	struct diag d = DIAG_INIT;
	struct job *job = parse_data("good-uboot.yaml", &d);
	const struct job_action *a;

	CHECK(job);
	CHECK_STR(job->name, "bbb ramdisk smoke test");
	CHECK_STR(job->device_type, "bbb");
	CHECK_INT(strv_length(job->tags), ==, 2);
	CHECK_INT(job->priority, ==, 100);
	CHECK_INT(job->infrastructure_retries, ==, 2);
	CHECK(job->timeout == 30 * MIN && job->action_timeout == 5 * MIN);
	CHECK(job->connection_timeout == 90000000ULL);
	CHECK_STR(kv_get(&job->stage_timeouts, "bootloader-commands"), "180000000");
	CHECK_STR(kv_get(&job->connection_timeouts, "bootloader-commands"), "30000000");
	CHECK_STR(json_string_value(json_object_get(job->context, "extra_kernel_args")), "quiet");
	CHECK_STR(json_string_value(json_object_get(job->metadata, "build")), "123");
	CHECK_INT(job->n_actions, ==, 4);

	a = &job->actions[0];
	CHECK(a->kind == JOB_ACTION_DEPLOY && a->deploy.to == DEPLOY_TO_TFTP);
	CHECK(a->timeout == 10 * MIN);
	CHECK_INT(a->line, ==, 33);
	CHECK_INT(a->deploy.n_artifacts, ==, 3);
	CHECK_STR(a->deploy.artifacts[0].label, "kernel");
	CHECK_STR(a->deploy.artifacts[0].kernel_type, "zimage");
	CHECK_INT(a->deploy.artifacts[0].line, ==, 37);
	CHECK_STR(a->deploy.artifacts[1].label, "ramdisk");
	CHECK(a->deploy.artifacts[1].uboot_header);
	CHECK_STR(a->deploy.artifacts[1].compression, "gz");
	CHECK_STR(a->deploy.artifacts[1].sha256sum,
		  "0447396e1a92b462c330ed61d14f4964281e9f663897142df713cdf6f8c2a06e");
	CHECK_STR(a->deploy.artifacts[2].url, "file:///srv/images/am335x-boneblack.dtb");
	CHECK_STR(a->deploy.os, "oe");

	a = &job->actions[1];
	CHECK(a->kind == JOB_ACTION_BOOT && a->boot.method == BOOT_METHOD_UBOOT);
	CHECK_INT(a->failure_retry, ==, 2);
	CHECK(a->timeout == 5 * MIN);
	CHECK_STR(a->boot.commands_name, "ramdisk");
	CHECK(!a->boot.commands && a->boot.reset && !a->boot.qemu_append);
	CHECK_STR(a->boot.kernel_start_message, "Linux version [0-9]");
	CHECK(a->boot.has_auto_login);
	CHECK_STR(a->boot.auto_login.password, "secret");
	CHECK_STR(a->boot.auto_login.login_commands[0], "dmesg -n 1");
	CHECK_STR(a->boot.prompts[1], "/ # ");
	job_free(job);
	diag_release(&d);
}

TEST(test_job__good_tests)
{
	struct diag d = DIAG_INIT;
	struct job *job = parse_data("good-uboot.yaml", &d);
	const struct job_testdef *def;
	const struct job_interactive *it;

	CHECK(job);
	CHECK(job->actions[2].test.kind == TEST_KIND_DEFINITIONS);
	CHECK_INT(job->actions[2].test.n_definitions, ==, 2);
	def = &job->actions[2].test.definitions[0];
	CHECK_STR(def->from, "inline");
	CHECK_STR(kv_get(&def->parameters, "ITERATIONS"), "3");
	CHECK_STR(kv_get(&def->parameters, "VERBOSE"), "true");
	CHECK_STR(def->expected[1], "network");
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(
			  def->definition, "run"), "steps"), 0)),
		  "lava-test-case uname --shell uname -a");
	CHECK_STR(job->actions[2].test.definitions[1].url,
		  "https://example.com/testdefs/ltp-smoke.yaml");

	CHECK(job->actions[3].test.kind == TEST_KIND_INTERACTIVE);
	it = &job->actions[3].test.interactive[0];
	CHECK(it->echo_discard);
	CHECK_INT(it->n_steps, ==, 2);
	CHECK(!it->steps[0].command && it->steps[0].wait_for_prompt);
	CHECK_STR(it->steps[1].command, "printenv bootcmd");
	CHECK(!it->steps[1].wait_for_prompt);
	CHECK_STR(it->steps[1].failures[0].exception, "InfrastructureError");
	CHECK_INT(it->steps[1].line, ==, 106);
	job_free(job);
	diag_release(&d);
}

TEST(test_job__good_minimal)
{
	struct diag d = DIAG_INIT;
	struct job *job = parse_data("good-minimal.json", &d);
	const struct job_monitor *m;

	CHECK(job);
	CHECK_INT(job->priority, ==, 25);
	CHECK(job->actions[0].deploy.to == DEPLOY_TO_NONE);
	CHECK(!job->actions[1].boot.reset && job->actions[1].boot.ignore_kernel_messages);
	CHECK(!job->actions[1].boot.prompts);
	CHECK(job->action_timeout == JOB_DEFAULT_ACTION_TIMEOUT);
	CHECK_INT(job->actions[2].failure_retry, ==, 1);
	m = &job->actions[2].test.monitors[0];
	CHECK_STR(m->pattern, "(?P<result>(PASS|FAIL)) - (?P<test_case_id>\\w+)\\.");
	CHECK_STR(kv_get(&m->fixupdict, "FAIL"), "fail");
	CHECK_INT(m->line, ==, 19);	/* JSON lines come from libyaml */
	CHECK_INT(json_object_size(job->context), ==, 0);
	job_free(job);
	diag_release(&d);
}

/* YAML and JSON versions of one job give the same struct. */
TEST(test_job__yaml_json_identical)
{
	static const char *const pairs[][2] = {
		{ "good-uboot.yaml", "good-uboot.json" },
		{ "good-minimal.yaml", "good-minimal.json" },
	};
	struct diag d = DIAG_INIT;
	struct job *y, *j;
	char *dy, *dj;
	size_t i;

	for (i = 0; i < 2; i++) {
		y = parse_data(pairs[i][0], &d);
		j = parse_data(pairs[i][1], &d);
		CHECK(y && j);
		dy = dump_job(y);
		dj = dump_job(j);
		CHECK_STR(dy, dj);
		CHECK_INT(y->n_actions, ==, j->n_actions);
		free(dy);
		free(dj);
		job_free(y);
		job_free(j);
	}
	diag_release(&d);
}

/* Bad jobs: each tests/data/jobs/bad-*.yaml lists its diagnostics as "# expect: LINE: cause". */

static void expected_msgs(const char *name, const char *text, char ***ret)
{
	const char *p = text, *nl;
	char *line;

	while ((p = strstr(p, "\n# expect: "))) {
		p += strlen("\n# expect: ");
		nl = strchrnul(p, '\n');
		if (asprintf(&line, "%s:%.*s", name, (int)(nl - p), p) >= 0)
			strv_consume(ret, line);
	}
}

static int check_bad_file(const char *name)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	char **want = NULL;
	size_t len, i, n;
	char *text = data_file(name, &len);
	int bad = 0;

	if (!text)
		return 1;
	expected_msgs(name, text, &want);
	if (job_parse(text, len, name, JOB_FORMAT_AUTO, &job, &d) != -EINVAL || !want)
		bad = 1;
	n = d.n > strv_length(want) ? d.n : strv_length(want);
	for (i = 0; i < n; i++) {
		const char *got = i < d.n ? d.msgs[i] : "(nothing)";
		const char *exp = i < strv_length(want) ? want[i] : "(nothing)";

		if (strcmp(got, exp)) {
			printf("#   got:      %s\n#   expected: %s\n", got, exp);
			bad = 1;
		}
	}
	job_free(job);
	strv_free(want);
	diag_release(&d);
	free(text);
	return bad;
}

TEST(test_job__bad_files)
{
	char path[512];
	struct dirent *e;
	int n = 0, bad = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/tests/data/jobs", top_dir());
	dir = opendir(path);
	CHECK(dir);
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "bad-", 4))
			continue;
		n++;
		if (check_bad_file(e->d_name)) {
			printf("#   in %s\n", e->d_name);
			bad++;
		}
	}
	closedir(dir);
	CHECK_INT(n, >=, 7);
	CHECK_INT(bad, ==, 0);
}

/* Specific messages */

static const char job_head[] = "job_name: t\ndevice_type: bbb\ntimeouts: {job: {minutes: 5}}\n";

TEST(test_job__errors_are_all_reported_in_order)
{
	char *m = parse_errors("job_name: t\n"
			       "timeouts: {job: {minutes: 5}}\n"
			       "actions:\n"
			       "- test:\n"
			       "    monitors:\n"
			       "    - {name: m, start: a, end: b, pattern: '(?P<test_case_id>x'}\n"
			       "- boot: {method: lxc}\n"
			       "priority: urgent\n",
			       JOB_FORMAT_YAML);

	CHECK_STR(m, "job.yaml:1: missing required key 'device_type'\n"
		     "job.yaml:6: actions[0].test.monitors[0]: invalid regex '(?P<test_case_id>x' in 'pattern': missing closing parenthesis at offset 18\n"
		     "job.yaml:7: actions[1].boot: unsupported boot method 'lxc' (supported: minimal, u-boot, qemu, fastboot, barebox, grub, grub-efi, ipxe, depthcharge, uefi-menu, bootloader)\n"
		     "job.yaml:8: 'priority' must be high, medium, low or 0 to 100");
	free(m);
}

TEST(test_job__json_errors_have_lines)
{
	char *m = parse_errors("{\n"
			       "  \"job_name\": \"t\",\n"
			       "  \"device_type\": \"bbb\",\n"
			       "  \"timeouts\": {\"job\": {\"minutes\": 0}},\n"
			       "  \"actions\": [\n"
			       "    {\"boot\": {\"method\": \"minimal\",\n"
			       "              \"prompts\": [\"ok\", \"(bad\"]}}\n"
			       "  ]\n"
			       "}\n",
			       JOB_FORMAT_JSON);

	CHECK_STR(m, "job.json:4: timeouts.job: timeout must be longer than 0 seconds\n"
		     "job.json:7: actions[0].boot.prompts[1]: invalid regex '(bad': missing closing parenthesis at offset 4");
	free(m);
	m = parse_errors("{\"job_name\": \"t\",\n \"actions\": [1, }\n", JOB_FORMAT_JSON);
	CHECK_CONTAINS(m, "job.json:2: invalid JSON: ");
	free(m);
	m = parse_errors("{\"job_name\": \"t\", \"job_name\": \"u\"}", JOB_FORMAT_JSON);
	CHECK_CONTAINS(m, "job.json:1: warning: duplicate key 'job_name' (also at line 1): the value of line 1 is used");
	free(m);
}

TEST(test_job__duplicate_keys_keep_the_last_with_a_warning)
{
	struct strbuf sb = STRBUF_INIT;
	struct diag d = DIAG_INIT;
	struct job *job;

	strbuf_addf(&sb, "%sactions:\n- boot:\n    method: minimal\n    timeout: {minutes: 1}\n"
		    "    timeout: {minutes: 2}\n", job_head);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == 0);
	CHECK(job->actions[0].timeout == 2 * 60 * 1000000ULL);
	CHECK_INT(job->n_warnings, ==, 1);
	CHECK_INT(strv_length(job->notices), ==, 1);
	CHECK_STR(job->notices[0], "job.yaml:8: warning: duplicate key 'timeout' (also at line 7): the value of line 8 is used, as LAVA's loader keeps the last");
	job_free(job);
	/* JSON too: jansson keeps the last value, the lines pass warns */
	CHECK(parse("{\"job_name\": \"t\", \"device_type\": \"bbb\", \"job_name\": \"u\",\n"
		    " \"timeouts\": {\"job\": {\"minutes\": 5}},\n"
		    " \"actions\": [{\"boot\": {\"method\": \"minimal\"}}]}\n",
		    JOB_FORMAT_JSON, &job, &d) == 0);
	CHECK_STR(job->name, "u");
	CHECK_INT(job->n_warnings, ==, 1);
	job_free(job);
	diag_release(&d);
	strbuf_release(&sb);
}

TEST(test_job__notes_for_what_is_ignored)
{
	struct strbuf sb = STRBUF_INIT;
	struct diag d = DIAG_INIT;
	struct job *job;

	strbuf_addf(&sb, "%sactions:\n- deploy:\n    to: tftp\n    root_partition: 1\n"
		    "    kernel: {url: 'http://x/k', image_arg: '-kernel {kernel} -serial stdio'}\n"
		    "- boot:\n    method: minimal\n    auto_login: {login_prompt: 'login:', username: ''}\n"
		    "    prompts: ['# ']\n", job_head);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == 0);
	CHECK_INT(job->n_warnings, ==, 0);
	CHECK_INT(strv_length(job->notices), ==, 2);
	CHECK_STR(job->notices[0], "job.yaml:7: note: actions[0].deploy: 'root_partition' ignored: it names the partition of a disk image that gets the test overlay; this deploy writes none");
	CHECK_STR(job->notices[1], "job.yaml:8: note: actions[0].deploy.kernel: 'image_arg' ignored: it only tells QEMU how to attach the image, and this deploy is to 'tftp'");
	CHECK_STR(job->actions[1].boot.auto_login.username, "");
	job_free(job);
	diag_release(&d);
	strbuf_release(&sb);
}

TEST(test_job__regex_and_named_groups)
{
	struct strbuf sb = STRBUF_INIT;
	char *m;

	strbuf_addf(&sb, "%sactions:\n- test:\n    monitors:\n"
		    "    - {name: m, start: a, end: b, pattern: '(?P<case>\\w+) ok'}\n", job_head);
	m = parse_errors(sb.buf, JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:7: actions[0].test.monitors[0]: 'pattern' must capture 'test_case_id' with (?P<test_case_id>...)\n"
		     "job.yaml:7: actions[0].test.monitors[0]: 'pattern' must capture 'result' with (?P<result>...)");
	free(m);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%sactions:\n- boot:\n    method: minimal\n    prompts: ['a+', '*x']\n",
		    job_head);
	m = parse_errors(sb.buf, JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:7: actions[0].boot.prompts[1]: invalid regex '*x': quantifier does not follow a repeatable item at offset 0");
	free(m);
	strbuf_release(&sb);
}

TEST(test_job__priority_values)
{
	static const struct {
		const char *v;
		int want;
	} cases[] = { { "high", 100 }, { "medium", 50 }, { "low", 0 }, { "0", 0 }, { "100", 100 },
		      { "77", 77 } };
	struct diag d = DIAG_INIT;
	struct job *job;
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%spriority: %s\nactions: [{boot: {method: minimal}}]\n",
			 job_head, cases[i].v);
		CHECK(parse(text, JOB_FORMAT_YAML, &job, &d) == 0);
		CHECK_INT(job->priority, ==, cases[i].want);
		job_free(job);
	}
	snprintf(text, sizeof(text), "%spriority: 101\nactions: [{boot: {method: minimal}}]\n",
		 job_head);
	CHECK(parse(text, JOB_FORMAT_YAML, &job, &d) == -EINVAL);
	CHECK_STR(d.msgs[0], "job.yaml:4: 'priority' must be high, medium, low or 0 to 100");
	diag_release(&d);
}

TEST(test_job__qemu_and_context)
{
	struct strbuf sb = STRBUF_INIT;
	struct diag d = DIAG_INIT;
	struct job *job;

	strbuf_addf(&sb, "%scontext: {extra_kernel_args: 'console=ttyAMA0', arch: arm64}\n"
		    "actions:\n- deploy:\n    to: tmpfs\n    images:\n"
		    "      kernel: {url: 'https://example.com/Image'}\n"
		    "      initrd: {url: 'https://example.com/initrd.gz'}\n"
		    "- boot: {method: qemu, media: tmpfs, prompts: ['/ # ']}\n", job_head);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == 0);
	CHECK_STR(job->actions[1].boot.qemu_append, "console=ttyAMA0");
	CHECK_STR(job->actions[0].deploy.artifacts[1].label, "initrd");
	job_free(job);
	strbuf_release(&sb);
	diag_release(&d);
}

TEST(test_job__qemu_arguments)
{
	struct strbuf sb = STRBUF_INIT;
	struct diag d = DIAG_INIT;
	const struct job_qemu_args *q;
	struct job *job;
	char *msgs;

	/* LKFT's and KernelCI's image_arg, LAVA's extra_options */
	strbuf_addf(&sb, "%scontext: {extra_options: ['-smp', 1, '--append \"quiet\"'], memory: 2G}\n"
		    "actions:\n- deploy:\n    to: tmpfs\n    images:\n"
		    "      kernel: {url: 'https://example.com/bzImage',\n"
		    "               image_arg: '-kernel {kernel} --append \"root=/dev/sda rw  x=\\\"a b\\\"\"'}\n"
		    "      rootfs: {url: 'https://example.com/r.ext4', format: ext4, apply-overlay: true,\n"
		    "               image_arg: '-hda {rootfs} -m 4096 -smp 4 -nographic'}\n"
		    "      disk: {url: 'https://example.com/d.img',\n"
		    "             image_arg: \"-drive format=qcow2,file={disk},if=virtio,readonly\"}\n"
		    "- boot: {method: qemu, media: tmpfs, prompts: ['/ # '], docker: {image: kernelci/qemu}}\n",
		    job_head);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == 0);
	q = &job->actions[0].deploy.qemu;
	CHECK_STR(q->kernel, "kernel");
	CHECK_STR(q->append, "root=/dev/sda rw  x=\"a b\"");
	CHECK(q->memory_mib == 4096 && q->cpus == 4);
	CHECK_INT(q->n_drives, ==, 2);
	CHECK_STR(q->drives[0].label, "rootfs");
	CHECK(q->drives[0].index == 0 && !q->drives[0].interface && !q->drives[0].format);
	CHECK_STR(q->drives[1].format, "qcow2");
	CHECK_STR(q->drives[1].interface, "virtio");
	CHECK(q->drives[1].readonly && q->drives[1].index == -1);
	CHECK(job->actions[0].deploy.artifacts[1].apply_overlay);
	CHECK_STR(job->qemu_context.append, "quiet");
	CHECK(job->qemu_context.cpus == 1 && job->qemu_context.memory_mib == 2048);
	CHECK_STR(job->actions[1].boot.qemu_image, "kernelci/qemu");
	job_free(job);
	/* everything else is refused, naming the option */
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%sactions:\n- deploy:\n    to: tmpfs\n    images:\n"
		    "      kernel: {url: 'https://example.com/bzImage',\n"
		    "               image_arg: '-kernel {kernel} -monitor tcp::4444,server -append \"x'}\n"
		    "      rootfs: {url: 'https://example.com/r',\n"
		    "               image_arg: '-drive file=/etc/shadow -object memory-backend-file,id=m -hdb {nope} -smp many'}\n"
		    "- boot: {method: qemu, media: tmpfs, prompts: ['/ # ']}\n", job_head);
	msgs = parse_errors(sb.buf, JOB_FORMAT_YAML);
	CHECK_STR(msgs, "job.yaml:9: actions[0].deploy.images.kernel: unterminated quote in '-kernel {kernel} -monitor tcp::4444,server -append \"x'\n"
		  "job.yaml:11: actions[0].deploy.images.rootfs: -drive file='/etc/shadow': a job's drive is one of its images, named '{label}'\n"
		  "job.yaml:11: actions[0].deploy.images.rootfs: QEMU option '-object' is not allowed in jobs (allowed: -append, -m, -smp, -kernel, -initrd, -dtb, -drive, -hda to -hdd, -cdrom, -nographic): the device type decides the rest of QEMU's command line\n"
		  "job.yaml:11: actions[0].deploy.images.rootfs: -smp 'many': give the number of CPUs, N or cpus=N\n"
		  "job.yaml:11: actions[0].deploy: image_arg names '{nope}', which this deploy does not deploy");
	free(msgs);
	strbuf_release(&sb);
	diag_release(&d);
}

/* YAML specifics */

TEST(test_job__yaml_scalars)
{
	struct diag d = DIAG_INIT;
	struct job *job;
	json_t *m;

	CHECK(parse("job_name: t\ndevice_type: bbb\ntimeouts: {job: {minutes: 5}}\n"
		    "actions: [{boot: {method: minimal}}]\n"
		    "metadata: {a: yes, b: Off, c: ~, d: , e: 0x1F, f: 010, g: 1_000, h: -2.5,\n"
		    "           i: '12', j: \"true\", k: 1e5, l: 0o17, m: !!str 3, n: 1:30, o: .5}\n",
		    JOB_FORMAT_YAML, &job, &d) == 0);
	m = job->metadata;
	CHECK(json_is_true(json_object_get(m, "a")) && json_is_false(json_object_get(m, "b")));
	CHECK(json_is_null(json_object_get(m, "c")) && json_is_null(json_object_get(m, "d")));
	CHECK_INT(json_integer_value(json_object_get(m, "e")), ==, 31);
	CHECK_INT(json_integer_value(json_object_get(m, "f")), ==, 8);
	CHECK_INT(json_integer_value(json_object_get(m, "g")), ==, 1000);
	CHECK(json_real_value(json_object_get(m, "h")) == -2.5);
	CHECK_STR(json_string_value(json_object_get(m, "i")), "12");
	CHECK_STR(json_string_value(json_object_get(m, "j")), "true");
	CHECK_STR(json_string_value(json_object_get(m, "k")), "1e5");	/* as PyYAML */
	CHECK_INT(json_integer_value(json_object_get(m, "l")), ==, 15);
	CHECK_STR(json_string_value(json_object_get(m, "m")), "3");
	CHECK_STR(json_string_value(json_object_get(m, "n")), "1:30");
	CHECK(json_real_value(json_object_get(m, "o")) == 0.5);
	job_free(job);
	diag_release(&d);
}

TEST(test_job__yaml_anchors_aliases_merge)
{
	struct diag d = DIAG_INIT;
	struct job *job;
	const char *text = "job_name: t\n"
			   "device_type: bbb\n"
			   "timeouts: {job: {minutes: 5}}\n"
			   "actions:\n"
			   "- deploy: &dep\n"
			   "    to: tftp\n"
			   "    kernel: {url: 'https://example.com/zImage'}\n"
			   "- boot: &boot\n"
			   "    method: minimal\n"
			   "    prompts: &prompts ['# ']\n"
			   "- deploy: *dep\n"
			   "- boot:\n"
			   "    <<: *boot\n"
			   "    reset: false\n";

	CHECK(parse(text, JOB_FORMAT_YAML, &job, &d) == 0);
	CHECK_INT(job->n_actions, ==, 4);
	CHECK_STR(job->actions[2].deploy.artifacts[0].url, "https://example.com/zImage");
	CHECK_INT(job->actions[2].deploy.artifacts[0].line, ==, 7);	/* the anchor's */
	CHECK_STR(job->actions[3].boot.prompts[0], "# ");
	CHECK(!job->actions[3].boot.reset && job->actions[1].boot.reset);
	job_free(job);
	diag_release(&d);
}

TEST(test_job__yaml_alias_errors_point_at_the_original)
{
	char *m = parse_errors("job_name: t\n"
			       "device_type: bbb\n"
			       "timeouts: {job: {minutes: 5}}\n"
			       "actions:\n"
			       "- boot: &boot\n"
			       "    method: minimal\n"
			       "    colour: red\n"
			       "- boot: *boot\n"
			       "- boot:\n"
			       "    <<: *boot\n"
			       "    prompts: [*nothing]\n",
			       JOB_FORMAT_YAML);

	CHECK_STR(m, "job.yaml:11: unknown alias '*nothing'");
	free(m);
	m = parse_errors("job_name: t\n"
			 "device_type: bbb\n"
			 "timeouts: {job: {minutes: 5}}\n"
			 "actions:\n"
			 "- boot: &boot\n"
			 "    method: minimal\n"
			 "    colour: red\n"
			 "- boot: *boot\n"
			 "- boot:\n"
			 "    <<: *boot\n"
			 "    reset: false\n",
			 JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:7: actions[0].boot: unknown key 'colour'\n"
		     "job.yaml:7: actions[1].boot: unknown key 'colour'\n"
		     "job.yaml:7: actions[2].boot: unknown key 'colour'");
	free(m);
	m = parse_errors("a: &a [1, *a]\n", JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:1: alias '*a' is inside the node it names");
	free(m);
}

TEST(test_job__yaml_alias_bomb)
{
	char *m = parse_errors("metadata:\n"
			       "  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			       "  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			       "  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			       "  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			       "  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			       "  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			       "  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
			       JOB_FORMAT_YAML);

	CHECK_STR(m, "job.yaml: more than 100000 values (aliases count each time they are used)");
	free(m);
}

TEST(test_job__yaml_other_documents_and_tags)
{
	char *m = parse_errors("job_name: a\n---\njob_name: b\n", JOB_FORMAT_YAML);

	CHECK_STR(m, "job.yaml:2: only one YAML document is allowed");
	free(m);
	m = parse_errors("job_name: !!python/object:os.system x\n", JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:1: unsupported YAML tag 'tag:yaml.org,2002:python/object:os.system'");
	free(m);
	m = parse_errors("? [a]\n: b\n", JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:1: mapping keys must be scalars");
	free(m);
	m = parse_errors("", JOB_FORMAT_AUTO);
	CHECK_STR(m, "job.yaml:1: empty job definition");
	free(m);
	m = parse_errors("- a\n- b\n", JOB_FORMAT_AUTO);
	CHECK_STR(m, "job.yaml:1: a job must be a mapping, not a list");
	free(m);
}

/* Robustness */

TEST(test_job__huge_numbers)
{
	char *m = parse_errors("priority: 123456789012345678901234567890\n", JOB_FORMAT_YAML);

	CHECK_STR(m, "job.yaml:1: number '123456789012345678901234567890' is out of range");
	free(m);
	m = parse_errors("{\"priority\": 123456789012345678901234567890}", JOB_FORMAT_JSON);
	CHECK_CONTAINS(m, "job.json:1: invalid JSON: too big integer");
	free(m);
	m = parse_errors("timeouts: {job: {seconds: 9223372036854775807}}\n", JOB_FORMAT_YAML);
	CHECK_CONTAINS(m, "job.yaml:1: timeouts.job: 'seconds' must be between 0 and 604800, not 9223372036854775807");
	free(m);
}

TEST(test_job__deep_nesting)
{
	struct strbuf sb = STRBUF_INIT;
	char *m;
	int i;

	for (i = 0; i < 100000; i++)
		strbuf_addch(&sb, '[');
	m = parse_errors(sb.buf, JOB_FORMAT_YAML);
	CHECK_STR(m, "job.yaml:1: values nested deeper than 64 levels");
	free(m);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "{\"metadata\": ");
	for (i = 0; i < 100; i++)
		strbuf_addch(&sb, '[');
	for (i = 0; i < 100; i++)
		strbuf_addch(&sb, ']');
	strbuf_addch(&sb, '}');
	m = parse_errors(sb.buf, JOB_FORMAT_JSON);
	CHECK_STR(m, "job.json: values nested deeper than 64 levels");
	free(m);
	strbuf_release(&sb);
}

TEST(test_job__size_limit)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	char *text = malloc(JOB_MAX_SIZE + 1);

	CHECK(text);
	memset(text, ' ', JOB_MAX_SIZE + 1);
	CHECK_INT(job_parse(text, JOB_MAX_SIZE + 1, "big.yaml", JOB_FORMAT_AUTO, &job, &d), ==,
		  -E2BIG);
	CHECK(!job);
	CHECK_STR(d.msgs[0], "big.yaml: job definition is larger than 1048576 bytes");
	free(text);
	diag_release(&d);
}

TEST(test_job__many_problems_are_capped)
{
	struct strbuf sb = STRBUF_INIT;
	struct diag d = DIAG_INIT;
	struct job *job;
	int i;

	strbuf_addf(&sb, "%sactions: [{boot: {method: minimal}}]\n", job_head);
	for (i = 0; i < 150; i++)
		strbuf_addf(&sb, "unknown%d: x\n", i);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == -EINVAL);
	CHECK_INT(d.n, ==, 101);
	CHECK_STR(d.msgs[0], "job.yaml:5: unknown key 'unknown0'");
	CHECK_STR(d.msgs[100], "job.yaml: 50 more problems not shown");
	diag_release(&d);
	strbuf_reset(&sb);
	for (i = 0; i < 30; i++)
		strbuf_addf(&sb, "a: {b: %d}\n", i);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == -EINVAL);
	CHECK_INT(d.n, ==, 21);
	CHECK_STR(d.msgs[20], "job.yaml:22: more than 20 duplicate keys");
	diag_release(&d);
	strbuf_release(&sb);
}

/*
 * Documents at the limits parse in well under a second (no quadratic walks:
 * those take minutes here).  The CPU time this process used is what counts, not
 * the wall clock that other programs running at once stretch; AddressSanitizer
 * makes it a few times slower.
 */
#ifdef __SANITIZE_ADDRESS__
#define LARGE_DOC_MS 15000
#else
#define LARGE_DOC_MS 5000
#endif
TEST(test_job__large_documents_are_fast)
{
	struct strbuf sb = STRBUF_INIT;
	struct timespec t0, t1;
	struct diag d = DIAG_INIT;
	struct job *job;
	int i;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	strbuf_addf(&sb, "%sactions:\n- test:\n    definitions:\n    - from: url\n"
		    "      name: big\n      repository: https://example.com/t.yaml\n"
		    "      parameters:\n", job_head);
	for (i = 0; i < 40000; i++)
		strbuf_addf(&sb, "        P%d: %d\n", i, i);
	CHECK(parse(sb.buf, JOB_FORMAT_YAML, &job, &d) == -EINVAL);
	CHECK_STR(d.msgs[0], "job.yaml:10: actions[0].test.definitions[0]: 'parameters' has more than 1000 entries");
	diag_release(&d);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "{\"metadata\": {");
	for (i = 0; i < 49000; i++)
		strbuf_addf(&sb, "%s\"k%d\": [%d]", i ? ", " : "", i, i);
	strbuf_addstr(&sb, "}}");
	CHECK(parse(sb.buf, JOB_FORMAT_JSON, &job, &d) == -EINVAL);
	diag_release(&d);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	CHECK_INT((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, <,
		  LARGE_DOC_MS);
	strbuf_release(&sb);
}

/* Parse @len bytes of @text: it must fail cleanly or succeed, never crash or leak. */
static int parse_any(const char *text, size_t len, enum job_format fmt)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	int r = job_parse(text, len, "fuzz", fmt, &job, &d);

	if (r == 0 && (!job || d.n))
		r = -1000;
	if (r < 0 && r != -EINVAL)
		printf("#   parse returned %d\n", r);
	job_free(job);
	diag_release(&d);
	return r == 0 || r == -EINVAL ? 0 : -1;
}

TEST(test_job__truncated_and_mutated)
{
	static const char *const files[] = { "good-uboot.yaml", "good-uboot.json",
					     "good-minimal.json" };
	unsigned int seed = 1;
	size_t i, len, n;
	char *text;

	for (i = 0; i < 3; i++) {
		text = data_file(files[i], &len);
		CHECK(text);
		for (n = 0; n <= len; n += 1 + n / 64)
			CHECK(parse_any(text, n, JOB_FORMAT_AUTO) == 0);
		for (n = 0; n < 3000; n++) {
			size_t pos = (size_t)rand_r(&seed) % len;
			char save = text[pos];

			text[pos] = (char)rand_r(&seed);
			CHECK(parse_any(text, len, JOB_FORMAT_AUTO) == 0);
			text[pos] = save;
		}
		free(text);
	}
}

TEST(test_job__binary_garbage)
{
	unsigned int seed = 42;
	char buf[2048];
	size_t i, n, len;

	for (n = 0; n < 500; n++) {
		len = (size_t)rand_r(&seed) % sizeof(buf);
		for (i = 0; i < len; i++)
			buf[i] = (char)rand_r(&seed);
		if (len)
			buf[0] = n % 2 ? '{' : buf[0];
		CHECK(parse_any(buf, len, JOB_FORMAT_AUTO) == 0);
		CHECK(parse_any(buf, len, JOB_FORMAT_YAML) == 0);
		CHECK(parse_any(buf, len, JOB_FORMAT_JSON) == 0);
	}
	CHECK(parse_any("job_name: \"a\\0b\"\n", 17, JOB_FORMAT_YAML) == 0);
	CHECK(parse_any("\xff\xfe\x00\x00", 4, JOB_FORMAT_YAML) == 0);
}

/* Device type checks and timeouts */

static void type_init(struct device_type *t)
{
	memset(t, 0, sizeof(*t));
	t->name = strdup("bbb");
	strv_push(&t->boot_methods, "u-boot");
	strv_push(&t->boot_methods, "minimal");
	strv_push(&t->deploy_methods, "tftp");
	kv_set(&t->bootloaders[BOOTLOADER_UBOOT].command_sets, "ramdisk", "bootz {KERNEL_ADDR}");
	kv_set(&t->bootloaders[BOOTLOADER_UBOOT].command_sets, "nfs", "bootz {KERNEL_ADDR}");
	strv_push(&t->context_allowed, "console_device");
}

static void type_release(struct device_type *t)
{
	free(t->name);
	strv_free(t->boot_methods);
	strv_free(t->deploy_methods);
	kv_release(&t->bootloaders[BOOTLOADER_UBOOT].command_sets);
	free(t->bootloaders[BOOTLOADER_UBOOT].default_commands);
	strv_free(t->context_allowed);
	strv_free(t->qemu.allowed_images);
}

TEST(test_job__check_device_type)
{
	struct device_type t;
	struct diag d = DIAG_INIT;
	struct job *job = parse_data("good-uboot.yaml", &d);
	char *m;

	CHECK(job);
	type_init(&t);
	CHECK(job_check_device_type(job, &t, &d) == 0);
	free(job->actions[1].boot.commands_name);
	job->actions[1].boot.commands_name = strdup("usb");
	strv_free(t.context_allowed);
	t.context_allowed = NULL;
	strv_free(t.deploy_methods);
	t.deploy_methods = NULL;
	strv_push(&t.deploy_methods, "tmpfs");
	CHECK(job_check_device_type(job, &t, &d) == -EINVAL);
	m = diag_join(&d);
	CHECK_STR(m, "good-uboot.yaml:25: context: device type 'bbb' does not allow context key 'console_device'\n"
		     "good-uboot.yaml:34: actions[0].deploy: device type 'bbb' does not support deploy method 'tftp' (supported: tmpfs)\n"
		     "good-uboot.yaml:51: actions[1].boot: device type 'bbb' has no u-boot command set 'usb' (defined: ramdisk, nfs)");
	free(m);
	job_free(job);
	type_release(&t);
	diag_release(&d);
}

TEST(test_job__check_default_commands_and_qemu)
{
	struct device_type t;
	struct diag d = DIAG_INIT;
	struct job *job;
	char *m;

	CHECK(parse("job_name: t\ndevice_type: bbb\ntimeouts: {job: {minutes: 5}}\n"
		    "context: {extra_kernel_args: quiet}\n"
		    "actions:\n"
		    "- deploy: {to: tmpfs, images: {kernel: {url: 'http://x/k'}, rootfs: {url: 'http://x/r'}}}\n"
		    "- boot: {method: u-boot}\n"
		    "- boot: {method: qemu}\n",
		    JOB_FORMAT_YAML, &job, &d) == 0);
	type_init(&t);
	strv_push(&t.boot_methods, "qemu");
	strv_push(&t.deploy_methods, "tmpfs");
	t.has_qemu = true;
	strv_push(&t.qemu.allowed_images, "kernel");
	CHECK(job_check_device_type(job, &t, &d) == -EINVAL);
	m = diag_join(&d);
	CHECK_STR(m, "job.yaml:4: context: device type 'bbb' does not let jobs change the kernel command line\n"
		     "job.yaml:6: actions[0].deploy: device type 'bbb' does not let jobs deploy 'rootfs' for QEMU\n"
		     "job.yaml:7: actions[1].boot: device type 'bbb' has no default u-boot command set: name one with 'commands'");
	free(m);
	diag_release(&d);
	t.bootloaders[BOOTLOADER_UBOOT].default_commands = strdup("ramdisk");
	t.qemu.append_allowed = true;
	strv_push(&t.qemu.allowed_images, "rootfs");
	CHECK(job_check_device_type(job, &t, &d) == 0);
	free(t.name);
	t.name = strdup("other");
	CHECK(job_check_device_type(job, &t, &d) == -EINVAL);
	CHECK_STR(d.msgs[0], "job.yaml:2: job is for device type 'bbb', not 'other'");
	job_free(job);
	type_release(&t);
	diag_release(&d);
}

TEST(test_job__check_qemu_limits_and_images)
{
	struct device_type t;
	struct diag d = DIAG_INIT;
	struct job *job;
	char *m;

	CHECK(parse("job_name: t\ndevice_type: bbb\ntimeouts: {job: {minutes: 5}}\n"
		    "context: {arch: arm, memory: 512}\n"
		    "actions:\n"
		    "- deploy: {to: tmpfs, images: {kernel: {url: 'http://x/k',\n"
		    "           image_arg: '-kernel {kernel} -append quiet -m 8G -smp 8'}}}\n"
		    "- boot: {method: qemu, docker: {image: 'kernelci/qemu:v2'}}\n",
		    JOB_FORMAT_YAML, &job, &d) == 0);
	type_init(&t);
	strv_push(&t.boot_methods, "qemu");
	strv_push(&t.deploy_methods, "tmpfs");
	strv_push(&t.context_allowed, "arch");
	strv_push(&t.context_allowed, "memory");
	t.has_qemu = true;
	strv_push(&t.qemu.allowed_images, "kernel");
	strv_push(&t.qemu.arch, "arm64");
	CHECK(job_check_device_type(job, &t, &d) == -EINVAL);
	m = diag_join(&d);
	CHECK_STR(m, "job.yaml:4: context: device type 'bbb' does not let jobs choose QEMU's memory (qemu.max_memory)\n"
		     "job.yaml:4: context: device type 'bbb' runs arch arm64, not 'arm' (qemu.arch)\n"
		     "job.yaml:7: actions[0].deploy: device type 'bbb' does not let jobs change the kernel command line (-append)\n"
		     "job.yaml:7: actions[0].deploy: device type 'bbb' does not let jobs choose QEMU's memory (qemu.max_memory)\n"
		     "job.yaml:7: actions[0].deploy: device type 'bbb' does not let jobs choose QEMU's CPUs (qemu.max_cpus)\n"
		     "job.yaml:8: actions[1].boot: device type 'bbb' does not run QEMU from container image 'kernelci/qemu:v2': containers are not supported, and the type maps no such image to its own QEMU (qemu.container_images)");
	free(m);
	diag_release(&d);
	t.qemu.append_allowed = true;
	t.qemu.max_memory = 4096;
	t.qemu.max_cpus = 4;
	strv_push(&t.qemu.arch, "arm");
	strv_push(&t.qemu.container_images, "kernelci/qemu:*");
	CHECK(job_check_device_type(job, &t, &d) == -EINVAL);
	m = diag_join(&d);
	CHECK_STR(m, "job.yaml:7: actions[0].deploy: 8192 MiB of memory asked for, device type 'bbb' lets jobs have up to 4096 MiB (qemu.max_memory)\n"
		     "job.yaml:7: actions[0].deploy: 8 CPUs asked for, device type 'bbb' lets jobs have up to 4 (qemu.max_cpus)");
	free(m);
	diag_release(&d);
	t.qemu.max_memory = 8192;
	t.qemu.max_cpus = 8;
	CHECK(job_check_device_type(job, &t, &d) == 0);
	job_free(job);
	strv_free(t.qemu.arch);
	strv_free(t.qemu.container_images);
	type_release(&t);
	diag_release(&d);
}

TEST(test_job__stage_timeouts)
{
	struct diag d = DIAG_INIT;
	struct job *job = parse_data("good-uboot.yaml", &d);
	const struct job_action *boot;

	CHECK(job);
	boot = &job->actions[1];
	CHECK(job_stage_timeout(job, boot, "bootloader-commands", 1) == 2 * MIN);
	CHECK(job_stage_timeout(job, &job->actions[0], "bootloader-commands", 1) == 3 * MIN);
	CHECK(job_stage_timeout(job, NULL, "bootloader-commands", 1) == 3 * MIN);
	CHECK(job_stage_timeout(job, boot, "auto-login", 7) == 7);
	CHECK(job_connection_timeout(job, "bootloader-commands") == 30000000ULL);
	CHECK(job_connection_timeout(job, "auto-login") == 90000000ULL);
	job_free(job);
	diag_release(&d);
}

TEST(test_job__names)
{
	CHECK_STR(job_action_kind_name(JOB_ACTION_TEST), "test");
	CHECK_STR(deploy_to_name(DEPLOY_TO_TMPFS), "tmpfs");
	CHECK_STR(boot_method_name(BOOT_METHOD_UBOOT), "u-boot");
	CHECK_STR(test_kind_name(TEST_KIND_MONITORS), "monitors");
	CHECK(!job_free(NULL));
}

/* LAVA's own jobs: each parses, or fails for a reason with a line. */

static int lava_check(const char *dir, const char *name, int *parsed, int *unsupported)
{
	struct diag d = DIAG_INIT;
	struct job *job = NULL;
	char path[1024], *text, *msgs;
	size_t len;
	int r, bad = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = read_file(path, &len);
	if (!text)
		return 1;
	r = job_parse(text, len, name, JOB_FORMAT_AUTO, &job, &d);
	msgs = diag_join(&d);
	if (r == 0)
		(*parsed)++;
	else if (strstr(msgs, "unsupported") || strstr(msgs, "not supported"))
		(*unsupported)++;
	else if (r != -EINVAL || !d.n || strncmp(d.msgs[0], name, strlen(name)) ||
		 d.msgs[0][strlen(name)] != ':' || !isdigit((unsigned char)d.msgs[0][strlen(name) + 1]))
		bad = 1;
	else
		printf("# schema error: %s\n", d.msgs[0]);
	if (r == 0 && !strv_contains((char *const *)lava_expected_ok, name))
		printf("# newly parsing: %s (add it to lava_expected_ok)\n", name);
	free(msgs);
	free(text);
	job_free(job);
	diag_release(&d);
	return bad;
}

TEST(test_job__lava_corpus)
{
	char dir[512];
	const char *shared = getenv("LABD_SHARED");
	int n = 0, parsed = 0, unsupported = 0, bad = 0;
	struct dirent *e;
	size_t i;
	DIR *dh;

	if (shared)
		snprintf(dir, sizeof(dir), "%s/lava/lava-jobs", shared);
	else
		snprintf(dir, sizeof(dir), "%s/../shared/lava/lava-jobs", top_dir());
	dh = opendir(dir);
	if (!dh)
		TEST_SKIP("no LAVA job corpus (set LABD_SHARED to the shared reference directory)");
	while ((e = readdir(dh))) {
		if (!strstr(e->d_name, ".yaml"))
			continue;
		n++;
		bad += lava_check(dir, e->d_name, &parsed, &unsupported);
	}
	closedir(dh);
	printf("# %d LAVA jobs: %d parsed, %d unsupported, %d other schema errors\n", n, parsed,
	       unsupported, n - parsed - unsupported);
	CHECK_INT(bad, ==, 0);
	for (i = 0; lava_expected_ok[i]; i++) {
		struct diag d = DIAG_INIT;
		struct job *job = NULL;
		char path[1024], *text;
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", dir, lava_expected_ok[i]);
		text = read_file(path, &len);
		CHECK(text);
		CHECK_INT(job_parse(text, len, lava_expected_ok[i], JOB_FORMAT_AUTO, &job, &d), ==, 0);
		job_free(job);
		free(text);
	}
	CHECK_INT(parsed, >=, (int)i);
}

TEST_LIST(test_job__qemu_arguments, test_job__good_uboot, test_job__good_tests, test_job__good_minimal,
	  test_job__yaml_json_identical, test_job__bad_files,
	  test_job__errors_are_all_reported_in_order, test_job__json_errors_have_lines,
	  test_job__duplicate_keys_keep_the_last_with_a_warning,
	  test_job__notes_for_what_is_ignored, test_job__regex_and_named_groups,
	  test_job__priority_values, test_job__qemu_and_context, test_job__yaml_scalars,
	  test_job__yaml_anchors_aliases_merge, test_job__yaml_alias_errors_point_at_the_original,
	  test_job__yaml_alias_bomb, test_job__yaml_other_documents_and_tags,
	  test_job__huge_numbers, test_job__deep_nesting, test_job__size_limit,
	  test_job__many_problems_are_capped, test_job__large_documents_are_fast,
	  test_job__truncated_and_mutated, test_job__binary_garbage, test_job__check_device_type,
	  test_job__check_default_commands_and_qemu, test_job__check_qemu_limits_and_images,
	  test_job__stage_timeouts, test_job__names,
	  test_job__lava_corpus);
