#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8050-pg-gc.sh -- `labd gc` on a PostgreSQL store while the lab's hosts
# run: given each host's own labd.conf (its host name, its state directory)
# with a retention of 0 days, it removes the results and events of every
# finished job of the lab and the logs its host has, runs beside the labd
# of that host (which holds the host's name), registers no host of its own,
# and leaves the running and queued jobs alone; the hosts go on running
# jobs afterwards.  A host's own retention runs (every second here) list
# the finished jobs without waiting for the database in the loop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'labd gc beside hosts on PostgreSQL'

pg_host_lab hA a 2
pg_host_lab hB b 2
pg_host_start hA
pg_host_start hB
# job FILE N: a test case passed at once, then N ticks half a second apart
job() {
	pg_ticks_job "$1" "$2"
	sed -i "s/^          steps:\$/&\n          - lava-test-case first --result pass/" "$1"
}
job "$TMP/short.yaml" 1
job "$TMP/long.yaml" 50

state() { pg_sql "SELECT state FROM jobs WHERE id = $1"; }
# gc_conf NAME: NAME's labd.conf with a retention that removes every finished job's leftovers
gc_conf() {
	{ grep -v "^retention = " "$TMP/$1/labd.conf"
	  echo "retention = { log_days = 0; history_days = 0; };"; } >"$TMP/$1/gc.conf"
}
# logs_of NAME ID: the log files host NAME keeps of job ID
logs_of() { ls "$TMP/$1/state/jobs/$2" 2>/dev/null | grep -c "log" || true; }

test_expect_success 'finished jobs on both hosts, then others running and one queued' '
	for h in hA hB; do
		for i in 1 2; do
			LABD_URL=$(eval echo \$URL_$h) labctl submit -q "$TMP/short.yaml" >>"$TMP/done.ids"
		done
	done
	for id in $(cat "$TMP/done.ids"); do
		wait_for "[ \"\$(state $id)\" = finished ]" 90
	done
	[ "$(pg_sql "SELECT count(*) FROM jobs WHERE health = \$\$complete\$\$")" = 4 ]
	[ "$(pg_sql "SELECT count(DISTINCT job_id) FROM results")" = 4 ]
	for id in $(cat "$TMP/done.ids"); do
		[ "$(logs_of "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" "$id")" -gt 0 ]
	done
	# five jobs for four boards: whichever the boards took run, one waits
	for h in hA hB hA hB hA; do
		LABD_URL=$(eval echo \$URL_$h) labctl submit -q "$TMP/long.yaml"
	done
	wait_for "[ \"\$(pg_sql \"SELECT count(DISTINCT job_id) FROM results r JOIN jobs j
		ON j.id = r.job_id WHERE j.state = \\\$\\\$running\\\$\\\$\")\" = 4 ]" 60
	pg_sql "SELECT id FROM jobs WHERE state = \$\$running\$\$" >"$TMP/run.ids"
	pg_sql "SELECT id FROM jobs WHERE state = \$\$queued\$\$" >"$TMP/queued.id"
	pg_sql "SELECT id, state, host FROM jobs ORDER BY id"
	[ "$(wc -l <"$TMP/run.ids")" = 4 ] && [ "$(wc -l <"$TMP/queued.id")" = 1 ]
'

test_expect_success 'labd gc of each host beside its running labd removes what it should' '
	gc_conf hA
	gc_conf hB
	"$LABD" -c "$TMP/hA/gc.conf" gc >"$TMP/gc-hA.out" 2>&1 || { cat "$TMP/gc-hA.out"; exit 1; }
	cat "$TMP/gc-hA.out"
	grep -q "^2 logs removed by age" "$TMP/gc-hA.out"
	grep -q "^4 jobs. results and events removed by age" "$TMP/gc-hA.out"
	"$LABD" -c "$TMP/hB/gc.conf" gc >"$TMP/gc-hB.out" 2>&1 || { cat "$TMP/gc-hB.out"; exit 1; }
	cat "$TMP/gc-hB.out"
	grep -q "^2 logs removed by age" "$TMP/gc-hB.out"
	# the finished jobs: no results, no events, no log on either host, the jobs stay
	for id in $(cat "$TMP/done.ids"); do
		[ "$(pg_sql "SELECT (SELECT count(*) FROM results WHERE job_id = $id)
			+ (SELECT count(*) FROM events WHERE job_id = $id)")" = 0 ]
		[ "$(pg_sql "SELECT log_removed > 0 AND history_removed > 0 FROM jobs WHERE id = $id")" = t ]
		[ "$(logs_of hA "$id")$(logs_of hB "$id")" = 00 ]
	done
