#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t4000-api.sh -- labd's HTTP API: every endpoint, its errors and limits, log
# streaming to the job's end, bearer tokens and the Unix socket listener.
. "$(dirname "$0")/lib.sh"

API_MAX_BODY=1048576
sim_lab 1

# req METHOD PATH [CURL ARGS...]: $status; the body in $TMP/body, headers in $TMP/headers
req() {
	local m=$1 p=$2
	shift 2
	status=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X "$m" "$@" "$api$p")
}

# jget EXPR...: Python expressions on the last body (d), printed space-separated
jget() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(eval(e)) for e in sys.argv[2:]))' "$TMP/body" "$@"
}

expect_status() {
	[ "$status" = "$1" ] || { echo "status $status, expected $1"; cat "$TMP/body"; return 1; }
}

header() {
	grep -qi "^$1: $2" "$TMP/headers" || { echo "no '$1: $2' in:"; cat "$TMP/headers"; return 1; }
}

write_job "$TMP/queued.yaml" <<'JOB'
job_name: stays queued
device_type: sim-uboot
timeouts:
  job: {minutes: 1}
actions:
- boot:
    method: minimal
    prompts: ['root@sim:~# ']
JOB

write_job "$TMP/queued.json" <<'JOB'
{"job_name": "json job", "device_type": "sim-uboot", "priority": 80,
 "timeouts": {"job": {"minutes": 1}},
 "actions": [{"boot": {"method": "minimal", "prompts": ["root@sim:~# "]}}]}
JOB

write_job "$TMP/unknown-type.yaml" <<'JOB'
job_name: nowhere
device_type: no-such-type
timeouts:
  job: {minutes: 1}
actions:
- boot:
    method: minimal
    prompts: ['# ']
JOB

write_uboot_smoke_job "$TMP/boot.yaml"

# ---- listening: before labd runs, so nothing shares its boards ----

t_busy() {
	local b port
	$PY -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$TMP/busy.port" &
	b=$!
	wait_for "[ -s $TMP/busy.port ]" 5 && port=$(cat "$TMP/busy.port") &&
	! timeout 20 "$LABD" -c "$LAB/labd.conf" --listen "127.0.0.1:$port" 2>"$TMP/busy.err" &&
	kill $b &&
	grep -q "cannot listen on '127.0.0.1:$port': Address already in use" "$TMP/busy.err"
}
test_expect_success 'labd refuses to start on an address in use, and says so' t_busy

t_bad_address() {
	! timeout 20 "$LABD" -c "$LAB/labd.conf" --listen nowhere 2>"$TMP/addr.err" &&
	grep -q "invalid listen address 'nowhere'" "$TMP/addr.err"
}
test_expect_success 'labd refuses a listen address it cannot parse' t_bad_address

# ---- the API ----

labd_start
api=$LABD_URL/api/v1

t_health() {
	req GET /health && expect_status 200 &&
	[ "$(jget 'd["status"]' 'd["boards"]' 'd["queued"]' 'd["running"]')" = "ok 1 0 0" ] &&
	[ -n "$(jget 'd["version"]')" ] &&
	header content-type application/json
}
test_expect_success 'GET /health: status, version and counts' t_health

t_devices() {
	req GET /devices && expect_status 200 &&
	[ "$(jget 'len(d)' 'd[0]["name"]' 'd[0]["type"]' 'd[0]["state"]' 'd[0]["tags"][0]' 'd[0]["job"]')" = \
	  "1 sim-01 sim-uboot idle sim None" ] &&
	wait_for "curl -s $api/devices/sim-01 | grep -q '\"console_up\":true'" 10
}
test_expect_success 'GET /devices: every board with its state' t_devices

t_maintenance() {
	req POST /devices/sim-01/state -d '{"state": "maintenance", "reason": "keep jobs queued"}' &&
	expect_status 200 &&
	[ "$(jget 'd["state"]' 'd["reason"]')" = "maintenance keep jobs queued (set by anonymous)" ] &&
	req GET /devices/sim-01 && expect_status 200 &&
	[ "$(jget 'd["state"]')" = maintenance ]
}
test_expect_success 'POST /devices/NAME/state: maintenance with a reason' t_maintenance

