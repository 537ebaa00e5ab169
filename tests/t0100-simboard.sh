#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t0100-simboard.sh -- the simulated board on its own: U-Boot, kernel, login and
# shell on a pty, every misbehaviour mode, unplug/plug, baud pacing, the control
# socket and "simboard ctl".  The slow cases run in the background meanwhile.
. "$(dirname "$0")/lib.sh"

EXPECT="$PY $TOP/tests/sim/expect.py"
DIR=$LAB/sim
export SIMBOARD SIMDIR=$DIR

# drive BOARD STEP...: expect.py on DIR/BOARD.pty, logging to $TMP/BOARD.log.  An
# expect step waits up to 30 s: 28 boards talk at once, on a machine maybe loaded.
drive() {
	local board=$1; shift
	$EXPECT --timeout 30 --log "$TMP/$board.log" "$SIMDIR/$board.pty" "$@"
}

# bg NAME CMD...: run CMD in the background; bg_ok NAME waits and checks it.
bg() {
	local name=$1; shift
	( "$@"; echo $? >"$TMP/bg-$name.rc" ) >"$TMP/bg-$name.out" 2>&1 &
}

bg_ok() {
	wait_for "[ -s '$TMP/bg-$1.rc' ]" 60 || { echo "$1 did not finish"; return 1; }
	cat "$TMP/bg-$1.out"
	[ "$(cat "$TMP/bg-$1.rc")" = 0 ]
}

# a_mode BOARD MODE STEP...: power BOARD on in MODE, then the steps.
a_mode() {
	local board=$1 mode=$2; shift 2
	sim_ctl mode "$board" "$mode" >/dev/null &&
	SIMDIR=$DIR drive "$board" "ctl:power $board on" "$@"
}

sim_start 20

