#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t4310-lava-import.sh -- labd import-lava-device: LAVA's device dictionaries
# (shared/lava/lava-devices: jinja2 as admins write them, and rendered YAML)
# as board files that labd check-config accepts, with what was not converted:
# the type named as LAVA names it (a LAVA job for it checks out against labd),
# every boot method labd has (u-boot, barebox, grub, grub-efi, ipxe, uefi-menu,
# fastboot, qemu), the jobs' extra_kernel_args, keys LAVA's templates render twice.
. "$(dirname "$0")/lib.sh"

# shared/ next to the checkout (or next to the worktrees' directory)
DICTS=${LAVA_DEVICES:-$TOP/../shared/lava/lava-devices}
[ -d "$DICTS" ] || [ -n "${LAVA_DEVICES:-}" ] || DICTS=$TOP/../../shared/lava/lava-devices
if [ ! -d "$DICTS" ]; then
	test_skip 'import-lava-device' "no LAVA device dictionaries at $DICTS (set LAVA_DEVICES)"
	test_done
	exit 0
fi

mkdir -p "$LAB/devices"
printf 'state_dir = "state";\ndevices_dir = "devices";\n' >"$LAB/labd.conf"

# import NAME FILE [ARGS...]: the board file in $LAB/devices/NAME.conf, notes in $TMP/NAME.notes
import() {
	local name=$1 file=$2
	shift 2
	"$LABD" import-lava-device "$@" "$DICTS/$file" >"$LAB/devices/$name.conf" \
		2>"$TMP/$name.notes"
}

check() {
	"$LABD" check-config -c "$LAB/labd.conf" >"$TMP/check" 2>&1 || { cat "$TMP/check"; return 1; }
}

# a rendered dictionary as lava-server renders one: its hostname and device type set
sed 's/^hostname: .*/hostname: bbb-01/; s/^devicetype: .*/devicetype: beaglebone-black/' \
	"$DICTS/rendered__bbb-01.yaml" >"$TMP/bbb-01.yaml"

t_rendered() {
	"$LABD" import-lava-device "$TMP/bbb-01.yaml" >"$LAB/devices/bbb.conf" 2>"$TMP/bbb.notes" &&
	cat "$LAB/devices/bbb.conf" &&
	check && grep -q "1 device types, 1 devices" "$TMP/check" &&
	grep -q 'name = "bbb-01";' "$LAB/devices/bbb.conf" &&
	grep -q 'name = "beaglebone-black";' "$LAB/devices/bbb.conf" &&
	grep -q 'type = "beaglebone-black";' "$LAB/devices/bbb.conf" &&
	grep -q 'context_allowed = ( "extra_kernel_args" );' "$LAB/devices/bbb.conf" &&
	grep -q "\"setenv bootargs 'console=ttyO0,115200n8 root=/dev/ram0  ip=dhcp {EXTRA_KERNEL_ARGS}'\"" \
		"$LAB/devices/bbb.conf" &&
	grep -q 'driver = "telnet";' "$LAB/devices/bbb.conf" &&
	grep -q 'port = 6000;' "$LAB/devices/bbb.conf" &&
	grep -q 'reset = "/usr/bin/pduclient --daemon localhost --hostname pdu --command reboot --port 08";' \
		"$LAB/devices/bbb.conf" &&
	grep -q 'default_commands = "ramdisk";' "$LAB/devices/bbb.conf" &&
	grep -q '"tftp {DTB_ADDR} {DTB}"' "$LAB/devices/bbb.conf" &&
	! grep -q 'TEE' "$LAB/devices/bbb.conf" &&
	grep -q 'char_delay = 0.01;' "$LAB/devices/bbb.conf" &&
	grep -q "\"setenv bootargs .console=ttyO0,115200n8 root=/dev/nfs rw nfsroot={NFS_SERVER_IP}:{NFSROOTFS},tcp,hard  ip=dhcp {EXTRA_KERNEL_ARGS}.\"" \
		"$LAB/devices/bbb.conf" &&
	! grep -q "u-boot commands 'nfs': .* needs" "$TMP/bbb.notes" &&
	grep -q "u-boot commands 'ramdisk': the TEE/DTBO lines" "$TMP/bbb.notes"
}
test_expect_success "a rendered dictionary: LAVA's device type and a board, check-config ok" t_rendered

# A LAVA job for the type checks out against a labd running the imported board;
# a dictionary that does not name its type says so, and --type names it.
t_lava_job() {
	labd_start &&
	"$LABCTL_BIN" --url "$LABD_URL" check \
		"${DICTS%/lava-devices}/lava-jobs/tests_lava_dispatcher_sample_jobs__bbb-uboot-interactive.yaml" \
		>"$TMP/out" 2>&1 ; cat "$TMP/out" &&
	grep -q "bbb-uboot-interactive.yaml: ok$" "$TMP/out" &&
	"$LABD" import-lava-device "$DICTS/rendered__bbb-01.yaml" 2>"$TMP/notes" >/dev/null &&
	grep -q "does not name its device type (devicetype is empty): named 'rendered__bbb-01-type'" "$TMP/notes" &&
	"$LABD" import-lava-device --type beaglebone-black "$DICTS/rendered__bbb-01.yaml" 2>/dev/null |
		grep -q 'name = "beaglebone-black";'
}
test_expect_success "a LAVA job for beaglebone-black matches the imported board" t_lava_job

