#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1160-jobs-real.sh -- the jobs KernelCI and LKFT really send
# (../shared/jobs-real/), every one through `labctl check` against a lab whose
# device types are named as the jobs name them (tests/data/jobs-real/devices.conf):
# prints the accepted share (KernelCI weighted by the (job, platform) pairs each
# file stands for, LKFT per job), how much of the rest needs containers or host
# commands, and every refusal reason with its weight
# (tests/helper/jobs-real-report.py).
. "$(dirname "$0")/lib.sh"

REAL=${JOBS_REAL:-$TOP/../shared/jobs-real}
# a git worktree of the repository sits one level deeper
[ -n "${JOBS_REAL:-}" ] || [ -d "$REAL" ] || REAL=$TOP/../../shared/jobs-real
# Floors: the figures only grow.  Without a container runner, KernelCI's
# downloads/flasher/fastboot pairs (337 of 1426) and LKFT's fastboot boards
# (216 of 612) are refused; so are LKFT's thunderx jobs (36), whose ramdisk
# URL is the placeholder 'ramdisk-url'.
KERNELCI_MIN=${KERNELCI_MIN:-1088}
LKFT_MIN=${LKFT_MIN:-360}
if [ ! -d "$REAL/kernelci" ] || [ ! -d "$REAL/lkft" ]; then
	test_skip "the real CI jobs are checked against a lab of their device types" \
		"no real jobs at $REAL (set JOBS_REAL)"
	test_expect_success 'a duplicate key is a warning naming both lines; --strict refuses it' '
	f=$REAL/kernelci/0006_baseline_-_-_grub.yaml &&
	labctl check "$f" >"$TMP/check.out" &&
	grep -q "^$f: ok$" "$TMP/check.out" &&
	grep -q "^$f:67: warning: duplicate key .os. (also at line 66): the value of line 67 is used" "$TMP/check.out" &&
	grep -q "^$f:[0-9]*: note: actions\[0\]\.deploy\.kernel: .image_arg. ignored" "$TMP/check.out" &&
	test_expect_code 1 labctl check --strict "$f" >"$TMP/strict.out" &&
	grep -q "warning: duplicate key .os." "$TMP/strict.out" &&
	! grep -q "^$f: ok$" "$TMP/strict.out"
'

test_done
	exit
fi

mkdir -p "$LAB/devices"
cp "$TOP/tests/data/jobs-real/devices.conf" "$LAB/devices/00-types.conf"
# one board of each type; nothing is ever powered or read (dry runs only)
{
echo "devices = ("
sed -n 's/.*name = "\([^"]*\)".*/\1/p' "$TOP/tests/data/jobs-real/devices.conf" |
while read -r type; do
	case $type in
	qemu*) console='driver = "qemu";' power='driver = "qemu";' ;;
	*) console='driver = "tcp"; host = "127.0.0.1"; port = 9;' power='driver = "fake";' ;;
	esac
	echo "{ name = \"$type-01\"; type = \"$type\"; console = { $console }; power = { $power }; }"
done | paste -sd,
echo ");"
} >"$LAB/devices/10-boards.conf"
cat >"$LAB/labd.conf" <<CONF
lab_name = "jobs-real";
state_dir = "state";
devices_dir = "devices";
git_allow = [ "https://github.com/Linaro/", "https://github.com/linaro/", "https://git.linaro.org/", "https://gitlab.com/",
	      "https://github.com/kernelci/" ];
nfs = { export_dir = "$LAB/nfs"; server_ip = "10.0.2.2"; };
CONF
mkdir -p "$LAB/nfs"
labd_start || exit 1

for set in kernelci lkft; do
	find "$REAL/$set" -name "*.yaml" | sort | xargs "$LABCTL_BIN" --url "$LABD_URL" check \
		>"$TMP/$set.out" 2>"$TMP/$set.err"
	echo $? >"$TMP/$set.rc"
done
$PY "$TOP/tests/helper/jobs-real-report.py" "$REAL" "$TMP" --json >"$TMP/report"
sed '$d; s/^/# /' "$TMP/report"

test_expect_success 'every real job is checked against the lab; each refusal says why' '
	! grep -q "cannot reach labd\|schema only" "$TMP/kernelci.err" "$TMP/lkft.err" &&
	grep -q "^kernelci: " "$TMP/report" && grep -q "^lkft: " "$TMP/report" &&
	! grep -q "(no reason given)" "$TMP/report" &&
	! grep -q "^[2-9]" "$TMP/kernelci.rc" "$TMP/lkft.rc"
'

test_expect_success "accepted: KernelCI at least $KERNELCI_MIN of 1426 pairs, LKFT at least $LKFT_MIN of 612 jobs" '
	tail -1 "$TMP/report" >"$TMP/figures.json" &&
	$PY -c "import json, sys; f = json.load(open(sys.argv[1]));
assert f[\"kernelci\"][\"total\"] == 1426 and f[\"lkft\"][\"total\"] == 612, f;
sys.exit(0 if f[\"kernelci\"][\"accepted\"] >= $KERNELCI_MIN and f[\"lkft\"][\"accepted\"] >= $LKFT_MIN else 1)" \
		"$TMP/figures.json"
'

test_expect_success 'a duplicate key is a warning naming both lines; --strict refuses it' '
	f=$REAL/kernelci/0006_baseline_-_-_grub.yaml &&
	labctl check "$f" >"$TMP/check.out" &&
	grep -q "^$f: ok$" "$TMP/check.out" &&
	grep -q "^$f:67: warning: duplicate key .os. (also at line 66): the value of line 67 is used" "$TMP/check.out" &&
	grep -q "^$f:[0-9]*: note: actions\[0\]\.deploy\.kernel: .image_arg. ignored" "$TMP/check.out" &&
	test_expect_code 1 labctl check --strict "$f" >"$TMP/strict.out" &&
	grep -q "warning: duplicate key .os." "$TMP/strict.out" &&
	! grep -q "^$f: ok$" "$TMP/strict.out"
'

test_done
