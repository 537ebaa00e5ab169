# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib.sh -- helpers for the scenario tests (tNNNN-*.sh): TAP output, a
# temporary lab of simulated boards, and a labd started on a free port.
#
#   . "$(dirname "$0")/lib.sh"
#   sim_lab 2                  # two simulated boards, labd.conf in $LAB
#   labd_start                 # labd on 127.0.0.1:$LABD_PORT; $LABCTL ready
#   test_expect_success 'a job boots' '
#           submit_wait jobs/x.yaml complete
#   '
#   test_done
#
# Everything started here is stopped by the EXIT trap.  Python helpers must use
# /usr/bin/python3 (Debian's, with its modules).

set -u
TOP=${LABD_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
LABD=$BUILD/labd
LABCTL_BIN=$BUILD/labctl
SIMBOARD=${SIMBOARD:-$BUILD/simboard}
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/labd-test.XXXXXX")
LAB=$TMP/lab
# LABD_VERBOSE=1: every labd daemon the test starts logs at debug level (-v
# -v), so its log has each read that waited for the database in the loop
# ("store: waited N us for the database to ...", doc/multi-host.md); labd's
# commands (check-config, gc, store, run-job, import-lava-device) run as
# they are.
if [ -n "${LABD_VERBOSE:-}" ]; then
	cat >"$TMP/labd-verbose" <<SH
#!/bin/sh
for a; do
	case "\$a" in check-config|gc|store|run-job|import-lava-device) exec "$LABD" "\$@";; esac
done
exec "$LABD" -v -v "\$@"
SH
	chmod 755 "$TMP/labd-verbose"
	LABD=$TMP/labd-verbose
fi
test_count=0
test_failed=0
_cleanup_cmds=()
# In a SANITIZE=1 build a sanitizer's report ends the program with status 125,
# not with 1 (its default, and the status of labd's and labctl's refusals):
# test_must_fail and test_expect_code do not take a report for a refusal.
SANITIZER_STATUS=125
export ASAN_OPTIONS="exitcode=$SANITIZER_STATUS${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="exitcode=$SANITIZER_STATUS${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Every process the test starts carries this in its environment, daemons that
# leave the process group (tmux, PostgreSQL, chromium) too: the EXIT trap finds
# and stops whatever is still running by it.
export LABD_TEST_TMP=$TMP

# _strays: the processes started by this test that still run (not this shell).
_strays() {
	env -u LABD_TEST_TMP grep -lzxF "LABD_TEST_TMP=$TMP" /proc/[0-9]*/environ \
		>"$TMP/.strays" 2>/dev/null
	sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' "$TMP/.strays" | grep -vx -e "$$" -e "$BASHPID"
}

# _kill_strays: SIGTERM what the test left running, SIGKILL what is left 2 s later.
_kill_strays() {
	local pids i
	pids=$(_strays)
	[ -n "$pids" ] || return 0
	kill -TERM $pids 2>/dev/null
	for i in $(seq 20); do
		sleep 0.1
		pids=$(_strays)
		[ -n "$pids" ] || return 0
	done
	kill -KILL $pids 2>/dev/null
}

_cleanup() {
	local c
	for c in "${_cleanup_cmds[@]}"; do eval "$c" >/dev/null 2>&1; done
	# labd started again inside a test body (a subshell) is not in the list.
	[ -f "$TMP/labd.pids" ] && xargs -r kill -9 <"$TMP/labd.pids" >/dev/null 2>&1
	_kill_strays
	find "${TMPDIR:-/tmp}/labd-test-ports" -maxdepth 1 -lname "$TMP" -delete 2>/dev/null
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap _cleanup EXIT

# at_exit CMD: run CMD when the script ends (last registered runs first).
at_exit() {
	_cleanup_cmds=("$1" "${_cleanup_cmds[@]}")
}

say() { echo "# $*"; }

# under_asan: a SANITIZE=1 build (BUILD build-san): AddressSanitizer keeps
# freed memory in quarantine (256 MB), so RSS says nothing of labd's own.
under_asan() { case "$BUILD" in *-san) true ;; *) false ;; esac; }

