// SPDX-License-Identifier: GPL-2.0-or-later
/* test-junit.c -- JUnit XML from hand-made reports: escaping, statuses, counts, well-formed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/strbuf.h"
#include "core/strv.h"
#include "results/junit.h"
#include "results/report.h"
#include "tap.h"

static struct report *sample(enum job_health health)
{
	static const char tail[] = "login: \x1b[0m<&>\"'\x01\xff]]>\0end\r\n";
	struct report *r = calloc(1, sizeof(*r));

	r->job_id = 7;
	r->lab = strdup("test-lab");
	r->name = strdup("junit <test>");
	r->device = strdup("sim-01");
	r->device_type = strdup("sim-uboot");
	r->health = health;
	r->error_type = health == JOB_HEALTH_INCOMPLETE ? ERROR_JOB : ERROR_NONE;
	r->error_msg = health == JOB_HEALTH_INCOMPLETE ? strdup("kernel panic: \"VFS\"") : NULL;
	r->started = 1764700001000000ULL;
	r->ended = 1764700048300000ULL;
	strv_push(&r->phases, "kernel-start");
	r->log_tail = malloc(sizeof(tail));
	memcpy(r->log_tail, tail, sizeof(tail));
	r->log_tail_len = sizeof(tail) - 1;
	r->results = calloc(4, sizeof(*r->results));
	r->n_results = 4;
	r->results[0] = (struct report_result){ strdup("smoke"), strdup("uname"), strdup("pass"), .log_start = 0 };
	r->results[1] = (struct report_result){ strdup("smoke"), strdup("ping & <pong>"),
		strdup("fail"), .excerpt = strdup("ping: \x02 unreachable\n"), .excerpt_len = 21 };
	r->results[2] = (struct report_result){ strdup("kunit"), strdup("a.b"), strdup("skip"), .log_start = 0 };
	r->results[3] = (struct report_result){ strdup("smoke"), strdup("late"), strdup("unknown"),
		.has_measurement = true, .measurement = 1.5, .units = strdup("s") };
	return r;
}

/* Parse @xml with python's xml.etree and print "tests failures errors skipped" of the root. */
static int parse_counts(const struct strbuf *xml, char *out, size_t len)
{
	char path[] = "/tmp/test-junit-XXXXXX";
	char cmd[512];
	FILE *f, *p;
	int fd = mkstemp(path), ok;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fwrite(xml->buf, 1, xml->len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; "
		 "r = E.parse(sys.argv[1]).getroot(); "
		 "c = [len(r.findall(\".//testcase\")), len(r.findall(\".//failure\")), "
		 "len(r.findall(\".//error\")), len(r.findall(\".//skipped\"))]; "
		 "print(*[r.get(k) for k in (\"tests\", \"failures\", \"errors\", \"skipped\")], *c)' %s",
		 path);
	p = popen(cmd, "r");
	ok = p && fgets(out, (int)len, p) != NULL;
	if (p)
		ok = pclose(p) == 0 && ok;
	unlink(path);
	return ok ? 0 : -1;
}

TEST(test_junit__complete_job)
{
	struct report *r = sample(JOB_HEALTH_COMPLETE);
	struct strbuf xml = STRBUF_INIT;
	char counts[128];

	CHECK(junit_build(r, &xml) == 0);
	CHECK_CONTAINS(xml.buf, "<testsuites name=\"test-lab job 7\" tests=\"5\" failures=\"1\" "
				"errors=\"1\" skipped=\"1\"");
	CHECK_CONTAINS(xml.buf, "name=\"ping &amp; &lt;pong&gt;\"");
	CHECK_CONTAINS(xml.buf, "ping: \xef\xbf\xbd unreachable");
	CHECK_CONTAINS(xml.buf, "<testsuite name=\"smoke\" tests=\"3\" failures=\"1\" errors=\"1\"");
	CHECK_CONTAINS(xml.buf, "<system-out>measurement: 1.5 s</system-out>");
	CHECK_CONTAINS(xml.buf, "<property name=\"job_name\" value=\"junit &lt;test&gt;\"/>");
	if (access("/usr/bin/python3", X_OK))
		TEST_SKIP("no /usr/bin/python3 to parse the XML");
	CHECK(parse_counts(&xml, counts, sizeof(counts)) == 0);
	CHECK_STR(counts, "5 1 1 1 5 1 1 1\n");
	strbuf_release(&xml);
	report_free(r);
}

TEST(test_junit__failed_boot_with_hostile_log)
{
	struct report *r = sample(JOB_HEALTH_INCOMPLETE);
	struct strbuf xml = STRBUF_INIT;
	char counts[128];

	CHECK(junit_build(r, &xml) == 0);
	/* a job error after the kernel started fails the boot */
	CHECK_CONTAINS(xml.buf, "<failure message=\"kernel panic: &quot;VFS&quot;\" type=\"FAIL\">");
	/* ESC, ^A, NUL and a bad byte are replaced, markup escaped, CR kept as a reference */
	CHECK_CONTAINS(xml.buf, "login: \xef\xbf\xbd[0m&lt;&amp;&gt;&quot;&apos;\xef\xbf\xbd\xef\xbf\xbd"
				"]]&gt;\xef\xbf\xbd" "end&#13;\n</failure>");
	CHECK(!memchr(xml.buf, '\0', xml.len));
	CHECK(!strchr(xml.buf, '\x1b'));
	if (access("/usr/bin/python3", X_OK))
		TEST_SKIP("no /usr/bin/python3 to parse the XML");
	CHECK(parse_counts(&xml, counts, sizeof(counts)) == 0);
	CHECK_STR(counts, "5 2 1 1 5 2 1 1\n");
	strbuf_release(&xml);
	report_free(r);
}

TEST_LIST(test_junit__complete_job, test_junit__failed_boot_with_hostile_log);
