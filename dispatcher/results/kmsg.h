/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kmsg.h -- kernel messages in a console log: panics, oopses, BUGs, warnings
 *
 * A line-fed scanner that recognises the reports the Linux kernel prints
 * when something goes wrong and collects each report's lines into an
 * excerpt, then hands the report to a callback with its class, its name,
 * its first line and its console line range.
 *
 * Where a report starts: a line whose kernel message (the text after a
 * printk timestamp "[   12.345678] ", or the whole line when the console
 * has no timestamps) begins with one of the class's openers ("Kernel panic
 * - not syncing", "Unable to handle kernel", "WARNING: CPU:", "BUG: KASAN:"
 * ...), or lockdep's old bracketed headers ("[ INFO: possible circular
 * locking dependency detected ]", "[ BUG: bad unlock balance detected! ]").
 * The timestamp may stand anywhere in the line: a kernel message can begin
 * in the middle of a line of user-space output (or after a continuation
 * fragment), and so can every later line of a report.  Once a line with a
 * timestamp was seen, lines without one are user space and open nothing
 * ("echo BUG: x" on the shell is no kernel report).  On a console without
 * timestamps, lockdep's bracketed header is also found after a continuation
 * fragment on the same line ("... USB device[ BUG: bad unlock balance
 * detected! ]").  A
 * "------------[ cut here ]------------" or "=====" line just before the
 * opener belongs to the report.
 *
 * Where it ends, the first of:
 *  - its end marker "---[ end trace ... ]---" or "---[ end Kernel panic
 *    ... ]---" (the report is complete); an oops' end marker counts only
 *    after its die line ("... [#1] ..."): an end marker before it is
 *    another CPU's, inside the oops;
 *  - for the sanitizers framed in "=====" lines (KASAN, KFENCE, KCSAN,
 *    UBSAN), the closing "=====" line (complete);
 *  - the opener of another report (an oops line inside a BUG or oops
 *    report is the same report, and a BUG report that dies is an oops:
 *    "kernel BUG at", then "Internal error: Oops - BUG"; a panic always
 *    starts its own).  An oops that has not died yet when another report
 *    opens (another CPU's WARNING between "Unable to handle kernel paging
 *    request" and "Internal error: Oops ... [#1]") is set aside and goes
 *    on once that report ended: one oops report, the other CPU's apart;
 *  - for reports without an end marker (RCU stalls, hung tasks, lockdep,
 *    lockups, BUG: ...), a line without timestamp when the report's lines
 *    have one (user space writes again); reports with an end marker skip
 *    such interleaved lines instead;
 *  - for reports with an end marker, KMSG_MAX_REPORT_LINES lines; for the
 *    others KMSG_MAX_EXCERPT_LINES lines; or kmsg_flush().
 * The excerpt keeps the first KMSG_MAX_EXCERPT_LINES lines (at most
 * KMSG_MAX_EXCERPT bytes); a longer report's excerpt then says how many
 * lines were left out and ends with the report's last line.
 *
 * A kernel line (timestamped, or an opener) equal to the line before it is
 * a reprint (a console that prints each line twice) and is skipped, in
 * every kind of report.
 *
 * Names: each class has a short name ("panic", "oops", "bug", "warning",
 * "kasan", "kfence", "kcsan", "ubsan", "rcu-stall", "hung-task", "lockdep",
 * "lockup"); the second report of a class in one log is "<name>-2", and so
 * on, so every report has a unique name.  A report whose first line,
 * timestamp included, was already reported is not reported again: `dmesg`
 * on the board prints old reports with their original timestamps.
 */
#ifndef LABD_KMSG_H
#define LABD_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KMSG_MAX_EXCERPT_LINES 100
#define KMSG_MAX_REPORT_LINES 5000	/* a report with an end marker still open is cut */
#define KMSG_MAX_EXCERPT (16 * 1024)	/* bytes of excerpt; more lines are counted, not kept */
#define KMSG_MAX_SEEN 256		/* first lines remembered to skip repeated reports */
#define KMSG_MAX_NAME 32

enum kmsg_class {
	KMSG_NONE,
	KMSG_PANIC,		/* Kernel panic - not syncing */
	KMSG_OOPS,		/* Oops / Unable to handle kernel ... / general protection fault */
	KMSG_BUG,		/* kernel BUG at / BUG: (not KASAN etc.) */
	KMSG_WARNING,		/* WARNING: CPU: ... */
	KMSG_KASAN,
	KMSG_KFENCE,
	KMSG_KCSAN,
	KMSG_UBSAN,
	KMSG_RCU_STALL,		/* rcu: INFO: rcu_sched self-detected stall */
	KMSG_HUNG_TASK,		/* INFO: task x blocked for more than N seconds */
	KMSG_LOCKDEP,		/* WARNING: possible circular locking dependency */
	KMSG_LOCKUP,		/* BUG: soft lockup, Watchdog detected hard LOCKUP */
	KMSG_CLASS_COUNT,
};

struct kmsg_report {
	enum kmsg_class cls;
	const char *name;	/* "oops", "oops-2" ...: unique in the log */
	const char *first_line;	/* the opener's message, without the timestamp */
	const char *excerpt;	/* the report's lines as printed, '\n'-separated */
	int64_t line_start;
	int64_t line_end;
	bool complete;		/* the end marker was seen */
};

typedef void (*kmsg_report_fn)(const struct kmsg_report *rep, void *userdata);

struct kmsg;

/** kmsg_new() - a scanner calling @fn for each report. Returns 0 or -ENOMEM. */
int kmsg_new(kmsg_report_fn fn, void *userdata, struct kmsg **ret);

/** kmsg_free() - free; accepts NULL; returns NULL. */
struct kmsg *kmsg_free(struct kmsg *k);

/** kmsg_feed() - one console line (no line terminator) with its log line number. */
void kmsg_feed(struct kmsg *k, const char *line, size_t len, int64_t lineno);

/** kmsg_flush() - report a collection still open (the log ended mid-report). */
void kmsg_flush(struct kmsg *k);

/** kmsg_classify() - the class of the report a single line opens, or KMSG_NONE. */
enum kmsg_class kmsg_classify(const char *line, size_t len);

/** kmsg_class_name() - "panic", "oops", "bug", "warning", "kasan" ... */
const char *kmsg_class_name(enum kmsg_class cls);

/** kmsg_is_fatal() - whether the class ends a boot (a panic). */
bool kmsg_is_fatal(enum kmsg_class cls);

/**
 * kmsg_timestamp_len() - length of the printk timestamp @p starts with:
 * "[   12.345678]", optionally followed by a caller id "[    T1]" or
 * "[C0]" (CONFIG_PRINTK_CALLER); 0 when @p does not start with one.
 * The blank after the closing bracket is not counted.
 */
size_t kmsg_timestamp_len(const char *p, size_t len);

#endif
