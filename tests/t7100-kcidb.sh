#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t7100-kcidb.sh -- KCIDB v5.3 documents of finished jobs: built, validated with
# python3-jsonschema against the official schema, submitted with a bearer token
# to a real receiver, status polled; refusals reported; boot statuses.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/backend-lib.sh"

if ! $PY -c 'import jsonschema' 2>/dev/null; then
	test_skip 'KCIDB documents' 'python3-jsonschema is not installed (make deps)'
	test_done
	exit 0
fi

sim_lab 1
recorder_start kdb
recorder_start refuse
recorder_mode refuse 404
cat >>"$LAB/labd.conf" <<CONF
backends = (
	{ type = "kcidb"; url = "http://127.0.0.1:${REC_PORT_kdb}/submit"; token = "jwt-token";
	  origin = "test_lab"; log_url_base = "https://lab.example.org"; },
	{ type = "kcidb"; name = "refusing"; url = "http://127.0.0.1:${REC_PORT_refuse}/submit";
	  origin = "test_lab"; poll = false; }
);
CONF
rich_job "$TMP/rich.yaml"
SPEW=2000 sim_job "$TMP/plain.yaml"

test_expect_success 'an origin with a hyphen is refused at start' '
	sed "s/origin = \"test_lab\"; log/origin = \"test-lab\"; log/" "$LAB/labd.conf" >"$LAB/bad.conf" &&
	test_must_fail "$LABD" check-config -c "$LAB/bad.conf" 2>"$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: KCIDB origin .test-lab. must be lowercase" "$TMP/bad.err"
'

labd_start

# documents: every kcidb.json labd wrote, and every body the receiver got
validate_all() {
	local f n=0
	for f in "$LAB"/state/jobs/*/kcidb*.json; do
		[ -f "$f" ] && n=$((n + 1))
	done
	[ $n -gt 0 ] && $PY "$KCIDB_VALIDATE" "$LAB"/state/jobs/*/kcidb*.json &&
	$PY - "$TMP/kdb.jsonl" "$TMP/bodies" <<'PY' && $PY "$KCIDB_VALIDATE" "$TMP"/bodies/*.json
import json, os, sys
os.makedirs(sys.argv[2], exist_ok=True)
for i, line in enumerate(open(sys.argv[1])):
    r = json.loads(line)
    if r["method"] == "POST" and r["path"] == "/submit":
        open(os.path.join(sys.argv[2], "body-%d.json" % i), "w").write(r["body"])
PY
}

# jq-like: Python expression on the job's kcidb.json (d)
kget() {
	$PY -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" \
		"$LAB/state/jobs/$1/kcidb.json"
}

id=$(submit "$TMP/rich.yaml")
wait_job $id
test_expect_success 'a finished job gives a valid KCIDB document, written and submitted' '
	wait_for "grep -q \"/submit\" \"$TMP/kdb.jsonl\"" 20 &&
	validate_all &&
	grep -q "\"Authorization\": \"Bearer jwt-token\"" "$TMP/kdb.jsonl" &&
	[ "$(kget $id "d[\"version\"]")" = "{'"'"'major'"'"': 5, '"'"'minor'"'"': 3}" ]
'

test_expect_success 'checkout and build from the metadata, a boot test with its children' '
	[ "$(kget $id "d[\"checkouts\"][0][\"id\"]")" = "test_lab:mainline-7dc6fd0f" ] &&
	[ "$(kget $id "d[\"builds\"][0][\"architecture\"]")" = arm64 ] &&
	[ "$(kget $id "[t[\"status\"] for t in d[\"tests\"] if t[\"path\"] == \"boot\"][0]")" = PASS ] &&
	[ "$(kget $id "[t[\"id\"] for t in d[\"tests\"] if t[\"path\"] == \"boot\"][0]")" = "test_lab:job-$id.boot" ] &&
	kget $id "[t[\"path\"] + \" \" + t[\"status\"] for t in d[\"tests\"]]" >"$TMP/paths" &&
	cat "$TMP/paths" &&
	grep -q "boot.0_smoke.fail-case FAIL" "$TMP/paths" &&
	grep -q "boot.0_smoke.in-set SKIP" "$TMP/paths" &&
	grep -q "boot.ktap.sim-string.sim_strncmp_overflow FAIL" "$TMP/paths" &&
	grep -q "boot.kernel-messages.warning FAIL" "$TMP/paths" &&
	[ "$(kget $id "[t[\"number\"] for t in d[\"tests\"] if t[\"path\"].endswith(\".speed\")][0][\"unit\"]")" = MB/s ]
'

test_expect_success 'log_url, excerpt, times and misc of the boot test' '
	kget $id "[t for t in d[\"tests\"] if t[\"path\"] == \"boot\"][0]" >"$TMP/boot" &&
	grep -q "'"'"'log_url'"'"': '"'"'https://lab.example.org/api/v1/jobs/$id/log'"'"'" "$TMP/boot" &&
	grep -q "'"'"'runtime'"'"': '"'"'test-lab'"'"'" "$TMP/boot" &&
	grep -q "'"'"'board'"'"': '"'"'sim-01'"'"'" "$TMP/boot" &&
	grep -q "'"'"'start_time'"'"': '"'"'20[0-9-]*T[0-9:.]*+00:00'"'"'" "$TMP/boot" &&
	[ "$(kget $id "len([t for t in d[\"tests\"] if t[\"path\"] == \"boot\"][0][\"log_excerpt\"])")" -le 16384 ] &&
	curl -sf "$LABD_URL/api/v1/jobs/$id/log" | cmp - "$LAB/state/jobs/$id/console.log"
'

test_expect_success 'the submission status is polled' '
	wait_for "grep -q \"GET.*/status?id=\" \"$TMP/kdb.jsonl\"" 20 &&
	wait_for "grep -q \"job $id: submission .* processed\" \"$LAB/labd.log\"" 10
'

test_expect_success 'a refusal (4xx) is reported with its body as a job event, not retried' '
	wait_for "curl -sf $LABD_URL/api/v1/jobs/$id/events | grep -q \"KCIDB refused the document with HTTP 404\"" 20 &&
	curl -sf "$LABD_URL/api/v1/jobs/$id/events" | grep -q "no such stream" &&
	sleep 1 && [ "$(count_requests refuse 404)" = 1 ]
'

sim_ctl mode sim0 panic >/dev/null
id2=$(submit "$TMP/plain.yaml")
wait_job $id2
sim_ctl mode sim0 normal >/dev/null
test_expect_success 'a kernel panic fails the boot test; the document is still valid' '
	wait_for "[ -f \"$LAB/state/jobs/$id2/kcidb.json\" ]" 10 &&
	[ "$(kget $id2 "[t[\"status\"] for t in d[\"tests\"] if t[\"path\"] == \"boot\"][0]")" = FAIL ] &&
	kget $id2 "[t[\"log_excerpt\"] for t in d[\"tests\"] if t[\"path\"] == \"boot\"][0]" | grep -q "Kernel panic" &&
	[ "$(kget $id2 "d[\"tests\"][0][\"build_id\"]")" = "test_lab:job-$id2" ] &&
	wait_for "[ \$(grep -c \"/submit\" \"$TMP/kdb.jsonl\") -ge 2 ]" 20 &&
	validate_all
'

test_done
