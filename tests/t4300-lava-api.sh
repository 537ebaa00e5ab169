#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t4300-lava-api.sh -- LAVA's clients against labd, unchanged: Debian's lavacli
# over XML-RPC (/RPC2), KernelCI's and squad's REST and XML-RPC calls replayed
# (tests/helper/lava-clients.py), tokens and roles, errors in each API's form.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session-lib.sh"

if ! command -v lavacli >/dev/null; then
	test_skip 'lavacli against labd' 'lavacli is not installed (make deps)'
	test_done
	exit 0
fi

sim_lab 1
add_users
labd_start
export HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config
mkdir -p "$HOME"
HOSTPORT=127.0.0.1:$LABD_PORT
CLIENTS="$PY $TOP/tests/helper/lava-clients.py"

# lava USER ARGS...: lavacli as USER ("anonymous": no credentials)
lava() {
	local who=$1; shift
	if [ "$who" = anonymous ]; then
		lavacli --uri "http://$HOSTPORT/RPC2" "$@"
	else
		lavacli --uri "http://$who:$(token_of "$who")@$HOSTPORT/RPC2" "$@"
	fi
}

# req METHOD PATH [CURL ARGS...]: $status; the body in $TMP/body, headers in $TMP/headers
req() {
	local m=$1 p=$2
	shift 2
	status=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X "$m" "$@" \
		"$LABD_URL$p")
}
expect_status() {
	[ "$status" = "$1" ] || { echo "status $status, expected $1"; cat "$TMP/body"; return 1; }
}
jget() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(eval(e)) for e in sys.argv[2:]))' "$TMP/body" "$@"
}
# rpc XML: POST an XML-RPC call as gitlab; $status, the body in $TMP/body
rpc() {
	req POST /RPC2 -u "gitlab:$(token_of gitlab)" -H 'Content-Type: text/xml' --data-binary "$1"
}
set_board() {
	api_as boss POST /devices/sim-01/state -d "{\"state\": \"$1\"}" >/dev/null
}

write_job "$TMP/job.yaml" <<JOB
job_name: lava clients
device_type: sim-uboot
timeouts:
  job: {minutes: 3}
  action: {seconds: 60}
  connection: {seconds: 20}
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
          - lava-test-case pass-case --result pass
          - lava-test-case speed --result pass --measurement 12.5 --units MB/s
          - lava-test-case fail-case --result fail
          - printf 'caf\\xc3\\xa9 <&> "q" \\\\ tab\\there \\e[0m\\n'
JOB
sed -i 's/\\xc3\\xa9/é/' "$TMP/job.yaml"

t_version() {
	[ "$(lava gitlab system version)" = 2026.07 ] &&
	[ "$(lava anonymous system version)" = 2026.07 ] &&
	! lavacli --uri "http://gitlab:wrong-token@$HOSTPORT/RPC2" system version >"$TMP/out" 2>&1 &&
	grep -q "401" "$TMP/out" &&
	! lavacli --uri "http://rita:$(token_of gitlab)@$HOSTPORT/RPC2" system version \
		>"$TMP/out" 2>&1 &&
	grep -q "401" "$TMP/out"
}
test_expect_success 'lavacli system version: a good token, a bad one, a token of another user' \
	t_version

t_submit_wait_show() {
	id=$(lava gitlab jobs submit "$TMP/job.yaml") &&
	echo "$id" >"$TMP/id" &&
	lava gitlab jobs wait --polling 1 --timeout 120 "$id" &&
	lava rita jobs show "$id" >"$TMP/show" &&
	cat "$TMP/show" &&
	grep -q "^state       : Finished" "$TMP/show" &&
	grep -q "^Health      : Complete" "$TMP/show" &&
	grep -q "^submitter   : gitlab" "$TMP/show" &&
	grep -q "^device      : sim-01" "$TMP/show" &&
	grep -Eq "^end time    : 20[0-9]{6}T[0-9:]{8}$" "$TMP/show" &&
	lava rita jobs show --yaml "$id" >"$TMP/show.yaml" &&
	grep -q "^end_time: 20" "$TMP/show.yaml" &&
	grep -q "^error_type: null" "$TMP/show.yaml"
}
test_expect_success 'lavacli jobs submit, wait and show' t_submit_wait_show
id=$(cat "$TMP/id" 2>/dev/null || echo 0)

