# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/lib.sh -- a lab of QEMU boards for the scenario tests and benchmarks,
# sourced after tests/lib.sh:
#
#   qemu_fixtures x86_64 || { test_skip 'QEMU boots' "$QEMU_SKIP"; test_done; exit; }
#   qemu_lab                   # labd.conf in $LAB: the QEMU types, boards, artifact server
#   labd_start
#   qemu_job jobs/qemu-x86_64.yaml "$TMP/x86.yaml"   # the example job, on our server
#
# Boards: those of devices/qemu.conf: qemu-x86-01 (qemu-x86_64), qemu-arm64-01
# (qemu-arm64), qemu-armhf-01 (qemu-armhf), tagged "qemu".
# The artifact server serves the fixture cache ($QEMU_FIX) at $ART_URL; its
# access log is $TMP/artifacts.log.

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

# qemu_lab: labd.conf and boards in $LAB, and the artifact server.
qemu_lab() {
	mkdir -p "$LAB/devices"
	# the QEMU types and one board of each, as an admin would start from them
	cp "$TOP/devices/qemu.conf" "$LAB/devices/00-qemu.conf"
	cat >"$LAB/labd.conf" <<CONF
lab_name = "qemu-test-lab";
state_dir = "state";
devices_dir = "devices";
artifact_dir = "$QEMU_FIX";
CONF
	ART_PORT=$(free_port)
	ART_URL=http://127.0.0.1:$ART_PORT
	$PY -m http.server "$ART_PORT" --bind 127.0.0.1 --directory "$QEMU_FIX" \
		>"$TMP/artifacts.log" 2>&1 &
	at_exit "kill $!"
	wait_for "curl -sf $ART_URL/ -o /dev/null" 10
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
