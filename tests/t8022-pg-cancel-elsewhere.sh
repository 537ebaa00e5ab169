#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8022-pg-cancel-elsewhere.sh -- a job running on host B canceled through
# host A (labctl, LAVA's REST and XML-RPC, alone or one call of a
# system.multicall): A forwards the cancel to B, whose run ends canceled, its
# board free again; the job ends once, its events numbered 1..n, one
# "cancel" and one "finished"; also a job B claimed between the read and the
# write of a cancel through A (a multicall's too: B's answer is that call's,
# never a True of A's while B runs the job).  B killed (or
# stopped): the cancel is a 502 naming B (a multicall's: that call's fault,
# the others answered), the job is left to the reaping (requeued), not ended
# by A.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'a cancel forwarded to the host running the job'

# host A has no board of the jobs' type: they run on B
pg_host_lab hA a 1
sed -i 's/type = "sim-uboot"/type = "sim-minimal"/' "$TMP/hA/devices/10-a-01.conf"
pg_host_lab hB b 1
pg_host_start hA
pg_host_start hB
pg_ticks_job "$TMP/ticks.yaml" 200	# 100 s: canceled long before its end

# on_b: a job submitted through A, running on B and printing its ticks; its id printed
on_b() {
	local id
	id=$(LABD_URL=$URL_hA labctl submit -q "$TMP/ticks.yaml") || return
	wait_for "[ \"\$(pg_sql \"SELECT state || host FROM jobs WHERE id = $id\")\" = runninghB ]" 60 &&
	wait_for "curl -sf $URL_hA/api/v1/jobs/$id/log | grep -q ^tick-1" 60 &&
	echo "$id"
}

# ended_on_b ID: the job ended canceled by B's run (B's log and the job's say
# so, A's do not), once, B's board idle again, its events numbered 1..n with
# one cancel and one finished, the last
ended_on_b() {
	wait_for "[ \"\$(pg_sql \"SELECT state || health FROM jobs WHERE id = $1\")\" = finishedcanceled ]" 60 &&
	wait_for "curl -sf $URL_hB/api/v1/devices/b-01 | grep -q '\"state\": *\"idle\"'" 60 &&
	grep "job $1 finished on 'b-01': canceled" "$TMP/hB/labd.log" &&
	if grep "job $1 finished" "$TMP/hA/labd.log"; then return 1; fi &&
	pg_sql "SELECT seq, kind FROM events WHERE job_id = $1 ORDER BY seq" >"$TMP/ev-$1" &&
	cat "$TMP/ev-$1" &&
	n=$(wc -l <"$TMP/ev-$1") &&
	[ "$(cut -d"|" -f1 "$TMP/ev-$1" | tr "\n" " ")" = "$(seq -s " " 1 "$n") " ] &&
	[ "$(grep -c "|cancel$" "$TMP/ev-$1")" = 1 ] &&
	[ "$(grep -c "|finished$" "$TMP/ev-$1")" = 1 ] &&
	tail -1 "$TMP/ev-$1" | grep -q "|finished$" &&
	grep "job canceled by" "$TMP/hB/state/jobs/$1/labd.log"
}

test_expect_success 'labctl cancel through host A of a job running on B: B cancels its run' '
	id=$(on_b) && echo "job $id" &&
	LABD_URL=$URL_hA labctl cancel "$id" &&
	ended_on_b "$id"
'

test_expect_success 'LAVA REST cancel through host A: forwarded to B, its answer' '
	id=$(on_b) && echo "job $id" &&
	code=$(curl -s -o "$TMP/rest.json" -w "%{http_code}" -X POST \
		"$URL_hA/api/v0.2/jobs/$id/cancel/") && cat "$TMP/rest.json" &&
	[ "$code" = 200 ] && grep -q "Job cancel signal sent" "$TMP/rest.json" &&
	ended_on_b "$id"
'

