# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/lib.sh -- a lab of QEMU boards for the scenario tests and benchmarks,
# sourced after tests/lib.sh:
#
#   qemu_open 'QEMU boots' x86_64  # the fixtures, or the test skips and ends;
#                                  # labd.conf in $LAB: the QEMU types, boards, artifact server
#   labd_start
#   qemu_job jobs/qemu-x86_64.yaml "$TMP/x86.yaml"   # the example job, on our server
#
# Boards: those of devices/qemu.conf: qemu-x86-01 (qemu-x86_64), qemu-arm64-01
# (qemu-arm64), qemu-armhf-01 (qemu-armhf), qemu-x86-ipxe-01 (qemu-x86_64-ipxe),
# qemu-x86-uefi-01 (qemu-x86_64-uefi), tagged "qemu".  Real firmware:
# qemu_firmware ipxe|uefi says whether it is installed; qemu_uefi_grub makes
# the UEFI board's network GRUB.
# The artifact server serves the fixture cache ($QEMU_FIX), or qemu_lab's
# directory, at $ART_URL; its access log is $TMP/artifacts.log.

QEMU_PREPARE=$TOP/tests/qemu/prepare.sh

# qemu_fixtures ARCH...: fetch or reuse the kernels and initramfs images; sets
# QEMU_FIX, or QEMU_SKIP (why not) and fails.
qemu_fixtures() {
	local rc=0 a
	for a in "$@"; do
		case $a in
		x86_64) command -v qemu-system-x86_64 >/dev/null ||
				{ QEMU_SKIP="no qemu-system-x86_64 (apt-get install qemu-system-x86)"; return 1; } ;;
		arm64) command -v qemu-system-aarch64 >/dev/null && [ -e /usr/lib/u-boot/qemu_arm64/u-boot.bin ] ||
				{ QEMU_SKIP="no qemu-system-aarch64 or u-boot-qemu"; return 1; } ;;
		armhf) command -v qemu-system-arm >/dev/null && [ -e /usr/lib/u-boot/qemu_arm/u-boot.bin ] ||
				{ QEMU_SKIP="no qemu-system-arm or u-boot-qemu"; return 1; } ;;
		esac
	done
	QEMU_FIX=$("$QEMU_PREPARE" "$@" 2>"$TMP/prepare.err") || rc=$?
	[ $rc = 0 ] && return 0
	QEMU_SKIP=$(tail -1 "$TMP/prepare.err")
	[ -n "$QEMU_SKIP" ] || QEMU_SKIP="tests/qemu/prepare.sh failed with status $rc"
	return 1
}

# qemu_open DESC ARCH...: every QEMU test's opening: the fixtures of ARCH...
# and the QEMU lab (qemu_lab); without them the whole test is one skip, DESC
# with the reason, and the script ends.
qemu_open() {
	local desc=$1
	shift
	if ! qemu_fixtures "$@"; then
		test_skip "$desc" "$QEMU_SKIP"
		test_done
		exit
	fi
	qemu_lab
}

# qemu_lab [DIR]: labd.conf and boards in $LAB, and the artifact server of DIR
# (default: the fixtures, $QEMU_FIX) at $ART_URL; guests reach it at $ART_GUEST_URL.
qemu_lab() {
	local dir=${1:-$QEMU_FIX}
	mkdir -p "$LAB/devices"
	# the QEMU types and one board of each, as an admin would start from them
	cp "$TOP/devices/qemu.conf" "$LAB/devices/00-qemu.conf"
	cat >"$LAB/labd.conf" <<CONF
lab_name = "qemu-test-lab";
state_dir = "state";
devices_dir = "devices";
artifact_dir = "$dir";
CONF
	ART_PORT=$(free_port)
	ART_URL=http://127.0.0.1:$ART_PORT
	ART_GUEST_URL=http://10.0.2.2:$ART_PORT	# QEMU's user network: the host is 10.0.2.2
	$PY -m http.server "$ART_PORT" --bind 127.0.0.1 --directory "$dir" \
		>"$TMP/artifacts.log" 2>&1 &
	at_exit "kill $!"
	wait_for "curl -sf $ART_URL/ -o /dev/null" 10
}

# qemu_firmware ipxe|uefi: whether Debian's iPXE ROM, or OVMF and GRUB's EFI
# modules, are installed; sets QEMU_SKIP and fails when not.
qemu_firmware() {
	case $1 in
	ipxe) [ -e /usr/lib/ipxe/qemu/efi-virtio.rom ] ||
		{ QEMU_SKIP="no iPXE ROM for QEMU (apt-get install ipxe-qemu)"; return 1; } ;;
	uefi) [ -e /usr/share/OVMF/OVMF_CODE_4M.fd ] ||
		{ QEMU_SKIP="no OVMF (apt-get install ovmf)"; return 1; }
	      command -v grub-mkstandalone >/dev/null && [ -d /usr/lib/grub/x86_64-efi ] ||
		{ QEMU_SKIP="no GRUB EFI modules (apt-get install grub-efi-amd64-bin)"; return 1; } ;;
	esac
}

# qemu_uefi_grub TFTP_ROOT: the UEFI board's network GRUB in TFTP_ROOT/labd-grub/
# (tests/qemu/uefi-grub.sh), with the lab image from the fixtures.
qemu_uefi_grub() {
	"$TOP/tests/qemu/uefi-grub.sh" "$1" "$QEMU_FIX" >"$TMP/uefi-grub.log" 2>&1 ||
		{ cat "$TMP/uefi-grub.log"; return 1; }
}

# qemu_job SRC DEST: the job SRC with its artifact server replaced by ours.
qemu_job() {
	sed "s|http://127.0.0.1:8642|$ART_URL|g" "$1" >"$2"
}

# qemu_running BOARD: whether a QEMU of BOARD runs (its serial log is open).
qemu_running() {
	local log=$LAB/state/boards/$1/qemu-serial.log p
	for p in $(pgrep -f "qemu-system-.*$log" 2>/dev/null); do
		return 0
	done
	return 1
}
