#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-git-overlay.sh -- what a test definition from git costs a job: the first
# fetch of a repository the size of Linaro's test-definitions (made here: about
# 10 MB in a few thousand files, served by `git daemon` on loopback), a cached
# fetch (target: under 1 s added to the job), building the overlay (target:
# under 0.5 s) and labd's memory while it does (the overlay is streamed, never
# held whole: labd's peak RSS must not grow by the overlay's size).
#
# The jobs run on a simulated board: the deploy stages its ramdisk and the
# overlay is appended to it; the figures come from labd's own log line
# "overlay built in T ms (git G ms, of which fetching F ms)" and from
# /proc/<labd>/status sampled every 10 ms.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/ci/lib.sh"

FILES=${BENCH_GIT_FILES:-3000}
FILE_BYTES=${BENCH_GIT_FILE_BYTES:-3400}

# big_repo DIR: FILES files of FILE_BYTES bytes of text (base64 of random
# bytes: it compresses as source code does not, a worst case) in 60 directories,
# plus the smoke definition of git_repo.
big_repo() {
	git_repo "$1"
	$PY - "$1" "$FILES" "$FILE_BYTES" <<'PY'
import base64, os, sys
top, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    d = os.path.join(top, "automated", "linux", "suite%02d" % (i % 60))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "file%04d.sh" % i), "w") as f:
        f.write(base64.encodebytes(os.urandom(size * 3 // 4)).decode())
PY
	git -C "$1" add -A
	git -C "$1" commit -q -m "a tree the size of test-definitions"
}

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }

# sample PID OUT: the largest VmRSS seen, every 10 ms, until killed.
sample() {
	local max=0 v
	while kill -0 "$1" 2>/dev/null; do
		v=$(rss_kb "$1" 2>/dev/null) || break
		[ "${v:-0}" -gt "$max" ] && max=$v && echo "$max" >"$2"
		sleep 0.01
	done
}

big_repo "$TMP/git/test-definitions"
repo_kb=$(du -sk --exclude=.git "$TMP/git/test-definitions" | cut -f1)
git_daemon "$TMP/git"
sim_lab 1
echo "git_allow = [ \"$GIT_URL\" ];" >>"$LAB/labd.conf"
labd_start
at_exit labd_stop

write_job "$TMP/job.yaml" <<JOB
job_name: git overlay bench
device_type: sim-uboot
timeouts: {job: {minutes: 5}, action: {minutes: 2}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
- test:
    timeout: {seconds: 20}
    definitions:
    - from: git
      repository: ${GIT_URL}test-definitions
      path: automated/linux/smoke/smoke.yaml
      name: smoke
JOB

# run_one N: submit the job, wait for its end; the overlay line of its log.
run_one() {
	labctl submit --follow "$TMP/job.yaml" >"$TMP/follow-$1.out" 2>&1 || true
	grep -o "overlay built in [0-9]* ms (git [0-9]* ms, of which fetching [0-9]* ms): .*" \
		"$LAB/state/jobs/$1/labd.log"
}

rest_kb=$(rss_kb "$LABD_PID")
sample "$LABD_PID" "$TMP/peak" &
sampler=$!
at_exit "kill $sampler"
first=$(run_one 1)
cached=$(run_one 2)
kill "$sampler" 2>/dev/null
peak_kb=$(cat "$TMP/peak" 2>/dev/null || echo 0)
[ -n "$first" ] && [ -n "$cached" ] || { echo "no overlay line in the jobs' logs"; exit 1; }

ms() { echo "$1" | sed -n "s/.*$2 \([0-9]*\) ms.*/\1/p"; }
echo "bench-git-overlay: repository: $FILES files, $((repo_kb / 1024)) MB (tree), served by git daemon on loopback"
echo "bench-git-overlay: first job:  clone $(ms "$first" fetching) ms, git in all $(ms "$first" git) ms, overlay built in $(ms "$first" 'built in') ms"
echo "bench-git-overlay: second job: fetch $(ms "$cached" fetching) ms, git in all $(ms "$cached" git) ms, overlay built in $(ms "$cached" 'built in') ms (target: under 1000 ms added to the job)"
echo "bench-git-overlay: building the overlay itself (without git): $(( $(ms "$first" 'built in') - $(ms "$first" git) )) ms, then $(( $(ms "$cached" 'built in') - $(ms "$cached" git) )) ms (target: under 500 ms)"
echo "bench-git-overlay: overlay: ${first#*): }"
echo "bench-git-overlay: labd RSS: $((rest_kb / 1024)) MB at rest, $((peak_kb / 1024)) MB at the peak of both jobs (peak $(($(hwm_kb "$LABD_PID") / 1024)) MB since start); the tree is $((repo_kb / 1024)) MB"
