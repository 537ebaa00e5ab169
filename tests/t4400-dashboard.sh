#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t4400-dashboard.sh -- the dashboard as people see it: Debian's chromium, headless, driven
# by Selenium (tests/web/dashboard_test.py) against a labd with simulated boards.  The board
# grid shows every board's state; the job list shows the jobs as rows, filtered too, and so
# does a board's list of recent jobs; the queue counts a waiting reservation and lists what
# waits; a running job's card says its name, submitter, action and elapsed time; a complete
# job whose tests failed is not green and shows its counts, labd's lines in its log and its
# boot phases named in full; a running job's log grows on its page and its result appears; a
# board page draws its boot-phase chart with the failed job marked; a reader is not offered
# (nor allowed) a cancel, an admin cancels; the holder types in the browser console and sees
# the answer.  Screenshots: $BUILD/test-logs/t4400-dashboard/*.png.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session-lib.sh"

SHOTS=$BUILD/test-logs/t4400-dashboard
if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ] ||
   ! $PY -c 'import selenium' 2>/dev/null || ! [ -f "$TOP/web/vendor/xterm/xterm.js" ]; then
	test_skip 'the dashboard in Chromium' 'needs chromium, chromium-driver, python3-selenium and xterm.js (make deps)'
	test_done
	exit
fi

sim_lab 4
add_users
labd_start

write_job "$TMP/boot.yaml" <<JOB
job_name: dashboard boot
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: steps
      prompts: ['root@sim:~# ']
      script:
$(for i in 1 2 3 4 5 6; do printf "      - {command: 'sleep 1; echo WEB-STEP-%s', name: step-%s, successes: [{message: 'WEB-STEP-%s'}]}\n" $i $i $i; done)
JOB

write_job "$TMP/long.yaml" <<JOB
job_name: runs until canceled
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: long
      prompts: ['root@sim:~# ']
      script:
      - {command: 'sleep 100', name: long}
JOB

write_job "$TMP/failing.yaml" <<JOB
job_name: three tests fail
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
- test:
    definitions:
    - from: inline
      name: smoke
      path: inline/smoke.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: smoke}
        run:
          steps:
          - lava-test-case works --result pass
          - lava-test-case broken-1 --result fail
          - lava-test-case broken-2 --result fail
          - lava-test-case broken-3 --result fail
JOB

write_job "$TMP/shell.yaml" <<JOB
job_name: the holder's shell
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
JOB

# job_done ID: the job finished complete
job_done() {
	[ "$(curl -s "$LABD_URL/api/v1/jobs/$1" -H "Authorization: Bearer $(token_of boss)" |
		$PY -c 'import json, sys; d = json.load(sys.stdin); print(d["state"], d["health"])')" = \
	  "finished complete" ]
}

t_setup() {
	# alice holds sim-04 at its shell, boss waits for it; a finished job, and one whose
	# tests failed (its board's chart marks it)
	as alice reserve sim-04 --for 30m >/dev/null &&
	as alice boot sim-04 --job "$TMP/shell.yaml" --no-console >"$TMP/boot.out" &&
	[ "$(api_as boss POST /reservations -d '{"board": "sim-04", "duration": 600}')" = 201 ] &&
	grep -q '"state": *"waiting"' "$TMP/body" &&
	a=$(submit "$TMP/boot.yaml" "$(token_of boss)") &&
	f=$(submit "$TMP/failing.yaml" "$(token_of boss)") &&
	wait_for "job_done $a" 120 && wait_for "job_done $f" 120 &&
	echo "$f" >"$TMP/failed-job" &&
	board=$(curl -s "$LABD_URL/api/v1/jobs/$f" -H "Authorization: Bearer $(token_of boss)" |
		$PY -c 'import json, sys; print(json.load(sys.stdin)["device"])') &&
	echo "$board" >"$TMP/chart-board"
}
test_expect_success 'setup: a held board at its shell, a reservation waiting for it, finished jobs' \
	t_setup

mkdir -p "$SHOTS"
DASHBOARD_ONLY=${DASHBOARD_ONLY:-} timeout 600 $PY "$TOP/tests/web/dashboard_test.py" "$LABD_URL" "$SHOTS" "$TMP/results.json" \
	--job-file "$TMP/boot.yaml" --queued-file "$TMP/long.yaml" --boards 4 \
	--chart-board "$(cat "$TMP/chart-board" 2>/dev/null || echo sim-01)" --console-board sim-04 \
	--failed-job "$(cat "$TMP/failed-job" 2>/dev/null || echo 0)" \
	--tokens "reader=$(token_of rita),admin=$(token_of boss),developer=$(token_of alice)" \
	>"$TMP/selenium.out" 2>&1 ; cat "$TMP/selenium.out"

# result NAME: the outcome of the browser check NAME (its reason on failure)
result() {
	$PY -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["name"] == sys.argv[2]:
        print(r.get("why", ""), file=sys.stderr)
        sys.exit(0 if r["ok"] else 1)
print("not run", file=sys.stderr)
sys.exit(1)' "$TMP/results.json" "$1"
}

test_expect_success 'the board grid shows every board with its state' 'result "board grid"'
test_expect_success "the job list, filtered, and a board's recent jobs show the jobs as rows" \
	'result "job list"'
test_expect_success 'the queue counts a waiting reservation and lists what waits' \
	'result "queue waiting"'
test_expect_success "a complete job whose tests failed: not green, its counts, labd's lines, its phases" \
	'result "failed counts"'
test_expect_success "a running job's card: name, submitter, action, elapsed time" \
	'result "running card"'
test_expect_success "a running job's log grows on its page, its result appears at the end" \
	'result "running log"'
test_expect_success 'a board page draws the boot-phase chart of its recent jobs, failed ones marked' \
	'result "board chart"'
test_expect_success 'a reader cannot cancel a job, an admin can' 'result "roles cancel"'
test_expect_success "the holder types in the browser console and sees the answer" \
	'result console && grep -q "input .*alice: echo WEB-" "$LAB/state/boards/sim-04/labd.log"'
test_expect_success 'screenshots of the main pages are saved' \
	'for p in boards jobs queue reservations job-failed boards-running job board console; do
		[ -s "$SHOTS/$p.png" ] || { echo "no $p.png"; exit 1; }; done'
test_done
