#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8025-pg-claim-locks.sh -- a free board's claim on PostgreSQL is not
# fooled by a queued job's row that another transaction holds.  A job's
# events and results reference it (a foreign key: FOR KEY SHARE on the job's
# row while the inserting transaction is open): the claim takes the job all
# the same.  A transaction that locks the row itself (another host's claim,
# a write to the job): the claim passes it by, and asks again shortly, since
# no NOTIFY comes for a job that was queued already.  Both used to leave the
# board idle and the job queued until something else woke the host.  Then a
# second host: a job its host had a free board for is left to that host by
# the others, and offered to them when that board went to another job.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
TEST_STRICT=1

if ! pg_start >"$TMP/pg-start.log" 2>&1; then
	test_skip 'claims and row locks' "no PostgreSQL server: $(tail -1 "$TMP/pg-start.log")"
	test_done
	exit
fi

LAB=$TMP/hA
sim_start 1
write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"hA\"; };"
sim_device a-01 0
labd_start
write_job "$TMP/j.yaml" <<JOB
job_name: a job whose row is held
device_type: sim-uboot
timeouts: {job: {minutes: 2}}
actions:
$(sim_minimal_boot)
JOB

board_state() {
	curl -sf -X POST -d "{\"state\":\"$1\",\"reason\":\"t8025\"}" \
		"$LABD_URL/api/v1/devices/a-01/state" >/dev/null
}
job_state() { curl -sf "$LABD_URL/api/v1/jobs/$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
# hold SQL: run SQL in a transaction of its own in the background, until locker_gone.
hold() {
	pg_sql "BEGIN; $1; SELECT pg_sleep(600); COMMIT" >/dev/null 2>&1 &
	wait_for "[ \"\$(pg_sql \"SELECT count(*) FROM pg_stat_activity
		WHERE query LIKE \\\$\\\$%pg_sleep(600)%\\\$\\\$ AND pid <> pg_backend_pid()\")\" = 1 ]" 20
}
locker_active() {
	[ "$(pg_sql "SELECT count(*) FROM pg_stat_activity
		WHERE query LIKE \$\$%pg_sleep(600)%\$\$ AND pid <> pg_backend_pid()")" = 1 ]
}
locker_gone() {
	pg_sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE query LIKE \$\$%pg_sleep(600)%\$\$ AND pid <> pg_backend_pid()" >/dev/null
	wait
}

test_expect_success 'an event of the queued job being inserted meanwhile: the board takes the job' '
	board_state maintenance
	id=$(LABD_URL=$LABD_URL labctl submit -q "$TMP/j.yaml")
	hold "INSERT INTO events (job_id, seq, ts, kind) VALUES ($id, 1000000, 0, \$\$t8025\$\$)"
	board_state idle
	wait_for "[ \"\$(job_state $id)\" != queued ]" 30 || { locker_gone; exit 1; }
	# taken while the referencing transaction was still open
	locker_active || { locker_gone; exit 1; }
	locker_gone
	wait_for "[ \"\$(job_state $id)\" = finished ]" 60
'

test_expect_success 'the queued job row locked by another transaction: taken once it is released' '
	board_state maintenance
	id=$(LABD_URL=$LABD_URL labctl submit -q "$TMP/j.yaml")
	hold "SELECT id FROM jobs WHERE id = $id FOR UPDATE"
	board_state idle
	sleep 1
	# passed by while locked, the board asks again until it gets it
	[ "$(job_state $id)" = queued ] || { locker_gone; exit 1; }
	locker_gone
	wait_for "[ \"\$(job_state $id)\" != queued ]" 30
	wait_for "[ \"\$(job_state $id)\" = finished ]" 60
	[ "$(pg_sql "SELECT host || device || attempt FROM jobs WHERE id = $id")" = hAa-011 ]
'

# host B: four boards of the same type, beside host A's one
URL_A=$LABD_URL PID_A=$LABD_PID
LAB=$TMP/hB
sim_start 4
write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"hB\"; };"
for i in 0 1 2 3; do sim_device "b-0$((i + 1))" "$i"; done
labd_start

test_expect_success 'a job left to its host, whose free board took another job: offered to the other hosts' '
	first=$(pg_sql "SELECT min(id) FROM jobs")
	# queued behind every host'"'"'s back: no NOTIFY, no board woken for it
	early=$(pg_sql "INSERT INTO jobs (name, device_type, tags, priority, submitted, state,
		definition, format, filename, submitter) SELECT \$\$unannounced\$\$, device_type,
		tags, 90, submitted, \$\$queued\$\$, definition, format, filename, \$\$psql\$\$
		FROM jobs WHERE id = $first RETURNING id" | head -1)
	# host A has a free board for it: the other hosts leave it to A ...
	id=$(LABD_URL=$URL_A labctl submit -q "$TMP/j.yaml")
	# ... whose board takes the earlier job of higher priority instead
	wait_for "[ \"\$(job_state $early)\" != queued ]" 30
	wait_for "[ \"\$(job_state $id)\" != queued ]" 30
	pg_sql "SELECT id, device, host FROM jobs WHERE id IN ($early, $id) ORDER BY id"
	[ "$(pg_sql "SELECT device FROM jobs WHERE id = $early")" = a-01 ]
	# not left waiting for a-01 while host B had four boards free
	[ "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" = hB ]
	wait_for "[ \"\$(job_state $id)\" = finished ]" 60
	wait_for "[ \"\$(job_state $early)\" = finished ]" 60
'

test_expect_success 'a job left to a host killed before it claimed: another host runs it' '
	first=$(pg_sql "SELECT min(id) FROM jobs")
	kill -9 "$PID_A"
	wait_for "! kill -0 $PID_A" 10
	# as host A queues a job it has a free board for, then is killed before its claim
	id=$(pg_sql "INSERT INTO jobs (name, device_type, tags, priority, submitted, state,
		definition, format, filename, submitter) SELECT \$\$left to hA\$\$, device_type,
		tags, priority, submitted, \$\$queued\$\$, definition, format, filename, \$\$psql\$\$
		FROM jobs WHERE id = $first RETURNING id" | head -1)
	pg_sql "SELECT pg_notify(\$\$labd_queue\$\$, json_build_object(\$\$job\$\$, id,
		\$\$type\$\$, device_type, \$\$tags\$\$, tags, \$\$first\$\$, \$\$hA\$\$)::text)
		FROM jobs WHERE id = $id" >/dev/null
	# host B takes it long before host A'"'"'s lease (30 s) runs out and A is reaped
	wait_for "[ \"\$(job_state $id)\" != queued ]" 15
	[ "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" = hB ]
	[ "$(pg_sql "SELECT lease_until > 0 FROM hosts WHERE name = \$\$hA\$\$")" = t ]
	grep -q "job $id, left to another host, is still queued" "$TMP/hB/labd.log"
	wait_for "[ \"\$(job_state $id)\" = finished ]" 60