t_state_errors() {
	req POST /devices/sim-01/state -d '{"state": ' && expect_status 400 &&
	grep -q "malformed JSON" "$TMP/body" &&
	req POST /devices/sim-01/state -d '{"state": "running"}' && expect_status 400 &&
	req POST /devices/sim-01/state -d '{"state": "idle", "colour": 1}' && expect_status 400 &&
	grep -q "unknown key 'colour'" "$TMP/body" &&
	req POST /devices/nope/state -d '{"state": "idle"}' && expect_status 404 &&
	req GET /devices/nope && expect_status 404 && grep -q "no board 'nope'" "$TMP/body"
}
test_expect_success 'board state: malformed JSON, bad state, unknown key, unknown board' t_state_errors

t_submit_yaml() {
	req POST "/jobs?filename=queued.yaml" -H "Content-Type: application/yaml" \
		--data-binary @"$TMP/queued.yaml" &&
	expect_status 201 && [ "$(jget 'd["id"]' 'd["url"]')" = "1 /api/v1/jobs/1" ]
}
test_expect_success 'POST /jobs: a YAML job is queued (201 with its id)' t_submit_yaml

t_submit_json() {
	req POST /jobs --data-binary @"$TMP/queued.json" -H "Content-Type:" &&
	expect_status 201 && [ "$(jget 'd["id"]')" = 2 ] &&
	req GET /jobs/2 && [ "$(jget 'd["format"]' 'd["priority"]' 'd["filename"]')" = "json 80 job.yaml" ]
}
test_expect_success 'POST /jobs: a JSON job, its format found without a Content-Type' t_submit_json

t_invalid() {
	req POST "/jobs?filename=bad-keys.yaml" --data-binary @"$TOP/tests/data/jobs/bad-keys.yaml" &&
	expect_status 422 && [ "$(jget 'd["error"]' 'len(d["errors"])')" = "invalid job 7" ] &&
	grep -q "bad-keys.yaml:10: unknown key 'colour'" "$TMP/body" &&
	grep -q "bad-keys.yaml:22: actions\[1\].boot: unknown key 'typo_key'" "$TMP/body"
}
test_expect_success 'POST /jobs: an invalid job is 422 with every file:line problem' t_invalid

t_unknown_type() {
	req POST "/jobs?filename=unknown-type.yaml" --data-binary @"$TMP/unknown-type.yaml" &&
	expect_status 422 &&
	grep -q "unknown-type.yaml: unknown device type 'no-such-type'" "$TMP/body"
}
test_expect_success 'POST /jobs: a device type this lab lacks is 422' t_unknown_type

t_malformed() {
	printf '{"job_name": "x",\n "device_type": }\n' >"$TMP/broken.json" &&
	req POST "/jobs?filename=broken.json" -H "Content-Type: application/json" \
		--data-binary @"$TMP/broken.json" &&
	expect_status 422 && grep -q "broken.json:2" "$TMP/body" &&
	req POST "/jobs?filename=syntax.yaml" --data-binary @"$TOP/tests/data/jobs/bad-syntax.yaml" &&
	expect_status 422 && grep -q "syntax.yaml:[0-9]" "$TMP/body"
}
test_expect_success 'POST /jobs: malformed JSON and YAML are 422 with the line' t_malformed

t_dry_run() {
	req POST "/jobs?dry_run=1&filename=queued.yaml" --data-binary @"$TMP/queued.yaml" &&
	expect_status 200 && [ "$(jget 'd["valid"]')" = True ] &&
	req POST "/jobs?dry_run=1&filename=unknown-type.yaml" --data-binary @"$TMP/unknown-type.yaml" &&
	expect_status 422 &&
	req GET /jobs && [ "$(jget 'len(d)')" = 2 ]
}
test_expect_success 'POST /jobs?dry_run=1 checks without queueing' t_dry_run

t_limits() {
	req POST /jobs --data-binary "" && expect_status 400 &&
	head -c $((API_MAX_BODY + 1)) /dev/zero | tr '\0' a >"$TMP/big" &&
	req POST /jobs --data-binary @"$TMP/big" && expect_status 413 &&
	req POST /jobs -H "Transfer-Encoding: chunked" --data-binary @"$TMP/big" &&
	expect_status 413 && grep -q "larger than $API_MAX_BODY bytes" "$TMP/body"
}
test_expect_success 'POST /jobs: empty body 400, larger than the limit 413' t_limits