t_jinja() {
	import bbb-jinja tests_lava_scheduler_app_devices__bbb-01.jinja2 --name bbb-02 &&
	check && grep -q "1 device types, 2 devices" "$TMP/check" &&
	grep -q "'mac_addr': a variable of LAVA's template 'beaglebone-black.jinja2'" \
		"$TMP/bbb-jinja.notes" &&
	import x15 tests_lava_scheduler_app_devices__x15-01.jinja2 &&
	grep -q 'type = "x15";' "$LAB/devices/x15.conf" &&
	grep -q 'on = "/usr/local/lab-scripts/snmp_pdu_control --hostname pdu14 --command on --port 5 --delay 20 && /usr/local/lab-scripts/eth008_control -a 10.0.9.2 -r 3 -s onoff";' \
		"$LAB/devices/x15.conf" &&
	grep -q "'adb_serial_number'" "$TMP/x15.notes" &&
	import rzn1d tests_lava_scheduler_app_devices__rzn1d-01.jinja2 &&
	grep -q "commands 'users': labd runs no host commands besides power" "$TMP/rzn1d.notes" &&
	grep -q 'host = "localhost";' "$LAB/devices/rzn1d.conf"
}
test_expect_success 'jinja2 dictionaries: extends, set over several lines, lists of commands' t_jinja

t_connections() {
	import imx tests_lava_scheduler_app_devices__imx8dxl-evk-01.jinja2 &&
	cat "$LAB/devices/imx.conf" "$TMP/imx.notes" &&
	grep -q 'driver = "telnet";' "$LAB/devices/imx.conf" &&
	import hikey rendered__imx8mq-evk-01.yaml &&
	grep -q 'driver = "telnet";' "$LAB/devices/hikey.conf"
}
test_expect_success 'connection lists: the primary connection is the console' t_connections

# has FILE TEXT...: each TEXT is a line of FILE (fixed strings)
has() {
	local f=$1 t
	shift
	for t; do grep -qF -- "$t" "$f" || { echo "$f lacks: $t"; return 1; }; done
}

# Every boot method labd has, each type checked by check-config with its board.
t_methods() {
	rm -f "$LAB/devices/"*.conf &&
	import barebox rendered__bbb-03-barebox.yaml --type bbb-barebox &&
	has "$LAB/devices/barebox.conf" 'boot_methods = [ "minimal", "barebox" ];' 'barebox = {' \
		'interrupt_prompt = "stop autoboot";' \
		'bootloader_prompt = "TI AM335x BeagleBone black:/";' \
		'default_commands = "ramdisk";' &&
	import x86 rendered__x86-01.yaml --type x86 &&
	has "$LAB/devices/x86.conf" 'boot_methods = [ "minimal", "ipxe" ];' 'ipxe = {' \
		'interrupt_char = "\x02";' 'LAVA_MAC = "00:90:05:af:00:7d";' \
		'"set extraargs  ip=dhcp {EXTRA_KERNEL_ARGS}"' &&
	import hikey rendered__hi6220-hikey-01.yaml --type hi6220-hikey &&
	has "$LAB/devices/hikey.conf" \
		'boot_methods = [ "minimal", "fastboot", "grub-efi", "uefi-menu" ];' \
		'uefi-menu = {' 'fastboot = ( "boot from eMMC" );' 'serial = "' &&
	grep -q "hi6220-hikey-01.yaml:149: warning: duplicate key 'flash_cmds_order' (also at line 140): the value of line 149 is used" \
		"$TMP/hikey.notes" &&
	import qemu rendered__qemu01.yaml --type qemu &&
	has "$LAB/devices/qemu.conf" 'boot_methods = [ "minimal", "qemu" ];' \
		'binary = "qemu-system-x86_64";' 'append = "root=/dev/sda1 console=ttyS0,115200";' \
		'driver = "qemu";' '"-m", "1024"' &&
	! grep -q -- '"-nographic"' "$LAB/devices/qemu.conf" &&
	import juno rendered__juno-uboot-01.yaml --type juno-uboot &&
	grep -q "juno-uboot-01.yaml:147: warning: duplicate key 'parameters' (also at line [0-9]*): the value of line 147 is used" \
		"$TMP/juno.notes" &&
	import db410c rendered__db410c-01.yaml --type dragonboard-410c &&
	has "$LAB/devices/db410c.conf" '"fastboot"' 'serial = "c2e02318";' &&
	check && cat "$TMP/check"
}
test_expect_success 'barebox, ipxe, uefi-menu, grub-efi, fastboot, qemu; keys rendered twice' t_methods

t_refused() {
	rm -f "$LAB/devices/"*.conf &&
	echo 'just: [text' >"$TMP/garbage.yaml" &&
	test_must_fail "$LABD" import-lava-device "$TMP/garbage.yaml" >"$TMP/out" 2>"$TMP/err" &&
	grep -q "cannot import" "$TMP/err" && [ ! -s "$TMP/out" ] &&
	echo '{% set a = 1 %}' >"$TMP/noextends.jinja2" &&
	test_must_fail "$LABD" import-lava-device "$TMP/noextends.jinja2" 2>"$TMP/err" &&
	grep -q "no '{% extends 'TYPE.jinja2' %}' line" "$TMP/err" &&
	test_must_fail "$LABD" import-lava-device 2>"$TMP/err" && grep -q "needs a device dictionary" "$TMP/err"
}
test_expect_success 'what is no dictionary is refused with the reason' t_refused

t_all() {
	n=0 &&
	for f in "$DICTS"/*.jinja2 "$DICTS"/*.yaml; do
		"$LABD" import-lava-device "$f" >/dev/null 2>"$TMP/one" || continue
		n=$((n + 1))
	done &&
	say "$n of $(ls "$DICTS" | wc -l) dictionaries imported" &&
	[ "$n" -ge 41 ]
}
test_expect_success 'every dictionary of the LAVA tree imports, or says why not' t_all

test_done
