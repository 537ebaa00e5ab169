#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8015-pg-slow.sh -- a PostgreSQL store that stops answering (its server
# SIGSTOPped for a few seconds) stalls nothing in labd's loop: a running
# job's console keeps being logged at its pace, GET /health answers at once,
# a job list asked meanwhile is answered once the database is back (the
# request waits suspended, not the loop), so does a cancel of a queued job
# (a POST that reads the job first), the job ends complete; its JUnit
# report, KCIDB document and LAVA notify callback (what KernelCI reads) are
# built from the database's answers, not by reads that wait in the loop; so
# are the callbacks an older labd spooled without their body, once labd is
# restarted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/backend-lib.sh"

pg_require 'a slow PostgreSQL store'

# pg_signal SIG: the signal to the test's PostgreSQL server and its backends.
pg_signal() {
	local pm
	pm=$(head -1 "$PG_DIR/data/postmaster.pid")
	kill "-$1" $(ps -o pid= --ppid "$pm") "$pm"
}
at_exit 'pg_signal CONT 2>/dev/null'

sim_start 1
write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"h1\"; host_lease = 30; timeout = 20; };"
sim_device sim-01 0
cat >>"$LAB/labd.conf" <<CONF
backends = (
	{ type = "junit"; dir = "$TMP/junit"; },
	{ type = "kcidb"; url = "http://127.0.0.1:1/submit"; origin = "test_lab"; poll = false; }
);
CONF
CB_TOKEN=cb-token-$$-$RANDOM
echo "notify = { tokens = { kernelci-callback = \"$CB_TOKEN\"; }; };" >>"$LAB/labd.conf"
recorder_start cb
pg_ticks_job "$TMP/ticks.yaml" 40	# 20 s: it ends after the stop
# the running job: with KernelCI's callback (its body has the job's log and
# results), and one of the minimal dataset (the job's fields only)
{ cat "$TMP/ticks.yaml"; cat <<JOB; } >"$TMP/ticks-cb.yaml"
metadata: {api_config_name: staging, storage_config_name: staging-azure}
notify:
  criteria: {status: finished}
  callbacks:
  - url: http://127.0.0.1:$REC_PORT_cb/node/6543?job={ID}
    method: POST
    token: kernelci-callback
    dataset: all
    content-type: json
  - url: http://127.0.0.1:$REC_PORT_cb/minimal/6544
    method: POST
    dataset: minimal
    content-type: json
JOB
ticks() { grep -c '^tick-[0-9]*.$' "$LAB/state/jobs/$ID/console.log" 2>/dev/null || echo 0; }

labd_start -v -v	# debug: logs each read that waits for the database
test_expect_success 'a job runs on the board of a host on PostgreSQL' '
	ID=$(labctl submit -q "$TMP/ticks-cb.yaml") && echo "$ID" >"$TMP/id" &&
	wait_for "[ \$(ticks) -ge 2 ]" 60
'
ID=$(cat "$TMP/id" 2>/dev/null)

test_expect_success 'the database stopped: the console goes on, /health answers at once' '
	Q=$(labctl submit -q "$TMP/ticks.yaml") || return	# queued behind the running job
	pg_signal STOP || return
	before=$(ticks) slowest=0
	curl -s -m 30 -o "$TMP/list.json" -w "%{http_code}" "$LABD_URL/api/v1/jobs" >"$TMP/list.code" &
	list=$!
	curl -s -m 30 -o "$TMP/cancel.json" -w "%{http_code}" -X POST \
		"$LABD_URL/api/v1/jobs/$Q/cancel" >"$TMP/cancel.code" &
	cancel=$!
	for i in $(seq 1 10); do
		t=$(curl -sf -m 2 -o /dev/null -w "%{time_total}" "$LABD_URL/api/v1/health") || {
			echo "no /health answer in 2 s while the database is stopped"
			tail -20 "$LAB/labd.log"; pg_signal CONT; false; return; }
		slowest=$(echo "$t $slowest" | awk "{ print (\$1 > \$2) ? \$1 : \$2 }")
		sleep 0.5
	done
	after=$(ticks)
	echo "ticks while stopped: $before -> $after; slowest /health: $slowest s"
	kill -0 $list && kill -0 $cancel	# they wait for the database, suspended
	pg_signal CONT
	wait $list $cancel
	[ "$(cat "$TMP/list.code")" = 200 ] && [ "$(cat "$TMP/cancel.code")" = 200 ] &&
	$PY -c "import json,sys; j = json.load(open(sys.argv[1])); assert j[\"health\"] == \"canceled\", j" \
		"$TMP/cancel.json" &&
	$PY -c "import json,sys; j = json.load(open(sys.argv[1])); assert $ID in [x[\"id\"] for x in j], j" \
		"$TMP/list.json" &&
	[ $((after - before)) -ge 6 ] &&
	awk "BEGIN { exit !($slowest < 0.5) }"
