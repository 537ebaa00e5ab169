#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t4100-api-limits.sh -- the HTTP API under load and abuse: rendered logs of
# any size streamed in bounded memory.
. "$(dirname "$0")/lib.sh"

sim_lab 1
labd_start
api=$LABD_URL/api/v1

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$LABD_PID/status"; }
hwm_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$LABD_PID/status"; }

write_job "$TMP/queued.yaml" <<'JOB'
job_name: stays queued
device_type: sim-uboot
timeouts:
  job: {minutes: 1}
actions:
- boot:
    method: minimal
    prompts: ['root@sim:~# ']
JOB

# big_log DIR MB: a console log of about MB MiB with its index and labd lines.
big_log() {
	mkdir -p "$1"
	$PY - "$1" "$2" <<'PY'
import struct, sys
d, mb = sys.argv[1], int(sys.argv[2])
con, idx, labd = bytearray(), bytearray(), []
line, ts = 0, 1_700_000_000_000_000
while len(con) < mb << 20:
    idx += struct.pack("<QQ", len(con), ts + line * 1000)
    con += b"[%8d.000000] a line of console output, number %d, for the reader\r\n" % (line, line)
    line += 1
    if line % 1000 == 0:
        labd.append("2023-11-14T22:13:20.000000Z info L%d at line %d\n" % (line, line))
open(d + "/console.log", "wb").write(con)
open(d + "/console.idx", "wb").write(idx)
open(d + "/labd.log", "w").write("".join(labd))
PY
}

test_expect_success 'eight slow readers of a 40 MB log rendered with timestamps: RSS stays low' '
	labctl device set-state sim-01 maintenance >/dev/null &&
	id=$(labctl submit -q "$TMP/queued.yaml") &&
	big_log "$LAB/state/jobs/$id" 40 &&
	size=$(stat -c %s "$LAB/state/jobs/$id/console.log") &&
	rss0=$(rss_kb) && pids= &&
	for i in 1 2 3 4 5 6 7 8; do
		q=timestamps=1; [ $i -gt 4 ] && q="timestamps=1&labd=1"
		curl -sf --limit-rate 8M -D "$TMP/h$i" -o "$TMP/log$i" "$api/jobs/$id/log?$q" &
		pids="$pids $!"
	done &&
	for p in $pids; do wait $p || exit 1; done &&
	hwm=$(hwm_kb) &&
	say "RSS before ${rss0} kB, peak ${hwm} kB with 8 readers of a $size-byte log" &&
	[ $((hwm - rss0)) -lt 30000 ] &&
	grep -qi "^X-Log-Size: $size" "$TMP/h1" &&
	lines=$(grep -c "^\[20" "$TMP/log1") && [ "$lines" -gt 500000 ] &&
	[ "$(grep -c "^\[20" "$TMP/log8")" = "$lines" ] &&
	[ "$(grep -c "^# labd: " "$TMP/log8")" = $((lines / 1000)) ] &&
	cmp "$TMP/log1" "$TMP/log2" && cmp "$TMP/log5" "$TMP/log8" &&
	head -c 200 "$TMP/log1" | grep -q "^\[2023-11-14T22:13:20.000000Z\] \[       0.000000\] a line"
'

test_done
