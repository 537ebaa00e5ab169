#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8010-multihost-scenarios.sh -- three labd hosts on one PostgreSQL (of the
# test's own, tests/pg-lib.sh), through what a lab lives through: hosts A
# and B have boards of one type (sim-uboot), C of another (sim-minimal).
# 300 jobs queued through all three APIs (each shows the same queue), then
# run while host B is SIGKILLed mid-job (its jobs requeued and finished on
# A, its boards offline, idle again when it is back) and PostgreSQL is
# stopped for 20 s; then every job finished once, with its result and its
# log (read through another host), the boards' own journal (simboard's
# `journal` command) saying which board ran what.  A board name another
# host has is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
MH="$PY $TOP/tests/helper/multihost.py"

if ! pg_start >"$TMP/pg-start.log" 2>&1; then
	test_skip 'three hosts on PostgreSQL' "no PostgreSQL server: $(tail -1 "$TMP/pg-start.log")"
	test_done
	exit
fi

BOARDS=4
# host_start NAME [PORT]: its labd; URL_<NAME>, PORT_<NAME>.
host_start() {
	local port=${2:-$(free_port)}
	"$LABD" -c "$TMP/$1/labd.conf" --listen "127.0.0.1:$port" >>"$TMP/$1/labd.log" 2>&1 </dev/null &
	echo "$!" >"$TMP/$1.pid"
	disown $! 2>/dev/null || true
	echo "$!" >>"$TMP/labd.pids"
	eval "URL_$1=http://127.0.0.1:$port PORT_$1=$port"
	wait_for "curl -sf http://127.0.0.1:$port/api/v1/health" 30
}
# set_boards NAME PREFIX STATE: every board of host NAME to STATE, through its API.
set_boards() {
	local url i
	url=$(eval echo \$URL_$1)
	for i in $(seq 1 $BOARDS); do
		curl -sf -X POST -d "{\"state\":\"$3\",\"reason\":\"t8010\"}" \
			"$url/api/v1/devices/$(printf '%s-%02d' "$2" "$i")/state" >/dev/null
	done
}
pgq() { pg_sql "$1" | tr '\n' ' ' | sed 's/ $//'; }

SIM_ARGS='--mode no-autoboot --baud 0'
pg_host_lab --type sim-uboot --sim "$SIM_ARGS" hA a $BOARDS
pg_host_lab --type sim-uboot --sim "$SIM_ARGS" hB b $BOARDS
pg_host_lab --type sim-minimal --sim "$SIM_ARGS" hC c $BOARDS
host_start hA
host_start hB
host_start hC
T0=$(date +%s)

test_expect_success 'a board name another host has is refused' '
	LAB=$TMP/hD
	mkdir -p "$LAB"
	write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"hD\"; host_lease = 3; timeout = 5; };"
	sim_device b-02 0
	rc=0
	"$LABD" -c "$LAB/labd.conf" --listen 127.0.0.1:$(free_port) >"$LAB/labd.log" 2>&1 || rc=$?
	cat "$LAB/labd.log"
	[ $rc -ne 0 ]
	grep -q "board .b-02. is on host .hB. of this lab already" "$LAB/labd.log"
	[ "$(pg_sql "SELECT host FROM devices WHERE name = \$\$b-02\$\$")" = hB ]
'

test_expect_success '300 jobs through the three hosts: each host shows the same queue' '
	set_boards hA a maintenance
	set_boards hB b maintenance
	set_boards hC c maintenance
	$MH submit "$TMP/submitted" "$URL_hA,sim-uboot,100" "$URL_hB,sim-uboot,100" \
		"$URL_hC,sim-minimal,100"
	[ "$(wc -l <"$TMP/submitted")" = 300 ]
	for h in hA hB hC; do
		# the lab'"'"'s queue: the same everywhere (the board counts are each host'"'"'s own)
		curl -sf "$(eval echo \$URL_$h)/api/v1/queue" | $PY -c "import json,sys
