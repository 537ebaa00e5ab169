#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t3500-lab-ser2net-pdudaemon.sh -- a whole job on a board whose console is
# exported by the real ser2net (telnet, RFC 2217) and whose power goes through
# the real pdudaemon (localcmdline driver calling the simulated board), both on
# loopback, as in a LAVA lab.
. "$(dirname "$0")/lib.sh"

SER2NET=/usr/sbin/ser2net
PDUDAEMON=/usr/sbin/pdudaemon
if [ ! -x "$SER2NET" ] || [ ! -x "$PDUDAEMON" ] ||
   ! $PY -c 'import aiohttp, pdudaemon' 2>/dev/null; then
	test_skip 'job through ser2net and pdudaemon' 'ser2net or pdudaemon is not installed (make deps installs them)'
	test_done
	exit 0
fi

ART=$TOP/contrib/lab/artifacts
sim_start 1
write_lab_conf
TELNET_PORT=$(free_port)
PDU_PORT=$(free_port)

cat >"$LAB/ser2net.yaml" <<CONF
%YAML 1.1
---
connection: &sim0
  accepter: telnet(rfc2217),tcp,127.0.0.1,$TELNET_PORT
  connector: serialdev,$LAB/sim/sim0.pty,115200n81,local
  options:
    max-connections: 2
    kickolduser: true
CONF
"$SER2NET" -n -u -c "$LAB/ser2net.yaml" -P "$LAB/ser2net.pid" >"$LAB/ser2net.log" 2>&1 &
at_exit "kill $!"

# pdudaemon's localcmdline substitutes the outlet for a single %s
cat >"$LAB/outlet.sh" <<SH
#!/bin/sh
"$SIMBOARD" ctl "$LAB/sim" power "sim\$1" "\$2" && echo "\$1 \$2" >>"$LAB/outlets"
SH
chmod +x "$LAB/outlet.sh"
cat >"$LAB/pdudaemon.conf" <<CONF
{
  "daemon": {"hostname": "127.0.0.1", "port": $PDU_PORT, "logging_level": "INFO", "listener": "http"},
  "pdus": {
    "pdu01": {"driver": "localcmdline",
              "cmd_on": "$LAB/outlet.sh %s on",
              "cmd_off": "$LAB/outlet.sh %s off"}
  }
}
CONF
"$PDUDAEMON" --conf "$LAB/pdudaemon.conf" --logfile "$LAB/pdudaemon.log" >"$LAB/pdudaemon.out" 2>&1 &
at_exit "kill $!"

cat >>"$LAB/devices/10-boards.conf" <<CONF
device = {
	name = "rack1-board0";
	type = "sim-uboot";
	tags = [ "sim" ];
	console = { driver = "telnet"; host = "127.0.0.1"; port = $TELNET_PORT; rfc2217 = true; baud = 115200; };
	power = { driver = "pdudaemon"; url = "http://127.0.0.1:$PDU_PORT"; hostname = "pdu01"; port = 0; delay = 1; timeout = 30; };
};
CONF

wait_for "(exec 3<>/dev/tcp/127.0.0.1/$TELNET_PORT)" 20
wait_for "(exec 3<>/dev/tcp/127.0.0.1/$PDU_PORT)" 30

write_job "$TMP/job.yaml" <<JOB
job_name: ser2net and pdudaemon
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image'}
    ramdisk: {url: 'file://$ART/initrd.cpio.gz'}
    dtb: {url: 'file://$ART/sim.dtb'}
- boot:
    method: u-boot
    commands: ramdisk
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - {command: 'echo \$((6*7))-marker', name: arithmetic, successes: [{message: '42-marker'}]}
JOB

test_expect_success 'check-config accepts the telnet console and pdudaemon power' '
	"$LABD" check-config -c "$LAB/labd.conf"
'

test_expect_success 'a job boots through ser2net and pdudaemon and completes' '
	run_job "$TMP/job.yaml" 0 &&
	grep -q "smoke.arithmetic: pass" "$TMP/run.out" &&
	grep -q "Hit any key to stop autoboot" "$TMP/run.out"
'

test_expect_success 'pdudaemon power-cycled the outlet and powered it off at the end' '
	cat "$LAB/outlets" &&
	[ "$(tail -n1 "$LAB/outlets")" = "0 off" ] &&
	grep -q "0 on" "$LAB/outlets" &&
	sim_ctl status sim0 | grep -q power=off
'

test_expect_success 'the console was owned through telnet before the power-on (banner logged)' '
	grep -q "U-Boot 2023.01-sim" "$LAB/state/jobs/1/console.log"
'

test_done
