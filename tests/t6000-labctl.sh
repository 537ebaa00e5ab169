#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t6000-labctl.sh -- labctl: its messages and exit status without labd, then
# every command against a lab of one simulated board.
. "$(dirname "$0")/lib.sh"

sim_lab 1
LABD_PORT=$(free_port)
LABD_URL=http://127.0.0.1:$LABD_PORT
unset LABD_TOKEN

# lc EXPECTED_STATUS ARGS...: labctl ARGS (--url $LC_URL, else $LABD_URL); stdout in
# $TMP/out, stderr in $TMP/err
lc() {
	local want=$1 rc=0
	shift
	"$LABCTL_BIN" --url "${LC_URL:-$LABD_URL}" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "labctl $*: exit status $rc, expected $want"
		cat "$TMP/out" "$TMP/err"
		return 1
	fi
}

out_has() { grep -q -- "$1" "$TMP/out" || { echo "stdout lacks '$1':"; cat "$TMP/out"; return 1; }; }
err_has() { grep -q -- "$1" "$TMP/err" || { echo "stderr lacks '$1':"; cat "$TMP/err"; return 1; }; }

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

# boot_job FILE [SUCCESS_REGEX] [FAILURE_REGEX]: a U-Boot boot and one interactive test
boot_job() {
	local success=${2:-'6\.1\.0-sim'} failures=
	[ -n "${3:-}" ] && failures="failures: [{message: '$3'}]"
	write_job "$1" <<JOB
job_name: labctl boot
device_type: sim-uboot
timeouts:
  job: {minutes: 3}
  action: {seconds: 30}
  connection: {seconds: 6}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - command: uname -r
        name: kernel-release
        successes: [{message: '$success'}]
        $failures
JOB
}
boot_job "$TMP/boot.yaml"
boot_job "$TMP/fail.yaml" 'no such output' '6\.1\.0-sim'

# ---- without labd ----

t_unreachable() {
	lc 3 jobs &&
	err_has "^labctl: cannot reach labd at $LABD_URL: Connection refused (is labd running?)$" &&
	lc 3 show 1 && lc 3 devices && lc 3 cancel 1 && lc 3 submit "$TMP/queued.yaml" &&
	lc 3 log 1 && lc 3 device show sim-01 &&
	LC_URL=unix:$TMP/none.sock lc 3 jobs &&
	err_has "cannot reach labd at unix:$TMP/none.sock: No such file or directory (is labd running?)"
}
test_expect_success 'labd not running: every command exits 3 and says why' t_unreachable

t_offline_check() {
	lc 0 check "$TMP/queued.yaml" && out_has "^$TMP/queued.yaml: ok$" &&
	err_has "checking the job schema only" &&
	lc 1 check "$TMP/queued.yaml" "$TOP/tests/data/jobs/bad-keys.yaml" &&
	out_has "^$TMP/queued.yaml: ok$" &&
	out_has "^$TOP/tests/data/jobs/bad-keys.yaml:10: unknown key 'colour'$"
}
test_expect_success 'labctl check without labd: the schema, file:line problems, exit 1' t_offline_check

t_usage() {
	lc 0 --version && out_has "^labctl [0-9]" &&
	lc 0 --help && out_has "usage: labctl" && out_has "set-state" &&
	lc 3 && lc 3 frobnicate && err_has "unknown command 'frobnicate'" &&
	lc 3 show abc && err_has "invalid job id 'abc'" &&
	lc 3 show && lc 3 submit && lc 3 check &&
	lc 3 jobs --bogus && lc 3 device set-state sim-01 broken &&
	err_has "is 'maintenance' or 'idle'" &&
	lc 3 log -f --timestamps 1 && lc 0 submit --help && out_has "usage: labctl submit" &&
	LC_URL=ftp://x lc 3 jobs && err_has "invalid URL 'ftp://x'"
}
test_expect_success 'usage errors exit 3; --help and --version exit 0' t_usage

