// SPDX-License-Identifier: GPL-2.0-or-later
/* test-mask.c -- dispatcher/core/mask.c: secrets out of text, JSON and cut-up streams */
#include <stdlib.h>
#include <string.h>

#include "core/mask.h"
#include "core/strbuf.h"
#include "tap.h"

static struct mask *make(void)
{
	struct mask *m;

	if (mask_new(&m) || mask_add(m, "s3cr3t") || mask_add(m, "s3cr3t-and-more") ||
	    mask_add(m, "hunter2") || mask_add(m, ""))
		abort();
	return m;
}

TEST(test_mask__text_and_json)
{
	struct mask *m = make();
	char *t;
	json_t *v;

	t = mask_text(m, "export TOKEN='s3cr3t'; echo s3cr3t-and-more hunter2s3cr3t");
	CHECK_STR(t, "export TOKEN='[secret]'; echo [secret] [secret][secret]");
	free(t);
	t = mask_text(NULL, "s3cr3t");
	CHECK_STR(t, "s3cr3t");
	free(t);
	CHECK(mask_empty(NULL));
	CHECK(!mask_empty(m));
	v = json_pack("{s:s, s:[s, i], s:{s:s}}", "msg", "no prompt after 'login hunter2'",
		      "list", "s3cr3t", 7, "hunter2", "k", "v s3cr3t");
	CHECK_INT(mask_json(m, v), ==, 0);
	t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(t, "{\"[secret]\":{\"k\":\"v [secret]\"},\"list\":[\"[secret]\",7],\"msg\":\"no prompt after 'login [secret]'\"}");
	free(t);
	json_decref(v);
	mask_free(m);
}

/* The same bytes, cut everywhere into two and three pieces, mask the same. */
TEST(test_mask__streams_cut_anywhere)
{
	static const char text[] = "root# export T='s3cr3t-and-more' x=s3cr3t\r\nhunter hunter2!";
	static const char want[] = "root# export T='[secret]' x=[secret]\r\nhunter [secret]!";
	struct mask *m = make();
	size_t n = strlen(text), a, b;

	for (a = 0; a <= n; a++) {
		for (b = a; b <= n; b++) {
			struct strbuf out = STRBUF_INIT;
			struct mask_stream s;

			CHECK_INT(mask_stream_init(&s, m), ==, 0);
			mask_stream_feed(&s, text, a, &out);
			mask_stream_feed(&s, text + a, b - a, &out);
			mask_stream_feed(&s, text + b, n - b, &out);
			mask_stream_flush(&s, &out);
			if (strcmp(out.buf, want))
				printf("# cut at %zu, %zu: '%s'\n", a, b, out.buf);
			CHECK_STR(out.buf, want);
			strbuf_release(&out);
			mask_stream_release(&s);
		}
	}
	mask_free(m);
}

/* What may begin a secret waits; what cannot goes out at once. */
TEST(test_mask__held_back)
{
	struct strbuf out = STRBUF_INIT;
	struct mask *m = make();
	struct mask_stream s;

	CHECK_INT(mask_stream_init(&s, m), ==, 0);
	mask_stream_feed(&s, "prompt# s3c", 11, &out);
	CHECK_STR(out.buf, "prompt# ");
	CHECK_INT(mask_stream_pending(&s), ==, 3);
	mask_stream_feed(&s, "ond", 3, &out);
	CHECK_STR(out.buf, "prompt# s3cond");
	mask_stream_feed(&s, "s3cr3t", 6, &out);	/* could still be s3cr3t-and-more */
	CHECK_STR(out.buf, "prompt# s3cond");
	mask_stream_flush(&s, &out);
	CHECK_STR(out.buf, "prompt# s3cond[secret]");
	CHECK_INT(mask_stream_pending(&s), ==, 0);
	mask_stream_release(&s);
	strbuf_release(&out);
	mask_free(m);
}

TEST_LIST(test_mask__text_and_json, test_mask__streams_cut_anywhere, test_mask__held_back);
