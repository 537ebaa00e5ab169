#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t4100-api-limits.sh -- the HTTP API under load and abuse: rendered logs of
# any size streamed in bounded memory; hundreds of trickling connections leave
# it reachable (per-client limits, a reserve for tokens, the Unix socket, the
# total time of a request); labd's limits answered in JSON.
. "$(dirname "$0")/lib.sh"

TOKEN=secret-token-t4100
sim_start 1
write_lab_conf "http = { tokens = [ \"$TOKEN\" ]; unix_socket = \"labd.sock\"; };"
sim_device sim-01 0
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
	$PY "$TOP/tests/helper/big-log.py" "$1" "$2"
}

test_expect_success 'eight slow readers of a 40 MB log rendered with timestamps: RSS stays low' '
	labctl --token "$TOKEN" device set-state sim-01 maintenance >/dev/null &&
	id=$(labctl --token "$TOKEN" submit -q "$TMP/queued.yaml") &&
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

# raw REQUEST_PYTHON_BYTES: send the bytes, print "STATUS CONTENT-TYPE" of the answer.
raw() {
	$PY - "$LABD_PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(20)
try:
    s.sendall(eval(sys.argv[2]))
except OSError:
    pass
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except OSError:
    pass
head = out.split(b"\r\n\r\n")[0].decode(errors="replace").split("\r\n")
ct = [h.split(":", 1)[1].strip() for h in head[1:] if h.lower().startswith("content-type:")]
print(head[0].split(" ")[1] if head[0] else "none", ct[0] if ct else "none")
PY
}

test_expect_success 'labd limits are answered in JSON: 413 (chunked too), 414, 431' '
	chunk="b\"10000\\r\\n\" + b\"a\" * 0x10000 + b\"\\r\\n\"" &&
	[ "$(raw "b\"POST /api/v1/jobs HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n\" + ($chunk) * 32 + b\"0\\r\\n\\r\\n\"")" = "413 application/json" ] &&
	[ "$(raw "b\"POST /api/v1/jobs HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n\" + ($chunk) * 400 + b\"0\\r\\n\\r\\n\"")" = "413 application/json" ] &&
	[ "$(raw "b\"POST /api/v1/jobs HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 9999999\\r\\n\\r\\n\"")" = "413 application/json" ] &&
	[ "$(raw "b\"GET /api/v1/health?\" + b\"a\" * 10000 + b\" HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n\"")" = "414 application/json" ] &&
	[ "$(raw "b\"GET /api/v1/health HTTP/1.1\\r\\nHost: x\\r\\nX-A: \" + b\"a\" * 20000 + b\"\\r\\n\\r\\n\"")" = "431 application/json" ]
'

# libmicrohttpd holds a request in its per-connection memory (API_MEMORY_LIMIT): what is
# within labd's limits must fit, also as many header fields
test_expect_success 'a request at labd limits is answered: an 8000-byte URL, 16000 bytes of header fields' '
	[ "$(raw "b\"GET /api/v1/jobs?submitter=\" + b\"a\" * 8000 + b\" HTTP/1.1\\r\\nHost: x\\r\\nX-A: \" + b\"a\" * 16000 + b\"\\r\\nConnection: close\\r\\n\\r\\n\"")" = "200 application/json" ] &&
	[ "$(raw "b\"GET /api/v1/jobs?submitter=\" + b\"a\" * 8000 + b\" HTTP/1.1\\r\\nHost: x\\r\\n\" + b\"\".join(b\"X-%03d: %s\\r\\n\" % (i, b\"a\" * 150) for i in range(100)) + b\"Connection: close\\r\\n\\r\\n\"")" = "200 application/json" ]
'

# trickle N SECONDS: N connections sending a request's headers one byte every
# two seconds; prints how many the server closed within 8 s of their opening,
# and how many before the end.
trickle() {
	$PY - "$LABD_PORT" "$1" "$2" <<'PY'
import selectors, socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
conns, closed, opened = [], {}, {}
t0 = time.monotonic()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    s.send(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    conns.append(s)
    opened[s] = time.monotonic()
sel = selectors.DefaultSelector()
for s in conns:
    sel.register(s, selectors.EVENT_READ)
next_byte = time.monotonic() + 2
while time.monotonic() - t0 < secs and len(closed) < n:
    for key, _ in sel.select(timeout=0.2):
        try:
            data = key.fileobj.recv(4096)
        except OSError:
            data = b""
        if not data:
            closed[key.fileobj] = time.monotonic() - opened[key.fileobj]
            sel.unregister(key.fileobj)
    if time.monotonic() >= next_byte:
        next_byte += 2
        for s in conns:
            if s not in closed:
                try:
                    s.send(b"x")
                except OSError:
                    pass
early = sum(1 for t in closed.values() if t < 8)
print(early, len(closed))
PY
}

test_expect_success '300 trickling connections: tokens, other clients and the Unix socket still served, all closed in time' '
	trickle 300 40 >"$TMP/trickle" &
	tpid=$! &&
	sleep 3 &&
	curl -sf --max-time 5 -H "Authorization: Bearer $TOKEN" "$api/health" >/dev/null &&
	curl -sf --max-time 5 --interface 127.0.0.2 "$api/health" >/dev/null &&
	curl -sf --max-time 5 --unix-socket "$LAB/labd.sock" http://localhost/api/v1/health >/dev/null &&
	status=$(curl -s --max-time 5 -o "$TMP/busy" -w "%{http_code}" "$api/health") &&
	[ "$status" = 503 ] && grep -q "too many connections" "$TMP/busy" &&
	wait $tpid && read early all <"$TMP/trickle" &&
	say "closed: $early of 300 within 8 s of their opening, $all within 40 s" &&
	[ "$early" -ge 260 ] && [ "$all" = 300 ] &&
	curl -sf --max-time 5 "$api/health" >/dev/null
'

test_done
