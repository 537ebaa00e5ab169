#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1070-retention.sh -- history that does not fill the disk (labd.conf `retention`):
# a finished job's log compressed with zstd and read back byte-equal through every
# reader (GET /log raw, offsets, tail, line ranges, timestamps and labd's lines;
# LAVA's YAML log over REST and XML-RPC; labctl log); `labd gc` removing logs,
# results and events by age (days = 0) with 410 Gone answers that say what went
# and when; the size cap removing the oldest logs first; labd answering while it
# compresses a big log in its loop.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/session-lib.sh"

sim_lab 1
add_users
grep -v "^retention = " "$LAB/labd.conf" >"$LAB/labd.conf.base"

# retention SETTINGS: labd.conf with `retention = { SETTINGS };`
retention() {
	{ cat "$LAB/labd.conf.base"; echo "retention = { $1 };"; } >"$LAB/labd.conf"
}

AUTH="Authorization: Bearer $(token_of gitlab)"

# req METHOD PATH [CURL ARGS...]: $status; the body in $TMP/body
req() {
	local m=$1 p=$2
	shift 2
	status=$(curl -s -o "$TMP/body" -H "$AUTH" -w '%{http_code}' -X "$m" "$@" "$LABD_URL$p")
}

# get PATH: the body of a GET that must succeed
get() { curl -sf -H "$AUTH" "$LABD_URL$1"; }

# labd_down: stop the labd started last, also one a test body (a subshell) restarted
labd_down() {
	local pid
	pid=$(tail -n 1 "$TMP/labd.pids")
	kill "$pid" 2>/dev/null || true
	wait_for "! kill -0 $pid" 90
}

# keep NAME VALUE / val NAME: what one test body (a subshell) hands to the next
keep() { echo "$2" >"$TMP/val.$1"; }
val() { cat "$TMP/val.$1"; }

expect_status() {
	[ "$status" = "$1" ] || { echo "status $status, expected $1"; head -c 600 "$TMP/body"; return 1; }
}

jget() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(eval(e)) for e in sys.argv[2:]))' "$TMP/body" "$@"
}

write_job "$TMP/queued.yaml" <<'JOB'
job_name: canceled, with a log put in its place
device_type: sim-uboot
timeouts:
  job: {minutes: 1}
actions:
- boot:
    method: minimal
    prompts: ['root@sim:~# ']
JOB

write_uboot_smoke_job "$TMP/boot.yaml"

