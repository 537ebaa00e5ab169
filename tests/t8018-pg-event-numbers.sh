#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8018-pg-event-numbers.sh -- the numbers of job events on a PostgreSQL
# store never wait for the database in labd's loop (`labd -v -v` logs each
# wait: "store: waited N us for the database to number an event"), and are
# the numbers the events table has, dense and in order, as the listeners
# (GET /stream) heard them:
#  - two jobs whose ids are 1024 apart running on one host at once (the
#    numbers of the jobs a host runs are kept until they end, whatever other
#    job is noted meanwhile);
#  - a job's event that the host has no number for (a results backend's
#    error about a job that ended before labd restarted): held while the job
#    is read, not waited for, then numbered from that read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/backend-lib.sh"

pg_require 'the numbers of job events on PostgreSQL'

recorder_start rec
pg_host_lab h1 a 2
cat >>"$TMP/h1/labd.conf" <<CONF
backends = ( { type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; token = "t";
	       batch_ms = 100; retry_max_ms = 500; } );
CONF
pg_host_lab h2 b 1
pg_ticks_job "$TMP/long.yaml" 200	# 100 s: canceled long before its end
pg_ticks_job "$TMP/mid.yaml" 30
pg_ticks_job "$TMP/short.yaml" 2

# stream_start: GET /stream of h1, what its listeners hear, into $TMP/stream.txt
stream_start() {
	local n
	n=$(grep -c "^retry:" "$TMP/stream.txt" 2>/dev/null)
	curl -sN "$URL_h1/api/v1/stream" >>"$TMP/stream.txt" 2>/dev/null &
	at_exit "kill $! 2>/dev/null"
	wait_for "[ \$(grep -c ^retry: $TMP/stream.txt) -gt ${n:-0} ]" 10	# connected
}
state() { pg_sql "SELECT state || ':' || COALESCE(host, '') FROM jobs WHERE id = $1"; }
finished() { state "$1" | grep -q "^finished:"; }
# kinds JOB KIND: how many events KIND job JOB has in the events table
kinds() { pg_sql "SELECT count(*) FROM events WHERE job_id = $1 AND kind = '$2'"; }
# heard JOB KIND: GET /stream of h1 gave event KIND of job JOB
heard() { grep -q "\"job\":$1,.*\"kind\":\"$2\"" "$TMP/stream.txt"; }
# no_number_wait: h1 never waited in its loop to number an event (and -v -v is on)
no_number_wait() {
	grep -q "debug: " "$TMP/h1/labd.log" &&
	if grep "store: waited .* to number an event" "$TMP/h1/labd.log"; then
		false
	fi
}
# dense IDS...: each job's events numbered 1..n, in the order they were added
dense() {
	local id
	for id in "$@"; do
		pg_sql "SELECT string_agg(seq::text, ' ' ORDER BY ts, seq),
			string_agg(n::text, ' ' ORDER BY ts, seq) FROM (SELECT seq, ts,
			row_number() OVER (ORDER BY seq) AS n FROM events WHERE job_id = $id) e" \
			>"$TMP/dense.txt"
		echo "job $id: $(cat "$TMP/dense.txt")"
		$PY -c 'import sys; a, b = open(sys.argv[1]).read().strip().split("|")
sys.exit(not a or a != b)' "$TMP/dense.txt" || return 1
	done
}
# heard_as_stored IDS...: every event of those jobs GET /stream of h1 gave
# has, in the events table, the number the stream gave it
heard_as_stored() {
	local ids
	ids=$(echo "$@" | tr " " ",")
	pg_sql "SELECT job_id || ' ' || seq || ' ' || kind FROM events WHERE job_id IN ($ids)" \
		>"$TMP/stored.txt"
	$PY - "$TMP/stream.txt" "$TMP/stored.txt" "$@" <<'PY'
import json, sys
stored = set(open(sys.argv[2]).read().split("\n")) - {""}
jobs = {int(i) for i in sys.argv[3:]}
heard = set()
for line in open(sys.argv[1]):
    if line.startswith("data: {") and '"seq"' in line:
        ev = json.loads(line[6:])
        if ev.get("job") in jobs:
            heard.add("%d %d %s" % (ev["job"], ev["seq"], ev["kind"]))
print("heard:", len(heard), "not stored so:", sorted(heard - stored))
sys.exit(not heard or not heard <= stored)
PY
}

pg_host_start h1 -v -v	# logs each wait for the database in its loop
stream_start

# Job A runs on h1; h2 starts with the ids from A + 1024 on (fetched ahead
# at its start), its board in maintenance: job B, submitted through h2, runs
# on h1's other board.
A=$(LABD_URL=$URL_h1 labctl submit -q "$TMP/long.yaml")
wait_for "[ \"\$(state $A)\" = running:h1 ]" 60
pg_sql "SELECT setval('jobs_id_seq', $((A + 1023)))" >/dev/null
pg_host_start h2
curl -sf -X POST -d '{"state":"maintenance","reason":"t8018"}' \
	"$URL_h2/api/v1/devices/b-01/state" >/dev/null

test_expect_success 'two jobs 1024 ids apart run on one host: no wait to number their events' '
	b=$(LABD_URL=$URL_h2 labctl submit -q "$TMP/mid.yaml") && [ "$b" = $((A + 1024)) ] &&
	wait_for "[ \"\$(state $b)\" = running:h1 ]" 60 &&
	[ "$(state $A)" = running:h1 ] &&
	LABD_URL=$URL_h1 labctl cancel "$A" &&
	wait_for "finished $b" 120 && wait_for "finished $A" 60 &&
	pg_sql "SELECT job_id, seq, kind FROM events WHERE job_id IN ($A, $b) ORDER BY job_id, seq" &&
	no_number_wait &&
	dense "$A" "$b" &&
	wait_for "heard $A finished && heard $b finished" 10 &&
	heard_as_stored "$A" "$b"
'

# Job C ends while the receiver of h1's results backend is away; labd
# restarts; the receiver refuses the job's items: the "backend-error" event
# is of a job h1 has no number for.
recorder_stop rec
C=$(LABD_URL=$URL_h1 labctl submit -q "$TMP/short.yaml")
wait_for "finished $C" 120
wait_for "heard $C finished" 10
kill "$(cat "$TMP/h1.pid")"
wait_for "! kill -0 $(cat "$TMP/h1.pid")" 30
pg_host_start h1 -v -v
stream_start
recorder_mode rec 404
recorder_start rec

test_expect_success 'an event of a job that ended before a restart: numbered from a read, no wait' '
	wait_for "[ \$(kinds $C backend-error) -ge 1 ]" 60 &&
	pg_sql "SELECT seq, kind FROM events WHERE job_id = $C ORDER BY seq" &&
	no_number_wait &&
	dense "$C" &&
	wait_for "heard $C backend-error" 10 &&
	heard_as_stored "$C"
'

test_done
