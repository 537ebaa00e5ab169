#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8019-pg-http-catch-up.sh -- the http results backend on a PostgreSQL
# store reads what it did not hear from the store without waiting in
# labd's loop (`labd -v -v` logs each read that does: "store: waited N us
# for the database to ..."), and delivers every event of a job once, in
# order:
#  - labd SIGKILLed while a job runs and streams, restarted: the job's
#    stream is behind (its events since the last record on disk wait in the
#    store), the backend reads them back;
#  - a job queued through another host (this host never heard its first
#    events) runs here: its log grows before this host has its stream, the
#    backend reads the job, then its events.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/backend-lib.sh"

pg_require 'the http backend catching up on PostgreSQL'

recorder_start rec
pg_host_lab h1 a 1
cat >>"$TMP/h1/labd.conf" <<CONF
backends = (
	{ type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; batch_ms = 100;
	  retry_max_ms = 1000; }
);
CONF
pg_host_lab h2 b 1
pg_ticks_job "$TMP/ticks.yaml" 20	# 10 s
ticks() { grep -c '^tick-[0-9]*.$' "$TMP/h1/state/jobs/$1/console.log" 2>/dev/null || echo 0; }
state() { pg_sql "SELECT state || ':' || COALESCE(host, '') FROM jobs WHERE id = $1"; }

# events_in_order ID: the job's events reached the receiver once each (replays
# identical), seq 1 .. N with none missing, as many as the store has
events_in_order() {
	curl -sf "$URL_h1/api/v1/jobs/$1/events" | $PY -c '
import json, sys
seqs = [e["seq"] for e in json.load(sys.stdin)]
if seqs != list(range(1, len(seqs) + 1)):
    sys.exit("the store numbers the events %s" % seqs)
print(json.dumps(seqs))' >"$TMP/seqs-$1" &&
	events_delivered "$TMP/rec.jsonl" "$1" "$TMP/seqs-$1"
}
# mark: h1's log so far is not the next case's; no_wait: since the mark, no
# read of a job or of its events waited in h1's loop
mark() { wc -c <"$TMP/h1/labd.log" >"$TMP/mark"; }
no_wait() {
	if tail -c +$(($(cat "$TMP/mark") + 1)) "$TMP/h1/labd.log" |
		grep -E "store: waited .* to (read a job|list events)"
	then false; fi
}

pg_host_start h1 -v -v	# debug: logs each read that waits for the database

test_expect_success 'a job runs and streams its console' '
	ID=$(LABD_URL=$URL_h1 labctl submit -q "$TMP/ticks.yaml") && echo "$ID" >"$TMP/id" &&
	wait_for "[ \$(ticks $ID) -ge 2 ]" 60
'
ID=$(cat "$TMP/id" 2>/dev/null)

# at the top level: URL_h1 changes
kill -9 "$(cat "$TMP/h1.pid")" && wait_for "! kill -0 $(cat "$TMP/h1.pid")" 10
mark
pg_host_start h1 -v -v

test_expect_success 'labd killed and restarted: the job'"'"'s events caught up, nothing waited' '
	wait_for "state $ID | grep -q ^finished:" 90 &&
	wait_delivered rec "$ID" 30 && events_in_order "$ID" && no_wait
'

pg_host_start h2
curl -sf -X POST -d "{\"state\": \"maintenance\", \"reason\": \"t8019\"}" \
	"$URL_h2/api/v1/devices/b-01/state" >/dev/null

test_expect_success 'a job queued through the other host runs here: streamed, nothing waited' '
	mark && ID2=$(LABD_URL=$URL_h2 labctl submit -q "$TMP/ticks.yaml") &&
	wait_for "state $ID2 | grep -q ^finished:h1" 90 &&
	wait_delivered rec "$ID2" 30 && events_in_order "$ID2" && no_wait
'

test_done