# big_job MB: a finished (canceled) job whose log is MB MiB, moved in whole; prints its id
big_job() {
	local id
	id=$(as gitlab submit -q "$TMP/queued.yaml") && as gitlab cancel "$id" >/dev/null || return 1
	rm -rf "$TMP/gen" && $PY "$TOP/tests/helper/big-log.py" "$TMP/gen" "$1" || return 1
	mkdir -p "$LAB/state/jobs/$id" && mv "$TMP/gen"/* "$LAB/state/jobs/$id/" && echo "$id"
}

# views ID OUT: every reading of job ID's log, into files OUT.*
views() {
	local id=$1 out=$2 tok
	tok=$(token_of gitlab)
	get "/api/v1/jobs/$id/log" >"$out.raw" || { echo "raw"; return 1; }
	get "/api/v1/jobs/$id/log?offset=300001" >"$out.offset" || { echo "offset"; return 1; }
	get "/api/v1/jobs/$id/log?timestamps=1&labd=1" >"$out.rendered" || { echo "ts"; return 1; }
	get "/api/v1/jobs/$id/log?tail=1000" >"$out.tail" || { echo "tail"; return 1; }
	get "/api/v1/jobs/$id/log?lines=2000-6000" >"$out.lines" || { echo "lines"; return 1; }
	get "/api/v1/jobs/$id/log?follow=1&labd=1" >"$out.follow" || { echo "follow"; return 1; }
	curl -sf -H "Authorization: Token $tok" "$LABD_URL/api/v0.2/jobs/$id/logs/" >"$out.lava" ||
		{ echo "lava rest"; return 1; }
	$PY - "127.0.0.1:$LABD_PORT" "$tok" "$id" "$out.rpc" <<'PY' || { echo "lava rpc"; return 1; }
import sys, xmlrpc.client
host, token, job, out = sys.argv[1:]
p = xmlrpc.client.ServerProxy("http://gitlab:%s@%s/RPC2" % (token, host), allow_none=True)
done, data = p.scheduler.jobs.logs(job, 1500, 4000)
open(out, "wb").write(data.data)
PY
	as gitlab log --raw "$id" >"$out.labctl" || { echo "labctl"; return 1; }
	as gitlab log --raw --timestamps --labd "$id" >"$out.labctl-rendered" ||
		{ echo "labctl rendered"; return 1; }
}

same_views() {
	local v
	for v in raw offset rendered tail lines follow lava rpc labctl labctl-rendered; do
		cmp "$1.$v" "$2.$v" || { echo "the $v view differs"; return 1; }
	done
}

retention "compress = false;"
labd_start

test_expect_success 'a 6 MiB log read every way before compression' '
	big=$(big_job 6) && keep big "$big" &&
	views "$big" "$TMP/before" &&
	[ "$(stat -c %s "$TMP/before.raw")" = "$(stat -c %s "$LAB/state/jobs/$big/console.log")" ] &&
	[ -s "$TMP/before.rpc" ] || { echo "no rpc log"; false; }
	[ -s "$TMP/before.lines" ] || { echo "no lines"; cat "$TMP/before.lines"; false; }
'

test_expect_success 'labd gc compresses it: console.log.zst that zstd reads, no plain files left' '
	labd_down &&
	retention "" &&
	sleep 2 &&	# labd gc leaves a job that ended less than 2 s ago (RETENTION_COMPRESS_DELAY)
	"$LABD" -c "$LAB/labd.conf" gc >"$TMP/gc.out" &&
	cat "$TMP/gc.out" &&
	grep -q "^[1-9][0-9]* log files compressed" "$TMP/gc.out" &&
	d=$LAB/state/jobs/$(val big) &&
	[ ! -e "$d/console.log" ] && [ ! -e "$d/console.idx" ] && [ ! -e "$d/labd.log" ] &&
	[ -s "$d/console.log.zst" ] && [ -s "$d/console.idx.zst" ] &&
	zstd -dc "$d/console.log.zst" | cmp - "$TMP/before.raw" &&
	[ "$(stat -c %s "$d/console.log.zst")" -lt $(($(stat -c %s "$TMP/before.raw") / 4)) ]
'

test_expect_success 'every reader gives the same bytes from the compressed log' '
	labd_restart &&
	views "$(val big)" "$TMP/after" &&
	same_views "$TMP/before" "$TMP/after"
'

test_expect_success 'a job that ends has its log compressed by labd, read back byte-equal' '
	id=$(as gitlab submit -q "$TMP/boot.yaml") && keep job "$id" &&
	wait_for "[ -e $LAB/state/jobs/$id/console.log.zst ] && [ ! -e $LAB/state/jobs/$id/labd.log ]" 120 &&
	req GET "/api/v1/jobs/$id" && expect_status 200 &&
	[ "$(jget "d[\"state\"]" "d[\"log_removed\"]")" = "finished None" ] &&
	get "/api/v1/jobs/$id/log" >"$TMP/job.log" &&
	zstd -dc "$LAB/state/jobs/$id/console.log.zst" | cmp - "$TMP/job.log" &&
	grep -q "6.1.0-sim" "$TMP/job.log" &&
	as gitlab log --raw "$id" | cmp - "$TMP/job.log" &&
	req GET "/api/v1/jobs/$id/results" && expect_status 200 &&
	[ "$(jget "len(d) > 0")" = True ]
'

test_expect_success 'labd answers within 0.5 s while it compresses a 40 MiB log in its loop' '
	labd_down &&
	retention "interval = 2;" &&
	labd_restart &&
	huge=$(big_job 40) &&
	max=0 &&
	for i in $(seq 400); do
		t=$(curl -s -o /dev/null -H "$AUTH" -w "%{time_total}" "$LABD_URL/api/v1/jobs/$huge") &&
		max=$(awk -v a="$max" -v b="$t" "BEGIN { print (b > a) ? b : a }") &&
		[ -e "$LAB/state/jobs/$huge/console.log" ] || break
		sleep 0.02
	done &&
	say "slowest answer during the compression: $max s" &&
	wait_for "[ ! -e $LAB/state/jobs/$huge/console.log ]" 60 &&
	awk -v m="$max" "BEGIN { exit !(m < 0.5) }" &&
	[ "$(get "/api/v1/jobs/$huge/log?offset=41000000" | wc -c)" -gt 0 ]
'

test_expect_success 'labd gc with log_days and history_days 0 removes them: 410 Gone, the job stays' '
	id=$(val job) &&
	labd_down &&
	retention "log_days = 0; history_days = 0;" &&
	"$LABD" -c "$LAB/labd.conf" gc >"$TMP/gc.out" &&
	cat "$TMP/gc.out" &&
	grep -q "^[1-9][0-9]* logs removed by age" "$TMP/gc.out" &&
	[ ! -e "$LAB/state/jobs/$id/console.log.zst" ] &&
	labd_restart &&
	req GET "/api/v1/jobs/$id" && expect_status 200 &&
	[ "$(jget "d[\"state\"]" "d[\"log_removed\"] is not None" "d[\"history_removed\"] is not None")" = "finished True True" ] &&
	req GET "/api/v1/jobs/$id/log" && expect_status 410 &&
	[ "$(jget "d[\"removed\"]" "d[\"job\"]")" = "log $id" ] &&
	jget "d[\"error\"]" | grep -q "the log of job $id was removed on 20" &&
	jget "d[\"removed_at\"]" | grep -q "^20..-..-..T" &&
	req GET "/api/v1/jobs/$id/log?timestamps=1" && expect_status 410 &&
	req GET "/api/v1/jobs/$id/results" && expect_status 410 &&
	[ "$(jget "d[\"removed\"]")" = "results and events" ] &&
	req GET "/api/v1/jobs/$id/events" && expect_status 410 &&
	req GET "/api/v1/jobs/$id/junit" && expect_status 410 &&
	status=$(curl -s -o "$TMP/body" -w "%{http_code}" -H "Authorization: Token $(token_of gitlab)" \
		"$LABD_URL/api/v0.2/jobs/$id/logs/") &&
	expect_status 410 && grep -q "was removed on" "$TMP/body" &&
	test_must_fail as gitlab log "$id" >"$TMP/labctl.out" 2>&1 &&
	grep -q "removed on" "$TMP/labctl.out"
'

test_expect_success 'the size cap removes the oldest logs first' '
	labd_down &&
	rm -rf "$LAB/state" &&
	retention "compress = false;" &&
	labd_restart &&
	a=$(big_job 1) && b=$(big_job 1) && c=$(big_job 1) && e=$(big_job 1) && keep young "$c" &&
	top=$(find "$LAB/state" -maxdepth 1 -type f -printf "%s\n" | awk "{ s += \$1 } END { print s }") &&
	one=$(du -sb "$LAB/state/jobs/$a" | cut -f1) &&
	labd_down &&
	retention "compress = false; max_state_size = $((top + 2 * one + one / 2));" &&
	"$LABD" -c "$LAB/labd.conf" gc >"$TMP/gc.out" &&
	cat "$TMP/gc.out" &&
	grep -q "^2 logs removed for the size cap" "$TMP/gc.out" &&
	echo "sizes ok" &&
	[ ! -e "$LAB/state/jobs/$a/console.log" ] && [ ! -e "$LAB/state/jobs/$b/console.log" ] &&
	[ -e "$LAB/state/jobs/$c/console.log" ] && [ -e "$LAB/state/jobs/$e/console.log" ] &&
	labd_restart &&
	req GET "/api/v1/jobs/$a/log" && expect_status 410 &&
	req GET "/api/v1/jobs/$a/events" && expect_status 200 &&
	req GET "/api/v1/jobs/$c/log" && expect_status 200
'

test_expect_success 'the run inside labd (interval) removes them too, answering all along' '
	id=$(val young) &&
	labd_down &&
	retention "log_days = 0; history_days = 0; interval = 1;" &&
	labd_restart &&
	wait_for "[ ! -e $LAB/state/jobs/$id/console.log ]" 30 &&
	wait_for "[ \"\$(curl -s -o /dev/null -w %{http_code} -H \"$AUTH\" $LABD_URL/api/v1/jobs/$id/events)\" = 410 ]" 10 &&
	req GET "/api/v1/jobs/$id/log" && expect_status 410 &&
	grep -q "retention: [0-9]* finished jobs: .* [1-9][0-9]* logs and [1-9][0-9]* results and events removed by age" "$LAB/labd.log" &&
	get /metrics >"$TMP/metrics" &&
	grep -q "^labd_retention_removed_total{what=\"log\"} [1-9]" "$TMP/metrics" &&
	grep -q "^labd_retention_state_bytes [1-9]" "$TMP/metrics"
'

test_expect_success 'check-config reports a bad retention group' '
	retention "log_days = -1; max_state_size = \"12Q\"; color = 1;" &&
	test_must_fail "$LABD" -c "$LAB/labd.conf" check-config 2>"$TMP/check.err" &&
	grep -q "log_days" "$TMP/check.err" && grep -q "max_state_size" "$TMP/check.err" &&
	grep -q "unknown key .color." "$TMP/check.err"
'

test_done