t_logs() {
	log=$LAB/state/jobs/$id/console.log &&
	lava rita jobs logs --filters target "$id" >"$TMP/logs.out" &&
	cut -c21- "$TMP/logs.out" >"$TMP/logs.txt" &&
	cp "$log" "$TMP/console.txt" &&
	{ [ -z "$(tail -c 1 "$log")" ] || echo >>"$TMP/console.txt"; } &&
	cmp "$TMP/logs.txt" "$TMP/console.txt" &&
	grep -q "café <&> \"q\" \\\\ tab	here" "$TMP/logs.txt" &&
	lava rita jobs logs "$id" >"$TMP/all.out" &&
	grep -q "power-on at" "$TMP/all.out" &&
	[ "$(wc -l <"$TMP/all.out")" -gt "$(wc -l <"$TMP/logs.out")" ] &&
	lava rita jobs logs --raw --filters results "$id" >"$TMP/raw.out" &&
	grep -q '"msg": {"case": "speed", "definition": "0_smoke", "measurement": ! "12.5", "result": "pass", "units": "MB/s"}' "$TMP/raw.out"
}
test_expect_success 'lavacli jobs logs: every console byte, labd lines, results' t_logs

t_results() {
	lava rita results "$id" >"$TMP/results" &&
	cat "$TMP/results" &&
	grep -q '^\* 0_smoke.pass-case \[pass\]' "$TMP/results" &&
	grep -q '^\* 0_smoke.fail-case \[fail\]' "$TMP/results" &&
	grep -q '^\* lava.job \[pass\]' "$TMP/results" &&
	grep -q '^\* lava.auto-login-action \[pass\]' "$TMP/results" &&
	grep -q '^\* lava.0_smoke \[pass\]' "$TMP/results" &&
	lava rita results --yaml "$id" >"$TMP/results.yaml" &&
	$PY -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
speed = [c for c in d if c["name"] == "speed"][0]
assert speed["measurement"] == "12.5000000000" and speed["unit"] == "MB/s", speed
assert speed["metadata"]["units"] == "MB/s", speed' "$TMP/results.yaml"
}
test_expect_success 'lavacli results: the suites and the lava suite' t_results

t_devices() {
	lava rita devices list >"$TMP/devices" &&
	grep -q '^\* sim-01 (sim-uboot): Idle,Good$' "$TMP/devices" &&
	lava anonymous device-types list >"$TMP/types" &&
	grep -q '^\* sim-uboot (1)$' "$TMP/types" &&
	set_board maintenance &&
	lava rita devices list | grep -q '^\* sim-01 (sim-uboot): Idle,Maintenance$' &&
	set_board idle
}
test_expect_success 'lavacli devices list and device-types list' t_devices

t_cancel() {
	set_board maintenance &&
	qid=$(lava gitlab jobs submit "$TMP/job.yaml") &&
	{ lava rita jobs cancel "$qid" >"$TMP/out" 2>&1 || true; } &&
	grep -q "Fault 403: \"user 'rita' (reader) may not cancel jobs\"" "$TMP/out" &&
	{ lava anonymous jobs cancel "$qid" >"$TMP/out" 2>&1 || true; } &&
	grep -q "Fault 401" "$TMP/out" &&
	lava gitlab jobs cancel "$qid" >"$TMP/out" 2>&1 &&
	! grep -q Unable "$TMP/out" &&
	lava rita jobs show "$qid" | grep -q "^Health      : Canceled" &&
	lava rita results "$qid" | grep -q '^\* lava.job \[fail\]' &&
	set_board idle
}
test_expect_success 'lavacli jobs cancel: by its submitter, not by a reader or anonymous' t_cancel

