// SPDX-License-Identifier: GPL-2.0-or-later
/* match.c -- streaming PCRE2 matching on console bytes */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "run/match.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>

#include "core/strbuf.h"

struct pattern {
	pcre2_code *code;
	pcre2_match_data *md;
	int id;
	size_t scan_from;	/* no match can start before this window offset */
};

struct matcher {
	struct strbuf window;
	struct pattern *pats;
	size_t n_pats;
	size_t consume;		/* bytes to drop at the next call (after the last match) */
	struct pattern *last;	/* pattern of the last match, for matcher_group() */
	size_t last_start;	/* window offset of the last match, before consuming */
};

#define MATCH_COMPILE_FLAGS (PCRE2_MULTILINE)

int matcher_new(struct matcher **ret)
{
	struct matcher *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	strbuf_init(&m->window);
	*ret = m;
	return 0;
}

static void pattern_release(struct pattern *p)
{
	pcre2_match_data_free(p->md);
	pcre2_code_free(p->code);
}

void matcher_clear(struct matcher *m)
{
	size_t i;

	for (i = 0; i < m->n_pats; i++)
		pattern_release(&m->pats[i]);
	free(m->pats);
	m->pats = NULL;
	m->n_pats = 0;
	m->last = NULL;
}

struct matcher *matcher_free(struct matcher *m)
{
	if (!m)
		return NULL;
	matcher_clear(m);
	strbuf_release(&m->window);
	free(m);
	return NULL;
}

static pcre2_code *compile(const char *regex, char *err, size_t errlen)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE offset;
	pcre2_code *code;
	int code_err;

	code = pcre2_compile((PCRE2_SPTR)regex, PCRE2_ZERO_TERMINATED, MATCH_COMPILE_FLAGS,
			     &code_err, &offset, NULL);
	if (!code && err) {
		pcre2_get_error_message(code_err, msg, sizeof(msg));
		snprintf(err, errlen, "%s at offset %zu", (char *)msg, (size_t)offset);
	}
	return code;
}

int match_regex_check(const char *regex, char *err, size_t errlen)
{
	pcre2_code *code = compile(regex, err, errlen);

	if (!code)
		return -EINVAL;
	pcre2_code_free(code);
	return 0;
}

int matcher_add(struct matcher *m, const char *regex, int id, char *err, size_t errlen)
{
	struct pattern *pats, p = { .id = id };

	p.code = compile(regex, err, errlen);
	if (!p.code)
		return -EINVAL;
	p.md = pcre2_match_data_create_from_pattern(p.code, NULL);
	pats = p.md ? realloc(m->pats, (m->n_pats + 1) * sizeof(*pats)) : NULL;
	if (!pats) {
		pattern_release(&p);
		return -ENOMEM;
	}
	/* A new pattern has not looked at the window yet: scan it all. */
	p.scan_from = 0;
	m->pats = pats;
	m->pats[m->n_pats++] = p;
	return 0;
}

char *match_regex_escape(const char *text)
{
	struct strbuf sb = STRBUF_INIT;

	for (; *text; text++) {
		if (strchr("\\^$.[]|()?*+{}", *text))
			strbuf_addch(&sb, '\\');
		strbuf_addch(&sb, *text);
	}
	return strbuf_detach(&sb, NULL);
}

int matcher_add_literal(struct matcher *m, const char *text, int id)
{
	char *re = match_regex_escape(text);
	int r;

	if (!re)
		return -ENOMEM;
	r = matcher_add(m, re, id, NULL, 0);
	free(re);
	return r;
}

size_t matcher_count(const struct matcher *m)
{
	return m->n_pats;
}

/* Drop @n bytes from the start of the window and shift every scan position. */
static void window_drop(struct matcher *m, size_t n)
{
	size_t i;

	if (!n)
		return;
	strbuf_consume(&m->window, n);
	for (i = 0; i < m->n_pats; i++)
		m->pats[i].scan_from = m->pats[i].scan_from > n ? m->pats[i].scan_from - n : 0;
}

static void apply_consume(struct matcher *m)
{
	window_drop(m, m->consume);
	m->consume = 0;
	m->last = NULL;
}

int matcher_feed(struct matcher *m, const uint8_t *data, size_t len)
{
	int r;

	apply_consume(m);
	r = strbuf_add(&m->window, data, len);
	if (r < 0)
		return r;
	if (m->window.len > MATCH_WINDOW_MAX)
		window_drop(m, m->window.len - MATCH_WINDOW_KEEP);
	return 0;
}

/* Search one pattern from its scan position; returns the match start or SIZE_MAX. */
static size_t pattern_search(struct matcher *m, struct pattern *p)
{
	const PCRE2_SIZE *ov;
	int rc;

	if (p->scan_from > m->window.len)
		p->scan_from = m->window.len;
	rc = pcre2_match(p->code, (PCRE2_SPTR)m->window.buf, m->window.len, p->scan_from,
			 PCRE2_PARTIAL_SOFT | PCRE2_NOTEMPTY, p->md, NULL);
	ov = pcre2_get_ovector_pointer(p->md);
	if (rc == PCRE2_ERROR_PARTIAL) {
		p->scan_from = ov[0];
		return SIZE_MAX;
	}
	if (rc < 0) {
		p->scan_from = m->window.len;
		return SIZE_MAX;
	}
	p->scan_from = ov[0];	/* the match stays found until consumed */
	return ov[0];
}

bool matcher_next(struct matcher *m, struct match *ret)
{
	struct pattern *best = NULL;
	size_t best_start = SIZE_MAX, i, end;
	const PCRE2_SIZE *ov;

	apply_consume(m);
	for (i = 0; i < m->n_pats; i++) {
		size_t start = pattern_search(m, &m->pats[i]);

		if (start < best_start) {
			best_start = start;
			best = &m->pats[i];
		}
	}
	if (!best)
		return false;
	ov = pcre2_get_ovector_pointer(best->md);
	end = ov[1];		/* never empty: PCRE2_NOTEMPTY */
	ret->id = best->id;
	ret->text = (const uint8_t *)m->window.buf + best_start;
	ret->len = ov[1] - ov[0];
	ret->before = (const uint8_t *)m->window.buf;
	ret->before_len = best_start;
	m->consume = end;
	m->last = best;
	m->last_start = best_start;
	return true;
}

bool matcher_group(struct matcher *m, const char *name, const uint8_t **ret, size_t *len)
{
	const PCRE2_SIZE *ov;
	int n;

	if (!m->last)
		return false;
	n = pcre2_substring_number_from_name(m->last->code, (PCRE2_SPTR)name);
	if (n < 0)
		return false;
	ov = pcre2_get_ovector_pointer(m->last->md);
	if (ov[2 * n] == PCRE2_UNSET)
		return false;
	*ret = (const uint8_t *)m->window.buf + ov[2 * n];
	*len = ov[2 * n + 1] - ov[2 * n];
	return true;
}

void matcher_flush(struct matcher *m)
{
	m->consume = 0;
	window_drop(m, m->window.len);
	m->last = NULL;
}

const uint8_t *matcher_window(const struct matcher *m, size_t *len)
{
	*len = m->window.len - m->consume;
	return (const uint8_t *)m->window.buf + m->consume;
}
