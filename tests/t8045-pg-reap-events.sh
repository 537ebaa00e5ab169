#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8045-pg-reap-events.sh -- the events of the jobs of a host that stopped
# (SIGKILLed mid-job), written by the host that reaps it: a job requeued
# gets "attempt-ended" and "requeued" after its last event, numbered 1..n
# without a gap, runs again elsewhere and finishes once; a job requeued so
# once already gets "attempt-ended" and "finished" (incomplete,
# infrastructure), announced by the host that reaped only: its JUnit report
# is written there, its notify callback sent once, the events stream of the
# job through that host has its end; the hosts started again announce
# nothing of it.  Every host's http backend streams to one receiver: the
# host that reaps sends only the events of the reaped jobs the receiver had
# not acknowledged through the stopped host (the lab keeps how far each
# job went), and none of the run that follows on another host; nothing is
# lost, and none of the reads this takes waited.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/backend-lib.sh"

pg_require 'the events of the jobs of a reaped host'

recorder_start cb
recorder_start ev
# host_lab NAME PREFIX N: pg_host_lab with a JUnit backend of its own, and
# an http backend streaming to the receiver ev, the same for every host
host_lab() {
	pg_host_lab "$1" "$2" "$3"
	cat >>"$LAB/labd.conf" <<CONF
backends = ( { type = "junit"; dir = "$TMP/$1/junit"; },
	{ type = "http"; url = "http://127.0.0.1:$REC_PORT_ev/ingest"; batch_ms = 100;
	  retry_max_ms = 1000; } );
CONF
}
host_lab hA a 2
host_lab hB b 1
host_lab hC c 1
pg_host_start hA -v -v	# debug: logs each read that waits for the database
pg_host_start hB -v -v
pg_host_start hC -v -v

# ticks_job FILE N: pg_ticks_job with KernelCI's notify callback to the receiver cb
ticks_job() {
	pg_ticks_job "$1" "$2"
	cat >>"$1" <<JOB
notify:
  criteria: {status: finished}
  callback: {url: 'http://127.0.0.1:$REC_PORT_cb/cb/{ID}', method: POST, content-type: json,
             dataset: all}
JOB
}
ticks_job "$TMP/ticks.yaml" 40
ticks_job "$TMP/short.yaml" 2
set_state() {
	curl -sf -X POST -d "{\"state\":\"$3\"}" "$1/api/v1/devices/$2/state" >/dev/null
}
ticks() { grep -c '^tick-[0-9]*.$' "$TMP/$1/state/jobs/$2/console.log" 2>/dev/null || echo 0; }
job_row() {
	pg_sql "SELECT state || ' ' || health || ' ' || COALESCE(device, '-') || ' ' || attempt FROM jobs WHERE id = $1"
}
# kinds ID: the job's events that tell its attempts, in order
kinds() {
	pg_sql "SELECT string_agg(kind, ' ' ORDER BY seq) FROM events WHERE job_id = $1
		AND kind IN ('queued', 'started', 'attempt-ended', 'requeued', 'finished')"
}
# dense ID: its events are numbered 1..n
dense() {
	[ "$(pg_sql "SELECT min(seq) = 1 AND max(seq) = count(*) FROM events WHERE job_id = $1")" = t ]
}
# callbacks ID: the notify callbacks the receiver got for the job
callbacks() {
	$PY - "$TMP/cb.jsonl" "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    n += r["path"] == "/cb/" + sys.argv[2] and r["method"] == "POST"
print(n)
PY
}
# health ID: the health its callback (the last) gave
health() {
	$PY - "$TMP/cb.jsonl" "$1" <<'PY'
import json, sys
h = "none"
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["path"] == "/cb/" + sys.argv[2] and r["method"] == "POST":
        h = json.loads(r["body"])["health_string"].lower()
print(h)
PY
}
# acked [MARK] ID: the last event of job ID the receiver ev took (200), in
# its first MARK requests (all when not given)
acked() {
	$PY - "$TMP/ev.jsonl" "${2:+$1}" "${2:-$1}" <<'PY'
import json, sys
path, mark, job = sys.argv[1], sys.argv[2], int(sys.argv[3])
last = 0
for i, line in enumerate(open(path)):
    if mark and i >= int(mark):
        break
    r = json.loads(line)
    if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
        continue
    for it in json.loads(r["body"]).get("items", []):
        if it.get("job") == job and it.get("type") == "event":
            last = max(last, it["seq"])
print(last)
PY
}
# delivered_pos ID: how far the lab knows the receiver took job ID's events
delivered_pos() {
	pg_sql "SELECT COALESCE(max(seq), 0) FROM deliveries WHERE job_id = $1 AND backend = \$\$http\$\$"
}
# sent_after MARK ID: the kinds and seqs of job ID's events the receiver got after
# its first MARK requests, "seq:kind" in order
sent_after() {
	$PY - "$TMP/ev.jsonl" "$1" "$2" <<'PY'
import json, sys
path, mark, job = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = []
for i, line in enumerate(open(path)):
    r = json.loads(line)
    if i < mark or r["method"] != "POST" or "body" not in r:
        continue
    for it in json.loads(r["body"]).get("items", []):
        if it.get("job") == job and it.get("type") == "event":
            out.append("%d:%s" % (it["seq"], it["kind"]))
print(" ".join(out))
PY
}
# all_delivered ID: every event the store has of job ID reached the receiver (copies identical)
all_delivered() {
	pg_sql "SELECT json_agg(seq ORDER BY seq) FROM events WHERE job_id = $1" >"$TMP/seqs-$1" &&
	events_delivered "$TMP/ev.jsonl" "$1" "$TMP/seqs-$1"
}
# no_wait: no read or write of the backends' positions, nor a list of events, waited
no_wait() {
	if cat "$TMP"/h?/labd.log | grep -E "store: waited .* to (read a delivery|note a delivery|list events)"
	then false; fi
}
# reports ID: the JUnit reports written of the job, by any host
reports() { cat "$TMP"/h?/labd.log | grep -c "job $1: JUnit report in" || true; }

