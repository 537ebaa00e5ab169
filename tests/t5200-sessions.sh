#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t5200-sessions.sh -- what a holder does with its board, end to end on simulated boards:
# labctl boot (files, or a job whose tests are skipped) then the console; the telnet port
# with telnet and socat (IAC both ways, break, closed at release); the refusals; what each
# role may do through the API and labctl; the Unix socket's peer uid as the identity; and
# broken `users` in labd.conf.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session-lib.sh"

ART=$TOP/contrib/lab/artifacts
SOCK=$TMP/labd.sock
FILES="--kernel file://$ART/Image --ramdisk file://$ART/initrd.cpio.gz --dtb file://$ART/sim.dtb"
sim_lab 3
add_users
# Tokens on loopback too (no token: 401), and a Unix socket where the peer's uid counts.
cat >>"$LAB/labd.conf" <<CONF
http = { require_token = true; unix_socket = "$SOCK"; };
CONF
labd_start
BLOG=$LAB/state/boards/sim-01/labd.log

powered() { sim_ctl status "sim$1" | grep -q "power=$2"; }

# job_of FILE: the id in labctl boot's "job N boots BOARD".
job_of() { sed -n 's/^job \([0-9]*\) boots .*/\1/p' "$1"; }

# expect_rc STATUS CMD...: CMD (a function too) exits with STATUS.
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	[ "$rc" = "$want" ] || { echo "exit status $rc, expected $want: $*" >&2; return 1; }
}

t_boot_files() {
	as alice reserve sim-01 --for 10m >/dev/null &&
	term alice "$(labctl_as alice) boot sim-01 $FILES --append lab.mark=T5200" &&
	wait_screen alice "attached to 'sim-01' as 'alice': you may type" 30 &&
	screen alice | grep -q '^job [0-9]*: complete' &&
	id=$(screen alice | sed -n 's/^job \([0-9]*\) boots sim-01.*/\1/p') &&
	grep -q 'board left as it is for its holder' "$LAB/state/jobs/$id/labd.log" &&
	sleep 1 && powered 0 on && [ "$(sim_stage 0)" = shell ] &&
	literal alice 'cat /proc/cmdline' && keys alice Enter &&
	wait_screen alice 'root=/dev/ram0 lab.mark=T5200' &&
	literal alice 'echo BOOTED-$((6*7))' && keys alice Enter &&
	wait_screen alice 'BOOTED-42' &&
	grep -qF 'alice: echo BOOTED-$((6*7))' "$BLOG" &&
	literal alice '~.' && wait_screen alice TERMINAL-DONE &&
	[ "$(cat "$TMP/alice.rc")" = 0 ] && powered 0 on
}
test_expect_success 'boot with files: the job completes, the holder types at the shell' \
	t_boot_files

cat >"$TMP/boot-test.yaml" <<JOB
job_name: a boot whose test is skipped
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: never
      prompts: ['root@sim:~# ']
      script:
      - command: echo NEVER-RUN-\$((1+1))
        name: never
JOB

t_boot_job() {
	boots=$(sim_boots 0) &&
	as alice boot sim-01 --job "$TMP/boot-test.yaml" --no-console >"$TMP/out" &&
	id=$(job_of "$TMP/out") &&
	grep -q "action 3 (test) skipped: the shell goes to the board's holder" "$TMP/out" &&
	grep -q "^job $id: complete" "$TMP/out" &&
	[ "$(sim_boots 0)" = $((boots + 1)) ] && [ "$(sim_stage 0)" = shell ] &&
	grep -q "action 3 (test) skipped" "$LAB/state/jobs/$id/labd.log" &&
	! grep -q NEVER-RUN "$LAB/state/jobs/$id/labd.log" "$BLOG" &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of alice)" --replay 0 \
		--send 'echo AFTER-$((2+3))\r' --until AFTER-5 --for 10 >/dev/null
}
test_expect_success 'boot --job: deploy and boot run, the test is skipped, never typed' t_boot_job

