// SPDX-License-Identifier: GPL-2.0-or-later
/* lava_signals.c -- LAVA test signals in console lines, across interleaved kernel messages */
#include "results/lava_signals.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strbuf.h"
#include "results/kmsg.h"

#define SIGNAL_PREFIX "<LAVA_SIGNAL_"
#define SIGNAL_PREFIX_LEN (sizeof(SIGNAL_PREFIX) - 1)
#define SIGNAL_MAX_WORDS 16

struct lava_signals {
	lava_signal_fn fn;
	void *userdata;
	bool open;		/* a signal is being reassembled in text */
	struct strbuf text;	/* from '<' on, kernel fragments removed */
	int64_t start, end;
	unsigned lines;
};

static const char *const kind_names[] = {
	[LAVA_SIGNAL_STARTRUN] = "STARTRUN",
	[LAVA_SIGNAL_ENDRUN] = "ENDRUN",
	[LAVA_SIGNAL_STARTTC] = "STARTTC",
	[LAVA_SIGNAL_ENDTC] = "ENDTC",
	[LAVA_SIGNAL_TESTCASE] = "TESTCASE",
	[LAVA_SIGNAL_TESTSET_START] = "TESTSET START",
	[LAVA_SIGNAL_TESTSET_STOP] = "TESTSET STOP",
	[LAVA_SIGNAL_TESTREFERENCE] = "TESTREFERENCE",
	[LAVA_SIGNAL_TESTRAISE] = "TESTRAISE",
	[LAVA_SIGNAL_OTHER] = "OTHER",
	[LAVA_SIGNAL_INVALID] = "INVALID",
};

const char *lava_signal_kind_name(enum lava_signal_kind kind)
{
	return kind <= LAVA_SIGNAL_INVALID ? kind_names[kind] : "INVALID";
}

int lava_signals_new(lava_signal_fn fn, void *userdata, struct lava_signals **ret)
{
	struct lava_signals *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return -ENOMEM;
	ls->fn = fn;
	ls->userdata = userdata;
	strbuf_init(&ls->text);
	*ret = ls;
	return 0;
}

struct lava_signals *lava_signals_free(struct lava_signals *ls)
{
	if (!ls)
		return NULL;
	strbuf_release(&ls->text);
	free(ls);
	return NULL;
}

static const char *normal_result(const char *s)
{
	static const char *const known[] = { "pass", "fail", "skip", "unknown" };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcasecmp(s, known[i]))
			return known[i];
	return "unknown";
}

/* Split @s in place at blanks; returns the number of words. */
static int split_words(char *s, char **w, int max)
{
	int n = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(s, " \t", &save); tok && n < max; tok = strtok_r(NULL, " \t", &save))
		w[n++] = tok;
	return n;
}

static bool name_ok(const char *s)
{
	return s && *s && strlen(s) <= LAVA_SIGNALS_MAX_NAME;
}

/* TESTCASE: KEY=value words in any order, other words ignored. */
static bool parse_testcase(struct lava_signal *sig, char **w, int n)
{
	const char *meas = NULL;
	char *end;
	int i;

	for (i = 0; i < n; i++) {
		if (!strncmp(w[i], "TEST_CASE_ID=", 13))
			sig->name = w[i] + 13;
		else if (!strncmp(w[i], "RESULT=", 7))
			sig->result = normal_result(w[i] + 7);
		else if (!strncmp(w[i], "MEASUREMENT=", 12))
			meas = w[i] + 12;
		else if (!strncmp(w[i], "UNITS=", 6) && w[i][6])
			sig->units = w[i] + 6;
	}
	if (meas && *meas) {
		sig->measurement = strtod(meas, &end);
		sig->has_measurement = !*end;
	}
	return name_ok(sig->name) && sig->result;
}

