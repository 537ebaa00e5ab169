#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t3310-deploy-sdmux.sh -- deploy to: sdmux through `labd run-job`: download the image,
# power the board off, card to the host, write with progress, verify, card to the board,
# then a minimal boot of the simulated board.
#
# The mux is the "fake" SD-mux driver (switches recorded in a file) and the card a
# regular file: the USB-SD-Mux's own protocol is covered by test-sdmux (an emulated
# mux behind the sg calls), since this host has no SCSI or USB to show it one.
. "$(dirname "$0")/lib.sh"

WWW=$TMP/www
CARD=$LAB/card.img
MUXLOG=$LAB/sdmux.log
mkdir -p "$WWW"
sim_start 1 --mode no-uboot
write_lab_conf
cat >>"$LAB/devices/00-sim-types.conf" <<'CONF'
device_type = {
	name = "sim-sdcard";
	extends = "sim-minimal";
	deploy_methods = [ "sdmux" ];
};
CONF
sim_device sdcard-01 0 sim-sdcard "sdmux = { driver = \"fake\"; disk = \"$CARD\"; log = \"$MUXLOG\"; };"
: >"$CARD"

# The image: 9 MiB and a bit of random bytes (three chunks of the writer), and its xz.
head -c $((9 * 1024 * 1024 + 4321)) /dev/urandom >"$WWW/card.img"
xz -T1 -0 -c "$WWW/card.img" >"$WWW/card.img.xz"
HTTP_PORT=$(free_port)
$PY -m http.server "$HTTP_PORT" --bind 127.0.0.1 --directory "$WWW" >"$TMP/http.log" 2>&1 &
at_exit "kill $!"
wait_for "curl -sf http://127.0.0.1:$HTTP_PORT/card.img -o /dev/null" 10
URL=http://127.0.0.1:$HTTP_PORT

# sdmux_job FILE IMAGE-YAML: deploy to sdmux, boot, one command.
sdmux_job() {
	write_job "$1" <<JOB
job_name: sd card
device_type: sim-sdcard
timeouts: {job: {minutes: 2}, connection: {seconds: 20}}
actions:
- deploy:
    to: sdmux
    images:
$2
- boot:
    method: minimal
    auto_login: {login_prompt: "login:", username: root}
    prompts: ["root@sim:~# "]
- test:
    interactive:
    - name: t
      prompts: ["root@sim:~# "]
      script:
      - {command: "echo ok-$((6*7))", name: echo, successes: [{message: "ok-42"}]}
JOB
}

# The job log of the last job run-job ran.
job_log() {
	local id
	id=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$TMP/run.out" | tail -1)
	cat "$LAB/state/jobs/$id"/*.log 2>/dev/null || cat "$TMP/run.out"
}

test_expect_success 'the image lands on the card, verified, and the board boots from it' '
	sdmux_job "$TMP/plain.yaml" "      image: {url: $URL/card.img}" &&
	run_job "$TMP/plain.yaml" 0 &&
	cmp "$WWW/card.img" "$CARD" &&
	grep -q "t.echo: pass" "$TMP/run.out"
'

test_expect_success 'the card went to the host, then to the board, with the board off' '
	awk "{ print \$3 }" "$MUXLOG" | tr "\n" " " | grep -qx "host dut " &&
	job_log >"$TMP/plain.log" &&
	grep -E "info L0 (power off|sdmux: switching)" "$TMP/plain.log" | sed "s/.* L0 //" |
		tr "\n" "|" | grep -qx "power off|sdmux: switching the SD card to host|sdmux: switching the SD card to dut|"
'

test_expect_success 'progress and verification are in the job log' '
	grep -q "sdmux: writing 100% (9 of 9 MiB)" "$TMP/plain.log" &&
	grep -q "sdmux: verifying 100%" "$TMP/plain.log" &&
	grep -q "sdmux: image written and verified, sha256 $(sha256sum "$WWW/card.img" | cut -c1-64)" \
		"$TMP/plain.log"
'

test_expect_success 'an xz image is decompressed before it is written' '
	: >"$CARD" && : >"$MUXLOG" &&
	sdmux_job "$TMP/xz.yaml" "      image: {url: $URL/card.img.xz, compression: xz}" &&
	run_job "$TMP/xz.yaml" 0 &&
	cmp "$WWW/card.img" "$CARD"
'

test_expect_success 'a mux that fails to switch back is an infrastructure error' '
	sed -i "s|log = \"$MUXLOG\";|log = \"$MUXLOG\"; fail = \"dut\";|" "$LAB/devices/10-sdcard-01.conf" &&
	sdmux_job "$TMP/fail.yaml" "      image: {url: $URL/card.img}" &&
	run_job "$TMP/fail.yaml" 2 &&
	grep -q "incomplete (infrastructure): fake sdmux: switching to dut failed as configured" \
		"$TMP/run.out"
'

test_expect_success 'a disk that is no block device is an infrastructure error' '
	sed -i "s|fail = \"dut\";||; s|disk = \"$CARD\"|disk = \"$LAB/sim\"|" \
		"$LAB/devices/10-sdcard-01.conf" &&
	run_job "$TMP/plain.yaml" 2 &&
	grep -q "incomplete (infrastructure): cannot open SD card .$LAB/sim.: Block device required" \
		"$TMP/run.out"
'

test_expect_success 'a board without an sdmux group cannot deploy to sdmux' '
	sed -i "/sdmux = /d" "$LAB/devices/10-sdcard-01.conf" &&
	run_job "$TMP/plain.yaml" 2 &&
	grep -q "board .sdcard-01. has no .sdmux. group: it cannot deploy to sdmux" "$TMP/run.out"
'

test_expect_success 'a job with two images for the card is refused' '
	sdmux_job "$TMP/two.yaml" "      image: {url: $URL/card.img}
      other: {url: $URL/card.img}" &&
	run_job "$TMP/two.yaml" 1 &&
	grep -q "deploy to .sdmux. writes one image to the card, not 2" "$TMP/run.out"
'

test_done
