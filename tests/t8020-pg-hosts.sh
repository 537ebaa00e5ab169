#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8020-pg-hosts.sh -- what two labd hosts on one PostgreSQL store share
# besides the queue: every board of the lab listed by either host with its
# host (GET /devices, labctl devices, a board of the other host shown); the
# tokens made through the API (a token made on one host authenticates on
# the other); a job queued through one host canceled through the other, its
# events numbered from the job the cancel read, without a read of their own;
# the boards a reload (SIGHUP) adds registered in the lab as at start, without
# waiting in the loop (a name the other host has refused, the rest added), a
# board it removes released for the other host, as at start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'hosts sharing a PostgreSQL store'

# each host has simulated boards for the boards its reloads add later
pg_host_lab hA a 3
mv "$TMP/hA/devices/10-a-03.conf" "$TMP/a-03.conf"
pg_host_lab hB b 4
rm "$TMP/hB/devices/10-b-02.conf" "$TMP/hB/devices/10-b-03.conf" "$TMP/hB/devices/10-b-04.conf"
pg_host_start hA -v -v	# -v -v: logs each wait for the database in its loop
pg_host_start hB -v -v

# hosts_of URL: "board@host ..." as GET /devices of URL lists them.
hosts_of() {
	curl -sf "$1/api/v1/devices" | $PY -c 'import json,sys
print(" ".join("%s@%s:%s" % (b["name"], b["host"], b["state"]) for b in json.load(sys.stdin)))'
}

test_expect_success 'each host lists every board of the lab with its host' '
	a=$(hosts_of "$URL_hA") b=$(hosts_of "$URL_hB")
	echo "hA: $a"; echo "hB: $b"
	[ "$a" = "a-01@hA:idle a-02@hA:idle b-01@hB:idle" ] &&
	[ "$b" = "b-01@hB:idle a-01@hA:idle a-02@hA:idle" ]
'

test_expect_success 'labctl devices has a HOST column; a board of the other host is shown' '
	LABD_URL=$URL_hB labctl devices >"$TMP/devices.txt" && cat "$TMP/devices.txt" &&
	head -1 "$TMP/devices.txt" | grep -q " HOST " &&
	grep -q "^a-02 .* sim-uboot .* idle .* hA" "$TMP/devices.txt" &&
	LABD_URL=$URL_hB labctl device show a-01 >"$TMP/a-01.txt" && cat "$TMP/a-01.txt" &&
	grep -q "^host: *hA" "$TMP/a-01.txt" && grep -q "^type: *sim-uboot" "$TMP/a-01.txt" &&
	! LABD_URL=$URL_hB labctl device show nowhere-01
'

test_expect_success 'a board set to maintenance on its host shows so on the other' '
	curl -sf -X POST -d "{\"state\":\"maintenance\",\"reason\":\"t8020\"}" \
		"$URL_hA/api/v1/devices/a-01/state" >/dev/null &&
	wait_for "hosts_of $URL_hB | grep -q a-01@hA:maintenance" 10
'

test_expect_success 'a token made on one host authenticates on the other' '
	LABD_URL=$URL_hA labctl token-create alice developer >"$TMP/token.txt" &&
	cat "$TMP/token.txt" && token=$(sed -n "s/^token: //p" "$TMP/token.txt") &&
	[ -n "$token" ] &&
	[ "$(pg_sql "SELECT user_name || \$\$:\$\$ || role FROM tokens")" = alice:developer ] &&
	wait_for "curl -sf -H \"Authorization: Bearer $token\" $URL_hB/api/v1/whoami | grep -q alice" 10 &&
	curl -sf -H "Authorization: Bearer $token" "$URL_hB/api/v1/whoami" >"$TMP/who.json" &&
	cat "$TMP/who.json" && grep -q "\"role\": *\"developer\"" "$TMP/who.json" &&
	code=$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer x$token" \
		"$URL_hB/api/v1/whoami") && [ "$code" = 401 ] &&
	! LABD_URL=$URL_hA labctl token-create "bad name" reader &&
	! LABD_URL=$URL_hA labctl token-create bob superuser
'

test_expect_success 'a job queued through one host canceled through the other: its events numbered without a read' '
	for b in a-01 a-02; do
		curl -sf -X POST -d "{\"state\":\"maintenance\",\"reason\":\"t8020\"}" \
			"$URL_hA/api/v1/devices/$b/state" >/dev/null
	done
	curl -sf -X POST -d "{\"state\":\"maintenance\",\"reason\":\"t8020\"}" \
		"$URL_hB/api/v1/devices/b-01/state" >/dev/null
	write_job "$TMP/j.yaml" <<-JOB
	job_name: canceled elsewhere
	device_type: sim-uboot
	timeouts: {job: {minutes: 2}}
	actions:
	$(sim_minimal_boot)
	JOB
	id=$(LABD_URL=$URL_hA labctl submit -q "$TMP/j.yaml")
	wait_for "[ \"\$(pg_sql \"SELECT count(*) FROM events WHERE job_id = $id\")\" = 1 ]" 10
	LABD_URL=$URL_hB labctl cancel "$id"
	[ "$(pg_sql "SELECT state || health FROM jobs WHERE id = $id")" = finishedcanceled ]
	pg_sql "SELECT seq, kind FROM events WHERE job_id = $id ORDER BY seq" >"$TMP/events.txt"
	cat "$TMP/events.txt"
	[ "$(cut -d"|" -f1 "$TMP/events.txt" | tr "\n" " ")" = "1 2 3 " ]
	grep -q "^2|cancel" "$TMP/events.txt"
	# the cancel read the job without waiting, and numbered its events from that
	grep -q "debug: " "$TMP/hB/labd.log"	# -v -v: a read that waited is logged
	if grep "store: waited .* to \(read a job\|number an event\)" "$TMP/hB/labd.log"; then
		false
	fi