t_telnet_client() {
	as alice telnet sim-01 >"$TMP/out" &&
	port=$(sed -n 's/^sim-01: telnet 127.0.0.1 \([0-9]*\) .*/\1/p' "$TMP/out") &&
	[ -n "$port" ] && [ "$(board_field sim-01 '["telnet_port"]')" = "$port" ] &&
	term tel "telnet 127.0.0.1 $port" &&
	wait_screen tel "[labd] attached to 'sim-01' as 'alice': you may type" &&
	literal tel 'echo TELNET-$((6*7))' && keys tel Enter &&
	wait_screen tel 'TELNET-42' &&
	grep -qF 'alice: echo TELNET-$((6*7))' "$BLOG" &&
	term tel2 "$(labctl_as alice) console --telnet sim-01" &&
	wait_screen tel2 "Connected to 127.0.0.1" && wait_screen tel2 'you may type' &&
	wait_screen tel 'attached to' &&
	literal tel2 'echo SECOND-$((1+1))' && keys tel2 Enter &&
	wait_screen tel2 'SECOND-2' && wait_screen tel 'SECOND-2' &&
	[ "$(board_field sim-01 '["viewers"]')" = 2 ]
}
test_expect_success 'telnet and labctl console --telnet attach: typing reaches the board, logged' \
	t_telnet_client

t_telnet_microcom() {
	port=$(board_field sim-01 '["telnet_port"]') &&
	term mc "microcom -t 127.0.0.1:$port" &&
	wait_screen mc "attached to 'sim-01' as 'alice': you may type" &&
	literal mc 'echo MICROCOM-$((5*5))' && keys mc Enter &&
	wait_screen mc 'MICROCOM-25' &&
	grep -qF 'alice: echo MICROCOM-$((5*5))' "$BLOG" &&
	tm kill-session -t mc
}
if command -v microcom >/dev/null; then
	test_expect_success 'microcom (RFC 2217 telnet mode) attaches and types' t_telnet_microcom
else
	test_skip 'microcom (RFC 2217 telnet mode) attaches and types' 'microcom is not installed'
fi

t_telnet_socat() {
	port=$(board_field sim-01 '["telnet_port"]') &&
	# nothing sent: the offers, the notice and the scrollback come anyway
	{ sleep 1; } | socat -t 1 - "TCP:127.0.0.1:$port" >"$TMP/greet" &&
	head -c 6 "$TMP/greet" | od -An -tx1 | grep -q 'ff fb 01 ff fb 03' &&
	grep -aq "attached to 'sim-01' as 'alice': you may type" "$TMP/greet" &&
	# the board prints 0xff (spew 6: NUL, 0xff, broken UTF-8): doubled on the wire
	{ printf 'spew 6\r'; sleep 1; } | socat -t 1 - "TCP:127.0.0.1:$port" >"$TMP/spew" &&
	LC_ALL=C grep -aq $'\xff\xff\xc3(\xe2\x82\r' "$TMP/spew" &&
	! LC_ALL=C grep -aq $'\xff\xff\xff' "$TMP/spew" &&
	# the client sends IAC IAC: one 0xff reaches the board (and comes back doubled)
	{ printf 'echo A\377\377B\r'; sleep 1; } | socat -t 1 - "TCP:127.0.0.1:$port" >"$TMP/ff" &&
	LC_ALL=C grep -aq $'alice: echo A\xffB\\\\r$' "$BLOG" &&
	LC_ALL=C grep -aq $'\r\nA\xff\xffB\r\n' "$TMP/ff" &&
	# IAC BREAK is a serial break, logged like ~b
	{ printf '\377\363'; sleep 0.3; } | socat -t 1 - "TCP:127.0.0.1:$port" >/dev/null &&
	grep -q 'alice: <break>$' "$BLOG"
}
test_expect_success 'socat on the telnet port: greeted unasked, IAC escaped both ways, break' \
	t_telnet_socat

t_telnet_refused() {
	test_must_fail as bob telnet sim-01 2>"$TMP/err" &&
	grep -q "user 'bob' (developer) may not open a telnet port to board 'sim-01': 'alice' holds" \
		"$TMP/err" &&
	[ "$(api_as rita POST /devices/sim-01/telnet)" = 403 ] &&
	[ "$(api_as gitlab POST /devices/sim-01/telnet)" = 403 ] &&
	test_must_fail as bob telnet sim-02 2>"$TMP/err" && grep -q 'reserve it first' "$TMP/err" &&
	[ "$(api_as boss POST /devices/sim-02/telnet)" = 409 ] &&
	grep -q "board 'sim-02' is not reserved: reserve it first" "$TMP/body"
}
test_expect_success 'the telnet port: refused to non-holders and on boards nobody holds' \
	t_telnet_refused