# rpc URL METHOD ARGS...: a LAVA XML-RPC call, its answer printed
rpc() { $PY - "$@" <<'PY'
import sys, xmlrpc.client
p = xmlrpc.client.ServerProxy(sys.argv[1] + "/RPC2", allow_none=True)
try:
    print(getattr(p, sys.argv[2])(*sys.argv[3:]))
except xmlrpc.client.Fault as f:
    print("fault %d: %s" % (f.faultCode, f.faultString))
PY
}
multicall() { $PY - "$@" <<'PY'
import sys, xmlrpc.client
p = xmlrpc.client.ServerProxy(sys.argv[1] + "/RPC2", allow_none=True)
m = xmlrpc.client.MultiCall(p)
m.scheduler.job_state(int(sys.argv[2]))
m.scheduler.jobs.cancel(int(sys.argv[2]))
r = m()
print(r[0])
try:
    print(r[1])
except xmlrpc.client.Fault as f:
    print("fault %d: %s" % (f.faultCode, f.faultString))
PY
}

test_expect_success 'LAVA XML-RPC cancel through host A: forwarded to B, its answer' '
	id=$(on_b) && echo "job $id" &&
	[ "$(rpc "$URL_hA" scheduler.jobs.cancel "$id")" = True ] &&
	ended_on_b "$id" &&
	[ "$(rpc "$URL_hA" scheduler.job_health "$id")" = "{'"'"'job_id'"'"': $id, '"'"'job_health'"'"': '"'"'Canceled'"'"'}" ]
'

test_expect_success 'a cancel in a system.multicall through host A: that call sent to B, its answer' '
	id=$(on_b) && echo "job $id" &&
	multicall "$URL_hA" "$id" >"$TMP/multi.txt" && cat "$TMP/multi.txt" &&
	[ "$(sed -n 1p "$TMP/multi.txt")" = "{'"'"'job_id'"'"': $id, '"'"'job_state'"'"': '"'"'Running'"'"'}" ] &&
	[ "$(sed -n 2p "$TMP/multi.txt")" = True ] &&
	ended_on_b "$id"
'

# sql_session: a psql session of the test on fd 7, its output in $TMP/sql.out
sql_session() {
	mkfifo "$TMP/sql.in" &&
	{ _pg_as "$PG_BIN/psql" -h "$PG_HOST" -p "$PG_PORT" -U labd -d labd -X -q -A -t \
		<"$TMP/sql.in" >"$TMP/sql.out" 2>&1 & } &&
	exec 7>"$TMP/sql.in"
}
# finish_waits: a job's end is being written, waiting for a row lock
finish_waits() {
	[ "$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
		AND query LIKE 'UPDATE jobs SET state = ''finished''%'")" = 1 ]
}
# claimed_by_b ID: what B's claim of job ID writes, committed by the session
claimed_by_b() {
	echo "UPDATE jobs SET state = 'running', host = 'hB', device = 'b-01', started = 1
		WHERE id = $1; COMMIT;" >&7
}
board_state() {
	curl -sf -X POST -d "{\"state\":\"$2\",\"reason\":\"t8022\"}" \
		"$URL_hB/api/v1/devices/$1/state" >/dev/null
}

# race_cancel HOW ANSWER: a job queued through A, canceled through A (HOW:
# native, rpc, or multi: a system.multicall reading its state, then
# canceling it) while the session holds its row: the cancel's write waits
# for it, and a claim by B commits first, as when B claims the job just after
# A read it queued.  B cancels it: the answer is B's (the cancel's ANSWER),
# the job ends once, its events queued, cancel, finished, 1..3.
race_cancel() {
	local id
	id=$(LABD_URL=$URL_hA labctl submit -q "$TMP/ticks.yaml") && echo "job $id" &&
	wait_for "[ \"\$(pg_sql \"SELECT count(*) FROM events WHERE job_id = $id\")\" = 1 ]" 10 &&
	rm -f "$TMP/sql.in" "$TMP/race.out" && sql_session &&
	echo "BEGIN; SELECT id FROM jobs WHERE id = $id FOR UPDATE;" >&7 &&
	wait_for "grep -qx $id $TMP/sql.out" 10 &&
	case $1 in
	native) { curl -s -o "$TMP/race.json" -w "%{http_code}" -X POST \
			"$URL_hA/api/v1/jobs/$id/cancel" >"$TMP/race.tmp" &&
		  mv "$TMP/race.tmp" "$TMP/race.out"; } & ;;
	rpc) { rpc "$URL_hA" scheduler.jobs.cancel "$id" >"$TMP/race.tmp" &&
	       mv "$TMP/race.tmp" "$TMP/race.out"; } & ;;
	multi) { multicall "$URL_hA" "$id" >"$TMP/race.tmp" &&
		 mv "$TMP/race.tmp" "$TMP/race.out"; } & ;;
	esac
	wait_for finish_waits 20 && claimed_by_b "$id" && exec 7>&- &&
	wait_for "[ -s $TMP/race.out ]" 30 && cat "$TMP/race.out" && echo &&
	[ "$(tail -n 1 "$TMP/race.out")" = "$2" ] &&
	[ "$(pg_sql "SELECT state || health FROM jobs WHERE id = $id")" = finishedcanceled ] &&
	grep "job $id: not canceled here: a host started it meanwhile" "$TMP/hA/labd.log" &&
	pg_sql "SELECT seq, kind FROM events WHERE job_id = $id ORDER BY seq" >"$TMP/ev-$id" &&
	cat "$TMP/ev-$id" &&
	[ "$(cut -d"|" -f2 "$TMP/ev-$id" | tr "\n" " ")" = "queued cancel finished " ] &&
	[ "$(cut -d"|" -f1 "$TMP/ev-$id" | tr "\n" " ")" = "1 2 3 " ]
}