t_list() {
	req GET /jobs && expect_status 200 && [ "$(jget '[j["id"] for j in d]')" = "[2, 1]" ] &&
	[ "$(jget 'd[1]["state"]' 'd[1]["health"]' 'd[1]["device_type"]' 'd[1]["attempt"]' \
		  'd[1]["submitted"][-1]' 'd[1]["started"]')" = "queued unknown sim-uboot 1 Z None" ] &&
	req GET "/jobs?state=queued&limit=1" && [ "$(jget '[j["id"] for j in d]')" = "[2]" ] &&
	req GET "/jobs?before=2" && [ "$(jget '[j["id"] for j in d]')" = "[1]" ] &&
	req GET "/jobs?after=1" && [ "$(jget '[j["id"] for j in d]')" = "[2]" ] &&
	req GET "/jobs?after=2" && [ "$(jget 'len(d)')" = 0 ] &&
	req GET "/jobs?after=1&before=2" && expect_status 400 &&
	req GET "/jobs?state=finished" && [ "$(jget 'len(d)')" = 0 ] &&
	req GET "/jobs?state=bogus" && expect_status 400 &&
	req GET "/jobs?limit=0" && expect_status 400 &&
	req GET "/jobs?limit=x" && expect_status 400
}
test_expect_success 'GET /jobs: newest first, filters, limit and paging' t_list

t_show() {
	req GET /jobs/1 && expect_status 200 &&
	[ "$(jget 'd["name"]' 'd["state"]' 'd["phases"]' 'd["results"]["pass"]')" = "stays queued queued [] 0" ] &&
	jget 'd["definition"]' | cmp - <(cat "$TMP/queued.yaml"; echo) &&
	[ "$(jget 'd["log_url"]')" = "$LABD_URL/api/v1/jobs/1/log" ]
}
test_expect_success 'GET /jobs/ID: the record, the definition as submitted, the log URL' t_show

t_events() {
	req GET /jobs/1/events && expect_status 200 &&
	[ "$(jget 'd[0]["seq"]' 'd[0]["kind"]' 'd[0]["data"]["name"]')" = "1 queued stays queued" ] &&
	req GET "/jobs/1/events?after=1" && [ "$(jget 'len(d)')" = 0 ] &&
	req GET "/jobs/1/events?after=x" && expect_status 400
}
test_expect_success 'GET /jobs/ID/events and ?after=' t_events

t_errors() {
	req GET /jobs/99 && expect_status 404 && grep -q "no job 99" "$TMP/body" &&
	req GET /jobs/99/log && expect_status 404 &&
	req GET /jobs/99/results && expect_status 404 &&
	req GET /jobs/99/events && expect_status 404 &&
	req POST /jobs/99/cancel && expect_status 404 &&
	req GET /jobs/abc && expect_status 400 &&
	req GET /nothing && expect_status 404 &&
	status=$(curl -s -o /dev/null -w '%{http_code}' "$LABD_URL/api/v2/x") && expect_status 404 &&
	req DELETE /jobs && expect_status 405 && header allow "GET, POST" &&
	req GET /jobs/1/cancel && expect_status 405 &&
	req PUT /devices/sim-01/state && expect_status 405
}
test_expect_success 'unknown jobs 404, bad ids 400, unknown paths 404, wrong methods 405' t_errors

t_empty_log() {
	req GET /jobs/1/log && expect_status 200 && [ ! -s "$TMP/body" ] &&
	header x-log-size 0 && header content-type "text/plain; charset=utf-8"
}
test_expect_success 'the log of a queued job is empty, with X-Log-Size 0' t_empty_log

t_follow_cancel() {
	local f
	curl -s -N "$api/jobs/2/log?follow=1&labd=1" >"$TMP/follow2" &
	f=$!
	sleep 0.3
	req POST /jobs/2/cancel && expect_status 200 &&
	[ "$(jget 'd["state"]' 'd["health"]')" = "finished canceled" ] &&
	wait_for "! kill -0 $f" 5 && wait $f
}
test_expect_success 'a follower of a queued job ends when the job is canceled' t_follow_cancel

t_conflict() {
	req POST /jobs/2/cancel && expect_status 409 && grep -q "already finished" "$TMP/body"
}
test_expect_success 'cancel a finished job: 409' t_conflict

t_garbage() {
	printf 'GARBAGE\r\n\r\n' | timeout 5 socat - TCP:127.0.0.1:$LABD_PORT >/dev/null || true
	printf 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n' |
		timeout 5 socat - TCP:127.0.0.1:$LABD_PORT >/dev/null || true
	printf 'POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc' |
		timeout 5 socat -t 0.2 - TCP:127.0.0.1:$LABD_PORT >/dev/null || true
	printf 'GET /api/v1/jobs/%%zz HTTP/1.1\r\nHost: x\r\n\r\n' |
		timeout 5 socat - TCP:127.0.0.1:$LABD_PORT >/dev/null || true
	req GET /health && expect_status 200
}
test_expect_success 'garbage on the socket does not hurt labd' t_garbage