t_boot_refused() {
	test_must_fail as bob boot sim-01 $FILES --no-console 2>"$TMP/err" &&
	grep -q "user 'bob' (developer) may not boot board 'sim-01': 'alice' holds it" "$TMP/err" &&
	test_must_fail as rita boot sim-01 $FILES --no-console 2>"$TMP/err" &&
	grep -q "user 'rita' (reader) may not boot board 'sim-01'" "$TMP/err" &&
	test_must_fail as alice boot sim-02 $FILES --no-console 2>"$TMP/err" &&
	grep -q "may not boot board 'sim-02': reserve it first (labctl reserve sim-02)" "$TMP/err" &&
	test_must_fail as boss boot sim-02 $FILES --no-console 2>"$TMP/err" &&
	grep -q "board 'sim-02' is not reserved: reserve it first" "$TMP/err" &&
	test_must_fail as alice boot sim-01 --kernel notaurl --no-console 2>"$TMP/err" &&
	grep -q "^boot.json:[0-9]*: actions\[0\].deploy.kernel: unsupported URL 'notaurl'" "$TMP/err" &&
	expect_rc 2 as alice boot sim-01 --kernel "file://$ART/nope" --no-console >"$TMP/out" &&
	grep -q "incomplete (job): artifact URL check before the board was powered: kernel 'file://$ART/nope': no such file" "$TMP/out" &&
	expect_rc 2 as alice boot sim-01 --kernel "file:///etc/passwd" --no-console >"$TMP/out" &&
	grep -q "kernel 'file:///etc/passwd': not below the lab's artifact directory" "$TMP/out" &&
	printf 'job_name: x\nactions: []\n' >"$TMP/bad.yaml" &&
	test_must_fail as alice boot sim-01 --job "$TMP/bad.yaml" --no-console 2>"$TMP/err" &&
	grep -q '^labctl: invalid job' "$TMP/err" &&
	grep -q "^bad.yaml:1: missing required key 'device_type'" "$TMP/err" &&
	grep -q "^bad.yaml:2: 'actions' must not be empty" "$TMP/err" &&
	sed 's/^device_type: .*/device_type: sim-minimal/' "$TMP/boot-test.yaml" >"$TMP/min.yaml" &&
	test_must_fail as alice boot sim-01 --job "$TMP/min.yaml" --no-console 2>"$TMP/err" &&
	grep -q "min.yaml:[0-9]*: .*type 'sim-minimal' does not support boot method 'u-boot'" \
		"$TMP/err" &&
	expect_rc 3 as alice boot sim-01 --job "$TMP/min.yaml" --kernel x --no-console 2>"$TMP/err" &&
	grep -q -- '--job and the files of a boot do not go together' "$TMP/err" &&
	[ "$(sim_stage 0)" = shell ]
}
test_expect_success 'boot refused: not reserved, not the holder; bad URLs and jobs say why' \
	t_boot_refused

t_release_ends_all() {
	port=$(board_field sim-01 '["telnet_port"]') &&
	{ as alice boot sim-01 --job "$TMP/boot-test.yaml" --no-console >"$TMP/boot.out" 2>&1 & } &&
	boot=$! &&
	wait_for '[ -n "$(board_field sim-01 "[\"job\"]")" ]' 10 &&
	[ "$(api_as alice POST /devices/sim-01/boot -d '{}')" = 409 ] &&
	grep -q "board 'sim-01' is running job" "$TMP/body" &&
	as alice release sim-01 >/dev/null &&
	expect_rc 2 wait "$boot" && grep -q 'canceled' "$TMP/boot.out" &&
	wait_screen tel 'Connection closed by foreign host' &&
	wait_screen tel2 'Connection closed by foreign host' && wait_screen tel2 TERMINAL-DONE &&
	screen tel | grep -q 'released by alice' &&
	! socat -u "TCP:127.0.0.1:$port" - </dev/null 2>"$TMP/err" &&
	grep -q 'Connection refused' "$TMP/err" &&
	wait_for 'powered 0 off' 10 &&
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	[ -z "$(board_field sim-01 '["telnet_port"]')" ]
}
test_expect_success 'release: the running boot is canceled, the telnet port closes, board off' \
	t_release_ends_all

