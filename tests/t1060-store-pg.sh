#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1060-store-pg.sh -- the store's unit tests (test-store, test-store-queue, test-retention) on PostgreSQL: a
# server of the test's own (tests/pg-lib.sh), one database per test case; and
# test-sched-finish, a job's end the store refused tried again without waiting.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

if ! pg_start >"$TMP/pg-start.log" 2>&1; then
	test_skip 'the store tests on PostgreSQL' "no PostgreSQL server: $(tail -1 "$TMP/pg-start.log")"
	test_done
	exit
fi

# unit_on_pg NAME: run unit test NAME on the server; its cases ("ok"/"not ok"
# lines) listed after the test's own line, renumbered here.
unit_on_pg() {
	LABD_TEST_PG="host=127.0.0.1 port=$PG_PORT user=labd" \
		"$BUILD/tests/unit/$1" >"$TMP/$1.out" 2>&1 || { cat "$TMP/$1.out"; return 1; }
	cat "$TMP/$1.out"
	! grep -q "^not ok" "$TMP/$1.out"
}
# what unit_on_pg NAME ran, one line per case
unit_cases() { sed -n 's/^\(ok\|not ok\) [0-9]* - /#   &/p' "$TMP/$1.out" 2>/dev/null; }

test_expect_success 'test-store on PostgreSQL: every case passes' 'unit_on_pg test-store'
unit_cases test-store

# the queue: claims (FOR UPDATE SKIP LOCKED), positions, counts, cursors
test_expect_success 'test-store-queue on PostgreSQL: every case passes' 'unit_on_pg test-store-queue'
unit_cases test-store-queue

# retention: its runs remove logs, results and events through the PostgreSQL store too
test_expect_success 'test-retention on PostgreSQL: every case passes' 'unit_on_pg test-retention'
unit_cases test-retention

# a job's end the store refused: tried again, its reads in a read context (none waits)
test_expect_success 'test-sched-finish on PostgreSQL: every case passes' 'unit_on_pg test-sched-finish'
unit_cases test-sched-finish

test_done
