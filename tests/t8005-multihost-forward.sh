#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8005-multihost-forward.sh -- one API from any host: a job's console log
# lives on the host that ran it, and another host of the lab answers for it
# by forwarding the request there (whole, followed with labctl log -f, the
# tail, followed while still queued), byte for byte; the console of a board
# another host holds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

if ! pg_start >"$TMP/pg-start.log" 2>&1; then
	test_skip 'forwarding between hosts' "no PostgreSQL server: $(tail -1 "$TMP/pg-start.log")"
	test_done
	exit
fi
CONSOLE_CLIENT="$PY $TOP/tests/helper/console-client.py"

pg_host_lab --type sim-minimal --sim '--baud 0' --lease 5 hA a 1
pg_host_lab --type sim-uboot --sim '--baud 0' --lease 5 hB b 1
pg_host_start hA
pg_host_start hB
write_job "$TMP/j.yaml" <<JOB
job_name: a job of host B
device_type: sim-uboot
timeouts: {job: {minutes: 2}}
actions:
$(sim_uboot_boot)
- test:
    definitions:
    - from: inline
      name: slow
      path: inline/slow.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: slow}
        run:
          steps:
          - echo tick-1
          - sleep 1
          - echo tick-2
          - sleep 1
          - echo tick-3
          - sleep 1
          - echo tick-6
JOB

test_expect_success 'the log of a job run on host B, read through host A, is the same bytes' '
	id=$("$LABCTL_BIN" --url "$URL_hA" submit -q "$TMP/j.yaml")
	echo "job $id"
	timeout 120 "$LABCTL_BIN" --url "$URL_hA" log -f "$id" >"$TMP/follow-A.txt" 2>&1 || true
	wait_for "curl -sf $URL_hA/api/v1/jobs/$id | grep -q finished" 60
	[ "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" = hB ]
	curl -sf "$URL_hB/api/v1/jobs/$id/log" >"$TMP/log-B.txt"
	curl -sf -D "$TMP/h-A" "$URL_hA/api/v1/jobs/$id/log" >"$TMP/log-A.txt"
	cat "$TMP/h-A"
	[ -s "$TMP/log-B.txt" ]
	cmp "$TMP/log-A.txt" "$TMP/log-B.txt"
	grep -qi "^x-log-size: $(stat -c %s "$TMP/log-B.txt")" "$TMP/h-A"
	grep -q tick-6 "$TMP/log-A.txt"
	curl -sf "$URL_hA/api/v1/jobs/$id/log?tail=3" >"$TMP/tail-A.txt"
	curl -sf "$URL_hB/api/v1/jobs/$id/log?tail=3" >"$TMP/tail-B.txt"
	cmp "$TMP/tail-A.txt" "$TMP/tail-B.txt"
	curl -sf -m 60 "$URL_hA/api/v1/jobs/$id/log?follow=1&labd=1" >"$TMP/f-A.txt"
	curl -sf "$URL_hB/api/v1/jobs/$id/log?follow=1&labd=1" >"$TMP/f-B.txt"
	cmp "$TMP/f-A.txt" "$TMP/f-B.txt"
	grep -q tick-6 "$TMP/follow-A.txt"
	# LAVA'"'"'s REST API: the YAML log
	curl -sf "$URL_hA/api/v0.2/jobs/$id/logs/" >"$TMP/lava-A.yaml"
	curl -sf "$URL_hB/api/v0.2/jobs/$id/logs/" >"$TMP/lava-B.yaml"
	grep -q tick-6 "$TMP/lava-A.yaml"
	cmp "$TMP/lava-A.yaml" "$TMP/lava-B.yaml"
	echo $id >"$TMP/job1"
'

