#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-scale.sh -- one labd process driving many boards: CPU and memory per
# job on simulated boards at 115200 baud, against the peers' figures measured
# on the same kind of machine (shared/notes/peer-measurements.md: a minimal
# boot + 2 commands on a fake pty board costs LAVA's lava-run 0.55 CPU-s and
# 112 MB RSS, labgrid 0.56 CPU-s and 35 MB, per job and per process).
#
# Runs: 1 board x 5 jobs in a row (median per job), then N boards (default
# 64 and 256) each running one job at the same time in one labd.
. "$(dirname "$0")/../lib.sh"

SIZES=${BENCH_SCALE_SIZES:-"64 256"}
LAVA_CPU=0.55 LAVA_RSS=112 LABGRID_CPU=0.56 LABGRID_RSS=35

clk=$(getconf CLK_TCK)
# cpu_s PID: user+system CPU seconds of the process itself (not its children)
cpu_s() { awk -v t="$clk" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss_mb() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

job_file() {
	write_job "$1" <<'JOB'
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
      - {command: 'uname -a', name: uname, successes: [{message: 'Linux sim'}]}
      - {command: 'cat /proc/version', name: version, successes: [{message: 'Linux version'}]}
JOB
}

# lab N: N simulated boards (no U-Boot: a minimal boot, as the peers' fake board) and labd.
lab() {
	local n=$1 i
	LAB=$TMP/lab-$n
	sim_start "$n" --mode no-uboot
	write_lab_conf
	for i in $(seq 0 $((n - 1))); do
		sim_device "$(printf 'sim-%03d' "$i")" "$i"
	done
	labd_start
}

wait_all_finished() {
	local want=$1
	wait_for "[ \$(curl -sf '$LABD_URL/api/v1/jobs?state=finished&limit=1000' | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))') -ge $want ]" 600
}

job_file "$TMP/job.yaml"

# --- one board, jobs in a row ---
lab 1
cpus=() walls=()
for i in 1 2 3 4 5; do
	c0=$(cpu_s "$LABD_PID"); t0=$(date +%s.%N)
	labctl submit --follow -q "$TMP/job.yaml" >/dev/null || { echo "bench-scale: job failed"; exit 1; }
	t1=$(date +%s.%N); c1=$(cpu_s "$LABD_PID")
	cpus+=("$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')")
	walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
done
cpu=$(printf '%s\n' "${cpus[@]}" | median)
wall=$(printf '%s\n' "${walls[@]}" | median)
rss=$(rss_mb "$LABD_PID")
echo "bench-scale: 1 board, 5 jobs: median wall $wall s, labd CPU $cpu s per job, labd peak RSS $rss MB"
awk -v c="$cpu" -v r="$rss" -v lc=$LAVA_CPU -v lr=$LAVA_RSS -v gc=$LABGRID_CPU -v gr=$LABGRID_RSS 'BEGIN {
	printf "bench-scale: CPU per job vs LAVA lava-run %.0fx less, vs labgrid %.0fx less\n", lc / c, gc / c
	printf "bench-scale: RSS vs LAVA (one process per job) %.1fx less, vs labgrid %.1fx less\n", lr / r, gr / r }'
labd_stop; kill "$SIM_PID"

# --- many boards at once, one labd ---
for n in $SIZES; do
	lab "$n"
	idle0=$(cpu_s "$LABD_PID"); sleep 5; idle1=$(cpu_s "$LABD_PID")
	c0=$(cpu_s "$LABD_PID"); t0=$(date +%s.%N)
	for i in $(seq "$n"); do labctl submit -q "$TMP/job.yaml" >/dev/null; done
	wait_all_finished "$n" || { echo "bench-scale: $n jobs did not finish"; exit 1; }
	t1=$(date +%s.%N); c1=$(cpu_s "$LABD_PID")
	ok=$(curl -sf "$LABD_URL/api/v1/jobs?state=finished&limit=1000" |
	     $PY -c 'import json,sys; print(sum(1 for j in json.load(sys.stdin) if j["health"] == "complete"))')
	awk -v n="$n" -v ok="$ok" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v i0="$idle0" -v i1="$idle1" \
	    -v r="$(rss_mb "$LABD_PID")" 'BEGIN {
		printf "bench-scale: %d boards, %d jobs at once: %d complete in %.1f s wall; labd CPU %.2f s (%.3f s per job), peak RSS %s MB (%.2f MB per board); idle CPU %.1f%% of a core\n",
			n, n, ok, b - a, c1 - c0, (c1 - c0) / n, r, r / n, (i1 - i0) / 5 * 100 }'
	labd_stop; kill "$SIM_PID"
done