# libconfig 1.5's scanner exits the process (2, "input in flex scanner failed") on an
# include of a directory: labctl checks every file an include reaches first, as labd.
t_config_include() {
	local c=$TMP/lcconf
	mkdir -p "$c/sub" &&
	printf 'url = "%s";\n@include "."\n' "$LABD_URL" >"$c/config" && chmod 600 "$c/config" &&
	LABCTL_CONFIG=$c/config lc 3 jobs &&
	err_has "^labctl: $c/config:2: cannot include '$c': a directory$" &&
	printf 'url = "%s";\n@include "labs.inc"\n' "$LABD_URL" >"$c/config" &&
	printf 'token = "t";\n\n@include "sub"\n' >"$c/labs.inc" &&
	LABCTL_CONFIG=$c/config lc 3 jobs &&
	err_has "^labctl: $c/labs.inc:3: cannot include '$c/sub': a directory$" &&
	printf 'url = "%s";\n\n@include "\0\0labs.inc"\n' "$LABD_URL" >"$c/config" &&
	LABCTL_CONFIG=$c/config lc 3 jobs &&
	err_has "^labctl: $c/config:3: a NUL byte: not a text file$" &&
	! grep -q "flex scanner" "$TMP/err" &&
	# an include is relative to the config file's directory, not labctl's
	printf 'url = "%s";\n@include "labs.inc"\n' "$LABD_URL" >"$c/config" &&
	printf 'token = "t";\n' >"$c/labs.inc" &&
	(cd / && LABCTL_CONFIG=$c/config lc 3 jobs) &&
	[ "$(cat "$TMP/err")" = "labctl: cannot reach labd at $LABD_URL: Connection refused (is labd running?)" ]
}
test_expect_success 'a config @include of a directory or with a NUL byte: file:line, exit 3' t_config_include

# ---- with labd ----

labd_start

t_devices() {
	lc 0 devices && out_has "^NAME " && out_has "^sim-01 *sim-uboot *idle " &&
	lc 0 devices --json && [ "$($PY -c 'import json, sys; print(json.load(sys.stdin)[0]["name"])' <"$TMP/out")" = sim-01 ] &&
	lc 0 device show sim-01 && out_has "^state: *idle$" && out_has "^tags: *sim$" &&
	lc 1 device show nope && err_has "^labctl: no board 'nope'$"
}
test_expect_success 'labctl devices and device show' t_devices

t_set_state() {
	lc 0 device set-state sim-01 maintenance --reason "new cable" &&
	out_has "^sim-01: maintenance: new cable (set by anonymous)$" &&
	lc 0 devices && out_has "^sim-01 .* maintenance .* new cable (set by anonymous)$" &&
	lc 1 device set-state nope idle && err_has "no board 'nope'"
}
test_expect_success 'labctl device set-state maintenance --reason' t_set_state

t_check() {
	lc 0 check "$TMP/queued.yaml" && out_has "^$TMP/queued.yaml: ok$" &&
	! grep -q "schema only" "$TMP/err" &&
	lc 1 check "$TMP/unknown-type.yaml" &&
	out_has "^$TMP/unknown-type.yaml: unknown device type 'no-such-type' in this lab (its boards are of type sim-uboot)$" &&
	lc 1 check "$TOP/tests/data/jobs/bad-keys.yaml" "$TMP/queued.yaml" &&
	out_has "bad-keys.yaml:10: unknown key 'colour'" && out_has "queued.yaml: ok" &&
	lc 3 check "$TMP/missing.yaml" && err_has "cannot open '$TMP/missing.yaml'"
}
test_expect_success 'labctl check through labd: the lab device types count' t_check

t_submit_queued() {
	lc 0 submit "$TMP/queued.yaml" && [ "$(cat "$TMP/out")" = 1 ] &&
	lc 0 submit - <"$TMP/queued.yaml" && [ "$(cat "$TMP/out")" = 2 ] &&
	lc 1 submit "$TMP/unknown-type.yaml" && err_has "^labctl: invalid job$" &&
	err_has "unknown-type.yaml: unknown device type" &&
	lc 0 jobs && out_has "^2 *queued *- *sim-uboot *- .* stays queued$" &&
	[ "$(sed -n 2p "$TMP/out" | cut -d' ' -f1)" = 2 ] &&
	lc 0 jobs --state queued --limit 1 --json &&
	[ "$($PY -c 'import json, sys; print([j["id"] for j in json.load(sys.stdin)])' <"$TMP/out")" = "[2]" ] &&
	lc 1 jobs --state bogus && err_has "unknown state 'bogus'"
}
test_expect_success 'labctl submit prints the id; labctl jobs lists it queued' t_submit_queued

t_show() {
	lc 0 show 1 && out_has "^state: *queued$" && out_has "^name: *stays queued$" &&
	out_has "^results: *0 passed, 0 failed, 0 skipped, 0 unknown$" &&
	out_has "^log: *$LABD_URL/api/v1/jobs/1/log$" &&
	lc 0 show --json 1 && [ "$($PY -c 'import json, sys; print(json.load(sys.stdin)["state"])' <"$TMP/out")" = queued ] &&
	lc 1 show 99 && err_has "^labctl: no job 99$"
}
test_expect_success 'labctl show' t_show

