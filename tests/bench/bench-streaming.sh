#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-streaming.sh -- live log streaming through the http backend at lab scale:
# BENCH_BOARDS simulated boards (default 256, one simboard process) at 115200
# baud each run a job that logs in and runs `stream BENCH_SECONDS` (default 20),
# which prints "SIMSTREAM <board> <seq> <realtime ns>" lines, stamped when the
# simulator writes them.  The recorder stamps each batch when it has it whole.
#
# Figures: end-to-end latency of SIMSTREAM lines, console byte written by the
# board -> batch received by the HTTP receiver (p50, p99, max), and labd's CPU
# time (utime + stime) for the same jobs with the backend and without it.
# The backend has its default settings (64 KiB batches, 500 ms, 4 requests in
# flight); BENCH_HTTP='batch_bytes = 1048576; max_in_flight = 1;' (keys of
# its group) tries others.  Also checks that every job's log items arrived in
# order.  Prints figures; asserts nothing about them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/backend-lib.sh"

N=${BENCH_BOARDS:-256}
SECS=${BENCH_SECONDS:-20}
HTTP_OPTS=${BENCH_HTTP:-}

sim_start "$N"
write_lab_conf
{
	echo "devices = ("
	for i in $(seq 0 $((N - 1))); do
		[ "$i" -gt 0 ] && echo ","
		cat <<CONF
	{ name = "sim-$i"; type = "sim-uboot"; tags = [ "sim" ];
	  console = { driver = "pty"; path = "$LAB/sim/sim$i.pty"; };
	  power = { driver = "command"; on = "$SIMBOARD ctl $LAB/sim power sim$i on";
		    off = "$SIMBOARD ctl $LAB/sim power sim$i off"; timeout = 30; }; }
CONF
	done
	echo ");"
} >"$LAB/devices/10-boards.conf"
cp "$LAB/labd.conf" "$TMP/plain.conf"
recorder_start rec

write_job "$TMP/stream.yaml" <<JOB
job_name: stream
device_type: sim-uboot
timeouts: {job: {minutes: 10}, action: {minutes: 5}, connection: {minutes: 4}}
actions:
- boot:
    method: minimal
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: stream
      prompts: ['root@sim:~# ']
      script:
      - command: stream $SECS
JOB

cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# run_load CONF: labd on CONF, N jobs at once; prints labd's CPU seconds for them.
run_load() {
	local i t0 t1 ids=()
	cp "$1" "$LAB/labd.conf"
	labd_start
	t0=$(cpu_ticks "$LABD_PID")
	for i in $(seq "$N"); do
		ids+=("$(submit "$TMP/stream.yaml")")
	done
	for i in "${ids[@]}"; do
		wait_job "$i" $((SECS + 300)) || { echo "streaming: job $i did not finish" >&2; return 1; }
	done
	sleep 2
	t1=$(cpu_ticks "$LABD_PID")
	labd_stop
	rm -rf "$LAB/state"
	echo "$(( t1 - t0 )) $(getconf CLK_TCK)" | awk '{ printf "%.2f\n", $1 / $2 }'
}

cpu_plain=$(run_load "$TMP/plain.conf") || exit 1
cp "$TMP/plain.conf" "$TMP/http.conf"
cat >>"$TMP/http.conf" <<CONF
backends = ( { type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; token = "bench";
	       $HTTP_OPTS } );
CONF
cpu_http=$(run_load "$TMP/http.conf") || exit 1

$PY - "$TMP/rec.jsonl" "$N" "$SECS" "$cpu_plain" "$cpu_http" <<'PY'
import json, sys
path, n, secs, cpu_plain, cpu_http = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    float(sys.argv[4]), float(sys.argv[5])
carry, lat, nbytes, batches, last, disorder = {}, [], 0, 0, {}, 0
for line in open(path):
    r = json.loads(line)
    if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
        continue
    batches += 1
    nbytes += len(r["body"])
    for it in json.loads(r["body"])["items"]:
        if it["type"] != "log":
            continue
        if it["seq"] <= last.get(it["job"], 0):
            continue    # a replay
        disorder += it["seq"] != last.get(it["job"], 0) + 1
        last[it["job"]] = it["seq"]
        text = carry.get(it["job"], "") + it["text"]
        lines = text.split("\n")
        carry[it["job"]] = lines.pop()
        for l in lines:
            f = l.split()
            if len(f) == 4 and f[0] == "SIMSTREAM":
                lat.append((r["t"] - int(f[3])) / 1e6)
lat.sort()
def pct(p):
    return lat[min(len(lat) - 1, int(len(lat) * p / 100))] if lat else float("nan")
print("streaming: %d boards at 115200 baud for %s s: %d lines, %d batches, %.1f MB received"
      % (n, secs, len(lat), batches, nbytes / 1e6))
print("streaming: latency console -> receiver: p50 %.0f ms, p99 %.0f ms, max %.0f ms (target p99 < 1000 ms)"
      % (pct(50), pct(99), lat[-1] if lat else float("nan")))
print("streaming: %d jobs, log items out of order: %d" % (len(last), disorder))
print("streaming: labd CPU: %.2f s without backend, %.2f s with http backend: +%.0f%% (target < 20%%)"
      % (cpu_plain, cpu_http, (cpu_http / cpu_plain - 1) * 100 if cpu_plain else float("nan")))
# log items lost, repeated out of place or reordered: the backend broke its order
sys.exit("streaming: log items out of order" if disorder or not lat else 0)
PY