t_kernelci() {
	set_board maintenance &&
	[ "$($CLIENTS kernelci-devices "$LABD_URL" "$(token_of gitlab)" sim-uboot)" = "" ] &&
	base=$($CLIENTS kernelci-queue "$LABD_URL" "$(token_of gitlab)" sim-uboot) &&
	kid=$($CLIENTS kernelci-submit "$LABD_URL" "$(token_of gitlab)" "$TMP/job.yaml") &&
	[ "$($CLIENTS kernelci-queue "$LABD_URL" "$(token_of gitlab)" sim-uboot)" = \
	  $((base + 1)) ] &&
	[ "$($CLIENTS kernelci-queue "$LABD_URL" "$(token_of gitlab)" no-such-type)" = 0 ] &&
	set_board idle &&
	[ "$($CLIENTS kernelci-devices "$LABD_URL" "$(token_of gitlab)" sim-uboot)" = sim-01 ] &&
	[ "$($CLIENTS kernelci-wait "$LABD_URL" "$(token_of gitlab)" "$kid")" = Complete ] &&
	[ "$($CLIENTS kernelci-queue "$LABD_URL" "$(token_of gitlab)" sim-uboot)" = 0 ]
}
test_expect_success 'KernelCI: submit, wait, queue depth and device availability' t_kernelci

t_squad() {
	$CLIENTS squad-rest "$LABD_URL" "$(token_of gitlab)" "$TMP/job.yaml" &&
	$CLIENTS squad-rpc "$LABD_URL" gitlab "$(token_of gitlab)" "$TMP/job.yaml" &&
	set_board maintenance &&
	sid=$($CLIENTS kernelci-submit "$LABD_URL" "$(token_of gitlab)" "$TMP/job.yaml") &&
	[ "$($CLIENTS squad-cancel "$LABD_URL" "$(token_of gitlab)" "$sid")" = \
	  "Job cancel signal sent." ] &&
	set_board idle &&
	req GET "/api/v0.2/jobs/$sid" && expect_status 200 &&
	[ "$(jget 'd["state"]' 'd["health"]')" = "Finished Canceled" ]
}
test_expect_success 'squad: REST (form submit, suites, tests) and XML-RPC at //RPC2' t_squad

# each lavacli command a lab's people use every day, as lavacli 1.2 prints it
t_lavacli_jobs() {
	lava rita jobs list >"$TMP/out" && cat "$TMP/out" &&
	grep -q "^\* $id: Finished,Complete \[gitlab\] (lava clients) - sim-uboot$" "$TMP/out" &&
	lava rita jobs list --state FINISHED --health CANCELED >"$TMP/out" &&
	! grep -q "^\* $id:" "$TMP/out" && grep -q ': Finished,Canceled \[gitlab\]' "$TMP/out" &&
	lava rita jobs list --verbose --limit 1 >"$TMP/out" &&
	grep -Eq '^\* [0-9]+: Finished,[A-Za-z]+ \[gitlab\] \(lava clients\) - sim-uboot (sim-01|None) <[^>]+> <20[0-9-]+ [0-9:.]+\+00:00>' "$TMP/out" &&
	rpc '<methodCall><methodName>scheduler.jobs.list</methodName><params><param><value><string>BOGUS</string></value></param></params></methodCall>' &&
	grep -q "Invalid state &apos;BOGUS&apos;\|Invalid state 'BOGUS'" "$TMP/body" &&
	lava rita jobs definition "$id" | grep -q "^job_name: lava clients$" &&
	lava rita jobs config "$id" --dest "$TMP/config" &&
	cmp "$TMP/config/definition.yaml" "$TMP/job.yaml" &&
	set_board maintenance &&
	q1=$(lava gitlab jobs resubmit "$id") && q2=$(lava gitlab jobs submit "$TMP/job.yaml") &&
	[ "$q2" -gt "$q1" ] &&
	lava rita jobs queue >"$TMP/out" && cat "$TMP/out" &&
	[ "$(grep -c '^\* ' "$TMP/out")" = 2 ] &&
	[ "$(sed -n 2p "$TMP/out")" = "* $q1: gitlab (lava clients) - sim-uboot" ] &&
	lava rita jobs queue no-such-type | grep -vq '^\*' &&
	lava rita jobs list --state SUBMITTED | grep -q "^\* $q2: Submitted,Unknown" &&
	lava gitlab jobs cancel "$q1" "$q2" && set_board idle
}
test_expect_success 'lavacli jobs list, queue, definition, config, resubmit' t_lavacli_jobs

