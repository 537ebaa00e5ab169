// SPDX-License-Identifier: GPL-2.0-or-later
/* lava_log.c -- labd's log files read as LAVA's YAML log, record by record */
#include "results/lava_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/joblog.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "results/yaml_out.h"

#define IDX_RECORD 16		/* console.idx: offset and time, little-endian u64 */
#define IDX_BATCH 512		/* records read at once */
#define LABD_READ (64 * 1024)	/* labd.log bytes read at once */
#define LABD_MAX_LINE (64 * 1024)	/* a longer "line" is not labd's: dropped */
#define MAP_MAX (1 << 20)	/* labd lines counted by lava_log_map_lines() */
#define CONSOLE_READ (64 * 1024)	/* console.log bytes read at once */

struct lava_log {
	struct joblog_file *console, *idx_f, *labd;	/* NULL when the file is absent */
	char **suites;
	bool complete;
	bool at_end;
	uint64_t index;		/* of the next record */
	int64_t cline;		/* next console line, 1-based */
	/* labd.log: bytes read but not parsed, up to file offset labd_off */
	struct strbuf lbuf;
	size_t lpos;
	uint64_t labd_off;
	bool have_labd;		/* pend and pend_text hold the next labd line */
	struct joblog_labd_line pend;
	struct strbuf pend_text;
	/* console.idx records idx_first .. idx_first + idx_n - 1 (0-based) */
	unsigned char idx[IDX_BATCH * IDX_RECORD];
	int64_t idx_first;
	size_t idx_n;
	/* a snapshot of the console files, taken by each read */
	int64_t n_lines;
	uint64_t console_size;
	/* console.log bytes from file offset cbuf_off: lines are read in order */
	struct strbuf cbuf;
	uint64_t cbuf_off;
	struct strbuf line;
};

/* Open @name of @dir (or its compressed copy) into *f; an absent file is NULL, not an error. */
static int open_file(const char *dir, const char *name, struct joblog_file **f)
{
	int err = joblog_fopen(dir, name, f);

	*f = err < 0 ? NULL : *f;
	return err == -ENOENT ? 0 : err;
}

int lava_log_open(const char *dir, char *const *suites, bool complete, struct lava_log **ret)
{
	struct lava_log *lg = calloc(1, sizeof(*lg));
	int err = 0;

	if (!lg)
		return -ENOMEM;
	strbuf_init(&lg->lbuf);
	strbuf_init(&lg->pend_text);
	strbuf_init(&lg->line);
	strbuf_init(&lg->cbuf);
	lg->complete = complete;
	lg->cline = 1;
	lg->idx_first = -1;
	if (suites && strv_copy(suites, &lg->suites) < 0)
		err = -ENOMEM;
	if (!err)
		err = open_file(dir, JOBLOG_CONSOLE, &lg->console);
	if (!err)
		err = open_file(dir, JOBLOG_INDEX, &lg->idx_f);
	if (!err)
		err = open_file(dir, JOBLOG_LABD, &lg->labd);
	if (err < 0) {
		lava_log_close(lg);
		return err;
	}
	*ret = lg;
	return 0;
}

struct lava_log *lava_log_close(struct lava_log *lg)
{
	if (!lg)
		return NULL;
	joblog_fclose(lg->console);
	joblog_fclose(lg->idx_f);
	joblog_fclose(lg->labd);
	strv_free(lg->suites);
	strbuf_release(&lg->lbuf);
	strbuf_release(&lg->pend_text);
	strbuf_release(&lg->line);
	strbuf_release(&lg->cbuf);
	free(lg);
	return NULL;
}

uint64_t lava_log_index(const struct lava_log *lg)
{
	return lg->index;
}

bool lava_log_at_end(const struct lava_log *lg)
{
	return lg->at_end;
}

/* ---- labd.log, one parsed line ahead ---- */

/* More of labd.log into lbuf: 1, 0 at its end for now, or a negative errno. */
static int labd_fill(struct lava_log *lg)
{
	ssize_t n;
	int err;

	if (!lg->labd)
		return 0;
	if (lg->lpos) {
		strbuf_consume(&lg->lbuf, lg->lpos);
		lg->lpos = 0;
	}
	err = strbuf_grow(&lg->lbuf, LABD_READ);
	if (err < 0)
		return err;
	n = joblog_fpread(lg->labd, lg->lbuf.buf + lg->lbuf.len, LABD_READ, lg->labd_off);
	if (n < 0)
		return (int)n;
	lg->lbuf.len += (size_t)n;
	lg->lbuf.buf[lg->lbuf.len] = '\0';
	lg->labd_off += (uint64_t)n;
	return n > 0;
}

