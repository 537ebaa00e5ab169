#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-multihost.sh -- several labd hosts sharing one PostgreSQL queue (of
# the bench's own, tests/pg-lib.sh): 4 hosts x 256 simulated boards, 1024
# jobs submitted through the four APIs at once (16 clients, each sending its
# next job once the last was answered: tests/helper/submit-jobs, one process,
# connected before the burst); then one host on SQLite
# driving the same 1024 boards, for comparison.  Figures: wall time from
# the first submission to the last job's end, claims per second, the
# latency from the submission (the client sending it) to the claim (the
# job's first line in its log) and to the board's power-on (the simulated
# board's own record of its power-on command; p50, p99: one clock, this
# machine's CLOCK_REALTIME, in microseconds), duplicate runs (the boards'
# own journal, simboard's `journal` command; must be 0), lost jobs (not
# complete; must be 0), each labd's peak RSS (target: under 64 MiB), the
# CPU time of labd, PostgreSQL, the clients and the simulated boards, the
# time labd and PostgreSQL waited for a CPU while they could run (their run
# queue, /proc/PID/schedstat), and the machine's load average.  The burst
# keeps both cores busy: what it measures there is mostly that wait.
# BENCH_MH_ROUNDS (1) runs each lab that many times over, the figures of
# each round printed.  Then, on each lab, steady phases: BENCH_MH_STEADY
# (1024) jobs at each rate of BENCH_MH_RATE ("50 200" jobs a second), sent
# on time whatever the answers, through the APIs in turn: the claim's
# latency in a lab that has the CPU for the rate.  BENCH_MH_SQLITE=0
# leaves the SQLite lab out.  The boards
# power on without a pause after their power-off (power_on_delay 0): a
# PDU's own delay is the board's, not the claim's.  They are switched as
# most labs switch theirs, through pdudaemon's HTTP API (the simulator
# answers it, `simboard --pdu-port`); BENCH_MH_POWER=command runs a `simboard
# ctl` command per switch instead (two processes per job on the same 2 cores).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../pg-lib.sh"

HOSTS=${BENCH_MH_HOSTS:-4}
POWER=${BENCH_MH_POWER:-pdudaemon}
BOARDS=${BENCH_MH_BOARDS:-256}
JOBS=$((HOSTS * BOARDS))
STATS="$PY $(dirname "$0")/multihost-stats.py"

# BENCH_MH_PGSTAT=1: PostgreSQL's statements by their time (pg_stat_statements) after its lab
[ -z "${BENCH_MH_PGSTAT:-}" ] ||
	PG_EXTRA_OPTS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
pg_start >"$TMP/pg-start.log" 2>&1 || { cat "$TMP/pg-start.log"; echo "bench-multihost: no PostgreSQL"; exit 1; }

cat >"$TMP/job.yaml" <<'JOB'
job_name: mh-JOBNUM
device_type: sim-minimal
timeouts: {job: {minutes: 15}, connection: {minutes: 10}}
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
      - {command: 'journal RUN-mh-JOBNUM', name: journal}
JOB

# cpu_s PID...: their CPU seconds so far (user + system, without their children)
cpu_s() {
	local p
	for p; do awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null; done |
		awk -v hz="$(getconf CLK_TCK)" '{ s += $1 } END { printf "%.1f", s / hz }'
}
# wait_s PID...: the seconds they waited so far for a CPU while runnable (the
# run queue, /proc/PID/schedstat): what the scheduler adds to the latency
wait_s() {
	local p
	for p; do awk '{ print $2 }' "/proc/$p/schedstat" 2>/dev/null; done |
		awk '{ s += $1 } END { printf "%.1f", s / 1e9 }'
}
# pg_pids: PostgreSQL's processes (its server and backends), when it runs
pg_pids() {
	local pm
	pm=$(head -1 "$PG_DIR/data/postmaster.pid" 2>/dev/null) || return 0
	echo "$pm" $(pgrep -P "$pm")
}
# sim_pids SIM_DIR...: the simulators' processes
sim_pids() {
	local d
	for d; do cat "$d/simboard.pid" 2>/dev/null; done
}
rss_mb() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# count_finished URL...: jobs finished on these hosts (their metrics: no job list
# to read from the store and serialize while the lab is measured)
count_finished() {
	local url
	for url; do curl -sf "$url/metrics"; done |
		awk '/^labd_jobs_finished_total/ { n += $NF } END { print n + 0 }'
}

