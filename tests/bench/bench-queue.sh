#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-queue.sh -- costs that must not grow with the queue or the history
# (issue 14): 64 simulated boards, the queue filled to 0, 10k, 50k and 100k
# jobs, and then 1M finished jobs in the store.
#
# At each depth, with the boards in maintenance (nothing runs): the submit
# rate of one keep-alive client and labd's CPU per submit (3 batches,
# medians); then the boards idle again: labd's CPU per finished job (3
# windows of one job per board, median).  Targets: the rate within 2x of the
# empty queue's, the CPU per finished job within 1.5x.  The rate is wall
# time on a machine shared with other work; labd's CPU per submit, printed
# beside it, is the steadier figure.  Then labd's peak RSS
# (target under 128 MiB), the time to restart it with the queue full and
# 1M finished jobs written into its store (tests/helper/store-fill), and the
# p50/p99 latency of the job list's first and last pages (cursor paging),
# of a filtered page and of /health, on that store.
#
# BENCH_QUEUE_DEPTHS, BENCH_QUEUE_BOARDS, BENCH_QUEUE_BATCH (submits per
# batch), BENCH_QUEUE_HISTORY (finished jobs) scale it down.
. "$(dirname "$0")/../lib.sh"

DEPTHS=${BENCH_QUEUE_DEPTHS:-"0 10000 50000 100000"}
BOARDS=${BENCH_QUEUE_BOARDS:-64}
BATCH=${BENCH_QUEUE_BATCH:-1000}
HISTORY=${BENCH_QUEUE_HISTORY:-1000000}
CLIENT="$PY $TOP/tests/bench/queue-client.py"

clk=$(getconf CLK_TCK)
cpu_s() { awk -v t="$clk" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss_mb() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
say_fig() { echo "bench-queue: $*"; }

write_job "$TMP/job.yaml" <<'JOB'
job_name: bench-queue
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
JOB

sim_start "$BOARDS" --mode no-uboot
write_lab_conf
names=()
for i in $(seq 0 $((BOARDS - 1))); do
	names+=("$(printf 'sim-%03d' "$i")")
	sim_device "${names[-1]}" "$i"
done
labd_start
wait_for "[ \$(curl -sf $LABD_URL/api/v1/devices | $PY -c 'import json,sys; print(sum(d[\"state\"] == \"idle\" for d in json.load(sys.stdin)))') -eq $BOARDS ]" 60 ||
	{ echo "bench-queue: the boards did not come up"; exit 1; }

submitted=0
client() { $CLIENT "$LABD_URL" "$@"; }

# fill N: N more jobs, two clients at once, untimed
fill() {
	local n=$1 half=$(($1 / 2))
	[ "$n" -gt 0 ] || return 0
	client submit "$TMP/job.yaml" "$half" >/dev/null &
	client submit "$TMP/job.yaml" $((n - half)) >/dev/null || exit 1
	wait $! || exit 1
	submitted=$((submitted + n))
}

declare -A rate cpu_submit cpu_job
for depth in $DEPTHS; do
	client states maintenance "${names[@]}"
	client wait-idle 120 || exit 1
	queued=$(curl -sf "$LABD_URL/api/v1/health" | $PY -c 'import json,sys; print(json.load(sys.stdin)["queued"])')
	fill $((depth > queued ? depth - queued : 0))
	rates=() cpus=()
	for b in 1 2 3; do
		c0=$(cpu_s "$LABD_PID")
		t=$(client submit "$TMP/job.yaml" "$BATCH") || exit 1
		c1=$(cpu_s "$LABD_PID")
		submitted=$((submitted + BATCH))
		rates+=("$(calc "$BATCH / $t" 0)")
		cpus+=("$(calc "($c1 - $c0) / $BATCH * 1000" 3)")
	done
	rate[$depth]=$(printf '%s\n' "${rates[@]}" | median)
	cpu_submit[$depth]=$(printf '%s\n' "${cpus[@]}" | median)
	# the boards take jobs from the head of the queue: CPU per finished job
	done0=$(curl -sf "$LABD_URL/api/v1/health" | $PY -c "import json,sys; h=json.load(sys.stdin); print($submitted - h['queued'] - h['running'])")
	client states idle "${names[@]}"
	per=()
	for w in 1 2 3; do
		c0=$(cpu_s "$LABD_PID")
		client wait-done "$submitted" $((done0 + w * BOARDS)) 300 || exit 1
		c1=$(cpu_s "$LABD_PID")
		per+=("$(calc "($c1 - $c0) / $BOARDS" 4)")
	done
	cpu_job[$depth]=$(printf '%s\n' "${per[@]}" | median)
	say_fig "$(printf '%6d queued: submit %5d jobs/s (labd %.3f ms CPU per submit), labd %.4f CPU-s per finished job' \
		"$depth" "${rate[$depth]}" "${cpu_submit[$depth]}" "${cpu_job[$depth]}")"
done
client states maintenance "${names[@]}"
client wait-idle 120 || exit 1
first=${DEPTHS%% *}
for depth in $DEPTHS; do
	[ "$depth" = "$first" ] && continue
	say_fig "$(printf 'at %d queued vs %d: submit rate %.2fx (target >= 0.5; labd CPU per submit %.2fx), CPU per finished job %.2fx (target <= 1.5)' \
		"$depth" "$first" "$(calc "${rate[$depth]} / ${rate[$first]}" 3)" \
		"$(calc "${cpu_submit[$depth]} / ${cpu_submit[$first]}" 3)" \
		"$(calc "${cpu_job[$depth]} / ${cpu_job[$first]}" 3)")"
done
queued=$(curl -sf "$LABD_URL/api/v1/health" | $PY -c 'import json,sys; print(json.load(sys.stdin)["queued"])')
say_fig "labd peak RSS $(rss_mb "$LABD_PID") MB with $queued jobs queued (target < 128 MiB)"

# --- 1M finished jobs in the store, then restarts and pages ---
labd_stop
fill_out=$("$BUILD/tests/helper/store-fill" "$LAB/state" "$HISTORY" finished sim-uboot "$BOARDS") ||
	{ echo "bench-queue: store-fill failed"; exit 1; }
say_fig "store-fill: $fill_out; database $(du -m "$LAB/state/labd.db" | cut -f1) MB"
starts=()
for i in 1 2 3; do
	t0=$(date +%s.%N)
	labd_restart || exit 1
	t1=$(date +%s.%N)
	starts+=("$(calc "$t1 - $t0" 3)")
	[ "$i" = 3 ] || labd_stop
done
say_fig "$(printf 'restart with %d queued and %d finished jobs: %.2f s to answer /health (median of 3)' \
	"$queued" "$HISTORY" "$(printf '%s\n' "${starts[@]}" | median)")"
for page in "first:/api/v1/jobs?limit=100" "last:/api/v1/jobs?before=101&limit=100" \
	    "queued, first:/api/v1/jobs?state=queued&limit=100" \
	    "one board, first:/api/v1/jobs?device=sim-000&limit=100" "health:/api/v1/health"; do
	read -r p50 p99 < <(client latency "${page#*:}" 200) || exit 1
	say_fig "$(printf '%-18s p50 %6.2f ms, p99 %6.2f ms  (%s)' "${page%%:*}" "$p50" "$p99" "${page#*:}")"
done
say_fig "labd peak RSS after the restart $(rss_mb "$LABD_PID") MB"
labd_stop
kill "$SIM_PID"