'

unfinished() { pg_sql "SELECT count(*) FROM jobs WHERE state <> \$\$finished\$\$"; }
test_expect_success 'a burst of 300 jobs left to the killed host: host B looks at each of them' '
	first=$(pg_sql "SELECT min(id) FROM jobs")
	# more than one read looks at (256): each kept, none makes every free board claim
	ids=$(pg_sql "INSERT INTO jobs (name, device_type, tags, priority, submitted, state,
		definition, format, filename, submitter) SELECT \$\$burst left to hA\$\$,
		device_type, tags, priority, submitted, \$\$queued\$\$, definition, format,
		filename, \$\$psql\$\$ FROM jobs, generate_series(1, 300) WHERE id = $first
		RETURNING id")
	last=$(echo "$ids" | sort -n | tail -1)
	pg_sql "SELECT pg_notify(\$\$labd_queue\$\$, json_build_object(\$\$job\$\$, id,
		\$\$type\$\$, device_type, \$\$tags\$\$, tags, \$\$first\$\$, \$\$hA\$\$)::text)
		FROM jobs WHERE name = \$\$burst left to hA\$\$ ORDER BY id" >/dev/null
	wait_for "grep -q \"job $last, left to another host, is still queued\" \"$TMP/hB/labd.log\"" 20
	n=$(grep -c "left to another host, is still queued" "$TMP/hB/labd.log")
	pg_sql "UPDATE jobs SET state = \$\$finished\$\$, health = \$\$canceled\$\$
		WHERE name = \$\$burst left to hA\$\$ AND state = \$\$queued\$\$" >/dev/null
	[ "$n" -ge 301 ]	# the 300, and the job of the case before
	wait_for "[ \$(unfinished) = 0 ]" 60
'

test_done
