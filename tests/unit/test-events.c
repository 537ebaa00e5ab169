// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-events.c -- journal/events.c on a fake store whose commits and reads
 * the test completes by hand: an event reaches the listeners only once a
 * sync asked for after it was stored completed, in the order emitted; one
 * whose number the store does not know without a read waits for that read
 * (not in the loop), the next events of its job behind it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "journal/events.h"
#include "store/store_internal.h"
#include "tap.h"

#define MAX_HEARD 16
#define MAX_JOBS 16

/*
 * A store that numbers events and says "durable" when the test says so.
 * Events are numbered in one sequence, except those of the jobs marked
 * unknown: their number needs a read of the job in a read context (as
 * PostgreSQL's for a job this host does not run), the read answered when
 * the test says so, their numbers then from seqs[] (what the database has).
 */
struct fake_store {
	struct store st;
	int64_t seq;		/* of the last event stored */
	char stored[MAX_HEARD][16];	/* their kinds, in the order stored */
	int sync_ret;		/* what ->sync answers: 1 (later), 0 (durable now), < 0 */
	int add_err;		/* what ->event_add answers instead of storing, or 0 */
	unsigned syncs;		/* ->sync calls */
	store_done_fn done;	/* the sync on its way, or NULL */
	void *done_ud;
	/* the jobs whose events need a read to be numbered */
	bool unknown[MAX_JOBS];
	int64_t seqs[MAX_JOBS];	/* their last event's number */
	int answer[MAX_JOBS];	/* the read of each: 1 not in yet, 0 in, < 0 its error */
	unsigned again;		/* -EAGAIN answered */
	/* the read context open (one at a time), and the one waiting for its answers */
	bool in_context, sent;
	int64_t read_job;	/* the job its current run read, or 0 */
	store_done_fn read_done;
	void *read_ud;
};

static int fake_event_add(struct store *st, int64_t job_id, uint64_t ts, const char *kind,
			  const char *data, int64_t *ret_seq)
{
	struct fake_store *fs = (struct fake_store *)st;

	if (fs->add_err)
		return fs->add_err;
	if (fs->seq >= MAX_HEARD || job_id <= 0 || job_id >= MAX_JOBS)
		return -ENOSPC;
	if (fs->unknown[job_id] && fs->read_job != job_id) {
		fs->again++;
		return -EAGAIN;
	}
	snprintf(fs->stored[fs->seq++], sizeof(fs->stored[0]), "%s", kind);
	*ret_seq = fs->unknown[job_id] ? ++fs->seqs[job_id] : fs->seq;
	return 0;
}

static int fake_job_get(struct store *st, int64_t id, struct job_record *ret)
{
	struct fake_store *fs = (struct fake_store *)st;

	if (id <= 0 || id >= MAX_JOBS)
		return -ENOENT;
	if (fs->in_context && fs->answer[id] > 0) {
		fs->sent = true;
		return -EINPROGRESS;
	}
	if (fs->answer[id] < 0)
		return fs->answer[id];
	fs->read_job = id;
	memset(ret, 0, sizeof(*ret));
	ret->id = id;
	return 0;
}

static int fake_read_begin(struct store *st, store_done_fn done, void *userdata)
{
	struct fake_store *fs = (struct fake_store *)st;

	if (fs->in_context || fs->read_done)
		return -EBUSY;	/* the test keeps to one */
	fs->in_context = true;
	fs->sent = false;
	fs->read_job = 0;
	fs->read_done = done;
	fs->read_ud = userdata;
	return 0;
}

static int fake_read_end(struct store *st)
{
	struct fake_store *fs = (struct fake_store *)st;

	fs->in_context = false;
	fs->read_job = 0;
	if (!fs->sent)
		fs->read_done = NULL;
	return fs->sent;
}

static bool fake_read_pending(const struct store *st)
{
	return ((const struct fake_store *)st)->sent;
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
	if (fs->read_ud == userdata)
		fs->read_done = NULL;
}

static const struct store_ops fake_ops = {
	.job_get = fake_job_get,
	.event_add = fake_event_add,
	.sync = fake_sync,
	.forget = fake_forget,
	.read_begin = fake_read_begin,
	.read_end = fake_read_end,
	.read_pending = fake_read_pending,
};

/* The read of job @id is answered (@err: 0, or its error): its context runs again. */
static void answer(struct fake_store *fs, int64_t id, int err)
{
	store_done_fn done = fs->read_done;

	fs->answer[id] = err;
	fs->read_done = NULL;
	if (done)
		done(0, fs->read_ud);
}

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

/*
 * An event whose number needs a read is held while the job is read (the
 * loop does not wait), the next events of its job behind it; those of other
 * jobs go on.  Once the answer is in they are stored, in order, numbered
 * from it.
 */
