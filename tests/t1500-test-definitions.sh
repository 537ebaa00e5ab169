#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1500-test-definitions.sh -- LAVA test definitions typed into a simulated
# board's shell through `labd run-job`: lava-test-case results (pass, fail,
# measurement, --shell, test sets), a parse pattern, parameters, expected test
# cases, a definition fetched by URL, suite names across test actions, KTAP
# and kernel-message results from the same console (not doubled by dmesg),
# a hanging step and lava-test-raise.
. "$(dirname "$0")/lib.sh"

sim_lab 1

# job_head FILE [ACTION_TIMEOUT_S]: deploy and boot, the test actions follow.
job_head() {
	write_job "$1" <<JOB
job_name: sim test definitions
device_type: sim-uboot
priority: medium
timeouts:
  job: {minutes: 3}
  action: {seconds: ${2:-60}}
  connection: {seconds: 20}
actions:
$(sim_uboot_boot)
JOB
}

job_head "$TMP/job.yaml"
cat >>"$TMP/job.yaml" <<'JOB'
- test:
    definitions:
    - from: inline
      name: smoke-tests
      path: inline/smoke.yaml
      parameters: {GREETING: hello-from-the-job}
      expected: [pass-case, never-ran]
      repository:
        metadata:
          format: Lava-Test Test Definition 1.0
          name: smoke
          description: lava-test-case in every form, a pattern and KTAP
        params: {GREETING: overridden}
        run:
          steps:
          - lava-test-case pass-case --result pass
          - lava-test-case fail-case --result fail
          - lava-test-case speed --result pass --measurement 12.5 --units MB/s
          - lava-test-set start fs
          - lava-test-case in-set --result skip
          - lava-test-set stop
          - lava-test-case shell-ok --shell true
          - lava-test-case shell-ko --shell false
          - 'echo "check-alpha: ok"'
          - 'echo "check-beta: bad"'
          - lava-test-case greeting-$GREETING --result pass
          - lava-test-reference cve-2024-0001 --result pass --reference https://example.org/cve
          - ktap
          - warn
          - dmesg
        parse:
          pattern: '(?P<test_case_id>check-\w+):\s+(?P<result>\w+)'
          fixupdict: {ok: pass, bad: fail}
- test:
    definitions:
    - from: url
      name: fetched
      repository: 'file://TOP/tests/data/testdefs/url-smoke.yaml'
      parameters: {WHO: labd}
JOB
sed -i "s|file://TOP/|file://$TOP/|" "$TMP/job.yaml"

results() {
	sqlite3 -separator ' ' "$LAB/state/labd.db" \
		"select suite, name, result, coalesce(measurement, ''), coalesce(units, '') from results where job_id = $1 order by id"
}

test_expect_success 'a job with test definitions completes (with failed results)' '
	run_job "$TMP/job.yaml" 1 &&
	grep -q "job 1: complete" "$TMP/run.out"
'

test_expect_success 'lava-test-case results: pass, fail, measurement, test set, --shell' '
	results 1 >"$TMP/r1" &&
	cat "$TMP/r1" &&
	grep -qx "0_smoke-tests pass-case pass  " "$TMP/r1" &&
	grep -qx "0_smoke-tests fail-case fail  " "$TMP/r1" &&
	grep -qx "0_smoke-tests speed pass 12.5 MB/s" "$TMP/r1" &&
	grep -qx "0_smoke-tests in-set skip  " "$TMP/r1" &&
	grep -qx "0_smoke-tests shell-ok pass  " "$TMP/r1" &&
	grep -qx "0_smoke-tests shell-ko fail  " "$TMP/r1" &&
	[ "$(sqlite3 "$LAB/state/labd.db" "select extra from results where name = '\''in-set'\''")" = "{\"set\":\"fs\"}" ]
'

test_expect_success 'the parse pattern and its fixupdict give results' '
	grep -qx "0_smoke-tests check-alpha pass  " "$TMP/r1" &&
	grep -qx "0_smoke-tests check-beta fail  " "$TMP/r1"
'

test_expect_success 'job parameters override the definition params' '
	grep -qx "0_smoke-tests greeting-hello-from-the-job pass  " "$TMP/r1"
'

test_expect_success 'lava-test-reference keeps its URL' '
	grep -qx "0_smoke-tests cve-2024-0001 pass  " "$TMP/r1" &&
	sqlite3 "$LAB/state/labd.db" "select extra from results where name = '\''cve-2024-0001'\''" |
		grep -q "\"reference\":\"https://example.org/cve\""
'


test_expect_success 'an expected test case that never ran is a failure' '
	grep -qx "0_smoke-tests never-ran fail  " "$TMP/r1" &&
	[ "$(grep -c " pass-case " "$TMP/r1")" = 1 ]
'

test_expect_success 'a definition from a URL, indexed after the first action' '
	grep -qx "1_fetched from-url pass  " "$TMP/r1" &&
	grep -qx "1_fetched who-labd skip  " "$TMP/r1"
'

test_expect_success 'KTAP printed during a definition gives nested results' '
	grep -qx "ktap sim-list.sim_list_add pass  " "$TMP/r1" &&
	grep -qx "ktap sim-list.sim_list_splice skip  " "$TMP/r1" &&
	grep -qx "ktap sim-string.sim_strscpy_param.short pass  " "$TMP/r1" &&
	grep -qx "ktap sim-string.sim_strncmp_overflow fail  " "$TMP/r1" &&
	grep -qx "ktap sim-string fail  " "$TMP/r1"
'

test_expect_success 'kernel messages are results; dmesg printing them again adds none' '
	grep -qx "kernel-messages warning fail  " "$TMP/r1" &&
	! grep -q "kernel-messages warning-2" "$TMP/r1" &&
	[ "$(grep -c "^ktap sim-list.sim_list_add " "$TMP/r1")" = 1 ]
'

test_expect_success 'results carry the console lines they came from' '
	line=$(sqlite3 "$LAB/state/labd.db" "select log_start from results where name = '\''speed'\''") &&
	sed -n "${line}p" "$LAB/state/jobs/1/console.log" | grep -q "TEST_CASE_ID=speed"
'

job_head "$TMP/hang.yaml" 8
cat >>"$TMP/hang.yaml" <<'JOB'
- test:
    definitions:
    - from: inline
      name: hang
      path: inline/hang.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: hang}
        run:
          steps:
          - lava-test-case before --result pass
          - sleep 600
JOB

test_expect_success 'a hanging step fails the job with error type test' '
	run_job "$TMP/hang.yaml" 2 &&
	grep -q "job 2: incomplete" "$TMP/run.out" &&
	grep -q "test definition .0_hang. did not finish in time" "$TMP/run.out" &&
	results 2 | grep -qx "0_hang before pass  "
'

job_head "$TMP/raise.yaml"
cat >>"$TMP/raise.yaml" <<'JOB'
- test:
    definitions:
    - from: inline
      name: raise
      path: inline/raise.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: raise}
        run:
          steps:
          - lava-test-raise disk full
          - lava-test-case after --result pass
JOB

test_expect_success 'lava-test-raise fails the job with its message' '
	run_job "$TMP/raise.yaml" 2 &&
	grep -q "job 3: incomplete (test): test definition .0_raise. raised an error: disk full" "$TMP/run.out" &&
	! results 3 | grep -q " after "
'

test_done
