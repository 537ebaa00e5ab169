// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-pg-event-seqs.c -- the numbers of jobs' last events a PostgreSQL
 * store keeps (store/pg_event_seqs.c), without a database: those of the
 * jobs running here stay whatever else is noted, the others are the
 * PG_EVENT_SEQS_KEPT used last.
 */
#include <stdlib.h>
#include <string.h>

#include "store/pg_internal.h"
#include "tap.h"

/* Two jobs whose ids differ by a multiple of 1024 (a direct-mapped table's size). */
TEST(test_pg_event_seqs__ids_1024_apart)
{
	struct pg_store ps;

	memset(&ps, 0, sizeof(ps));
	CHECK_INT(pg_event_seq_next(&ps, 1), ==, 0);	/* unknown */
	pg_event_seq_live(&ps, 1, 5);
	pg_event_seq_live(&ps, 1025, 2);
	pg_event_seq_note(&ps, 2049, 7);
	CHECK_INT(pg_event_seq_next(&ps, 1), ==, 6);
	CHECK_INT(pg_event_seq_next(&ps, 1025), ==, 3);
	CHECK_INT(pg_event_seq_next(&ps, 2049), ==, 8);
	pg_event_seq_note(&ps, 1, 6);
	pg_event_seq_note(&ps, 1, 3);	/* an older number does not take it back */
	CHECK_INT(pg_event_seq_next(&ps, 1), ==, 7);
	pg_event_seqs_free(&ps);
}

/* A job running here is never dropped, however many other jobs are noted. */
TEST(test_pg_event_seqs__live_kept)
{
	struct pg_store ps;
	int64_t id;

	memset(&ps, 0, sizeof(ps));
	pg_event_seq_live(&ps, 42, 3);
	pg_event_seq_live(&ps, 43, -1);	/* number not known: nothing kept */
	for (id = 1000; id < 1000 + 4 * PG_EVENT_SEQS_KEPT; id++)
		pg_event_seq_note(&ps, id, 1);
	CHECK_INT(pg_event_seq_next(&ps, 42), ==, 4);
	CHECK_INT(pg_event_seq_next(&ps, 43), ==, 0);
	/* the others: the last PG_EVENT_SEQS_KEPT noted */
	CHECK_INT(pg_event_seq_next(&ps, 1000), ==, 0);
	CHECK_INT(pg_event_seq_next(&ps, id - PG_EVENT_SEQS_KEPT - 1), ==, 0);
	CHECK_INT(pg_event_seq_next(&ps, id - PG_EVENT_SEQS_KEPT), ==, 2);
	CHECK_INT(pg_event_seq_next(&ps, id - 1), ==, 2);
	pg_event_seqs_free(&ps);
}

/* A job that ended here is kept as any other: the least recently used go first. */
TEST(test_pg_event_seqs__ended_then_dropped)
{
	struct pg_store ps;
	int64_t id;

	memset(&ps, 0, sizeof(ps));
	pg_event_seq_live(&ps, 7, 9);
	pg_event_seq_end(&ps, 7);
	CHECK_INT(pg_event_seq_next(&ps, 7), ==, 10);	/* its "finished" right after */
	for (id = 100; id < 100 + PG_EVENT_SEQS_KEPT - 1; id++)
		pg_event_seq_note(&ps, id, 1);
	CHECK_INT(pg_event_seq_next(&ps, 7), ==, 10);	/* used: the newest again */
	pg_event_seq_note(&ps, id++, 1);
	pg_event_seq_note(&ps, id++, 1);
	CHECK_INT(pg_event_seq_next(&ps, 100), ==, 0);	/* the least recently used went */
	CHECK_INT(pg_event_seq_next(&ps, 101), ==, 0);
	CHECK_INT(pg_event_seq_next(&ps, 7), ==, 10);
	CHECK_INT(pg_event_seq_next(&ps, 102), ==, 2);
	for (id = 5000; id < 5000 + PG_EVENT_SEQS_KEPT; id++)
		pg_event_seq_note(&ps, id, 1);
	CHECK_INT(pg_event_seq_next(&ps, 7), ==, 0);
	pg_event_seqs_free(&ps);
	pg_event_seqs_free(&ps);	/* twice: nothing left */
}

TEST_LIST(test_pg_event_seqs__ids_1024_apart, test_pg_event_seqs__live_kept,
	  test_pg_event_seqs__ended_then_dropped);