test_expect_success 'labctl log -f through host A follows a running job of host B to its end' '
	id=$("$LABCTL_BIN" --url "$URL_hA" submit -q "$TMP/j.yaml")
	wait_for "curl -sf $URL_hA/api/v1/jobs/$id | grep -q running" 30
	curl -sfN -m 120 "$URL_hA/api/v1/jobs/$id/log?follow=1" >"$TMP/raw-follow-A.txt" &
	curl_pid=$!
	timeout 120 "$LABCTL_BIN" --url "$URL_hA" log -f "$id" >"$TMP/follow2-A.txt" 2>&1 || true
	wait $curl_pid
	curl -sf "$URL_hB/api/v1/jobs/$id/log" >"$TMP/log2-B.txt"
	cmp "$TMP/raw-follow-A.txt" "$TMP/log2-B.txt"
	grep -q tick-6 "$TMP/follow2-A.txt"
	timeout 60 "$LABCTL_BIN" --url "$URL_hB" log -f "$id" >"$TMP/follow2-B.txt" 2>&1 || true
	cmp "$TMP/follow2-A.txt" "$TMP/follow2-B.txt"
'

test_expect_success 'a job still queued, followed through host A, is followed from host B once it starts' '
	"$LABCTL_BIN" --url "$URL_hB" reserve b-01 --for 10m >/dev/null
	id=$("$LABCTL_BIN" --url "$URL_hA" submit -q "$TMP/j.yaml")
	timeout 120 "$LABCTL_BIN" --url "$URL_hA" log -f "$id" >"$TMP/follow3-A.txt" 2>&1 &
	follow_pid=$!
	sleep 2
	[ "$(pg_sql "SELECT state FROM jobs WHERE id = $id")" = queued ]
	"$LABCTL_BIN" --url "$URL_hB" release b-01
	wait $follow_pid
	[ "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" = hB ]
	grep -q tick-6 "$TMP/follow3-A.txt"
	timeout 60 "$LABCTL_BIN" --url "$URL_hB" log -f "$id" >"$TMP/follow3-B.txt" 2>&1
	cmp "$TMP/follow3-A.txt" "$TMP/follow3-B.txt"
'

test_expect_success 'a job host A does not know, and a host gone: clear errors' '
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" "$URL_hA/api/v1/jobs/999999/log")
	[ "$code" = 404 ]
	id=$(cat "$TMP/job1")
	pg_sql "UPDATE hosts SET url = \$\$http://127.0.0.1:1\$\$ WHERE name = \$\$hB\$\$" >/dev/null
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" "$URL_hA/api/v1/jobs/$id/log")
	cat "$TMP/body"; echo
	pg_sql "UPDATE hosts SET url = \$\$$URL_hB\$\$ WHERE name = \$\$hB\$\$" >/dev/null
	[ "$code" = 502 ]
	grep -q "host .hB. did not answer" "$TMP/body"
'

test_expect_success 'the console of a board host B holds, through host A' '
	"$LABCTL_BIN" --url "$URL_hB" reserve b-01 --for 10m >"$TMP/res.out"
	cat "$TMP/res.out"
	grep -q "^b-01 reserved until" "$TMP/res.out"
	$CONSOLE_CLIENT "$PORT_hA" b-01 --replay 65536 --until tick-6 --for 10 \
		>"$TMP/console-A.txt" 2>"$TMP/console-A.err"
	cat "$TMP/console-A.err"
	grep -q "attached to .b-01." "$TMP/console-A.err"
	grep -q tick-6 "$TMP/console-A.txt"
	"$LABCTL_BIN" --url "$URL_hB" power b-01 on >/dev/null
	$CONSOLE_CLIENT "$PORT_hA" b-01 --replay 0 --send "\r" --until "=>" --for 20 \
		>"$TMP/console2-A.txt" 2>&1 || { cat "$TMP/console2-A.txt"; exit 1; }
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" "$URL_hA/api/v1/devices/b-01/console")
	[ "$code" = 426 ]
	$PY "$TOP/tests/helper/ws-check.py" "$PORT_hA" /api/v1/devices/b-01/console?replay=65536 tick-6
'