test_expect_success 'simboard publishes ptys, a control socket and its pid' '
	[ "$(cat "$DIR/simboard.pid")" = "$SIM_PID" ] &&
	[ -S "$DIR/ctl.sock" ] &&
	for i in 0 7 19; do
		case $(readlink "$DIR/sim$i.pty") in /dev/pts/*) ;; *) exit 1 ;; esac
	done
'

test_expect_success 'a new board is off and silent' '
	[ "$(sim_ctl status sim0)" = "ok power=off mode=normal plugged=yes stage=off boots=0 firmware=u-boot" ] &&
	drive sim0 "send:\r" "absent:0.5:."
'

test_expect_success 'simboard ctl exit codes: ok 0, err 1, no socket 2' '
	sim_ctl mode sim19 normal >/dev/null &&
	test_expect_code 1 sim_ctl status nosuch &&
	test_expect_code 1 sim_ctl frobnicate sim0 &&
	test_expect_code 1 sim_ctl mode sim0 bogus &&
	test_expect_code 2 "$SIMBOARD" ctl "$TMP/nowhere" status sim0 &&
	[ "$(sim_ctl status nosuch)" = "err unknown board '"'"'nosuch'"'"'" ]
'

# The slow scenarios, each on its own board, run while the main one goes on.
bg hang-uboot a_mode sim1 hang-uboot "expect:Net:   eth0: ethernet@fe300000\r\n" \
	"send: \r" "absent:2.5:Hit any key|=> "
bg no-autoboot a_mode sim2 no-autoboot "expect:U-Boot 2023" "expect~20:Starting kernel" \
	"expect~20:sim login: " "notseen:Hit any key|=> "
bg uboot-error a_mode sim3 uboot-error \
	"expect~20:TFTP error: 'File not found' \(1\)\r\nNot retrying\.\.\.\r\n" \
	"expect~20:Bad Linux ARM64 Image magic!\r\n=> "
bg panic a_mode sim4 panic "expect~20:Booting Linux" \
	"expect~20:Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block\(0,0\)" \
	"expect:Call trace:" "expect:---\[ end Kernel panic - not syncing: VFS: .* \]---\r\n" \
	"send:\r" "absent:1.5:."
bg oops a_mode sim5 oops "expect~20:Unable to handle kernel NULL pointer dereference" \
	"expect:Internal error: Oops: 96000045 \[#1\] SMP" "expect:Call trace:" \
	"expect:---\[ end trace 0000000000000000 \]---" "expect~20:sim login: "
bg hang-kernel a_mode sim6 hang-kernel "expect~20:Booting Linux" "expect~20:Kernel command line" \
	"absent:4:login: "
# Times run from a mark before what starts them: a reader that is late (a loaded
# machine) sees the text later, never earlier, so the lower bounds hold.
bg slow drive sim7 "ctl:mode sim7 slow" mark "ctl:power sim7 on" \
	"expect~10:Hit any key to stop autoboot:  2 " "expect~15:\x08\x08\x08 1 " "elapsed:5:15" \
	"ctl:power sim7 off"
bg garbage a_mode sim8 garbage "expect~25:sim login: " "garbage:30" "send:root\r" \
	"expect:root@sim:~# "
bg login-fail a_mode sim9 login-fail "expect~25:sim login: " "send:root\r" \
	"expect:\r\nLogin incorrect\r\nsim login: "
bg reset-loop a_mode sim10 reset-loop "expect~20:Booting Linux" "expect~20:U-Boot 2023" \
	"expect~20:Booting Linux" "expect~20:U-Boot 2023"
bg no-uboot a_mode sim11 no-uboot "expect~10:\[    0\.000000\] Booting Linux" \
	"notseen:U-Boot" "expect~10:sim login: " "send:root\r" "expect:root@sim:~# "
for i in $(seq 12 19); do
	bg many$i drive sim$i "ctl:power sim$i on" "expect~30:sim login: " \
		"send:root\n" "expect:root@sim:~# " "send:poweroff\n" "expect:reboot: Power down"
done

# The key goes in during the banner, as a held key: a reader that is late under
# load could miss the 2 s countdown (it is stopped at once all the same).
test_expect_success 'power on: U-Boot banner, countdown, any key stops autoboot' '
	drive sim0 "ctl:power sim0 on" "expect:\r\n\r\nU-Boot 2023\.01-sim \(" \
		"expect:DRAM:  1 GiB\r\n" "send:x" "expect:Net:   eth0: ethernet@fe300000\r\n" \
		"expect:Hit any key to stop autoboot:  2 " "expect:\r\n=> $" &&
	sim_ctl status sim0 | grep -q "power=on .* stage=uboot boots=1"
'

test_expect_success 'U-Boot: setenv with quotes and ;, printenv, unknown commands' '
	drive sim0 "send:setenv foo '"'"'a b;c'"'"'; setenv n 1\r" "expect:=> $" \
		"send:printenv foo n kernel_addr_r\r" \
		"expect:foo=a b;c\r\nn=1\r\nkernel_addr_r=0x40400000\r\n=> $" \
		"send:printenv nosuch\r" "expect:## Error: \"nosuch\" not defined\r\n=> $" \
		"send:echo \${fdt_addr_r} \${n}\r" "expect:0x40000000 1\r\n=> $" \
		"send:frob\r" "expect:Unknown command '"'"'frob'"'"' - try '"'"'help'"'"'\r\n=> $" \
		"send:setenv x 1\x7f2\r" "send:printenv x\r" "expect:x=2\r\n=> $"
'

test_expect_success 'U-Boot: dhcp, tftp, then booti starts the kernel' '
	drive sim0 "send:dhcp\r" "expect:DHCP client bound to address 10\.0\.2\.15 \(\d+ ms\)\r\n=> $" \
		"send:tftp \${kernel_addr_r} Image\r" \
		"expect:TFTP from server 10\.0\.2\.2; our IP address is 10\.0\.2\.15\r\nFilename '"'"'Image'"'"'\.\r\nLoad address: 0x40400000\r\nLoading: #+" \
		"expect:done\r\nBytes transferred = \d+ \([0-9a-f]+ hex\)\r\n=> $" \
		"send:tftp \${ramdisk_addr_r} rootfs.cpio.gz; setenv rd_size \${filesize}\r" "expect:=> $" \
		"send:tftp \${fdt_addr_r} sim.dtb\r" "expect:Bytes transferred.*=> $" \
		"send:setenv bootargs '"'"'console=ttyAMA0,115200 root=/dev/ram0 simtest=1'"'"'\r" \
		"send:booti \${kernel_addr_r} \${ramdisk_addr_r}:\${rd_size} \${fdt_addr_r}\r" \
		"expect:## Flattened Device Tree blob at 40000000" "expect:Loading Ramdisk to" \
		"expect:\r\nStarting kernel \.\.\.\r\n" \
		"expect:\[    0\.000000\] Booting Linux on physical CPU 0x0000000000 \[0x411fd070\]\r\n" \
		"expect:\[    0\.000000\] Linux version 6\.1\.0-sim " \
		"expect:Kernel command line: console=ttyAMA0,115200 root=/dev/ram0 simtest=1\r\n" \
		"expect:\] Freeing unused kernel memory" "expect:\] Run /init as init process" \
		"expect:\r\nDebian GNU/Linux 12 sim ttyAMA0\r\n\r\nsim login: $"
'

test_expect_success 'the kernel log has about 200 lines with growing timestamps' '
	$PY - "$TMP/sim0.log" <<-\EOF
	import re, sys
	log = open(sys.argv[1], "rb").read()
	log = log[log.index(b"Starting kernel"):log.index(b"sim login:")]
	ts = [float(t) for t in re.findall(rb"^\[ *(\d+\.\d{6})\] ", log, re.M)]
	lines = log.count(b"\r\n")
	assert 170 <= lines <= 260, lines
	assert ts == sorted(ts) and ts[-1] > 0.5, ts[-5:]
	EOF
'

test_expect_success 'login, then shell commands with status, quotes and variables' '
	drive sim0 "send:root\r" "expect:root@sim:~# $" \
		"send:echo hello; uname -r\r" "expect:hello\r\n6\.1\.0-sim\r\nroot@sim:~# $" \
		"send:false; echo rc=\$?; true && echo and || echo or\r" "expect:rc=1\r\nand\r\n" \
		"send:export V=\"a b\"; W=2; echo \"\$V\" '"'"'\$V'"'"' \${W}x \$((W*21))\r" \
		"expect:a b \\\$V 2x 42\r\n" \
		"send:nosuch; echo \$?\r" "expect:-sh: nosuch: not found\r\n127\r\n" \
		"send:uname -a; cat /proc/cmdline\r" \
		"expect:Linux sim 6\.1\.0-sim #1 SMP .* aarch64 GNU/Linux\r\n.*simtest=1\r\n" \
		"send:export PS1=\"sim> \"\r" "expect:\r\nsim> $" \
		"send:sleep 10\r" "sleep:0.3" "send:\x03" "expect:\^C\r\nsim> $"
'

test_expect_success 'shell: ktap, lava signals, oops and warn' '
	drive sim0 "send:ktap\r" "expect:\] KTAP version 1\r\n" "expect:\]     # Subtest: sim-list" \
		"expect:\]     not ok 3 sim_strncmp_overflow" "expect:\] not ok 2 sim-string\r\n" \
		"send:lava-test-case t1 --result pass\r" \
		"expect:<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=t1 RESULT=pass>\r\n" \
		"send:lava-test-case t2 --result fail --measurement 3.5 --units s\r" \
		"expect:<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=t2 RESULT=fail MEASUREMENT=3\.5 UNITS=s>" \
		"send:lava-test-set start s1; lava-test-set stop\r" \
		"expect:<LAVA_SIGNAL_TESTSET START s1>\r\n<LAVA_SIGNAL_TESTSET STOP>\r\n" \
		"send:oops\r" "expect:\] Internal error: Oops: 96000045 \[#1\] SMP" \
		"expect:\] ---\[ end trace 0000000000000000 \]---\r\n" \
		"send:warn\r" "expect:\] ------------\[ cut here \]------------\r\n" \
		"expect:\] WARNING: CPU: 0 PID: 1 at drivers/foo\.c:42 foo_probe\+0x10/0x20\r\n" \
		"expect:Tainted: G      D" "expect:\] ---\[ end trace" "expect:sim> $" \
		"send:dmesg\r" "expect:Booting Linux.*cut here.*sim> $"
'

test_expect_success 'shell: reboot goes back to U-Boot' '
	drive sim0 "send:reboot\r" "expect:\] reboot: Restarting system\r\n" \
		"expect:U-Boot 2023\.01-sim" "expect:Hit any key" "send:\r" "expect:=> $" &&
	sim_ctl status sim0 | grep -q "stage=uboot boots=2" &&
	sim_ctl power sim0 off >/dev/null &&
	[ "$(sim_ctl status sim0)" = "ok power=off mode=normal plugged=yes stage=off boots=2 firmware=u-boot" ]
'

for m in hang-uboot no-autoboot uboot-error panic oops hang-kernel slow garbage login-fail \
	reset-loop no-uboot; do
	test_expect_success "mode $m shows its signature" "bg_ok $m"
done

test_expect_success 'reset-loop keeps resetting' '
	[ "$(sim_ctl status sim10 | sed -n "s/.*boots=\([0-9]*\).*/\1/p")" -ge 3 ]
