#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2300-qemu-x86-firmware.sh -- a real Debian x86_64 kernel to a shell through
# real firmware, driven by the bootloader engine: iPXE (Debian's ipxe-qemu ROM,
# Ctrl-B, dhcp, kernel/initrd over TFTP), GRUB EFI (OVMF PXE-boots a GRUB made
# by grub-mkstandalone; 'c' at its menu, linux/initrd over TFTP) and OVMF's
# boot manager menu (entries selected by their text); each with a failure.
# test-serial: tests/run runs it alone (QEMU's emulation or the chaos load take the CPUs;
# its timing must not compete with other tests)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"

qemu_open 'x86_64 QEMU boots through iPXE, GRUB EFI and the UEFI menu' x86_64
mkdir -p "$LAB/state/tftp"
have_ipxe=1 have_uefi=1
qemu_firmware ipxe || { have_ipxe=; IPXE_SKIP=$QEMU_SKIP; }
qemu_firmware uefi || { have_uefi=; UEFI_SKIP=$QEMU_SKIP; }
[ -z "$have_uefi" ] || qemu_uefi_grub "$LAB/state/tftp"
labd_start
at_exit labd_stop

# fw_job FILE TYPE METHOD DEPLOY [BOOT KEYS...]: boot, then an interactive smoke test.
fw_job() {
	local file=$1 type=$2 method=$3 deploy=$4 extra=
	shift 4
	for k in "$@"; do
		extra="$extra
    $k"
	done
	write_job "$file" <<JOB
job_name: x86_64 through $method
device_type: $type
timeouts: {job: {minutes: 4}, action: {minutes: 2}, connection: {minutes: 1}}
actions:
$deploy
- boot:
    method: $method$extra
    prompts: ['root@guest:[^#]*# ']
- test:
    interactive:
    - name: smoke
      prompts: ['root@guest:[^#]*# ']
      script:
      - command: echo MARK-\$((6*7)) \$(uname -m)
        name: echo
        successes: [{message: 'MARK-42 x86_64'}]
JOB
}

TFTP_DEPLOY="- deploy:
    to: tftp
    kernel: {url: '$ART_URL/x86_64/bzImage'}
    ramdisk: {url: '$ART_URL/x86_64/initrd.cpio.gz'}"

# has FILE PATTERN: grep -q, showing the end of FILE when PATTERN is not there.
has() {
	grep -q "$2" "$1" || { echo "no '$2' in $1:"; tail -5 "$1"; return 1; }
}

powered_off() {
	! qemu_running "$1"
}

if [ -n "$have_ipxe" ]; then
test_expect_success 'jobs/qemu-x86_64-ipxe.yaml: Ctrl-B, dhcp, kernel and initrd over TFTP, shell' '
	qemu_job "$TOP/jobs/qemu-x86_64-ipxe.yaml" "$TMP/ipxe.yaml" &&
	submit_follow "$TMP/ipxe.yaml" 0 &&
	has "$TMP/follow.out" "smoke.echo .*pass\|complete, 1 passed" &&
	id=$(job_id) &&
	console=$LAB/state/jobs/$id/console.log &&
	grep -q "iPXE> kernel tftp://10.0.2.2/$id/bzImage console=ttyS0" "$console" &&
	grep -q "BOOT-INIT: Linux .* x86_64" "$console" &&
	powered_off qemu-x86-ipxe-01
'

test_expect_success 'iPXE: a file missing on TFTP is an infrastructure error, board off' '
	fw_job "$TMP/ipxe-missing.yaml" qemu-x86_64-ipxe ipxe "$TFTP_DEPLOY" \
		"commands: [dhcp, \"kernel tftp://{SERVER_IP}/{KERNEL}.missing\", boot]" &&
	submit_follow "$TMP/ipxe-missing.yaml" 2 &&
	has "$TMP/follow.out" "incomplete (infrastructure): ipxe error after kernel tftp://10.0.2.2/[0-9]*/bzImage.missing: tftp://10.0.2.2/[0-9]*/bzImage.missing... No such file or directory (http://ipxe.org/" &&
	powered_off qemu-x86-ipxe-01
'
else
	test_skip 'iPXE boots' "$IPXE_SKIP"
fi

if [ -n "$have_uefi" ]; then
test_expect_success 'jobs/qemu-x86_64-grub-efi.yaml: OVMF PXE, c at the menu, linux and initrd, shell' '
	qemu_job "$TOP/jobs/qemu-x86_64-grub-efi.yaml" "$TMP/grub.yaml" &&
	submit_follow "$TMP/grub.yaml" 0 &&
	id=$(job_id) &&
	console=$LAB/state/jobs/$id/console.log &&
	grep -q "NBP filename is labd-grub/grubx64.efi" "$console" &&
	grep -q "BOOT-INIT: Linux .* x86_64" "$console" &&
	labctl show "$id" >"$TMP/show" &&
	grep -q "phases: *power-on [0-9.]*s, bootloader-prompt [0-9.]*s, bootloader-final [0-9.]*s, kernel-start [0-9.]*s, shell [0-9.]*s" "$TMP/show" &&
	powered_off qemu-x86-uefi-01
'

test_expect_success 'GRUB EFI: a file missing on TFTP is an infrastructure error' '
	fw_job "$TMP/grub-missing.yaml" qemu-x86_64-uefi grub-efi "$TFTP_DEPLOY" \
		"commands: [\"linux (tftp,{SERVER_IP})/{KERNEL}.missing\", boot]" &&
	submit_follow "$TMP/grub-missing.yaml" 2 &&
	has "$TMP/follow.out" "incomplete (infrastructure): grub-efi error after linux (tftp,10.0.2.2)/[0-9]*/bzImage.missing: error: File not found." &&
	powered_off qemu-x86-uefi-01
'

test_expect_success 'UEFI menu: Boot Manager, then the PXE entry, by their text; shell' '
	fw_job "$TMP/menu.yaml" qemu-x86_64-uefi uefi-menu "" "commands: network" &&
	submit_follow "$TMP/menu.yaml" 0 &&
	id=$(job_id) &&
	has "$TMP/follow.out" "uefi-menu: selecting .Boot Manager." &&
	has "$TMP/follow.out" "uefi-menu: selecting .UEFI PXEv4 (MAC:525400123456)." &&
	grep -q "BOOT-INIT: Linux .* x86_64" "$LAB/state/jobs/$id/console.log" &&
	powered_off qemu-x86-uefi-01
'

test_expect_success 'UEFI menu: an entry that is not there is a job error naming those seen' '
	fw_job "$TMP/menu-bad.yaml" qemu-x86_64-uefi uefi-menu "" \
		"commands: [Boot Manager, UEFI HTTPv9]" &&
	submit_follow "$TMP/menu-bad.yaml" 2 &&
	has "$TMP/follow.out" "incomplete (job): uefi-menu: no menu entry .UEFI HTTPv9. (seen: .UEFI PXEv4 (MAC:525400123456)., .UEFI PXEv6" &&
	powered_off qemu-x86-uefi-01
'
else
	test_skip 'GRUB EFI and UEFI menu boots' "$UEFI_SKIP"
fi

test_done