# host NAME STORE N: $TMP/NAME with N simulated boards NAME-000.., labd started; PID_<NAME>, URL_<NAME>.
host() {
	local i port
	LAB=$TMP/$1
	SIM_PDU_PORT=
	if [ "$POWER" = pdudaemon ]; then
		SIM_PDU_PORT=$(free_port)
		sim_start "$3" --mode no-uboot --pdu-port "$SIM_PDU_PORT"
	else
		sim_start "$3" --mode no-uboot
	fi
	write_lab_conf "$2"
	for i in $(seq 0 $(($3 - 1))); do
		sim_device "$(printf '%s-%03d' "$1" "$i")" "$i" sim-minimal "power_on_delay = 0;"
	done
	port=$(free_port)
	"$LABD" -c "$LAB/labd.conf" --listen "127.0.0.1:$port" >>"$LAB/labd.log" 2>&1 </dev/null &
	echo "$!" >>"$TMP/labd.pids"
	eval "PID_$1=$! URL_$1=http://127.0.0.1:$port"
	wait_for "curl -sf http://127.0.0.1:$port/api/v1/health" 60 || { tail "$LAB/labd.log"; exit 1; }
}

# run LABEL N RATE NAMES...: submit N jobs through the hosts NAMES (RATE
# per second, or "" for 16 clients at once: tests/helper/submit-jobs), wait,
# print the figures.
SUBMITTED=0
run() {
	local label=$1 n=$2 rate=$3 urls=() dirs=() sims=() pids=() h t out rss="" c0 p0 s0 c1 p1 s1 w0 q0 w1 q1 how
	shift 3
	ROUND=$((ROUND + 1))
	for h in "$@"; do
		urls+=("$(eval echo \$URL_$h)")
		dirs+=("$TMP/$h/state")
		sims+=("$TMP/$h/sim")
		pids+=("$(eval echo \$PID_$h)")
	done
	sleep 3	# the boards' consoles up
	c0=$(cpu_s "${pids[@]}") p0=$(cpu_s $(pg_pids)) s0=$(cpu_s $(sim_pids "${sims[@]}"))
	w0=$(wait_s "${pids[@]}") q0=$(wait_s $(pg_pids))
	if [ -n "$rate" ]; then
		how=(--rate "$rate" "$n" "$SUBMITTED" "$TMP/submitted-$label-$ROUND")
	else
		how=("$n" "$SUBMITTED" "$TMP/submitted-$label-$ROUND" 16)
	fi
	"$BUILD/tests/helper/submit-jobs" "${how[@]}" "${urls[@]}" <"$TMP/job.yaml" \
		>"$TMP/submit-$label" || exit 1
	SUBMITTED=$((SUBMITTED + n))
	# once a second: a list of 1000 jobs every 50 ms would load the lab it measures
	for t in $(seq 900); do
		[ "$(count_finished "${urls[@]}")" -ge "$SUBMITTED" ] && break
		[ "$t" -lt 900 ] || { echo "bench-multihost: $label: not all jobs finished"; exit 1; }
		sleep 1
	done
	c1=$(cpu_s "${pids[@]}") p1=$(cpu_s $(pg_pids)) s1=$(cpu_s $(sim_pids "${sims[@]}"))
	w1=$(wait_s "${pids[@]}") q1=$(wait_s $(pg_pids))
	out=$($STATS stats "$TMP/submitted-$label-$ROUND" "${dirs[@]}" -- "${sims[@]}" -- "${urls[@]}") || exit 1
	for h in "$@"; do rss="$rss${rss:+ / }$(rss_mb "$(eval echo \$PID_$h)")"; done
	v() { echo "$out" | sed -n "s/^$1 //p"; }
	awk -v l="$label" -v w="$(v wall_s)" \
	    -v s="$(sed -n 's/^submit_s //p' "$TMP/submit-$label")" -v c="$(v claims_per_s)" \
	    -v p50="$(v latency_p50_ms)" -v p99="$(v latency_p99_ms)" -v d="$(v duplicates)" \
	    -v c50="$(v claim_p50_ms)" -v c99="$(v claim_p99_ms)" -v a99="$(v answer_p99_ms)" \
	    -v q50="$(v queued_p50_ms)" -v q99="$(v queued_p99_ms)" \
	    -v o50="$(v power_p50_ms)" -v o99="$(v power_p99_ms)" -v mx="$(v latency_max_ms)" \
	    -v lost="$(v lost)" -v ok="$(v complete)" -v rss="$rss" \
	    -v cpu="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" \
	    -v pgcpu="$(awk -v a="$p0" -v b="$p1" 'BEGIN { print b - a }')" \
	    -v clcpu="$(sed -n 's/^client_cpu_s //p' "$TMP/submit-$label")" \
	    -v simcpu="$(awk -v a="$s0" -v b="$s1" 'BEGIN { print b - a }')" \
	    -v lwait="$(awk -v a="$w0" -v b="$w1" 'BEGIN { print b - a }')" \
	    -v pwait="$(awk -v a="$q0" -v b="$q1" 'BEGIN { print b - a }')" \
	    -v la="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
		printf "bench-multihost: %s: %d jobs complete in %.1f s wall (submitted in %.1f s, answer p99 %d ms); %.1f claims/s; submit to claim p50 %d ms, p99 %d ms; submit to power-on p50 %d ms, p99 %d ms (max %d; claim to power-on p50 %d, p99 %d; queued to power-on p50 %d, p99 %d); duplicates %d, lost %d; CPU labd %.1f s, PostgreSQL %.1f s, clients %.1f s, simulated boards %.1f s; waiting for a CPU labd %.1f s, PostgreSQL %.1f s; peak RSS %s MiB; load average %s\n",
			l, ok, w, s, a99, c, c50, c99, p50, p99, mx, o50, o99, q50, q99, d, lost, cpu, pgcpu, clcpu, simcpu, lwait, pwait, rss, la }'
	# a job that ran twice or not to its end is a bug the figures must not hide
	[ "$(v duplicates)" = 0 ] && [ "$(v lost)" = 0 ] ||
		{ echo "bench-multihost: $label: $(v duplicates) jobs ran twice, $(v lost) did not complete"; exit 1; }
}

