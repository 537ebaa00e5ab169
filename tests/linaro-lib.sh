# SPDX-License-Identifier: GPL-2.0-or-later
# tests/linaro-lib.sh -- stand-ins for what KernelCI's and LKFT's real jobs fetch
# from the Internet, for the tests that run those jobs unchanged but for their
# URLs; sourced after tests/lib.sh and tests/ci/lib.sh:
#
#   linaro_testdefs DIR          a git repository at DIR laid out as Linaro's
#                                test-definitions, with the definitions the real
#                                jobs name (see below)
#   kselftest_tarball OUT        a kselftest.tar.xz as KernelCI builds it
#                                (run_kselftest.sh at its top), holding one
#                                collection, acct
#   linaro_git_mirror URL...     git's configuration, in labd's environment,
#                                that fetches each URL (a repository on
#                                github.com) from $GIT_URL<path> instead
#
# Written for labd from what those files do, not copied: the same paths,
# parameters, options and output formats, so that the jobs' steps run as
# they are.
#   automated/linux/ltp/ltp.yaml, ltp.sh: the real definition's parameters and
#     steps; the stand-in runs no LTP: for each name of TST_CMDFILES (timers
#     when empty) it checks a few things of the shell and the parameters and
#     writes "<case> pass|fail" lines to output/result.txt, as the real one does
#   automated/linux/kselftest/kselftest.yaml, kselftest.sh: downloads
#     TESTPROG_URL (wget) into KSELFTEST_PATH, runs run_kselftest.sh for the
#     collections of TST_CMDFILES (or the test TST_CASENAME), writes each TAP
#     result as "<collection>_<test> pass|fail|skip" into output/result.txt
#   automated/linux/signaltest/signaltest.yaml, signaltest.sh: rt-tests'
#     signaltest (from the root) for DURATION with THREADS threads at
#     PRIORITY; each thread's min, avg and max latency a measurement in us
#   automated/utils/send-to-lava.sh RESULT.TXT: each line through lava-test-case
#   automated/lib/sh-test-lib: the few helpers those scripts use
# The kselftest tarball's acct collection has one test, acct_syscall: a Perl
# script (Debian's perl-base is in every root) that switches the kernel's
# process accounting on with acct(2) into a file, runs a process and checks
# that the kernel recorded it: the real kernel behaviour acct's selftest
# checks, without building the kernel's selftests here.

