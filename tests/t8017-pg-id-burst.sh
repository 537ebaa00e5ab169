#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8017-pg-id-burst.sh -- new rows need their id at once, and none waits for
# the database in labd's loop (`labd -v -v` logs each wait: "store: waited N
# us for the database to ..."), on two hosts sharing a PostgreSQL store:
# - a job whose board prints 240 results in one go (a console at full speed):
#   the database numbers them as it commits, in the order they came;
# - 300 jobs submitted at the same instant through both hosts (labd's API,
#   LAVA's REST and XML-RPC), more than the ids fetched ahead: a request that
#   finds none left is held until the refill is in.  Each job is queued
#   once, with an id of its own;
# - 40 submissions in one LAVA system.multicall: each call that finds no id
#   left is held, and run again alone once the refill is in (never the
#   calls before it): every call answers an id of its own, each job queued
#   once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'ids that never wait, on PostgreSQL'

# the boards print as fast as they can: a burst of results reaches labd at once;
# 4 ids fetched ahead at first (labd.conf's store.ids_ahead): the burst outruns them
pg_host_lab hA a 1 "ids_ahead = 4;" && sim_ctl baud all 0
pg_host_lab hB b 1 "ids_ahead = 4;" && sim_ctl baud all 0
pg_host_start hA -v -v
pg_host_start hB -v -v

# results_job FILE: a test step printing 240 results: 5 printf commands (the
# simulated shell takes 64 words and prints 4 KiB at most a command), each 4
# results a line of its format, used again for each of its 12 numbers
results_job() {
	local fmt='<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a%s RESULT=pass>\n<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=b%s RESULT=pass>\n<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=c%s RESULT=pass>\n<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=d%s RESULT=pass>\n'
	local step="" i
	for i in 0 1 2 3 4; do
		step="$step${step:+; }printf '$fmt' $(seq $((i * 12 + 1)) $((i * 12 + 12)) |
			sed 's/.*/& & & &/' | tr '\n' ' ')"
	done
	cat >"$1" <<JOB
job_name: many results
device_type: sim-uboot
timeouts: {job: {minutes: 3}, action: {minutes: 2}, connection: {seconds: 20}}
actions:
$(sim_minimal_boot)
- test:
    definitions:
    - from: inline
      name: many
      path: inline/many.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: many}
        run:
          steps:
          - $step
JOB
}
# the names printf gives, in order
results_names() { for i in $(seq 1 60); do echo "a$i b$i c$i d$i"; done | tr ' ' '\n'; }

# mark: the logs so far are not the next step's; waits: the lines of each
# labd's log since the mark telling it waited for the database; no_wait: none
# (else they are printed)
mark() { for h in hA hB; do wc -c <"$TMP/$h/labd.log" >"$TMP/$h.mark"; done; }
waits() {
	for h in hA hB; do tail -c +$(($(cat "$TMP/$h.mark") + 1)) "$TMP/$h/labd.log"; done |
		grep "store: waited" >"$TMP/waited"
	true
}
no_wait() { [ ! -s "$TMP/waited" ] || { cat "$TMP/waited"; false; }; }

test_expect_success 'a board prints 240 results in one go: all stored, in order, none waited' '
	results_job "$TMP/results.yaml" && mark &&
	ID=$(LABD_URL=$URL_hA labctl submit -q "$TMP/results.yaml") &&
	wait_for "LABD_URL=$URL_hA labctl show $ID --json | grep -q \"\\\"health\\\": *\\\"complete\\\"\"" 60 &&
	curl -sf "$URL_hA/api/v1/jobs/$ID/results" | $PY -c "
import json,sys
for r in json.load(sys.stdin):
    if r[\"suite\"] != \"lava\": print(r[\"name\"])" | grep -v "^many$" >"$TMP/names" &&
	results_names >"$TMP/want" && diff -u "$TMP/want" "$TMP/names" &&
	[ "$(pg_sql "SELECT count(DISTINCT id) FROM results WHERE job_id = $ID AND suite <> \$\$lava\$\$")" -ge 240 ] &&
	waits && no_wait
'

write_job "$TMP/burst.yaml" <<JOB
job_name: "@NAME@"
device_type: sim-uboot
timeouts: {job: {minutes: 2}}
actions:
$(sim_minimal_boot)
JOB

# multi_submit N: N jobs (multi-0 ...) in one LAVA system.multicall through
# host A, both of LAVA's submit methods; "multi-i ID" printed for each, a fault
# (a call that found no id left) fails
multi_submit() { $PY - "$URL_hA" "$1" "$TMP/burst.yaml" <<'PY'
import sys, xmlrpc.client
p = xmlrpc.client.ServerProxy(sys.argv[1] + "/RPC2", allow_none=True)
text = open(sys.argv[3]).read()
m = xmlrpc.client.MultiCall(p)
for i in range(int(sys.argv[2])):
    submit = m.scheduler.submit_job if i % 2 else m.scheduler.jobs.submit
    submit(text.replace("@NAME@", "multi-%d" % i))
for i, job in enumerate(m()):
    print("multi-%d %d" % (i, job))
PY
}

# boards_aside: both hosts' boards in maintenance, so that the jobs stay queued
boards_aside() {
	local b u
	for b in a-01 b-01; do
		u=$URL_hA; [ $b = b-01 ] && u=$URL_hB
		curl -sf -X POST -d "{\"state\":\"maintenance\",\"reason\":\"t8017\"}" \
			"$u/api/v1/devices/$b/state" >/dev/null || return
	done
}
# ids_each_once NAME N: $TMP/NAME.out ("NAME-k id" per submission) has N distinct
# ids, and the database holds exactly those jobs, each under its name
ids_each_once() {
	[ "$(awk '{print $2}' "$TMP/$1.out" | sort -u | wc -l)" = "$2" ] &&
	sort -k2n "$TMP/$1.out" | awk '{print $1 ":" $2}' >"$TMP/$1.want" &&
	pg_sql "SELECT name || \$\$:\$\$ || id FROM jobs WHERE name LIKE \$\$$1-%\$\$ ORDER BY id" \
		>"$TMP/$1.db" &&
	diff -u "$TMP/$1.want" "$TMP/$1.db"
}

test_expect_success 'a system.multicall of 40 submissions, 4 ids ahead: each held until its id came, none waited' '
	boards_aside &&
	mark && multi_submit 40 >"$TMP/multi.out" && cat "$TMP/multi.out" &&
	ids_each_once multi 40 &&
	tail -c +$(($(cat "$TMP/hA.mark") + 1)) "$TMP/hA/labd.log" |
		grep -c "no id of jobs_id_seq left ahead: a request held" &&
	waits && no_wait
'

test_expect_success '300 jobs at once through both hosts: each queued once, its own id, none waited' '
	boards_aside &&
	mark && $PY "$TOP/tests/helper/submit-burst.py" --stop "$(cat "$TMP/hA.pid"),$(cat "$TMP/hB.pid")" \
		300 "$TMP/burst.yaml" "$URL_hA" "$URL_hB" >"$TMP/burst.out" &&
	ids_each_once burst 300 &&
	waits && no_wait
'
# how many requests the burst outran the ids fetched ahead with (a figure, not a check)
echo "# requests held until a refill was in: hA $(grep -c "left ahead" "$TMP/hA/labd.log")," \
	"hB $(grep -c "left ahead" "$TMP/hB/labd.log")"

test_done
