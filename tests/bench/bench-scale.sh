#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-scale.sh -- one labd process driving many boards: CPU and memory per
# job on simulated boards at 115200 baud, with two boots: a minimal boot (power
# on, log in, as the peers' fake board) and a boot through the simulated U-Boot
# (tftp deploy, interrupt autoboot, the U-Boot commands, booti).
#
# Runs: 1 board x 5 jobs in a row (median per job), then N boards (default
# 64, 256, 1024 and 4096) each running one job at the same time in one labd,
# for each boot.  At every size it checks that the bytes the simulated boards
# wrote to their consoles are the bytes in labd's console logs, and that every
# job completed: the benchmark fails when not.
#
# The peers: with PEERS=1 (make bench PEERS=1) LAVA's lava-run and labgrid run
# the minimal job on the same simulated board in this run (peers.sh);
# without it the ratios use the figures in shared/notes/peer-measurements.md
# (LAVA's lava-run 0.55 CPU-s and 112 MB RSS, labgrid 0.56 CPU-s and 35 MB).
#
# 4096 boards need 4096 ptys: kernel.pty.max is raised for the run when it is
# too low and the bench runs as root (restored at the end); otherwise a size
# that does not fit is skipped, and says why.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/peers.sh"

SIZES=${BENCH_SCALE_SIZES:-"64 256 1024 4096"}
BOOTS=${BENCH_SCALE_BOOTS:-"minimal u-boot"}
NOTES_LAVA_CPU=0.55 NOTES_LAVA_RSS=112 NOTES_LABGRID_CPU=0.56 NOTES_LABGRID_RSS=35
CLIENT="$PY $TOP/tests/bench/queue-client.py"
export SIM_START_TIMEOUT=120 LABD_START_TIMEOUT=120
PTY_MAX=/proc/sys/kernel/pty/max

