#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8020-pg-hosts.sh -- what two labd hosts on one PostgreSQL store share
# besides the queue: every board of the lab listed by either host with its
# host (GET /devices, labctl devices, a board of the other host shown); the
# tokens made through the API (a token made on one host authenticates on
# the other); a job queued through one host canceled through the other, its
# events numbered from the job the cancel read, without a read of their own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'hosts sharing a PostgreSQL store'

pg_host_lab hA a 2
pg_host_lab hB b 1
pg_host_start hA
pg_host_start hB -v -v	# logs each wait for the database in its loop

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

test_expect_success 'a host started later knows the tokens made before' '
	kill -9 "$(cat "$TMP/hB.pid")" && pg_host_start hB &&
	token=$(sed -n "s/^token: //p" "$TMP/token.txt") &&
	curl -sf -H "Authorization: Bearer $token" "$URL_hB/api/v1/whoami" | grep -q alice
'

test_done