t_lavacli_results() {
	lava rita results "$id" 0_smoke >"$TMP/out" &&
	grep -q '^\* 0_smoke.pass-case \[pass\]' "$TMP/out" && ! grep -q 'lava\.' "$TMP/out" &&
	[ "$(lava rita results "$id" 0_smoke fail-case)" = fail ] &&
	[ "$(lava rita results "$id" lava job)" = pass ] &&
	lava rita results --yaml "$id" 0_smoke speed | grep -q "unit: MB/s" &&
	test_expect_code 1 lava rita results "$id" 0_smoke no-such-case >"$TMP/out" 2>&1 &&
	grep -q "Fault 404: \"Test case 'no-such-case' was not found in suite '0_smoke'.\"" "$TMP/out"
}
test_expect_success 'lavacli results JOB SUITE and JOB SUITE CASE' t_lavacli_results

t_lavacli_lab() {
	worker=$(hostname) &&
	lava rita devices show sim-01 >"$TMP/out" && cat "$TMP/out" &&
	grep -q "^device-type : sim-uboot$" "$TMP/out" && grep -q "^state       : Idle$" "$TMP/out" &&
	grep -q "^health      : Good$" "$TMP/out" && grep -q "^worker      : $worker$" "$TMP/out" &&
	grep -q "^tags        : \['sim'\]$" "$TMP/out" &&
	{ lava rita devices show nope >"$TMP/out" 2>&1; grep -q "Device 'nope' was not found" "$TMP/out"; } &&
	[ "$(lava rita devices tags list sim-01)" = "$(printf 'Tags:\n* sim')" ] &&
	{ lava rita devices dict get sim-01 >"$TMP/out" 2>&1; grep -q "no LAVA device dictionary: labd defines it in .*sim-01" "$TMP/out"; } &&
	{ lava rita devices maintenance sim-01 >"$TMP/out" 2>&1; grep -q "may not set the health of boards" "$TMP/out"; } &&
	lava boss devices maintenance sim-01 &&
	lava rita devices list | grep -q '^\* sim-01 (sim-uboot): Idle,Maintenance$' &&
	api_as rita GET /devices/sim-01 >/dev/null && grep -q 'set by boss' "$TMP/body" &&
	lava boss devices update --health GOOD sim-01 &&
	lava rita devices list | grep -q '^\* sim-01 (sim-uboot): Idle,Good$' &&
	{ lava boss devices tags add sim-01 usb3 >"$TMP/out" 2>&1; grep -q "defined in files" "$TMP/out"; } &&
	lava rita device-types show sim-uboot >"$TMP/out" && cat "$TMP/out" &&
	grep -q "^devices         : \['sim-01'\]$" "$TMP/out" &&
	[ "$(lava rita device-types aliases list sim-uboot)" = "Aliases:" ] &&
	{ lava rita device-types template get sim-uboot >"$TMP/out" 2>&1; grep -q "no jinja2 template" "$TMP/out"; } &&
	[ "$(lava rita workers list)" = "$(printf 'Workers:\n* %s' "$worker")" ] &&
	lava rita workers show "$worker" >"$TMP/out" && cat "$TMP/out" &&
	grep -q "^devices     : sim-01$" "$TMP/out" && grep -q "^state       : Online$" "$TMP/out" &&
	lava boss workers maintenance --no-wait "$worker" &&
	lava rita devices list | grep -q '^\* sim-01 (sim-uboot): Idle,Maintenance$' &&
	lava boss workers update --health ACTIVE "$worker" &&
	lava rita devices list | grep -q '^\* sim-01 (sim-uboot): Idle,Good$' &&
	[ "$(lava rita tags list)" = "$(printf 'Tags:\n* sim')" ] &&
	lava rita tags show sim | grep -q '^\* sim-01$' &&
	[ "$(lava rita system whoami)" = rita ] && [ "$(lava rita system api)" = 2 ] &&
	{ lava boss workers config get "$worker" >"$TMP/out" 2>&1; grep -q "no lava-worker configuration" "$TMP/out"; } &&
	{ lava boss device-types update --description x sim-uboot >"$TMP/out" 2>&1; grep -q "defined in files" "$TMP/out"; } &&
	lava rita system methods list | grep -q '^scheduler.jobs.list$' &&
	(cd "$TMP" && lava rita system export lab-export >"$TMP/out" 2>&1) && cat "$TMP/out" &&
	grep -q "No device dict found" "$TMP/out" &&
	grep -q "hostname: sim-01" "$TMP/lab-export/instance.yaml" &&
	req GET /api/v0.2/devices/ && [ "$(jget 'd["results"][0]["tags"]')" = "[1]" ] &&
	req GET /api/v0.2/tags/ && [ "$(jget 'd["results"][0]["id"]' 'd["results"][0]["name"]')" = "1 sim" ]
}
test_expect_success 'lavacli devices, device-types, workers, tags, system; REST tags' \
	t_lavacli_lab