test_expect_success 'a board of host B released, reserved, powered, renewed, booted and set through host A' '
	"$LABCTL_BIN" --url "$URL_hA" release b-01
	[ "$(pg_sql "SELECT count(*) FROM reservations WHERE device = \$\$b-01\$\$
		AND state = \$\$active\$\$")" = 0 ]
	# by type: host A has no sim-uboot board, host B takes the reservation
	"$LABCTL_BIN" --url "$URL_hA" reserve --type sim-uboot --for 10m >"$TMP/res-type.out"
	grep -q "^b-01 reserved until" "$TMP/res-type.out"
	"$LABCTL_BIN" --url "$URL_hA" release b-01
	"$LABCTL_BIN" --url "$URL_hA" reserve b-01 --for 10m >"$TMP/res2.out"
	grep -q "^b-01 reserved until" "$TMP/res2.out"
	"$LABCTL_BIN" --url "$URL_hA" power b-01 off
	grep -q "board .b-01.: power off by" "$TMP/hB/labd.log"
	"$LABCTL_BIN" --url "$URL_hA" reserve b-01 --renew --for 20m
	# a held board booted through host A: its session job runs on host B
	"$LABCTL_BIN" --url "$URL_hA" boot b-01 --job "$TMP/j.yaml" --no-console >"$TMP/boot-A.out"
	cat "$TMP/boot-A.out"
	bid=$(sed -n "s/^job \([0-9]*\) boots b-01.*/\1/p" "$TMP/boot-A.out")
	grep -q "^job $bid: complete" "$TMP/boot-A.out"
	[ "$(pg_sql "SELECT host FROM jobs WHERE id = $bid")" = hB ]
	grep -q "job $bid .*boots board .b-01." "$TMP/hB/labd.log"
	"$LABCTL_BIN" --url "$URL_hA" device set-state b-01 maintenance --reason t8005
	[ "$(pg_sql "SELECT state FROM devices WHERE name = \$\$b-01\$\$")" = maintenance ]
	"$LABCTL_BIN" --url "$URL_hA" device set-state b-01 idle
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" -X POST -d "{\"action\":\"on\"}" \
		"$URL_hA/api/v1/devices/no-such-board/power")
	[ "$code" = 404 ]
'

TELNET_CLIENT="$PY $TOP/tests/helper/telnet-client.py"

# relay_port FILE: open b-01's telnet port through host A (labctl's answer
# in FILE), print the port host A relays
relay_port() {
	"$LABCTL_BIN" --url "$URL_hA" telnet b-01 >"$1" &&
	sed -n "s/^b-01: telnet 127.0.0.1 \([0-9]*\) .*/\1/p" "$1"
}

# relay_client PORT OUT SECS: a telnet client on host A's PORT until it is
# closed (at most SECS; its output in OUT, its pid in $tel), on its way once
# host B logged it
relay_client() {
	local n
	n=$(grep -c "a telnet client through another host" "$TMP/hB/labd.log")
	$TELNET_CLIENT "$1" --until-closed --for "$3" >"$2" &
	tel=$!
	wait_for "[ \$(grep -c \"a telnet client through another host\" $TMP/hB/labd.log) -gt $n ]" 20
}

# console_client NAME: a console client through host A on b-01 for at most
# 60 s (its status in $TMP/NAME.code), on its way once host B logged it
# attached.  Its line is the one ending in "attached": each relayed telnet
# client is a viewer too, logged "attached (telnet)", and a wait that took
# that line would go on before host B had the console's upgrade.
console_client() {
	local v
	v=$(grep -cx ".*console viewer .* attached" "$TMP/hB/labd.log" || true)
	( code=0; $CONSOLE_CLIENT "$PORT_hA" b-01 --replay 0 --for 60 >/dev/null 2>"$TMP/$1.err" ||
		code=$?
	  echo "$code" >"$TMP/$1.code" ) &
	wait_for "[ \$(grep -cx \".*console viewer .* attached\" $TMP/hB/labd.log) -gt $v ]" 20
}

