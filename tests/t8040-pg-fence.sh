#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t8040-pg-fence.sh -- a host cut off longer than its lease (SIGSTOPped) is
# reaped by the other, which runs its job again; when it comes back it finds
# itself fenced: its writes (the end of the job it was running) are refused
# by the database and announced to none of its listeners (its JUnit backend
# reports nothing), it stops (exit status 75) and, started again, takes its
# board back.  The job ends once, on the other host.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"

pg_require 'fencing a host cut off'

pg_host_lab hA a 1
echo "backends = ( { type = \"junit\"; dir = \"$TMP/hA/junit\"; } );" >>"$LAB/labd.conf"
pg_host_lab hB b 1
pg_host_start hA
pg_host_start hB
pg_ticks_job "$TMP/job.yaml" 12
job_row() { pg_sql "SELECT state || ' ' || health || ' ' || COALESCE(device, '-') || ' ' || attempt FROM jobs WHERE id = $1"; }

test_expect_success 'a job runs on host hA' '
	curl -sf -X POST -d "{\"state\":\"maintenance\"}" "$URL_hB/api/v1/devices/b-01/state" >/dev/null &&
	LABD_URL=$URL_hA labctl submit -q "$TMP/job.yaml" >"$TMP/id" &&
	id=$(cat "$TMP/id") &&
	wait_for "grep -q tick-2 $TMP/hA/state/jobs/$id/console.log" 60 &&
	job_row $id
'
id=$(cat "$TMP/id")

test_expect_success 'hA stopped past its lease: hB reaps it and runs the job again' '
	kill -STOP "$(cat "$TMP/hA.pid")" &&
	curl -sf -X POST -d "{\"state\":\"idle\"}" "$URL_hB/api/v1/devices/b-01/state" >/dev/null &&
	wait_for "job_row $id | grep -q \"^running unknown b-01 2\$\"" 30 &&
	grep -q "host(s) hA stopped renewing their lease" "$TMP/hB/labd.log"
'

test_expect_success 'hA back: fenced, its writes refused, it stops with status 75' '
	kill -CONT "$(cat "$TMP/hA.pid")" &&
	wait_for "! kill -0 $(cat "$TMP/hA.pid")" 90 &&
	cat "$TMP/hA/labd.log" | tail -20 &&
	grep -q "was reaped by another host" "$TMP/hA/labd.log" &&
	job_row $id | grep -q "^running unknown b-01 2$" &&
	# the end of its run is not announced: hB runs the job (no report of it here)
	[ ! -e "$TMP/hA/junit/job-$id.xml" ]
'

test_expect_success 'the job ends once, on hB; hA started again takes its board back' '
	wait_for "job_row $id | grep -q \"^finished complete b-01 2\$\"" 90 &&
	[ "$(pg_sql "SELECT count(*) FROM events WHERE job_id = $id AND kind = \$\$finished\$\$")" = 1 ] &&
	pg_host_start hA &&
	wait_for "[ \"\$(pg_sql \"SELECT state FROM devices WHERE name = \\\$\\\$a-01\\\$\\\$\")\" = idle ]" 20
'

test_done
