#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8000-multihost.sh -- several labd hosts sharing one PostgreSQL store (a
# server of the test's own, tests/pg-lib.sh): the schema created once when
# two hosts start together, one queue seen from every host, a board name or
# a host name taken twice refused, 503 with Retry-After while the database
# is stopped, a host that stops renewing its lease reaped and taken back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

if ! pg_start >"$TMP/pg-start.log" 2>&1; then
	test_skip 'several hosts on PostgreSQL' "no PostgreSQL server: $(tail -1 "$TMP/pg-start.log")"
	test_done
	exit
fi

# host_start NAME: labd of $TMP/NAME in the background; its URL in URL_<NAME>.
host_start() {
	local port
	port=$(free_port)
	"$LABD" -c "$TMP/$1/labd.conf" --listen "127.0.0.1:$port" >>"$TMP/$1/labd.log" 2>&1 </dev/null &
	disown $! 2>/dev/null || true
	echo $! >"$TMP/$1.pid"
	echo "$!" >>"$TMP/labd.pids"
	at_exit "kill -9 $!"
	eval "URL_$1=http://127.0.0.1:$port"
}
host_wait() { wait_for "curl -sf $(eval echo \$URL_$1)/api/v1/health" 30; }
jobs_of() { curl -sf "$1/api/v1/jobs?limit=50" | $PY -c 'import json,sys; print(" ".join("%s:%s" % (j["id"], j["state"]) for j in json.load(sys.stdin)))'; }

pg_host_lab hA a 2
pg_host_lab hB b 2
write_job "$TMP/j.yaml" <<JOB
job_name: shared queue
device_type: sim-uboot
timeouts: {job: {minutes: 2}}
actions:
$(sim_minimal_boot)
JOB

LAB=$TMP/hA host_start hA
LAB=$TMP/hB host_start hB
# one row a schema version (1, 2, .. the latest), each migration made by one host
test_expect_success 'two hosts starting together on an empty database: the schema is made once' '
	host_wait hA
	host_wait hB
	[ "$(pg_sql "SELECT count(*) = max(version) FROM schema_version")" = t ]
	[ "$(cat "$TMP/hA/labd.log" "$TMP/hB/labd.log" | grep -c "created the database.s schema from version 0")" = 1 ]
	[ "$(pg_sql "SELECT string_agg(name, \$\$,\$\$ ORDER BY name) FROM hosts")" = hA,hB ]
	[ "$(pg_sql "SELECT string_agg(name || \$\$@\$\$ || host, \$\$,\$\$ ORDER BY name)
		FROM devices")" = "a-01@hA,a-02@hA,b-01@hB,b-02@hB" ]
'

test_expect_success 'every host shows the same queue' '
	for b in a-01 a-02; do
		curl -sf -X POST -d "{\"state\":\"maintenance\",\"reason\":\"t8000\"}" \
			"$URL_hA/api/v1/devices/$b/state" >/dev/null
	done
	for b in b-01 b-02; do
		curl -sf -X POST -d "{\"state\":\"maintenance\",\"reason\":\"t8000\"}" \
			"$URL_hB/api/v1/devices/$b/state" >/dev/null
	done
	for i in 1 2 3; do LABD_URL=$URL_hA labctl submit -q "$TMP/j.yaml"; done
	for i in 1 2; do LABD_URL=$URL_hB labctl submit -q "$TMP/j.yaml"; done
	a=$(jobs_of "$URL_hA") b=$(jobs_of "$URL_hB")
	echo "hA: $a"; echo "hB: $b"
	# ids are the lab'"'"'s: each host takes them from the database in blocks
	[ "$a" = "$b" ] && [ "$(echo $a | wc -w)" = 5 ] && [ "$(echo $a | grep -o :queued | wc -l)" = 5 ]
'

