/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h -- a minimal unit-test harness printing TAP
 *
 * Usage, one file per module (tests/unit/test-<module>.c):
 *
 *	TEST(test_strbuf__add) { ... CHECK(cond); CHECK_INT(a, ==, b); ... }
 *	TEST_LIST(test_strbuf__add, test_strbuf__addf);
 *
 * A failed CHECK prints the file, line and expression and ends the case.
 * TEST_SKIP("why") ends a case as skipped.  The binary prints "ok N - name",
 * "not ok N - name" or "ok N - name # SKIP why" per case, and exits 1 when a
 * case failed.  Pass case names as arguments to run only those.
 */
#ifndef LABD_TAP_H
#define LABD_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tap_case {
	const char *name;
	void (*fn)(void);
};

static int tap_failed_case;
static const char *tap_skip_reason;

#define TEST(name) static void name(void)

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			tap_failed_case = 1;                                          \
			return;                                                       \
		}                                                                     \
	} while (0)

#define CHECK_INT(a, op, b)                                                           \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		if (!(_a op _b)) {                                                    \
			printf("#   %s:%d: check failed: %s %s %s (%lld vs %lld)\n", __FILE__, \
			       __LINE__, #a, #op, #b, _a, _b);                        \
			tap_failed_case = 1;                                          \
			return;                                                       \
		}                                                                     \
	} while (0)

#define CHECK_STR(a, b)                                                               \
	do {                                                                          \
		const char *_a = (a), *_b = (b);                                      \
		if (!_a || !_b || strcmp(_a, _b)) {                                   \
			printf("#   %s:%d: check failed: %s == %s ('%s' vs '%s')\n", __FILE__, \
			       __LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");   \
			tap_failed_case = 1;                                          \
			return;                                                       \
		}                                                                     \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                   \
	do {                                                                          \
		const char *_h = (hay), *_n = (needle);                               \
		if (!_h || !strstr(_h, _n)) {                                         \
			printf("#   %s:%d: check failed: '%s' does not contain '%s'\n", __FILE__, \
			       __LINE__, _h ? _h : "(null)", _n);                     \
			tap_failed_case = 1;                                          \
			return;                                                       \
		}                                                                     \
	} while (0)

#define TEST_SKIP(why)                                                                \
	do {                                                                          \
		tap_skip_reason = (why);                                              \
		return;                                                               \
	} while (0)

static inline int tap_selected(int argc, char **argv, const char *name)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

static inline int tap_run(const struct tap_case *cases, size_t n, int argc, char **argv)
{
	size_t i, num = 0;
	int failed = 0;

	for (i = 0; i < n; i++)
		num += tap_selected(argc, argv, cases[i].name);
	printf("1..%zu\n", num);
	num = 0;
	for (i = 0; i < n; i++) {
		if (!tap_selected(argc, argv, cases[i].name))
			continue;
		tap_failed_case = 0;
		tap_skip_reason = NULL;
		fflush(stdout);
		cases[i].fn();
		num++;
		if (tap_failed_case) {
			printf("not ok %zu - %s\n", num, cases[i].name);
			failed = 1;
		} else if (tap_skip_reason) {
			printf("ok %zu - %s # SKIP %s\n", num, cases[i].name, tap_skip_reason);
		} else {
			printf("ok %zu - %s\n", num, cases[i].name);
		}
		fflush(stdout);
	}
	return failed;
}

/* TEST_LIST(a, b, c) defines main() running the listed cases in order. */
#define TEST_LIST(...)                                                                \
	int main(int argc, char **argv)                                               \
	{                                                                             \
		static void (*const fns[])(void) = { __VA_ARGS__ };                   \
		static const char names[] = #__VA_ARGS__;                             \
		struct tap_case cases[sizeof(fns) / sizeof(fns[0])];                  \
		static char buf[sizeof(names)];                                       \
		char *save = NULL, *tok;                          \
		size_t i = 0;                                                         \
		memcpy(buf, names, sizeof(names));                                    \
		for (tok = strtok_r(buf, ", \t\n", &save); tok && i < sizeof(fns) / sizeof(fns[0]); \
		     tok = strtok_r(NULL, ", \t\n", &save), i++) {                    \
			cases[i].name = tok;                                          \
			cases[i].fn = fns[i];                                         \
		}                                                                     \
		return tap_run(cases, i, argc, argv);                                 \
	}

#endif