linaro_testdefs() {
	local d=$1
	mkdir -p "$d/automated/linux/ltp" "$d/automated/linux/kselftest" \
		 "$d/automated/linux/signaltest" "$d/automated/utils" "$d/automated/lib"
	git_init "$d"
	_linaro_lib "$d"
	_linaro_ltp "$d/automated/linux/ltp"
	_linaro_kselftest "$d/automated/linux/kselftest"
	_linaro_signaltest "$d/automated/linux/signaltest"
	chmod +x "$d"/automated/linux/*/*.sh "$d/automated/utils/send-to-lava.sh"
	git -C "$d" add -A
	git -C "$d" commit -q -m "test-definitions: what the real jobs run"
}

_linaro_lib() {
	cat >"$1/automated/lib/sh-test-lib" <<'SH'
# sh-test-lib: helpers of the test scripts
info_msg() { echo "INFO: $*"; }
error_msg() { echo "ERROR: $*" >&2; exit 1; }
create_out_dir() { mkdir -p "$1"; }
# check_root: the tests need root's rights
check_root() { [ "$(id -u)" = 0 ]; }
SH
	cat >"$1/automated/utils/send-to-lava.sh" <<'SH'
#!/bin/sh
# send-to-lava.sh RESULT_FILE: "NAME RESULT [MEASUREMENT [UNITS]]" lines to LAVA
f=${1:-./output/result.txt}
[ -f "$f" ] || { echo "send-to-lava.sh: no $f" >&2; exit 1; }
while read -r name result m u; do
	[ -n "$name" ] || continue
	if command -v lava-test-case >/dev/null; then
		if [ -n "$m" ]; then
			lava-test-case "$name" --result "$result" --measurement "$m" --units "${u:-none}"
		else
			lava-test-case "$name" --result "$result"
		fi
	else
		echo "<TEST_CASE_ID=$name RESULT=$result${m:+ MEASUREMENT=$m}${u:+ UNITS=$u}>"
	fi
done <"$f"
SH
}

_linaro_ltp() {
	cat >"$1/ltp.yaml" <<'YAML'
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
	cat >"$1/ltp.sh" <<'SH'
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
}

_linaro_kselftest() {
	cat >"$1/kselftest.yaml" <<'YAML'
metadata:
  format: Lava-Test Test Definition 1.0
  name: kselftest
  description: "Linux kernel self tests from a kselftest tarball"
params:
  SKIP_INSTALL: "false"
  TESTPROG: "kselftest.tar.xz"
  TESTPROG_URL: ""
  SKIPFILE: ""
  SKIPLIST: ""
  TST_CMDFILES: ""
  TST_CASENAME: ""
  KSELFTEST_PATH: "/opt/kselftests/default-in-kernel/"
  BOARD: ""
  BRANCH: ""
  ENVIRONMENT: ""
  SHARD_NUMBER: 1
  SHARD_INDEX: 1
  ENV: ""
run:
  steps:
    - cd ./automated/linux/kselftest/
    - ./kselftest.sh -c "${TST_CMDFILES}" -T "${TST_CASENAME}" -t "${TESTPROG}" -s "${SKIP_INSTALL}" -u "${TESTPROG_URL}" -p "${KSELFTEST_PATH}" -L "${SKIPFILE}" -S "${SKIPLIST}" -b "${BOARD}" -g "${BRANCH}" -e "${ENVIRONMENT}" -n "${SHARD_NUMBER}" -i "${SHARD_INDEX}" -E "${ENV}"
    - ../../utils/send-to-lava.sh ./output/result.txt
YAML
	cat >"$1/kselftest.sh" <<'SH'
#!/bin/sh
# kselftest.sh -c COLLECTIONS -T CASE -u TESTPROG_URL -p KSELFTEST_PATH ...:
# fetch and unpack the kselftest tarball, run the collections, result.txt
. ../../lib/sh-test-lib
OUTPUT=$(pwd)/output
RESULT_FILE=$OUTPUT/result.txt
tests= case= url= path=/opt/kselftests/default-in-kernel/ env=
while getopts "c:T:t:s:u:p:L:S:b:g:e:n:i:E:" o; do
	case $o in
	c) tests=$OPTARG ;;
	T) case=$OPTARG ;;
	u) url=$OPTARG ;;
	p) path=$OPTARG ;;
	E) env=$OPTARG ;;
	*) ;;
	esac
done
check_root || error_msg "kselftest needs root"
create_out_dir "$OUTPUT"
: >"$RESULT_FILE"
if [ -n "$url" ]; then
	mkdir -p "$path"
	info_msg "downloading $url"
	wget -q -O "$OUTPUT/kselftest.tar.xz" "$url" || error_msg "cannot download $url"
	tar -xf "$OUTPUT/kselftest.tar.xz" -C "$path" || error_msg "cannot unpack $url"
fi
cd "$path" || error_msg "no kselftests in $path"
[ -x ./run_kselftest.sh ] || error_msg "no run_kselftest.sh in $path"
if [ -n "$case" ]; then
	args="-t $case"
else
	args=
	for c in $tests; do args="$args -c $c"; done
fi
[ -z "$env" ] || export $env
# shellcheck disable=SC2086
./run_kselftest.sh $args 2>&1 | tee "$OUTPUT/kselftest.txt"
# "ok 1 selftests: acct: acct_syscall [# SKIP ...]" -> "acct_acct_syscall pass|skip"
sed -n 's/^\(not \)\{0,1\}ok [0-9]* selftests: \([^:]*\): \([^ ]*\)\(.*\)$/\1|\2_\3|\4/p' \
	"$OUTPUT/kselftest.txt" |
while IFS='|' read -r not name rest; do
	case $not$rest in
	*"# SKIP"*) echo "$name skip" ;;
	not*) echo "$name fail" ;;
	*) echo "$name pass" ;;
	esac
done >>"$RESULT_FILE"
SH
}

_linaro_signaltest() {
	cat >"$1/signaltest.yaml" <<'YAML'
metadata:
  format: Lava-Test Test Definition 1.0
  name: signaltest
  description: "rt-tests' signaltest: latency of signals between real-time threads"
params:
  DURATION: "1m"
  PRIORITY: "98"
  THREADS: "2"
  BACKGROUND_CMD: ""
run:
  steps:
    - cd ./automated/linux/signaltest/
    - ./signaltest.sh -D "${DURATION}" -p "${PRIORITY}" -t "${THREADS}" -w "${BACKGROUND_CMD}"
    - ../../utils/send-to-lava.sh ./output/result.txt
YAML
	cat >"$1/signaltest.sh" <<'SH'
#!/bin/sh
# signaltest.sh -D DURATION -p PRIORITY -t THREADS [-w BACKGROUND_CMD]
. ../../lib/sh-test-lib
OUTPUT=$(pwd)/output
RESULT_FILE=$OUTPUT/result.txt
duration=1m prio=98 threads=2 bg=
while getopts "D:p:t:w:" o; do
	case $o in D) duration=$OPTARG ;; p) prio=$OPTARG ;; t) threads=$OPTARG ;; w) bg=$OPTARG ;; esac
done
create_out_dir "$OUTPUT"
: >"$RESULT_FILE"
command -v signaltest >/dev/null || error_msg "no signaltest (rt-tests) in this root"
[ -z "$bg" ] || { sh -c "$bg" & bgpid=$!; }
signaltest -q -D "$duration" -p "$prio" -t "$threads" -m | tee "$OUTPUT/signaltest.txt"
rc=$?
[ -z "$bg" ] || kill "$bgpid"
# "T: 0 ( 1234) P:98 C: 5000 Min: 7 Act: 15 Avg: 12 Max: 120"
sed -n 's/^T: *\([0-9]*\) .*Min: *\([0-9]*\) .*Avg: *\([0-9]*\) .*Max: *\([0-9]*\).*/\1 \2 \3 \4/p' \
	"$OUTPUT/signaltest.txt" |
while read -r t min avg max; do
	echo "t$t-min-latency pass $min us"
	echo "t$t-avg-latency pass $avg us"
	echo "t$t-max-latency pass $max us"
done >>"$RESULT_FILE"
if [ $rc = 0 ] && [ -s "$RESULT_FILE" ]; then
	echo "signaltest pass" >>"$RESULT_FILE"
else
	echo "signaltest fail" >>"$RESULT_FILE"
fi
SH
}