t_rest_shapes() {
	req GET "/api/v0.2/jobs/$id/?format=json" && expect_status 200 &&
	[ "$(jget 'd["id"]' 'd["state"]' 'd["health"]' 'd["actual_device"]')" = \
	  "$id Finished Complete sim-01" ] &&
	req GET "/api/v0.2/jobs/?limit=1&offset=1&format=json" && expect_status 200 &&
	[ "$(jget 'len(d["results"])' 'd["count"] > 2' '"offset=2" in d["next"]' \
		'"offset=0" in d["previous"]' '"format=json" in d["next"]')" = \
	  "1 True True True True" ] &&
	req GET "/api/v0.2/jobs/?health=Canceled" &&
	[ "$(jget 'set(j["health"] for j in d["results"])')" = "{'Canceled'}" ] &&
	req GET "/api/v0.2/jobs/?state=Bogus" && expect_status 400 &&
	req GET "/api/v0.2/jobs/$id/tests/?result=fail" && expect_status 200 &&
	[ "$(jget 'd["count"]' 'd["results"][0]["name"]')" = "1 fail-case" ] &&
	req GET "/api/v0.2/jobs/$id/junit/" && expect_status 200 &&
	xmllint --noout "$TMP/body" &&
	req GET /api/v0.2/devicetypes/ && expect_status 200 &&
	[ "$(jget 'd["results"][0]["name"]')" = sim-uboot ] &&
	req GET /api/v0.2/workers/ && [ "$(jget 'd["results"][0]["state"]')" = Online ] &&
	req GET /api/v0.2/system/version/ && [ "$(jget 'd["version"]')" = 2026.07 ] &&
	req GET /api/v0.2/system/whoami/ -H "Authorization: Token $(token_of rita)" &&
	[ "$(jget 'd["user"]')" = rita ] &&
	req GET "/api/v0.2/jobs/$id/metadata" && expect_status 200 &&
	req POST /api/v0.2/jobs/validate/ -H "Authorization: Token $(token_of rita)" \
		--data-urlencode "definition@$TMP/job.yaml" &&
	[ "$(jget 'd["message"]')" = "Job valid." ]
}
test_expect_success 'REST: job, list paging and filters, tests, junit, devices, system' \
	t_rest_shapes

t_log_ranges() {
	req GET "/api/v0.2/jobs/$id/logs/" && expect_status 200 &&
	grep -qi '^content-type: application/yaml' "$TMP/headers" &&
	grep -qi "^content-disposition: attachment; filename=job_$id.yaml" "$TMP/headers" &&
	total=$(wc -l <"$TMP/body") && cp "$TMP/body" "$TMP/whole.yaml" &&
	req GET "/api/v0.2/jobs/$id/logs/?start=2&end=5" && expect_status 200 &&
	[ "$(wc -l <"$TMP/body")" = 3 ] &&
	[ "$(cat "$TMP/body")" = "$(sed -n 3,5p "$TMP/whole.yaml")" ] &&
	req GET "/api/v0.2/jobs/$id/logs/?start=$((total - 1))" && expect_status 200 &&
	[ "$(wc -l <"$TMP/body")" = 1 ] &&
	req GET "/api/v0.2/jobs/$id/logs/?start=$total" && expect_status 404 &&
	[ "$(jget 'd["detail"]')" = "Not found." ] &&
	$PY - "$HOSTPORT" "$id" "$(token_of rita)" "$total" <<'PY'
import base64, sys, xmlrpc.client, yaml
host, job, token, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = xmlrpc.client.ServerProxy("http://rita:%s@%s/RPC2" % (token, host), allow_none=True)
done, data = p.scheduler.jobs.logs(job, 3, 7)
assert len(yaml.safe_load(str(data))) == 4 and done, (done, data)
done, data = p.scheduler.jobs.logs(job, total - 2, None)   # Mesa sends two args
assert len(yaml.safe_load(str(data))) == 2 and done
assert p.scheduler.job_state(job) == {"job_id": int(job), "job_state": "Finished"}
PY
}
test_expect_success 'logs: [start, end) of the YAML log; an empty slice is 404' t_log_ranges

