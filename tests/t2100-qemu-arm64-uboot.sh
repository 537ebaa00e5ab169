#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2100-qemu-arm64-uboot.sh -- a real Debian arm64 kernel through real U-Boot:
# jobs/qemu-arm64-uboot.yaml, driven by the unmodified u-boot method, the kernel
# and ramdisk fetched over QEMU's built-in TFTP server from labd's TFTP root,
# then a LAVA-style inline test definition; and a U-Boot TFTP error.
# test-serial: tests/run runs it alone (QEMU's emulation or the chaos load take the CPUs;
# its timing must not compete with other tests)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"

qemu_open 'arm64 QEMU boots through U-Boot' arm64
labd_start
at_exit labd_stop

qemu_job "$TOP/jobs/qemu-arm64-uboot.yaml" "$TMP/arm64.yaml"

test_expect_success 'jobs/qemu-arm64-uboot.yaml: U-Boot, TFTP, booti, inline test definition' '
	submit_follow "$TMP/arm64.yaml" 0 &&
	grep -q "job [0-9]*: complete, 3 passed" "$TMP/follow.out" &&
	labctl results "$(job_id)" >"$TMP/results" &&
	grep -q "0_smoke.machine .*pass" "$TMP/results" &&
	grep -q "0_smoke.console .*pass" "$TMP/results" &&
	grep -q "0_smoke.busybox .*pass" "$TMP/results"
'

test_expect_success 'U-Boot fetched the staged files over TFTP and booted them' '
	id=$(job_id) &&
	console=$LAB/state/jobs/$id/console.log &&
	cmp "$QEMU_FIX/arm64/Image" "$LAB/state/tftp/$id/Image" &&
	grep -q "^=> tftp 0x40400000 $id/Image" "$console" &&
	grep -q "^=> booti 0x40400000 0x44000000:\${initrd_size} \${fdtcontroladdr}" "$console" &&
	grep -q "Bytes transferred = $(stat -c %s "$QEMU_FIX/arm64/Image")" "$console" &&
	grep -q "BOOT-INIT: Linux .* aarch64" "$console"
'

test_expect_success 'every boot phase is recorded' '
	labctl show "$(job_id)" >"$TMP/show" &&
	grep -q "phases: *power-on 0.000s, bootloader-prompt [0-9.]*s, bootloader-final [0-9.]*s, kernel-start [0-9.]*s, shell [0-9.]*s" "$TMP/show"
'

test_expect_success 'the board is powered off (no U-Boot left burning a core)' '
	! qemu_running qemu-arm64-01
'

test_expect_success 'a file missing on TFTP: U-Boot error, infrastructure, board off' '
	sed "s|commands: ramdisk|commands: [\"setenv serverip 10.0.2.2\", \"setenv ipaddr 10.0.2.15\", \"tftp {KERNEL_ADDR} no-such-file\"]|" \
		"$TMP/arm64.yaml" >"$TMP/missing.yaml" &&
	submit_follow "$TMP/missing.yaml" 2 &&
	grep -q "incomplete (infrastructure): u-boot error after tftp 0x40400000 no-such-file" "$TMP/follow.out" &&
	! qemu_running qemu-arm64-01
'

test_done
