#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t3320-fastboot.sh -- deploy to: fastboot and boot: method: fastboot through `labd run-job`,
# on a board in fastboot mode emulated by umockdev (tests/usb/fastboot.umockdev)
#
# labd runs under umockdev-run: its libusb sees the emulated device, and the usbmon
# capture written for each case is what the device answers, in order.  The board's
# console and power are a simulated board; when labd sends "reboot", the script
# powers the simulated board on, as the real board would come out of fastboot.
. "$(dirname "$0")/lib.sh"

USB=$TOP/tests/usb
FB_SYSFS=/sys/devices/pci0000:00/0000:00:14.0/usb1/1-3
WWW=$TMP/www

# umockdev's preload library comes before ASan's runtime in a SANITIZE=1 build.
export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

if ! command -v umockdev-run >/dev/null; then
	test_skip "fastboot on an emulated board" "umockdev-run is not installed (make deps)"
	test_done
	exit 0
fi

mkdir -p "$WWW"
sim_start 1 --mode no-uboot
write_lab_conf
cat >>"$LAB/devices/00-sim-types.conf" <<'CONF'
device_type = {
	name = "sim-fastboot";
	extends = "sim-minimal";
	deploy_methods = [ "fastboot" ];
	boot_methods = [ "fastboot" ];
};
CONF
sim_device fb-01 0 sim-fastboot 'fastboot = { serial = "FB0001"; timeout = 5; };'

head -c $((200 * 1024)) /dev/urandom >"$WWW/boot.img"
HTTP_PORT=$(free_port)
$PY -m http.server "$HTTP_PORT" --bind 127.0.0.1 --directory "$WWW" >"$TMP/http.log" 2>&1 &
at_exit "kill $!"
wait_for "curl -sf http://127.0.0.1:$HTTP_PORT/boot.img -o /dev/null" 10
URL=http://127.0.0.1:$HTTP_PORT

# fb_job FILE [CONNECTION-S]: flash boot.img to "boot", reboot, log in, one command.
fb_job() {
	write_job "$1" <<JOB
job_name: fastboot
device_type: sim-fastboot
timeouts: {job: {minutes: 2}, connection: {seconds: ${2:-20}}}
actions:
- deploy:
    to: fastboot
    images:
      boot: {url: $URL/boot.img}
- boot:
    method: fastboot
    auto_login: {login_prompt: "login:", username: root}
    prompts: ["root@sim:~# "]
- test:
    interactive:
    - name: t
      prompts: ["root@sim:~# "]
      script:
      - {command: "echo ok-\$((6*7))", name: echo, successes: [{message: "ok-42"}]}
JOB
}

# The transfers of a flash of boot.img (two 128 KiB chunks at most) to "boot".
flash_spec() {
	local size hex
	size=$(stat -c %s "$WWW/boot.img")
	hex=$(printf %08x "$size")
	cat <<SPEC
device 1 4
bulk 01 - text=getvar:product
bulk 81 256 rtext=OKAYsim-board
bulk 01 - text=download:$hex
bulk 81 256 rtext=DATA$hex
bulk 01 - file=$WWW/boot.img:0:131072
bulk 01 - file=$WWW/boot.img:131072:$((size - 131072))
bulk 81 256 rtext=OKAY
bulk 01 - text=flash:boot
bulk 81 256 "rtext=INFOerasing 'boot'"
bulk 81 256 "rtext=INFOwriting 'boot'"
bulk 81 256 rtext=OKAY
SPEC
}

