#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8016-pg-post-reads.sh -- the API's requests that read before they act,
# on a PostgreSQL store: a cancel (of a queued and of a running job, also
# through LAVA's REST and XML-RPC APIs), LAVA's XML-RPC calls that read, a
# reservation asked for, granted, renewed, canceled and released, a held
# board's boot; and a queued job canceled by its queue timeout, which reads
# the job first too; a reload (SIGHUP) that adds a board and changes one,
# which read what the store keeps of them.  None of their reads waits for
# the database in labd's loop (`labd -v -v` logs each one that does: "store:
# waited N us for the database to ..."), and each request still has its
# effect, once.  A LAVA system.multicall that reads a job after canceling it
# reads it canceled, and waits for nothing either.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'the POST requests that read, on PostgreSQL'

sim_start 2	# sim1: a board a reload adds
write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"h1\"; host_lease = 30; timeout = 20; };"
sim_device sim-01 0
pg_ticks_job "$TMP/ticks.yaml" 200	# 100 s: canceled long before its end
cat >"$TMP/boot.yaml" <<JOB
job_name: a holder's boot
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
JOB

labd_start -v -v	# debug: logs each read that waits for the database

# mark: the log so far is not the next request's; waits: keep the reads that
# waited for the database since the mark; no_wait: none was kept (else they
# are printed)
mark() { wc -c <"$LAB/labd.log" >"$TMP/mark"; }
waits() {
	tail -c +$(($(cat "$TMP/mark") + 1)) "$LAB/labd.log" | grep "store: waited" >>"$TMP/waited"
	true
}
no_wait() {
	if [ -s "$TMP/waited" ]; then
		cat "$TMP/waited"; rm "$TMP/waited"; false
	fi
}
post() { curl -s -o "$TMP/out.json" -w "%{http_code}" -X POST "$LABD_URL$@"; }
field() { $PY -c "import json,sys; print(json.load(open(sys.argv[1]))$1)" "$TMP/out.json"; }
job_is() { labctl show "$1" --json >"$TMP/job.json" && $PY -c "
import json,sys; j = json.load(open(sys.argv[1]))
sys.exit(not (j['state'] == sys.argv[2] and j['health'] == sys.argv[3]))" \
	"$TMP/job.json" "$2" "$3"; }
# rpc METHOD ARGS...: a LAVA XML-RPC call, its answer printed
rpc() { $PY - "$LABD_URL/RPC2" "$@" <<'PY'
import sys, xmlrpc.client
p = xmlrpc.client.ServerProxy(sys.argv[1], allow_none=True)
print(getattr(p, sys.argv[2])(*sys.argv[3:]))
PY
}

test_expect_success 'a job runs, three more wait in the queue' '
	RUN=$(labctl submit -q "$TMP/ticks.yaml") &&
	wait_for "job_is $RUN running unknown" 60 &&
	Q1=$(labctl submit -q "$TMP/ticks.yaml") && Q2=$(labctl submit -q "$TMP/ticks.yaml") &&
	Q3=$(labctl submit -q "$TMP/ticks.yaml") &&
	echo "$RUN $Q1 $Q2 $Q3" >"$TMP/ids" && job_is "$Q1" queued unknown
'
read -r RUN Q1 Q2 Q3 <"$TMP/ids"

test_expect_success 'a queued job canceled: canceled, nothing waited' '
	mark && [ "$(post /api/v1/jobs/$Q1/cancel)" = 200 ] && waits &&
	[ "$(field "[\"state\"]")" = finished ] && job_is "$Q1" finished canceled && no_wait
'

test_expect_success 'LAVA XML-RPC reads a job and cancels one: nothing waited' '
	mark && rpc scheduler.jobs.show "$Q2" >"$TMP/show" && waits &&
	grep -q "Submitted" "$TMP/show" &&
	mark && rpc scheduler.job_health "$Q2" >"$TMP/health" && waits &&
	grep -q "Unknown" "$TMP/health" &&
	mark && [ "$(rpc scheduler.jobs.cancel "$Q2")" = True ] && waits &&
	job_is "$Q2" finished canceled && no_wait
'

test_expect_success 'LAVA REST cancels a queued job: nothing waited' '
	mark && [ "$(post /api/v0.2/jobs/$Q3/cancel/)" = 200 ] && waits &&
	job_is "$Q3" finished canceled && no_wait
'

test_expect_success 'the running job canceled: it ends canceled, nothing waited' '
	mark && [ "$(post /api/v1/jobs/$RUN/cancel)" = 200 ] && waits &&
	case "$(field "[\"state\"]")" in canceling|finished) ;; *) false;; esac &&
	wait_for "job_is $RUN finished canceled" 60 && no_wait
'

test_expect_success 'a reservation asked for and granted: nothing waited' '
	mark && [ "$(post /api/v1/reservations -d "{\"board\": \"sim-01\"}")" = 201 ] &&
	waits && RES=$(field "[\"id\"]") && echo "$RES" >"$TMP/res" &&
	wait_for "labctl reservations --format json | grep -q \"\\\"active\\\"\"" 60 &&
	mark && [ "$(post /api/v1/devices/sim-01/renew -d "{\"duration\": 7200}")" = 200 ] &&
	waits && [ "$(field "[\"state\"]")" = active ] && no_wait
'
RES=$(cat "$TMP/res")

test_expect_success 'a held board booted: the boot runs, nothing waited' '
	$PY -c "import json,sys; print(json.dumps({\"job\": open(sys.argv[1]).read()}))" \
		"$TMP/boot.yaml" >"$TMP/boot.json" &&
	mark && [ "$(post /api/v1/devices/sim-01/boot --data-binary @$TMP/boot.json)" = 201 ] &&
	waits && BOOT=$(field "[\"id\"]") && wait_for "job_is $BOOT finished complete" 90 &&
	no_wait
'

test_expect_success 'a waiting reservation canceled, then the hold released: nothing waited' '
	mark && [ "$(post /api/v1/reservations -d "{\"device_type\": \"sim-uboot\"}")" = 201 ] &&
	waits && [ "$(field "[\"state\"]")" = waiting ] && WAIT=$(field "[\"id\"]") &&
	mark && [ "$(post /api/v1/reservations/$WAIT/cancel)" = 200 ] && waits &&
	[ "$(field "[\"state\"]")" = ended ] &&
	mark && [ "$(post /api/v1/devices/sim-01/release)" = 200 ] && waits &&
	[ "$(field "[\"state\"]")" = ended ] && [ "$(field "[\"id\"]")" = "$RES" ] && no_wait
'

test_expect_success 'an active reservation canceled by its id: ended, nothing waited' '
	wait_for "labctl devices --format json | grep -q \"\\\"idle\\\"\"" 60 &&
	[ "$(post /api/v1/reservations -d "{\"board\": \"sim-01\"}")" = 201 ] &&
	RES=$(field "[\"id\"]") &&
	wait_for "labctl reservations --format json | grep -q \"\\\"active\\\"\"" 60 &&
	mark && [ "$(post /api/v1/reservations/$RES/cancel)" = 200 ] && waits &&
	[ "$(field "[\"state\"]")" = ended ] && no_wait
'

# events KIND ID: how many events of KIND job ID has
events() { curl -sf "$LABD_URL/api/v1/jobs/$2/events" | $PY -c "
import json,sys; print(sum(e['kind'] == sys.argv[1] for e in json.load(sys.stdin)))" "$1"; }

test_expect_success 'each request acted once, though its handler ran again' '
	for id in $RUN $Q1 $Q2 $Q3; do [ "$(events cancel $id)" = 1 ] || return; done &&
	[ "$(events finished $Q1)" = 1 ] &&
	[ "$(curl -sf "$LABD_URL/api/v1/jobs" | $PY -c "import json,sys; print(len(json.load(sys.stdin)))")" = 5 ] &&
	[ "$(curl -sf "$LABD_URL/api/v1/reservations?all=1" | $PY -c "import json,sys; print(len(json.load(sys.stdin)))")" = 3 ]
'

test_expect_success 'a queued job whose queue timeout ran out: canceled once, nothing waited' '
	sed "s/^timeouts: {/&queue: {seconds: 2}, /" "$TMP/ticks.yaml" >"$TMP/queue-timeout.yaml" &&
	RUN2=$(labctl submit -q "$TMP/ticks.yaml") && echo "$RUN2" >"$TMP/run2" &&
	wait_for "job_is $RUN2 running unknown" 60 &&
	mark && QT=$(labctl submit -q "$TMP/queue-timeout.yaml") &&
	wait_for "job_is $QT finished canceled" 30 && waits &&
	grep -q "job $QT: still queued when its queue timeout" "$LAB/labd.log" &&
	[ "$(events cancel $QT)" = 1 ] && [ "$(events finished $QT)" = 1 ] && no_wait &&
	[ "$(post /api/v1/jobs/$RUN2/cancel)" = 200 ]
'
RUN2=$(cat "$TMP/run2" 2>/dev/null)

# device_state NAME: the board's state as the API gives it
device_state() { curl -sf "$LABD_URL/api/v1/devices" | $PY -c "
import json,sys; print([d['state'] for d in json.load(sys.stdin) if d['name'] == sys.argv[1]][0])" "$1"; }

test_expect_success 'a reload adds a board and changes one: its state kept, nothing waited' '
	wait_for "job_is $RUN2 finished canceled" 60 &&
	[ "$(post /api/v1/devices/sim-01/state -d "{\"state\": \"maintenance\", \"reason\": \"t8016\"}")" = 200 ] &&
	sim_device sim-01 0 sim-uboot "description = \"changed\";" &&
	sim_device sim-02 1 &&
	mark && kill -HUP "$LABD_PID" &&
	wait_for "tail -c +\$((\$(cat $TMP/mark) + 1)) $LAB/labd.log | grep -q reloaded:" 30 &&
	waits && grep -q "board .sim-01. changed" "$LAB/labd.log" &&
	[ "$(device_state sim-01)" = maintenance ] && [ -n "$(device_state sim-02)" ] && no_wait
'

# multi ID: a LAVA system.multicall reading job ID, canceling it, reading it
# again, submitting a job, reading ID once more: each answer on a line
multi() { $PY - "$LABD_URL/RPC2" "$1" "$TMP/ticks.yaml" <<'PY'
import sys, xmlrpc.client
p = xmlrpc.client.ServerProxy(sys.argv[1], allow_none=True)
job = int(sys.argv[2])
m = xmlrpc.client.MultiCall(p)
m.scheduler.job_state(job)
m.scheduler.jobs.cancel(job)
m.scheduler.job_health(job)
m.scheduler.jobs.submit(open(sys.argv[3]).read())
m.scheduler.job_state(job)
for r in m():
    print(r)
PY
}

test_expect_success 'a LAVA system.multicall reads after its writes: what they wrote, nothing waited' '
	[ "$(post /api/v1/devices/sim-02/state -d "{\"state\": \"maintenance\", \"reason\": \"t8016\"}")" = 200 ] &&
	QM=$(labctl submit -q "$TMP/ticks.yaml") && job_is "$QM" queued unknown &&
	mark && multi "$QM" >"$TMP/multi" && waits && cat "$TMP/multi" &&
	[ "$(sed -n 1p "$TMP/multi")" = "{'"'"'job_id'"'"': $QM, '"'"'job_state'"'"': '"'"'Submitted'"'"'}" ] &&
	[ "$(sed -n 2p "$TMP/multi")" = True ] &&
	[ "$(sed -n 3p "$TMP/multi")" = "{'"'"'job_id'"'"': $QM, '"'"'job_health'"'"': '"'"'Canceled'"'"'}" ] &&
	NEW=$(sed -n 4p "$TMP/multi") && job_is "$NEW" queued unknown &&
	[ "$(sed -n 5p "$TMP/multi")" = "{'"'"'job_id'"'"': $QM, '"'"'job_state'"'"': '"'"'Finished'"'"'}" ] &&
	[ "$(events cancel $QM)" = 1 ] && [ "$(events queued $NEW)" = 1 ] && no_wait
'

test_done
