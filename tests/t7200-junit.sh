#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t7200-junit.sh -- JUnit XML per job (junit backend directory, job directory,
# GET /api/v1/jobs/{id}/junit, labctl results --junit), well-formed with the
# right counts; plain console logs byte-exact through the API and labctl.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/backend-lib.sh"

sim_lab 1
cat >>"$LAB/labd.conf" <<CONF
backends = ( { type = "junit"; dir = "$TMP/junit"; log_url_base = "https://lab.example.org"; } );
CONF
rich_job "$TMP/rich.yaml"
SPEW=4000 sim_job "$TMP/noisy.yaml"
labd_start

# counts FILE: "tests failures errors skipped" of the root, then the same counted from the cases
counts() {
	$PY - "$1" <<'PY'
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(*[r.get(k) for k in ("tests", "failures", "errors", "skipped")],
      len(r.findall(".//testcase")), len(r.findall(".//failure")),
      len(r.findall(".//error")), len(r.findall(".//skipped")))
for s in r.findall("testsuite"):
    n = [len(s.findall("testcase")), len(s.findall("testcase/failure")),
         len(s.findall("testcase/error")), len(s.findall("testcase/skipped"))]
    if [int(s.get(k)) for k in ("tests", "failures", "errors", "skipped")] != n:
        sys.exit("suite %s: counters disagree with its cases" % s.get("name"))
PY
}

well_formed() {
	if command -v xmllint >/dev/null; then
		xmllint --noout "$1"
	else
		$PY -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1"
	fi
}

id=$(submit "$TMP/rich.yaml")
wait_job $id
test_expect_success 'the junit backend writes a well-formed report with the right counts' '
	wait_for "[ -f \"$TMP/junit/job-$id.xml\" ]" 10 &&
	well_formed "$TMP/junit/job-$id.xml" &&
	counts "$TMP/junit/job-$id.xml" >"$TMP/counts" && cat "$TMP/counts" &&
	[ "$(cat "$TMP/counts")" = "17 4 0 2 17 4 0 2" ] &&
	cmp "$TMP/junit/job-$id.xml" "$LAB/state/jobs/$id/junit.xml" &&
	grep -q "<testsuite name=\"0_smoke\"" "$TMP/junit/job-$id.xml" &&
	grep -q "<property name=\"log_url\" value=\"https://lab.example.org/api/v1/jobs/$id/log\"/>" \
		"$TMP/junit/job-$id.xml"
'

test_expect_success 'GET /api/v1/jobs/ID/junit and labctl results --junit give the report' '
	curl -sf -D "$TMP/h" "$LABD_URL/api/v1/jobs/$id/junit" >"$TMP/api.xml" &&
	grep -qi "^content-type: application/xml" "$TMP/h" &&
	well_formed "$TMP/api.xml" &&
	[ "$(counts "$TMP/api.xml")" = "17 4 0 2 17 4 0 2" ] &&
	labctl results $id --junit "$TMP/labctl.xml" &&
	cmp "$TMP/api.xml" "$TMP/labctl.xml" &&
	labctl results $id --junit >"$TMP/stdout.xml" &&
	cmp "$TMP/api.xml" "$TMP/stdout.xml" &&
	test_must_fail labctl results 999 --junit "$TMP/none.xml" 2>"$TMP/err" &&
	grep -q "no job 999" "$TMP/err" && [ ! -e "$TMP/none.xml" ]
'

id2=$(submit "$TMP/noisy.yaml")
wait_job $id2
test_expect_success 'a console log full of noise still gives well-formed XML' '
	curl -sf "$LABD_URL/api/v1/jobs/$id2/junit" >"$TMP/noisy.xml" &&
	well_formed "$TMP/noisy.xml" &&
	[ "$(counts "$TMP/noisy.xml")" = "3 0 0 0 3 0 0 0" ]
'

test_expect_success 'plain log: the API and labctl log --raw are byte-exact' '
	grep -c . "$LAB/state/jobs/$id2/console.log" &&
	LC_ALL=C grep -q "[^[:print:][:space:]]" "$LAB/state/jobs/$id2/console.log" &&
	curl -sf "$LABD_URL/api/v1/jobs/$id2/log" | cmp - "$LAB/state/jobs/$id2/console.log" &&
	labctl log $id2 --raw | cmp - "$LAB/state/jobs/$id2/console.log"
'

test_expect_success 'plain log with timestamps on request' '
	curl -sf "$LABD_URL/api/v1/jobs/$id/log?timestamps=1" >"$TMP/ts.log" &&
	head -3 "$TMP/ts.log" &&
	[ "$(grep -c "^\[20[0-9-]*T[0-9:.]*Z\] " "$TMP/ts.log")" -ge \
	  "$(grep -c "" "$LAB/state/jobs/$id/console.log")" ] &&
	labctl log $id --timestamps | grep -q "^\[20[0-9-]*T[0-9:.]*Z\] .*login:"
'

test_done