t_errors() {
	req GET /RPC2 && expect_status 405 &&
	grep -qi '^content-type: application/xml' "$TMP/headers" &&
	grep -q '<name>faultCode</name>' "$TMP/body" &&
	rpc '<methodCall><methodName>scheduler.jobs.show</methodName><params><param><value><string>999999</string></value></param></params></methodCall>' &&
	expect_status 200 && grep -q '<i4>404</i4>' "$TMP/body" &&
	grep -q "Job &apos;999999&apos; was not found\|Job '999999' was not found" "$TMP/body" &&
	rpc '<methodCall><methodName>no.such.method</methodName></methodCall>' &&
	expect_status 200 && grep -q '<fault>' "$TMP/body" &&
	rpc '<methodCall><methodName>x' && expect_status 200 && grep -q '<fault>' "$TMP/body" &&
	req POST /RPC2 -H 'Content-Type: text/xml' --data-binary '<methodCall><methodName>scheduler.jobs.submit</methodName><params><param><value><string>x</string></value></param></params></methodCall>' &&
	expect_status 200 && grep -q '<i4>401</i4>' "$TMP/body" &&
	req POST //RPC2 -u "rita:$(token_of rita)" --data-binary '<methodCall><methodName>scheduler.submit_job</methodName><params><param><value><string>x</string></value></param></params></methodCall>' &&
	expect_status 200 && grep -q '<i4>403</i4>' "$TMP/body" &&
	rpc '<methodCall><methodName>scheduler.jobs.submit</methodName><params><param><value><string>job_name: x</string></value></param></params></methodCall>' &&
	expect_status 200 && grep -q '<i4>400</i4>' "$TMP/body" &&
	head -c 2000000 /dev/zero | tr '\0' x >"$TMP/big" &&
	req POST /RPC2/ -u "gitlab:$(token_of gitlab)" --data-binary "@$TMP/big" &&
	expect_status 413 && grep -q '<i4>413</i4>' "$TMP/body" &&
	req GET /api/v0.2/jobs/999999/ && expect_status 404 &&
	[ "$(jget 'd["detail"]')" = "Not found." ] &&
	req POST /api/v0.2/jobs/ -H 'Content-Type: application/json' -d '{"definition": "x"}' &&
	expect_status 401 && grep -qi '^www-authenticate: Token' "$TMP/headers" &&
	req POST /api/v0.2/jobs/ -H "Authorization: Token $(token_of gitlab)" \
		-H 'Content-Type: application/json' -d '{"definition": "job_name: x"}' &&
	expect_status 400 && jget 'd["message"]' | grep -q "^Problem with submitted job data" &&
	req POST /api/v0.2/jobs/ -H "Authorization: Token $(token_of gitlab)" \
		-H 'Content-Type: application/json' -d '{}' &&
	expect_status 400 && [ "$(jget 'd["definition"][0]')" = "This field is required." ] &&
	req POST /api/v0.2/jobs/ -H "Authorization: Token $(token_of rita)" \
		-H 'Content-Type: application/json' -d '{"definition": "x"}' &&
	expect_status 403 && jget 'd["detail"]' | grep -q "may not submit jobs" &&
	req GET /api/v0.2/no/such/thing && expect_status 404 && jget 'd["detail"]' &&
	req DELETE "/api/v0.2/jobs/$id" && expect_status 405 && jget 'd["detail"]' &&
	! grep -qi '<html' "$TMP/body"
}
test_expect_success 'errors: faults on /RPC2 with LAVA codes, {"detail"} on REST, never HTML' \
	t_errors


