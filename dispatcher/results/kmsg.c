// SPDX-License-Identifier: GPL-2.0-or-later
/* kmsg.c -- recognise kernel panics, oopses, BUGs and warnings in console lines */
#include "kmsg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

struct kmsg {
	kmsg_report_fn fn;
	void *userdata;
	enum kmsg_class cls;	/* collection in progress, or KMSG_NONE */
	struct strbuf first;
	struct strbuf excerpt;
	int64_t start, end;
	unsigned lines;
};

/* Ordered: the first match wins, so specific sanitizer reports come before BUG:. */
static const struct {
	const char *needle;
	enum kmsg_class cls;
} kmsg_rules[] = {
	{ "Kernel panic - not syncing", KMSG_PANIC },
	{ "BUG: KASAN:", KMSG_KASAN },
	{ "BUG: KFENCE:", KMSG_KFENCE },
	{ "BUG: KCSAN:", KMSG_KCSAN },
	{ "UBSAN:", KMSG_UBSAN },
	{ "WARNING: possible circular locking dependency", KMSG_LOCKDEP },
	{ "WARNING: possible recursive locking detected", KMSG_LOCKDEP },
	{ "rcu: INFO: rcu_", KMSG_RCU_STALL },
	{ "INFO: rcu_sched self-detected stall", KMSG_RCU_STALL },
	{ "INFO: rcu_preempt detected stalls", KMSG_RCU_STALL },
	{ "INFO: task ", KMSG_HUNG_TASK },
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
};

const char *kmsg_class_name(enum kmsg_class cls)
{
	return cls < KMSG_CLASS_COUNT ? kmsg_names[cls] : "invalid";
}

bool kmsg_is_fatal(enum kmsg_class cls)
{
	return cls == KMSG_PANIC;
}

int kmsg_new(kmsg_report_fn fn, void *userdata, struct kmsg **ret)
{
	struct kmsg *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->fn = fn;
	k->userdata = userdata;
	strbuf_init(&k->first);
	strbuf_init(&k->excerpt);
	*ret = k;
	return 0;
}

struct kmsg *kmsg_free(struct kmsg *k)
{
	if (!k)
		return NULL;
	strbuf_release(&k->first);
	strbuf_release(&k->excerpt);
	free(k);
	return NULL;
}

/* Skip a "[   12.345678] " kernel timestamp, if any. */
static const char *skip_timestamp(const char *line, size_t *len)
{
	const char *p = line, *end = line + *len;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (close && close - p < 24) {
			p = close + 1;
			while (p < end && *p == ' ')
				p++;
		}
	}
	*len = (size_t)(end - p);
	return p;
}

enum kmsg_class kmsg_classify(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(kmsg_rules) / sizeof(kmsg_rules[0]); i++)
		if (memmem(line, len, kmsg_rules[i].needle, strlen(kmsg_rules[i].needle)))
			return kmsg_rules[i].cls;
	return KMSG_NONE;
}

static bool is_end_marker(const char *line, size_t len)
{
	return memmem(line, len, "---[ end trace", 14) || memmem(line, len, "---[ end Kernel panic", 21);
}

static void emit(struct kmsg *k, bool complete)
{
	struct kmsg_report rep = {
		.cls = k->cls,
		.first_line = k->first.buf,
		.excerpt = k->excerpt.buf,
		.line_start = k->start,
		.line_end = k->end,
		.complete = complete,
	};

	if (k->cls == KMSG_NONE)
		return;
	k->cls = KMSG_NONE;
	if (k->fn)
		k->fn(&rep, k->userdata);
	strbuf_reset(&k->first);
	strbuf_reset(&k->excerpt);
	k->lines = 0;
}

static void collect(struct kmsg *k, const char *line, size_t len, int64_t lineno)
{
	if (k->lines < KMSG_MAX_EXCERPT_LINES && k->excerpt.len + len < KMSG_MAX_EXCERPT) {
		if (k->excerpt.len)
			strbuf_addch(&k->excerpt, '\n');
		strbuf_add(&k->excerpt, line, len);
	}
	k->lines++;
	k->end = lineno;
}

static void start(struct kmsg *k, enum kmsg_class cls, const char *line, size_t len,
		  int64_t lineno)
{
	size_t tlen = len;
	const char *text = skip_timestamp(line, &tlen);

	k->cls = cls;
	k->start = k->end = lineno;
	strbuf_reset(&k->first);
	strbuf_add(&k->first, text, tlen);
	collect(k, line, len, lineno);
}

void kmsg_feed(struct kmsg *k, const char *line, size_t len, int64_t lineno)
{
	enum kmsg_class cls = kmsg_classify(line, len);

	if (k->cls == KMSG_NONE) {
		if (cls != KMSG_NONE)
			start(k, cls, line, len, lineno);
		if (k->cls != KMSG_NONE && is_end_marker(line, len))
			emit(k, true);
		return;
	}
	/* Inside a report: a panic inside an oops is the more important report. */
	if (cls == KMSG_PANIC && k->cls != KMSG_PANIC) {
		emit(k, false);
		start(k, cls, line, len, lineno);
		return;
	}
	collect(k, line, len, lineno);
	if (is_end_marker(line, len) || k->lines >= KMSG_MAX_EXCERPT_LINES)
		emit(k, is_end_marker(line, len));
}

void kmsg_flush(struct kmsg *k)
{
	emit(k, false);
}
