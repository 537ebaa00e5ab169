#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8006-pg-forward-identity.sh -- hosts of one lab that require tokens: a
# request another host forwards carries the identity that host established
# (a Unix socket's peer), signed with the lab's secret; a client of host A's
# Unix socket follows the log of a job run on host B; an identity said
# forwarded without the secret is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/session-lib.sh"

pg_require 'identities forwarded between hosts'

# host_lab NAME PREFIX TYPE: $TMP/NAME, one board PREFIX-01 of TYPE, users (alice
# is uid 0 on the Unix socket $TMP/NAME/labd.sock), tokens required on TCP.
host_lab() {
	pg_host_lab --type "$3" --sim '--baud 0' --lease 5 \
		--conf "http = { require_token = true; unix_socket = \"$TMP/$1/labd.sock\"; };" "$1" "$2" 1
	add_users
	sed -i '/name = "alice"/s/ },$/ uids = [ 0 ]; },/' "$LAB/labd.conf"
}
# tok USER HOST ARGS...: labctl as USER (token) on HOST's TCP API.
tok() {
	local who=$1 url; eval "url=\$URL_$2"; shift 2
	"$LABCTL_BIN" --url "$url" --token "$(token_of "$who")" "$@"
}

host_lab hA a sim-minimal
host_lab hB b sim-uboot
pg_host_start hA
pg_host_start hB
pg_ticks_job "$TMP/j.yaml" 6

test_expect_success 'a client of host A'"'"'s Unix socket follows the log of a job run on host B' '
	id=$(tok alice hA submit -q "$TMP/j.yaml")
	echo "job $id"
	wait_for "curl -sf -H \"Authorization: Bearer $(token_of alice)\" $URL_hA/api/v1/jobs/$id | grep -q running" 60
	[ "$(pg_sql "SELECT host FROM jobs WHERE id = $id")" = hB ]
	timeout 120 "$LABCTL_BIN" --url "unix:$TMP/hA/labd.sock" log -f "$id" \
		>"$TMP/follow-unix.txt" 2>&1 || { cat "$TMP/follow-unix.txt"; exit 1; }
	grep -q tick-6 "$TMP/follow-unix.txt"
	timeout 60 "$LABCTL_BIN" --url "$URL_hB" --token "$(token_of alice)" log -f "$id" \
		>"$TMP/follow-B.txt" 2>&1
	cmp "$TMP/follow-unix.txt" "$TMP/follow-B.txt"
	echo "$id" >"$TMP/job1"
'

# fwd_get PATH USER ROLE AUTH [CURL ARGS...]: host B's status for PATH with a forwarded identity.
fwd_get() {
	local p=$1 u=$2 r=$3 a=$4; shift 4
	curl -s -o "$TMP/body" -w "%{http_code}" -H "X-Labd-Forwarded-By: hA" \
		-H "X-Labd-Forwarded-User: $u" -H "X-Labd-Forwarded-Role: $r" \
		-H "X-Labd-Forwarded-Auth: $a" "$@" "$URL_hB$p"
}
# sign WHEN USER ROLE METHOD PATH: "WHEN.<HMAC>" with the lab's secret.
sign() {
	$PY -c 'import hmac, hashlib, sys
w, u, r, m, p, k = sys.argv[1:]
msg = "labd-forward-1\n%s\n%s\n%s\n%s\n%s" % (w, u, r, m, p)
print("%s.%s" % (w, hmac.new(k.encode(), msg.encode(), hashlib.sha256).hexdigest()))' \
		"$@" "$(pg_sql "SELECT secret FROM lab_secret")"
}

