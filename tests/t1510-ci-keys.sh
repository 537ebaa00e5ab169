#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1510-ci-keys.sh -- what CI jobs carry, on simulated boards.  A job's
# secrets: exported to its test
# definitions, and absent from every byte labd stores (the state directory, the
# database, the logs, the board's log) and from what the API shows: replaced by
# [secret] in the console log, the results, labd's lines and events.  The same
# for the password typed at a login prompt; and a queued job whose secrets
# labd forgot (a restart) is canceled, saying so.  Context keys the device
# type allows feed its substitutions.
. "$(dirname "$0")/lib.sh"

SECRET=labd-s3cr3t-$$-$RANDOM
PASSWORD=labd-pw-$$-$RANDOM
sim_lab 2 --user root --password "$PASSWORD"
cat >"$LAB/devices/05-sim-ctx.conf" <<CONF
device_type = {
	name = "sim-ctx";
	extends = "sim-uboot";
	context_allowed = [ "extra_kernel_args", "console" ];
};
CONF
sim_device sim-02 1 sim-ctx	# the second board: its type allows a context key
labd_start

write_job "$TMP/secret.yaml" <<JOB
job_name: secrets
device_type: sim-uboot
timeouts: {job: {minutes: 3}, action: {seconds: 60}, connection: {seconds: 20}}
secrets:
  API_TOKEN: $SECRET
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$TOP/contrib/lab/artifacts/Image', type: image}
    ramdisk: {url: 'file://$TOP/contrib/lab/artifacts/initrd.cpio.gz'}
    dtb: {url: 'file://$TOP/contrib/lab/artifacts/sim.dtb'}
- boot:
    method: u-boot
    commands: ramdisk
    auto_login: {login_prompt: 'login:', username: root, password_prompt: 'Password:', password: '$PASSWORD'}
    prompts: ['root@sim:~# ']
- test:
    definitions:
    - from: inline
      name: uses-the-secret
      path: inline/secret.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: secret}
        run:
          steps:
          - echo "the token is \$API_TOKEN"
          - lava-test-case token-\$API_TOKEN --result pass
JOB

test_expect_success 'the secret reaches the test definition; the job completes' '
	labctl submit --follow "$TMP/secret.yaml" >"$TMP/follow.out" 2>&1 &&
	grep -q "job 1: complete, 1 passed" "$TMP/follow.out" &&
	labctl results 1 >"$TMP/results" &&
	grep -q "0_uses-the-secret.token-\[secret\] .*pass" "$TMP/results"
'

test_expect_success 'the console log and labd lines say [secret] where the secret was' '
	grep -q "the token is \[secret\]" "$LAB/state/jobs/1/console.log" &&
	grep -q "input .*export API_TOKEN=.\[secret\]." "$LAB/state/jobs/1/labd.log" &&
	grep -q "input L[0-9]* \\[secret\\]" "$LAB/state/jobs/1/labd.log"
'

test_expect_success 'no byte of the state directory, the logs or the API holds the secret or the password' '
	! grep -r -a -l -e "$SECRET" -e "$PASSWORD" "$LAB" &&
	curl -sf "$LABD_URL/api/v1/jobs/1" >"$TMP/show.json" &&
	! grep -q -e "$SECRET" -e "$PASSWORD" "$TMP/show.json" &&
	curl -sf "$LABD_URL/api/v1/jobs/1/events" >"$TMP/events.json" &&
	! grep -q -e "$SECRET" -e "$PASSWORD" "$TMP/events.json" &&
	curl -sf "$LABD_URL/api/v1/jobs/1/log" >"$TMP/log.txt" &&
	! grep -q -e "$SECRET" -e "$PASSWORD" "$TMP/log.txt" &&
	curl -sf "$LABD_URL/api/v0.2/jobs/1/" | grep -q "API_TOKEN: \\\\\"\[secret\]\\\\\""
'

ART=$TOP/contrib/lab/artifacts
test_expect_success 'labctl boot --password: the password typed at the prompt is nowhere either' '
	labctl reserve sim-01 --for 5m >/dev/null &&
	labctl boot sim-01 --kernel "file://$ART/Image" --ramdisk "file://$ART/initrd.cpio.gz" \
		--dtb "file://$ART/sim.dtb" --login root --password "$PASSWORD" --no-console \
		>"$TMP/boot.out" 2>&1 &&
	id=$(sed -n "s/^job \([0-9]*\) boots .*/\1/p" "$TMP/boot.out") &&
	grep -q "^job $id: complete" "$TMP/boot.out" &&
	grep -q "input L[0-9]* \\[secret\\]" "$LAB/state/jobs/$id/labd.log" &&
	! grep -r -a -l -e "$PASSWORD" "$LAB" &&
	labctl release sim-01 >/dev/null
'

test_expect_success 'a queued job whose secrets labd lost in a restart is canceled, saying why' '
	sim_ctl power sim0 off &&
	labctl device set-state sim-01 maintenance >/dev/null &&
	labctl submit "$TMP/secret.yaml" >"$TMP/submit.out" &&
	labd_stop && labd_restart &&
	labctl device set-state sim-01 idle >/dev/null &&
	wait_for "labctl show 3 | grep -q canceled" 20 &&
	labctl show 3 | grep -q "its secrets were kept in memory only, and labd restarted since it was submitted"
'

write_job "$TMP/context.yaml" <<JOB
job_name: context keys feed the device type's substitutions
device_type: sim-ctx
timeouts: {job: {minutes: 3}, action: {seconds: 60}, connection: {seconds: 20}}
context: {console: ttyS9}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$TOP/contrib/lab/artifacts/Image', type: image}
    ramdisk: {url: 'file://$TOP/contrib/lab/artifacts/initrd.cpio.gz'}
    dtb: {url: 'file://$TOP/contrib/lab/artifacts/sim.dtb'}
- boot:
    method: u-boot
    commands: ramdisk
    auto_login: {login_prompt: 'login:', username: root, password_prompt: 'Password:', password: '$PASSWORD'}
    prompts: ['root@sim:~# ']
JOB

test_expect_success 'a context key the type allows is a substitution variable ({CONSOLE})' '
	labctl submit --follow "$TMP/context.yaml" >"$TMP/ctx.out" 2>&1 &&
	id=$(sed -n "s/^job \([0-9]*\): .*/\1/p" "$TMP/ctx.out" | tail -1) &&
	grep -q "input .*setenv bootargs .console=ttyS9,115200" "$LAB/state/jobs/$id/labd.log" &&
	sed "s/device_type: sim-ctx/device_type: sim-uboot/" "$TMP/context.yaml" >"$TMP/context2.yaml" &&
	test_must_fail labctl check "$TMP/context2.yaml" >"$TMP/check.out" 2>&1 &&
	grep -q "context: device type .sim-uboot. does not allow context key .console." "$TMP/check.out"
'

test_done