clk=$(getconf CLK_TCK)
# cpu_s PID: user+system CPU seconds of the process itself (not its children)
cpu_s() { awk -v t="$clk" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss_mb() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
load() { cut -d" " -f1-3 /proc/loadavg; }

# job_file FILE BOOT: the benchmark's job, booting the minimal way or through U-Boot.
job_file() {
	local boot
	if [ "$2" = u-boot ]; then
		boot=$(sim_uboot_boot)
	else
		boot="- boot:
    method: minimal
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']"
	fi
	write_job "$1" <<JOB
job_name: bench-$2
device_type: sim-uboot
timeouts: {job: {minutes: 15}, connection: {minutes: 10}}
actions:
$boot
- test:
    interactive:
    - name: t
      prompts: ['root@sim:~# ']
      script:
      - {command: 'uname -a', name: uname, successes: [{message: 'Linux sim'}]}
      - {command: 'cat /proc/version', name: version, successes: [{message: 'Linux version'}]}
JOB
}

# ptys_for N: room for N more ptys, raising kernel.pty.max when root; 1 (and why) when not.
ptys_for() {
	local n=$1 max nr need
	max=$(cat "$PTY_MAX") nr=$(cat /proc/sys/kernel/pty/nr)
	need=$((nr + n + 256))	# the other ptys in use, and room for the rest of the machine
	[ "$need" -le "$max" ] && return 0
	if [ "$(id -u)" = 0 ] && echo "$need" >"$PTY_MAX" 2>/dev/null; then
		[ -n "${PTY_MAX_WAS:-}" ] || { PTY_MAX_WAS=$max; at_exit "echo $max >$PTY_MAX"; }
		echo "bench-scale: kernel.pty.max raised from $max to $need for $n boards ($nr ptys in use; restored at the end)"
		return 0
	fi
	echo "bench-scale: $n boards skipped: they need $n ptys, $nr are in use and kernel.pty.max is $max (run the bench as root, or raise it: sysctl kernel.pty.max=$need)"
	return 1
}

# fds_for N: an open files hard limit that N boards fit in, raised when root.  labd
# raises its soft limit to the hard one itself, and says when that is too low.
fds_for() {
	local need=$(($1 * 12 + 1024)) hard
	hard=$(ulimit -Hn)
	[ "$hard" = unlimited ] || [ "$hard" -ge "$need" ] && return 0
	if ulimit -Hn "$need" 2>/dev/null; then
		echo "bench-scale: open files hard limit raised from $hard to $need for $1 boards"
	else
		echo "bench-scale: $1 boards: the open files hard limit $hard is below the $need they may need, and cannot be raised here (it needs CAP_SYS_RESOURCE); labd says so in its log"
	fi
}

# lab N BOOT: N simulated boards (started without U-Boot for a minimal boot) and labd.
lab() {
	local n=$1 i name
	LAB=$TMP/lab-$n-$2
	if [ "$2" = minimal ]; then sim_start "$n" --mode no-uboot; else sim_start "$n"; fi
	write_lab_conf
	for i in $(seq 0 $((n - 1))); do
		printf -v name 'sim-%04d' "$i"	# no fork per board
		sim_device "$name" "$i"
	done
	labd_start
}

lab_stop() {
	labd_stop; kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null
}

# log_bytes DIR: bytes of the console logs under DIR (rotated ones too: console.log.1);
# write_lab_conf turns compression off, so the files hold the bytes as read
log_bytes() {
	find "$1" -name 'console.log*' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}

# bytes_check: the bytes the boards wrote to their consoles against the bytes in labd's
# console logs once labd has read everything: a job's console goes to the job's log only,
# what a board says between jobs to its board log, so the two together hold every byte;
# prints "SENT JOBS BOARDS ✓", or "... MISMATCH" when the sum is not what was sent.
bytes_check() {
	local sent jobs boards i
	for i in $(seq 100); do
		sent=$(sim_ctl sent all | cut -d" " -f2)
		jobs=$(log_bytes "$LAB/state/jobs") boards=$(log_bytes "$LAB/state/boards")
		[ "$sent" = $((jobs + boards)) ] && break
		sleep 0.1
	done
	if [ "$sent" = $((jobs + boards)) ]; then
		echo "$sent $jobs $boards ✓"
	else
		echo "$sent $jobs $boards MISMATCH"
	fi
}

# submit JOB N: N jobs from 8 keep-alive clients at once (labd commits what arrives in one
# loop turn together); prints the seconds until the last one was accepted.
submit() {
	local t0
	t0=$(date +%s.%N)
	submit_burst "$LABD_URL" "$1" "$2" || return 1
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

# fd_sampler PID FILE: the largest number of fds PID had open, every half second, into FILE.
fd_sampler() {
	local max=0 n
	while kill -0 "$1" 2>/dev/null; do
		n=$(stat -c %s "/proc/$1/fd" 2>/dev/null || echo 0)
		[ "$n" -gt "$max" ] && { max=$n; echo "$max" >"$2"; }
		sleep 0.5
	done
}

# --- one board, jobs in a row, and the peers on the same board ---
one_board() {
	local cpus=() walls=() i c0 c1 t0 t1 cpu wall rss
	lab 1 minimal
	for i in 1 2 3 4 5; do
		c0=$(cpu_s "$LABD_PID"); t0=$(date +%s.%N)
		labctl submit --follow -q "$TMP/job-minimal.yaml" >/dev/null ||
			{ echo "bench-scale: job failed"; exit 1; }
		t1=$(date +%s.%N); c1=$(cpu_s "$LABD_PID")
		cpus+=("$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')")
		walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
	done
	cpu=$(printf '%s\n' "${cpus[@]}" | median)
	wall=$(printf '%s\n' "${walls[@]}" | median)
	rss=$(rss_mb "$LABD_PID")
	echo "bench-scale: 1 board, 5 jobs (minimal boot): median wall $wall s, labd CPU $cpu s per job, labd peak RSS $rss MB (load average $(load))"
	labd_stop
	if [ -n "${PEERS:-}" ] && [ "${PEERS:-}" != 0 ]; then
		peers_run "$LAB/sim" sim0 "$TMP/job-minimal.yaml" "$cpu" "$rss" "$wall"	# labd gone
	else
		awk -v c="$cpu" -v r="$rss" -v lc=$NOTES_LAVA_CPU -v lr=$NOTES_LAVA_RSS \
		    -v gc=$NOTES_LABGRID_CPU -v gr=$NOTES_LABGRID_RSS 'BEGIN {
			printf "bench-scale: CPU per job vs LAVA lava-run %.0fx less, vs labgrid %.0fx less (their figures from shared/notes; PEERS=1 measures them live)\n", lc / c, gc / c
			printf "bench-scale: RSS vs LAVA (one process per job) %.1fx less, vs labgrid %.1fx less\n", lr / r, gr / r }'
	fi
	kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null
}

# many N BOOT: N boards each running one job at the same time, one labd.
many() {
	local n=$1 boot=$2 idle0 idle1 c0 c1 t0 t1 sub healths bytes fds sampler
	lab "$n" "$boot" || {
		echo "bench-scale: $n boards, $boot boot: labd did not start: $(grep -v '^labd: info' "$LAB/labd.log" | tail -1)"
		kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null
		return
	}
	idle0=$(cpu_s "$LABD_PID"); sleep 5; idle1=$(cpu_s "$LABD_PID")
	echo 0 >"$TMP/fds"
	fd_sampler "$LABD_PID" "$TMP/fds" &
	sampler=$!
	c0=$(cpu_s "$LABD_PID"); t0=$(date +%s.%N)
	sub=$(submit "$TMP/job-$boot.yaml" "$n") &&
	$CLIENT "$LABD_URL" wait-done "$n" "$n" 1200 ||
		{ echo "bench-scale: $n jobs did not finish"; tail -5 "$LAB/labd.log"; exit 1; }
	t1=$(date +%s.%N); c1=$(cpu_s "$LABD_PID")
	healths=$($CLIENT "$LABD_URL" healths)
	bytes=$(bytes_check)
	kill "$sampler"; wait "$sampler" 2>/dev/null
	fds=$(cat "$TMP/fds")
	awk -v n="$n" -v boot="$boot" -v h="$healths" -v a="$t0" -v b="$t1" -v s="$sub" \
	    -v c0="$c0" -v c1="$c1" -v i0="$idle0" -v i1="$idle1" -v r="$(rss_mb "$LABD_PID")" \
	    -v fds="$fds" -v by="$bytes" -v ld="$(load)" 'BEGIN {
		split(by, x, " ")
		printf "bench-scale: %d boards, %s boot, %d jobs at once: %s in %.1f s wall (submitted in %.1f s); labd CPU %.2f s (%.4f s per job), peak RSS %s MB (%.3f MB per board), peak %d fds (%.1f per board); idle CPU %.1f%% of a core; load average %s\n",
			n, boot, n, h, b - a, s, c1 - c0, (c1 - c0) / n, r, r / n, fds, fds / n, (i1 - i0) / 5 * 100, ld
		printf "bench-scale: %d boards, %s boot: console bytes sent by the boards %d, in labd'"'"'s job logs %d and board logs %d: %d %s\n",
			n, boot, x[1], x[2], x[3], x[2] + x[3], x[4] }'
	# a lost or doubled byte, a job that did not complete: the figures mean nothing
	case $bytes in *MISMATCH) echo "bench-scale: console bytes lost or doubled"; exit 1 ;; esac
	[ "$healths" = "complete=$n" ] ||
		{ echo "bench-scale: not every job complete: $healths"; tail -5 "$LAB/labd.log"; exit 1; }
	[ "$n" = "$(echo "$SIZES" | awk '{ print $NF }')" ] && [ "$boot" = "${BOOTS%% *}" ] &&
		sed -n 's/^labd: info: \(open files limit .*\)/bench-scale: labd at start: \1/p' "$LAB/labd.log"
	lab_stop
}

for boot in $BOOTS; do job_file "$TMP/job-$boot.yaml" "$boot"; done
job_file "$TMP/job-minimal.yaml" minimal
one_board
for n in $SIZES; do
	ptys_for "$n" || continue
	fds_for "$n"
	for boot in $BOOTS; do many "$n" "$boot"; done
done
