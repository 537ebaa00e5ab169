#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2420-qemu-cortex-m.sh -- a microcontroller on QEMU: devices/qemu-cortex-m.conf
# (lm3s6965evb, Cortex-M3) runs a job of LAVA's Zephyr QEMU shape (deploy
# tmpfs with image_arg '-kernel {zephyr}', boot qemu, a monitors test) whose
# image is built from Debian's arm-none-eabi toolchain and picolibc
# (tests/qemu/cortex-m-image.sh: a bare-metal program printing what a Zephyr
# test prints on UART0).
# test-serial
. "$(dirname "$0")/lib.sh"

if ! command -v qemu-system-arm >/dev/null; then
	test_skip 'a Zephyr-shaped job on a QEMU Cortex-M3' "no qemu-system-arm (apt-get install qemu-system-arm)"
	test_done
	exit
fi
rc=0
IMAGE=$("$TOP/tests/qemu/cortex-m-image.sh" 2>"$TMP/image.err") || rc=$?
if [ $rc != 0 ]; then
	test_skip 'a Zephyr-shaped job on a QEMU Cortex-M3' "$(tail -1 "$TMP/image.err")"
	test_done
	exit
fi

mkdir -p "$LAB/devices" "$TMP/art"
cp "$TOP/devices/qemu-cortex-m.conf" "$LAB/devices/"
cp "$IMAGE" "$TMP/art/test_task-zephyr.bin"
cat >"$LAB/labd.conf" <<CONF
lab_name = "cortex-m-lab";
state_dir = "state";
devices_dir = "devices";
artifact_dir = "$TMP/art";
CONF
labd_start
at_exit labd_stop

# LAVA's zephyr-qemu-test-task.yaml, for this lab's type and image
write_job "$TMP/zephyr.yaml" <<JOB
device_type: qemu-cortex-m3
job_name: 'zephyr-upstream kernel-task-api-test'
timeouts: {job: {minutes: 2}, action: {minutes: 1}}
priority: medium
visibility: public
context:
  arch: arm
  cpu: cortex-m3
  machine: lm3s6965evb
  model: 'model=stellaris'
  serial: '-serial mon:stdio'
  vga: '-vga none'
actions:
- deploy:
    timeout: {minutes: 1}
    to: tmpfs
    images:
        zephyr:
          image_arg: '-kernel {zephyr}'
          url: file://$TMP/art/test_task-zephyr.bin
- boot:
    method: qemu
    timeout: {minutes: 1}
- test:
    monitors:
    - name: Test_Microkernel_Task_API
      start: tc_start()
      end: PROJECT EXECUTION
      pattern: (?P<result>(PASS|FAIL))\s-\s(?P<test_case_id>\w+)
      fixupdict:
        PASS: pass
        FAIL: fail
JOB

test_expect_success 'the Zephyr-shaped job completes with the monitors'\'' results from UART0' '
	labctl submit --follow "$TMP/zephyr.yaml" >"$TMP/follow.out" 2>&1 &&
	grep -q "job 1: complete, 3 passed, 0 failed" "$TMP/follow.out" &&
	labctl results 1 >"$TMP/results" &&
	grep -q "Test_Microkernel_Task_API.test_task_sum .*pass" "$TMP/results" &&
	grep -q "Test_Microkernel_Task_API.test_task_printf .*pass" "$TMP/results" &&
	grep -q "QEMU arguments of the job: -kernel .*/test_task-zephyr.bin" "$LAB/state/jobs/1/labd.log" &&
	grep -q "^PROJECT EXECUTION SUCCESSFUL" "$LAB/state/jobs/1/console.log"
'

test_expect_success 'the image is an ARM Cortex-M flash image built by arm-none-eabi-gcc' '
	[ "$(stat -c %s "$IMAGE")" -lt 65536 ] &&
	grep -qa "Booting Zephyr OS" "$IMAGE"
'

test_done