t_run() {
	local id f1 f2
	req POST /jobs/1/cancel && expect_status 200 &&
	req POST /devices/sim-01/state -d '{"state": "idle"}' && expect_status 200 &&
	req POST "/jobs?filename=boot.yaml" --data-binary @"$TMP/boot.yaml" && expect_status 201 &&
	id=$(jget 'd["id"]') && echo "$id" >"$TMP/boot.id" || return 1
	timeout 60 curl -sf -N "$api/jobs/$id/log?follow=1" >"$TMP/follow.raw" &
	f1=$!
	timeout 60 curl -sf -N "$api/jobs/$id/log?follow=1&labd=1" >"$TMP/follow.labd" &
	f2=$!
	wait $f1 && wait $f2 &&
	req GET /jobs/$id && [ "$(jget 'd["state"]' 'd["health"]')" = "finished complete" ] &&
	cmp "$TMP/follow.raw" "$LAB/state/jobs/$id/console.log" &&
	grep -q "sim login: root" "$TMP/follow.raw" &&
	grep -q "^# labd: .* job complete" "$TMP/follow.labd" &&
	[ "$(grep -c '^# labd: ' "$TMP/follow.labd")" = "$(wc -l <"$LAB/state/jobs/$id/labd.log")" ] &&
	[ "$(grep -v '^# labd: ' "$TMP/follow.labd" | tr -d '\n' | wc -c)" = \
	  "$(tr -d '\n' <"$LAB/state/jobs/$id/console.log" | wc -c)" ]
}
test_expect_success 'a job runs: followed logs end with it, the raw one byte-exact' t_run

t_log() {
	local id size
	id=$(cat "$TMP/boot.id") && size=$(stat -c %s "$LAB/state/jobs/$id/console.log") &&
	req GET /jobs/$id/log && cmp "$TMP/body" "$LAB/state/jobs/$id/console.log" &&
	header x-log-size "$size" &&
	req GET "/jobs/$id/log?offset=100" && expect_status 200 &&
	cmp "$TMP/body" <(tail -c +101 "$LAB/state/jobs/$id/console.log") &&
	header x-log-size "$size" &&
	req GET "/jobs/$id/log?offset=$size" && [ ! -s "$TMP/body" ] &&
	req GET "/jobs/$id/log?offset=-1" && expect_status 400 &&
	req GET "/jobs/$id/log?offset=5&labd=1" && expect_status 400 &&
	req GET "/jobs/$id/log?follow=1&timestamps=1" && expect_status 400 &&
	req GET "/jobs/$id/log?timestamps=1" && head -1 "$TMP/body" | grep -q '^\[20[0-9-]*T[0-9:.]*Z\] ' &&
	req GET "/jobs/$id/log?labd=1" && grep -q "^# labd: " "$TMP/body" &&
	req GET "/jobs/$id/log?follow=1&offset=$((size - 10))" && expect_status 200 &&
	cmp "$TMP/body" <(tail -c 10 "$LAB/state/jobs/$id/console.log")
}
test_expect_success 'GET /jobs/ID/log: whole, ?offset=N, ?timestamps=1, ?labd=1' t_log

t_show_finished() {
	req GET /jobs/$(cat "$TMP/boot.id") && expect_status 200 &&
	[ "$(jget 'd["device"]' 'd["error_type"]' 'd["results"]["pass"]' 'd["ended"] is not None')" = \
	  "sim-01 none 1 True" ] &&
	[ "$(jget 'd["phases"][0]["phase"]' 'd["phases"][-1]["phase"]')" = "power-on shell" ]
}
test_expect_success 'GET /jobs/ID: health, results summary and boot phases after the run' t_show_finished

t_results() {
	req GET /jobs/$(cat "$TMP/boot.id")/results && expect_status 200 &&
	[ "$(jget 'd[0]["suite"]' 'd[0]["name"]' 'd[0]["result"]' 'd[0]["measurement"]' 'd[0]["log_start"] > 0')" = \
	  "smoke kernel-release pass None True" ]
}
test_expect_success 'GET /jobs/ID/results' t_results

