# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ci/lib.sh -- what CI jobs need around a lab, for the scenario tests and
# benchmarks, sourced after tests/lib.sh:
#
#   git_init DIR             an empty repository to commit into
#   git_repo DIR             a repository shaped like Linaro's test-definitions
#   git_daemon DIR           `git daemon` on loopback serving DIR; sets GIT_URL
#                            (git://127.0.0.1:PORT/) and GIT_DAEMON_PID

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

# ltp_repo DIR: a stand-in for Linaro's test-definitions as KernelCI's and LKFT's
# LTP jobs use it: automated/linux/ltp/ltp.yaml with the real definition's
# parameters and steps (cd into its directory, ./ltp.sh with the options, then
# ../../utils/send-to-lava.sh ./output/result.txt).  The stand-in ltp.sh runs
# no LTP: for each name of TST_CMDFILES (timers when empty) it checks a few
# things of the shell and the parameters and writes "<case> pass|fail" lines
# to output/result.txt, as the real one does; send-to-lava.sh turns each line
# into lava-test-case, as the real one does.  Branch master.
ltp_repo() {
	local d=$1
	mkdir -p "$d/automated/linux/ltp" "$d/automated/utils"
	git -C "$d" init -q -b master
	git -C "$d" config user.email ci@labd.test
	git -C "$d" config user.name ci
	cat >"$d/automated/linux/ltp/ltp.yaml" <<'YAML'
metadata:
  format: Lava-Test Test Definition 1.0
  name: ltp
  description: "Stand-in for test-definitions' LTP: the same path, parameters and steps"
params:
  TST_CMDFILES: ""
  SKIP_INSTALL: "false"
  SKIPFILE: ""
  BOARD: ""
  BRANCH: ""
  ENVIRONMENT: ""
  TIMEOUT_MULTIPLIER: "3"
  LTP_TMPDIR: "/ltp-tmp"
  SHARD_NUMBER: "1"
  SHARD_INDEX: "1"
run:
  steps:
    - cd ./automated/linux/ltp/
    - ./ltp.sh -T "${TST_CMDFILES}" -s "${SKIP_INSTALL}" -S "${SKIPFILE}" -b "${BOARD}" -d "${LTP_TMPDIR}" -c "${SHARD_NUMBER}" -n "${SHARD_INDEX}"
    - ../../utils/send-to-lava.sh ./output/result.txt
YAML
	cat >"$d/automated/linux/ltp/ltp.sh" <<'SH'
#!/bin/sh
# Stand-in: no LTP, a few checks per command file, results as LTP's runner writes them.
while getopts "T:s:S:b:d:c:n:" o; do
	case $o in T) FILES=$OPTARG ;; d) TMPDIR_LTP=$OPTARG ;; n) INDEX=$OPTARG ;; *) ;; esac
done
mkdir -p output
: >output/result.txt
check() { if eval "$2" >/dev/null 2>&1; then echo "$1 pass"; else echo "$1 fail"; fi >>output/result.txt; }
for f in ${FILES:-timers}; do
	check "${f}_shell" "[ \$((6 * 7)) -eq 42 ]"
	check "${f}_tmpdir" "mkdir -p ${TMPDIR_LTP:-/tmp}/ltp-$$ && rmdir ${TMPDIR_LTP:-/tmp}/ltp-$$"
	check "${f}_shard" "[ '${INDEX:-1}' = 1 ]"
done
echo "uptime pass $(cut -d' ' -f1 /proc/uptime) s" >>output/result.txt
SH
	cat >"$d/automated/utils/send-to-lava.sh" <<'SH'
#!/bin/sh
# Each "<case> <result> [<measurement> <units>]" line of $1 as a LAVA test case.
while read -r name result measurement units; do
	if [ -n "$measurement" ]; then
		lava-test-case "$name" --result "$result" --measurement "$measurement" --units "$units"
	else
		lava-test-case "$name" --result "$result"
	fi
done <"$1"
SH
	chmod +x "$d/automated/linux/ltp/ltp.sh" "$d/automated/utils/send-to-lava.sh"
	git -C "$d" add -A
	git -C "$d" commit -q -m "ltp stand-in"
}