# a system.multicall's calls each answered in its place: values, faults for a
# call that fails or is malformed (no params, params not an array, not a
# struct, a nested multicall), a call of xmlrpc-c's own methods; a multicall
# without its list is a fault; labd answers on (the same run of labd)
t_multicall() {
	$PY - "http://gitlab:$(token_of gitlab)@$HOSTPORT/RPC2" >"$TMP/multi" <<'PY'
import sys, xmlrpc.client
p = xmlrpc.client.ServerProxy(sys.argv[1], allow_none=True)
def call(*args):
    try:
        print(p.system.multicall(*args))
    except xmlrpc.client.Fault as f:
        print("fault", f.faultCode)
call([{"methodName": "system.whoami", "params": []},
      {"methodName": "scheduler.jobs.show", "params": ["999999"]},
      {"methodName": "system.listMethods", "params": []}])
call([{"methodName": "system.version"}, {"params": []}, 5,
      {"methodName": "system.version", "params": 3},
      {"methodName": "system.multicall", "params": [[]]},
      {"methodName": "no.such.method", "params": []}])
call()
call(5)
call([])
PY
	cat "$TMP/multi" &&
	$PY - "$TMP/multi" <<'PY'
import ast, sys
lines = open(sys.argv[1]).read().splitlines()
first = ast.literal_eval(lines[0])
assert first[0] == ["gitlab"], first
assert first[1]["faultCode"] == 404, first
assert "scheduler.jobs.submit" in first[2][0], first
second = ast.literal_eval(lines[1])
assert [e["faultCode"] for e in second] == [-502, -502, -501, -501, -507, -506], second
assert lines[2:] == ["fault -502", "fault -501", "[]"], lines
PY
	[ "$(lava gitlab system version)" = 2026.07 ]
}
test_expect_success 'system.multicall: each call answered in its place, a malformed one a fault' \
	t_multicall


t_big_log() {
	set_board maintenance &&
	bid=$(lava gitlab jobs submit "$TMP/job.yaml") &&
	lava gitlab jobs cancel "$bid" >/dev/null &&
	set_board idle &&
	$PY "$TOP/tests/helper/big-log.py" "$LAB/state/jobs/$bid" 16 &&
	records=$(($(wc -l <"$LAB/state/jobs/$bid/console.log") + \
		   $(wc -l <"$LAB/state/jobs/$bid/labd.log"))) &&
	echo 5 >"/proc/$LABD_PID/clear_refs" &&
	rss0=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$LABD_PID/status") &&
	pids= &&
	for i in 1 2 3 4; do
		curl -sf --limit-rate 20M -o "$TMP/big$i.yaml" \
			"$LABD_URL/api/v0.2/jobs/$bid/logs/" &
		pids="$pids $!"
	done &&
	for i in 5; do
		$PY - "$HOSTPORT" "$(token_of rita)" "$bid" "$TMP/big$i.yaml" <<'PY' &
import sys, xmlrpc.client
host, token, job, out = sys.argv[1:]
p = xmlrpc.client.ServerProxy("http://rita:%s@%s/RPC2" % (token, host), allow_none=True)
start, f = 0, open(out, "wb")
while True:    # as lavacli loops: from the records read so far until finished
    done, data = p.scheduler.jobs.logs(job, start, None)
    f.write(data.data)
    start += data.data.count(b"\n")
    if done:
        break
PY
		pids="$pids $!"
	done &&
	for p in $pids; do wait "$p"; done &&
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$LABD_PID/status") &&
	say "RSS $rss0 kB, peak $hwm kB with 5 readers of a 16 MiB log ($records records)" &&
	{ under_asan || [ $((hwm - rss0)) -lt $((5 * 16 * 1024)) ]; } &&
	for i in 1 2 3 4 5; do [ "$(wc -l <"$TMP/big$i.yaml")" = "$records" ] || exit 1; done &&
	cmp "$TMP/big1.yaml" "$TMP/big4.yaml" &&
	cmp "$TMP/big1.yaml" "$TMP/big5.yaml" &&
	head -1 "$TMP/big5.yaml" | grep -q '"msg": "\[       0.000000\] a line of console output, number 0, for the reader \\u2713 \\e\[0m\\r"'
}
test_expect_success 'a 16 MiB log to 4 REST readers and 1 XML-RPC reader at once: bounded RSS' \
	t_big_log

test_done
