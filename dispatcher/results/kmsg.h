/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kmsg.h -- kernel messages in a console log: panics, oopses, BUGs, warnings
 *
 * A line-fed scanner that recognises the reports the Linux kernel prints
 * when something goes wrong and collects each report's lines (from its
 * first line to "---[ end trace ... ]---", "---[ end Kernel panic ...", or
 * a bounded number of lines) into an excerpt.  Kernel timestamps
 * ("[   12.345678] ") and other console noise before the message are
 * tolerated.  Each finished report is handed to a callback with its class,
 * its first line, the excerpt and the console line range.
 */
#ifndef LABD_KMSG_H
#define LABD_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KMSG_MAX_EXCERPT_LINES 100
#define KMSG_MAX_EXCERPT (16 * 1024)

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
	KMSG_CLASS_COUNT,
};

struct kmsg_report {
	enum kmsg_class cls;
	const char *first_line;	/* without the kernel timestamp */
	const char *excerpt;	/* every line of the report, '\n'-separated */
	int64_t line_start;
	int64_t line_end;
	bool complete;		/* the end marker was seen */
};

typedef void (*kmsg_report_fn)(const struct kmsg_report *rep, void *userdata);

struct kmsg;

int kmsg_new(kmsg_report_fn fn, void *userdata, struct kmsg **ret);
struct kmsg *kmsg_free(struct kmsg *k);

/** kmsg_feed() - one console line (no line terminator) with its log line number. */
void kmsg_feed(struct kmsg *k, const char *line, size_t len, int64_t lineno);

/** kmsg_flush() - report a collection still open (the log ended mid-report). */
void kmsg_flush(struct kmsg *k);

/** kmsg_classify() - the class a single line starts, or KMSG_NONE. */
enum kmsg_class kmsg_classify(const char *line, size_t len);

/** kmsg_class_name() - "panic", "oops", "bug", "warning", "kasan" ... */
const char *kmsg_class_name(enum kmsg_class cls);

/** kmsg_is_fatal() - whether the class ends a boot (a panic). */
bool kmsg_is_fatal(enum kmsg_class cls);

#endif
