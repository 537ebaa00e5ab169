#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1100-bad-input.sh -- broken board definitions and broken job files are
# refused with "file:line: cause" messages, before any board is touched.
. "$(dirname "$0")/lib.sh"

sim_lab 1

test_expect_success 'check-config accepts the good lab' '
	"$LABD" check-config -c "$LAB/labd.conf" >"$TMP/out" &&
	grep -q "ok: 4 device types, 1 devices" "$TMP/out"
'

# A second lab with one broken board file next to a good one.
BAD=$TMP/bad
mkdir -p "$BAD/devices"
cp "$LAB/labd.conf" "$BAD/labd.conf"
cp "$LAB/devices/00-sim-types.conf" "$BAD/devices/"
cat >"$BAD/devices/20-broken.conf" <<'CONF'
devices = (
	{
		name = "b1";
		type = "no-such-type";
		console = { driver = "pty"; path = "/dev/null"; };
	},
	{
		name = "b2";
		type = "sim-uboot";
		console = { driver = "serial-over-pigeon"; };
	},
	{
		name = "b3";
		type = "sim-uboot";
		console = { driver = "pty"; path = "/dev/null"; baud = "fast"; };
		power = { driver = "command"; on = "true"; };
		colour = "blue";
	},
	{
		name = "b1";
		type = "sim-uboot";
		console = { driver = "pty"; path = "/dev/null"; };
	}
);
CONF

test_expect_success 'check-config reports every broken board with file:line: cause' '
	test_must_fail "$LABD" check-config -c "$BAD/labd.conf" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -q "20-broken.conf:4: .*unknown device type '\''no-such-type'\''" "$TMP/err" &&
	grep -q "20-broken.conf:10: .*unknown console driver '\''serial-over-pigeon'\''" "$TMP/err" &&
	grep -q "20-broken.conf:15: .*'\''baud'\'' must be an integer" "$TMP/err" &&
	grep -q "20-broken.conf:16: .*missing key '\''off'\''" "$TMP/err" &&
	grep -q "20-broken.conf:17: unknown key '\''colour'\''" "$TMP/err" &&
	grep -q "20-broken.conf:19: .*duplicate device '\''b1'\''" "$TMP/err"
'

test_expect_success 'labd refuses to start on a broken lab and says why' '
	test_must_fail "$LABD" -c "$BAD/labd.conf" --listen 127.0.0.1:0 2>"$TMP/err" &&
	grep -q "unknown device type" "$TMP/err"
'

test_expect_success 'a libconfig syntax error names the file and line' '
	printf "device = { name = \"x\"\n type = ;\n};\n" >"$BAD/devices/30-syntax.conf" &&
	test_must_fail "$LABD" check-config -c "$BAD/labd.conf" 2>"$TMP/err" &&
	grep -q "30-syntax.conf:[0-9]*: " "$TMP/err" &&
	rm "$BAD/devices/30-syntax.conf"
'

# libconfig's scanner exits the process on a NUL byte in an @include (found by
# fuzz-config): labd never hands it a file with one, and says where it is
test_expect_success 'a NUL byte in a board file: file:line, not an exit inside libconfig' '
	printf "device = { name = \"x\";\n@include \"\0\0../x\";\n};\n" >"$BAD/devices/31-nul.conf" &&
	test_must_fail "$LABD" check-config -c "$BAD/labd.conf" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -q "31-nul.conf:2: a NUL byte: not a text file" "$TMP/err" &&
	! grep -q "flex scanner" "$TMP/err" &&
	rm "$BAD/devices/31-nul.conf"
'

# The same in a file an included file includes: every file libconfig would
# read is checked first.  An @include naming a directory (as a NUL byte cuts
# any name short) also made libconfig exit: refused where it is written.
mkdir -p "$BAD/inc" "$LAB/inc"
printf '@include "../inc/outer.inc"\n' >"$BAD/devices/32-nested.conf"
printf '# a fragment\n@include "../inc/inner.inc"\n' >"$BAD/inc/outer.inc"
printf 'x = 1;\n@include "\0\0../x";\n' >"$BAD/inc/inner.inc"