/* Parse the next labd line into lg->pend (lines not in labd's format are skipped). */
static int labd_next(struct lava_log *lg)
{
	const char *start, *nl;
	int err;

	while (!lg->have_labd) {
		start = lg->lbuf.buf + lg->lpos;
		nl = memchr(start, '\n', lg->lbuf.len - lg->lpos);
		if (!nl) {
			if (lg->lbuf.len - lg->lpos > LABD_MAX_LINE)
				lg->lpos = lg->lbuf.len;	/* not labd's: drop it */
			err = labd_fill(lg);
			if (err <= 0)
				return err;
			continue;
		}
		lg->lpos += (size_t)(nl - start) + 1;
		strbuf_reset(&lg->pend_text);
		err = joblog_parse_labd(start, (size_t)(nl - start), &lg->pend, &lg->pend_text);
		if (err == -ENOMEM)
			return err;
		lg->have_labd = !err;
	}
	return 0;
}

/* ---- console.idx and console.log ---- */

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static int snapshot(struct lava_log *lg)
{
	lg->n_lines = lg->idx_f ? (int64_t)(joblog_fsize(lg->idx_f) / IDX_RECORD) : 0;
	lg->console_size = lg->console ? joblog_fsize(lg->console) : 0;
	return 0;
}

/* Index record of console line @line (1-based, <= n_lines) into its offset and time. */
static int idx_get(struct lava_log *lg, int64_t line, uint64_t *off, uint64_t *ts)
{
	int64_t i = line - 1;
	ssize_t n;

	if (lg->idx_first < 0 || i < lg->idx_first || i >= lg->idx_first + (int64_t)lg->idx_n) {
		n = joblog_fpread(lg->idx_f, lg->idx, sizeof(lg->idx), (uint64_t)i * IDX_RECORD);
		if (n < 0)
			return (int)n;
		if (n < IDX_RECORD)
			return -EIO;
		lg->idx_first = i;
		lg->idx_n = (size_t)n / IDX_RECORD;
	}
	*off = get_le64(lg->idx + (i - lg->idx_first) * IDX_RECORD);
	if (ts)
		*ts = get_le64(lg->idx + (i - lg->idx_first) * IDX_RECORD + 8);
	return 0;
}

/*
 * The bytes of console line @line without its '\n' (every line but the last
 * has one), and whether the line is complete.  The index may be ahead of
 * console.log (a labd killed between the two writes): the line then ends
 * where the file ends.
 */
static int line_bounds(struct lava_log *lg, int64_t line, uint64_t *start, uint64_t *end,
		       uint64_t *ts, bool *complete)
{
	char last = 0;
	int err;

	err = idx_get(lg, line, start, ts);
	if (!err && line < lg->n_lines)
		err = idx_get(lg, line + 1, end, NULL);
	else
		*end = lg->console_size;
	if (err < 0)
		return err;
	if (*end > lg->console_size)
		*end = lg->console_size;
	if (*start > *end)
		*start = *end;
	if (line < lg->n_lines) {
		last = '\n';
	} else if (*end > *start && joblog_fpread(lg->console, &last, 1, *end - 1) != 1) {
		return -EIO;
	}
	*complete = lg->complete || last == '\n';
	if (last == '\n' && *end > *start)
		(*end)--;
	return 0;
}

/* ---- records ---- */

static void record_begin(struct yaml_out *y, uint64_t ts, const char *lvl)
{
	char when[40];

	joblog_format_time(ts, when, sizeof(when));
	when[strcspn(when, "Z")] = '\0';	/* Python's isoformat(): no zone */
	yaml_out_map_begin(y, true);
	yaml_out_cstr(y, "dt");
	yaml_out_cstr(y, when);
	yaml_out_cstr(y, "lvl");
	yaml_out_cstr(y, lvl);
	yaml_out_cstr(y, "msg");
}

/*
 * @len bytes of console.log at @start into *ret, from the read-ahead buffer
 * (refilled as needed: the file is only ever appended to, so bytes read once
 * stay right).  @len is at most LAVA_LOG_MAX_LINE.
 */
