#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1220-whose-fault.sh -- failures that say whose fault they are and which limit ran
# out, on a labd with two simulated boards.  The artifact URLs are checked before a
# board is touched, in parallel and without holding up the loop: a missing artifact
# (HTTP 404) is the job's error and not retried, an artifact server that fails (5xx)
# or does not answer is the lab's and retried on another board, a server without HEAD
# is asked for the first byte.  A timeout names the job's `timeouts:` key, its
# length, the stage and action, and the last console line, classed as LAVA would.
. "$(dirname "$0")/lib.sh"

ART=$TOP/contrib/lab/artifacts
WWW=$TMP/www
mkdir -p "$WWW"
cp "$ART/Image" "$ART/initrd.cpio.gz" "$ART/sim.dtb" "$WWW/"
HTTP_PORT=$(free_port)
$PY "$TOP/tests/helper/artifact-server.py" "$HTTP_PORT" "$WWW" >"$TMP/http.log" 2>&1 &
at_exit "kill $!"
wait_for "curl -sf http://127.0.0.1:$HTTP_PORT/Image -o /dev/null" 10
URL=http://127.0.0.1:$HTTP_PORT

sim_lab 2
labd_start
FIGURES=$BUILD/test-logs/t1220-whose-fault/figures.txt	# what t_parallel measured
mkdir -p "${FIGURES%/*}"
api=$LABD_URL/api/v1
field() { curl -sf "$api/jobs/$1" | $PY -c "import json,sys; d=json.load(sys.stdin); print(d$2)"; }
boots() { sim_ctl status "$1" | sed -n 's/.* boots=\([0-9]*\).*/\1/p'; }
finished() { wait_for "[ \"\$(field $1 '[\"state\"]')\" = finished ]" "${2:-60}"; }

# job FILE RETRIES KERNEL-URL [RAMDISK-URL] [EXTRA-ARTIFACT-LINES]: a deploy, then a boot
job() {
	write_job "$1" <<JOB
job_name: whose fault
device_type: sim-uboot
infrastructure_retries: $2
timeouts: {job: {minutes: 2}, connection: {seconds: 20}}
actions:
- deploy:
    to: tftp
    kernel: {url: '$3', type: image}
    ramdisk: {url: '${4:-$URL/initrd.cpio.gz}'}
${5:-}
- boot:
    method: u-boot
    commands: ramdisk
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
JOB
}

t_404() {
	b0=$(boots sim0) && b1=$(boots sim1) &&
	job "$TMP/404.yaml" 2 "$URL/Image-typo" &&
	id=$(labctl submit -q "$TMP/404.yaml") && finished "$id" &&
	[ "$(field "$id" '["health"], d["error_type"], d["attempt"]')" = "incomplete job 1" ] &&
	field "$id" '["error_msg"]' | tee "$TMP/msg" &&
	grep -q "^artifact URL check before the board was powered: kernel '$URL/Image-typo': HTTP 404 (a missing artifact: the job's URL)$" "$TMP/msg" &&
	! curl -sf "$api/jobs/$id/events" | grep -q requeued &&
	[ "$(boots sim0) $(boots sim1)" = "$b0 $b1" ] &&
	! grep -q "GET /Image-typo" "$TMP/http.log" &&
	grep -q "HEAD /Image-typo 404" "$TMP/http.log"
}
test_expect_success 'HTTP 404: the job error, not retried, no board powered' t_404

t_5xx() {
	b0=$(boots sim0) && b1=$(boots sim1) &&
	job "$TMP/503.yaml" 2 "$URL/status/503/Image" &&
	id=$(labctl submit -q "$TMP/503.yaml") && finished "$id" &&
	[ "$(field "$id" '["health"], d["error_type"], d["attempt"]')" = "incomplete infrastructure 3" ] &&
	field "$id" '["error_msg"]' | grep -q "kernel '$URL/status/503/Image': HTTP 503 (the artifact server failed)$" &&
	[ "$(curl -sf "$api/jobs/$id/events" | grep -o requeued | wc -l)" = 2 ] &&
	[ "$(boots sim0) $(boots sim1)" = "$b0 $b1" ] &&
	job "$TMP/refused.yaml" 0 "http://127.0.0.1:1/Image" &&
	id=$(labctl submit -q "$TMP/refused.yaml") && finished "$id" &&
	[ "$(field "$id" '["error_type"]')" = infrastructure ] &&
	field "$id" '["error_msg"]' | grep -q "kernel 'http://127.0.0.1:1/Image': no answer: "
}
test_expect_success 'HTTP 503, connection refused: infrastructure, retried on another board' t_5xx