print([(t[\"device_type\"], t[\"queued\"], t[\"oldest\"]) for t in json.load(sys.stdin)])" \
			>"$TMP/queue-$h.json"
		curl -sf "$(eval echo \$URL_$h)/api/v1/jobs?state=queued&limit=1000" |
			$PY -c "import json,sys; print(sorted(j[\"id\"] for j in json.load(sys.stdin)))" \
			>"$TMP/queued-$h.txt"
	done
	head -c 600 "$TMP/queue-hA.json"; echo
	cmp "$TMP/queue-hA.json" "$TMP/queue-hB.json"
	cmp "$TMP/queue-hA.json" "$TMP/queue-hC.json"
	cmp "$TMP/queued-hA.txt" "$TMP/queued-hB.txt"
	cmp "$TMP/queued-hA.txt" "$TMP/queued-hC.txt"
	[ "$($PY -c "import ast; print(len(ast.literal_eval(open(\"$TMP/queued-hA.txt\").read())))")" = 300 ]
'

# ---- the run: at the top level, the hosts must outlive test bodies ----
set_boards hA a idle
set_boards hB b idle
set_boards hC c idle
finished() { pg_sql "SELECT count(*) FROM jobs WHERE state = 'finished'"; }
wait_for "[ \$(finished) -ge 40 ]" 120
# host B SIGKILLed while it runs jobs
wait_for "[ \$(pg_sql \"SELECT count(*) FROM jobs WHERE state = 'running' AND host = 'hB'\") -ge 2 ]" 30
kill -9 "$(cat "$TMP/hB.pid")"
wait_for "[ \$(pg_sql \"SELECT count(*) FROM devices WHERE host = 'hB' AND state = 'bad'\") = $BOARDS ]" 30
# the jobs the kill interrupted: requeued by the host that reaped B
pgq "SELECT id FROM jobs WHERE last_error LIKE 'its host hB stopped%' ORDER BY id" >"$TMP/killed-jobs"
say "$(( $(date +%s) - T0 ))s: host B killed while running jobs $(cat "$TMP/killed-jobs")"
pgq "SELECT name || ':' || state || ':' || COALESCE(reason, '') FROM devices WHERE host = 'hB' ORDER BY name" \
	>"$TMP/hB-boards-while-away"
# its jobs finish on host A before it comes back
killed_done() {
	[ "$(pg_sql "SELECT count(*) FROM jobs WHERE id IN ($(tr ' ' , <"$TMP/killed-jobs"))
		AND state = 'finished'")" = "$(wc -w <"$TMP/killed-jobs")" ]
}
wait_for killed_done 60 || true
host_start hB "$PORT_hB"
say "$(( $(date +%s) - T0 ))s: host B back"
wait_for "[ \$(finished) -ge 150 ]" 120
pgq "SELECT count(*) FROM jobs WHERE state = 'finished'" >"$TMP/finished-before-pg-stop"
pg_stop
say "$(( $(date +%s) - T0 ))s: PostgreSQL stopped with $(cat "$TMP/finished-before-pg-stop") jobs finished"
sleep 10
for h in hA hB hC; do
	curl -s -o /dev/null -w "%{http_code}\n" "$(eval echo \$URL_$h)/api/v1/jobs" >>"$TMP/codes-while-away"
	[ "$(curl -s -o /dev/null -w "%{http_code}" "$(eval echo \$URL_$h)/api/v1/health")" = 000 ] ||
		echo "$h answers" >>"$TMP/alive-while-away"
done
sleep 10
pg_start_again
say "$(( $(date +%s) - T0 ))s: PostgreSQL back"
wait_for "[ \$(finished) = 300 ]" 150 || true
say "$(( $(date +%s) - T0 ))s: $(finished) jobs finished"
# the boards by host: each host's simboard names its boards sim0..
for h in hA hB hC; do sed "s/^/$h:/" "$TMP/$h/sim/journal"; done >"$TMP/journal"

hB_boards_back() {
	[ "$(pg_sql "SELECT count(*) FROM devices WHERE host = 'hB' AND state IN ('idle', 'running')")" = $BOARDS ]
}
test_expect_success 'host B killed mid-job: its jobs requeued and finished on host A, its boards offline then idle' '
	killed=$(cat "$TMP/killed-jobs")
	echo "killed: $killed"; cat "$TMP/hB-boards-while-away"; echo
	[ -n "$killed" ]
	grep -q "host(s) hB stopped renewing their lease" "$TMP/hA/labd.log" "$TMP/hC/labd.log"
	[ "$(grep -o ":bad:its host stopped" "$TMP/hB-boards-while-away" | wc -l)" = $BOARDS ]
	for id in $killed; do
		row=$(pg_sql "SELECT state || health || attempt || host || COALESCE(last_error, \$\$\$\$)
			FROM jobs WHERE id = $id")
		echo "$id: $row"
		case "$row" in finishedcomplete2hA*"its host hB stopped"*) ;; *) exit 1 ;; esac
	done
	wait_for hB_boards_back 10
'

test_expect_success 'PostgreSQL stopped for 20 s: the hosts went on, 503 meanwhile' '
	cat "$TMP/codes-while-away" "$TMP/alive-while-away"
	[ "$(grep -c 503 "$TMP/codes-while-away")" = 3 ]
	[ "$(wc -l <"$TMP/alive-while-away")" = 3 ]
'

test_expect_success 'every job finished once, with its result and log (through another host), on the boards once' '
	[ "$(finished)" = 300 ]
	$MH check "$TMP/submitted" "$TMP/journal" "$URL_hA" "$URL_hB" "$URL_hC"
	[ "$(grep -c " RUN-mh-" "$TMP/journal")" -ge 300 ]
'
say "$(( $(date +%s) - T0 ))s in all"

test_done