'

test_expect_success 'the running and the queued jobs untouched, no host of gc'"'"'s own, none reaped' '
	for id in $(cat "$TMP/run.ids") $(cat "$TMP/queued.id"); do
		[ "$(pg_sql "SELECT log_removed + history_removed FROM jobs WHERE id = $id")" = 0 ]
		[ "$(pg_sql "SELECT count(*) FROM events WHERE job_id = $id")" -gt 0 ]
	done
	for id in $(cat "$TMP/run.ids"); do
		[ "$(state $id)" = running ]
		[ "$(pg_sql "SELECT count(*) FROM results WHERE job_id = $id")" -gt 0 ]
		[ "$(logs_of "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" "$id")" -gt 0 ]
	done
	[ "$(state "$(cat "$TMP/queued.id")")" = queued ]
	[ "$(pg_sql "SELECT string_agg(name, \$\$,\$\$ ORDER BY name) FROM hosts")" = hA,hB ]
	[ "$(pg_sql "SELECT count(*) FROM hosts WHERE lease_until = 0")" = 0 ]
	! grep -q "stopped renewing their lease" "$TMP/hA/labd.log" "$TMP/hB/labd.log"
'

test_expect_success 'the hosts go on: every job ends complete, and new ones run on both' '
	for id in $(cat "$TMP/run.ids") $(cat "$TMP/queued.id"); do
		wait_for "[ \"\$(state $id)\" = finished ]" 120
	done
	for h in hA hB; do
		LABD_URL=$(eval echo \$URL_$h) labctl submit -q "$TMP/short.yaml" >>"$TMP/after.ids"
	done
	for id in $(cat "$TMP/after.ids"); do
		wait_for "[ \"\$(state $id)\" = finished ]" 90
	done
	pg_sql "SELECT id, health, host, log_removed > 0, history_removed > 0 FROM jobs ORDER BY id"
	[ "$(pg_sql "SELECT count(*) FROM jobs WHERE health <> \$\$complete\$\$")" = 0 ]
	# their logs and results as any job'"'"'s
	for id in $(cat "$TMP/after.ids") $(cat "$TMP/run.ids"); do
		[ "$(pg_sql "SELECT count(*) FROM results WHERE job_id = $id")" -gt 0 ]
		[ "$(logs_of "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" "$id")" -gt 0 ]
	done
'

# since_mark FILE: what FILE got since the mark
since_mark() { tail -c +$(($(cat "$TMP/mark") + 1)) "$1"; }

test_expect_success 'a host'"'"'s own retention runs: the finished jobs listed, nothing waited' '
	kill "$(cat "$TMP/hA.pid")" && wait_for "! kill -0 $(cat "$TMP/hA.pid")" 90 &&
	{ grep -v "^retention = " "$TMP/hA/labd.conf"
	  echo "retention = { compress = false; interval = 1; };"; } >"$TMP/hA/retention.conf" &&
	mv "$TMP/hA/retention.conf" "$TMP/hA/labd.conf" &&
	wc -c <"$TMP/hA/labd.log" >"$TMP/mark" &&
	pg_host_start hA -v -v &&	# debug: logs each read that waits for the database
	wait_for "since_mark $TMP/hA/labd.log | grep -c \"retention: [1-9][0-9]* finished jobs\" |
		grep -qv \"^[01]\$\"" 30 &&
	if since_mark "$TMP/hA/labd.log" | grep "store: waited .* to list jobs$"; then false; fi
'

test_done