test_expect_success 'a telnet port through host A to the board host B holds: typed and read, closed at release' '
	"$LABCTL_BIN" --url "$URL_hA" power b-01 on >/dev/null
	port=$(relay_port "$TMP/telnet.out")
	cat "$TMP/telnet.out"
	[ -n "$port" ]
	grep -q "telnet port $port for .* (relayed to the board.s host)" "$TMP/hA/labd.log"
	curl -sf -X POST "$URL_hA/api/v1/devices/b-01/telnet" >"$TMP/telnet.json"
	grep -q "\"port\": *$port" "$TMP/telnet.json"
	grep -q "\"relayed_to\": *\"hB\"" "$TMP/telnet.json"
	# at the shell of the job booted before: it computes what was typed
	$TELNET_CLIENT "$port" --send "echo relay-\$((6*7))\r" --until "relay-42" --for 30 \
		>"$TMP/tel2.txt" || { cat "$TMP/tel2.txt"; exit 1; }
	grep -q "a telnet client through another host" "$TMP/hB/labd.log"
	grep -q "echo relay-" "$TMP/hB/state/boards/b-01/labd.log"
	# released: the client is told, host A'"'"'s port closes
	relay_client "$port" "$TMP/tel3.txt" 30
	"$LABCTL_BIN" --url "$URL_hA" release b-01
	wait $tel
	cat "$TMP/tel3.txt"
	grep -q "released\|reservation ended" "$TMP/tel3.txt"
	wait_for "grep -q \"telnet port $port, relayed to host .hB., closed\" $TMP/hA/labd.log" 20
	code=0; $TELNET_CLIENT "$port" --for 5 >/dev/null 2>&1 || code=$?
	[ "$code" = 2 ]
'

test_expect_success 'a telnet port through host A: refused as host B refuses it, closed when host B goes away' '
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" -X POST "$URL_hA/api/v1/devices/b-01/telnet")
	cat "$TMP/body"; echo
	[ "$code" = 409 ] && grep -q "not reserved" "$TMP/body"
	"$LABCTL_BIN" --url "$URL_hA" reserve b-01 --for 10m >/dev/null
	port=$(relay_port "$TMP/telnet2.out")
	relay_client "$port" "$TMP/tel4.txt" 30
	kill -9 "$(sed -n 2p "$TMP/labd.pids")"
	wait $tel
	cat "$TMP/tel4.txt"
	grep -q "labd: host .hB. closed the connection" "$TMP/tel4.txt"
	wait_for "grep -q \"relayed to host .hB., closed: host .hB. closed the connection\" $TMP/hA/labd.log" 20
	code=0; $TELNET_CLIENT "$port" --for 5 >/dev/null 2>&1 || code=$?
	[ "$code" = 2 ]
'
# host B again, for what follows (test bodies run in subshells)
kill -0 "$(sed -n 2p "$TMP/labd.pids")" 2>/dev/null || pg_host_start hB

test_expect_success 'a telnet port and consoles through host A: closed, their clients told, once host B stopped is reaped' '
	# still held since the last case (host B came back within its lease)
	"$LABCTL_BIN" --url "$URL_hA" reserve b-01 --renew --for 10m >/dev/null
	port=$(relay_port "$TMP/telnet3.out")
	[ -n "$port" ]
	# a console attached before the relayed telnet client, one after: either ends
	console_client console5
	relay_client "$port" "$TMP/tel5.txt" 60
	console_client console6
	# stopped, its kernel still answers: the connections stay up until host A reaps it
	kill -STOP "$(tail -1 "$TMP/labd.pids")"
	wait_for "! kill -0 $tel" 30
	wait $tel
	cat "$TMP/tel5.txt"
	grep -q "host(s) hB stopped renewing their lease" "$TMP/hA/labd.log"
	grep -q "labd: host .hB. stopped renewing its lease and was reaped" "$TMP/tel5.txt"
	grep -q "relayed to host .hB., closed: host .hB. stopped renewing its lease" \
		"$TMP/hA/labd.log"
	code=0; $TELNET_CLIENT "$port" --for 5 >/dev/null 2>&1 || code=$?
	[ "$code" = 2 ]
	# the consoles through host A too: closed by labd (3), not at the end of their 60 s
	wait_for "[ -s $TMP/console5.code ] && [ -s $TMP/console6.code ]" 30
	cat "$TMP/console5.err" "$TMP/console6.err"
	[ "$(cat "$TMP/console5.code")" = 3 ]
	[ "$(cat "$TMP/console6.code")" = 3 ]
