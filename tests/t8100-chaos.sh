#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8100-chaos.sh -- labd under everything at once: 64 simulated boards run
# jobs streaming to an HTTP backend for about three minutes while labd is
# SIGKILLed at random moments (six times), the backend is stopped and
# restarted (twice), one console vanishes and returns, a board spews garbage
# and the state directory's file system fills up and frees again (a small
# tmpfs; skipped when not root).  Then: every job finished exactly once (or
# was requeued once, with a reason), none lost, every console byte of a job
# is in its log, the API's log and the backend's; the backend got every item
# in order (replays identical); labd's RSS is back near its start.  The
# figures measured are printed (# lines).
# test-serial: tests/run runs it alone (QEMU's emulation or the chaos load take the CPUs;
# its timing must not compete with other tests)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/backend-lib.sh"

BOARDS=64
CHAOS_SECS=${CHAOS_SECS:-180}
INFLIGHT=80		# jobs kept queued or running
api=""

sim_start $BOARDS --mode no-autoboot
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$LAB/state"
	mount -t tmpfs -o size=256m labd-chaos "$LAB/state" && at_exit "umount -l '$LAB/state'"
fi
ON_TMPFS=$(mountpoint -q "$LAB/state" 2>/dev/null && echo 1)
write_lab_conf
for i in $(seq 0 $((BOARDS - 1))); do
	sim_device "$(printf 'sim-%02d' $((i + 1)))" "$i"
done
recorder_start rec
cat >>"$LAB/labd.conf" <<CONF
backends = (
	{ type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; token = "chaos";
	  batch_bytes = 16384; batch_ms = 200; retry_max_ms = 2000; max_in_flight = 2; }
);
CONF
SPEW=2000 SLEEP=5 sim_job "$TMP/job.yaml"
sim_ctl mode sim11 garbage >/dev/null	# sim-12 spews random bytes between its lines

labd_start
api=$LABD_URL/api/v1
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$(tail -n 1 "$TMP/labd.pids")/status"; }
sleep 2
RSS0=$(rss_kb)

# ---- the chaos (at the top level: recorders and labd must outlive test bodies) ----

: >"$TMP/chaos.log"
kills=0 fills=0
# note: a step of the chaos, printed as it happens (a run that times out shows how far it got)
note() { echo "$(( $(date +%s) - T0 ))s $*" | tee -a "$TMP/chaos.log" | sed 's/^/# /'; }

# The submitter keeps about $INFLIGHT jobs queued or running, whatever labd
# goes through; the ids labd answered go to $TMP/submitted.
$PY - "$api" "$TMP/job.yaml" "$TMP/submitted" "$INFLIGHT" "$TMP/submitter.stop" <<'PY' &
import json, os, sys, time, urllib.request
api, job, out, inflight, stop = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3], \
    int(sys.argv[4]), sys.argv[5]
ids = open(out, "a")
while not os.path.exists(stop):
    try:
        h = json.load(urllib.request.urlopen(api + "/health", timeout=2))
        for _ in range(max(0, inflight - h["running"] - h["queued"])):
            r = urllib.request.urlopen(urllib.request.Request(api + "/jobs", data=job,
                                       method="POST"), timeout=5)
            print(json.load(r)["id"], file=ids, flush=True)
    except (OSError, ValueError):
        pass
    time.sleep(0.5)
PY
SUBMITTER=$!
at_exit "kill $SUBMITTER 2>/dev/null"

# until SECONDS: wait until SECONDS after the start
until_t() {
	while [ $(( $(date +%s) - T0 )) -lt "$1" ]; do sleep 0.5; done
}

kill_labd() {
	labd_kill && labd_restart && kills=$((kills + 1))
	note "SIGKILL $kills of labd, restarted"
}

fill_disk() {
	if [ -z "$ON_TMPFS" ]; then
		note "disk full skipped: not root, no tmpfs for the state directory"
		return
	fi
	dd if=/dev/zero of="$LAB/state/filler" bs=1M 2>/dev/null
	fills=$((fills + 1))
	note "state file system full ($(df -k "$LAB/state" | awk 'NR==2 {print $4}') kB free)"
}

jitter() { echo $(( $1 + RANDOM % 8 )); }

