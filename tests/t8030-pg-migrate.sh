#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8030-pg-migrate.sh -- `labd store migrate`: a lab that ran on SQLite moved
# into PostgreSQL: the same job ids, states, results, events and tokens seen
# through the API of labd on PostgreSQL, the same delivery positions of its
# http backend in the database, a new job with a higher id; a second migrate
# into the filled database is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/backend-lib.sh"

pg_require 'labd store migrate'

sim_lab 1
recorder_start rec
cat >>"$LAB/labd.conf" <<CONF
backends = ( { type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; batch_ms = 100; } );
CONF
write_job "$TMP/job.yaml" <<JOB
job_name: migrated
device_type: sim-uboot
timeouts: {job: {minutes: 3}, action: {minutes: 2}, connection: {seconds: 20}}
actions:
$(sim_uboot_boot)
- test:
    definitions:
    - from: inline
      name: smoke
      path: inline/smoke.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: smoke}
        run:
          steps:
          - lava-test-case one --result pass
          - lava-test-case two --result fail
JOB

# lab_state: each job's id, state, health and results, the events' count.
lab_state() {
	for id in $(labctl jobs --format json | $PY -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)))'); do
		echo "job $id: $(labctl show "$id" | grep -E "^(state|health):" | tr -s " " | tr "\n" " ")"
		labctl results "$id" | sort
		echo "events: $(curl -sf "$LABD_URL/api/v1/jobs/$id/events" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')"
	done
}

# deliveries_sqlite / deliveries_pg: the http backend's positions, one
# "job backend receiver seq" line each, in the SQLite lab / in PostgreSQL
deliveries_sqlite() {
	$PY - "$LAB/state/labd.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT job_id, backend, receiver, seq FROM deliveries"
                      " ORDER BY job_id, backend, receiver"):
    print(*row)
PY
}
deliveries_pg() {
	pg_sql "SELECT concat_ws(' ', job_id, backend, receiver, seq) FROM deliveries
		ORDER BY job_id, backend, receiver"
}

labd_start
test_expect_success 'a lab on SQLite: jobs run, their events delivered, a token made' '
	for i in 1 2 3; do labctl submit -q "$TMP/job.yaml" >>"$TMP/ids" || return 1; done &&
	wait_for "[ \$(labctl jobs --state finished --format json | $PY -c \"import json,sys; print(len(json.load(sys.stdin)))\") = 3 ]" 120 &&
	for id in $(cat "$TMP/ids"); do wait_delivered rec "$id" || return 1; done &&
	wait_for "[ \$(deliveries_sqlite | wc -l) = 3 ]" 30 &&
	labctl token-create alice ci >"$TMP/token.txt" &&
	lab_state >"$TMP/before.txt" && cat "$TMP/before.txt" &&
	grep -q "0_smoke.one *pass" "$TMP/before.txt"
'
labd_stop
deliveries_sqlite >"$TMP/deliveries-before.txt"
cat "$TMP/deliveries-before.txt"

test_expect_success 'labd store migrate copies it into PostgreSQL' '
	sed -i "s|^state_dir|store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"h1\"; };\nstate_dir|" "$LAB/labd.conf" &&
	"$LABD" -c "$LAB/labd.conf" store migrate 2>&1 | tee "$TMP/migrate.out" &&
	grep -q "copied 3 jobs" "$TMP/migrate.out" &&
	[ "$(pg_sql "SELECT string_agg(id::text, \$\$ \$\$ ORDER BY id) FROM jobs")" = "$(sort -n "$TMP/ids" | tr "\n" " " | sed "s/ $//")" ]
'

test_expect_success 'the http backend'"'"'s delivery positions are the same in PostgreSQL' '
	test -s "$TMP/deliveries-before.txt" &&
	grep -q "events, 3 delivery positions," "$TMP/migrate.out" &&
	deliveries_pg >"$TMP/deliveries-after.txt" &&
	diff -u "$TMP/deliveries-before.txt" "$TMP/deliveries-after.txt"
'

labd_start
test_expect_success 'labd on PostgreSQL shows the same jobs, results, events and tokens' '
	lab_state >"$TMP/after.txt" && diff -u "$TMP/before.txt" "$TMP/after.txt" &&
	token=$(sed -n "s/^token: //p" "$TMP/token.txt") &&
	curl -sf -H "Authorization: Bearer $token" "$LABD_URL/api/v1/whoami" | grep -q alice
'

test_expect_success 'a new job gets a higher id, and runs' '
	id=$(labctl submit -q "$TMP/job.yaml") && echo "new job $id" &&
	[ "$id" -gt "$(sort -n "$TMP/ids" | tail -1)" ] &&
	wait_for "labctl show $id | grep -q \"state: *finished\"" 120
'

test_expect_success 'a second migrate into the filled database is refused' '
	labd_stop
	test_must_fail "$LABD" -c "$LAB/labd.conf" store migrate 2>"$TMP/again.err" &&
	cat "$TMP/again.err" && grep -q "has jobs or reservations already" "$TMP/again.err"
'

test_done
