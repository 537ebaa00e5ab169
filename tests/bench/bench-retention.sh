#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-retention.sh -- a BENCH_LOG_MB (default 50) MiB console log compressed with
# zstd: by labd inside its loop once the job ended (a frame per step) while a client
# asks labd for a job every 10 ms (the loop's answer latency, idle and during the
# compression: consoles are served by the same loop), then by `labd gc` alone;
# the compression ratio, the time, and GET /log's rate plain and compressed.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/session-lib.sh"

MB=${BENCH_LOG_MB:-50}
AUTH="Authorization: Bearer $(token_of gitlab)"

sim_lab 1
add_users
grep -v "^retention = " "$LAB/labd.conf" >"$TMP/base.conf"
{ cat "$TMP/base.conf"; echo "retention = { compress_level = 3; };"; } >"$LAB/labd.conf"
labd_start

write_job "$TMP/queued.yaml" <<'JOB'
job_name: a big log
device_type: sim-uboot
timeouts:
  job: {minutes: 1}
actions:
- boot:
    method: minimal
    prompts: ['root@sim:~# ']
JOB
api_as boss POST /devices/sim-01/state -d '{"state": "maintenance"}' >/dev/null

# ended_job: a finished job with the generated log moved in at once; prints its id
ended_job() {
	local id
	id=$(as gitlab submit -q "$TMP/queued.yaml") && as gitlab cancel "$id" >/dev/null &&
	mkdir -p "$LAB/state/jobs/$id" && cp "$TMP/gen"/* "$LAB/state/jobs/$id/" &&
	sync "$LAB/state/jobs/$id"/* && echo "$id"	# written long ago, as a job's log is
}

# latency ID SECONDS|until-gone: GET /jobs/ID every 10 ms; prints "p50 p99 max n" (ms)
# and, until-gone, the seconds from the compressed file's start to the original's end
latency() {
	$PY - "$LABD_URL/api/v1/jobs/$1" "$AUTH" "$2" "$LAB/state/jobs/$1/console.log" <<'PY'
import glob, os, sys, time, urllib.request
url, auth, until, path = sys.argv[1:]
h = dict([auth.split(": ", 1)])
t, end, began = [], time.time() + (float(until) if until != "until-gone" else 600), None
while time.time() < end and (until != "until-gone" or os.path.exists(path)):
    t0 = time.time()
    urllib.request.urlopen(urllib.request.Request(url, headers=h)).read()
    t.append((time.time() - t0) * 1000)
    if began is None and glob.glob(path + ".zst.tmp.*"):
        began = t0
    time.sleep(0.01)
t.sort()
print("%.1f %.1f %.1f %d %.2f" % (t[len(t) // 2], t[int(len(t) * 0.99)], t[-1], len(t),
                                  time.time() - began if began else 0))
PY
}

# rate ID: GET /jobs/ID/log's MB/s
rate() {
	curl -s -H "$AUTH" -o /dev/null -w "%{size_download} %{time_total}\n" \
		"$LABD_URL/api/v1/jobs/$1/log" | awk '{ printf "%.0f", $1 / 1048576 / $2 }'
}

$PY "$TOP/tests/helper/big-log.py" "$TMP/gen" "$MB"
size=$(stat -c %s "$TMP/gen/console.log")
idle=$(as gitlab submit -q "$TMP/queued.yaml") && as gitlab cancel "$idle" >/dev/null || exit 1
read -r i50 i99 imax _ < <(latency "$idle" 2)
id=$(ended_job) || exit 1
plain_rate=$(rate "$id")
read -r c50 c99 cmax n secs < <(latency "$id" until-gone) || exit 1
zsize=$(stat -c %s "$LAB/state/jobs/$id/console.log.zst") || exit 1
zrate=$(rate "$id")
zstd -dc "$LAB/state/jobs/$id/console.log.zst" | cmp -s - "$TMP/gen/console.log" ||
	{ echo "# the compressed log is not the log"; exit 1; }

labd_stop
cp "$TMP/gen"/* "$LAB/state/jobs/$id/" && rm -f "$LAB/state/jobs/$id"/*.zst
g0=$(date +%s.%N)
"$LABD" -c "$LAB/labd.conf" gc >"$TMP/gc.out" || exit 1
g1=$(date +%s.%N)

awk -v s="$size" -v z="$zsize" -v secs="$secs" -v g0="$g0" -v g1="$g1" -v mb="$MB" 'BEGIN {
	printf "retention: %d MiB console log -> %.2f MiB with zstd -3: ratio %.1fx\n", mb, z / 1048576, s / z
	printf "retention: console.log compressed inside labd'"'"'s loop (2 ms of work per loop turn, the API answering): %.2f s (%.0f MB/s)\n", secs, secs ? mb / secs : 0
	printf "retention: labd gc (the three files, alone): %.1f s\n", g1 - g0
}'
echo "retention: labd's answer latency (GET /jobs/N every 10 ms): idle p50 $i50 ms p99 $i99 ms max $imax ms; while compressing p50 $c50 ms p99 $c99 ms max $cmax ms ($n requests)"
echo "retention: GET /jobs/N/log: $plain_rate MB/s plain, $zrate MB/s compressed (decompressed as sent)"
