#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-nfs-rootfs.sh -- NFS root file systems: labd's deploy, which unpacks the
# root while it downloads (a helper child decompresses and writes, the loop
# only moves bytes), against LAVA's way, the download and then the extraction
# in sequence (curl, then tar -xJ), on the same artifact: the Debian 12 root of
# tests/nfs/prepare.sh (x86_64, about 200 MB unpacked, xz), served from
# loopback at full speed and at BENCH_RATE bytes/s (default 12500000: a 100
# Mbit/s lab network).  BENCH_RUNS runs of each (default 3), alternated.
#
# Figures, medians: time from the deploy's start to the root being ready
# (labd: the job's nfsroot-ready phase; LAVA's way: curl's and tar's wall
# times added; and, to tell the loop's part, curl piped straight into labd's
# unpack helper), CPU (labd's own and its children's, the helper's above all,
# against curl's, tar's and xz's), peak RSS (the helper's and labd's, against
# curl's and tar's with xz).  Then the console stream while roots unpack:
# BENCH_STREAMERS simulated boards (default 8) print timestamped lines at
# 115200 baud for BENCH_SECONDS (default 40) through the http backend, as in
# bench-streaming.sh, once alone and once while BENCH_UNPACKS roots (default
# 8) unpack at once: the lines' latency console -> receiver (p50, p99, max).
# Prints figures; asserts nothing about them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/backend-lib.sh"
. "$TOP/tests/nfs-lib.sh"

RUNS=${BENCH_RUNS:-3}
RATE=${BENCH_RATE:-12500000}
UNPACKS=${BENCH_UNPACKS:-8}
STREAMERS=${BENCH_STREAMERS:-8}
SECS=${BENCH_SECONDS:-40}
ART=$TOP/contrib/lab/artifacts

nfs_fixtures x86_64 || { echo "bench-nfs-rootfs: cannot measure: $NFS_SKIP"; exit 1; }
ROOT_DIR=$NFS_FIX/x86_64
ROOT_XZ=$(stat -c %s "$ROOT_DIR/rootfs.tar.xz")
ROOT_BYTES=$(cat "$ROOT_DIR/rootfs-bytes")

# serve RATE: the root's directory over HTTP at RATE bytes/s; sets URL to the root's.
serve() {
	local port
	port=$(free_port)
	$PY "$TOP/tests/bench/throttled-http.py" "$port" "$ROOT_DIR" "$1" >/dev/null 2>&1 &
	at_exit "kill $!"
	wait_for "curl -sf -o /dev/null http://127.0.0.1:$port/kernel-version" 10
	URL=http://127.0.0.1:$port/rootfs.tar.xz
}
serve 0
URL_FAST=$URL
serve "$RATE"
URL_SLOW=$URL

sim_start $((UNPACKS + STREAMERS))
write_lab_conf "nfs = { export_dir = \"$LAB/nfs\"; server_ip = \"10.0.2.2\"; };"
mkdir -p "$LAB/nfs"
for i in $(seq 0 $((UNPACKS + STREAMERS - 1))); do
	sim_device "sim-$i" "$i"
done
cp "$LAB/labd.conf" "$TMP/plain.conf"