# Three artifacts answering after 2 s each are checked in about 2 s, not 6, and labd
# answers meanwhile: the checks are parallel requests of the loop, nothing waits.
t_parallel() {
	job "$TMP/slow.yaml" 0 "$URL/slow/2/Image" "$URL/slow/2/initrd.cpio.gz" \
		"    dtb: {url: '$URL/slow/2/sim.dtb'}" &&
	id=$(labctl submit -q "$TMP/slow.yaml") &&
	wait_for "grep -q 'attempt 1 on board' $LAB/state/jobs/$id/labd.log 2>/dev/null" 20 &&
	t0=$(date +%s%N) && curl -sf "$api/health" >/dev/null && t1=$(date +%s%N) &&
	echo "GET /health during the URL check: $(( (t1 - t0) / 1000000 )) ms" >>"$FIGURES" &&
	[ $(( (t1 - t0) / 1000000 )) -lt 1000 ] &&
	finished "$id" 90 && [ "$(field "$id" '["health"]')" = complete ] &&
	$PY - "$LAB/state/jobs/$id/labd.log" >>"$FIGURES" <<'PY'
import datetime, re, sys
t = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) \S+ L\d+ (.*)", line)
    if not m:
        continue
    when = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
    if "attempt 1 on board" in m.group(2):
        t["start"] = when
    if "artifact URLs answered" in m.group(2):
        t["checked"] = when
        assert m.group(2).startswith("3 artifact URLs answered"), m.group(2)
took = (t["checked"] - t["start"]).total_seconds()
print("3 URLs answering after 2 s each, checked in %.2f s" % took)
assert 1.9 < took < 4.0, took
PY
}
test_expect_success 'the URLs are checked in parallel, the loop answers meanwhile' t_parallel

t_nohead() {
	job "$TMP/nohead.yaml" 0 "$URL/nohead/Image" &&
	id=$(labctl submit -q "$TMP/nohead.yaml") && finished "$id" 90 &&
	[ "$(field "$id" '["health"]')" = complete ] &&
	grep -q "HEAD /nohead/Image 501" "$TMP/http.log" && grep -q "GET /Image 200" "$TMP/http.log" &&
	job "$TMP/nohead404.yaml" 0 "$URL/nohead/missing" &&
	id=$(labctl submit -q "$TMP/nohead404.yaml") && finished "$id" &&
	[ "$(field "$id" '["error_type"]')" = job ]
}
test_expect_success 'a server without HEAD is asked for the first byte' t_nohead

# test_job FILE TIMEOUTS COMMAND: a boot, then an interactive step running COMMAND
test_job() {
	write_job "$1" <<JOB
job_name: limits
device_type: sim-uboot
timeouts: {$2}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - {command: '$3', name: step, successes: [{message: 'never-printed'}]}
JOB
}

t_limits() {
	test_job "$TMP/conn.yaml" "job: {minutes: 2}, connection: {seconds: 20}, connections: {test-interactive: {seconds: 3}}" "echo waiting; sleep 90" &&
	id=$(labctl submit -q "$TMP/conn.yaml") && finished "$id" &&
	[ "$(field "$id" '["error_type"]')" = test ] &&
	field "$id" '["error_msg"]' | tee "$TMP/msg" &&
	grep -q "^interactive test 'smoke': timed out waiting for an answer to 'echo waiting; sleep 90': timeouts.connections.test-interactive (3 s) ran out in test-interactive of action 3 (test-interactive); the last console line was 'waiting'$" "$TMP/msg" &&
	test_job "$TMP/action.yaml" "job: {minutes: 2}, connection: {seconds: 60}" "sleep 90" &&
	sed -i 's/^- test:$/- test:\n    timeout: {seconds: 4}/' "$TMP/action.yaml" &&
	id=$(labctl submit -q "$TMP/action.yaml") && finished "$id" &&
	[ "$(field "$id" '["error_type"]')" = test ] &&
	field "$id" '["error_msg"]' | tee "$TMP/msg" &&
	grep -q "^test-interactive timed out: actions\[2\].test.timeout (4 s) ran out in test-interactive of action 3 (test-interactive); the last console line was 'root@sim:~# sleep 90'$" "$TMP/msg" &&
	test_job "$TMP/job.yaml" "job: {seconds: 20}, connection: {seconds: 19}" "sleep 90" &&
	id=$(labctl submit -q "$TMP/job.yaml") && finished "$id" &&
	field "$id" '["error_msg"]' | tee "$TMP/msg" &&
	[ "$(field "$id" '["error_type"]')" = job ] &&
	grep -q "^the job timed out: timeouts.job (20 s) ran out in test-interactive of action 3 (test-interactive); the last console line was 'root@sim:~# sleep 90'$" "$TMP/msg"
}
test_expect_success 'a timeout names its key, length, stage, action and the last console line' t_limits

test_done
