/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * junit.h -- one finished job as a JUnit XML report for CI systems
 *
 * The subset GitLab and Jenkins read (shared/notes/junit.md):
 *
 *   <testsuites name="<lab> job <id>" tests failures errors skipped time>
 *     <testsuite name="boot" ... timestamp hostname="<board>">
 *       <properties> job id, name, board, device type, health, log URL </properties>
 *       <testcase classname="<lab>.<board>" name="boot" time>
 *         boot status (kcidb_boot_status()): PASS nothing, FAIL <failure>,
 *         ERROR and MISS <error type="...">, unfinished <skipped>; on a
 *         failure or error the end of the console log as its text
 *     </testsuite>
 *     <testsuite name="<suite>"> one per result suite, in order of appearance
 *       <testcase classname="<suite>" name="<name>">
 *         fail <failure>, skip <skipped>, unknown <error>, with the
 *         result's console lines as text (kernel reports: their excerpt);
 *         a measurement in <system-out>
 *
 * Text from the console is made valid XML 1.0: invalid UTF-8 and the control
 * characters XML forbids become U+FFFD, markup characters are escaped, CR is
 * written as &#13; so parsers keep it.  Suite counters match the cases.
 */
#ifndef LABD_JUNIT_H
#define LABD_JUNIT_H

#include <stddef.h>

struct report;
struct strbuf;

#define JUNIT_FILE "junit.xml"
#define JUNIT_MAX_TEXT (16 * 1024)	/* bytes of console text in one element */

/** junit_build() - append the report of @r to @out; 0 or -ENOMEM. */
int junit_build(const struct report *r, struct strbuf *out);

/** junit_escape() - append @len bytes of @data as XML character data (attribute-safe). */
int junit_escape(struct strbuf *out, const char *data, size_t len);

#endif