cat >"$TMP/ci.yaml" <<JOB
job_name: a CI job for the permissions
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_minimal_boot)
JOB

t_no_token() {
	[ "$(curl -s -o "$TMP/body" -w '%{http_code}' "$LABD_URL/api/v1/devices")" = 401 ] &&
	grep -q "this API needs a token" "$TMP/body" &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$LABD_URL/api/v1/health")" = 200 ] &&
	[ "$(curl -s -o "$TMP/body" -w '%{http_code}' -H 'Authorization: Bearer nope' \
		"$LABD_URL/api/v1/devices")" = 401 ] &&
	grep -q '"invalid token"' "$TMP/body" &&
	test_must_fail "$LABCTL_BIN" --url "$LABD_URL" devices 2>"$TMP/err" && grep -q 'needs a token' "$TMP/err" &&
	test_must_fail "$LABCTL_BIN" --url "$LABD_URL" --token nope reserve sim-01 2>"$TMP/err" &&
	grep -q 'invalid token' "$TMP/err"
}
test_expect_success 'no token or a wrong one: 401' t_no_token

t_reader() {
	as bob reserve sim-03 >/dev/null &&
	for p in /devices /devices/sim-01 /jobs /jobs/1 /reservations /jobs/1/log; do
		[ "$(api_as rita GET $p)" = 200 ] || { echo "GET $p: $(cat "$TMP/body")"; false; }
	done &&
	[ "$(api_as rita POST /jobs --data-binary @"$TMP/ci.yaml")" = 403 ] &&
	grep -q "user 'rita' (reader) may not submit jobs" "$TMP/body" &&
	[ "$(api_as rita POST /reservations -d '{"board": "sim-01"}')" = 403 ] &&
	[ "$(api_as rita POST /devices/sim-03/power -d '{"action": "on"}')" = 403 ] &&
	[ "$(api_as rita POST /devices/sim-01/state -d '{"state": "maintenance"}')" = 403 ] &&
	test_must_fail as rita power sim-03 on 2>"$TMP/err" &&
	grep -q "user 'rita' (reader) may not power board 'sim-03'" "$TMP/err" &&
	as rita devices | grep -q '^sim-03 .* bob ' &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-03 --token "$(token_of rita)" --replay 0 --send 'x' \
		--for 1 2>"$TMP/err" >/dev/null &&
	grep -q "notice: attached to 'sim-03' as 'rita', read-only: 'bob' holds it" "$TMP/err" &&
	grep -q "notice: read-only: 'bob' holds 'sim-03', your keys are ignored" "$TMP/err"
}
test_expect_success 'reader: reads boards, jobs, logs, watches a console; 403 on the rest' t_reader

t_ci() {
	[ "$(api_as gitlab POST /jobs --data-binary @"$TMP/ci.yaml")" = 201 ] &&
	id=$($PY -c 'import json, sys; print(json.load(sys.stdin)["id"])' <"$TMP/body") &&
	[ "$(api_as alice POST /jobs/$id/cancel)" = 403 ] &&
	grep -q "user 'alice' (developer) may not cancel job $id: it belongs to 'gitlab'" "$TMP/body" &&
	[ "$(api_as rita POST /jobs/$id/cancel)" = 403 ] &&
	[ "$(api_as gitlab POST /jobs/$id/cancel)" = 200 ] &&
	[ "$(api_as gitlab POST /reservations -d '{"board": "sim-01"}')" = 403 ] &&
	[ "$(api_as gitlab POST /devices/sim-03/power -d '{"action": "on"}')" = 403 ] &&
	[ "$(api_as gitlab POST /devices/sim-01/state -d '{"state": "maintenance"}')" = 403 ] &&
	test_must_fail as gitlab reserve sim-01 2>"$TMP/err" &&
	grep -q "user 'gitlab' (ci) may not reserve boards" "$TMP/err" &&
	test_must_fail as gitlab device set-state sim-01 maintenance 2>"$TMP/err" &&
	grep -q "user 'gitlab' (ci) may not set the state of board 'sim-01'" "$TMP/err" &&
	wait_for "as rita show $id | grep -q canceled" 20
}
test_expect_success 'ci: submits and cancels its own jobs; 403 on reserve, power, set-state' t_ci

