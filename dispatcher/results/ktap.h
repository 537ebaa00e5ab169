/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ktap.h -- KTAP v1 and TAP 13/14 documents in console lines (KUnit, kselftest)
 *
 * A line-fed parser turning the test documents the kernel and its selftests
 * print into one result per test, named by its path.  Fed every console
 * line (no terminator) with its log line number; documents are recognised
 * by themselves, so it may watch a whole job.
 *
 * Lines.  A printk timestamp ("[    1.234567] ", kmsg_timestamp_len()) at the
 * start of a line is removed first.  What follows is read as: blanks
 * (indentation), any number of "# " prefixes that carry a nested document
 * (the kselftest runner re-emits each program's TAP that way), then
 * "KTAP version N" / "TAP version N", a plan "1..N [# SKIP why]",
 * "ok N [- ]name [# DIRECTIVE reason]" / "not ok ...", "# Subtest: name",
 * "Bail out!".  Everything else (diagnostics, kernel messages, "Expected
 * x == y" lines, prompts) is ignored.
 *
 * Nesting is decided by the version lines, never by counting blanks: a
 * document's lines share a key (number of "# " prefixes, then width of the
 * indentation); a version line with a larger key than the innermost open
 * level opens a subtest, one with a key no larger than the outermost level
 * starts a new document (a rebooted board runs its tests again: the old
 * document is closed, not merged).  A result line belongs to the level of
 * its key and closes the subtest below it, which takes the result's name.
 * Subtests without a version line (a plan, "# Subtest:" or results with a
 * deeper key) are opened implicitly.  Plans may come first, last, or never.
 *
 * A result line cut by a kernel message ("ok 1 te[  5.1] usb 1-1: ...",
 * then "st_name" on the next line) is joined back like a LAVA signal: the
 * printk record runs from its timestamp to the end of the line.
 *
 * Results:
 *  - name: the path of the test, components joined by '.', each sanitized
 *    for KCIDB: every run of characters outside [A-Za-z0-9_-] becomes one
 *    '_' ("example value 3" -> "example_value_3"); a kselftest runner name
 *    "selftests: net: fcnal-test.sh" gives the components "selftests",
 *    "net", "fcnal-test_sh"; a test without a name is "test_<N>".
 *    Example: "example.example_params_test.example_value_3".
 *  - result: "ok" pass, "not ok" fail, "# SKIP" (either) skip; XFAIL keeps
 *    ok/not ok (pass); TODO, TIMEOUT and ERROR on "not ok" are fail.  The
 *    directive and its reason are passed along.
 *  - a level that ends without its result line (the output stopped: a
 *    panic, a reboot, a new document, the end of the log) is a fail with
 *    error "truncated"; tests a plan announced that never appeared are each
 *    a fail "test_<N>" with error "missing".
 *  - results of a subtest are reported when the subtest ends (its name is
 *    known only then for kselftest), children before their parent; results
 *    of the outermost level at once.
 * A document whose first line, printk timestamp included, was seen before
 * is the kernel log printed again (`dmesg`): it is ignored up to the next
 * document.
 *
 * Every result carries the log line range it came from: a leaf from the
 * line after the previous result of its level to its result line, a
 * subtest from its version line to its result line.
 */
#ifndef LABD_KTAP_H
#define LABD_KTAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KTAP_MAX_DEPTH 16	/* nested levels; deeper ones are ignored */
#define KTAP_MAX_NAME 128	/* bytes of one path component */
#define KTAP_MAX_PENDING 10000	/* results held until their subtest ends */
#define KTAP_MAX_MISSING 1000	/* "missing" results reported for one plan */
#define KTAP_MAX_SEEN 256	/* documents remembered to ignore them printed again */

struct ktap_result {
	const char *name;	/* the test's path */
	const char *result;	/* "pass", "fail" or "skip" */
	const char *directive;	/* "SKIP", "XFAIL", "TODO", "TIMEOUT", "ERROR" or NULL */
	const char *reason;	/* what followed the directive, or NULL */
	const char *error;	/* "truncated", "missing" or NULL */
	unsigned depth;		/* 0 for the tests of the outermost level */
	bool suite;		/* it had subtests */
	int64_t line_start;
	int64_t line_end;
};

typedef void (*ktap_result_fn)(const struct ktap_result *res, void *userdata);

struct ktap;

/** ktap_new() - a parser calling @fn for each result. Returns 0 or -ENOMEM. */
int ktap_new(ktap_result_fn fn, void *userdata, struct ktap **ret);

/** ktap_free() - free without reporting what is still open; accepts NULL; returns NULL. */
struct ktap *ktap_free(struct ktap *k);

/** ktap_feed() - one console line (no terminator) with its log line number. */
void ktap_feed(struct ktap *k, const char *line, size_t len, int64_t lineno);

/** ktap_flush() - the log ended: close the open document (truncated levels, missing tests). */
void ktap_flush(struct ktap *k);

/** ktap_in_document() - whether a document is open. */
bool ktap_in_document(const struct ktap *k);

#endif