# The board answers "reboot" by booting: the script powers the simulated board on.
reboot_watcher() {
	(
		for _ in $(seq 600); do
			if grep -qs "fastboot: reboot" "$LAB"/state/jobs/*/labd.log; then
				sim_ctl power sim0 on >/dev/null
				exit 0
			fi
			sleep 0.05
		done
	) &
	at_exit "kill $! 2>/dev/null"
}

# run_mocked JOB PCAP EXPECTED: run-job under umockdev-run.
run_mocked() {
	local rc=0
	umockdev-run -d "$USB/roothubs.umockdev" -d "$USB/fastboot.umockdev" -p "$FB_SYSFS=$2" -- \
		"$LABD" -c "$LAB/labd.conf" run-job "$1" >"$TMP/run.out" 2>&1 || rc=$?
	if [ "$rc" != "$3" ]; then
		echo "labd run-job $1: exit status $rc, expected $3"
		tail -30 "$TMP/run.out"
		return 1
	fi
}

job_log() {
	cat "$LAB"/state/jobs/"$(ls -t "$LAB/state/jobs" | head -1)"/labd.log
}

test_expect_success 'flash, reboot out of fastboot, log in and run a command' '
	fb_job "$TMP/fb.yaml" &&
	{ flash_spec && echo "bulk 01 - text=reboot" && echo "bulk 81 256 rtext=OKAY"; } |
		$PY "$USB/mkpcap.py" /dev/stdin "$TMP/ok.pcap" &&
	reboot_watcher &&
	run_mocked "$TMP/fb.yaml" "$TMP/ok.pcap" 0 &&
	grep -q "t.echo: pass" "$TMP/run.out"
'

test_expect_success 'the job log has the product, progress, INFO lines and each command' '
	job_log >"$TMP/fb.log" &&
	grep -q "fastboot: product .sim-board." "$TMP/fb.log" &&
	grep -q "fastboot: sending .boot. (204800 bytes)" "$TMP/fb.log" &&
	grep -q "fastboot: sent 64% of .boot. (128 of 200 KiB)" "$TMP/fb.log" &&
	grep -q "fastboot: sent 100% of .boot. (200 of 200 KiB)" "$TMP/fb.log" &&
	grep -q "fastboot: flash:boot" "$TMP/fb.log" &&
	grep -q "fastboot: erasing .boot." "$TMP/fb.log" &&
	grep -q "fastboot: writing .boot." "$TMP/fb.log" &&
	grep -q "fastboot: reboot" "$TMP/fb.log"
'

test_expect_success 'a FAIL from the bootloader is the job'"'"'s error' '
	{ sim_ctl power sim0 off >/dev/null || :; } &&
	{ flash_spec | head -8 && echo "bulk 01 - text=flash:boot" &&
	  echo "bulk 81 256 \"rtext=FAILpartition table doesn'"'"'t exist\""; } |
		$PY "$USB/mkpcap.py" /dev/stdin "$TMP/fail.pcap" &&
	run_mocked "$TMP/fb.yaml" "$TMP/fail.pcap" 2 &&
	grep -q "incomplete (job): fastboot .flash:boot. failed: partition table doesn.t exist" \
		"$TMP/run.out"
'

test_expect_success 'a bootloader that stops answering is an infrastructure error' '
	{ flash_spec | head -3 && echo "bulk 01 - text=download:00032000" &&
	  echo "bulk 81 256 noreply"; } | $PY "$USB/mkpcap.py" /dev/stdin "$TMP/stuck.pcap" &&
	run_mocked "$TMP/fb.yaml" "$TMP/stuck.pcap" 2 &&
	grep -q "incomplete (infrastructure): fastboot .download:00032000.: reading the response failed: Connection timed out" \
		"$TMP/run.out"
'

test_expect_success 'a board that never shows up in fastboot mode: power-cycled, then an error' '
	fb_job "$TMP/absent.yaml" 2 &&
	sed -i "s/FB0001/FB9999/" "$LAB/devices/10-fb-01.conf" &&
	run_mocked "$TMP/absent.yaml" "$TMP/ok.pcap" 2 &&
	grep -q "fastboot: board not in fastboot mode: power-cycling it" "$(job_log >"$TMP/absent.log"; echo "$TMP/absent.log")" &&
	grep -q "incomplete (infrastructure): the board did not show up in fastboot mode (serial .FB9999.)" \
		"$TMP/run.out"
'

test_done