test_expect_success 'a board name another host has is refused, with its host' '
	pg_host_lab hC c 1
	sim_device a-01 0
	rc=0; "$LABD" -c "$TMP/hC/labd.conf" --listen 127.0.0.1:$(free_port) \
		>"$TMP/hC/labd.log" 2>&1 || rc=$?
	cat "$TMP/hC/labd.log"
	[ $rc -ne 0 ]
	grep -q "board .a-01. is on host .hA. of this lab already" "$TMP/hC/labd.log"
	[ "$(pg_sql "SELECT host FROM devices WHERE name = \$\$a-01\$\$")" = hA ]
	# refused before it registered: no host row to be reaped later, none of its boards
	[ "$(pg_sql "SELECT count(*) FROM hosts WHERE name = \$\$hC\$\$")" = 0 ]
	[ "$(pg_sql "SELECT count(*) FROM devices WHERE host = \$\$hC\$\$")" = 0 ]
'

test_expect_success 'a second labd with the same host name is refused' '
	pg_host_lab hA2 x 1 "host = \"hA\";"
	sed -i "s/host = \"hA2\"; //" "$TMP/hA2/labd.conf"
	grep -q "host = \"hA\"" "$TMP/hA2/labd.conf"
	rc=0; "$LABD" -c "$TMP/hA2/labd.conf" --listen 127.0.0.1:$(free_port) \
		>"$TMP/hA2/labd.log" 2>&1 || rc=$?
	cat "$TMP/hA2/labd.log"
	[ $rc -ne 0 ] && grep -q "another labd runs as host .hA." "$TMP/hA2/labd.log"
'

test_expect_success 'the database stopped: 503 with Retry-After, then the same queue again' '
	pg_stop
	code=$(curl -s -o "$TMP/503.json" -D "$TMP/503.h" -w "%{http_code}" "$URL_hA/api/v1/jobs")
	cat "$TMP/503.h" "$TMP/503.json"
	[ "$code" = 503 ] && grep -qi "^retry-after: 5" "$TMP/503.h"
	curl -sf "$URL_hB/api/v1/health" >/dev/null	# labd itself goes on
	pg_start_again
	wait_for "curl -sf $URL_hA/api/v1/jobs" 20
	wait_for "curl -sf $URL_hB/api/v1/jobs" 20
	[ "$(jobs_of "$URL_hA")" = "$(jobs_of "$URL_hB")" ]
'

# hA_reaped_hB: hA logged that it reaped hB, and no one else (hC, refused, never registered)
hA_reaped_hB() {
	grep -q "host(s) hB stopped renewing their lease" "$TMP/hA/labd.log"
}

test_expect_success 'a host that stops renewing its lease is reaped, and takes its boards back' '
	kill -9 "$(cat "$TMP/hB.pid")"
	wait_for "[ \"\$(pg_sql \"SELECT count(*) FROM devices WHERE host = \\\$\\\$hB\\\$\\\$ AND state = \\\$\\\$bad\\\$\\\$\")\" = 2 ]" 20
	wait_for hA_reaped_hB 10
	[ "$(pg_sql "SELECT lease_until FROM hosts WHERE name = \$\$hB\$\$")" = 0 ]
	LAB=$TMP/hB; host_start hB; host_wait hB
	[ "$(pg_sql "SELECT count(*) FROM devices WHERE host = \$\$hB\$\$ AND state = \$\$bad\$\$")" = 0 ]
'

# name_locks: the host names held (labd's advisory locks, pg_hosts.c's PG_HOST_LOCK)
name_locks() {
	pg_sql "SELECT count(*) FROM pg_locks WHERE locktype = \$\$advisory\$\$ AND classid = 1818321509 AND granted"
}

# A labd restarted at once finds its name held a moment more by its old
# connection's server process: it waits for it, a while, instead of refusing.
test_expect_success 'a host name its old connection lets go a moment later is taken, not refused' '
	pg_host_lab hD d 1
	n=$(name_locks)
	pg_sql "SELECT pg_advisory_lock(1818321509, hashtext(\$\$hD\$\$)), pg_sleep(1.5)" >/dev/null &
	holder=$!
	wait_for "[ \$(name_locks) -gt $n ]" 10
	host_start hD
	host_wait hD
	[ "$(grep -c "another labd runs as host" "$TMP/hD/labd.log")" = 0 ]
	wait $holder
'

test_done