test_expect_success 'two jobs run on host hA' '
	set_state "$URL_hB" b-01 maintenance && set_state "$URL_hC" c-01 maintenance &&
	X=$(LABD_URL=$URL_hA labctl submit -q "$TMP/ticks.yaml") &&
	Y=$(LABD_URL=$URL_hA labctl submit -q "$TMP/ticks.yaml") &&
	echo "$X $Y" >"$TMP/ids" &&
	wait_for "[ \$(ticks hA $X) -ge 2 ] && [ \$(ticks hA $Y) -ge 2 ]" 60
'
read -r X Y <"$TMP/ids"

test_expect_success 'the receiver took the jobs'"'"' first events from hA: the lab knows how far' '
	wait_for "[ \$(acked $X) -ge 2 ] && [ \$(acked $Y) -ge 2 ]" 30 &&
	wait_for "[ \$(delivered_pos $X) = \$(acked $X) ] && [ \$(delivered_pos $Y) = \$(acked $Y) ]" 10 &&
	echo "acknowledged through hA: job $X $(acked $X), job $Y $(acked $Y)"
'

test_expect_success 'hA killed: each job gets attempt-ended and requeued, numbered on, and runs again' '
	set_state "$URL_hB" b-01 idle && set_state "$URL_hC" c-01 idle &&
	wc -l <"$TMP/ev.jsonl" >"$TMP/ev.mark" &&
	kill -9 "$(cat "$TMP/hA.pid")" &&
	again="queued started attempt-ended requeued started" &&
	wait_for "job_row $X | grep -q \"^running unknown [bc]-01 2\$\" &&
		  job_row $Y | grep -q \"^running unknown [bc]-01 2\$\" &&
		  [ \"\$(kinds $X)\" = \"$again\" ] && [ \"\$(kinds $Y)\" = \"$again\" ]" 60 &&
	for id in $X $Y; do
		echo "job $id: $(kinds $id)"
		dense $id || return
	done &&
	pg_sql "SELECT job_id, seq, kind, data FROM events WHERE job_id IN ($X, $Y)
		AND kind IN (\$\$attempt-ended\$\$, \$\$requeued\$\$) ORDER BY job_id, seq" >"$TMP/reap-events" &&
	cat "$TMP/reap-events" &&
	[ "$(grep -c "its host hA stopped (no lease renewal)" "$TMP/reap-events")" = 4 ] &&
	[ "$(grep attempt-ended "$TMP/reap-events" | grep -c "\"infrastructure\"")" = 2 ]
'

test_expect_success 'the reaped jobs'"'"' events: the receiver gets the reap'"'"'s, none it took from hA' '
	M=$(cat "$TMP/ev.mark") &&
	for id in $X $Y; do
		P=$(acked "$M" $id) &&
		wait_for "sent_after $M $id | grep -q \":requeued\"" 30 &&
		echo "job $id, taken through hA up to $P, then: $(sent_after "$M" $id)" &&
		sent_after "$M" $id | grep -q ":attempt-ended" &&
		for item in $(sent_after "$M" $id); do
			[ "${item%%:*}" -gt "$P" ] || { echo "job $id: $item sent again"; return 1; }
		done || return
		# the host that reaped sends none of the events of the run that follows
		R=$(pg_sql "SELECT seq FROM events WHERE job_id = $id AND kind = \$\$requeued\$\$") &&
		twice=$(sent_after "$M" $id | tr " " "\n" | awk -F: -v r="$R" "\$1 > r" | sort | uniq -d) &&
		[ -z "$twice" ] || { echo "job $id: sent twice: $twice"; return 1; }
	done &&
	no_wait
'

# the job on hB, and the one on hC
JB=$(pg_sql "SELECT id FROM jobs WHERE id IN ($X, $Y) AND device = 'b-01'")
JC=$(pg_sql "SELECT id FROM jobs WHERE id IN ($X, $Y) AND device = 'c-01'")

# the events stream of the job on hB through hC, and its log followed through hC
if [ -n "$JB" ]; then
	curl -sN "$URL_hC/api/v1/stream?job=$JB" >"$TMP/stream-$JB" 2>/dev/null &
	at_exit "kill $! 2>/dev/null"
	LABD_URL=$URL_hC labctl log -f "$JB" >"$TMP/follow-$JB" 2>&1 &
	echo $! >"$TMP/follow.pid"
	at_exit "kill $! 2>/dev/null"
fi

test_expect_success 'hB killed: its job, requeued once already, finished incomplete by hC' '
	[ -n "$JB" ] && [ -n "$JC" ] &&
	wait_for "[ \$(ticks hB $JB) -ge 2 ]" 60 &&
	kill -9 "$(cat "$TMP/hB.pid")" &&
	wait_for "job_row $JB | grep -q \"^finished incomplete b-01 2\$\"" 60 &&
	grep -q "host(s) hB stopped renewing their lease: 0 job(s) requeued, 1 ended" \
		"$TMP/hC/labd.log" &&
	echo "job $JB: $(kinds $JB)" &&
	[ "$(kinds $JB)" = "queued started attempt-ended requeued started attempt-ended finished" ] &&
	dense $JB &&
	[ "$(pg_sql "SELECT (data::json->>\$\$health\$\$) || \$\$ \$\$ || (data::json->>\$\$error_type\$\$) ||
		\$\$ \$\$ || (data::json->>\$\$error_msg\$\$) FROM events WHERE job_id = $JB
		AND kind = \$\$finished\$\$")" = "incomplete infrastructure its host hB stopped (no lease renewal)" ]
'

test_expect_success 'its end is announced by hC: JUnit report, one callback, the end in its events stream' '
	wait_for "[ -s $TMP/hC/junit/job-$JB.xml ] && [ \$(callbacks $JB) -ge 1 ]" 30 &&
	wait_for "grep -q \"\\\"kind\\\": *\\\"finished\\\"\" $TMP/stream-$JB" 10 &&
	grep "\"kind\": *\"finished\"" "$TMP/stream-$JB" &&
	wait_for "! kill -0 $(cat "$TMP/follow.pid")" 30 &&	# the log followed: ended
	tail -3 "$TMP/follow-$JB" &&
	[ "$(callbacks $JB)" = 1 ] && [ "$(reports $JB)" = 1 ] && [ "$(health $JB)" = incomplete ]
'

test_expect_success 'the other job, requeued, finishes once on hC' '
	wait_for "job_row $JC | grep -q \"^finished complete c-01 2\$\"" 90 &&
	echo "job $JC: $(kinds $JC)" &&
	[ "$(kinds $JC)" = "queued started attempt-ended requeued started finished" ] &&
	dense $JC &&
	wait_for "[ \$(callbacks $JC) -ge 1 ] && [ -s $TMP/hC/junit/job-$JC.xml ]" 30 &&
	[ "$(callbacks $JC)" = 1 ] && [ "$(reports $JC)" = 1 ] && [ "$(health $JC)" = complete ]
'

test_expect_success 'hA and hB started again: their boards back, nothing announced again' '
	pg_host_start hA && pg_host_start hB &&
	wait_for "[ \"\$(pg_sql \"SELECT string_agg(state, \\\$\\\$ \\\$\\\$ ORDER BY name) FROM devices
		WHERE name IN (\\\$\\\$a-01\\\$\\\$, \\\$\\\$a-02\\\$\\\$, \\\$\\\$b-01\\\$\\\$)\")\" = \"idle idle idle\" ]" 30 &&
	Z=$(LABD_URL=$URL_hB labctl submit -q "$TMP/short.yaml") &&
	wait_for "[ \$(callbacks $Z) -ge 1 ]" 90 &&
	[ "$(callbacks $JB)" = 1 ] && [ "$(callbacks $JC)" = 1 ] &&
	[ "$(reports $JB)" = 1 ] && [ "$(reports $JC)" = 1 ] &&
	[ ! -e "$TMP/hA/junit/job-$JB.xml" ] && [ ! -e "$TMP/hB/junit/job-$JB.xml" ] &&
	[ "$(pg_sql "SELECT count(*) FROM events WHERE job_id IN ($JB, $JC) AND kind = \$\$finished\$\$")" = 2 ]
'

test_expect_success 'every event of both jobs reached the receiver, and nothing waited' '
	wait_for "delivered ev $JB && delivered ev $JC" 30 &&
	all_delivered $JB && all_delivered $JC && no_wait
'

test_done
