#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t3300-usb-drivers.sh -- the usb-hub, ykush and gpio power drivers through power-tool,
# on USB devices emulated by umockdev (this host has no USB and no GPIO at all)
#
# Each case runs tests/helper/power-tool under umockdev-run with the hand-written
# descriptions of tests/usb/ and, for the libusb paths, a usbmon capture that
# tests/usb/mkpcap.py writes from the transfers the case expects.  umockdev
# replays the capture in order: a request labd did not make, or made
# differently, leaves the replay stuck and the case fails by timeout.
. "$(dirname "$0")/lib.sh"

TOOL=$BUILD/tests/helper/power-tool
USB=$TOP/tests/usb
PCI=/sys/devices/pci0000:00/0000:00:14.0

# umockdev's preload library comes before ASan's runtime in a SANITIZE=1 build.
export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

if ! command -v umockdev-run >/dev/null; then
	test_skip "USB drivers on emulated devices" "umockdev-run is not installed (make deps)"
	test_done
	exit 0
fi

# pcap NAME: a capture $TMP/NAME.pcap from the transfer list on stdin.
pcap() {
	cat >"$TMP/$1.spec"
	$PY "$USB/mkpcap.py" "$TMP/$1.spec" "$TMP/$1.pcap"
}

# mock ARGS... -- CMD: umockdev-run with the root hubs and the given options.
mock() {
	umockdev-run -d "$USB/roothubs.umockdev" "$@"
}

# power DESCRIPTION [UMOCKDEV-ARGS...] -- SETTINGS OP: power-tool in a testbed;
# output in $out, status in $rc (power itself succeeds: the case checks $rc).
power() {
	local desc=$1 args=()
	shift
	while [ "$1" != "--" ]; do args+=("$1"); shift; done
	shift
	rc=0
	out=$(mock -d "$USB/$desc.umockdev" "${args[@]}" -- "$TOOL" -n board-1 -t 5 "$@" 2>&1) || rc=$?
	echo "power-tool $* -> $rc: $out"
}

# A hub description whose port 2 has the kernel's disable file.
sed 's|^A: maxchild=4$|A: maxchild=4\nA: 1-1:1.0/1-1-port2/disable=0|' "$USB/hub.umockdev" \
	>"$TMP/hub-sysfs.umockdev"
cp "$USB/hub.umockdev" "$TMP/hub.umockdev"