# rounds LABEL NAMES...: BENCH_MH_ROUNDS runs on the hosts NAMES, then the
# steady phase, then they stop.
rounds() {
	local label=$1 h r rate
	ROUND=0 SUBMITTED=0
	for r in $(seq 1 "${BENCH_MH_ROUNDS:-1}"); do
		run "$label" "$JOBS" "" "${@:2}"
	done
	for rate in ${BENCH_MH_RATE:-50 200}; do
		run "$label, steady $rate jobs a second" "${BENCH_MH_STEADY:-$JOBS}" "$rate" "${@:2}"
	done
	for h in "${@:2}"; do kill "$(eval echo \$PID_$h)"; done
	sleep 2
}

pgconf() { echo "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"$1\"; timeout = 10; };"; }
names=()
for i in $(seq 1 "$HOSTS"); do
	host "h$i" "$(pgconf "h$i")" "$BOARDS"
	names+=("h$i")
done
rounds "$HOSTS hosts x $BOARDS boards, PostgreSQL, power by $POWER" "${names[@]}"
for p in $(cat "$TMP"/h*/sim/simboard.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
[ -z "${BENCH_MH_PGSTAT:-}" ] ||
	_pg_as "$PG_BIN/psql" -h "$PG_HOST" -p "$PG_PORT" -U labd -d labd -q -P pager=off \
		-c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
		-c "SELECT calls, round(total_exec_time::numeric) AS ms, rows,
		    left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS statement
		    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15" | sed 's/^/bench-multihost: postgresql: /'

[ "${BENCH_MH_SQLITE:-1}" = 0 ] && exit 0	# the PostgreSQL lab only
host one "" "$JOBS"
rounds "1 host x $JOBS boards, SQLite, power by $POWER" one
