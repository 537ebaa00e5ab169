// SPDX-License-Identifier: GPL-2.0-or-later
/* test-testdef.c -- test definitions, and the typed shell text run by real shells */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/testdef.h"
#include "results/lava_signals.h"
#include "tap.h"

static const char definition[] =
	"{\"metadata\": {\"format\": \"Lava-Test Test Definition 1.0\", \"name\": \"smoke\"},"
	" \"params\": {\"GREETING\": \"hello world\", \"COUNT\": 3, \"QUOTE\": \"it's\"},"
	" \"install\": {\"steps\": [\"echo installing\"]},"
	" \"run\": {\"steps\": ["
	"   \"lava-test-case always-pass --result pass\","
	"   \"lava-test-case always-fail --result fail\","
	"   \"lava-test-case boot-time --result pass --measurement 1.25 --units s\","
	"   \"lava-test-case shell-true --shell true\","
	"   \"lava-test-case shell-false --shell false\","
	"   \"lava-test-case shell-pipe --shell 'echo a | grep -q a'\","
	"   \"lava-test-set start net\","
	"   \"lava-test-case in-set --result skip\","
	"   \"lava-test-set stop\","
	"   \"lava-test-reference cve --result pass --reference https://example.org/x\","
	"   \"echo \\\"$GREETING $COUNT $QUOTE\\\"\","
	"   \"if true; then\\n  echo multi-line\\nfi\","
	"   \"echo 'tab\\there'\","
	"   \"echo result-a: pass\","
	"   \"exit 3\","
	"   \"echo never\"]},"
	" \"parse\": {\"pattern\": \"(?P<test_case_id>\\\\S+):\\\\s+(?P<result>\\\\w+)\","
	"   \"fixupdict\": {\"PASS\": \"PASS\", \"broken\": \"Fail\"}}}";

/* LKFT's jobs find their scratch disk so: $(lava-target-storage SATA || ... USB) */
static const char storage_definition[] =
	"{\"metadata\": {\"format\": \"Lava-Test Test Definition 1.0\", \"name\": \"disks\"},"
	" \"run\": {\"steps\": ["
	"   \"echo \\\"sata=$(lava-target-storage SATA || lava-target-storage USB)\\\"\","
	"   \"lava-target-storage NVME || echo \\\"no nvme: $?\\\"\","
	"   \"lava-target-storage || echo \\\"none: $?\\\"\"]}}";

static struct job_testdef jt = { .name = (char *)"smoke-tests" };

static struct testdef *load_text(const char *text)
{
	json_error_t e;
	json_t *doc = json_loads(text, 0, &e);
	struct testdef *td = NULL;
	char err[256] = "";

	if (!doc) {
		printf("# %s\n", e.text);
		return NULL;
	}
	kv_set(&jt.parameters, "COUNT", "4");
	if (testdef_from_json(doc, &jt, 2, &td, err, sizeof(err)))
		printf("# %s\n", err);
	json_decref(doc);
	return td;
}

static struct testdef *load(void)
{
	return load_text(definition);
}

TEST(test_testdef__from_json)
{
	struct testdef *td = load();

	CHECK(td);
	CHECK_STR(td->suite, "2_smoke-tests");
	CHECK_STR(td->name, "smoke");
	CHECK_INT(strv_length(td->steps), ==, 16);
	CHECK_INT(strv_length(td->install), ==, 1);
	CHECK_STR(kv_get(&td->params, "COUNT"), "4");	/* the job's parameters win */
	CHECK_STR(kv_get(&td->params, "GREETING"), "hello world");
	CHECK_STR(testdef_result(td, "PASS"), "pass");
	CHECK_STR(testdef_result(td, "broken"), "fail");
	CHECK_STR(testdef_result(td, "SKIP"), "skip");
	CHECK_STR(testdef_result(td, "weird"), "unknown");
	testdef_free(td);
}

TEST(test_testdef__bad_documents)
{
	static const char *const docs[] = {
		"{\"metadata\": {\"name\": \"x\"}, \"run\": {\"steps\": [\"true\"]}}",
		"{\"metadata\": {\"format\": \"Lava-Test Test Definition 1.0\", \"name\": \"x\"}}",
		"{\"metadata\": {\"format\": \"Lava-Test Test Definition 1.0\", \"name\": \"x\"},"
		" \"run\": {\"steps\": [{\"a\": 1}]}}",
		"{\"metadata\": {\"format\": \"Lava-Test Test Definition 1.0\", \"name\": \"x\"},"
		" \"run\": {\"steps\": []}, \"parse\": {\"fixupdict\": {\"a\": \"maybe\"}}}",
	};
	struct testdef *td = NULL;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *doc = json_loads(docs[i], 0, NULL);

		CHECK(doc);
		err[0] = '\0';
		CHECK_INT(testdef_from_json(doc, &jt, 0, &td, err, sizeof(err)), ==, -EINVAL);
		CHECK(err[0]);
		json_decref(doc);
	}
}