test_expect_success 'a NUL byte in a nested include: the included file:line, not an exit' '
	test_must_fail "$LABD" check-config -c "$BAD/labd.conf" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -qx "$BAD/inc/inner.inc:2: a NUL byte: not a text file" "$TMP/err" &&
	! grep -q "flex scanner" "$TMP/err"
'

test_expect_success 'an @include of a directory: file:line, not an exit inside libconfig' '
	printf "# a fragment\n\n  @include \"\"\n" >"$BAD/inc/outer.inc" &&
	test_must_fail "$LABD" check-config -c "$BAD/labd.conf" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -qx "$BAD/inc/outer.inc:3: cannot include '\''$BAD/devices'\'': a directory" "$TMP/err" &&
	! grep -q "flex scanner" "$TMP/err"
'

# libconfig reads on past the end of an included file: an @include left open
# there takes its name's end from the including file ("" here, the directory)
test_expect_success 'an @include whose name runs to the end of the file is refused' '
	printf "# a fragment\n@include \"" >"$BAD/inc/outer.inc" &&
	printf "@include \"../inc/outer.inc\"\"\n" >"$BAD/devices/32-nested.conf" &&
	test_must_fail "$LABD" check-config -c "$BAD/labd.conf" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -qx "$BAD/inc/outer.inc:2: the name of this @include is never closed" "$TMP/err" &&
	! grep -q "flex scanner" "$TMP/err"
'
rm -f "$BAD/devices/32-nested.conf"

# A SIGHUP reload reads the files as check-config does: the running labd
# keeps its configuration and says why, then reloads once the file is fixed.
labd_start
test_expect_success 'SIGHUP with a NUL byte in a nested include: labd keeps running, says where' '
	cp "$BAD/inc/inner.inc" "$LAB/inc/inner.inc" &&
	printf "@include \"../inc/inner.inc\"\n" >"$LAB/inc/outer.inc" &&
	printf "@include \"../inc/outer.inc\"\n" >"$LAB/devices/90-nested.conf" &&
	kill -HUP $LABD_PID &&
	wait_for "grep -q \"reload failed: keeping the running configuration\" $LAB/labd.log" 20 &&
	grep -q "$LAB/inc/inner.inc:2: a NUL byte: not a text file" "$LAB/labd.log" &&
	! grep -q "flex scanner" "$LAB/labd.log" &&
	curl -sf "$LABD_URL/api/v1/devices/sim-01" >/dev/null &&
	rm "$LAB/devices/90-nested.conf" && kill -HUP $LABD_PID &&
	wait_for "grep -q \"reloaded: 1 boards\" $LAB/labd.log" 20
'
labd_stop
rm -f "$LAB/devices/90-nested.conf"

# A lab whose labd.conf and board files are reached through relative paths.
CC=$TMP/cc
mkdir -p "$CC/lab/devices" "$CC/lab/inc"
cp "$LAB/labd.conf" "$CC/lab/labd.conf"
sed "s|path = .*|path = \"/dev/null\"; };|" "$LAB/devices/10-sim-01.conf" >"$CC/lab/devices/10-b.conf"

test_expect_success 'check-config: a missing include named by its resolved path and cause, once' '
	echo "@include \"inc/missing.inc\"" >>"$CC/lab/labd.conf" &&
	(cd "$CC" && test_must_fail "$LABD" check-config -c lab/labd.conf 2>"$TMP/err") &&
	cat "$TMP/err" &&
	grep -qx "$CC/lab/labd.conf:[0-9]*: cannot open include file '\''$CC/lab/inc/missing.inc'\'': No such file or directory" "$TMP/err" &&
	grep -qx "labd: configuration '\''$CC/lab/labd.conf'\'' is not valid" "$TMP/err" &&
	[ $(wc -l <"$TMP/err") = 2 ] &&
	sed -i "/@include/d" "$CC/lab/labd.conf"
'

test_expect_success 'check-config: a syntax error names the full path and the cause, nothing that follows' '
	printf "device_types = (\n\t{ name = \"sim-uboot\"; boot_methods = [ \"minimal\" ]; }\n" \
		>"$CC/lab/devices/00-types.conf" &&
	(cd "$CC/lab/devices" && test_must_fail "$LABD" check-config -c ../labd.conf 2>"$TMP/err") &&
	cat "$TMP/err" &&
	grep -qx "$CC/lab/devices/00-types.conf:[0-9]*: syntax error: the '\''('\'' opened at line 1 is never closed" "$TMP/err" &&
	! grep -q "unknown device type" "$TMP/err" &&
	[ $(wc -l <"$TMP/err") = 2 ]