'

test_expect_success '8 boards in one process each boot to login and power down' '
	for i in $(seq 12 19); do bg_ok many$i || exit 1; done &&
	for i in $(seq 12 19); do
		wait_for "sim_ctl status sim$i | grep -q power=off" 5 || exit 1
	done
'

# sim18 is free again (the background boots above used it): count what one boot sends.
test_expect_success 'sent: the bytes a console reader got, per board and for all' '
	before=$(sim_ctl sent sim18 | cut -d" " -f2) &&
	{ cat "$DIR/sim18.pty" >"$TMP/sim18.out" & } &&
	sim_ctl mode sim18 no-uboot >/dev/null && sleep 0.2 &&
	sim_ctl power sim18 on >/dev/null &&
	wait_for "sim_ctl status sim18 | grep -q stage=login" 30 &&
	sim_ctl power sim18 off >/dev/null &&
	sent=$(( $(sim_ctl sent sim18 | cut -d" " -f2) - before )) && [ "$sent" -gt 10000 ] &&
	wait_for "[ \$(stat -c %s $TMP/sim18.out) = $sent ]" 10 &&
	kill %1 && all=$(sim_ctl sent all | cut -d" " -f2) && [ "$all" -ge $((before + sent)) ] &&
	test_expect_code 1 sim_ctl sent nosuch