# root_job URL FILE: a job that deploys the root from URL on a simulated board.
root_job() {
	write_job "$2" <<JOB
job_name: nfs root bench
device_type: sim-uboot
timeouts: {job: {minutes: 15}, action: {minutes: 10}, connection: {minutes: 2}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image', type: image}
    ramdisk: {url: 'file://$ART/initrd.cpio.gz'}
    dtb: {url: 'file://$ART/sim.dtb'}
    nfsrootfs: {url: '$1', compression: xz}
$(sim_uboot_boot | sed -n '/^- boot:/,$p')
JOB
}
root_job "$URL_FAST" "$TMP/root-fast.yaml"
root_job "$URL_SLOW" "$TMP/root-slow.yaml"

# stat_ticks PID FIRST LAST: the sum of /proc/PID/stat's fields FIRST..LAST.
stat_ticks() {
	awk -v a="$2" -v b="$3" '{ s = 0; for (i = a; i <= b; i++) s += $i; print s }' "/proc/$1/stat"
}

# hwm_sampler OUT: in the background, the largest VmHWM (kB) of labd's unpack
# helpers, written to OUT when it gets SIGTERM; sets SAMPLER_PID.
hwm_sampler() {
	$PY - "$1" <<'PY' &
import glob, signal, sys, time
out, peak, stop = sys.argv[1], 0, False
def end(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, end)
while not stop:
    for c in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            if b"rootfs-helper\0unpack" not in open(c, "rb").read():
                continue
            for l in open(c[:-7] + "status"):
                if l.startswith("VmHWM:"):
                    peak = max(peak, int(l.split()[1]))
        except OSError:
            pass
    time.sleep(0.02)
open(out, "w").write("%d\n" % peak)
PY
	SAMPLER_PID=$!
}

# labd_run JOB: one job on a fresh labd; prints "READY_S CPU_S HELPER_KB LABD_KB".
labd_run() {
	local id t0 t1 hz ready
	hz=$(getconf CLK_TCK)
	labd_start
	hwm_sampler "$TMP/hwm"
	t0=$(stat_ticks "$LABD_PID" 14 17)
	id=$(submit "$1")
	wait_job "$id" 900 || { echo "# job $id did not finish" >&2; return 1; }
	t1=$(stat_ticks "$LABD_PID" 14 17)
	kill "$SAMPLER_PID"
	wait "$SAMPLER_PID"
	ready=$(curl -sf "$LABD_URL/api/v1/jobs/$id" | $PY -c '
import json, sys
print(next(p["t"] for p in json.load(sys.stdin)["phases"] if p["phase"] == "nfsroot-ready"))')
	echo "$ready $(echo "$t1 $t0 $hz" | awk '{ print ($1 - $2) / $3 }') $(cat "$TMP/hwm")" \
		"$(awk '/^VmHWM:/ { print $2 }' "/proc/$LABD_PID/status")"
	labd_stop
	rm -rf "$LAB/state" "$LAB/nfs"/*
}

# lava_run URL: curl to a file, then tar -xJ; prints "READY_S CPU_S CURL_KB TAR_KB".
lava_run() {
	local d=$TMP/lava
	rm -rf "$d" && mkdir -p "$d/tree"
	/usr/bin/time -f '%e %U %S %M' -o "$d/curl.time" curl -sf -o "$d/root.tar.xz" "$1"
	/usr/bin/time -f '%e %U %S %M' -o "$d/tar.time" \
		tar --numeric-owner --xattrs --xattrs-include='*' -xJpf "$d/root.tar.xz" -C "$d/tree"
	sync -f "$d/tree"
	paste -d' ' "$d/curl.time" "$d/tar.time" |
		awk '{ print $1 + $5, $2 + $3 + $6 + $7, $4, $8 }'
	rm -rf "$d"
}

# pipe_run URL: curl piped into labd's helper, without labd's loop between them;
# prints "READY_S".
pipe_run() {
	local d=$TMP/pipe t0
	rm -rf "$d" && mkdir -p "$d/tree"
	t0=$(date +%s.%N)
	curl -sf "$1" | "$LABD" rootfs-helper unpack --tree "$d/tree" 3<&0 >"$d/helper.out"
	echo "$(date +%s.%N) $t0" | awk '{ print $1 - $2 }'
	grep -q '^done ' "$d/helper.out" || { echo "# the helper failed: $(tail -1 "$d/helper.out")" >&2; }
	rm -rf "$d"
}

# median: the median of each column of stdin.
median() {
	$PY -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
print(" ".join("%g" % statistics.median(c) for c in zip(*rows)))'
}

# part1 NAME JOB URL: labd's deploy of JOB and LAVA's way on URL, alternated.
part1() {
	local name=$1 job=$2 url=$3 i
	: >"$TMP/labd.runs" && : >"$TMP/lava.runs" && : >"$TMP/pipe.runs"
	for i in $(seq "$RUNS"); do
		labd_run "$job" >>"$TMP/labd.runs" || return 1
		lava_run "$url" >>"$TMP/lava.runs"
		pipe_run "$url" >>"$TMP/pipe.runs"
	done
	read -r l_ready l_cpu l_helper l_labd < <(median <"$TMP/labd.runs")
	read -r s_ready s_cpu s_curl s_tar < <(median <"$TMP/lava.runs")
	read -r p_ready < <(median <"$TMP/pipe.runs")
	echo "nfs-rootfs: $name: runs (s): labd $(cut -d' ' -f1 "$TMP/labd.runs" | xargs)," \
	     "curl; tar $(cut -d' ' -f1 "$TMP/lava.runs" | xargs)," \
	     "curl | helper $(xargs <"$TMP/pipe.runs")"
	echo "nfs-rootfs: $name: root ready in $l_ready s streaming (labd) vs $s_ready s" \
	     "download then extract (curl; tar -xJ): labd takes" \
	     "$(echo "$l_ready $s_ready" | awk '{ printf "%.2f", $1 / $2 }') times as long"
	echo "nfs-rootfs: $name: the helper fed by curl through a pipe, without labd's loop: $p_ready s"
	echo "nfs-rootfs: $name: CPU $l_cpu s (labd and its helper) vs $s_cpu s (curl, tar, xz)"
	echo "nfs-rootfs: $name: peak RSS $((${l_helper%.*} / 1024)) MB helper, $((${l_labd%.*} / 1024)) MB labd" \
	     "vs $((${s_tar%.*} / 1024)) MB tar+xz, $((${s_curl%.*} / 1024)) MB curl"
}

echo "nfs-rootfs: the root: Debian 12 x86_64, $((ROOT_XZ / 1000000)) MB xz, $((ROOT_BYTES / 1000000)) MB unpacked; medians of $RUNS runs"
part1 loopback "$TMP/root-fast.yaml" "$URL_FAST" || exit 1
part1 "$((RATE * 8 / 1000000)) Mbit/s" "$TMP/root-slow.yaml" "$URL_SLOW" || exit 1

# ---- the console stream while roots unpack ----
recorder_start rec
cp "$TMP/plain.conf" "$TMP/http.conf"
cat >>"$TMP/http.conf" <<CONF
backends = ( { type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; token = "bench"; } );
CONF
write_job "$TMP/stream.yaml" <<JOB
job_name: stream
device_type: sim-uboot
timeouts: {job: {minutes: 10}, action: {minutes: 5}, connection: {minutes: 4}}
actions:
$(sim_minimal_boot)
- test:
    interactive:
    - name: stream
      prompts: ['root@sim:~# ']
      script:
      - command: stream $SECS
JOB

# stream_run UNPACKS: the streamers, and UNPACKS root jobs started with them;
# the records of that run in $TMP/rec-UNPACKS.jsonl.
stream_run() {
	local i ids=()
	cp "$TMP/http.conf" "$LAB/labd.conf"
	: >"$TMP/rec.jsonl"
	labd_start
	for i in $(seq "$STREAMERS"); do ids+=("$(submit "$TMP/stream.yaml")"); done
	for i in $(seq "$1"); do ids+=("$(submit "$TMP/root-fast.yaml")"); done
	for i in "${ids[@]}"; do
		wait_job "$i" 900 || { echo "# job $i did not finish" >&2; return 1; }
	done
	for i in "${ids[@]}"; do
		curl -sf "$LABD_URL/api/v1/jobs/$i"
		echo
	done >"$TMP/jobs-$1.json"
	sleep 2
	labd_stop
	cp "$TMP/rec.jsonl" "$TMP/rec-$1.jsonl"
	rm -rf "$LAB/state" "$LAB/nfs"/*
}
stream_run 0 || exit 1
stream_run "$UNPACKS" || exit 1

$PY - "$TMP" "$UNPACKS" "$STREAMERS" "$SECS" <<'PY'
import json, sys
tmp, unpacks, streamers, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def latencies(path):
    carry, lat, last = {}, [], {}
    for line in open(path):
        r = json.loads(line)
        if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
            continue
        for it in json.loads(r["body"])["items"]:
            if it["type"] != "log" or it["seq"] <= last.get(it["job"], 0):
                continue
            last[it["job"]] = it["seq"]
            lines = (carry.get(it["job"], "") + it["text"]).split("\n")
            carry[it["job"]] = lines.pop()
            for l in lines:
                f = l.split()
                if len(f) == 4 and f[0] == "SIMSTREAM":
                    lat.append((r["t"] - int(f[3])) / 1e6)
    return sorted(lat)

def pct(lat, p):
    return lat[min(len(lat) - 1, int(len(lat) * p / 100))] if lat else float("nan")

def unpack_window(path):
    spans = []
    for l in open(path):
        if not l.strip():
            continue
        ph = {p["phase"]: p for p in json.loads(l).get("phases") or []}
        if "nfsroot-ready" in ph:
            spans.append(ph["nfsroot-ready"]["t"])
    return spans

for n in (0, unpacks):
    lat = latencies("%s/rec-%d.jsonl" % (tmp, n))
    what = "alone" if n == 0 else "with %d roots unpacking at once" % n
    print("nfs-rootfs: console stream, %s boards for %s s, %s: %d lines, latency p50 %.0f ms, p99 %.0f ms, max %.0f ms"
          % (streamers, secs, what, len(lat), pct(lat, 50), pct(lat, 99), lat[-1] if lat else float("nan")))
spans = unpack_window("%s/jobs-%d.json" % (tmp, unpacks))
if spans:
    print("nfs-rootfs: the %d roots were ready %.1f s to %.1f s after their deploys started"
          % (len(spans), min(spans), max(spans)))
PY