# kselftest_tarball OUT: the stand-in kselftest tarball (see above).
kselftest_tarball() {
	local t=$TMP/kselftest-build
	rm -rf "$t" && mkdir -p "$t/acct"
	echo "acct:acct_syscall" >"$t/kselftest-list.txt"
	cat >"$t/run_kselftest.sh" <<'SH'
#!/bin/sh
# run_kselftest.sh [-c COLLECTION]... [-t COLLECTION:TEST]...: the tests of
# kselftest-list.txt, TAP as the kernel's runner prints it
cd "$(dirname "$0")" || exit 1
want=
while [ $# -gt 1 ]; do
	case $1 in
	-c) want="$want $(grep "^$2:" kselftest-list.txt)" ;;
	-t) want="$want $2" ;;
	esac
	shift 2
done
[ -n "$want" ] || want=$(cat kselftest-list.txt)
echo "TAP version 13"
echo "1..$(echo $want | wc -w)"
n=0
for t in $want; do
	n=$((n + 1))
	c=${t%%:*} name=${t#*:}
	echo "# selftests: $c: $name"
	rc=0
	(cd "$c" && "./$name") >/tmp/kselftest.out 2>&1 || rc=$?
	sed 's/^/# /' /tmp/kselftest.out
	if [ $rc = 0 ]; then
		echo "ok $n selftests: $c: $name"
	else
		echo "not ok $n selftests: $c: $name # exit=$rc"
	fi
done
rm -f /tmp/kselftest.out
SH
	cat >"$t/acct/acct_syscall" <<'PERL'
#!/usr/bin/perl
# acct_syscall: acct(2) on, a process, acct(2) off: the kernel recorded it
use strict;
use warnings;
my %nr = (x86_64 => 163, aarch64 => 89, armv7l => 51, i686 => 51);
my $m = `uname -m`;
chomp $m;
my $f = "/tmp/acct_syscall.$$";
die "no acct(2) number for $m\n" unless $nr{$m};
open(my $fh, '>', $f) or die "$f: $!\n";
close($fh);
print "TAP version 13\n1..1\n";
syscall($nr{$m}, $f) == 0 or die "acct($f): $!\n";
system('true');
syscall($nr{$m}, 0) == 0 or die "acct(NULL): $!\n";
my $size = -s $f;
unlink $f;
if ($size) {
	print "# $size bytes of records\n";
	print "ok 1 acct(2) recorded a process\n";
	exit 0;
}
print "not ok 1 acct(2) recorded nothing\n";
exit 1;
PERL
	chmod +x "$t/run_kselftest.sh" "$t/acct/acct_syscall"
	tar -C "$t" -cJf "$1" --owner=0 --group=0 .
	rm -rf "$t"
}

# linaro_git_mirror URL...: export git's url.<base>.insteadOf for each URL,
# through GIT_CONFIG_COUNT/KEY/VALUE (git >= 2.31), so that labd's git (which
# inherits its environment) fetches "https://github.com/linaro/x.git" from
# "$GIT_URL""linaro/x.git": the jobs keep their repository URLs, as a lab with
# a local mirror of github.com would.
linaro_git_mirror() {
	local i=0 u
	for u in "$@"; do
		export "GIT_CONFIG_KEY_$i=url.$GIT_URL${u#https://github.com/}.insteadOf"
		export "GIT_CONFIG_VALUE_$i=$u"
		i=$((i + 1))
	done
	export GIT_CONFIG_COUNT=$i
}