T0=$(date +%s)
S=$CHAOS_SECS
until_t $(jitter $((S * 10 / 100))); kill_labd
until_t $((S * 20 / 100)); recorder_stop rec; note "backend stopped"
until_t $(jitter $((S * 25 / 100))); kill_labd
until_t $((S * 28 / 100)); sim_ctl unplug sim5 >/dev/null; note "console of sim-06 unplugged"
until_t $((S * 36 / 100)); sim_ctl plug sim5 >/dev/null; recorder_start rec
note "console of sim-06 back; backend restarted"
until_t $(jitter $((S * 42 / 100))); kill_labd
until_t $((S * 50 / 100)); fill_disk
until_t $((S * 58 / 100)); rm -f "$LAB/state/filler"; note "state file system freed"
until_t $(jitter $((S * 62 / 100))); kill_labd
until_t $((S * 70 / 100)); recorder_stop rec; note "backend stopped"
until_t $(jitter $((S * 78 / 100))); kill_labd; recorder_start rec; note "backend restarted"
until_t $(jitter $((S * 88 / 100))); kill_labd
until_t "$S"
touch "$TMP/submitter.stop"
wait $SUBMITTER
note "chaos over"

# ---- the end: everything finishes and is delivered ----

all_finished() {
	local h
	h=$(curl -sf --max-time 5 "$api/health") &&
	[ "$(echo "$h" | $PY -c 'import json,sys; d=json.load(sys.stdin); print(d["running"] + d["queued"])')" = 0 ]
}
# The budget: 180 s of chaos, at most 300 s to finish and 120 s to deliver,
# well inside tests/run's 900 s, so that a stuck job fails the cases below
# with its story printed instead of the whole script timing out.
if wait_for all_finished 300; then
	note "every job finished"
else
	note "jobs still running or queued 300 s after the chaos: $(curl -s --max-time 5 "$api/health")"
	for st in running queued; do
		curl -s --max-time 10 "$api/jobs?state=$st&limit=5" |
			$PY -c 'import json,sys; print("\n".join(str(j["id"]) for j in json.load(sys.stdin)))' 2>/dev/null |
			while read -r id; do
				echo "# $st job $id: $(curl -s --max-time 5 "$api/jobs/$id/events" | cut -c1-600)"
				grep "job $id[: ]" "$LAB/labd.log" | tail -8 | sed "s/^/# job $id: /"
			done
	done
fi
# every job of the store, page by page
$PY - "$api" >"$TMP/jobs.json" <<'PY'
import json, sys, urllib.request
jobs, before = [], ""
while True:
    page = json.load(urllib.request.urlopen("%s/jobs?limit=1000%s" % (sys.argv[1], before),
                                            timeout=30))
    jobs += page
    if len(page) < 1000:
        break
    before = "&before=%d" % page[-1]["id"]
json.dump(jobs, sys.stdout)
PY
$PY -c 'import json,sys; print("\n".join(str(j["id"]) for j in json.load(open(sys.argv[1]))))' \
	"$TMP/jobs.json" >"$TMP/store_ids"
# all_delivered: the backend accepted the "finished" event of every job
all_delivered() {
	$PY - "$TMP/rec.jsonl" "$TMP/store_ids" <<'PY'
import json, sys
want = set(int(i) for i in open(sys.argv[2]).read().split())
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
        continue
    for it in json.loads(r["body"]).get("items", []):
        if it.get("type") == "event" and it.get("kind") == "finished":
            want.discard(it.get("job"))
sys.exit(1 if want else 0)
PY
}
wait_for all_delivered 120 && note "every job's end delivered" || note "not every job's end delivered"
sleep 2
RSS1=$(rss_kb)

# ---- what it measured (at the top level, so that it is printed) ----

$PY - "$api" "$TMP/store_ids" >"$TMP/outcomes" 2>&1 <<'PY'
import json, sys, urllib.request
api, ids = sys.argv[1], open(sys.argv[2]).read().split()
counts, requeued, bad = {}, 0, []
for i in ids:
    ev = json.load(urllib.request.urlopen("%s/jobs/%s/events" % (api, i), timeout=10))
    kinds = [e["kind"] for e in ev]
    req = [e for e in ev if e["kind"] == "requeued"]
    if kinds.count("finished") != 1:
        bad.append("job %s: %d finished events: %s" % (i, kinds.count("finished"),
                   " ".join("%s@%s" % (e["kind"], e["ts"][11:19]) for e in ev)[:600]))
    if len(req) > 1 or any(not (e["data"] or {}).get("reason") for e in req):
        bad.append("job %s: requeued %d times, or without a reason" % (i, len(req)))
    requeued += len(req)
    for e in ev:
        if e["kind"] == "finished":
            h = e["data"]["health"]
            counts[h] = counts.get(h, 0) + 1