# test_expect_success DESC BODY: run BODY (bash), ok when it exits 0.
test_expect_success() {
	local desc=$1 body=$2 out
	test_count=$((test_count + 1))
	out=$TMP/test-$test_count.out
	# TEST_TRACE=1 traces each test body into its log.  The body runs under
	# set -e outside of any condition (bash ignores set -e in an `if`, an
	# && or || list but its last command, and all they run, subshells
	# included): any command failing in it fails the test, not only the
	# last one.  So no `(...) || rc=$?` here.  A command expected to fail
	# is written test_must_fail CMD, test_expect_code N CMD, or
	# `rc=0; CMD || rc=$?`: not `CMD; [ $? = 1 ]`, which ends the body at
	# CMD, nor `! CMD` alone on a line, which set -e never stops at.
	local rc
	# The command that ended a failed body is named at the end of its output.
	(set -e; [ -z "${TEST_TRACE:-}" ] || set -x
	 trap 'echo "# the body stopped at: $BASH_COMMAND (status $?)"' ERR
	 eval "$body") >"$out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok $test_count - $desc"
	else
		echo "not ok $test_count - $desc"
		test_failed=$((test_failed + 1))
		sed 's/^/#   /' "$out" | tail -40
	fi
}

# test_expect_code N CMD...: CMD exits with status N.  For a command expected
# to fail: in a test body (set -e), `CMD; [ $? = N ]` ends the body at CMD.
test_expect_code() {
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	[ "$rc" = "$want" ] && return 0
	echo "test_expect_code: '$*' exited with status $rc, not $want" >&2
	return 1
}

# test_must_fail CMD...: CMD fails, but not by a signal, a sanitizer's report
# nor as a command not found (a crash is not the failure a test expects).
# Unlike `! CMD`, which set -e never stops at, it fails the body wherever it
# stands.
test_must_fail() {
	local rc=0
	"$@" || rc=$?
	if [ "$rc" = 0 ]; then
		echo "test_must_fail: '$*' succeeded" >&2
		return 1
	elif [ "$rc" -gt 128 ] || [ "$rc" = 127 ] || [ "$rc" = "$SANITIZER_STATUS" ]; then
		echo "test_must_fail: '$*' exited with status $rc" >&2
		return 1
	fi
}

# test_skip DESC WHY: a test that cannot run here, with the reason.
test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}

# free_port: an unused TCP port on 127.0.0.1, for this test alone.  It is
# taken below the kernel's ephemeral range (no client connection gets it
# before the test binds it) and claimed in ${TMPDIR:-/tmp}/labd-test-ports/
# (a symlink to the test's $TMP: tests running at once never get the same
# one; a claim whose test is gone is taken over).
free_port() {
	$PY - "${TMPDIR:-/tmp}/labd-test-ports" "$TMP" <<'PY'
import os, random, socket, sys
claims, owner = sys.argv[1], sys.argv[2]
os.makedirs(claims, exist_ok=True)
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(2000):
    port = random.randrange(10000, low if low > 12000 else 60000)
    claim = os.path.join(claims, str(port))
    try:
        os.symlink(owner, claim)
    except FileExistsError:
        try:
            if not os.path.isdir(os.readlink(claim)):
                os.unlink(claim)  # its test ended: free again, next round
        except OSError:
            pass
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue  # in use by something else: keep the claim, it stays taken
    finally:
        s.close()
    print(port)
    sys.exit(0)
sys.exit("free_port: no free port")
PY
}

# wait_for CMD [TIMEOUT_S]: poll CMD every 50 ms until it succeeds.
wait_for() {
	local cmd=$1 limit=${2:-20} i=0
	while ! eval "$cmd" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge $((limit * 20)) ] && return 1
		sleep 0.05
	done
}

# sim_start N [ARGS...]: N simulated boards in $LAB/sim (sim0..); ready within
# $SIM_START_TIMEOUT seconds (default 10; thousands of boards take longer).
sim_start() {
	local n=$1; shift
	mkdir -p "$LAB/sim"
	"$SIMBOARD" --dir "$LAB/sim" --count "$n" "$@" >"$LAB/simboard.log" 2>&1 &
	SIM_PID=$!
	at_exit "kill $SIM_PID"
	wait_for "[ -S '$LAB/sim/ctl.sock' ] && [ -e '$LAB/sim/sim$((n - 1)).pty' ]" "${SIM_START_TIMEOUT:-10}"
}

# sim_ctl ARGS...: a command on the simulated boards' control socket.
sim_ctl() {
	"$SIMBOARD" ctl "$LAB/sim" "$@"
}

