#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-qemu-firmware.sh -- labd's overhead on boots through real firmware: an
# x86_64 QEMU board through iPXE and through OVMF + GRUB EFI, from QEMU's start
# to the shell prompt, driven by labd's bootloader engine (the job's phases
# power-on -> shell) and by a minimal console reader (qemu-expect.py --chat)
# running the same QEMU command line and typing the same commands (with the
# same 10 ms between keys for iPXE) without waiting for their echo.  BENCH_FW_RUNS runs each (default 3), interleaved.
# Prints figures; asserts nothing about them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/qemu/lib.sh"

RUNS=${BENCH_FW_RUNS:-3}
PROMPT='root@guest:[^#]*# '
ARGS="console=ttyS0 panic=-1 no_timer_check "

if ! qemu_fixtures x86_64; then
	echo "qemu-firmware: skipped: $QEMU_SKIP"
	exit 0
fi
qemu_lab
mkdir -p "$LAB/state/tftp" "$TMP/tftp/base"
have_ipxe=1 have_uefi=1
qemu_firmware ipxe || { have_ipxe=; echo "qemu-firmware: iPXE skipped: $QEMU_SKIP"; }
qemu_firmware uefi || { have_uefi=; echo "qemu-firmware: GRUB EFI skipped: $QEMU_SKIP"; }
[ -n "$have_ipxe$have_uefi" ] || exit 0
if [ -n "$have_uefi" ]; then
	qemu_uefi_grub "$LAB/state/tftp"
	qemu_uefi_grub "$TMP/tftp"
fi
cp "$QEMU_FIX/x86_64/bzImage" "$QEMU_FIX/x86_64/initrd.cpio.gz" "$TMP/tftp/base/"
labd_start
at_exit labd_stop

sha() { sha256sum "$QEMU_FIX/$1" | cut -c1-64; }

# job TYPE METHOD: the benchmark job for a firmware board.
job() {
	cat <<JOB
job_name: bench x86_64 boot through $2
device_type: $1
timeouts: {job: {minutes: 4}, connection: {minutes: 2}}
actions:
- deploy:
    to: tftp
    kernel: {url: $ART_URL/x86_64/bzImage, sha256sum: $(sha x86_64/bzImage)}
    ramdisk: {url: $ART_URL/x86_64/initrd.cpio.gz, sha256sum: $(sha x86_64/initrd.cpio.gz)}
- boot:
    method: $2
    commands: ramdisk
    prompts: ['$PROMPT']
- test:
    interactive:
    - name: smoke
      prompts: ['$PROMPT']
      script:
      - {command: 'echo MARK-\$((6*7))', name: echo, successes: [{message: MARK-42}]}
JOB
}

# The QEMU command lines labd runs for the two device types (devices/qemu.conf).
common=(qemu-system-x86_64 -display none -monitor none
	-chardev "socket,id=labd-serial,fd={FD},logfile=$TMP/baseline-serial.log" -serial chardev:labd-serial
	-accel tcg -m 256 -nodefaults -no-reboot)
ipxe_argv=("${common[@]}" -machine graphics=off -netdev "user,id=net0,tftp=$TMP/tftp"
	-device virtio-net-pci,netdev=net0 -boot n)
ipxe_chat=(--delay 10 --chat 'Press Ctrl-B for the iPXE command line' '\x02'
	--chat 'iPXE> ' 'dhcp\n'
	--chat 'iPXE> ' "kernel tftp://10.0.2.2/base/bzImage $ARGS\\n"
	--chat 'iPXE> ' 'initrd tftp://10.0.2.2/base/initrd.cpio.gz\n'
	--chat 'iPXE> ' 'boot\n')
uefi_argv=("${common[@]}" -machine q35 -boot menu=on,splash-time=2000
	-drive if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd
	-drive if=pflash,format=raw,snapshot=on,file=/usr/share/OVMF/OVMF_VARS_4M.fd
	-netdev "user,id=net0,tftp=$TMP/tftp,bootfile=labd-grub/grubx64.efi"
	-device virtio-net-pci,netdev=net0,romfile=)
grub_chat=(--chat 'for a command-line' 'c'
	--chat 'grub> ' "linux (tftp,10.0.2.2)/base/bzImage $ARGS\\n"
	--chat 'grub> ' 'initrd (tftp,10.0.2.2)/base/initrd.cpio.gz\n'
	--chat 'grub> ' 'boot\n')

# shell_time ID: the job's power-on -> shell time from its phases.
shell_time() {
	labctl show "$1" --json |
		$PY -c 'import json,sys; p={x["phase"]: x["t"] for x in json.load(sys.stdin)["phases"]}; print("%.3f" % (p["shell"] - p["power-on"]))'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure NAME TYPE METHOD ARGV-NAME CHAT-NAME: RUNS of each, interleaved, and the figures.
measure() {
	local name=$1 id i
	local -n argv=$4 chat=$5
	job "$2" "$3" >"$TMP/$name.yaml"
	: >"$TMP/$name.labd" && : >"$TMP/$name.base"
	labctl submit --follow "$TMP/$name.yaml" >"$TMP/warmup.out" 2>&1 ||
		{ echo "qemu-firmware: the $name warm-up job failed:"; tail -20 "$TMP/warmup.out"; exit 1; }
	for i in $(seq "$RUNS"); do
		labctl submit --follow "$TMP/$name.yaml" >"$TMP/job.out" 2>&1 ||
			{ echo "qemu-firmware: $name job failed:"; tail -20 "$TMP/job.out"; exit 1; }
		id=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$TMP/job.out" | tail -1)
		shell_time "$id" >>"$TMP/$name.labd"
		"$TOP/tests/bench/qemu-expect.py" "$PROMPT" "${chat[@]}" -- "${argv[@]}" \
			>>"$TMP/$name.base" ||
			{ echo "qemu-firmware: the $name baseline did not reach the prompt"; exit 1; }
	done
	local l b
	l=$(median <"$TMP/$name.labd")
	b=$(median <"$TMP/$name.base")
	echo "qemu-firmware: $name, QEMU start -> shell prompt, $RUNS runs each, medians"
	echo "qemu-firmware:   labd (job phases power-on -> shell)  $l s   [$(tr '\n' ' ' <"$TMP/$name.labd")]"
	echo "qemu-firmware:   minimal console reader             $b s   [$(tr '\n' ' ' <"$TMP/$name.base")]"
	awk -v a="$l" -v b="$b" -v n="$name" \
		'BEGIN { printf "qemu-firmware:   %s: labd / minimal = %.3f (labd overhead %+.1f%%)\n", n, a / b, (a / b - 1) * 100 }'
}

echo "qemu-firmware: x86_64 $(cat "$QEMU_FIX/x86_64/kernel-version") (bzImage), load average $(cut -d' ' -f1 /proc/loadavg)"
[ -z "$have_ipxe" ] || measure ipxe qemu-x86_64-ipxe ipxe ipxe_argv ipxe_chat
[ -z "$have_uefi" ] || measure grub-efi qemu-x86_64-uefi grub-efi uefi_argv grub_chat