TEST(test_testdef__yaml)
{
	static const char yaml[] = "metadata:\n  format: Lava-Test Test Definition 1.0\n"
				   "  name: from-url\nrun:\n  steps:\n  - uname -a\n";
	char err[256] = "";
	json_t *doc = NULL;
	struct testdef *td = NULL;

	CHECK_INT(testdef_parse_yaml(yaml, sizeof(yaml) - 1, "t.yaml", &doc, err, sizeof(err)), ==, 0);
	CHECK_INT(testdef_from_json(doc, &jt, 0, &td, err, sizeof(err)), ==, 0);
	CHECK_STR(td->steps[0], "uname -a");
	testdef_free(td);
	json_decref(doc);
	CHECK_INT(testdef_parse_yaml("a: [b", 5, "bad.yaml", &doc, err, sizeof(err)), ==, -EINVAL);
	CHECK_CONTAINS(err, "bad.yaml");
}

/* Every typed command is short, TAB-free and never contains a signal itself. */
static bool typeable(char **cmds)
{
	STRV_FOREACH(c, cmds) {
		if (strlen(*c) > TESTDEF_MAX_COMMAND || strchr(*c, '\t') || strchr(*c, '\n') ||
		    strstr(*c, "<LAVA_SIGNAL_")) {
			printf("# not typeable: %s\n", *c);
			return false;
		}
	}
	return true;
}

TEST(test_testdef__typeable)
{
	struct testdef *td = load();
	char **setup = NULL, **script = NULL, *run, *longstep;

	CHECK(td);
	longstep = calloc(1, 3001);
	memset(longstep, 'x', 3000);
	memcpy(longstep, "echo '", 6);
	longstep[2998] = '\'';
	longstep[1000] = '\t';
	strv_consume(&td->steps, longstep);
	/* a step printing a signal itself: typed without the marker in one piece */
	strv_push(&td->steps, "echo '<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=x RESULT=pass>'");
	strv_push(&td->install, "X='<LAVA_SIGNAL_ENDRUN 0_a 1>' && echo $X");
	CHECK_INT(testdef_setup_commands("/tmp/labd-7", &setup), ==, 0);
	CHECK_INT(testdef_script_commands(td, &(struct testdef_script){ .dir = "/tmp/labd-7",
									.uuid = "7_2" }, &script),
		  ==, 0);
	run = testdef_run_command(td, "/tmp/labd-7/2_x.sh", "7_2");
	CHECK(typeable(setup) && typeable(script) && !strstr(run, "<LAVA_SIGNAL_"));
	CHECK_STR(setup[0], "mkdir -p /tmp/labd-7/bin");
	CHECK(!strncmp(script[0], "printf '%s\\n' 'export PATH=/tmp/labd-7/bin:$PATH' ", 48));
	CHECK_INT(strv_length(script), >=, 8);
	free(run);
	strv_free(setup);
	strv_free(script);
	testdef_free(td);
}

static struct strbuf signals = STRBUF_INIT;

static void on_signal(const struct lava_signal *s, void *ud)
{
	strbuf_addf(&signals, "%s", lava_signal_kind_name(s->kind));
	if (s->name)
		strbuf_addf(&signals, " %s", s->name);
	if (s->result)
		strbuf_addf(&signals, " %s", s->result);
	if (s->has_measurement)
		strbuf_addf(&signals, " %g %s", s->measurement, s->units ? s->units : "-");
	if (s->reference)
		strbuf_addf(&signals, " %s", s->reference);
	strbuf_addch(&signals, '\n');
}

/*
 * Type everything into @shell (as `shell -s` reading stdin), the board's
 * storage_info being @storage (or NULL); return its output's signals.
 */
static const char *run_in(const char *shell, struct testdef *td, const char *storage,
			  struct strbuf *out)
{
	char dir[] = "/tmp/labd-testdef.XXXXXX", cmd[512], *line = NULL, **setup = NULL;
	char **script = NULL, *run;
	struct lava_signals *ls;
	size_t cap = 0;
	ssize_t len;
	int64_t n = 0;
	FILE *f;

	if (!mkdtemp(dir) || testdef_setup_commands(dir, &setup) ||
	    testdef_script_commands(td, &(struct testdef_script){ .dir = dir, .uuid = "7_2",
								   .storage = storage },
				    &script))
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s/%s.sh", dir, td->suite);
	run = testdef_run_command(td, cmd, "7_2");
	snprintf(cmd, sizeof(cmd), "cd %s && %s -s >%s/out 2>&1", dir, shell, dir);
	f = popen(cmd, "w");
	STRV_FOREACH(c, setup)
		fprintf(f, "%s\n", *c);
	STRV_FOREACH(c, script)
		fprintf(f, "%s\n", *c);
	fprintf(f, "%s\n", run);
	pclose(f);
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	f = fopen(cmd, "r");
	strbuf_reset(&signals);
	lava_signals_new(on_signal, NULL, &ls);
	while (f && (len = getline(&line, &cap, f)) >= 0) {
		strbuf_add(out, line, (size_t)len);
		lava_signals_feed(ls, line, (size_t)len - (len && line[len - 1] == '\n'), ++n);
	}
	lava_signals_free(ls);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# cannot remove %s\n", dir);
	free(line);
	free(run);
	strv_free(setup);
	strv_free(script);
	return signals.buf;
}