TEST(test_events__numbered_after_a_read)
{
	struct fake_store fs = { .sync_ret = 0 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	fs.unknown[7] = true;
	fs.seqs[7] = 4;		/* another host added four */
	fs.answer[7] = 1;
	CHECK_INT(events_emit(e, 7, 1, "cancel", NULL), ==, 0);
	CHECK_INT(fs.again, ==, 1);
	CHECK(fs.read_done);	/* the job's read is on its way */
	CHECK(events_waiting(e));
	CHECK_INT(events_emit(e, 8, 2, "queued", NULL), ==, 0);
	CHECK_INT(events_emit(e, 7, 3, "finished", NULL), ==, 0);
	CHECK_INT(fs.again, ==, 1);	/* held behind the first, not tried */
	CHECK_STR(h.text, "queued:1");
	answer(&fs, 7, 0);
	CHECK_STR(h.text, "queued:1 cancel:5 finished:6");
	CHECK_STR(fs.stored[1], "cancel");
	CHECK_STR(fs.stored[2], "finished");
	CHECK(!events_waiting(e));
	CHECK(!fs.read_done);
	events_free(e);
}

/* Held events wait for the commit as any other, after the read. */
TEST(test_events__numbered_then_synced)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	fs.unknown[7] = true;
	fs.answer[7] = 1;
	CHECK_INT(events_emit(e, 8, 1, "queued", NULL), ==, 0);
	CHECK_INT(events_emit(e, 7, 2, "backend-error", NULL), ==, 0);
	answer(&fs, 7, 0);	/* stored while the first sync is on its way */
	CHECK_INT(fs.syncs, ==, 1);
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1");
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1 backend-error:1");
	CHECK(!events_waiting(e));
	events_free(e);
}

/* The read failed (the database away, the job gone): the events are dropped, logged. */
TEST(test_events__number_read_failed)
{
	struct fake_store fs = { .sync_ret = 0 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	fs.unknown[7] = true;
	fs.answer[7] = 1;
	CHECK_INT(events_emit(e, 7, 1, "cancel", NULL), ==, 0);
	CHECK_INT(events_emit(e, 7, 2, "finished", NULL), ==, 0);
	answer(&fs, 7, -ENOTCONN);
	CHECK_INT(h.n, ==, 0);
	CHECK_INT(fs.seq, ==, 0);
	CHECK(!events_waiting(e));
	/* the next one is read for again */
	fs.answer[7] = 1;
	CHECK_INT(events_emit(e, 7, 3, "backend-error", NULL), ==, 0);
	CHECK(fs.read_done);
	answer(&fs, 7, 0);
	CHECK_STR(h.text, "backend-error:1");
	events_free(e);
}

/* Freed while an event waits for its number: its read is forgotten. */
TEST(test_events__free_forgets_read)
{
	struct fake_store fs = { .sync_ret = 0 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	fs.unknown[7] = true;
	fs.answer[7] = 1;
	CHECK_INT(events_emit(e, 7, 1, "cancel", NULL), ==, 0);
	CHECK(fs.read_done);
	events_free(e);
	CHECK(!fs.read_done);
	CHECK_INT(h.n, ==, 0);
}

/*
 * An event the store wrote itself (the jobs of a host this one reaped) is
 * handed out with its number, not stored again, after the events stored
 * before it once they are durable.
 */
TEST(test_events__announced)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", NULL), ==, 0);
	CHECK_INT(events_announce(e, 9, 12, 2, "finished", "{\"health\":\"incomplete\"}"), ==, 0);
	CHECK_INT(h.n, ==, 0);
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1");
	commit(&fs, 0);
	CHECK_STR(h.text, "queued:1 finished:12");
	CHECK_INT(fs.seq, ==, 1);	/* stored: "queued" only */
	fs.sync_ret = 0;
	CHECK_INT(events_announce(e, 9, 13, 3, "backend-error", NULL), ==, 0);
	CHECK_STR(h.text, "queued:1 finished:12 backend-error:13");
	events_free(e);
}

/*
 * Fenced (another host reaped this one): the store drops this host's
 * writes, -ESTALE.  The events waiting for their commit, and the later
 * ones, are nobody's to hear of.
 */
TEST(test_events__fenced)
{
	struct fake_store fs = { .sync_ret = 1 };
	struct heard h = { 0 };
	struct events *e = events_on(&fs, &h);

	CHECK(e);
	CHECK_INT(events_emit(e, 7, 1, "queued", NULL), ==, 0);
	CHECK_INT(events_emit(e, 7, 2, "started", NULL), ==, 0);
	commit(&fs, -ESTALE);
	CHECK_INT(h.n, ==, 0);
	CHECK(!events_waiting(e));
	fs.add_err = -ESTALE;
	fs.sync_ret = -ESTALE;
	CHECK_INT(events_emit(e, 7, 3, "finished", NULL), ==, -ESTALE);
	CHECK_INT(h.n, ==, 0);
	CHECK(!events_waiting(e));
	events_free(e);
}

TEST_LIST(test_events__held_until_commit, test_events__sync_covers_only_events_before_it,
	  test_events__durable_at_once, test_events__commit_failed, test_events__free_forgets,
	  test_events__numbered_after_a_read, test_events__numbered_then_synced,
	  test_events__number_read_failed, test_events__free_forgets_read,
	  test_events__announced, test_events__fenced);