# write_lab_conf [EXTRA]: labd.conf in $LAB with state in $LAB/state.
write_lab_conf() {
	mkdir -p "$LAB/devices"
	cp "$TOP/devices/sim.conf" "$LAB/devices/00-sim-types.conf"
	cat >"$LAB/labd.conf" <<CONF
lab_name = "test-lab";
state_dir = "state";
devices_dir = "devices";
server_ip = "10.0.2.2";
artifact_dir = "$TOP";
# the tests read jobs' log files as labd wrote them; t1070 tests their compression
retention = { compress = false; };
${1:-}
CONF
}

# sim_device NAME INDEX [TYPE] [EXTRA]: a board on simulated board sim<INDEX>, switched
# by `simboard ctl` commands, or with SIM_PDU_PORT set through simboard's pdudaemon API.
sim_device() {
	local name=$1 i=$2 type=${3:-sim-uboot} extra=${4:-} conf power
	if [ -n "${SIM_PDU_PORT:-}" ]; then
		power="driver = \"pdudaemon\"; url = \"http://127.0.0.1:$SIM_PDU_PORT\";
		hostname = \"sim\"; port = $i; delay = 0;"
	else
		power="driver = \"command\";
		on = \"$SIMBOARD ctl $LAB/sim power sim$i on\";
		off = \"$SIMBOARD ctl $LAB/sim power sim$i off\";"
	fi
	# read and printf are builtins: thousands of boards (bench-scale) without a fork each
	IFS= read -r -d '' conf <<CONF || true
device = {
	name = "$name";
	type = "$type";
	tags = [ "sim" ];
	console = { driver = "pty"; path = "$LAB/sim/sim$i.pty"; };
	power = {
		$power
		timeout = 30;	# simboard ctl takes seconds on a loaded machine (ASan): no false "bad"
	};
	$extra
};
CONF
	printf '%s' "$conf" >"$LAB/devices/10-$name.conf"
}

# sim_lab N [SIMBOARD ARGS...]: N simulated boards and a lab with one device each
# (sim-01 .. sim-0N); labd.conf in $LAB.
sim_lab() {
	local n=$1 i; shift
	sim_start "$n" "$@"
	write_lab_conf
	for i in $(seq 0 $((n - 1))); do
		sim_device "$(printf 'sim-%02d' $((i + 1)))" "$i"
	done
}

# labd_start [ARGS...]: labd on a free port; sets LABD_PORT, LABD_URL, LABD_PID.
# It must answer within $LABD_START_TIMEOUT seconds (default 20).
labd_start() {
	LABD_PORT=$(free_port)
	LABD_URL=http://127.0.0.1:$LABD_PORT
	export LABD_URL
	"$LABD" -c "$LAB/labd.conf" --listen "127.0.0.1:$LABD_PORT" "$@" >>"$LAB/labd.log" 2>&1 &
	LABD_PID=$!
	at_exit "kill -9 $LABD_PID"
	echo "$LABD_PID" >>"$TMP/labd.pids"
	wait_for "curl -sf --max-time 5 $LABD_URL/api/v1/health" "${LABD_START_TIMEOUT:-20}" ||
		{ cat "$LAB/labd.log"; return 1; }
}

# labd_kill: SIGKILL the running labd (also one started inside an earlier test
# body, a subshell) and wait until it is gone.
labd_kill() {
	local pid
	pid=$(tail -n 1 "$TMP/labd.pids")
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	wait_for "! kill -0 $pid" 10
}

# labd_restart [ARGS...]: labd again on the same port, so $LABD_URL stays
# right for the rest of the script even when called inside a test body; it
# must answer within $LABD_START_TIMEOUT seconds too.
labd_restart() {
	"$LABD" -c "$LAB/labd.conf" --listen "127.0.0.1:$LABD_PORT" "$@" >>"$LAB/labd.log" 2>&1 &
	LABD_PID=$!
	echo "$LABD_PID" >>"$TMP/labd.pids"
	wait_for "curl -sf --max-time 5 $LABD_URL/api/v1/health" "${LABD_START_TIMEOUT:-20}" ||
		{ tail -20 "$LAB/labd.log"; return 1; }
}

# labd_stop: SIGTERM and wait until it exited (also from a subshell, where
# `wait` cannot see it).
labd_stop() {
	kill "$LABD_PID" 2>/dev/null
	wait "$LABD_PID" 2>/dev/null || true
	wait_for "! kill -0 $LABD_PID" 90
}