/* Put @step before the definition's "exit 3" step (the third last). */
static void strv_insert_before_exit(struct testdef *td, char *step)
{
	size_t n = strv_length(td->steps);

	strv_consume(&td->steps, step);
	memmove(&td->steps[n - 1], &td->steps[n - 2], 2 * sizeof(char *));
	td->steps[n - 2] = step;
}

static void check_shell(const char *shell)
{
	struct testdef *td = load();
	struct strbuf out = STRBUF_INIT;
	char probe[256], *longstep, ys[1994];

	snprintf(probe, sizeof(probe), "%s -c true 2>/dev/null", shell);
	if (!td || system(probe)) {
		testdef_free(td);
		TEST_SKIP("shell not installed");
	}
	/* a step longer than a typed command: written in pieces, run whole */
	longstep = calloc(1, 2001);
	memset(longstep, 'y', 2000);
	memcpy(longstep, "echo '", 6);
	longstep[1999] = '\'';
	strv_insert_before_exit(td, longstep);
	/* a step printing a signal itself: the board's output counts, once */
	strv_insert_before_exit(td, strdup("echo '<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=echoed "
					   "RESULT=pass>'"));
	CHECK_STR(run_in(shell, td, NULL, &out),
		  "STARTRUN 2_smoke-tests\n"
		  "TESTCASE always-pass pass\n"
		  "TESTCASE always-fail fail\n"
		  "TESTCASE boot-time pass 1.25 s\n"
		  "STARTTC shell-true\nENDTC shell-true\nTESTCASE shell-true pass\n"
		  "STARTTC shell-false\nENDTC shell-false\nTESTCASE shell-false fail\n"
		  "STARTTC shell-pipe\nENDTC shell-pipe\nTESTCASE shell-pipe pass\n"
		  "TESTSET START net\nTESTCASE in-set skip\nTESTSET STOP\n"
		  "TESTREFERENCE cve pass https://example.org/x\n"
		  "TESTCASE echoed pass\n"
		  "ENDRUN 2_smoke-tests\n");
	CHECK_CONTAINS(out.buf, "installing\n");
	CHECK_CONTAINS(out.buf, "hello world 4 it's\n");
	CHECK_CONTAINS(out.buf, "multi-line\n");
	CHECK_CONTAINS(out.buf, "tab here\n");
	CHECK_CONTAINS(out.buf, "result-a: pass\n");
	CHECK(!strstr(out.buf, "never"));
	memset(ys, 'y', sizeof(ys) - 1);
	ys[sizeof(ys) - 1] = '\0';
	CHECK_CONTAINS(out.buf, ys);
	strbuf_release(&out);
	testdef_free(td);
}

TEST(test_testdef__busybox_sh)
{
	check_shell("busybox sh");
}

/* lava-target-storage gives the board's storage_info, exported by the script. */
TEST(test_testdef__target_storage)
{
	struct kv info = KV_INIT;
	struct testdef *td = load_text(storage_definition);
	struct strbuf out = STRBUF_INIT;
	char *storage;

	CHECK(!testdef_storage_info(&info));
	kv_set(&info, "SATA", "/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001");
	kv_set(&info, "USB", "/dev/sdb");
	storage = testdef_storage_info(&info);
	CHECK_STR(storage, "SATA=/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001 USB=/dev/sdb");
	CHECK(td != NULL);
	CHECK(run_in("dash", td, storage, &out) != NULL);
	CHECK_CONTAINS(out.buf, "sata=/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001\n");
	CHECK_CONTAINS(out.buf, "no nvme: 1\n");
	CHECK_CONTAINS(out.buf, "SATA /dev/disk/by-id/ata-QEMU_HARDDISK_QM00001\nUSB /dev/sdb\n");
	strbuf_reset(&out);
	CHECK(run_in("busybox sh", td, NULL, &out) != NULL);	/* a board without any */
	CHECK_CONTAINS(out.buf, "sata=\n");
	CHECK_CONTAINS(out.buf, "none: 1\n");
	free(storage);
	kv_release(&info);
	strbuf_release(&out);
	testdef_free(td);
}

TEST(test_testdef__dash)
{
	check_shell("dash");
}

TEST(test_testdef__bash_posix)
{
	check_shell("bash --posix");
}

TEST_LIST(test_testdef__from_json, test_testdef__bad_documents, test_testdef__yaml,
	  test_testdef__typeable, test_testdef__busybox_sh, test_testdef__dash,
	  test_testdef__bash_posix, test_testdef__target_storage);