t_cancel() {
	lc 0 cancel 1 && out_has "^job 1: canceled$" &&
	lc 1 cancel 1 && err_has "^labctl: job 1 already finished$" &&
	lc 1 cancel 99 && err_has "no job 99" &&
	lc 0 cancel 2 && lc 0 show 1 && out_has "^health: *canceled$"
}
test_expect_success 'labctl cancel: 0, then 1 for a finished or unknown job' t_cancel

t_follow_complete() {
	lc 0 device set-state sim-01 idle &&
	# the same stream, taken by curl as it grows (labctl escapes control bytes)
	{ wait_for "curl -sf $LABD_URL/api/v1/jobs/3" 30 &&
	  curl -sN "$LABD_URL/api/v1/jobs/3/log?follow=1&labd=1" >"$TMP/followed"; } &
	timeout 90 "$LABCTL_BIN" --url "$LABD_URL" submit --follow "$TMP/boot.yaml" >"$TMP/out" 2>"$TMP/err" &&
	wait $! &&
	err_has "job 3 submitted; following its log" &&
	out_has "^# labd: .* job complete" && out_has "^sim login: " &&
	[ "$(tail -1 "$TMP/out")" = "job 3: complete, 1 passed, 0 failed, 0 skipped" ] &&
	labd_lines_between_console_lines "$TMP/followed" "$LAB/state/jobs/3/console.log"
}

# labd_lines_between_console_lines OUT CONSOLE: OUT without its "# labd: "
# lines is the console log: no console line was cut by one of labd's.
labd_lines_between_console_lines() {
	$PY - "$@" <<'PY'
import sys
out = open(sys.argv[1], "rb").read().split(b"\n")
con = open(sys.argv[2], "rb").read()
if out and out[-1] == b"":
    out.pop()
text = b"\n".join(l for l in out if not l.startswith(b"# labd: ")) + b"\n"
if text not in (con, con + b"\n"):
    sys.exit("console lines cut or changed by labd lines")
PY
}
test_expect_success 'submit --follow: the live log, then the outcome; exit 0' t_follow_complete

t_log() {
	lc 0 log --raw 3 && cmp "$TMP/out" "$LAB/state/jobs/3/console.log" &&
	lc 0 log 3 && out_has "Hit any key to stop autoboot" && ! grep -q "^# labd" "$TMP/out" &&
	lc 0 log --labd 3 && out_has "^# labd: " &&
	curl -sf "$LABD_URL/api/v1/jobs/3/log?labd=1" >"$TMP/rendered" &&
	labd_lines_between_console_lines "$TMP/rendered" "$LAB/state/jobs/3/console.log" &&
	lc 0 log --timestamps 3 && [ "$(grep -vc '^\[20' "$TMP/out")" = 0 ] &&
	lc 0 log -f --raw 3 && cmp "$TMP/out" "$LAB/state/jobs/3/console.log" &&
	lc 1 log 99 && err_has "no job 99"
}
test_expect_success 'labctl log: raw is byte-exact; --labd, --timestamps, --follow' t_log

t_results() {
	lc 0 results 3 && out_has "^smoke.kernel-release *pass *-$" &&
	out_has "^job 3: 1 passed, 0 failed, 0 skipped, 0 unknown$" &&
	lc 0 results --json 3 &&
	[ "$($PY -c 'import json, sys; print(json.load(sys.stdin)[0]["result"])' <"$TMP/out")" = pass ] &&
	lc 0 show 3 && out_has "^phases: *power-on 0.000s, .*shell" && out_has "^device: *sim-01$"
}
test_expect_success 'labctl results, and show after the run' t_results

t_follow_fail() {
	lc 1 submit --follow --quiet "$TMP/fail.yaml" &&
	[ "$(cat "$TMP/out")" = "job 4: complete, 0 passed, 1 failed, 0 skipped" ] &&
	[ ! -s "$TMP/err" ]
}
test_expect_success 'submit --follow --quiet: a failed test result exits 1' t_follow_fail

t_follow_incomplete() {
	sim_ctl mode sim0 panic >/dev/null &&
	lc 2 submit -q -f "$TMP/boot.yaml" &&
	out_has "^job 5: incomplete (job): kernel panic" &&
	sim_ctl mode sim0 normal >/dev/null
}
test_expect_success 'submit --follow: an incomplete job exits 2 with the error type and reason' t_follow_incomplete