/* Fill @sig from the words after "LAVA_SIGNAL_"; false if malformed. */
static bool parse_words(struct lava_signal *sig, char **w, int n, const char *rest)
{
	static const struct {
		const char *word;
		enum lava_signal_kind kind;
	} simple[] = {
		{ "STARTRUN", LAVA_SIGNAL_STARTRUN },
		{ "ENDRUN", LAVA_SIGNAL_ENDRUN },
		{ "STARTTC", LAVA_SIGNAL_STARTTC },
		{ "ENDTC", LAVA_SIGNAL_ENDTC },
	};
	size_t i;

	for (i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
		if (strcmp(w[0], simple[i].word))
			continue;
		sig->kind = simple[i].kind;
		sig->name = n > 1 ? w[1] : NULL;
		sig->uuid = n > 2 ? w[2] : NULL;
		return name_ok(sig->name);
	}
	if (!strcmp(w[0], "TESTCASE")) {
		sig->kind = LAVA_SIGNAL_TESTCASE;
		return parse_testcase(sig, w + 1, n - 1);
	}
	if (!strcmp(w[0], "TESTSET") && n > 1 && !strcmp(w[1], "STOP")) {
		sig->kind = LAVA_SIGNAL_TESTSET_STOP;
		return true;
	}
	if (!strcmp(w[0], "TESTSET") && n > 2 && !strcmp(w[1], "START")) {
		sig->kind = LAVA_SIGNAL_TESTSET_START;
		sig->name = w[2];
		return name_ok(sig->name);
	}
	if (!strcmp(w[0], "TESTREFERENCE") && n > 3) {
		sig->kind = LAVA_SIGNAL_TESTREFERENCE;
		sig->name = w[1];
		sig->result = normal_result(w[2]);
		sig->reference = w[3];
		return name_ok(sig->name);
	}
	if (!strcmp(w[0], "TESTRAISE")) {
		sig->kind = LAVA_SIGNAL_TESTRAISE;
		sig->message = rest;
		return true;
	}
	sig->kind = LAVA_SIGNAL_OTHER;
	return strspn(w[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(w[0]) && n > 0;
}

/* The signal in ls->text ("<LAVA_SIGNAL_..." without '>') is complete or abandoned. */
static void emit(struct lava_signals *ls, bool complete)
{
	struct lava_signal sig = { .line_start = ls->start, .line_end = ls->end };
	char *words[SIGNAL_MAX_WORDS], *copy, *rest;
	int n;

	ls->open = false;
	if (strncmp(ls->text.buf, SIGNAL_PREFIX, SIGNAL_PREFIX_LEN)) {
		strbuf_reset(&ls->text);	/* a "<LAVA_SIG" fragment that was no signal */
		return;
	}
	sig.raw = ls->text.buf + 1;
	copy = strdup(ls->text.buf + SIGNAL_PREFIX_LEN);
	if (copy) {
		rest = ls->text.buf + SIGNAL_PREFIX_LEN + strcspn(ls->text.buf + SIGNAL_PREFIX_LEN, " \t");
		rest += strspn(rest, " \t");
		n = split_words(copy, words, SIGNAL_MAX_WORDS);
		if (!complete || !n || !parse_words(&sig, words, n, rest))
			sig = (struct lava_signal){ .kind = LAVA_SIGNAL_INVALID, .raw = sig.raw,
						    .line_start = ls->start, .line_end = ls->end };
		if (ls->fn)
			ls->fn(&sig, ls->userdata);
	}
	free(copy);
	strbuf_reset(&ls->text);
}

static void begin(struct lava_signals *ls, int64_t lineno)
{
	ls->open = true;
	ls->start = ls->end = lineno;
	ls->lines = 1;
	strbuf_reset(&ls->text);
}

static size_t find_prefix(const char *p, size_t len)
{
	const char *hit = memmem(p, len, SIGNAL_PREFIX, SIGNAL_PREFIX_LEN);

	return hit ? (size_t)(hit - p) : len;
}

static size_t find_timestamp(const char *p, size_t len)
{
	const char *q = p, *end = p + len;

	while ((q = memchr(q, '[', (size_t)(end - q)))) {
		if (kmsg_timestamp_len(q, (size_t)(end - q)))
			return (size_t)(q - p);
		q++;
	}
	return len;
}

/* Add @p (the rest of a line) to the open signal; the signal may close, be
 * cut by a kernel message, or be abandoned for a new one. */
static void scan(struct lava_signals *ls, const char *p, size_t len, int64_t lineno)
{
	while (ls->open) {
		size_t skip = ls->text.len ? 0 : SIGNAL_PREFIX_LEN;
		const char *close = memchr(p + skip, '>', len - skip);
		size_t gt = close ? (size_t)(close - p) : len;
		size_t ts = skip + find_timestamp(p + skip, len - skip);
		size_t np = skip + find_prefix(p + skip, len - skip);
		size_t next;

		next = gt < ts ? (gt < np ? gt : np) : (ts < np ? ts : np);
		strbuf_add(&ls->text, p, next);
		if (next == len) {
			if (ls->text.len > LAVA_SIGNALS_MAX_LEN)
				emit(ls, false);
			return;
		}
		if (next == ts)		/* a kernel message runs to the end of the line */
			return;
		emit(ls, next == gt);
		p += next + (next == gt);
		len -= next + (next == gt);
		next = find_prefix(p, len);
		if (next == len)
			return;
		begin(ls, lineno);
		p += next;
		len -= next;
	}
}

/*
 * A kernel message right after the start of "<LAVA_SIGNAL_" ("<LAVA_SIG[ 1.0]
 * ..."): the offset of that start (at least 2 bytes of it), else @len.
 */
static size_t find_cut_prefix(const char *p, size_t len)
{
	size_t t, k;

	for (t = find_timestamp(p, len); t < len; t += 1 + find_timestamp(p + t + 1, len - t - 1)) {
		for (k = t < SIGNAL_PREFIX_LEN - 1 ? t : SIGNAL_PREFIX_LEN - 1; k >= 2; k--)
			if (!memcmp(p + t - k, SIGNAL_PREFIX, k))
				return t - k;
	}
	return len;
}

void lava_signals_feed(struct lava_signals *ls, const char *line, size_t len, int64_t lineno)
{
	size_t at, ts;

	if (ls->open && ++ls->lines > LAVA_SIGNALS_MAX_LINES)
		emit(ls, false);
	if (ls->open) {
		ls->end = lineno;
		scan(ls, line, len, lineno);
		return;
	}
	at = find_prefix(line, len);
	if (at == len) {
		at = find_cut_prefix(line, len);
		if (at == len)
			return;
		ts = at + find_timestamp(line + at, len - at);
		begin(ls, lineno);
		strbuf_add(&ls->text, line + at, ts - at);
		return;
	}
	begin(ls, lineno);
	scan(ls, line + at, len - at, lineno);
}

void lava_signals_flush(struct lava_signals *ls)
{
	if (ls->open)
		emit(ls, false);
}