static int console_bytes(struct lava_log *lg, uint64_t start, size_t len, const char **ret)
{
	size_t want = len > CONSOLE_READ ? len : CONSOLE_READ;
	ssize_t n;
	int err;

	if (start < lg->cbuf_off || start + len > lg->cbuf_off + lg->cbuf.len) {
		strbuf_reset(&lg->cbuf);
		err = strbuf_grow(&lg->cbuf, want);
		if (err < 0)
			return err;
		n = joblog_fpread(lg->console, lg->cbuf.buf, want, start);
		if (n < 0)
			return (int)n;
		lg->cbuf.len = (size_t)n;
		lg->cbuf_off = start;
		if ((size_t)n < len)
			return -EIO;	/* the index points past the file */
	}
	*ret = lg->cbuf.buf + (start - lg->cbuf_off);
	return 0;
}

static int console_record(struct lava_log *lg, struct yaml_out *y, uint64_t start, uint64_t end,
			  uint64_t ts)
{
	uint64_t len = end - start, want = len > LAVA_LOG_MAX_LINE ? LAVA_LOG_MAX_LINE : len;
	const char *bytes = "";
	int err;

	err = want ? console_bytes(lg, start, (size_t)want, &bytes) : 0;
	if (err < 0)
		return err;
	if (want < len) {
		strbuf_reset(&lg->line);
		strbuf_add(&lg->line, bytes, (size_t)want);
		strbuf_addf(&lg->line, " [labd: %llu bytes cut]", (unsigned long long)(len - want));
		bytes = lg->line.buf;
		want = lg->line.len;
	}
	record_begin(y, ts, "target");
	yaml_out_str(y, bytes, (size_t)want);
	yaml_out_map_end(y);
	return 0;
}

static const char *level_of(const char *kind)
{
	static const char *const same[] = { "info", "warning", "error", "input" };
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (!strcmp(kind, same[i]))
			return same[i];
	if (!strcmp(kind, "phase"))
		return "info";
	if (!strcmp(kind, "result"))
		return "results";
	return "debug";
}

/* The end of "<result>" or "<result> (<measurement> <units>)" at @p, or NULL. */
static const char *result_word(const char *p, size_t *len)
{
	static const char *const words[] = { "pass", "fail", "skip", "unknown" };
	size_t i, n;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i]);
		if (!strncmp(p, words[i], n) && (!p[n] || !strncmp(p + n, " (", 2))) {
			*len = n;
			return words[i];
		}
	}
	return NULL;
}

/* Where the suite ends in "<suite>.<name>": the longest known suite, else the first '.'. */
static size_t suite_len(const struct lava_log *lg, const char *head, size_t len)
{
	const char *dot = memchr(head, '.', len);
	size_t best = dot ? (size_t)(dot - head) : len;

	STRV_FOREACH(s, lg->suites) {
		size_t n = strlen(*s);

		if (n < len && head[n] == '.' && !strncmp(head, *s, n) && n > best)
			best = n;
	}
	return best;
}

/*
 * The msg of a "result" line, "<suite>.<name>: <result>[ (<measurement>
 * <units>)]" (run_result()), as LAVA's results mapping; other text stays a string.
 */
static void result_msg(struct lava_log *lg, struct yaml_out *y, const char *text, size_t len)
{
	const char *sep = NULL, *p, *word = NULL, *meas;
	size_t wlen = 0, slen;
	char *end;
	double v;

	for (p = text; (p = strstr(p, ": ")); p++)
		if (result_word(p + 2, &wlen)) {
			sep = p;
			word = result_word(p + 2, &wlen);
		}
	if (!sep) {
		yaml_out_str(y, text, len);
		return;
	}
	slen = suite_len(lg, text, (size_t)(sep - text));
	yaml_out_map_begin(y, true);
	yaml_out_cstr(y, "definition");
	yaml_out_str(y, text, slen);
	yaml_out_cstr(y, "case");
	yaml_out_str(y, slen < (size_t)(sep - text) ? text + slen + 1 : "",
		     slen < (size_t)(sep - text) ? (size_t)(sep - text) - slen - 1 : 0);
	yaml_out_cstr(y, "result");
	yaml_out_cstr(y, word);
	meas = sep + 2 + wlen;
	if (!strncmp(meas, " (", 2)) {
		v = strtod(meas + 2, &end);
		if (end != meas + 2) {
			json_t *num = json_real(v);

			yaml_out_cstr(y, "measurement");
			yaml_out_json(y, num, true);
			json_decref(num);
			end += strspn(end, " ");
			yaml_out_cstr(y, "units");
			yaml_out_str(y, end, strcspn(end, ")"));
		}
	}
	yaml_out_map_end(y);
}

