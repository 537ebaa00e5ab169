# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ci/lib.sh -- what CI jobs need around a lab, for the scenario tests and
# benchmarks, sourced after tests/lib.sh:
#
#   git_init DIR             an empty repository to commit into
#   git_repo DIR             a repository shaped like Linaro's test-definitions
#   git_daemon DIR           `git daemon` on loopback serving DIR; sets GIT_URL
#                            (git://127.0.0.1:PORT/) and GIT_DAEMON_PID
#   callback_recorder        a receiver of notify callbacks; sets CB_PORT, CB_TOKEN

# git_init DIR: an empty repository at DIR (made if missing), branch master,
# with a committer.
git_init() {
	mkdir -p "$1"
	git -C "$1" init -q -b master
	git -C "$1" config user.email ci@labd.test
	git -C "$1" config user.name ci
}

# git_repo DIR: automated/linux/smoke/smoke.{yaml,sh} at tag v1, then a second
# commit (HEAD) whose smoke.sh also reports a measurement.  Sets REPO_V1 and
# REPO_HEAD to the two commit ids.
git_repo() {
	local d=$1
	mkdir -p "$d/automated/linux/smoke" "$d/automated/utils"
	git_init "$d"
	cat >"$d/automated/linux/smoke/smoke.yaml" <<'YAML'
metadata:
  format: Lava-Test Test Definition 1.0
  name: smoke-tests-basic
  description: "Smoke tests, shaped like Linaro's test-definitions"
params:
  TESTS: "pwd"
  SKIP_INSTALL: "true"
run:
  steps:
    - ./automated/linux/smoke/smoke.sh -s "${SKIP_INSTALL}" -t "${TESTS}"
YAML
	cat >"$d/automated/linux/smoke/smoke.sh" <<'SH'
#!/bin/sh
# smoke.sh -s SKIP_INSTALL -t "TESTS": each test a command, its result through
# lava-test-case (as the real one does with send-to-lava.sh)
. ./automated/utils/sh-test-lib
while getopts "s:t:" o; do
	case $o in s) SKIP_INSTALL=$OPTARG ;; t) TESTS=$OPTARG ;; esac
done
for t in $TESTS; do
	if $t >/dev/null 2>&1; then report "$t" pass; else report "$t" fail; fi
done
SH
	cat >"$d/automated/utils/sh-test-lib" <<'SH'
report() { lava-test-case "$1" --result "$2"; }
SH
	chmod +x "$d/automated/linux/smoke/smoke.sh"
	git -C "$d" add -A
	git -C "$d" commit -q -m "smoke tests"
	git -C "$d" tag -a v1 -m v1
	REPO_V1=$(git -C "$d" rev-parse HEAD)
	cat >>"$d/automated/linux/smoke/smoke.sh" <<'SH'
lava-test-case uptime --result pass --measurement "$(cut -d' ' -f1 /proc/uptime)" --units seconds
SH
	git -C "$d" commit -q -am "smoke: measure the uptime"
	REPO_HEAD=$(git -C "$d" rev-parse HEAD)
}

# git_daemon DIR: serve the repositories below DIR at $GIT_URL.
git_daemon() {
	local port
	port=$(free_port)
	GIT_URL=git://127.0.0.1:$port/
	git daemon --base-path="$1" --export-all --reuseaddr --listen=127.0.0.1 --port="$port" \
		--pid-file="$TMP/git-daemon.pid" "$1" >"$TMP/git-daemon.log" 2>&1 &
	GIT_DAEMON_PID=$!
	at_exit "kill $GIT_DAEMON_PID"
	wait_for "git ls-remote $GIT_URL$(ls "$1" | head -1) >/dev/null" 10
}

# callback_recorder: a receiver of notify callbacks (tests/helper/recorder.py)
# on a free port, CB_PORT, recording each request in $TMP/callbacks.jsonl;
# CB_TOKEN is the token for labd.conf's notify tokens.
callback_recorder() {
	CB_TOKEN=cb-token-$$-$RANDOM
	CB_PORT=$(free_port)
	$PY "$TOP/tests/helper/recorder.py" --port "$CB_PORT" --out "$TMP/callbacks.jsonl" \
		>"$TMP/recorder.log" 2>&1 &
	at_exit "kill $!"
	wait_for "curl -s http://127.0.0.1:$CB_PORT/ -o /dev/null" 10
}