t_developer() {
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	as alice reserve sim-01 --for 10m >/dev/null &&
	[ "$(api_as alice POST /devices/sim-01/power -d '{"action": "on"}')" = 200 ] &&
	powered 0 on &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of alice)" --replay 0 --for 0.5 \
		2>&1 >/dev/null | grep -q "attached to 'sim-01' as 'alice': you may type" &&
	[ "$(api_as alice POST /devices/sim-03/power -d '{"action": "on"}')" = 403 ] &&
	grep -q "user 'alice' (developer) may not power board 'sim-03': 'bob' holds it" "$TMP/body" &&
	test_must_fail as alice power sim-03 off 2>"$TMP/err" && grep -q "'bob' holds it" "$TMP/err" &&
	test_must_fail as alice device set-state sim-02 maintenance 2>"$TMP/err" &&
	grep -q "user 'alice' (developer) may not set the state of board 'sim-02'" "$TMP/err" &&
	test_must_fail as alice release sim-03 2>"$TMP/err" && grep -q "'bob' holds it" "$TMP/err" &&
	[ "$(api_as alice POST /devices/sim-02/power -d '{"action": "on"}')" = 403 ] &&
	grep -q "reserve it first" "$TMP/body" &&
	[ "$(board_field sim-03 '["holder"]')" = bob ]
}
test_expect_success 'developer: power and console on its board; 403 on another, set-state' \
	t_developer

t_admin() {
	as boss power sim-03 on >/dev/null && powered 2 on &&
	grep -q "board 'sim-03': power on by 'boss'" "$LAB/labd.log" &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-03 --token "$(token_of boss)" --replay 0 --for 0.5 \
		2>&1 >/dev/null | grep -q "attached to 'sim-03' as 'boss': you may type" &&
	as boss power sim-03 off >/dev/null && powered 2 off &&
	as boss device set-state sim-02 maintenance --reason t5200 >/dev/null &&
	[ "$(board_field sim-02 '["state"]')" = maintenance ] &&
	as boss device set-state sim-02 idle >/dev/null &&
	id=$(as gitlab submit "$TMP/ci.yaml") &&
	as boss cancel "$id" >/dev/null &&
	wait_for "as rita show $id | grep -q canceled" 20 &&
	[ "$(api_as boss POST /devices/sim-03/release)" = 200 ] &&
	wait_for '[ -z "$(board_field sim-03 "[\"holder\"]")" ]' 10 &&
	as alice release sim-01 >/dev/null
}
test_expect_success "admin: powers a board another holds, sets states, cancels others' jobs" t_admin

# unix_as ARGS...: labctl on the Unix socket (as root: the user listing uid 0, else uid:0).
unix_as() { "$LABCTL_BIN" --url "unix:$SOCK" "$@"; }

t_unix_root() {
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	unix_as devices >/dev/null &&
	unix_as reserve sim-01 --for 10m >/dev/null &&
	[ "$(board_field sim-01 '["holder"]')" = uid:0 ] &&
	as bob reserve sim-03 >/dev/null &&
	unix_as power sim-03 on >/dev/null && powered 2 on &&
	unix_as power sim-03 off >/dev/null &&
	unix_as release sim-01 >/dev/null
}
test_expect_success 'Unix socket, no user lists uid 0: root is the admin "uid:0"' t_unix_root

t_unix_user() {
	sed -i '/name = "alice"/s/ },$/ uids = [ 0 ]; },/' "$LAB/labd.conf" &&
	grep -q 'uids = \[ 0 \]' "$LAB/labd.conf" &&
	kill -HUP "$LABD_PID" &&
	wait_for 'grep -q "reloaded:" "$LAB/labd.log"' 10 &&
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	unix_as --token "$(token_of boss)" reserve sim-01 --for 10m >/dev/null &&
	[ "$(board_field sim-01 '["holder"]')" = alice ] &&
	unix_as power sim-01 on >/dev/null && powered 0 on &&
	! unix_as power sim-03 on 2>"$TMP/err" &&
	grep -q "user 'alice' (developer) may not power board 'sim-03': 'bob' holds it" "$TMP/err" &&
	term ux "$LABCTL_BIN --url unix:$SOCK console sim-01" &&
	wait_screen ux "attached to 'sim-01' as 'alice': you may type" &&
	literal ux '~.' && wait_screen ux TERMINAL-DONE &&
	unix_as release sim-01 >/dev/null
}
test_expect_success 'Unix socket: root is the user listing uid 0 (a token changes nothing)' \
	t_unix_user

