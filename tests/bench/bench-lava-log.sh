#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-lava-log.sh -- a BENCH_LOG_MB (default 50) MiB console log served as
# LAVA's YAML log to BENCH_CLIENTS (default 4) clients at once: over REST
# (GET /api/v0.2/jobs/N/logs/, one streamed response each) and over XML-RPC
# (scheduler.jobs.logs from the last line read, as lavacli loops, each call at
# most 2 MiB of YAML).  Figures: the YAML rate (MB/s, all clients together),
# labd's CPU time, its RSS before and at its peak, and the growth per client.  Prints
# figures; asserts only that every client got the whole log.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/session-lib.sh"

MB=${BENCH_LOG_MB:-50}
N=${BENCH_CLIENTS:-4}

sim_lab 1
add_users
labd_start
TOKEN=$(token_of gitlab)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$LABD_PID/stat"; }
rss_kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\).*/\1/p" "/proc/$LABD_PID/status"; }

write_job "$TMP/queued.yaml" <<'JOB'
job_name: a big log
device_type: sim-uboot
timeouts:
  job: {minutes: 1}
actions:
- boot:
    method: minimal
    prompts: ['root@sim:~# ']
JOB

api_as boss POST /devices/sim-01/state -d '{"state": "maintenance"}' >/dev/null
id=$(as gitlab submit -q "$TMP/queued.yaml")
as gitlab cancel "$id" >/dev/null
dir=$LAB/state/jobs/$id
mkdir -p "$dir"
$PY "$TOP/tests/helper/big-log.py" "$dir" "$MB"
lines=$(($(wc -l <"$dir/console.log") + $(wc -l <"$dir/labd.log")))
say "log: $(stat -c %s "$dir/console.log") bytes, $lines records"

# serve KIND: N clients at once; prints "seconds yaml_bytes"
serve() {
	local i pids="" t0 t1
	t0=$(date +%s.%N)
	for i in $(seq "$N"); do
		if [ "$1" = rest ]; then
			curl -sf -H "Authorization: Token $TOKEN" -o "$TMP/rest$i.yaml" \
				"$LABD_URL/api/v0.2/jobs/$id/logs/" &
		else
			$PY - "127.0.0.1:$LABD_PORT" "$TOKEN" "$id" "$TMP/rpc$i.yaml" <<'PY' &
import sys, xmlrpc.client
host, token, job, out = sys.argv[1:]
p = xmlrpc.client.ServerProxy("http://gitlab:%s@%s/RPC2" % (token, host), allow_none=True)
start, f = 0, open(out, "wb")
while True:
    done, data = p.scheduler.jobs.logs(job, start, None)
    f.write(data.data)
    start += data.data.count(b"\n")
    if done:
        break
PY
		fi
		pids="$pids $!"
	done
	for i in $pids; do wait "$i" || { echo "# a $1 client failed"; return 1; }; done
	t1=$(date +%s.%N)
	echo "$t0 $t1 $(cat "$TMP/$1"*.yaml | wc -c)" | awk '{ printf "%.2f %d\n", $2 - $1, $3 }'
}

for kind in rest rpc; do
	echo 5 >"/proc/$LABD_PID/clear_refs"	# the peak RSS starts again from now
	rss0=$(rss_kb VmRSS)
	cpu0=$(cpu_ticks)
	read -r secs bytes < <(serve $kind) || exit 1
	peak=$(rss_kb VmHWM)
	cpu=$(awk -v a="$cpu0" -v b="$(cpu_ticks)" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.1f", (b - a) / hz }')
	for i in $(seq "$N"); do
		got=$(wc -l <"$TMP/$kind$i.yaml")
		[ "$got" = "$lines" ] || { echo "# $kind client $i got $got of $lines records"; exit 1; }
	done
	cmp -s "$TMP/${kind}1.yaml" "$TMP/rest1.yaml" ||
		{ echo "# $kind and rest logs differ"; exit 1; }
	echo "lava-log $kind: $N clients x $MB MiB log: $(awk -v b="$bytes" -v s="$secs" \
		'BEGIN { printf "%.0f MB/s of YAML (%.1f s, labd CPU", b / s / 1e6, s }') $cpu s), RSS $((rss0 / 1024)) MiB -> peak $((peak / 1024)) MiB, $(( (peak - rss0) / N / 1024 )) MiB per client"
done
