// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-events.c -- journal/events.c on a fake store whose commits the test
 * completes by hand: an event reaches the listeners only once a sync asked
 * for after it was stored completed, in the order emitted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "journal/events.h"
#include "store/store_internal.h"
#include "tap.h"

#define MAX_HEARD 16

/* A store that numbers events and says "durable" when the test says so. */
struct fake_store {
	struct store st;
	int64_t seq;		/* of the last event stored */
	char stored[MAX_HEARD][16];	/* their kinds, in the order stored */
	int sync_ret;		/* what ->sync answers: 1 (later), 0 (durable now), < 0 */
	unsigned syncs;		/* ->sync calls */
	store_done_fn done;	/* the sync on its way, or NULL */
	void *done_ud;
};

static int fake_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
			  const char *data, int64_t *ret_seq)
{
	struct fake_store *fs = (struct fake_store *)st;

	if (fs->seq >= MAX_HEARD)
		return -ENOSPC;
	snprintf(fs->stored[fs->seq], sizeof(fs->stored[0]), "%s", kind);
	*ret_seq = ++fs->seq;
	return 0;
}

static int fake_sync(struct store *st, store_done_fn done, void *userdata)
{
	struct fake_store *fs = (struct fake_store *)st;

	fs->syncs++;
	if (fs->sync_ret == 1) {
		fs->done = done;
		fs->done_ud = userdata;
	}
	return fs->sync_ret;
}

static void fake_forget(struct store *st, void *userdata)
{
	struct fake_store *fs = (struct fake_store *)st;

	if (fs->done_ud == userdata)
		fs->done = NULL;
}

static const struct store_ops fake_ops = {
	.event_add = fake_event_add,
	.sync = fake_sync,
	.forget = fake_forget,
};

/* The sync on its way completes (@err: the commit's error). */
static void commit(struct fake_store *fs, int err)
{
	store_done_fn done = fs->done;

	fs->done = NULL;
	if (done)
		done(err, fs->done_ud);
}

/* What the listener heard: "kind:seq" one after the other. */
struct heard {
	char text[256];
	unsigned n;
};

static void on_event(const struct event *ev, void *ud)
{
	struct heard *h = ud;
	size_t len = strlen(h->text);

	snprintf(h->text + len, sizeof(h->text) - len, "%s%s:%lld", len ? " " : "", ev->kind,
		 (long long)ev->seq);
	h->n++;
}

static struct events *events_on(struct fake_store *fs, struct heard *h)
{
	struct events *e = NULL;

	fs->st.ops = &fake_ops;
	if (events_new(&fs->st, &e) < 0 || events_listen(e, on_event, h, NULL) < 0)
		return events_free(e);
	return e;
}

TEST(test_events__held_until_commit)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", NULL), ==, 0);
	CHECK_INT(fs.syncs, ==, 1);
	CHECK(events_waiting(e));
	CHECK_INT(h.n, ==, 0);	/* stored, not durable yet */
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1");
	CHECK(!events_waiting(e));
	events_free(e);
}

/*
 * The rule: a sync covers only the events stored before it was asked for.
 * An event stored while a sync is on its way waits for the next one, which
 * is asked for when the first completes.
 */
TEST(test_events__sync_covers_only_events_before_it)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", NULL), ==, 0);
	CHECK_INT(events_emit(e, 7, 2, "started", NULL), ==, 0);
	CHECK_INT(events_emit(e, 8, 3, "queued", NULL), ==, 0);
	CHECK_INT(fs.syncs, ==, 1);	/* one on its way: the others wait for it */
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1");	/* the two others were stored after it was asked */
	CHECK_INT(fs.syncs, ==, 2);	/* asked for them */
	CHECK_INT(events_emit(e, 7, 4, "phase", NULL), ==, 0);
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1 started:2 queued:3");
	CHECK_INT(fs.syncs, ==, 3);	/* and the one stored meanwhile */
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1 started:2 queued:3 phase:4");
	CHECK(!events_waiting(e));
	CHECK(!fs.done);
	events_free(e);
}

/* A store durable at once (no batching), or one that cannot sync: heard at once. */
TEST(test_events__durable_at_once)
{
	struct fake_store fs = { .sync_ret = 0 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", json_pack("{s:i}", "n", 1)), ==, 0);
	CHECK_STR(h.text, "queued:1");
	fs.sync_ret = -EIO;
	CHECK_INT(events_emit(e, 7, 2, "started", NULL), ==, 0);
	CHECK_STR(h.text, "queued:1 started:2");
	CHECK(!events_waiting(e));
	events_free(e);
}

/* A commit that failed still hands the events out (logged): nothing is kept forever. */
TEST(test_events__commit_failed)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", NULL), ==, 0);
	CHECK_INT(events_emit(e, 7, 2, "started", NULL), ==, 0);
	commit(&fs, -EIO);
	CHECK_STR(h.text, "queued:1");
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1 started:2");
	events_free(e);
}

/* Freed while events wait: the sync's completion is forgotten. */
TEST(test_events__free_forgets)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", NULL), ==, 0);
	CHECK(fs.done);
	events_free(e);
	CHECK(!fs.done);
	CHECK_INT(h.n, ==, 0);
}

TEST_LIST(test_events__held_until_commit, test_events__sync_covers_only_events_before_it,
	  test_events__durable_at_once, test_events__commit_failed, test_events__free_forgets);