'

test_expect_success 'check-config: an included file with a syntax error by its full path' '
	printf "device_types = ( { name = \"t\" } );\n@include \"../inc/t.inc\"\n" \
		>"$CC/lab/devices/00-types.conf" &&
	printf "x = ;\n" >"$CC/lab/inc/t.inc" &&
	(cd "$CC" && test_must_fail "$LABD" check-config -c lab/labd.conf 2>"$TMP/err") &&
	cat "$TMP/err" &&
	grep -qx "$CC/lab/inc/t.inc:1: syntax error: a value is missing after '\''='\'' in '\''x = ;'\''" "$TMP/err"
'

# labd.conf names its store driver; an unknown one is refused where it is written.
STORE=$TMP/store
mkdir -p "$STORE"
cp -r "$LAB/devices" "$STORE/"
cp "$LAB/labd.conf" "$STORE/labd.conf"
printf 'store = { driver = "sqlite"; };\n' >>"$STORE/labd.conf"

test_expect_success 'check-config accepts store = { driver = "sqlite"; }' '
	"$LABD" check-config -c "$STORE/labd.conf" >"$TMP/out" &&
	grep -q "ok: " "$TMP/out"
'

test_expect_success 'an unknown store driver: file:line in check-config, and labd does not start' '
	sed -i "s|driver = \"sqlite\"|driver = \"oracle\"|" "$STORE/labd.conf" &&
	line=$(grep -n "^store = " "$STORE/labd.conf" | cut -d: -f1) &&
	test_must_fail "$LABD" check-config -c "$STORE/labd.conf" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -q "labd.conf:$line: unknown store driver '\''oracle'\'' (known: sqlite, postgresql)" "$TMP/err" &&
	test_must_fail "$LABD" -c "$STORE/labd.conf" --listen 127.0.0.1:0 2>"$TMP/err" &&
	grep -q "labd.conf:$line: unknown store driver '\''oracle'\''" "$TMP/err" &&
	[ ! -e "$STORE/state/labd.db" ]
'

for f in "$TOP"/tests/data/jobs/bad-*.yaml; do
	name=$(basename "$f")
	test_expect_success "job $name is refused with file:line causes, no board touched" '
		run_job "'"$f"'" 1 &&
		grep -q "'"$name"':[0-9][0-9]*: " "$TMP/run.out" &&
		sim_ctl status sim0 | grep -q "boots=0"
	'
done

test_expect_success 'a job for a type this lab does not have is refused' '
	sed "s/^device_type: .*/device_type: rpi4/" "$TOP/tests/data/jobs/good-uboot.yaml" >"$TMP/rpi.yaml" &&
	run_job "$TMP/rpi.yaml" 1 &&
	grep -q "unknown device type '\''rpi4'\''" "$TMP/run.out"
'

test_expect_success 'a job asking for tags no board has is refused' '
	write_job "$TMP/tags.yaml" <<JOB &&
job_name: tags
device_type: sim-uboot
tags: [sim, usb3]
timeouts: {job: {minutes: 1}}
actions:
- boot: {method: minimal, prompts: ["# "]}
JOB
	run_job "$TMP/tags.yaml" 1 &&
	grep -q "no board of type '\''sim-uboot'\'' with tags \[sim, usb3\]" "$TMP/run.out"
'

test_expect_success 'garbage bytes as a job file: an error, not a crash' '
	head -c 4096 /dev/urandom >"$TMP/garbage.yaml" &&
	run_job "$TMP/garbage.yaml" 1 &&
	grep -q "garbage.yaml" "$TMP/run.out"
'

test_expect_success 'run-job exits like labctl: 1 for a refused job, 3 for a file it cannot read' '
	run_job "$TMP/nosuch.yaml" 3 &&
	grep -q "cannot open .$TMP/nosuch.yaml.: No such file or directory" "$TMP/run.out"
'

test_done
