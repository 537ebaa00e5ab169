#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1010-bootloaders-sim.sh -- the bootloader engine on simulated boards: barebox
# and depthcharge boots and their failures (a missing file is the lab's fault,
# an unknown command the job's), LAVA's `bootloader` method stopping at the
# U-Boot prompt, expect_shell: false, and a U-Boot command set whose missing
# comma libconfig turned into one command: check-config warns, the job fails.
. "$(dirname "$0")/lib.sh"

ART=$TOP/contrib/lab/artifacts
sim_start 4 --tftp-root "$LAB/state/tftp"
write_lab_conf
sim_device sim-uboot-01 0
sim_device sim-barebox-01 1 sim-barebox
sim_device sim-dc-01 2 sim-depthcharge
sim_ctl firmware sim1 barebox >/dev/null
sim_ctl firmware sim2 depthcharge >/dev/null

# boot_job FILE TYPE METHOD [BOOT KEYS...]: deploy to TFTP, boot, one interactive test.
boot_job() {
	local file=$1 type=$2 method=$3 extra=
	shift 3
	for k in "$@"; do
		extra="$extra
    $k"
	done
	write_job "$file" <<JOB
job_name: $method boot
device_type: $type
timeouts: {job: {minutes: 2}, action: {seconds: 60}, connection: {seconds: 20}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image', type: zimage}
    ramdisk: {url: 'file://$ART/initrd.cpio.gz'}
    dtb: {url: 'file://$ART/sim.dtb'}
- boot:
    method: $method$extra
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - command: cat /proc/cmdline
        name: cmdline
        successes: [{message: 'root=/dev/ram0'}]
JOB
}

powered_off() {
	sim_ctl status "sim$1" | grep -q 'power=off'
}

test_expect_success 'barebox: interrupt, bootm from /mnt/tftp, kernel, shell' '
	boot_job "$TMP/bb.yaml" sim-barebox barebox "commands: ramdisk" &&
	run_job "$TMP/bb.yaml" 0 &&
	grep -q "smoke.cmdline: pass" "$TMP/run.out" &&
	id=$(job_id "$TMP/run.out") &&
	console=$LAB/state/jobs/$id/console.log &&
	grep -q "Hit m for menu or any other key to stop autoboot" "$console" &&
	grep -q "barebox@Simulated ARM Board:/ bootm -v -r /mnt/tftp/$id/initrd.cpio.gz -o /mnt/tftp/$id/sim.dtb /mnt/tftp/$id/Image" "$console" &&
	grep -q "Starting kernel at" "$console" &&
	powered_off 1
'

test_expect_success 'barebox: a file missing on TFTP is an infrastructure error' '
	boot_job "$TMP/bb-missing.yaml" sim-barebox barebox \
		"commands: [\"bootm -v /mnt/tftp/{KERNEL}.missing\"]" &&
	run_job "$TMP/bb-missing.yaml" 2 &&
	grep -q "incomplete (infrastructure): barebox error after bootm -v /mnt/tftp/[0-9]*/Image.missing: could not open /mnt/tftp/[0-9]*/Image.missing: No such file or directory" "$TMP/run.out" &&
	powered_off 1
'

test_expect_success 'barebox: an unknown command is a job error' '
	boot_job "$TMP/bb-bad.yaml" sim-barebox barebox "commands: [\"dhcp\", \"tftpboot {KERNEL}\"]" &&
	run_job "$TMP/bb-bad.yaml" 2 &&
	grep -q "incomplete (job): barebox error after tftpboot [0-9]*/Image: Unknown command .tftpboot. - try .help." "$TMP/run.out"
'

test_expect_success 'depthcharge: no interrupt, tftpboot with the command line file' '
	boot_job "$TMP/dc.yaml" sim-depthcharge depthcharge &&
	run_job "$TMP/dc.yaml" 0 &&
	grep -q "smoke.cmdline: pass" "$TMP/run.out" &&
	id=$(job_id "$TMP/run.out") &&
	grep -qx "console=ttyAMA0,115200 root=/dev/ram0 *" "$LAB/state/tftp/$id/cmdline" &&
	console=$LAB/state/jobs/$id/console.log &&
	grep -q "dpch: tftpboot 10.0.2.2 $id/Image $id/cmdline $id/initrd.cpio.gz" "$console" &&
	grep -q "Kernel command line: console=ttyAMA0,115200 root=/dev/ram0 .*tftpserverip=10.0.2.2" "$console" &&
	powered_off 2
'

test_expect_success 'depthcharge: a failed download is an infrastructure error, board off' '
	boot_job "$TMP/dc-missing.yaml" sim-depthcharge depthcharge \
		"commands: [\"tftpboot {SERVER_IP} {KERNEL}.missing {CMDLINE}\"]" &&
	run_job "$TMP/dc-missing.yaml" 2 &&
	grep -q "incomplete (infrastructure): depthcharge error after tftpboot 10.0.2.2 [0-9]*/Image.missing [0-9]*/cmdline: Tftp failed." "$TMP/run.out" &&
	powered_off 2
'

test_expect_success 'depthcharge: a bad command is a job error' '
	boot_job "$TMP/dc-bad.yaml" sim-depthcharge depthcharge "commands: [\"tftp {KERNEL}\"]" &&
	run_job "$TMP/dc-bad.yaml" 2 &&
	grep -q "incomplete (job): depthcharge error after tftp [0-9]*/Image: Unknown command .tftp. - try .help." "$TMP/run.out"
'

test_expect_success 'the job timeout of bootloader-commands bounds the commands stage' '
	boot_job "$TMP/stage.yaml" sim-uboot u-boot "commands: ramdisk" &&
	sed -i "s/^timeouts: {job: {minutes: 2}, /timeouts: {actions: {bootloader-commands: {seconds: 1}}, job: {minutes: 2}, /" \
		"$TMP/stage.yaml" &&
	sim_ctl mode sim0 slow >/dev/null &&
	run_job "$TMP/stage.yaml" 2 &&
	sim_ctl mode sim0 normal >/dev/null &&
	{ grep -q "incomplete (infrastructure): u-boot: the job.s bootloader-commands timeout ran out after .tftp 0x4000[0-9]*000 [0-9]*/Image." "$TMP/run.out" || { tail -5 "$TMP/run.out"; false; }; } &&
	powered_off 0
'

test_expect_success 'method bootloader: stop at the U-Boot prompt, then test U-Boot itself' '
	write_job "$TMP/bl.yaml" <<JOB &&
job_name: bootloader interactive
device_type: sim-uboot
timeouts: {job: {minutes: 2}, connection: {seconds: 20}}
actions:
- boot:
    method: bootloader
    bootloader: u-boot
    commands: [printenv bootdelay]
    prompts: ["=>"]
- test:
    interactive:
    - name: uboot
      prompts: ["=> "]
      script:
      - command: version
        name: version
        successes: [{message: "U-Boot 2023.01"}]
JOB
	run_job "$TMP/bl.yaml" 0 &&
	grep -q "uboot.version: pass" "$TMP/run.out" &&
	! grep -q "Starting kernel" "$LAB/state/jobs/$(job_id "$TMP/run.out")/console.log" &&
	powered_off 0
'

test_expect_success 'expect_shell: false ends the boot when the kernel starts' '
	write_job "$TMP/noshell.yaml" <<JOB &&
job_name: no shell
device_type: sim-uboot
timeouts: {job: {minutes: 2}, connection: {seconds: 20}}
actions:
- deploy:
    to: tftp
    kernel: {url: "file://$ART/Image", type: image}
    ramdisk: {url: "file://$ART/initrd.cpio.gz"}
    dtb: {url: "file://$ART/sim.dtb"}
- boot:
    method: u-boot
    commands: ramdisk
    expect_shell: false
JOB
	run_job "$TMP/noshell.yaml" 0 &&
	grep -q "phase L[0-9]* kernel-start at" "$TMP/run.out" &&
	! grep -q "phase L[0-9]* shell at" "$TMP/run.out"
'

test_expect_success 'a missing comma in a command list: check-config warns with the line' '
	cat >"$LAB/devices/20-comma.conf" <<CONF &&
device_type = {
	name = "sim-comma";
	extends = "sim-uboot";
	u-boot = {
		commands = {
			ramdisk = (
				"dhcp"
				"setenv serverip {SERVER_IP}",
				"tftp {KERNEL_ADDR} {KERNEL}",
				"{BOOTX}"
			);
		};
	};
};
CONF
	"$LABD" check-config -c "$LAB/labd.conf" >"$TMP/check.out" 2>&1 &&
	grep -q "^warning: $LAB/devices/20-comma.conf:8: u-boot command set .ramdisk.: .dhcpsetenv serverip {SERVER_IP}. is two strings the config parser joined (from line 7): is a comma missing between them?" "$TMP/check.out"
'

test_expect_success 'the joined command fails the job: U-Boot does not know it' '
	sim_device sim-comma-01 0 sim-comma &&
	boot_job "$TMP/comma.yaml" sim-comma u-boot &&
	run_job "$TMP/comma.yaml" 2 &&
	grep -q "incomplete (job): u-boot error after dhcpsetenv serverip 10.0.2.2: Unknown command .dhcpsetenv. - try .help." "$TMP/run.out" &&
	powered_off 0
'

# A board whose power-on command returns after U-Boot's 2 s autoboot countdown
# (a PDU that answers after the cycle, or a loaded lab host): the interrupt is
# sent when the prompt appears, not when the command ends.
cat >"$LAB/power-on-slow.sh" <<SH
"$SIMBOARD" ctl "$LAB/sim" power sim3 on || exit 1
sleep 4
SH
echo "device_type = { name = \"sim-slowpower\"; extends = \"sim-uboot\"; };" \
	>"$LAB/devices/30-slowpower-type.conf"
cat >"$LAB/devices/30-nostop-type.conf" <<CONF
device_type = {
	name = "sim-nostop";
	extends = "sim-uboot";
	u-boot = { interrupt_prompt = "Press Ctrl-C to stop autoboot"; };
};
CONF
cat >"$LAB/devices/31-slowpower.conf" <<CONF
device = {
	name = "sim-slowpower-01";
	type = "sim-slowpower";
	console = { driver = "pty"; path = "$LAB/sim/sim3.pty"; };
	power = { driver = "command"; on = "sh $LAB/power-on-slow.sh";
		  off = "$SIMBOARD ctl $LAB/sim power sim3 off"; timeout = 30; };
};
CONF

test_expect_success 'a power-on command slower than the autoboot countdown: interrupted all the same' '
	boot_job "$TMP/slowpower.yaml" sim-slowpower u-boot "commands: ramdisk" &&
	run_job "$TMP/slowpower.yaml" 0 &&
	grep -q "smoke.cmdline: pass" "$TMP/run.out" &&
	grep -q "phase L[0-9]* bootloader-prompt at" "$TMP/run.out" &&
	powered_off 3
'

test_expect_success 'autoboot not interrupted (wrong interrupt prompt): fails at the kernel start' '
	rm "$LAB/devices/31-slowpower.conf" &&
	sim_device sim-nostop-01 3 sim-nostop &&
	boot_job "$TMP/nostop.yaml" sim-nostop u-boot "commands: ramdisk" &&
	t0=$(date +%s) &&
	run_job "$TMP/nostop.yaml" 2 &&
	grep -q "incomplete (infrastructure): the board booted past its bootloader: autoboot was not interrupted" "$TMP/run.out" &&
	[ $(( $(date +%s) - t0 )) -lt 20 ] &&
	powered_off 3
'

# A firmware that announces itself before it reads keys (OVMF): the type waits
# interrupt_delay between the interrupt prompt and its keys.  U-Boot counts
# 2 s down: 1 s later still interrupts it.
cat >"$LAB/devices/32-delayed-type.conf" <<CONF
device_type = {
	name = "sim-delayed";
	extends = "sim-uboot";
	u-boot = { interrupt_delay = 1; };
};
CONF

test_expect_success 'interrupt_delay: the keys go that long after the interrupt prompt' '
	rm "$LAB/devices/10-sim-nostop-01.conf" &&
	sim_device sim-delayed-01 3 sim-delayed &&
	boot_job "$TMP/delayed.yaml" sim-delayed u-boot "commands: ramdisk" &&
	run_job "$TMP/delayed.yaml" 0 &&
	grep -q "smoke.cmdline: pass" "$TMP/run.out" &&
	stamp="\([0-9][0-9T:.-]*Z\)" &&
	seen=$(sed -n "s/^[^0-9]*$stamp info .*u-boot: autoboot prompt seen, interrupting in 1 s$/\1/p" "$TMP/run.out") &&
	sent=$(sed -n "/interrupting in 1 s/,\$ s/^[^0-9]*$stamp input .*/\1/p" "$TMP/run.out" | head -1) &&
	echo "prompt $seen, keys $sent" &&
	[ -n "$seen" ] && [ -n "$sent" ] &&
	$PY -c "import datetime, sys
t = [datetime.datetime.fromisoformat(a.replace(\"Z\", \"+00:00\")) for a in sys.argv[1:]]
sys.exit((t[1] - t[0]).total_seconds() < 1.0)" "$seen" "$sent" &&
	powered_off 3
'

test_done