test_expect_success 'usb-hub: sysfs path writes the port disable file' '
	out=$(mock -d "$TMP/hub-sysfs.umockdev" -- sh -c "$TOOL '"'"'driver = \"usb-hub\"; location = \"1-1\"; port = 2; companion = false;'"'"' off &&
		cat /sys/bus/usb/devices/1-1/1-1:1.0/1-1-port2/disable") &&
	echo "$out" &&
	[ "$out" = "$(printf "ok\n1")" ]
'

test_expect_success 'usb-hub: hub class requests over libusb, off repeated, state read back' '
	pcap hub-off <<-EOF &&
	device 1 2
	ctrl a0 06 2900 0000 000c reply=0929040900326400ff
	ctrl 23 01 0008 0002 0000
	ctrl 23 01 0008 0002 0000
	ctrl a3 00 0000 0002 0004 reply=00000000
	EOF
	power hub -p $PCI/usb1/1-1=$TMP/hub-off.pcap -- \
		"driver = \"usb-hub\"; location = \"1-1\"; port = 2; off_repeat = 2; companion = false;" off &&
	[ $rc = 0 ] && [ "$out" = ok ]
'

test_expect_success 'usb-hub: both halves of a USB3 hub are switched' '
	pcap hub2-on <<-EOF &&
	device 1 2
	ctrl a0 06 2900 0000 000c reply=0929040900326400ff
	ctrl 23 03 0008 0003 0000
	ctrl a3 00 0000 0003 0004 reply=01010000
	EOF
	pcap hub3-on <<-EOF &&
	device 2 2
	ctrl a0 06 2a00 0000 000c reply=0c2a0409003200000000ffff
	ctrl 23 03 0008 0003 0000
	ctrl a3 00 0000 0003 0004 reply=01020000
	EOF
	power hub -p $PCI/usb1/1-1=$TMP/hub2-on.pcap -p $PCI/usb2/2-1=$TMP/hub3-on.pcap -- \
		"driver = \"usb-hub\"; location = \"1-1\"; port = 3;" on &&
	[ $rc = 0 ] && [ "$out" = ok ]
'

test_expect_success 'usb-hub: a ganged hub fails clearly' '
	pcap hub-ganged <<-EOF &&
	device 1 2
	ctrl a0 06 2900 0000 000c reply=0929040800326400ff
	EOF
	power hub -p $PCI/usb1/1-1=$TMP/hub-ganged.pcap -- \
		"driver = \"usb-hub\"; location = \"1-1\"; port = 2; companion = false;" on &&
	[ $rc = 1 ] &&
	[ "$out" = "error: hub 1-1 has no per-port power switching (ganged)" ]
'

test_expect_success 'usb-hub: a hub that is not plugged in' '
	power hub -- "driver = \"usb-hub\"; location = \"1-4\"; port = 2;" off &&
	[ $rc = 1 ] && [ "$out" = "error: USB device at '"'"'1-4'"'"' not found" ]
'

test_expect_success 'usb-hub: no write access to the hub' '
	rc=0
	out=$(mock -d "$TMP/hub.umockdev" -- sh -c "chmod 000 \$UMOCKDEV_DIR/dev/bus/usb/001/002 &&
		setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search -- \
		$TOOL '"'"'driver = \"usb-hub\"; location = \"1-1\"; port = 2; companion = false;'"'"' off" 2>&1) || rc=$?
	echo "$rc: $out" &&
	[ $rc = 1 ] && [ "$out" = "error: cannot open hub 1-1: Permission denied" ]
'

# The read gets what is left of the 2 s (not the driver's 5 s a request), the
# core's own timer and message come a second later (see test-usbhub's timeout case).
test_expect_success 'usb-hub: the status read times out' '
	pcap hub-stuck <<-EOF &&
	device 1 2
	ctrl a0 06 2900 0000 000c reply=0929040900326400ff
	ctrl 23 03 0008 0002 0000
	ctrl a3 00 0000 0002 0004 noreply
	EOF
	rc=0
	out=$(mock -d "$USB/hub.umockdev" -p $PCI/usb1/1-1=$TMP/hub-stuck.pcap -- \
		"$TOOL" -t 2 "driver = \"usb-hub\"; location = \"1-1\"; port = 2; companion = false;" on 2>&1) || rc=$?
	echo "$rc: $out" &&
	[ $rc = 1 ] && echo "$out" | grep -q "^error: hub 1-1: reading the port status failed: Connection timed out$"
'

test_expect_success 'ykush: port 2 on and read back' '
	pcap yk-on <<-EOF &&
	device 1 3
	intr 01 64 data=1212 pad=64
	intr 81 64 reply=0112 pad=64
	intr 01 64 data=2222 pad=64
	intr 81 64 reply=0111 pad=64
	EOF
	power ykush -p $PCI/usb1/1-2=$TMP/yk-on.pcap -- \
		"driver = \"ykush\"; serial = \"YK31337\"; port = 2;" on &&
	[ $rc = 0 ] && [ "$out" = ok ]
'

test_expect_success 'ykush: cycle all ports' '
	pcap yk-cycle <<-EOF &&
	device 1 3
	intr 01 64 data=0a0a pad=64
	intr 81 64 reply=010a pad=64
	intr 01 64 data=2a2a pad=64
	intr 81 64 reply=01010101 pad=64
	intr 01 64 data=1a1a pad=64
	intr 81 64 reply=011a pad=64
	intr 01 64 data=2a2a pad=64
	intr 81 64 reply=01111111 pad=64
	EOF
	power ykush -p $PCI/usb1/1-2=$TMP/yk-cycle.pcap -- -d 0.1 \
		"driver = \"ykush\"; serial = \"YK31337\"; port = \"all\";" cycle &&
	[ $rc = 0 ] && [ "$out" = ok ]
'

test_expect_success 'ykush: the port stays up: the read-back says so' '
	pcap yk-stuck <<-EOF &&
	device 1 3
	intr 01 64 data=0101 pad=64
	intr 81 64 reply=0101 pad=64
	intr 01 64 data=2121 pad=64
	intr 81 64 reply=0111 pad=64
	EOF
	power ykush -p $PCI/usb1/1-2=$TMP/yk-stuck.pcap -- \
		"driver = \"ykush\"; serial = \"YK31337\"; port = 1;" off &&
	[ $rc = 1 ] &&
	[ "$out" = "error: port 1 of YKUSH '"'"'YK31337'"'"' is still up after power off" ]
'

test_expect_success 'ykush: a wrong serial number' '
	power ykush -- "driver = \"ykush\"; serial = \"YK00000\"; port = 1;" on &&
	[ $rc = 1 ] && [ "$out" = "error: YKUSH '"'"'YK00000'"'"' not found" ]
'

test_expect_success 'gpio: with no GPIO chip the real libgpiod fails cleanly' '
	rc=0
	out=$("$TOOL" -n board-1 "driver = \"gpio\"; chip = \"gpiochip0\"; line = 3;" on 2>&1) || rc=$?
	echo "$rc: $out" &&
	[ $rc = 1 ] && [ "$out" = "error: cannot open GPIO chip '"'"'gpiochip0'"'"': No such file or directory" ]
'

test_expect_success 'configuration errors name the file and line' '
	rc=0
	out=$("$TOOL" "driver = \"usb-hub\"; location = \"1-\"; port = 2;" on 2>&1) || rc=$?
	echo "$rc: $out"
	[ $rc = 2 ]
	echo "$out" | grep -q "invalid USB location .1-.: write the bus and port path"
	rc=0
	out=$("$TOOL" "driver = \"ykush\"; serial = \"Y\"; port = 9;" on 2>&1) || rc=$?
	echo "$rc: $out" &&
	[ $rc = 2 ] && echo "$out" | grep -q "<command line>:1: .port."
'

test_done
