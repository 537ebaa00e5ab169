#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1000-boot-sim.sh -- U-Boot and minimal boots of simulated boards through
# `labd run-job`: success, every misbehaviour of the board, timeouts at each
# stage, and the board powered off at the end of every job.
. "$(dirname "$0")/lib.sh"

ART=$TOP/contrib/lab/artifacts
sim_lab 1

# uboot_job FILE [CONNECTION_TIMEOUT_S] [ACTION_TIMEOUT_S]: a U-Boot boot + smoke test.
uboot_job() {
	write_job "$1" <<JOB
job_name: sim u-boot boot
device_type: sim-uboot
priority: medium
timeouts:
  job: {minutes: 3}
  action: {seconds: ${3:-60}}
  connection: {seconds: ${2:-20}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image', type: image}
    ramdisk: {url: 'file://$ART/initrd.cpio.gz', sha256sum: $(sha256sum "$ART/initrd.cpio.gz" | cut -c1-64)}
    dtb: {url: 'file://$ART/sim.dtb'}
- boot:
    method: u-boot
    commands: ramdisk
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - command: uname -r
        name: kernel-release
        successes: [{message: '6\\.1\\.0-sim'}]
JOB
}

powered_off() {
	sim_ctl status sim0 | grep -q 'power=off'
}

mode() {
	sim_ctl mode sim0 "$1" >/dev/null
}

uboot_job "$TMP/job.yaml"
uboot_job "$TMP/short.yaml" 4 30

test_expect_success 'u-boot boot to a shell and an interactive test: complete' '
	mode normal &&
	run_job "$TMP/job.yaml" 0 &&
	grep -q "job 1: complete" "$TMP/run.out" &&
	grep -q "smoke.kernel-release: pass" "$TMP/run.out" &&
	grep -q "^=> setenv serverip 10.0.2.2" "$LAB/state/jobs/1/console.log" &&
	grep -q "tftp 0x40400000 1/Image" "$TMP/run.out" &&
	grep -q "booti 0x40400000 0x44000000:\${initrd_size} 0x40000000" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'the artifacts were staged in the job TFTP directory' '
	cmp "$LAB/state/tftp/1/Image" "$ART/Image" &&
	cmp "$LAB/state/tftp/1/initrd.cpio.gz" "$ART/initrd.cpio.gz"
'

test_expect_success 'the console log is byte-exact and has a line index' '
	grep -q "Hit any key to stop autoboot" "$LAB/state/jobs/1/console.log" &&
	grep -q "sim login: root" "$LAB/state/jobs/1/console.log" &&
	[ $(( $(stat -c %s "$LAB/state/jobs/1/console.idx") / 16 )) -eq \
	  $(( $(tr -dc "\n" <"$LAB/state/jobs/1/console.log" | wc -c) + 1 )) ] ||
	[ $(( $(stat -c %s "$LAB/state/jobs/1/console.idx") / 16 )) -eq \
	  $(tr -dc "\n" <"$LAB/state/jobs/1/console.log" | wc -c) ]
'

test_expect_success 'boot phases are recorded' '
	for p in power-on bootloader-prompt bootloader-final kernel-start login-prompt shell; do
		grep -q "phase L[0-9]* $p at" "$TMP/run.out" || { echo "no phase $p"; exit 1; }
	done
'

test_expect_success 'U-Boot hangs: infrastructure error naming the limit, the stage and the last line' '
	mode hang-uboot &&
	run_job "$TMP/short.yaml" 2 &&
	{ grep -q "incomplete (infrastructure): timed out waiting for the u-boot autoboot prompt: timeouts.connection (4 s) ran out in bootloader-interrupt of action 2 (boot-u-boot); the last console line was .Net:   eth0: ethernet@fe300000.$" "$TMP/run.out" ||
	  { grep incomplete "$TMP/run.out"; false; }; } &&
	powered_off
'

test_expect_success 'no autoboot prompt, the kernel starts: infrastructure error at once, board off' '
	mode no-autoboot &&
	run_job "$TMP/short.yaml" 2 &&
	{ grep -q "incomplete (infrastructure): the board booted past its bootloader: autoboot was not interrupted" "$TMP/run.out" ||
	  { tail -5 "$TMP/run.out"; false; }; } &&
	powered_off
'

test_expect_success 'TFTP error in U-Boot: infrastructure error naming the command' '
	mode uboot-error &&
	run_job "$TMP/short.yaml" 2 &&
	grep -q "incomplete (infrastructure): u-boot error after tftp 0x40400000 [0-9]*/Image: TFTP error" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'kernel panic: job error with the panic line, the whole report logged' '
	mode panic &&
	run_job "$TMP/short.yaml" 2 &&
	grep -q "incomplete (job): kernel panic: Kernel panic - not syncing" "$TMP/run.out" &&
	grep -q "end Kernel panic" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'kernel oops during boot: complete, with a failed kernel-messages result' '
	mode oops &&
	run_job "$TMP/job.yaml" 1 &&
	grep -q "kernel-messages.oops: fail" "$TMP/run.out" &&
	grep -q "job [0-9]*: complete, 1 failed results" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'kernel hangs: job error naming the limit, auto-login-action and the last line' '
	mode hang-kernel &&
	run_job "$TMP/short.yaml" 2 &&
	{ grep -q "incomplete (job): timed out waiting for the login prompt: timeouts.connection (4 s) ran out in auto-login-action of action 2 (boot-u-boot); the last console line was .\[ *[0-9.]*\] .*.$" "$TMP/run.out" ||
	  { grep incomplete "$TMP/run.out"; false; }; } &&
	powered_off
'

test_expect_success 'garbage on the line: still boots and completes' '
	mode garbage &&
	run_job "$TMP/job.yaml" 0 &&
	powered_off
'

test_expect_success 'login refused: job error' '
	mode login-fail &&
	run_job "$TMP/short.yaml" 2 &&
	grep -q "incomplete (job): login failed" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'board resets during boot: job error' '
	mode reset-loop &&
	run_job "$TMP/short.yaml" 2 &&
	grep -q "incomplete (job): the board reset unexpectedly" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'slow board with generous timeouts: complete' '
	mode slow &&
	run_job "$TMP/job.yaml" 0 &&
	powered_off
'

# The boot's 2 s end in U-Boot (the lab's: infrastructure) or in the kernel's boot
# (the job's), as LAVA classes the action running then.
test_expect_success 'action timeout shorter than the boot: its key, the stage and whose fault' '
	mode normal &&
	uboot_job "$TMP/tiny.yaml" 20 2 &&
	run_job "$TMP/tiny.yaml" 2 &&
	{ grep -Eq "incomplete \((infrastructure\): boot-u-boot timed out: timeouts.action \(2 s\) ran out in bootloader-[a-z]+|job\): boot-u-boot timed out: timeouts.action \(2 s\) ran out in auto-login-action) of action 2 \(boot-u-boot\); the last console line was .+$" "$TMP/run.out" ||
	  { grep incomplete "$TMP/run.out"; false; }; } &&
	powered_off
'

test_expect_success 'minimal boot of a board without U-Boot' '
	mode no-uboot &&
	write_job "$TMP/minimal.yaml" <<JOB &&
job_name: minimal
device_type: sim-uboot
timeouts: {job: {minutes: 2}, connection: {seconds: 20}}
actions:
- boot:
    method: minimal
    auto_login: {login_prompt: "login:", username: root}
    prompts: ["root@sim:~# "]
- test:
    interactive:
    - name: t
      prompts: ["root@sim:~# "]
      script:
      - {command: "echo ok-$((6*7))", name: echo, successes: [{message: "ok-42"}]}
JOB
	run_job "$TMP/minimal.yaml" 0 &&
	grep -q "t.echo: pass" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'a command whose answer matches nothing fails when the prompt comes back' '
	mode no-uboot &&
	write_job "$TMP/early-prompt.yaml" <<JOB &&
job_name: early prompt
device_type: sim-uboot
timeouts: {job: {minutes: 2}, action: {seconds: 60}, connection: {seconds: 60}}
actions:
- boot:
    method: minimal
    auto_login: {login_prompt: "login:", username: root}
    prompts: ["root@sim:~# "]
- test:
    interactive:
    - name: t
      prompts: ["root@sim:~# "]
      script:
      - {command: "echo nothing-$((6*7))", name: unanswered, successes: [{message: "never-printed"}]}
      - command: "(sleep 1; echo late-$((6*7))) &"
        name: background
        successes: [{message: "late-42"}]
        wait_for_prompt: false
      - {command: "echo ok-$((6*7))", name: after, successes: [{message: "ok-42"}]}
JOB
	t0=$(date +%s) &&
	run_job "$TMP/early-prompt.yaml" 1 &&
	[ $(( $(date +%s) - t0 )) -lt 40 ] &&
	grep -q "t.unanswered: fail" "$TMP/run.out" &&
	grep -q "t.background: pass" "$TMP/run.out" &&
	grep -q "t.after: pass" "$TMP/run.out" &&
	grep -q "ended (the prompt came back) before any success or failure message" "$TMP/run.out" &&
	powered_off
'

test_expect_success 'monitors turn console patterns into results' '
	mode normal &&
	write_job "$TMP/monitor.yaml" <<JOB &&
job_name: monitors
device_type: sim-uboot
timeouts: {job: {minutes: 2}, connection: {seconds: 20}}
actions:
- boot:
    method: minimal
    auto_login: {login_prompt: "login:", username: root}
    prompts: ["root@sim:~# "]
- test:
    interactive:
    - name: start
      prompts: ["root@sim:~# "]
      script:
      - command: "sleep 0.5; echo BEGIN-TESTS; echo case-a: PASS; echo case-b: FAIL; echo END-TESTS"
        successes: [{message: "sleep 0.5"}]
        wait_for_prompt: false
- test:
    monitors:
    - name: selftest
      start: BEGIN-TESTS
      end: END-TESTS
      pattern: "(?P<test_case_id>case-[a-z]): (?P<result>PASS|FAIL)"
      fixupdict: {PASS: pass, FAIL: fail}
JOB
	sim_ctl mode sim0 no-uboot >/dev/null &&
	run_job "$TMP/monitor.yaml" 1 &&
	grep -q "selftest.case-a: pass" "$TMP/run.out" &&
	grep -q "selftest.case-b: fail" "$TMP/run.out"
'

test_done
