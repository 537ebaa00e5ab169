#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8019-pg-http-catch-up.sh -- the http results backend on a PostgreSQL
# store catches up without waiting in labd's loop: labd SIGKILLed while a
# job runs and streams, restarted: the job's stream is behind (its events
# since the last record on disk wait in the store), the backend reads them
# back and delivers every event once, in order, and none of those reads
# waits for the database (`labd -v -v` logs each one that does: "store:
# waited N us for the database to ...").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/backend-lib.sh"

pg_require 'the http backend catching up on PostgreSQL'

sim_start 1
write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"h1\"; host_lease = 30; timeout = 20; };"
sim_device sim-01 0
recorder_start rec
cat >>"$LAB/labd.conf" <<CONF
backends = (
	{ type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; batch_ms = 100;
	  retry_max_ms = 1000; }
);
CONF
pg_ticks_job "$TMP/ticks.yaml" 20	# 10 s
ticks() { grep -c '^tick-[0-9]*.$' "$LAB/state/jobs/$1/console.log" 2>/dev/null || echo 0; }

# events_in_order ID: the job's events reached the receiver once each (replays
# identical), seq 1 .. N with none missing, as many as the store has
events_in_order() {
	curl -sf "$LABD_URL/api/v1/jobs/$1/events" >"$TMP/events.json" &&
	$PY - "$TMP/rec.jsonl" "$1" "$TMP/events.json" <<'PY'
import json, sys
path, job, stored = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
seen = {}
for line in open(path):
    r = json.loads(line)
    if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
        continue
    for it in json.loads(r["body"]).get("items", []):
        if it.get("job") != job or it.get("type") != "event":
            continue
        if it["seq"] in seen and seen[it["seq"]] != it:
            sys.exit("event %d delivered twice, differently" % it["seq"])
        seen[it["seq"]] = it
if sorted(seen) != list(range(1, len(stored) + 1)):
    sys.exit("events delivered %s, the store has %d" % (sorted(seen), len(stored)))
print("%d events delivered in order" % len(seen))
PY
}

labd_start -v -v	# debug: logs each read that waits for the database

test_expect_success 'a job runs and streams its console' '
	ID=$(labctl submit -q "$TMP/ticks.yaml") && echo "$ID" >"$TMP/id" &&
	wait_for "[ \$(ticks $ID) -ge 2 ]" 60
'
ID=$(cat "$TMP/id" 2>/dev/null)

test_expect_success 'labd killed and restarted: the job'"'"'s events caught up, nothing waited' '
	labd_kill && wc -c <"$LAB/labd.log" >"$TMP/mark" &&
	labd_restart -v -v &&
	wait_for "labctl show $ID | grep -q \"state: *finished\"" 90 &&
	wait_delivered rec "$ID" 30 && events_in_order "$ID" &&
	# the backend reads the job and its events back: none of them waited
	if tail -c +$(($(cat "$TMP/mark") + 1)) "$LAB/labd.log" |
		grep -E "store: waited .* to (read a job|list events)"
	then false; fi
'

test_done