'

test_expect_success 'host B goes on: fenced, it stops' '
	pid=$(tail -1 "$TMP/labd.pids")
	kill -CONT "$pid"
	wait_for "! kill -0 $pid" 60
	grep -q "was reaped by another host" "$TMP/hB/labd.log"
	if grep -E "LeakSanitizer|AddressSanitizer|runtime error" "$TMP/hB/labd.log"; then exit 1; fi
'
kill -0 "$(tail -1 "$TMP/labd.pids")" 2>/dev/null || pg_host_start hB

test_expect_success 'host B started again takes its board back, held again through host A' '
	wait_for "[ \"\$(pg_sql \"SELECT state FROM devices WHERE name = \\\$\\\$b-01\\\$\\\$\")\" = idle ]" 30
	"$LABCTL_BIN" --url "$URL_hA" reserve b-01 --for 10m >"$TMP/res3.out"
	grep -q "^b-01 reserved until" "$TMP/res3.out"
'

test_expect_success 'host B stops while host A relays its telnet port: the client told, no crash' '
	port=$(relay_port "$TMP/telnet4.out")
	[ -n "$port" ]
	relay_client "$port" "$TMP/tel6.txt" 60
	pid=$(tail -1 "$TMP/labd.pids")
	kill -TERM "$pid"
	wait_for "! kill -0 $pid" 30
	wait $tel
	cat "$TMP/tel6.txt"
	# told by the watch, or the client'"'"'s own tunnel closed first
	grep -q "labd: labd is stopping\|labd: host .hB. closed the connection" "$TMP/tel6.txt"
	wait_for "grep -q \"telnet port $port, relayed to host .hB., closed\" $TMP/hA/labd.log" 20
	# the exit went through: the reason the watch was sent, not a crash in it
	grep -q "telnet port $port, relayed to host .hB., closed: labd is stopping" "$TMP/hA/labd.log"
	tail -3 "$TMP/hB/labd.log"
	if grep -E "LeakSanitizer|AddressSanitizer|runtime error" "$TMP/hB/labd.log"; then exit 1; fi
'
kill -0 "$(tail -1 "$TMP/labd.pids")" 2>/dev/null || pg_host_start hB

test_expect_success 'host A stops while it forwards a followed log and a console, and a followed job waits: cleanly' '
	"$LABCTL_BIN" --url "$URL_hB" release b-01 >/dev/null
	id=$("$LABCTL_BIN" --url "$URL_hA" submit -q "$TMP/j.yaml")
	wait_for "curl -sf $URL_hA/api/v1/jobs/$id | grep -q running" 30
	curl -sfN -m 60 "$URL_hA/api/v1/jobs/$id/log?follow=1" >/dev/null 2>&1 &
	$CONSOLE_CLIENT "$PORT_hA" b-01 --replay 0 --for 30 >/dev/null 2>&1 &
	# a job queued behind it, followed: the request waits for its start
	id2=$("$LABCTL_BIN" --url "$URL_hA" submit -q "$TMP/j.yaml")
	curl -s -o /dev/null -w "%{http_code}" -m 60 "$URL_hA/api/v1/jobs/$id2/log?follow=1" \
		>"$TMP/queued-follow.code" 2>&1 &
	queued_pid=$!
	sleep 1
	pid=$(head -1 "$TMP/labd.pids")
	kill -TERM "$pid"
	wait_for "! kill -0 $pid" 30
	wait_for "! kill -0 $queued_pid" 10
	cat "$TMP/queued-follow.code"; echo
	grep -qx "503\|000" "$TMP/queued-follow.code"
	tail -3 "$TMP/hA/labd.log"
	if grep -E "LeakSanitizer|AddressSanitizer|runtime error" "$TMP/hA/labd.log"; then exit 1; fi
'

test_done