'

# Another process: unpaced, powered at start, with its own user and prompt.
C=$TMP/c
"$SIMBOARD" --dir "$C" --name c --baud 0 --powered --mode no-uboot --user admin \
	--password secret --hostname board7 --prompt "PROMPT> " >"$TMP/c.log" 2>&1 &
C_PID=$!
at_exit "kill $C_PID"

test_expect_success '--powered, --baud 0, --user/--password/--hostname/--prompt' '
	wait_for "[ -S $C/ctl.sock ]" 10 &&
	SIMDIR=$C drive c0 "expect~5:Debian GNU/Linux 12 board7 ttyAMA0\r\n\r\nboard7 login: $" \
		"send:admin\r" "expect:Password: $" "send:wrong\r" "expect:\r\nLogin incorrect\r\n" \
		"send:admin\r" "expect:Password: $" "send:secret\r" "expect:PROMPT> $" \
		"notseen:secret" "send:spew 3000\r" "expect:PROMPT> $" "garbage:1000" \
		"send:whoami; hostname\r" "expect:admin\r\nboard7\r\n"
'

test_expect_success 'unplug: the console hangs up; plug: a new pty, the board went on' '
	old=$(readlink "$C/c0.pty") &&
	SIMDIR=$C drive c0 "ctl:unplug c0" hup "ctl:plug c0" reopen "send:echo back\r" \
		"expect:back\r\nPROMPT> $" &&
	[ "$(readlink "$C/c0.pty")" != "$old" ] &&
	"$SIMBOARD" ctl "$C" status c0 | grep -q "plugged=yes stage=shell"
'

test_expect_success 'SIGTERM: simboard exits and removes its files' '
	kill -TERM $C_PID && wait_for "! kill -0 $C_PID" 5 &&
	[ ! -e "$C/c0.pty" ] && [ ! -e "$C/ctl.sock" ] && [ ! -e "$C/simboard.pid" ]
'

# And one paced at 9600 baud.
B=$TMP/b
"$SIMBOARD" --dir "$B" --count 2 --name b --baud 9600 --mode no-uboot >"$TMP/b.log" 2>&1 &
B_PID=$!
at_exit "kill $B_PID"
wait_for "[ -S $B/ctl.sock ]" 10
# b1 keeps the --baud 9600 of the command line: ~2 KiB of early kernel log take 2 s.
SIMDIR=$B bg baud-cmdline drive b1 mark "ctl:power b1 on" "expect:Booting Linux on physical CPU" \
	"expect~15:Kernel command line: " "elapsed:1.5:12"

test_expect_success 'baud 9600: 2000 bytes take 2 s; baud 0 is fast' '
	SIMDIR=$B drive b0 "ctl:baud b0 0" "ctl:power b0 on" "expect~5:login: $" "send:root\r" \
		"expect:# $" "ctl:baud b0 9600" mark "send:spew 2000\r" "expect:spew 2000\r\n" \
		"expect~10:\r\nroot@sim:~# $" "elapsed:1.5:6" \
		"ctl:baud b0 0" mark "send:spew 2000\r" "expect:spew 2000\r\n" \
		"expect:\r\nroot@sim:~# $" "elapsed:0:1.4"
'

test_expect_success 'stream: numbered lines stamped with the real time, as fast as the baud' '
	SIMDIR=$B drive b0 "ctl:baud b0 115200" "send:stream 1\r" "expect:stream 1\r\n" "sleep:2" \
		"streamcheck:b0:200"
'

test_expect_success '--baud 9600 on the command line paces the kernel log' '
	bg_ok baud-cmdline
'

test_expect_success 'the quit command ends simboard' '
	[ "$("$SIMBOARD" ctl "$B" quit)" = ok ] && wait_for "! kill -0 $B_PID" 5 &&
	[ ! -e "$B/b0.pty" ] && [ ! -e "$B/ctl.sock" ]
'

test_done
