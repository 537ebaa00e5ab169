#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2400-ci-jobs.sh -- the jobs CI sends, end to end on QEMU boards with real
# Debian kernels: test definitions from a git repository served by `git
# daemon` on loopback (one at a tag, one at a commit), their scripts calling
# the repository's files and labd's lava-test-case; the overlay appended to
# the ramdisk on x86_64, downloaded by the board (transfer_overlay) on arm64
# through U-Boot, its network driver from the deploy's modules; a secret used by
# a test step and absent from every stored byte; a notify callback read as
# KernelCI reads it; a callback receiver that is down for a minute (and labd
# restarted meanwhile) that then gets the callback once; a job still queued
# when its queue timeout runs out.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"
. "$TOP/tests/ci/lib.sh"

qemu_open 'CI jobs on QEMU boards' x86_64 arm64
SECRET=labd-s3cr3t-$$-$RANDOM
git_repo "$TMP/git/test-definitions"
git_daemon "$TMP/git"
callback_recorder
cat >>"$LAB/labd.conf" <<CONF
git_allow = [ "$GIT_URL" ];
notify = { tokens = { kernelci-callback = "$CB_TOKEN"; }; retry_max_ms = 3000; };
CONF
labd_start
at_exit labd_stop

# git_defs: two definitions of the test repository, at tag v1 and at HEAD's commit.
git_defs() {
	cat <<JOB
- test:
    timeout: {minutes: 2}
    definitions:
    - from: git
      repository: ${GIT_URL}test-definitions
      path: automated/linux/smoke/smoke.yaml
      name: smoke-tag
      revision: v1
      history: false
    - from: git
      repository: ${GIT_URL}test-definitions
      path: automated/linux/smoke/smoke.yaml
      name: smoke-commit
      revision: $REPO_HEAD
      parameters: {TESTS: "pwd true"}
JOB
}

write_job "$TMP/x86-git.yaml" <<JOB
job_name: x86_64, git test definitions in the ramdisk
device_type: qemu-x86_64
tags: [qemu]
timeouts: {job: {minutes: 5}, action: {minutes: 2}, connection: {minutes: 1}}
context: {extra_kernel_args: quiet}
secrets: {API_TOKEN: $SECRET}
metadata: {api_config_name: staging, storage_config_name: staging-azure}
notify:
  criteria: {status: finished}
  callback:
    url: http://127.0.0.1:$CB_PORT/node/6543?job={ID}
    method: POST
    token: kernelci-callback
    dataset: all
    content-type: json
actions:
- deploy:
    to: tmpfs
    os: oe
    kernel: {url: '$ART_URL/x86_64/vmlinux'}
    ramdisk: {url: '$ART_URL/x86_64/initrd.cpio.gz'}
- boot:
    method: qemu
    media: tmpfs
    prompts: ['root@guest:[^#]*# ']
