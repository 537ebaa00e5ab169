#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1020-power-on-kmsg.sh -- kernel messages a board prints while its power-on
# command still runs are scanned like all others: a panic at power-on fails
# the job at once, and an oops there is a kernel-messages result.
. "$(dirname "$0")/lib.sh"

write_lab_conf
# the board's console: one end of a pty pair; the power command writes the other
socat pty,raw,echo=0,link="$LAB/board.pty" pty,raw,echo=0,link="$LAB/peer.pty" \
	>"$TMP/socat.log" 2>&1 &
at_exit "kill $!"
wait_for "[ -e '$LAB/board.pty' ] && [ -e '$LAB/peer.pty' ]" 10

cat >"$LAB/devices/10-board.conf" <<CONF
device = {
	name = "board";
	type = "sim-minimal";
	console = { driver = "pty"; path = "$LAB/board.pty"; };
	power = { driver = "command"; on = "sh $LAB/power-on.sh"; off = "true"; timeout = 10; };
};
CONF

# power_on LINE...: what the board prints at once when power comes on; the
# power command itself returns two seconds later.
power_on() {
	{
		echo "printf '%s\\r\\n' \\"
		for l in "$@"; do printf "  '%s' \\\\\n" "$l"; done
		echo "  >'$LAB/peer.pty'"
		echo "sleep 2"
	} >"$LAB/power-on.sh"
}

write_job "$TMP/job.yaml" <<JOB
job_name: power-on messages
device_type: sim-minimal
timeouts: {job: {minutes: 1}, connection: {seconds: 12}}
actions:
$(sim_minimal_boot)
JOB

test_expect_success 'a panic printed while the power-on command runs fails the job at once' '
	power_on "[    0.000000] Booting Linux on physical CPU 0x0" \
		"[    0.512345] Kernel panic - not syncing: VFS: Unable to mount root fs" \
		"[    0.512350] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs ]---" &&
	t0=$(date +%s) &&
	run_job "$TMP/job.yaml" 2 &&
	grep -q "incomplete (job): kernel panic: Kernel panic - not syncing: VFS" "$TMP/run.out" &&
	grep -q "kernel-messages.panic: fail" "$TMP/run.out" &&
	[ $(( $(date +%s) - t0 )) -lt 10 ]
'

write_job "$TMP/shell.yaml" <<JOB
job_name: power-on oops
device_type: sim-minimal
timeouts: {job: {minutes: 1}, connection: {seconds: 12}}
actions:
- boot:
    method: minimal
    prompts: ['root@sim:~# ']
JOB

test_expect_success 'an oops printed while the power-on command runs is a kernel-messages result' '
	power_on "[    0.000000] Booting Linux on physical CPU 0x0" \
		"[    0.300000] Internal error: Oops: 96000045 [#1] SMP" \
		"[    0.300010] ---[ end trace 0000000000000000 ]---" \
		"root@sim:~# " &&
	run_job "$TMP/shell.yaml" 1 &&
	grep -q "kernel-messages.oops: fail" "$TMP/run.out" &&
	grep -q "complete, 1 failed results" "$TMP/run.out"
'

test_done