print("jobs=%d complete=%d incomplete=%d canceled=%d requeued=%d" % (len(ids),
      counts.get("complete", 0), counts.get("incomplete", 0), counts.get("canceled", 0), requeued))
for b in bad[:10]:
    print("BAD " + b)
PY
bytes=0
: >"$TMP/log_mismatch"
for id in $(cat "$TMP/store_ids"); do
	f="$LAB/state/jobs/$id/console.log"
	curl -sf --max-time 10 "$api/jobs/$id/log" >"$TMP/api.log" || echo "$id: no log from the API" >>"$TMP/log_mismatch"
	cmp -s "$TMP/api.log" "$([ -e "$f" ] && echo "$f" || echo /dev/null)" ||
		echo "$id: the API's log differs from console.log" >>"$TMP/log_mismatch"
	bytes=$((bytes + $(stat -c %s "$f" 2>/dev/null || echo 0)))
done
$PY "$STREAM_CHECK" "$TMP/rec.jsonl" "$LAB/state" >"$TMP/stream" 2>&1
STREAM_RC=$?
items=$(grep -c '"status": 200' "$TMP/rec.jsonl")

echo "# labd killed $kills times; jobs submitted and answered: $(wc -l <"$TMP/submitted")"
sed 's/^/# outcome: /' "$TMP/outcomes"
for id in $(sed -n 's/^BAD job \([0-9]*\):.*/\1/p' "$TMP/outcomes" | head -3); do
	grep "job $id[: ]" "$LAB/labd.log" | head -20 | sed "s/^/# job $id: /"
done
echo "# console bytes logged: $bytes"
echo "# backend: $(cat "$TMP/stream"); accepted requests: $items"
echo "# labd RSS: ${RSS0} kB at the start, ${RSS1} kB at the end"

test_expect_success "labd survived $kills SIGKILLs and answers" '
	[ "$kills" -ge 5 ] && curl -sf "$api/health" >/dev/null
'

test_expect_success 'no job lost: every submitted job is in the store, and every job finished' '
	n=$(wc -l <"$TMP/submitted") && [ "$n" -ge 100 ] &&
	for id in $(cat "$TMP/submitted"); do grep -qx "$id" "$TMP/store_ids" || exit 1; done &&
	$PY - "$TMP/jobs.json" <<-PY
	import json, sys
	jobs = json.load(open(sys.argv[1]))
	bad = [j["id"] for j in jobs if j["state"] != "finished"]
	if bad:
	    sys.exit("not finished: %s" % bad[:10])
	PY
'

test_expect_success 'each job finished exactly once, or was requeued once with a reason first' '
	! grep "^BAD" "$TMP/outcomes"
'

test_expect_success 'every console byte of every job is in its log and in the API log' '
	[ ! -s "$TMP/log_mismatch" ] && [ "$bytes" -gt 1000000 ] || { head "$TMP/log_mismatch"; exit 1; }
'

test_expect_success 'the backend got every item of every job, in order, replays identical' '
	[ "$STREAM_RC" = 0 ] || { cat "$TMP/stream"; exit 1; }
'

if under_asan; then
	test_skip "labd's RSS is back near its start" "AddressSanitizer's quarantine holds freed memory"
else
	test_expect_success "labd's RSS is back near its start" '
		[ "$RSS1" -lt $((RSS0 * 3 / 2 + 20000)) ]
	'
fi

if [ -n "$ON_TMPFS" ]; then
	test_expect_success 'the full file system was reported, and labd went on' '
		[ "$fills" = 1 ] && grep -qi "no space left on device\|disk is full" "$LAB/labd.log"
	'
else
	test_skip 'the full file system was reported, and labd went on' 'not root: no tmpfs for the state directory'
fi

test_done
