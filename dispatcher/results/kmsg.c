// SPDX-License-Identifier: GPL-2.0-or-later
/* kmsg.c -- recognise kernel panics, oopses, BUGs and warnings in console lines */
#include "results/kmsg.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

#define KMSG_FRAME_MIN 20	/* '=' characters of a sanitizer frame line */

#define KMSG_MAX_TAIL 512	/* bytes kept of the last line of a cut excerpt */

/* One report being collected. */
struct kmsg_coll {
	enum kmsg_class cls;	/* KMSG_NONE: none */
	bool stamped;		/* the report's lines carry printk timestamps */
	bool framed;		/* opened by a "=====" line: the next one closes it */
	bool armed;		/* an end marker ends it (an oops: after its die line) */
	struct strbuf first;
	struct strbuf excerpt;
	struct strbuf tail;	/* the last line, once the excerpt is full */
	int64_t start, end;
	unsigned lines, kept;	/* lines of the report, lines in the excerpt */
	uint64_t hash;		/* of the stamped first line, from its timestamp on */
};

struct kmsg {
	kmsg_report_fn fn;
	void *userdata;
	struct kmsg_coll c;	/* the report being collected */
	struct kmsg_coll parked;	/* an oops that had not died when another CPU's
					 * report began: it goes on once that one ends */
	bool stamps_seen;	/* the console has printk timestamps */
	struct strbuf prev;	/* the previous line, to skip a reprint */
	struct strbuf opener;	/* the last line, when it was "cut here" or "=====" */
	int64_t opener_line;
	int64_t prev_line;
	int64_t reprint_line;	/* the last line skipped as a reprint */
	unsigned count[KMSG_CLASS_COUNT];
	uint64_t seen[KMSG_MAX_SEEN];	/* hashes of reported stamped first lines */
	size_t n_seen;
};

/* Ordered: the first match wins, so specific reports come before generic BUG:. */
static const struct {
	const char *opener;
	enum kmsg_class cls;
} kmsg_rules[] = {
	{ "Kernel panic - not syncing", KMSG_PANIC },
	{ "BUG: KASAN:", KMSG_KASAN },
	{ "BUG: KFENCE:", KMSG_KFENCE },
	{ "BUG: KCSAN:", KMSG_KCSAN },
	{ "UBSAN:", KMSG_UBSAN },
	{ "WARNING: possible circular locking dependency", KMSG_LOCKDEP },
	{ "WARNING: possible recursive locking detected", KMSG_LOCKDEP },
	{ "WARNING: inconsistent lock state", KMSG_LOCKDEP },
	{ "WARNING: bad unlock balance detected", KMSG_LOCKDEP },
	{ "WARNING: held lock freed", KMSG_LOCKDEP },
	{ "WARNING: lock held when returning to user space", KMSG_LOCKDEP },
	{ "WARNING: possible irq lock inversion dependency", KMSG_LOCKDEP },
	{ "WARNING: suspicious RCU usage", KMSG_LOCKDEP },
	{ "WARNING: Nested lock was not taken", KMSG_LOCKDEP },
	{ "WARNING: bad contention detected", KMSG_LOCKDEP },
	{ "rcu: INFO: rcu_", KMSG_RCU_STALL },
	{ "INFO: rcu_sched self-detected stall", KMSG_RCU_STALL },
	{ "INFO: rcu_sched detected stalls", KMSG_RCU_STALL },
	{ "INFO: rcu_preempt detected stalls", KMSG_RCU_STALL },
	{ "INFO: rcu_preempt self-detected stall", KMSG_RCU_STALL },
	{ "INFO: task ", KMSG_HUNG_TASK },	/* + " blocked for more than", see below */
	{ "watchdog: BUG: soft lockup", KMSG_LOCKUP },
	{ "BUG: soft lockup", KMSG_LOCKUP },
	{ "Watchdog detected hard LOCKUP", KMSG_LOCKUP },
	{ "BUG: kernel NULL pointer dereference", KMSG_OOPS },
	{ "BUG: unable to handle", KMSG_OOPS },
	{ "Unable to handle kernel", KMSG_OOPS },
	{ "general protection fault", KMSG_OOPS },
	{ "Internal error: Oops", KMSG_OOPS },
	{ "Oops: ", KMSG_OOPS },
	{ "Oops - ", KMSG_OOPS },
	{ "kernel BUG at", KMSG_BUG },
	{ "BUG: ", KMSG_BUG },
	{ "WARNING: CPU:", KMSG_WARNING },
	{ "WARNING: at ", KMSG_WARNING },
};