test_expect_success 'an identity said forwarded, not signed with the lab'"'"'s secret: 401' '
	id=$(cat "$TMP/job1")
	p=/api/v1/jobs/$id/log
	now=$(date +%s)
	zeros=0000000000000000000000000000000000000000000000000000000000000000
	code=$(fwd_get "$p" boss admin "$now.$zeros"); cat "$TMP/body"; echo
	{ [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; } && grep -q "not vouched for" "$TMP/body"
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" -H "X-Labd-Forwarded-User: boss" "$URL_hB$p")
	{ [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; }
	# with a valid token beside it: still refused, not the token'"'"'s user
	code=$(fwd_get "$p" boss admin "$now.$zeros" -H "Authorization: Bearer $(token_of rita)")
	{ [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; }
	# signed with the secret: taken, for that method, path and time only
	good=$(sign "$now" alice developer GET "$p")
	code=$(fwd_get "$p" alice developer "$good"); { [ "$code" = 200 ] || { echo "got $code, want 200"; false; }; }
	code=$(fwd_get "$p" alice admin "$good"); { [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; }
	code=$(fwd_get "/api/v1/jobs/$id" alice developer "$good"); { [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; }
	getc=$(sign "$now" alice developer GET "/api/v1/jobs/$id/cancel")
	code=$(fwd_get "/api/v1/jobs/$id/cancel" alice developer "$getc" -X POST); { [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; }
	old=$(sign $((now - 3600)) alice developer GET "$p")
	code=$(fwd_get "$p" alice developer "$old"); { [ "$code" = 401 ] || { echo "got $code, want 401"; false; }; }
	# the secret is nowhere in what the hosts say or log
	secret=$(pg_sql "SELECT secret FROM lab_secret")
	[ ${#secret} = 64 ]
	! grep -q "$secret" "$TMP/hA/labd.log" "$TMP/hB/labd.log"
'

test_expect_success 'through host A'"'"'s Unix socket: a board of host B reserved, its telnet port typed on; host A stops' '
	"$LABCTL_BIN" --url "unix:$TMP/hA/labd.sock" reserve b-01 --for 10m >"$TMP/res.out"
	grep -q "^b-01 reserved until" "$TMP/res.out"
	[ "$(pg_sql "SELECT holder FROM reservations WHERE device = \$\$b-01\$\$ AND state = \$\$active\$\$")" = alice ]
	"$LABCTL_BIN" --url "unix:$TMP/hA/labd.sock" power b-01 on >/dev/null
	"$LABCTL_BIN" --url "unix:$TMP/hA/labd.sock" telnet b-01 >"$TMP/telnet.out"
	port=$(sed -n "s/^b-01: telnet 127.0.0.1 \([0-9]*\) .*/\1/p" "$TMP/telnet.out")
	[ -n "$port" ]
	# the console through host A'"'"'s Unix socket: switched at host B, as alice
	curl -s -m 3 -D "$TMP/cons.h" -o /dev/null --unix-socket "$TMP/hA/labd.sock" \
		-H "Connection: Upgrade" -H "Upgrade: labd-console" \
		http://localhost/api/v1/devices/b-01/console || true
	cat "$TMP/cons.h"
	grep -q "^HTTP/1.1 101" "$TMP/cons.h"
	wait_for "grep -q \"console viewer .alice. attached\" $TMP/hB/labd.log" 10
	# not the holder: host B refuses, host A answers so
	code=$(curl -s -o "$TMP/body" -w "%{http_code}" -X POST \
		-H "Authorization: Bearer $(token_of bob)" "$URL_hA/api/v1/devices/b-01/telnet")
	cat "$TMP/body"; echo
	[ "$code" = 403 ] && grep -q "alice. holds it" "$TMP/body"
	$PY "$TOP/tests/helper/telnet-client.py" "$port" --until-closed --for 60 >"$TMP/tel.txt" &
	tel=$!
	wait_for "grep -q \"a telnet client through another host\" $TMP/hB/labd.log" 20
	kill -TERM "$(cat "$TMP/hA.pid")"
	wait $tel
	cat "$TMP/tel.txt"
	grep -q "labd: labd is stopping" "$TMP/tel.txt"
	wait_for "! kill -0 $(cat "$TMP/hA.pid")" 30
	if grep -E "LeakSanitizer|AddressSanitizer|runtime error" "$TMP/hA/labd.log"; then exit 1; fi
'

test_done