# telnet_greeting PORT: what a client that sends nothing gets.
telnet_greeting() { { sleep 1; } | socat -t 1 - "TCP:127.0.0.1:$1"; }

t_telnet_uids() {
	reloads=$(grep -c "reloaded:" "$LAB/labd.log") &&
	sed -i '/name = "carol"/s/ },$/ uids = [ 4242 ]; },/' "$LAB/labd.conf" &&
	kill -HUP "$LABD_PID" &&
	wait_for "[ \$(grep -c reloaded: '$LAB/labd.log') -gt $reloads ]" 10 &&
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	as carol reserve sim-01 --for 10m >/dev/null &&
	as carol telnet sim-01 >/dev/null &&
	telnet_greeting "$(board_field sim-01 '["telnet_port"]')" >"$TMP/greet" &&
	grep -aq "labd: this port is for 'carol': uid 0 is not 'carol'" "$TMP/greet" &&
	! grep -aq "attached to" "$TMP/greet" &&
	grep -q "board 'sim-01': telnet client refused: uid 0 is not 'carol'" "$LAB/labd.log" &&
	as carol release sim-01 >/dev/null &&
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	as alice reserve sim-01 --for 10m >/dev/null &&
	as alice telnet sim-01 >/dev/null &&
	telnet_greeting "$(board_field sim-01 '["telnet_port"]')" >"$TMP/greet" &&
	grep -aq "attached to 'sim-01' as 'alice': you may type" "$TMP/greet" &&
	as alice release sim-01 >/dev/null
}
test_expect_success 'the telnet port of a holder with uids takes only their processes' \
	t_telnet_uids

t_bad_users() {
	cat >"$LAB/bad.conf" <<CONF &&
state_dir = "state";
devices_dir = "devices";
users = (
	{ name = "alice"; role = "developer"; tokens = [ "$(hash_of a)" ]; uids = [ 1000 ]; },
	{ name = "bob"; role = "wizard"; },
	{ name = "carol"; role = "ci"; tokens = [ "a-plain-token" ]; },
	{ name = "dave"; role = "ci"; tokens = [ "sha256:12zz" ]; },
	{ name = "alice"; role = "root"; },
	{ name = "erin"; role = "ci"; tokens = [ "$(hash_of a)" ]; },
	{ name = "frank"; role = "admin"; uids = [ 1000 ]; },
	{ name = "bad name"; role = "admin"; }
);
CONF
	test_must_fail "$LABD" -c "$LAB/bad.conf" check-config 2>"$TMP/err" &&
	f=$LAB/bad.conf &&
	grep -qx "$f:5: unknown role 'wizard' of user 'bob' (known: reader, ci, developer, admin)" \
		"$TMP/err" &&
	grep -q "^$f:6: tokens of user 'carol' must be hashed: 'sha256:' and 64 hex digits" "$TMP/err" &&
	grep -q "^$f:7: tokens of user 'dave' must be hashed" "$TMP/err" &&
	grep -qx "$f:8: unknown role 'root' of user 'alice' (known: reader, ci, developer, admin)" \
		"$TMP/err" &&
	grep -qx "$f:8: duplicate user 'alice'" "$TMP/err" &&
	grep -qx "$f:9: users 'alice' and 'erin' share a token" "$TMP/err" &&
	grep -qx "$f:10: users 'alice' and 'frank' share uid 1000" "$TMP/err" &&
	grep -q "^$f:11: invalid user name 'bad name'" "$TMP/err" &&
	[ "$(grep -c "^$f:" "$TMP/err")" = 8 ]
}
test_expect_success 'broken users: labd check-config says file:line: cause for each' t_bad_users

test_done