static const char *const kmsg_names[KMSG_CLASS_COUNT] = {
	[KMSG_NONE] = "none",
	[KMSG_PANIC] = "panic",
	[KMSG_OOPS] = "oops",
	[KMSG_BUG] = "bug",
	[KMSG_WARNING] = "warning",
	[KMSG_KASAN] = "kasan",
	[KMSG_KFENCE] = "kfence",
	[KMSG_KCSAN] = "kcsan",
	[KMSG_UBSAN] = "ubsan",
	[KMSG_RCU_STALL] = "rcu-stall",
	[KMSG_HUNG_TASK] = "hung-task",
	[KMSG_LOCKDEP] = "lockdep",
	[KMSG_LOCKUP] = "lockup",
};

const char *kmsg_class_name(enum kmsg_class cls)
{
	return cls < KMSG_CLASS_COUNT ? kmsg_names[cls] : "invalid";
}

bool kmsg_is_fatal(enum kmsg_class cls)
{
	return cls == KMSG_PANIC;
}

/* Reports that print "---[ end trace" at their end (unstamped lines inside are skipped). */
static bool has_end_marker(enum kmsg_class cls)
{
	return cls == KMSG_PANIC || cls == KMSG_OOPS || cls == KMSG_WARNING;
}

static bool is_framed_class(enum kmsg_class cls)
{
	return cls == KMSG_KASAN || cls == KMSG_KFENCE || cls == KMSG_KCSAN || cls == KMSG_UBSAN;
}

static void coll_init(struct kmsg_coll *c)
{
	memset(c, 0, sizeof(*c));
	strbuf_init(&c->first);
	strbuf_init(&c->excerpt);
	strbuf_init(&c->tail);
}

static void coll_release(struct kmsg_coll *c)
{
	strbuf_release(&c->first);
	strbuf_release(&c->excerpt);
	strbuf_release(&c->tail);
}

int kmsg_new(kmsg_report_fn fn, void *userdata, struct kmsg **ret)
{
	struct kmsg *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->fn = fn;
	k->userdata = userdata;
	coll_init(&k->c);
	coll_init(&k->parked);
	strbuf_init(&k->prev);
	strbuf_init(&k->opener);
	*ret = k;
	return 0;
}

struct kmsg *kmsg_free(struct kmsg *k)
{
	if (!k)
		return NULL;
	coll_release(&k->c);
	coll_release(&k->parked);
	strbuf_release(&k->prev);
	strbuf_release(&k->opener);
	free(k);
	return NULL;
}

/* "[" blanks digits "." digits "]" at p; returns its length or 0. */
static size_t bracket_time(const char *p, size_t len)
{
	size_t i = 1, d;

	if (!len || p[0] != '[')
		return 0;
	while (i < len && p[i] == ' ')
		i++;
	for (d = 0; i < len && isdigit((unsigned char)p[i]); i++)
		d++;
	if (!d || d > 10 || i >= len || p[i++] != '.')
		return 0;
	for (d = 0; i < len && isdigit((unsigned char)p[i]); i++)
		d++;
	if (!d || d > 9 || i >= len || p[i] != ']')
		return 0;
	return i + 1;
}

/* "[" blanks ("T" | "C") digits "]" at p (the printk caller id); returns its length or 0. */
static size_t bracket_caller(const char *p, size_t len)
{
	size_t i = 1, d;

	if (len < 4 || p[0] != '[')
		return 0;
	while (i < len && p[i] == ' ')
		i++;
	if (i >= len || (p[i] != 'T' && p[i] != 'C'))
		return 0;
	for (d = 0, i++; i < len && isdigit((unsigned char)p[i]); i++)
		d++;
	return d && i < len && p[i] == ']' ? i + 1 : 0;
}

