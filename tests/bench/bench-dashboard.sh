#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-dashboard.sh -- what the dashboard costs labd, and GET /metrics on 2048 idle boards.
#
# The dashboard: two identical labs, each one labd driving 256 simulated boards, run the
# same jobs at the same time (two per board, one after the other); ten browser tabs watch
# one lab while the other runs unwatched, and the next run swaps them.  The tabs
# (dashboard-pages.py) ask what web/app.js asks: four board grids, four job pages each
# following a running job's log live, two job lists, each with its event stream.  labd's
# own CPU (utime + stime of /proc/PID/stat) for the same jobs, watched over unwatched, is
# the overhead.  Measured side by side because a labd's CPU per job depends on the
# machine's load (on a loaded machine it does more per wakeup: a CPU burner beside an
# unwatched lab lowered its CPU by 10 %), and the other agents' load here changes from one
# run to the next; a round's two runs (each lab watched once) give the overhead as the
# geometric mean of their two ratios, which cancels any difference between the two labs.
# Median and spread of $ROUNDS rounds.
#
# /metrics: median and worst latency of 20 requests, and labd's CPU per request.
. "$(dirname "$0")/../lib.sh"

BOARDS=${BENCH_DASHBOARD_BOARDS:-256}
METRICS_BOARDS=${BENCH_METRICS_BOARDS:-2048}
ROUNDS=${BENCH_DASHBOARD_ROUNDS:-5}
JOBS=${BENCH_DASHBOARD_JOBS:-$((2 * BOARDS))}	# per run: each board runs two, one after the other
TABS=(boards boards boards boards job job job job jobs jobs)
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

CLIENT="$PY $TOP/tests/bench/queue-client.py"
TOKEN=bench-dashboard-token

# lab N NAME: N simulated boards and a labd on them, in $TMP/lab-NAME
lab() {
	local n=$1 i
	LAB=$TMP/lab-$2
	sim_start "$n" --mode no-uboot || { tail -3 "$LAB/simboard.log"; return 1; }
	# the tabs are logged in (a token, as a browser sends it); the submitters are not
	write_lab_conf "http = { tokens = [ \"sha256:$(printf %s "$TOKEN" | sha256sum | cut -c1-64)\" ]; };"
	for i in $(seq 0 $((n - 1))); do sim_device "$(printf 'sim-%04d' "$i")" "$i"; done
	labd_start || return 1
}

# submit URL: $JOBS jobs from 8 keep-alive clients (as bench-scale), then until all ended
submit() {
	submit_burst "$1" "$TMP/job.yaml" "$JOBS"
	$CLIENT "$1" wait-done "$JOBS" "$JOBS" 900 >/dev/null
}

# run WATCHED: both labs run $JOBS jobs at once, lab WATCHED (a or b) with the tabs open
# (from before its jobs to after they ended); prints "cpu_watched cpu_alone wall tabs"
run() {
	local w=$1 u pages a0 b0 a1 b1 t0 t1 pa pb
	u=$([ "$w" = a ] && echo b || echo a)
	$PY "$TOP/tests/bench/dashboard-pages.py" "${URL[$w]}" "$TOKEN" "${TABS[@]}" \
		>"$TMP/pages.out" 2>"$TMP/pages.err" &
	pages=$!
	sleep 2	# the tabs loaded their pages
	a0=$(cpu_s "${PID[$w]}"); b0=$(cpu_s "${PID[$u]}"); t0=$(date +%s.%N)
	submit "${URL[$w]}" & pa=$!
	submit "${URL[$u]}" & pb=$!
	wait "$pa" && wait "$pb" || { echo "bench-dashboard: the jobs did not end" >&2; return 1; }
	a1=$(cpu_s "${PID[$w]}"); b1=$(cpu_s "${PID[$u]}"); t1=$(date +%s.%N)
	kill "$pages"; wait "$pages" 2>/dev/null
	# a tab whose requests failed measured nothing
	grep -q ' errors=0 ' "$TMP/pages.out" ||
		{ echo "bench-dashboard: the tabs' requests failed: $(cat "$TMP/pages.out")" >&2; return 1; }
	awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v t0="$t0" -v t1="$t1" \
	    -v s="$(tr ' ' ',' <"$TMP/pages.out")" \
		'BEGIN { printf "%.3f %.3f %.1f %s\n", a1 - a0, b1 - b0, t1 - t0, s }'
}

if [ "$BOARDS" -gt 0 ]; then	# BENCH_DASHBOARD_BOARDS=0: only the /metrics figures
	declare -A URL PID SIMS
	for l in a b; do
		lab "$BOARDS" "$l" || exit 1
		URL[$l]=$LABD_URL PID[$l]=$LABD_PID SIMS[$l]=$SIM_PID
	done
	submit "${URL[a]}" & pa=$!	# warm up: first boots, the stores' first pages
	submit "${URL[b]}"; wait "$pa"
	over=()
	for r in $(seq "$ROUNDS"); do
		read -r wa ua wall1 st1 < <(run a) && read -r wb ub wall2 st2 < <(run b) &&
			[ -n "$wa" ] && [ -n "$wb" ] || { echo "bench-dashboard: a run failed"; exit 1; }
		o=$(awk -v wa="$wa" -v ua="$ua" -v wb="$wb" -v ub="$ub" \
			'BEGIN { printf "%.1f", (sqrt((wa / ub) * (wb / ua)) - 1) * 100 }')
		over+=("$o")
		printf '# round %d: labd CPU a watched %.2f s / b %.2f s (%.0f s wall), b watched %.2f s / a %.2f s (%.0f s wall): %+.1f%%; tabs: %s; %s\n' \
			"$r" "$wa" "$ua" "$wall1" "$wb" "$ub" "$wall2" "$o" "$st1" "$st2"
	done
	printf '%s\n' "${over[@]}" | sort -g | awk -v n="$BOARDS" -v j="$JOBS" -v p="${#TABS[@]}" \
	    -v ld="$(cut -d" " -f1-3 /proc/loadavg)" -v all="${over[*]}" '{ a[NR] = $1 } END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "bench-dashboard: %d boards running %d jobs, %d dashboard tabs open: labd CPU %+.1f%% (median of %d rounds, from %+.1f%% to %+.1f%%: %s; load average %s)\n",
			n, j, p, m, NR, a[1], a[NR], all, ld }'
	for l in a b; do
		LABD_PID=${PID[$l]}; labd_stop; kill "${SIMS[$l]}"; wait "${SIMS[$l]}" 2>/dev/null
	done
fi

if [ "$METRICS_BOARDS" -gt 0 ]; then	# BENCH_METRICS_BOARDS=0: only the dashboard figures
	lab "$METRICS_BOARDS" metrics || exit 1
	times=()
	c0=$(cpu_s "$LABD_PID")
	for i in $(seq 20); do times+=("$(curl -s -o /dev/null -w '%{time_total}' "$LABD_URL/metrics")"); done
	c1=$(cpu_s "$LABD_PID")
	printf '%s\n' "${times[@]}" | sort -n | awk -v n="$METRICS_BOARDS" -v c="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print (b - a) / 20 }')" \
	    -v ld="$(cut -d" " -f1-3 /proc/loadavg)" '{ a[NR] = $1 } END {
		printf "bench-dashboard: GET /metrics on %d boards: median %.1f ms, worst %.1f ms, labd CPU %.1f ms per request (load average %s)\n",
			n, a[int((NR + 1) / 2)] * 1000, a[NR] * 1000, c * 1000, ld }'
	echo "bench-dashboard: /metrics size $(curl -s "$LABD_URL/metrics" | wc -c) bytes"
fi