'

# mark NAME: note the end of NAME's log; since NAME: its log after that mark
mark() { stat -c %s "$TMP/$1/labd.log" >"$TMP/$1.mark"; }
since() { tail -c +$(($(cat "$TMP/$1.mark") + 1)) "$TMP/$1/labd.log"; }
# reload NAME: SIGHUP to NAME's labd; waits until it reloaded
reload() {
	mark "$1" && kill -HUP "$(cat "$TMP/$1.pid")" &&
	wait_for "since $1 | grep -q reloaded:" 30 && since "$1"
}
# no_wait NAME: nothing waited for the database in NAME's loop since its mark, and
# its last reload ran once with its reads sent, once with their answers: reads
# that depend on the answer of another make it run again (one run per board)
no_wait() {
	grep -q "debug: " "$TMP/$1/labd.log" && ! since "$1" | grep "store: waited" &&
	[ "$(since "$1" | grep -c "reload: waiting for the store.s answers")" -le 1 ]
}
# host_of BOARD: its host in the lab's registry ("-": none)
host_of() { pg_sql "SELECT coalesce(host, \$\$-\$\$) FROM devices WHERE name = \$\$$1\$\$"; }

test_expect_success 'a board a reload adds is the lab'"'"'s: listed with its host, a job through the other host runs on it' '
	sed "s/sim-uboot/sim-minimal/" "$TMP/a-03.conf" >"$TMP/hA/devices/10-a-03.conf" &&
	reload hA && grep -q "board .a-03. added" "$TMP/hA/labd.log" &&
	[ "$(pg_sql "SELECT host || \$\$:\$\$ || device_type FROM devices WHERE name = \$\$a-03\$\$")" = hA:sim-minimal ] &&
	LABD_URL=$URL_hB labctl devices >"$TMP/devices2.txt" && cat "$TMP/devices2.txt" &&
	grep -q "^a-03 .* sim-minimal .* hA" "$TMP/devices2.txt" &&
	write_job "$TMP/m.yaml" <<-JOB &&
	job_name: on the board a reload added
	device_type: sim-minimal
	timeouts: {job: {minutes: 2}}
	actions:
	$(sim_minimal_boot)
	JOB
	# hB knows the device types of the boards of hA from its NOTIFY
	wait_for "LABD_URL=$URL_hB labctl submit -q $TMP/m.yaml >$TMP/m.id" 10 &&
	id=$(cat "$TMP/m.id") && echo "job $id" &&
	wait_for "[ \"\$(pg_sql \"SELECT state FROM jobs WHERE id = $id\")\" = finished ]" 90 &&
	[ "$(pg_sql "SELECT health || \$\$@\$\$ || device || \$\$@\$\$ || host FROM jobs WHERE id = $id")" = complete@a-03@hA ] &&
	no_wait hA
'

test_expect_success 'a board name the other host has, added by a reload, is refused: the rest is added' '
	LAB=$TMP/hB && sim_device a-01 1 && sim_device b-03 2 && reload hB &&
	since hB | grep "board .a-01. is on host .hA. of this lab already" &&
	! since hB | grep -q "board .a-01. added" && since hB | grep -q "board .b-03. added" &&
	[ "$(host_of a-01)" = hA ] && [ "$(host_of b-03)" = hB ] &&
	b=$(hosts_of "$URL_hB") && echo "hB: $b" &&
	[ "$b" = "b-01@hB:maintenance b-03@hB:idle a-01@hA:maintenance a-02@hA:maintenance a-03@hA:idle" ] &&
	a=$(hosts_of "$URL_hA") && echo "hA: $a" &&
	[ "$a" = "a-01@hA:maintenance a-02@hA:maintenance a-03@hA:idle b-01@hB:maintenance b-03@hB:idle" ] &&
	no_wait hB
'
rm -f "$TMP/hB/devices/10-a-01.conf"	# hB restarts below: refused at its start otherwise

test_expect_success 'a board a reload removes is released: a reload of the other host takes its name' '
	mv "$TMP/hA/devices/10-a-02.conf" "$TMP/a-02.conf" && reload hA &&
	since hA | grep -q "board .a-02. retired" && [ "$(host_of a-02)" = - ] &&
	! hosts_of "$URL_hB" | grep a-02 && ! hosts_of "$URL_hA" | grep a-02 &&
	LAB=$TMP/hB && sim_device a-02 3 && reload hB &&
	since hB | grep -q "board .a-02. added" && [ "$(host_of a-02)" = hB ] &&
	hosts_of "$URL_hA" | grep -q "a-02@hB:" && no_wait hA && no_wait hB
'

test_expect_success 'a host started later knows the tokens made before' '
	kill -9 "$(cat "$TMP/hB.pid")" && pg_host_start hB &&
	token=$(sed -n "s/^token: //p" "$TMP/token.txt") &&
	curl -sf -H "Authorization: Bearer $token" "$URL_hB/api/v1/whoami" | grep -q alice
'

test_expect_success 'a board removed while its host was stopped is released at its start' '
	kill -9 "$(cat "$TMP/hB.pid")" && rm "$TMP/hB/devices/10-b-03.conf" &&
	[ "$(host_of b-03)" = hB ] && pg_host_start hB &&
	[ "$(host_of b-03)" = - ] && [ "$(host_of b-01)" = hB ] && [ "$(host_of a-02)" = hB ] &&
	! hosts_of "$URL_hA" | grep b-03
'

test_done