'

test_expect_success 'the database back: the job ends complete, every tick logged' '
	wait_for "labctl show $ID | grep -q \"state: *finished\"" 90 &&
	labctl show $ID | grep -q "health: *complete" &&
	[ "$(ticks)" = 40 ]
'

test_expect_success 'the job'"'"'s JUnit report and KCIDB document: built without waiting in the loop' '
	wait_for "[ -s $TMP/junit/job-$ID.xml ] && [ -s $LAB/state/jobs/$ID/kcidb.json ]" 30
	grep -q "tick" "$TMP/junit/job-$ID.xml"
	grep -q "\"test_lab:" "$LAB/state/jobs/$ID/kcidb.json"
	# the report reads a job, its results and its events: none of them waited
	if grep -E "store: waited .* to (list results|list events)" "$LAB/labd.log"; then false; fi
'

# minimal_body PATH: the callback to PATH has the job's fields, and no results nor log
minimal_body() {
	$PY - "$TMP/cb.jsonl" "$1" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
reqs = [r for r in reqs if r["path"] == sys.argv[2]]
assert len(reqs) == 1, "%d requests for %s" % (len(reqs), sys.argv[2])
body = json.loads(reqs[0]["body"])
assert body["status_string"] == "complete", body
assert "results" not in body and "log" not in body, sorted(body)
PY
}

test_expect_success 'the job'"'"'s notify callback: what KernelCI reads, built without waiting in the loop' '
	wait_for "grep -q /node/6543 $TMP/cb.jsonl" 30 &&
	$PY "$TOP/tests/ci/kernelci-callback.py" "$TMP/cb.jsonl" "/node/6543?job=$ID" \
		"$CB_TOKEN" >"$TMP/kernelci.out" &&
	cat "$TMP/kernelci.out" &&
	grep -q "lava: .*\"0_ticks\": \"pass\"" "$TMP/kernelci.out" &&
	grep -q "tick-40" "$TMP/cb.jsonl" &&
	wait_for "grep -q /minimal/6544 $TMP/cb.jsonl" 30 && minimal_body /minimal/6544 &&
	# the callback reads its job, results and events: none of them waited
	if grep -E "store: waited .* to (read a job|list results|list events)" "$LAB/labd.log"
	then false; fi
'

# the spool of an older labd: callbacks without their body (read as they are sent)
old_spool() {
	rm -f "$LAB/state/spool/notify/"*.seg "$LAB/state/spool/notify/ack" &&
	$PY - "$LAB/state/spool/notify/0000000000000000.seg" "$ID" "$REC_PORT_cb" <<'PY'
import hashlib, json, struct, sys
path, job, port = sys.argv[1], int(sys.argv[2]), sys.argv[3]
url = "http://127.0.0.1:%s/node/%%d?job={ID}" % port
recs = [{"job": job, "url": url % 7001, "method": "POST", "token": "kernelci-callback",
         "header": "Authorization", "dataset": "all", "json": True},
        {"job": job, "url": url % 7002, "method": "GET", "header": "Authorization",
         "dataset": "minimal", "json": False},
        {"job": job, "url": url % 7003, "method": "POST", "header": "Authorization",
         "dataset": "minimal", "json": True}]
with open(path, "wb") as f:
    for r in recs:
        payload = json.dumps(r).encode()
        n = struct.pack("<I", len(payload))
        f.write(b"LSR1" + n + hashlib.sha256(n + payload).digest()[:8] + payload)
PY
}

test_expect_success 'callbacks an older labd spooled without their body: sent whole, nothing waited' '
	labd_stop && old_spool && wc -c <"$LAB/labd.log" >"$TMP/mark" &&
	labd_restart -v -v &&
	wait_for "grep -q /node/7001 $TMP/cb.jsonl && grep -q /node/7002 $TMP/cb.jsonl" 30 &&
	$PY "$TOP/tests/ci/kernelci-callback.py" "$TMP/cb.jsonl" "/node/7001?job=$ID" \
		"$CB_TOKEN" >"$TMP/kernelci-old.out" &&
	grep -q "lava: .*\"0_ticks\": \"pass\"" "$TMP/kernelci-old.out" &&
	grep -q "\"GET\".*/node/7002?job=$ID\"" "$TMP/cb.jsonl" &&
	wait_for "grep -q /node/7003 $TMP/cb.jsonl" 30 && minimal_body "/node/7003?job=$ID" &&
	# their bodies read the job, its results and events: none of them waited
	if tail -c +$(($(cat "$TMP/mark") + 1)) "$LAB/labd.log" |
		grep -E "store: waited .* to (read a job|list results|list events)"
	then false; fi
'

test_done