static void labd_record(struct lava_log *lg, struct yaml_out *y)
{
	const char *lvl = level_of(lg->pend.kind);

	record_begin(y, lg->pend.ts, lvl);
	if (!strcmp(lvl, "results"))
		result_msg(lg, y, lg->pend_text.buf, lg->pend_text.len);
	else
		yaml_out_str(y, lg->pend_text.buf, lg->pend_text.len);
	yaml_out_map_end(y);
	lg->have_labd = false;
}

/*
 * Write the next record, if it can be read now: 1 written, 0 nothing (the
 * end for now), or a negative errno.  A labd line comes after the console
 * line it was written during (its "L<n>": n lines had started).
 */
static int next_record(struct lava_log *lg, struct yaml_out *y, bool *begun, struct strbuf *out)
{
	uint64_t start, end, ts;
	bool complete, console;
	int err;

	err = labd_next(lg);
	if (err < 0)
		return err;
	console = lg->cline <= lg->n_lines && (!lg->have_labd || lg->pend.line >= lg->cline);
	if (!console && !lg->have_labd)
		return 0;
	if (console) {
		err = line_bounds(lg, lg->cline, &start, &end, &ts, &complete);
		if (err < 0 || !complete)
			return err;
	} else if (lg->pend.line >= lg->cline && !lg->complete) {
		return 0;	/* after a console line not written yet */
	}
	if (!*begun) {
		*begun = true;
		yaml_out_begin(y, out);
		yaml_out_seq_begin(y, false);
	}
	if (console) {
		err = console_record(lg, y, start, end, ts);
		lg->cline++;
	} else {
		labd_record(lg, y);
	}
	lg->index++;
	return err < 0 ? err : 1;
}

long lava_log_read(struct lava_log *lg, size_t max_bytes, uint64_t max_records,
		   struct strbuf *out)
{
	size_t len0 = out->len;
	struct yaml_out y;
	bool begun = false;
	long n = 0;
	int err;

	lg->at_end = false;
	err = snapshot(lg);
	while (!err && (!max_records || (uint64_t)n < max_records) &&
	       (!n || out->len - len0 < max_bytes)) {
		err = next_record(lg, &y, &begun, out);
		if (err == 0)
			lg->at_end = true;
		if (err <= 0)
			break;
		n++;
		err = 0;
		if (y.err)
			break;
		if (yaml_emitter_flush(&y.em) != 1)
			err = -ENOMEM;
	}
	if (begun) {
		yaml_out_seq_end(&y);
		if (yaml_out_end(&y) < 0 && !err)
			err = -ENOMEM;
	}
	return err < 0 ? err : n;
}

int lava_log_seek(struct lava_log *lg, uint64_t index)
{
	uint64_t j = 0;
	int err;

	lg->have_labd = false;
	lg->labd_off = 0;
	lg->lpos = 0;
	strbuf_reset(&lg->lbuf);
	for (;;) {
		err = labd_next(lg);
		if (err < 0)
			return err;
		/* labd line j is record j + L_j */
		if (!lg->have_labd || j + (uint64_t)lg->pend.line >= index)
			break;
		lg->have_labd = false;
		j++;
	}
	if (lg->have_labd && j + (uint64_t)lg->pend.line == index)
		lg->cline = lg->pend.line + 1;
	else
		lg->cline = (int64_t)(index - j) + 1;
	lg->index = index;
	return 0;
}

/* How many of the @n sorted values of @v are below @k. */
static size_t count_below(const int64_t *v, size_t n, int64_t k)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int lava_log_map_lines(const char *dir, int64_t *lines, size_t n)
{
	struct lava_log *lg = NULL;
	int64_t *ls = NULL, *v;	/* the labd lines' "L<n>": they never decrease */
	size_t nl = 0, alloc = 0, i;
	int err;

	err = lava_log_open(dir, NULL, true, &lg);
	while (!err && nl < MAP_MAX) {
		err = labd_next(lg);
		if (err < 0 || !lg->have_labd)
			break;
		if (nl == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			v = realloc(ls, alloc * sizeof(*ls));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			ls = v;
		}
		ls[nl++] = lg->pend.line;
		lg->have_labd = false;
	}
	if (!err) {
		for (i = 0; i < n; i++)
			if (lines[i] > 0)
				lines[i] += (int64_t)count_below(ls, nl, lines[i]);
	}
	free(ls);
	lava_log_close(lg);
	return err;
}