# ---- tokens and the Unix socket: labd again, with require_token on loopback ----

TOKEN=s3cret-token
cat >>"$LAB/labd.conf" <<CONF
http = {
	listen = "127.0.0.1:$(free_port)";	# --listen (labd_start) wins over it
	unix_socket = "$LAB/labd.sock";
	tokens = [ "sha256:$(printf %s "$TOKEN" | sha256sum | cut -c1-64)", "plain-token" ];
	require_token = true;
};
CONF
req POST /devices/sim-01/state -d '{"state": "maintenance"}'	# jobs below stay queued
test_expect_success 'a query parameter an endpoint does not take is answered 400, named' '
	req GET "/jobs?colour=red" && expect_status 400 &&
	[ "$(jget "d[\"error\"]")" = "unknown query parameter '\''colour'\''; this endpoint takes: state health device device_type submitter limit before after" ] &&
	req GET "/jobs/1/results?format=junit" && expect_status 400 &&
	grep -q "unknown query parameter '\''format'\''; this endpoint takes none" "$TMP/body" &&
	req GET "/jobs?state=queued&limit=5" && expect_status 200
'


labd_stop
labd_start
api=$LABD_URL/api/v1

t_no_token() {
	req GET /health && expect_status 200 &&
	req GET /jobs && expect_status 401 && header www-authenticate Bearer &&
	grep -q "needs a token" "$TMP/body" &&
	req POST /jobs --data-binary @"$TMP/queued.yaml" && expect_status 401
}
test_expect_success 'require_token: no token is 401 (/health stays open)' t_no_token

t_tokens() {
	req GET /jobs -H "Authorization: Bearer wrong" && expect_status 401 &&
	grep -q "invalid token" "$TMP/body" &&
	req GET /jobs -H "Authorization: Basic $TOKEN" && expect_status 401 &&
	req GET /jobs -H "Authorization: Bearer $TOKEN" && expect_status 200 &&
	req GET /devices -H "Authorization: Bearer plain-token" && expect_status 200 &&
	req POST "/jobs?filename=q.yaml" -H "Authorization: Bearer $TOKEN" \
		--data-binary @"$TMP/queued.yaml" && expect_status 201 &&
	req GET /jobs/$(jget 'd["id"]') -H "Authorization: Bearer $TOKEN" &&
	[ "$(jget 'd["submitter"]')" = "token:$(printf %s "$TOKEN" | sha256sum | cut -c1-8)" ]
}
test_expect_success 'require_token: a wrong token is 401, the right ones 200' t_tokens

t_unix() {
	[ "$(stat -c %a "$LAB/labd.sock")" = 660 ] &&
	status=$(curl -s -o "$TMP/body" -w '%{http_code}' --unix-socket "$LAB/labd.sock" \
		-X POST --data-binary @"$TMP/queued.yaml" http://localhost/api/v1/jobs) &&
	expect_status 201 &&
	status=$(curl -s -o "$TMP/body" -w '%{http_code}' --unix-socket "$LAB/labd.sock" \
		"http://localhost/api/v1/jobs/$(jget 'd["id"]')") &&
	expect_status 200 && [ "$(jget 'd["submitter"]')" = "uid:$(id -u)" ]
}
test_expect_success 'the Unix socket: mode 0660, no token, the peer uid as identity' t_unix

t_unix_removed() {
	labd_stop && [ ! -e "$LAB/labd.sock" ]
}
test_expect_success 'the Unix socket is removed when labd stops' t_unix_removed

t_ipv6() {
	local p port
	"$LABD" -c "$LAB/labd.conf" --listen "[::1]:0" 2>"$TMP/v6.err" &
	p=$!
	at_exit "kill -9 $p"
	wait_for "grep -q \"listening on '\[::1\]:0' (port\" $TMP/v6.err" 20 &&
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$TMP/v6.err" | head -1) &&
	status=$(curl -s -g -o "$TMP/body" -w '%{http_code}' "http://[::1]:$port/api/v1/health") &&
	expect_status 200 && kill $p && wait $p
}
if $PY -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	test_expect_success 'an IPv6 literal address and port 0' t_ipv6
else
	test_skip 'an IPv6 literal address and port 0' 'no IPv6 loopback here'
fi

test_expect_success 'doc/api.md lists exactly the routes labd has' '
	"$BUILD/tests/helper/api-routes" --check "$TOP/doc/api.md"
'

test_done
