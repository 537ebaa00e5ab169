#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-qemu-boot.sh -- labd's overhead on a real boot: an x86_64 QEMU board from
# QEMU's start to the shell prompt, driven by labd (the job's boot phases
# power-on -> shell) and by a minimal console reader (qemu-expect.py) running
# the same QEMU command line; BENCH_RUNS runs each (default 5), interleaved.
# Also labd's own CPU time per job (deploy from the cache, boot, test, power
# off), QEMU excluded: utime + stime of labd's process from /proc/PID/stat.
# Prints figures; asserts nothing about them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/qemu/lib.sh"

RUNS=${BENCH_RUNS:-5}
PROMPT='root@guest:[^#]*# '

if ! qemu_fixtures x86_64; then
	echo "qemu-boot: skipped: $QEMU_SKIP"
	exit 0
fi
qemu_lab
labd_start
at_exit labd_stop

sha() { sha256sum "$QEMU_FIX/$1" | cut -c1-64; }

# The benchmark job: the example job's boot with cached artifacts and one command.
cat >"$TMP/boot.yaml" <<JOB
job_name: bench x86_64 boot
device_type: qemu-x86_64
timeouts: {job: {minutes: 3}, connection: {minutes: 2}}
context: {extra_kernel_args: quiet}
actions:
- deploy:
    to: tmpfs
    kernel: {url: $ART_URL/x86_64/vmlinux, sha256sum: $(sha x86_64/vmlinux)}
    ramdisk: {url: $ART_URL/x86_64/initrd.cpio.gz, sha256sum: $(sha x86_64/initrd.cpio.gz)}
- boot:
    method: qemu
    prompts: ['$PROMPT']
- test:
    interactive:
    - name: smoke
      prompts: ['$PROMPT']
      script:
      - {command: 'echo MARK-\$((6*7))', name: echo, successes: [{message: MARK-42}]}
JOB

# The same QEMU command line labd runs (device type qemu-x86_64, quiet added).
baseline_argv=(qemu-system-x86_64 -display none -monitor none
	-chardev "socket,id=labd-serial,fd={FD},logfile=$TMP/baseline-serial.log"
	-serial chardev:labd-serial -accel tcg -m 256 -nodefaults -no-reboot -net none
	-kernel "$QEMU_FIX/x86_64/vmlinux" -initrd "$QEMU_FIX/x86_64/initrd.cpio.gz"
	-append "console=ttyS0 panic=-1 no_timer_check quiet")

# cpu_ticks: labd's own user + system time so far, in clock ticks.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$LABD_PID/stat"
}

# shell_time ID: the job's power-on -> shell time from its phases.
shell_time() {
	labctl show "$1" --json |
		$PY -c 'import json,sys; p={x["phase"]: x["t"] for x in json.load(sys.stdin)["phases"]}; print("%.3f" % (p["shell"] - p["power-on"]))'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Warm-up: fills the download cache and the page cache; not measured.
labctl submit --follow "$TMP/boot.yaml" >"$TMP/warmup.out" 2>&1 ||
	{ echo "qemu-boot: the warm-up job failed:"; tail -20 "$TMP/warmup.out"; exit 1; }

t0=$(cpu_ticks)
for i in $(seq "$RUNS"); do
	labctl submit --follow "$TMP/boot.yaml" >"$TMP/job.out" 2>&1 ||
		{ echo "qemu-boot: job failed:"; tail -20 "$TMP/job.out"; exit 1; }
	id=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$TMP/job.out" | tail -1)
	shell_time "$id" >>"$TMP/labd.times"
	"$TOP/tests/bench/qemu-expect.py" "$PROMPT" -- "${baseline_argv[@]}" >>"$TMP/script.times" ||
		{ echo "qemu-boot: the baseline did not reach the prompt"; exit 1; }
done
t1=$(cpu_ticks)

hz=$(getconf CLK_TCK)
labd_med=$(median <"$TMP/labd.times")
script_med=$(median <"$TMP/script.times")
echo "qemu-boot: x86_64 $(cat "$QEMU_FIX/x86_64/kernel-version"), QEMU start -> shell prompt, $RUNS runs each, medians"
echo "qemu-boot:   labd (job phases power-on -> shell)  ${labd_med} s   [$(tr '\n' ' ' <"$TMP/labd.times")]"
echo "qemu-boot:   minimal console reader             ${script_med} s   [$(tr '\n' ' ' <"$TMP/script.times")]"
awk -v a="$labd_med" -v b="$script_med" \
	'BEGIN { printf "qemu-boot:   labd / minimal = %.3f (labd overhead %+.1f%%; target < 5%%)\n", a / b, (a / b - 1) * 100 }'
awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$RUNS" \
	'BEGIN { printf "qemu-boot:   labd CPU per job (deploy from cache, boot, test, power off; QEMU excluded): %.3f s\n", t / hz / n }'
