#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2200-qemu-armhf-uboot.sh -- a real Debian armmp kernel (32-bit ARM) through real
# U-Boot: the qemu-armhf type, bootz of a zImage fetched over QEMU's TFTP server.
# test-serial: tests/run runs it alone (QEMU's emulation or the chaos load take the CPUs;
# its timing must not compete with other tests)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"

qemu_open 'armhf QEMU boots through U-Boot' armhf
labd_start
at_exit labd_stop

write_job "$TMP/armhf.yaml" <<JOB
job_name: armhf QEMU boot through U-Boot
device_type: qemu-armhf
timeouts: {job: {minutes: 4}, action: {minutes: 2}, connection: {minutes: 1}}
actions:
- deploy:
    to: tftp
    kernel: {url: $ART_URL/armhf/zImage, type: zimage}
    ramdisk: {url: $ART_URL/armhf/initrd.cpio.gz}
- boot:
    method: u-boot
    commands: ramdisk
    prompts: ['root@guest:[^#]*# ']
- test:
    interactive:
    - name: smoke
      prompts: ['root@guest:[^#]*# ']
      script:
      - {command: uname -m, name: machine, successes: [{message: 'armv7l'}]}
JOB

test_expect_success 'armhf: U-Boot, TFTP, bootz, a shell and a test' '
	labctl submit --follow "$TMP/armhf.yaml" >"$TMP/follow.out" 2>&1 &&
	id=$(sed -n "s/^job \([0-9]*\): .*/\1/p" "$TMP/follow.out" | tail -1) &&
	grep -q "job $id: complete, 1 passed" "$TMP/follow.out" &&
	grep -q "^=> bootz 0x40400000 0x44000000:\${initrd_size} \${fdtcontroladdr}" \
		"$LAB/state/jobs/$id/console.log" &&
	grep -q "BOOT-INIT: Linux .* armv7l" "$LAB/state/jobs/$id/console.log"
'

test_expect_success 'the armhf board is powered off' '
	! qemu_running qemu-armhf-01
'

test_done