t_interrupt() {
	local p rc=0
	"$LABCTL_BIN" --url "$LABD_URL" submit --follow "$TMP/boot.yaml" >"$TMP/out" 2>"$TMP/err" &
	p=$!
	wait_for "grep -q 'action 1 of 3' $TMP/out" 20 &&
	kill -INT $p && { wait $p || rc=$?; } &&
	[ "$rc" = 130 ] && err_has "stopped following job 6; it keeps running" &&
	lc 0 show 6 && ! grep -q "^state: *finished$" "$TMP/out" &&
	wait_for "'$LABCTL_BIN' --url $LABD_URL show 6 | grep -q '^health: *complete$'" 60
}
test_expect_success 'Ctrl-C stops following (exit 130); the job keeps running' t_interrupt

t_canceled() {
	local p id rc=0
	lc 0 device set-state sim-01 maintenance || return 1
	"$LABCTL_BIN" --url "$LABD_URL" submit -q -f "$TMP/queued.yaml" >"$TMP/c.out" 2>"$TMP/c.err" &
	p=$!
	wait_for "'$LABCTL_BIN' --url $LABD_URL jobs --state queued | grep -q 'stays queued'" 10 &&
	id=$("$LABCTL_BIN" --url "$LABD_URL" jobs --state queued | sed -n '2s/ .*//p') &&
	lc 0 cancel "$id" && { wait $p || rc=$?; } && [ "$rc" = 2 ] &&
	grep -q "^job $id: canceled by anonymous$" "$TMP/c.out" &&
	lc 0 show "$id" && out_has "^reason: *canceled by anonymous$" && ! grep -q "^error:" "$TMP/out"
}
test_expect_success 'submit --follow of a job canceled meanwhile exits 2' t_canceled

# lcc EXPECTED_STATUS ARGS...: labctl with the config file of $TMP/xdg, no --url, and
# $LABD_URL and $LABCTL_LAB only as $ENV_URL and $ENV_LAB say
lcc() {
	local want=$1 rc=0
	shift
	env -u LABD_TOKEN LABD_URL="${ENV_URL:-}" LABCTL_LAB="${ENV_LAB:-}" \
		XDG_CONFIG_HOME="$TMP/xdg" "$LABCTL_BIN" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "labctl $*: exit status $rc, expected $want"
		cat "$TMP/out" "$TMP/err"
		return 1
	fi
}

t_config() {
	mkdir -p "$TMP/xdg/labctl" &&
	cat >"$TMP/xdg/labctl/config" <<CONF &&
# labctl's labs
url = "$LABD_URL";
labs = {
	nowhere = { url = "http://127.0.0.1:1"; };
	badtoken = { url = "$LABD_URL"; token = "not-a-token"; };
	here = { url = "$LABD_URL"; };
};
CONF
	chmod 600 "$TMP/xdg/labctl/config" &&
	lcc 0 devices && out_has "^sim-01 " && [ ! -s "$TMP/err" ] &&
	lcc 3 --lab nowhere devices && err_has "cannot reach labd at http://127.0.0.1:1" &&
	ENV_LAB=nowhere lcc 3 devices && err_has "cannot reach labd at http://127.0.0.1:1" &&
	ENV_LAB=nowhere lcc 0 --url "$LABD_URL" devices &&
	ENV_URL=http://127.0.0.1:1 lcc 3 devices &&
	ENV_URL=http://127.0.0.1:1 lcc 0 -L here devices &&
	lcc 1 -L badtoken devices && err_has "invalid token" &&
	echo "lab = \"nowhere\";" >>"$TMP/xdg/labctl/config" &&
	lcc 3 devices && err_has "127.0.0.1:1" &&
	lcc 3 --lab missing devices && err_has "no lab 'missing' in 'labs'" &&
	echo "colour = \"red\";" >>"$TMP/xdg/labctl/config" &&
	lcc 3 devices && err_has "labctl/config:9: unknown key 'colour'" &&
	sed -i "/colour/d; /^lab = /d" "$TMP/xdg/labctl/config" && chmod 644 "$TMP/xdg/labctl/config" &&
	lcc 0 devices && err_has "others may read it (chmod 600" &&
	rm -r "$TMP/xdg"
}
test_expect_success 'the config file: a URL, labs chosen by --lab or $LABCTL_LAB, what wins' t_config

t_bad_options() {
	local c
	for c in check submit jobs show cancel log results devices queue device reserve release \
		reservations console power boot telnet token-hash; do
		lc 3 "$c" --no-such-option && err_has "^usage: labctl $c " || return 1
	done
	lc 3 --no-such-option jobs && err_has "^usage: labctl \\["
}
test_expect_success 'a bad option prints the usage of its command' t_bad_options

labd_stop

t_stopped() {
	lc 3 jobs && err_has "Connection refused (is labd running?)"
}
test_expect_success 'labd stopped: exit 3 again' t_stopped

test_done
