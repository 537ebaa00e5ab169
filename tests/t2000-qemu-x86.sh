#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2000-qemu-x86.sh -- a real Debian kernel on an x86_64 QEMU board through labd:
# jobs/qemu-x86_64.yaml (direct kernel boot, interactive test, KTAP run) through
# the API and labctl, the console owned from QEMU's first byte, the board off
# after the job, QEMU failing to start, and what a job cannot pass to QEMU.
# test-serial: tests/run runs it alone (QEMU's emulation or the chaos load take the CPUs;
# its timing must not compete with other tests)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"

qemu_open 'x86_64 QEMU boots through labd' x86_64
labd_start
at_exit labd_stop

qemu_job "$TOP/jobs/qemu-x86_64.yaml" "$TMP/x86.yaml"

test_expect_success 'jobs/qemu-x86_64.yaml: boot to a shell, interactive test, KTAP results' '
	submit_follow "$TMP/x86.yaml" 1 &&
	grep -q "job [0-9]*: complete, 7 passed, 2 failed, 1 skipped" "$TMP/follow.out" &&
	labctl results "$(job_id)" >"$TMP/results" &&
	grep -q "smoke.machine.*pass" "$TMP/results" &&
	grep -q "smoke.echo.*pass" "$TMP/results" &&
	grep -q "kunit.ktap-document.*pass" "$TMP/results" &&
	grep -q "ktap.demo-math.add.*pass" "$TMP/results" &&
	grep -q "ktap.demo-math.divide.*skip" "$TMP/results" &&
	grep -q "ktap.demo-strings.reverse.*fail" "$TMP/results" &&
	grep -q "ktap.demo-strings .*fail" "$TMP/results"
'

test_expect_success 'the boot phases are recorded: power-on, then the shell' '
	labctl show "$(job_id)" >"$TMP/show" &&
	grep -q "phases: *power-on 0.000s, shell [0-9.]*s" "$TMP/show"
'

test_expect_success 'the job console holds the guest output from the very first byte' '
	id=$(job_id) &&
	serial=$LAB/state/boards/qemu-x86-01/qemu-serial.log &&
	console=$LAB/state/jobs/$id/console.log &&
	[ -s "$serial" ] &&
	n=$(stat -c %s "$serial") &&
	cmp -n "$n" "$serial" "$console" &&
	grep -q "BOOT-INIT: Linux .* x86_64" "$console"
'

test_expect_success 'the board is powered off and idle after the job' '
	! qemu_running qemu-x86-01 &&
	labctl devices >"$TMP/devices" &&
	grep "qemu-x86-01" "$TMP/devices" | grep -q idle
'

test_expect_success 'extra_kernel_args reach the kernel as they are, never QEMU' '
	sed "s|extra_kernel_args: quiet|extra_kernel_args: \"quiet labd.x=-snapshot,-device,x\"|" \
		"$TMP/x86.yaml" >"$TMP/append.yaml" &&
	cat >>"$TMP/append.yaml" <<JOB &&
- test:
    interactive:
    - name: cmdline
      prompts: ["root@guest:[^#]*# "]
      script:
      - {command: "cat /proc/cmdline", name: append, successes: [{message: "quiet labd.x=-snapshot,-device,x"}]}
JOB
	submit_follow "$TMP/append.yaml" 1 &&
	labctl results "$(job_id)" | grep -q "cmdline.append.*pass"
'

test_expect_success 'a job may not deploy what the device type does not hand to QEMU' '
	sed "s|^- boot:|    dtb: {url: $ART_URL/x86_64/initrd.cpio.gz}\n- boot:|" \
		"$TMP/x86.yaml" >"$TMP/dtb.yaml" &&
	test_must_fail labctl submit "$TMP/dtb.yaml" >"$TMP/out" 2>&1 &&
	grep -q "does not let jobs deploy .dtb. for QEMU" "$TMP/out"
'

test_expect_success 'no ramdisk for a command line that needs one: job error, before QEMU' '
	sed "/ramdisk:/,+1d" "$TMP/x86.yaml" >"$TMP/noramdisk.yaml" &&
	submit_follow "$TMP/noramdisk.yaml" 2 &&
	grep -q "incomplete (job): the QEMU command line of device type .qemu-x86_64. needs {RAMDISK}: deploy a .ramdisk. to tmpfs" "$TMP/follow.out" &&
	labctl devices | grep qemu-x86-01 | grep -q idle
'

test_expect_success 'QEMU cannot start: infrastructure error quoting QEMU, board back to idle' '
	sed "s|x86_64/vmlinux|x86_64/kernel-version|" "$TMP/x86.yaml" >"$TMP/bad.yaml" &&
	submit_follow "$TMP/bad.yaml" 2 &&
	grep -q "incomplete (infrastructure): .*qemu exited with status 1: qemu: linux kernel too old to load a ram disk" "$TMP/follow.out" &&
	wait_for "labctl devices | grep qemu-x86-01 | grep -q idle" 10
'

test_done