$(git_defs)
    - from: inline
      name: secret
      path: inline/secret.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: secret}
        run:
          steps:
          - echo "token \$API_TOKEN"
          - lava-test-case token-length --result pass --measurement \${#API_TOKEN} --units bytes
JOB

test_expect_success 'x86_64: two git definitions (tag, commit) run from the overlay appended to the ramdisk' '
	submit_follow "$TMP/x86-git.yaml" 0 &&
	grep -q "job [0-9]*: complete, 5 passed" "$TMP/follow.out" &&
	labctl results "$(job_id)" >"$TMP/results" &&
	grep -q "0_smoke-tag.pwd .*pass" "$TMP/results" &&
	grep -q "2_secret.token-length .*pass.*${#SECRET}" "$TMP/results" &&
	grep -q "1_smoke-commit.pwd .*pass" "$TMP/results" &&
	grep -q "1_smoke-commit.true .*pass" "$TMP/results" &&
	grep -q "1_smoke-commit.uptime .*pass.*seconds" "$TMP/results" &&
	! grep -q "0_smoke-tag.uptime" "$TMP/results"
'

test_expect_success 'the secret reached the step, and no stored byte holds it' '
	grep -q "^token \[secret\]" "$LAB/state/jobs/1/console.log" &&
	! grep -r -a -l -e "$SECRET" "$LAB"
'

test_expect_success 'the notify callback has what KernelCI reads, the token in its header' '
	wait_for "grep -q /node/6543 $TMP/callbacks.jsonl" 20 &&
	$PY "$TOP/tests/ci/kernelci-callback.py" "$TMP/callbacks.jsonl" "/node/6543?job=1" \
		"$CB_TOKEN" >"$TMP/kernelci.out" &&
	cat "$TMP/kernelci.out" &&
	grep -q "suites \[.0_smoke-tag., .1_smoke-commit., .2_secret., .lava.\]" "$TMP/kernelci.out" &&
	! grep -q "$SECRET" "$TMP/callbacks.jsonl"
'

write_job "$TMP/arm64-git.yaml" <<JOB
job_name: arm64 through U-Boot, git test definitions downloaded by the board
device_type: qemu-arm64
tags: [qemu]
timeouts: {job: {minutes: 5}, action: {minutes: 2}, connection: {minutes: 1}}
actions:
- deploy:
    to: tftp
    os: oe
    kernel: {url: '$ART_URL/arm64/Image', type: image}
    ramdisk: {url: '$ART_URL/arm64/initrd.cpio.gz'}
    modules: {url: '$ART_URL/arm64/modules.tar.xz', compression: xz}
- boot:
    method: u-boot
    commands: ramdisk
    prompts: ['root@guest:[^#]*# ']
    transfer_overlay:
      download_command: modprobe virtio_mmio && modprobe virtio_net && ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && cd /tmp && wget -q
      unpack_command: tar -C / -xzf
$(git_defs)
JOB

test_expect_success 'arm64: the board downloads the overlay from labd (transfer_overlay), modules from the deploy' '
	submit_follow "$TMP/arm64-git.yaml" 0 &&
	grep -q "job [0-9]*: complete, 4 passed" "$TMP/follow.out" &&
	id=$(job_id) &&
	labctl results "$id" >"$TMP/results" &&
	grep -q "1_smoke-commit.uptime .*pass.*seconds" "$TMP/results" &&
	grep -q "input .* wget -q http://10.0.2.2:$LABD_PORT/api/v1/overlays/[0-9a-f]*\.tar\.gz && tar -C / -xzf [0-9a-f]*\.tar\.gz" \
		"$LAB/state/jobs/$id/labd.log" &&
	grep -q "^labd-overlay-ok-42" "$LAB/state/jobs/$id/console.log" &&
	grep -q "overlay delivery: transfer" "$LAB/state/jobs/$id/labd.log"
'

test_expect_success 'the overlay is served only while its job runs' '
	name=$(grep -o "overlays/[0-9a-f]*\.tar\.gz" "$LAB/state/jobs/$(job_id)/labd.log" | head -1) &&
	[ -n "$name" ] &&
	code=$(curl -s -o /dev/null -w "%{http_code}" "$LABD_URL/api/v1/$name") &&
	[ "$code" = 404 ]
'

DOWN_PORT=$(free_port)
write_job "$TMP/down.yaml" <<JOB
job_name: x86_64 boot, its callback receiver down for a minute
device_type: qemu-x86_64
tags: [qemu]
timeouts: {job: {minutes: 3}}
context: {extra_kernel_args: quiet}
notify:
  criteria: {status: complete}
  callbacks:
  - {url: 'http://127.0.0.1:$DOWN_PORT/cb/{ID}/{STATUS_STRING}', method: POST, dataset: minimal}
actions:
- deploy:
    to: tmpfs
    kernel: {url: '$ART_URL/x86_64/vmlinux'}
    ramdisk: {url: '$ART_URL/x86_64/initrd.cpio.gz'}
- boot: {method: qemu, media: tmpfs, prompts: ['root@guest:[^#]*# ']}
JOB

# The receiver is down while the job ends and for a minute after it; labd is
# killed and started again meanwhile; then the receiver comes up.
t_down() {
	local id t0 pid
	submit_follow "$TMP/down.yaml" 0 || return 1
	id=$(job_id)
	t0=$(date +%s)
	sleep 15 && labd_kill && labd_restart || return 1
	while [ $(($(date +%s) - t0)) -lt 60 ]; do sleep 1; done
	[ ! -s "$TMP/down.jsonl" ] || return 1
	$PY "$TOP/tests/helper/recorder.py" --port "$DOWN_PORT" --out "$TMP/down.jsonl" \
		>"$TMP/recorder-down.log" 2>&1 &
	pid=$!
	at_exit "kill $pid"
	wait_for "[ -s $TMP/down.jsonl ]" 30 || return 1
	sleep 8
	[ "$(wc -l <"$TMP/down.jsonl")" = 1 ] &&
	grep -q "\"path\": \"/cb/$id/complete\"" "$TMP/down.jsonl" &&
	grep -q "status_string=complete" "$TMP/down.jsonl" &&
	grep -qi "content-type.: .application/x-www-form-urlencoded" "$TMP/down.jsonl"
}
test_expect_success 'a receiver down for a minute, labd restarted meanwhile: the callback arrives once' \
	t_down

write_job "$TMP/queued.yaml" <<JOB
job_name: waits in the queue longer than it may
device_type: qemu-x86_64
tags: [qemu]
timeouts: {job: {minutes: 5}, queue: {seconds: 2}}
actions:
- boot: {method: qemu, media: tmpfs, prompts: ['root@guest:[^#]*# ']}
JOB

test_expect_success 'a job still queued when its queue timeout runs out is canceled, saying why' '
	labctl device set-state qemu-x86-01 maintenance >/dev/null &&
	labctl submit "$TMP/queued.yaml" >"$TMP/submit.out" &&
	id=$(grep -o "[0-9]*" "$TMP/submit.out" | head -1) &&
	sleep 1 && labctl show "$id" | grep -q queued &&
	wait_for "labctl show $id | grep -q canceled" 10 &&
	labctl show "$id" | grep -q "still queued when its queue timeout (timeouts.queue) ran out" &&
	labctl device set-state qemu-x86-01 idle >/dev/null
'

test_done
