/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lava_signals.h -- LAVA test signals in console lines
 *
 * LAVA's helpers on the board (lava-test-case, lava-test-set ...) print
 * signals on the console:
 *
 *	<LAVA_SIGNAL_STARTRUN 0_smoke 3b7c...>     <LAVA_SIGNAL_ENDRUN 0_smoke 3b7c...>
 *	<LAVA_SIGNAL_STARTTC name>                 <LAVA_SIGNAL_ENDTC name>
 *	<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=name RESULT=pass MEASUREMENT=1.5 UNITS=ms>
 *	<LAVA_SIGNAL_TESTSET START name>           <LAVA_SIGNAL_TESTSET STOP>
 *	<LAVA_SIGNAL_TESTREFERENCE name result url>
 *	<LAVA_SIGNAL_TESTRAISE message>
 *
 * The scanner is fed one cleaned console line at a time (no line
 * terminator) and calls back once per signal.  A signal may start anywhere
 * in a line (after a prompt, after garbage) and several may share a line.
 *
 * Interleaved kernel messages.  The kernel writes a printk record to the
 * console in one piece, ending with a newline, between two chunks of
 * whatever user space was writing, so a signal can be cut in two by a whole
 * kernel message:
 *
 *	<LAVA_SIGNAL_TESTCA[   12.345678] random: crng init done
 *	SE TEST_CASE_ID=boot RESULT=pass>
 *
 * Rule: while a signal is open (its "<LAVA_SIGNAL_" seen, its '>' not yet),
 * a printk timestamp ("[   12.345678]", see kmsg_timestamp_len()) inside it
 * starts a kernel message that runs to the end of that console line: the
 * fragment is removed and the signal continues, without a separator, on the
 * next line.  A signal still open at the end of a line without a timestamp
 * (a kernel message without timestamps, a wrapped line) is joined with the
 * next line too.  Joining is bounded by LAVA_SIGNALS_MAX_LINES lines and
 * LAVA_SIGNALS_MAX_LEN bytes; a new "<LAVA_SIGNAL_" inside an open signal
 * abandons it.  Abandoned and unparsable signals are reported as
 * LAVA_SIGNAL_INVALID with their raw text, never turned into results.
 * Keys of TESTCASE are read by name wherever they stand, so stray words
 * inside the brackets do not shift the values.
 */
#ifndef LABD_LAVA_SIGNALS_H
#define LABD_LAVA_SIGNALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAVA_SIGNALS_MAX_LINES 8	/* console lines one signal may span */
#define LAVA_SIGNALS_MAX_LEN 2048	/* bytes of one signal */
#define LAVA_SIGNALS_MAX_NAME 200	/* bytes of a test case or set name */

enum lava_signal_kind {
	LAVA_SIGNAL_STARTRUN,	/* name, uuid */
	LAVA_SIGNAL_ENDRUN,	/* name, uuid */
	LAVA_SIGNAL_STARTTC,	/* name */
	LAVA_SIGNAL_ENDTC,	/* name */
	LAVA_SIGNAL_TESTCASE,	/* name, result, measurement, units */
	LAVA_SIGNAL_TESTSET_START,	/* name */
	LAVA_SIGNAL_TESTSET_STOP,
	LAVA_SIGNAL_TESTREFERENCE,	/* name, result, reference */
	LAVA_SIGNAL_TESTRAISE,	/* message */
	LAVA_SIGNAL_OTHER,	/* a well-formed signal labd does not use (TESTFEEDBACK ...) */
	LAVA_SIGNAL_INVALID,	/* raw: text that started like a signal but is not one */
};

/** One signal; every string is borrowed for the duration of the callback. */
struct lava_signal {
	enum lava_signal_kind kind;
	const char *name;
	const char *uuid;
	const char *result;	/* "pass", "fail", "skip" or "unknown" (anything else) */
	bool has_measurement;
	double measurement;
	const char *units;	/* or NULL */
	const char *reference;
	const char *message;
	const char *raw;	/* the signal as reassembled, without '<' and '>' */
	int64_t line_start;	/* console lines the signal spans */
	int64_t line_end;
};

typedef void (*lava_signal_fn)(const struct lava_signal *sig, void *userdata);

struct lava_signals;

/** lava_signals_new() - a scanner calling @fn for each signal. Returns 0 or -ENOMEM. */
int lava_signals_new(lava_signal_fn fn, void *userdata, struct lava_signals **ret);

/** lava_signals_free() - free; accepts NULL; returns NULL. */
struct lava_signals *lava_signals_free(struct lava_signals *ls);

/** lava_signals_feed() - one console line (no terminator) with its log line number. */
void lava_signals_feed(struct lava_signals *ls, const char *line, size_t len, int64_t lineno);

/** lava_signals_flush() - the input ended: an open signal is reported as invalid. */
void lava_signals_flush(struct lava_signals *ls);

/** lava_signal_kind_name() - "STARTRUN", "TESTCASE", "TESTSET START" ... */
const char *lava_signal_kind_name(enum lava_signal_kind kind);

#endif