test_expect_success 'a job B starts between the read and the write of a cancel through A: B cancels it' '
	board_state b-01 maintenance &&
	race_cancel native 200 &&
	race_cancel rpc True &&
	race_cancel multi True &&
	grep -q "'"'"'job_state'"'"': '"'"'Submitted'"'"'" "$TMP/race.out" &&
	board_state b-01 idle
'

test_expect_success 'B killed: a cancel through A (a multicall'"'"'s too) is a 502 naming B; the reaping requeues the job' '
	id=$(on_b) && echo "job $id" && echo "$id" >"$TMP/dead-id" &&
	kill -9 "$(cat "$TMP/hB.pid")" &&
	code=$(curl -s -o "$TMP/dead.json" -w "%{http_code}" -X POST \
		"$URL_hA/api/v1/jobs/$id/cancel") && cat "$TMP/dead.json" &&
	[ "$code" = 502 ] && grep -q "host .hB. did not answer" "$TMP/dead.json" &&
	multicall "$URL_hA" "$id" >"$TMP/dead-multi.txt" && cat "$TMP/dead-multi.txt" &&
	grep -q "^fault 502: host .hB. did not answer" "$TMP/dead-multi.txt" &&
	[ "$(pg_sql "SELECT state FROM jobs WHERE id = $id")" = running ] &&
	[ "$(pg_sql "SELECT count(*) FROM events WHERE job_id = $id AND kind = \$\$cancel\$\$")" = 0 ] &&
	wait_for "[ \"\$(pg_sql \"SELECT state FROM jobs WHERE id = $id\")\" = queued ]" 60 &&
	LABD_URL=$URL_hA labctl cancel "$id" &&
	[ "$(pg_sql "SELECT state || health FROM jobs WHERE id = $id")" = finishedcanceled ]
'

test_expect_success 'B stopped: a cancel through A (a multicall'"'"'s too) is a 502 naming B after 30 s' '
	pg_host_start hB && id=$(on_b) && echo "job $id" &&
	kill -STOP "$(cat "$TMP/hB.pid")" &&
	{ multicall "$URL_hA" "$id" >"$TMP/stopped-multi.txt" & } && mpid=$! &&
	code=$(curl -s -m 120 -o "$TMP/stopped.json" -w "%{http_code}" -X POST \
		"$URL_hA/api/v1/jobs/$id/cancel") && cat "$TMP/stopped.json" && echo &&
	wait "$mpid" && cat "$TMP/stopped-multi.txt" &&
	kill -9 "$(cat "$TMP/hB.pid")" &&
	[ "$code" = 502 ] && grep -q "host .hB. did not answer" "$TMP/stopped.json" &&
	grep -q "^{.job_id.: $id, .job_state.: .Running.}$" "$TMP/stopped-multi.txt" &&
	grep -q "^fault 502: host .hB. did not answer" "$TMP/stopped-multi.txt" &&
	[ "$(pg_sql "SELECT count(*) FROM events WHERE job_id = $id AND kind = \$\$cancel\$\$")" = 0 ]
'

test_done