size_t kmsg_timestamp_len(const char *p, size_t len)
{
	size_t n = bracket_time(p, len);

	return n ? n + bracket_caller(p + n, len - n) : 0;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/*
 * Lockdep's headers: before Linux 4.13 framed in brackets ("[ INFO: possible
 * circular locking dependency detected ]", "[ BUG: bad unlock balance
 * detected! ]"; no other kernel message looks like that), and the lock order
 * reports ("WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected").
 */
static bool is_lockdep_header(const char *msg, size_t len)
{
	while (len && (msg[len - 1] == ' ' || msg[len - 1] == '\t'))
		len--;
	if ((has_prefix(msg, len, "[ INFO: ") || has_prefix(msg, len, "[ BUG: ")) &&
	    len > 10 && msg[len - 1] == ']' && msg[len - 2] == ' ')
		return true;
	return has_prefix(msg, len, "WARNING: ") && memmem(msg, len, "-safe -> ", 9) &&
	       memmem(msg, len, "lock order detected", 19);
}

/*
 * On a console without timestamps, lockdep's old bracketed header after a
 * continuation fragment on the same line: "... USB device[ BUG: bad unlock
 * balance detected! ]" (no other opener is distinctive enough to be looked
 * for in the middle of a line).  Returns its offset, or @len.
 */
static size_t bracketed_header(const char *line, size_t len)
{
	const char *p = line, *end = line + len;

	while ((p = memmem(p, (size_t)(end - p), "[ ", 2))) {
		if (p > line && is_lockdep_header(p, (size_t)(end - p)))
			return (size_t)(p - line);
		p += 2;
	}
	return len;
}

/* The class a message (text after the timestamp) opens. */
static enum kmsg_class classify_message(const char *msg, size_t len)
{
	size_t i, n;

	while (len && (*msg == ' ' || *msg == '\t')) {
		msg++;
		len--;
	}
	if (is_lockdep_header(msg, len))
		return KMSG_LOCKDEP;
	for (i = 0; i < sizeof(kmsg_rules) / sizeof(kmsg_rules[0]); i++) {
		n = strlen(kmsg_rules[i].opener);
		if (len < n || memcmp(msg, kmsg_rules[i].opener, n))
			continue;
		if (kmsg_rules[i].cls == KMSG_HUNG_TASK &&
		    !memmem(msg, len, " blocked for more than", 22))
			continue;
		return kmsg_rules[i].cls;
	}
	return KMSG_NONE;
}

/*
 * The next kernel timestamp in @line at or after *@from: returns its offset
 * (or @len when there is none) and sets *@from to its message.
 */
static size_t next_stamp(const char *line, size_t len, size_t *from)
{
	size_t i, n;

	for (i = *from; i < len; i++) {
		if (line[i] != '[')
			continue;
		n = kmsg_timestamp_len(line + i, len - i);
		if (n) {
			*from = i + n + (i + n < len && line[i + n] == ' ');
			return i;
		}
	}
	*from = len;
	return len;
}

/*
 * The class of the report @line opens: its message is at the start of the
 * line, after a leading timestamp, or after a timestamp further on (a kernel
 * message cut into user-space output).  @ret_ts: offset of that timestamp
 * (@len if none); @ret_msg: offset of the message.  Both may be NULL.
 */
static enum kmsg_class classify_at(const char *line, size_t len, bool need_stamp, size_t *ret_ts,
				   size_t *ret_msg)
{
	enum kmsg_class cls = need_stamp ? KMSG_NONE : classify_message(line, len);
	size_t ts = len, msg = 0, from = 0;

	while (cls == KMSG_NONE && from < len) {
		ts = next_stamp(line, len, &from);
		msg = from;
		if (ts < len)
			cls = classify_message(line + msg, len - msg);
	}
	if (cls == KMSG_NONE && !need_stamp && (msg = bracketed_header(line, len)) < len) {
		cls = KMSG_LOCKDEP;
		ts = len;
	}
	if (cls == KMSG_NONE)
		return cls;
	if (ret_ts)
		*ret_ts = ts;
	while (msg < len && (line[msg] == ' ' || line[msg] == '\t'))
		msg++;
	if (ret_msg)
		*ret_msg = msg;
	return cls;
}

enum kmsg_class kmsg_classify(const char *line, size_t len)
{
	return classify_at(line, len, false, NULL, NULL);
}

/*
 * The kernel part of a line: from its first printk timestamp on (user space
 * may have printed before it on the same line).  Returns the timestamp's
 * offset, or @len when the line has none; *@msg: offset of the message after
 * it (0 without a timestamp).
 */
static size_t kernel_part(const char *line, size_t len, size_t *msg)
{
	size_t from = 0, ts = next_stamp(line, len, &from);

	*msg = ts < len ? from : 0;
	return ts;
}

static bool is_end_marker(const char *line, size_t len)
{
	return memmem(line, len, "---[ end trace", 14) || memmem(line, len, "---[ end Kernel panic", 21);
}

static bool is_frame(const char *line, size_t len)
{
	size_t i, msg;

	kernel_part(line, len, &msg);
	while (msg < len && (line[msg] == ' ' || line[msg] == '\t'))
		msg++;
	while (len > msg && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	for (i = msg; i < len && line[i] == '='; i++)
		;
	return len - msg >= KMSG_FRAME_MIN && i == len;
}

static bool is_cut_here(const char *line, size_t len)
{
	return memmem(line, len, "[ cut here ]", 12) != NULL;
}

/*
 * The line where an oops dies: "[#<n>]", the die counter every architecture
 * prints ("Internal error: Oops: 96000045 [#1] SMP", "Oops: 0000 [#1]",
 * "invalid opcode: 0000 [#1]", "general protection fault ...: 0000 [#1]").
 */
static bool is_die_line(const char *line, size_t len)
{
	const char *p = line, *end = line + len, *q;

	while ((p = memmem(p, (size_t)(end - p), "[#", 2))) {
		for (q = p + 2; q < end && isdigit((unsigned char)*q); q++)
			;
		if (q > p + 2 && q < end && *q == ']')
			return true;
		p += 2;
	}
	return false;
}

/* FNV-1a of the stamped first line, to recognise a report printed again. */
static uint64_t line_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	while (len--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static bool seen_before(struct kmsg *k, uint64_t h)
{
	size_t i, n = k->n_seen < KMSG_MAX_SEEN ? k->n_seen : KMSG_MAX_SEEN;

	for (i = 0; i < n; i++)
		if (k->seen[i] == h)
			return true;
	k->seen[k->n_seen++ % KMSG_MAX_SEEN] = h;
	return false;
}

/* A cut excerpt ends with how many lines were left out, then the report's last line. */
static void finish_excerpt(struct kmsg *k)
{
	unsigned dropped;

	if (k->c.lines <= k->c.kept)
		return;
	dropped = k->c.lines - k->c.kept - 1;
	if (dropped)
		strbuf_addf(&k->c.excerpt, "\n[... %u lines not kept ...]", dropped);
	strbuf_addch(&k->c.excerpt, '\n');
	strbuf_add(&k->c.excerpt, k->c.tail.buf, k->c.tail.len);
}

static void emit(struct kmsg *k, bool complete)
{
	char name[KMSG_MAX_NAME];
	struct kmsg_report rep = {
		.cls = k->c.cls,
		.name = name,
		.first_line = k->c.first.buf,
		.line_start = k->c.start,
		.line_end = k->c.end,
		.complete = complete,
	};
	bool repeated;

	if (k->c.cls == KMSG_NONE)
		return;
	repeated = k->c.stamped && seen_before(k, k->c.hash);
	if (!repeated && ++k->count[k->c.cls] > 1)
		snprintf(name, sizeof(name), "%s-%u", kmsg_class_name(k->c.cls), k->count[k->c.cls]);
	else
		snprintf(name, sizeof(name), "%s", kmsg_class_name(k->c.cls));
	k->c.cls = KMSG_NONE;
	finish_excerpt(k);
	rep.excerpt = k->c.excerpt.buf;
	if (k->fn && !repeated)
		k->fn(&rep, k->userdata);
	strbuf_reset(&k->c.first);
	strbuf_reset(&k->c.excerpt);
	strbuf_reset(&k->c.tail);
	k->c.lines = k->c.kept = 0;
}

/*
 * An oops that has not died yet (no "[#N]" line) when another report opens
 * is another CPU's report interleaved with it ("Unable to handle kernel
 * paging request" on CPU 0, a WARNING of CPU 1, then CPU 0's "Internal
 * error: Oops ... [#1]"): the oops is parked and goes on once that report
 * ended, so it is one report, not two.
 */
static bool may_park(const struct kmsg *k, enum kmsg_class cls)
{
	return k->c.cls == KMSG_OOPS && !k->c.armed && k->c.stamped &&
	       k->parked.cls == KMSG_NONE && cls != KMSG_OOPS && cls != KMSG_PANIC;
}

/* A "cut here" or "=====" line just collected belongs to the report it opens, not the oops. */
static void drop_opener(struct kmsg *k, int64_t lineno)
{
	struct kmsg_coll *c = &k->c;
	char *nl;

	if (!k->opener.len || k->opener_line + 1 != lineno || c->end != k->opener_line ||
	    c->kept != c->lines || c->lines < 2)
		return;
	nl = memrchr(c->excerpt.buf, '\n', c->excerpt.len);
	if (!nl)
		return;
	strbuf_remove(&c->excerpt, (size_t)(nl - c->excerpt.buf),
		      c->excerpt.len - (size_t)(nl - c->excerpt.buf));
	c->kept--;
	c->lines--;
	c->end--;
}

static void park(struct kmsg *k, int64_t lineno)
{
	struct kmsg_coll c = k->parked;

	drop_opener(k, lineno);
	k->parked = k->c;
	k->c = c;		/* empty: its buffers reset when it was emitted */
}

/* The parked oops is the current report again (there is none now). */
static void resume(struct kmsg *k)
{
	struct kmsg_coll c = k->c;

	if (k->parked.cls == KMSG_NONE)
		return;
	k->c = k->parked;
	k->parked = c;
}

/* A parked oops is reported as it is (nothing is current). */
static void finish_parked(struct kmsg *k)
{
	resume(k);
	emit(k, false);
}

/* The current report ended: reported; a parked oops goes on. */
static void finish(struct kmsg *k, bool complete)
{
	emit(k, complete);
	resume(k);
}

/* Count a line of the report; keep it while the excerpt has room, else as its tail. */
static void collect(struct kmsg *k, const char *line, size_t len, int64_t lineno)
{
	if (k->c.kept == k->c.lines && k->c.kept < KMSG_MAX_EXCERPT_LINES &&
	    k->c.excerpt.len + len < KMSG_MAX_EXCERPT) {
		if (k->c.excerpt.len)
			strbuf_addch(&k->c.excerpt, '\n');
		strbuf_add(&k->c.excerpt, line, len);
		k->c.kept++;
	} else {
		strbuf_reset(&k->c.tail);
		strbuf_add(&k->c.tail, line, len < KMSG_MAX_TAIL ? len : KMSG_MAX_TAIL);
	}
	k->c.lines++;
	k->c.end = lineno;
}

/* Open a report at @line; its timestamp (if any) is at @ts, its message at @msg. */
static void start(struct kmsg *k, enum kmsg_class cls, const char *line, size_t len, size_t ts,
		  size_t msg, int64_t lineno)
{
	k->c.cls = cls;
	k->c.stamped = ts < len;
	k->c.hash = k->c.stamped ? line_hash(line + ts, len - ts) : 0;
	k->c.framed = false;
	/* an oops' end marker counts once it died: another CPU's may come first */
	k->c.armed = (cls != KMSG_OOPS && cls != KMSG_BUG) || is_die_line(line, len);
	k->c.start = k->c.end = lineno;
	k->c.lines = k->c.kept = 0;
	strbuf_reset(&k->c.first);
	strbuf_add(&k->c.first, line + msg, len - msg);
	strbuf_reset(&k->c.excerpt);
	/* the line before, or the one before a reprint of it */
	if (k->opener.len && (k->opener_line + 1 == lineno ||
			      (k->opener_line + 2 == lineno && k->reprint_line + 1 == lineno))) {
		k->c.framed = is_framed_class(cls) && is_frame(k->opener.buf, k->opener.len);
		k->c.start = k->opener_line;
		collect(k, k->opener.buf, k->opener.len, k->opener_line);
	}
	collect(k, line, len, lineno);
}

/* Remember a "cut here" or "=====" line: a report may start on the next line. */
static void note_opener(struct kmsg *k, const char *line, size_t len, int64_t lineno)
{
	strbuf_reset(&k->opener);
	if (!is_cut_here(line, len) && !is_frame(line, len))
		return;
	strbuf_add(&k->opener, line, len);
	k->opener_line = lineno;
}

/* Inside a report: does @cls (opened by this line) start a new one? */
static bool starts_new(const struct kmsg *k, enum kmsg_class cls)
{
	if (cls == KMSG_NONE)
		return false;
	if (cls == KMSG_OOPS && (k->c.cls == KMSG_OOPS || k->c.cls == KMSG_BUG))
		return false;	/* "kernel BUG at" then "Internal error: Oops - BUG" */
	return true;
}

/*
 * Reports that end at a marker are followed to it however long they are (the
 * excerpt is cut); the others end at the excerpt's line limit.
 */
static unsigned report_limit(const struct kmsg *k)
{
	return has_end_marker(k->c.cls) || k->c.framed ? KMSG_MAX_REPORT_LINES :
						     KMSG_MAX_EXCERPT_LINES;
}

/* A line inside the current report; returns true if it ended the report. */
static bool continue_report(struct kmsg *k, const char *line, size_t len, int64_t lineno)
{
	size_t msg;
	bool stamped = kernel_part(line, len, &msg) < len;

	if (k->c.stamped && !stamped) {
		if (has_end_marker(k->c.cls) || k->c.framed)
			return false;	/* user space between the report's lines */
		finish(k, false);
		return true;
	}
	collect(k, line, len, lineno);
	if (is_die_line(line, len)) {
		k->c.armed = true;
		if (k->c.cls == KMSG_BUG)
			k->c.cls = KMSG_OOPS;	/* "kernel BUG at", then the oops it is */
	}
	if ((k->c.armed && is_end_marker(line, len)) || (k->c.framed && is_frame(line, len))) {
		finish(k, true);
		return true;
	}
	if (k->c.lines >= report_limit(k)) {
		finish(k, false);
		return true;
	}
	return false;
}

/*
 * A console that prints lines twice (two console drivers on one UART): a
 * line equal to the one before it is skipped, whatever report it is in, when
 * it is a kernel line (a timestamp, or a report's opener).
 */
static bool is_reprint(struct kmsg *k, const char *line, size_t len, bool kernel,
		       int64_t lineno)
{
	bool same = k->prev_line + 1 == lineno && k->prev.len == len &&
		    !memcmp(k->prev.buf, line, len);

	k->prev_line = lineno;
	if (same && kernel) {
		k->reprint_line = lineno;
		return true;
	}
	strbuf_reset(&k->prev);
	strbuf_add(&k->prev, line, len);
	return false;
}

/*
 * A line opening @cls ends the current report: a not yet dead oops is
 * parked; an oops line while one is parked is that oops going on; a panic
 * ends a parked oops too.
 */
static void end_for(struct kmsg *k, enum kmsg_class cls, int64_t lineno)
{
	if (may_park(k, cls)) {
		park(k, lineno);
		return;
	}
	emit(k, false);
	if (cls == KMSG_OOPS)
		resume(k);	/* the line goes on in it */
	else if (cls == KMSG_PANIC && k->parked.cls != KMSG_NONE)
		finish_parked(k);
}

void kmsg_feed(struct kmsg *k, const char *line, size_t len, int64_t lineno)
{
	size_t ts = len, msg = 0, kmsg_at;
	enum kmsg_class cls;

	/* once the console showed timestamps, a line without one is user space */
	if (kmsg_timestamp_len(line, len))
		k->stamps_seen = true;
	cls = classify_at(line, len, k->stamps_seen, &ts, &msg);
	if (is_reprint(k, line, len, cls != KMSG_NONE || kernel_part(line, len, &kmsg_at) < len,
		       lineno))
		return;

	if (k->c.cls != KMSG_NONE && starts_new(k, cls))
		end_for(k, cls, lineno);
	if (k->c.cls != KMSG_NONE) {
		continue_report(k, line, len, lineno);
		note_opener(k, line, len, lineno);
		return;
	}
	if (cls != KMSG_NONE) {
		start(k, cls, line, len, ts, msg, lineno);
		if (k->c.armed && is_end_marker(line, len))
			emit(k, true);
	}
	note_opener(k, line, len, lineno);
}

void kmsg_flush(struct kmsg *k)
{
	finish(k, false);
	emit(k, false);		/* a parked oops, now current */
}