labctl() {
	"$LABCTL_BIN" --url "$LABD_URL" "$@"
}

# submit FILE [TOKEN]: POST job FILE to labd at $LABD_URL (with bearer TOKEN),
# print its id; a refused job fails, labd's answer on stderr.
submit() {
	local out
	out=$(curl -s -X POST ${2:+-H "Authorization: Bearer $2"} --data-binary @"$1" \
		"$LABD_URL/api/v1/jobs") &&
		$PY -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$out" 2>/dev/null ||
		{ echo "submit $1: $out" >&2; return 1; }
}

# submit_follow FILE STATUS [OUT]: labctl submit --follow FILE, which must exit
# with STATUS; its output in OUT (default $TMP/follow.out, which job_id reads;
# jobs followed at once each need their own).  Otherwise its end and the end
# of the job's console, printable, are shown.
submit_follow() {
	local out=${3:-$TMP/follow.out} rc=0 id
	labctl submit --follow "$1" >"$out" 2>&1 || rc=$?
	[ "$rc" = "$2" ] && return 0
	echo "labctl submit --follow $1: exit status $rc, expected $2"
	tail -40 "$out"
	id=$(job_id "$out")
	if [ -n "$id" ] && [ -f "$LAB/state/jobs/$id/console.log" ]; then
		echo "the end of the console, printable:"
		tail -c 3000 "$LAB/state/jobs/$id/console.log" |
			sed 's/\x1b\[[0-9;=?]*[A-Za-z]/~/g' | tr -cd '[:print:]\n~' | tail -15
	fi
	return 1
}

# job_id [FILE]: the id of the last job FILE reports ("job N: ..." lines of
# labctl --follow or labd run-job; default $TMP/follow.out).
job_id() {
	sed -n 's/^job \([0-9]*\): .*/\1/p' "${1:-$TMP/follow.out}" | tail -1
}

# submit_burst URL JOB N: N copies of JOB submitted to the labd at URL by 8
# keep-alive clients at once (tests/bench/queue-client.py), as CI systems do.
submit_burst() {
	local p=8 i pids=()
	for i in $(seq 0 $((p - 1))); do
		$PY "$TOP/tests/bench/queue-client.py" "$1" submit "$2" $((($3 + p - 1 - i) / p)) \
			>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || return 1; done
}

# write_job FILE: a job file from stdin.
write_job() {
	mkdir -p "$(dirname "$1")"
	cat >"$1"
}

# sim_minimal_boot: the boot action (YAML) that powers a simulated board on and
# logs in to its root shell (no deploy), for job files.
sim_minimal_boot() {
	cat <<'JOB'
- boot:
    method: minimal
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
JOB
}

# sim_uboot_boot: the actions (YAML) that deploy the bundled artifacts and boot
# a simulated board through U-Boot to its root shell, for job files:
#   actions:
#   $(sim_uboot_boot)
#   - test: ...
sim_uboot_boot() {
	local art=$TOP/contrib/lab/artifacts
	cat <<JOB
- deploy:
    to: tftp
    kernel: {url: 'file://$art/Image', type: image}
    ramdisk: {url: 'file://$art/initrd.cpio.gz'}
    dtb: {url: 'file://$art/sim.dtb'}
- boot:
    method: u-boot
    commands: ramdisk
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
JOB
}

# write_uboot_smoke_job FILE: a job that boots a simulated board through U-Boot
# and checks its kernel release (the short job of the API and retention tests)
write_uboot_smoke_job() {
	write_job "$1" <<JOB
job_name: sim u-boot boot
device_type: sim-uboot
timeouts:
  job: {minutes: 3}
  action: {seconds: 60}
  connection: {seconds: 20}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - command: uname -r
        name: kernel-release
        successes: [{message: '6\\.1\\.0-sim'}]
JOB
}

# run_job JOB [EXPECTED_STATUS]: labd run-job on $LAB, output in $TMP/run.out.
run_job() {
	local job=$1 want=${2:-0} rc=0
	"$LABD" -c "$LAB/labd.conf" run-job "$job" >"$TMP/run.out" 2>&1 || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "labd run-job $job: exit status $rc, expected $want"
		tail -30 "$TMP/run.out"
		return 1
	fi
}
