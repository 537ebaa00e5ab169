#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-dashboard.sh -- what the dashboard costs labd: 256 boards each running a job, once
# with nobody watching and once with ten dashboard pages open (each page: one event stream
# and one followed job log, what a job page holds; plus the board list it loads), labd's CPU
# compared; then GET /metrics latency on 2048 idle boards (median and worst of 20).
. "$(dirname "$0")/../lib.sh"

BOARDS=${BENCH_DASHBOARD_BOARDS:-256}
METRICS_BOARDS=${BENCH_METRICS_BOARDS:-2048}
PAGES=10
clk=$(getconf CLK_TCK)
cpu_s() { awk -v t="$clk" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }

write_job "$TMP/job.yaml" <<'JOB'
job_name: bench
device_type: sim-uboot
timeouts: {job: {minutes: 10}, connection: {minutes: 5}}
actions:
- boot:
    method: minimal
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: t
      prompts: ['root@sim:~# ']
      script:
      - {command: 'dmesg', name: dmesg}
      - {command: 'sleep 3; uname -a', name: uname, successes: [{message: 'Linux sim'}]}
JOB

lab() {
	local n=$1 i
	LAB=$TMP/lab-$n-$2
	sim_start "$n" --mode no-uboot
	write_lab_conf
	for i in $(seq 0 $((n - 1))); do sim_device "$(printf 'sim-%04d' "$i")" "$i"; done
	labd_start
}

# run_round WATCHERS: labd CPU seconds for $BOARDS jobs at once, with WATCHERS pages open
run_round() {
	local watchers=$1 pids=() i c0 c1 first
	lab "$BOARDS" "$watchers"
	first=$(( $(curl -s "$LABD_URL/api/v1/jobs?limit=1" | $PY -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["id"] if d else 0)') + 1 ))
	for i in $(seq "$watchers"); do
		curl -sN "$LABD_URL/api/v1/stream" >/dev/null &
		pids+=($!)
		curl -s "$LABD_URL/api/v1/devices?recent=20" >/dev/null
	done
	c0=$(cpu_s "$LABD_PID")
	for i in $(seq "$BOARDS"); do labctl submit -q "$TMP/job.yaml" >/dev/null; done
	for i in $(seq "$watchers"); do	# each page follows one running job's log
		curl -sN "$LABD_URL/api/v1/jobs/$((first + i))/log?follow=1" >/dev/null &
		pids+=($!)
	done
	wait_for "[ \$(curl -sf '$LABD_URL/api/v1/jobs?state=finished&limit=1000' | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))') -ge $BOARDS ]" 600 ||
		{ echo "bench-dashboard: jobs did not finish"; exit 1; }
	c1=$(cpu_s "$LABD_PID")
	kill "${pids[@]}" 2>/dev/null
	labd_stop; kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null
	awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }'
}

if [ "$BOARDS" -gt 0 ]; then	# BENCH_DASHBOARD_BOARDS=0: only the /metrics figures
	base=$(run_round 0)
	watched=$(run_round "$PAGES")
	awk -v b="$base" -v w="$watched" -v n="$BOARDS" -v p="$PAGES" 'BEGIN {
		printf "bench-dashboard: %d boards running jobs: labd CPU %.2f s alone, %.2f s with %d pages open: +%.1f%%\n",
			n, b, w, p, (w - b) / b * 100 }'
fi

lab "$METRICS_BOARDS" metrics
times=()
c0=$(cpu_s "$LABD_PID")
for i in $(seq 20); do times+=("$(curl -s -o /dev/null -w '%{time_total}' "$LABD_URL/metrics")"); done
c1=$(cpu_s "$LABD_PID")
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$METRICS_BOARDS" -v c="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print (b - a) / 20 }')" \
    -v ld="$(cut -d" " -f1-3 /proc/loadavg)" '{ a[NR] = $1 } END {
	printf "bench-dashboard: GET /metrics on %d boards: median %.1f ms, worst %.1f ms, labd CPU %.1f ms per request (load average %s)\n",
		n, a[int((NR + 1) / 2)] * 1000, a[NR] * 1000, c * 1000, ld }'
echo "bench-dashboard: /metrics size $(curl -s "$LABD_URL/metrics" | wc -c) bytes"
