#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2500-daemon.sh -- labd as a daemon with three simulated boards: queue order
# and tag matching, cancel mid-boot, a console that vanishes and returns,
# infrastructure retries on another board, SIGHUP reload without touching a
# running job, recovery after SIGKILL, and every job ending with its board off.
. "$(dirname "$0")/lib.sh"

ART=$TOP/contrib/lab/artifacts
sim_start 3
write_lab_conf
sim_device sim-01 0 sim-uboot
sim_device sim-02 1 sim-uboot
sim_device sim-03 2 sim-uboot 'tags = [ "sim", "usb3" ];'
# sim_device writes tags = [ "sim" ] first; the extra line above would be a
# duplicate setting, so give sim-03 its tags by rewriting its file instead.
sed -i '/tags = \[ "sim", "usb3" \];/d; s/tags = \[ "sim" \];/tags = [ "sim", "usb3" ];/' \
	"$LAB/devices/10-sim-03.conf"
labd_start

api=$LABD_URL/api/v1
jq_py() { $PY -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
job_field() { curl -sf "$api/jobs/$1" | jq_py "d$2"; }
board_field() { curl -sf "$api/devices/$1" | jq_py "d$2"; }
sim_power() { sim_ctl status "$1" | sed -n 's/.*power=\([a-z]*\).*/\1/p'; }

# job FILE NAME [PRIORITY] [TAGS] [EXTRA ACTIONS]: a U-Boot boot with one test.
job() {
	write_job "$1" <<JOB
job_name: $2
device_type: sim-uboot
priority: ${3:-50}
tags: [${4:-sim}]
infrastructure_retries: ${6:-0}
timeouts: {job: {minutes: 3}, action: {seconds: 40}, connection: {seconds: ${5:-20}}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image'}
    ramdisk: {url: 'file://$ART/initrd.cpio.gz'}
- boot:
    method: u-boot
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - {command: 'sleep 1; echo done-$((6*7))', name: wait, successes: [{message: 'done-42'}]}
JOB
}

wait_job() { # wait_job ID HEALTH
	wait_for "[ \"\$(job_field $1 '[\"state\"]')\" = finished ]" ${3:-90} &&
	[ "$(job_field "$1" '["health"]')" = "$2" ] || { curl -s "$api/jobs/$1"; return 1; }
}

job "$TMP/a.yaml" "a"
job "$TMP/usb3.yaml" "usb3 only" 50 "sim, usb3"

test_expect_success 'jobs go to boards with their tags, run in parallel and complete' '
	id1=$(submit "$TMP/usb3.yaml") && id2=$(submit "$TMP/a.yaml") &&
	wait_job $id1 complete && wait_job $id2 complete &&
	[ "$(job_field $id1 "[\"device\"]")" = sim-03 ] &&
	[ "$(sim_power sim0)$(sim_power sim1)$(sim_power sim2)" = offoffoff ]
'

test_expect_success 'queue order: priority first, then submission time' '
	for b in sim-01 sim-02 sim-03; do labctl device set-state $b maintenance --reason queue-test >/dev/null; done &&
	job "$TMP/low.yaml" low 10 && job "$TMP/high.yaml" high 90 &&
	low=$(submit "$TMP/low.yaml") && high=$(submit "$TMP/high.yaml") &&
	[ "$(job_field $low "[\"state\"]")" = queued ] &&
	labctl device set-state sim-01 idle >/dev/null &&
	wait_for "[ \"\$(job_field $high \"[\\\"state\\\"]\")\" != queued ]" 10 &&
	[ "$(job_field $low "[\"state\"]")" = queued ] &&
	wait_job $high complete && wait_job $low complete &&
	labctl device set-state sim-02 idle >/dev/null && labctl device set-state sim-03 idle >/dev/null
'

test_expect_success 'cancel mid-boot: canceled, board powered off, free again' '
	sim_ctl mode all slow >/dev/null &&
	id=$(submit "$TMP/a.yaml") &&
	wait_for "grep -q \"Hit any key\" $LAB/state/jobs/$id/console.log" 30 &&
	labctl cancel $id >/dev/null &&
	wait_job $id canceled &&
	board=$(job_field $id "[\"device\"]") &&
	[ "$(board_field $board "[\"state\"]")" = idle ] &&
	[ "$(sim_power sim0)$(sim_power sim1)$(sim_power sim2)" = offoffoff ] &&
	sim_ctl mode all normal >/dev/null
'

test_expect_success 'a console that vanishes: infrastructure error, board bad until it returns' '
	for b in sim-02 sim-03; do labctl device set-state $b maintenance >/dev/null; done &&
	id=$(submit "$TMP/a.yaml") &&
	wait_for "grep -q \"Starting kernel\" $LAB/state/jobs/$id/console.log" 30 &&
	sim_ctl unplug sim0 >/dev/null &&
	wait_job $id incomplete &&
	[ "$(job_field $id "[\"error_type\"]")" = infrastructure ] &&
	job_field $id "[\"error_msg\"]" | grep -q "console vanished" &&
	[ "$(board_field sim-01 "[\"state\"]")" = bad ] &&
	sim_ctl plug sim0 >/dev/null &&
	wait_for "[ \"\$(board_field sim-01 \"[\\\"state\\\"]\")\" = idle ]" 10 &&
	[ "$(sim_power sim0)" = off ]
'

# The connection timeout ends the attempt on the hung board; it is also the
# retry's, whose kernel boot to login must fit in it on a loaded machine: 10 s.
test_expect_success 'infrastructure error retried on another board' '
	labctl device set-state sim-02 idle >/dev/null &&
	sim_ctl mode sim0 hang-uboot >/dev/null &&
	job "$TMP/retry.yaml" retry 50 sim 10 1 &&
	labctl device set-state sim-02 maintenance >/dev/null &&
	id=$(submit "$TMP/retry.yaml") &&
	wait_for "[ \"\$(job_field $id \"[\\\"attempt\\\"]\")\" = 2 ]" 60 &&
	labctl device set-state sim-02 idle >/dev/null &&
	wait_job $id complete &&
	[ "$(job_field $id "[\"device\"]")" = sim-02 ] &&
	curl -sf "$api/jobs/$id/events" | grep -q requeued &&
	sim_ctl mode sim0 normal >/dev/null
'

test_expect_success 'SIGHUP adds a board and leaves the running job alone' '
	sim_ctl mode all slow >/dev/null &&
	id=$(submit "$TMP/a.yaml") &&
	wait_for "[ \"\$(job_field $id \"[\\\"state\\\"]\")\" = running ]" 20 &&
	cat >"$LAB/devices/10-sim-04.conf" <<CONF &&
device = { name = "sim-04"; type = "sim-minimal"; console = { driver = "pty"; path = "$LAB/sim/sim2.pty"; }; };
CONF
	kill -HUP $LABD_PID &&
	wait_for "curl -sf $api/devices/sim-04" 10 &&
	sim_ctl mode all normal >/dev/null &&
	wait_job $id complete 120 &&
	rm "$LAB/devices/10-sim-04.conf" && kill -HUP $LABD_PID &&
	wait_for "! curl -sf $api/devices/sim-04" 10
'

test_expect_success 'a broken reload keeps the running configuration' '
	echo "device = { name = ; };" >"$LAB/devices/99-broken.conf" &&
	kill -HUP $LABD_PID && sleep 0.5 &&
	grep -q "reload failed: keeping the running configuration" "$LAB/labd.log" &&
	curl -sf "$api/devices/sim-01" >/dev/null &&
	rm "$LAB/devices/99-broken.conf"
'

# labctl reload: what changed; refused: why, exit 1, /health degraded until a reload works
t_reload() {
	health() { curl -sf "$api/health" | jq_py "d$1"; } &&
	cat >"$LAB/devices/10-sim-04.conf" <<CONF &&
device = { name = "sim-04"; type = "sim-minimal"; console = { driver = "pty"; path = "$LAB/sim/sim2.pty"; }; };
CONF
	labctl reload >"$TMP/out" && cat "$TMP/out" &&
	grep -q "^reloaded: 4 boards, [0-9]* device types$" "$TMP/out" &&
	grep -q "^added: sim-04$" "$TMP/out" &&
	sed -i 's/type = "sim-minimal";/type = "sim-minimal"; description = "now described";/' \
		"$LAB/devices/10-sim-04.conf" &&
	labctl reload | grep -q "^changed: sim-04$" &&
	printf 'device = {\n  name = ;\n};\n' >"$LAB/devices/99-broken.conf" &&
	test_expect_code 1 labctl reload >"$TMP/out" 2>"$TMP/err" &&
	cat "$TMP/err" &&
	grep -q "^labctl: reload refused: the running configuration stays$" "$TMP/err" &&
	grep -q "99-broken.conf:2: " "$TMP/err" &&
	[ "$(health '["status"]')" = degraded ] &&
	health '["reasons"][0]' | grep -q "^the last reload was refused: .*99-broken.conf:2: " &&
	curl -sf "$LABD_URL/metrics" | grep -q "^labd_config_last_reload_successful 0$" &&
	curl -sf "$api/devices/sim-04" >/dev/null &&
	rm "$LAB/devices/99-broken.conf" "$LAB/devices/10-sim-04.conf" &&
	labctl reload >"$TMP/out" && grep -q "^removed (after their jobs): sim-04$" "$TMP/out" &&
	[ "$(health '["status"]')" = ok ] &&
	curl -sf "$LABD_URL/metrics" | grep -q "^labd_config_last_reload_successful 1$"
}
test_expect_success 'labctl reload: what changed; refused with the reasons, the lab degraded' t_reload

test_expect_success 'SIGKILL while a job runs: requeued once on restart, nothing lost' '
	sim_ctl mode all slow >/dev/null &&
	labctl device set-state sim-02 maintenance >/dev/null &&
	labctl device set-state sim-03 maintenance >/dev/null &&
	id=$(submit "$TMP/a.yaml") && queued=$(submit "$TMP/a.yaml") &&
	wait_for "grep -q \"Starting kernel\" $LAB/state/jobs/$id/console.log" 60 &&
	labd_kill &&
	[ "$(sim_power sim0)" = on ] &&
	sim_ctl mode all normal >/dev/null &&
	labd_start && api=$LABD_URL/api/v1 &&
	grep -q "job $id: labd stopped while the job ran; requeued" "$LAB/labd.log" &&
	wait_job $id complete 120 && wait_job $queued complete 120 &&
	[ "$(job_field $id "[\"attempt\"]")" = 2 ] &&
	curl -sf "$api/jobs/$id/events" | grep -q attempt-ended &&
	[ "$(sim_power sim0)" = off ]
'

# events_of ID KIND: how many events of that kind the job has.
events_of() {
	curl -sf "$api/jobs/$1/events" | jq_py "sum(e['kind'] == '$2' for e in d)"
}

# The test above started labd on a new port inside its body: back to $LABD_URL.
test_expect_success 'a job running at two SIGKILLs ends incomplete with one finished event' '
	labd_kill && labd_restart &&
	sim_ctl mode all slow >/dev/null &&
	id=$(submit "$TMP/a.yaml") &&
	wait_for "grep -q \"Starting kernel\" $LAB/state/jobs/$id/console.log" 60 &&
	labd_kill && labd_restart &&
	wait_for "[ \"\$(job_field $id \"[\\\"attempt\\\"]\")\" = 2 ]" 30 &&
	wait_for "[ \"\$(job_field $id \"[\\\"state\\\"]\")\" = running ]" 30 &&
	labd_kill && labd_restart &&
	sim_ctl mode all normal >/dev/null &&
	wait_job $id incomplete 30 &&
	[ "$(job_field $id "[\"error_type\"]")" = infrastructure ] &&
	[ "$(events_of $id finished)" = 1 ] && [ "$(events_of $id requeued)" = 1 ] &&
	labd_kill && labd_restart &&
	[ "$(events_of $id finished)" = 1 ]
'

# labd_prlimit SOFT:HARD: labd again on the same port, with that open files limit.
labd_prlimit() {
	labd_kill
	prlimit --nofile="$1" "$LABD" -c "$LAB/labd.conf" --listen "127.0.0.1:$LABD_PORT" \
		>>"$LAB/labd.log" 2>&1 &
	echo $! >>"$TMP/labd.pids"
	wait_for "curl -sf $api/health" 20
}

test_expect_success 'labd raises its open files limit to the hard limit and says so' '
	labd_prlimit 64:1000 &&
	grep -q "open files limit raised from 64 to 1000 (the hard limit); 3 boards need about 286" \
		"$LAB/labd.log" &&
	! grep -q "too low" "$LAB/labd.log"
'

test_expect_success 'a hard limit too low for the boards is said clearly' '
	labd_prlimit 100:200 &&
	grep -q "open files limit 200 is too low for 3 boards (about 286 needed)" "$LAB/labd.log" ||
	{ tail -5 "$LAB/labd.log"; false; }
'

# most_at_once: the most jobs running at once by labd.log's starts and ends.
most_at_once() {
	awk '/: starting on / { n++; if (n > m) m = n } / finished on / { n-- } END { print m + 0 }' \
		"$LAB/labd.log"
}

# Beyond what the limit holds a job would fail with "Too many open files" and mark its
# board bad: the jobs wait in the queue instead, a job for one board's tags too.
test_expect_success 'a limit that holds one job at a time: the others wait, all complete' '
	grep -q "at most 1 jobs run at once: the open files limit 200 leaves room" "$LAB/labd.log" &&
	labctl device set-state sim-02 idle >/dev/null &&
	labctl device set-state sim-03 idle >/dev/null &&
	: >"$LAB/labd.log" &&
	a1=$(submit "$TMP/a.yaml") && a2=$(submit "$TMP/a.yaml") && u=$(submit "$TMP/usb3.yaml") &&
	wait_job $a1 complete 120 && wait_job $a2 complete 120 && wait_job $u complete 120 &&
	[ "$(most_at_once)" = 1 ] &&
	! grep -q "marked bad\|Too many open files" "$LAB/labd.log"
'

test_done
