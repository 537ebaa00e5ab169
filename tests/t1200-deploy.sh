#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1200-deploy.sh -- the deploy action against a real HTTP server: the artifact
# URLs checked before the board is touched (a missing one is the job's fault, a
# server that does not answer the lab's), checksums, the size limit, gz and xz
# decompression, the shared download cache.
. "$(dirname "$0")/lib.sh"

LIMIT=3000000
WWW=$TMP/www
mkdir -p "$WWW"
sim_start 1
write_lab_conf "max_artifact_size = $LIMIT;"
sim_device sim-01 0

# Artifacts: a "kernel" of random bytes, its gz and xz, a file over the limit,
# a gz that inflates past the limit, and garbage named .gz.
head -c 200000 /dev/urandom >"$WWW/Image"
gzip -9 -c "$WWW/Image" >"$WWW/Image.gz"
xz -c "$WWW/Image" >"$WWW/Image.xz"
head -c $((LIMIT + 1000)) /dev/zero >"$WWW/big"
head -c $((LIMIT * 2)) /dev/zero | gzip -c >"$WWW/bomb.gz"
echo "not compressed at all" >"$WWW/bad.gz"
cp "$TOP/contrib/lab/artifacts/sim.dtb" "$WWW/cached.dtb"
sha() { sha256sum "$WWW/$1" | cut -c1-64; }

HTTP_PORT=$(free_port)
$PY -m http.server "$HTTP_PORT" --bind 127.0.0.1 --directory "$WWW" >"$TMP/http.log" 2>&1 &
at_exit "kill $!"
wait_for "curl -sf http://127.0.0.1:$HTTP_PORT/Image -o /dev/null" 10
URL=http://127.0.0.1:$HTTP_PORT

# deploy_job FILE ARTIFACT-YAML: a job that only deploys (to tftp).
deploy_job() {
	write_job "$1" <<JOB
job_name: deploy
device_type: sim-uboot
timeouts: {job: {minutes: 1}, action: {seconds: 30}}
actions:
- deploy:
    to: tftp
$2
JOB
}

# last_job: the id of the last job run-job ran.
last_job() {
	sed -n 's/^job \([0-9]*\): .*/\1/p' "$TMP/run.out" | tail -1
}

test_expect_success 'HTTP 404: the job error of a missing artifact, before any action' '
	deploy_job "$TMP/404.yaml" "    kernel: {url: $URL/missing}
    dtb: {url: $URL/cached.dtb}" &&
	run_job "$TMP/404.yaml" 2 &&
	grep -q "incomplete (job): artifact URL check before the board was powered: kernel .$URL/missing.: HTTP 404 (a missing artifact: the job.s URL)$" "$TMP/run.out" &&
	! grep -q "action 1 of" "$TMP/run.out" &&
	grep -q "\"HEAD /missing HTTP/1.1\" 404" "$TMP/http.log" &&
	! grep -q "GET /missing" "$TMP/http.log"
'

test_expect_success 'connection refused: infrastructure error naming the URL, before any action' '
	deploy_job "$TMP/refused.yaml" "    kernel: {url: http://127.0.0.1:1/Image}" &&
	run_job "$TMP/refused.yaml" 2 &&
	grep -q "incomplete (infrastructure): artifact URL check before the board was powered: kernel .http://127.0.0.1:1/Image.: no answer: Failed to connect to 127.0.0.1 port 1" "$TMP/run.out" &&
	! grep -q "action 1 of" "$TMP/run.out"
'

test_expect_success 'checksum mismatch: infrastructure error with both sums, nothing staged' '
	deploy_job "$TMP/sum.yaml" "    kernel: {url: $URL/Image, sha256sum: $(sha Image.gz)}" &&
	run_job "$TMP/sum.yaml" 2 &&
	grep -q "sha256 mismatch: got $(sha Image), expected $(sha Image.gz)" "$TMP/run.out" &&
	! ls "$LAB/state/tftp/$(last_job)/" | grep -q Image &&
	! ls "$LAB/state/cache/" | grep -q tmp
'

test_expect_success 'over max_artifact_size: a clear message with the limit' '
	deploy_job "$TMP/big.yaml" "    rootfs: {url: $URL/big}" &&
	run_job "$TMP/big.yaml" 2 &&
	grep -q "download of .$URL/big. failed: larger than the lab.s max_artifact_size of $LIMIT bytes" "$TMP/run.out"
'

test_expect_success 'gz and xz artifacts are decompressed and staged without the suffix' '
	deploy_job "$TMP/gz.yaml" "    kernel: {url: $URL/Image.gz, compression: gz}
    ramdisk: {url: $URL/Image.xz, compression: xz, sha256sum: $(sha Image.xz)}" &&
	run_job "$TMP/gz.yaml" 0 &&
	id=$(last_job) &&
	cmp "$WWW/Image" "$LAB/state/tftp/$id/Image" &&
	cmp "$WWW/Image" "$LAB/state/tftp/$id/ramdisk-Image" &&
	! [ -e "$LAB/state/tftp/$id/Image.gz" ] &&
	grep -q "decompressed .*Image.gz (gz)" "$TMP/run.out"
'

test_expect_success 'not really gz: infrastructure error quoting gzip' '
	deploy_job "$TMP/bad.yaml" "    kernel: {url: $URL/bad.gz, compression: gz}" &&
	run_job "$TMP/bad.yaml" 2 &&
	grep -q "cannot decompress .$URL/bad.gz. (gz): exited with status 1: gzip: .*not in gzip format" "$TMP/run.out"
'

test_expect_success 'decompressed output over max_artifact_size: stopped, clear message' '
	deploy_job "$TMP/bomb.yaml" "    rootfs: {url: $URL/bomb.gz, compression: gz}" &&
	run_job "$TMP/bomb.yaml" 2 &&
	grep -q "cannot decompress .$URL/bomb.gz. (gz): output larger than the lab.s max_artifact_size of $LIMIT bytes" "$TMP/run.out" &&
	! [ -e "$LAB/state/tftp/$(last_job)/bomb" ]
'

test_expect_success 'artifacts with a checksum are cached: the second job does not download' '
	deploy_job "$TMP/cache.yaml" "    dtb: {url: $URL/cached.dtb, sha256sum: $(sha cached.dtb)}
    kernel: {url: $URL/Image}" &&
	run_job "$TMP/cache.yaml" 0 &&
	first=$(last_job) &&
	run_job "$TMP/cache.yaml" 0 &&
	second=$(last_job) &&
	[ "$(grep -c "GET /cached.dtb " "$TMP/http.log")" = 1 ] &&
	[ "$(grep -c "GET /Image " "$TMP/http.log")" -ge 2 ] &&
	grep -q "dtb: $URL/cached.dtb is in the download cache" "$TMP/run.out" &&
	cmp "$WWW/cached.dtb" "$LAB/state/tftp/$second/cached.dtb" &&
	cmp "$WWW/cached.dtb" "$LAB/state/tftp/$first/cached.dtb" &&
	[ "$(stat -c %h "$LAB/state/tftp/$second/cached.dtb")" -ge 2 ]
'

test_expect_success 'a cached file deleted by the admin is downloaded again' '
	rm -f "$LAB/state/cache/"* &&
	run_job "$TMP/cache.yaml" 0 &&
	[ "$(grep -c "GET /cached.dtb " "$TMP/http.log")" = 2 ]
'

test_expect_success 'file URLs outside artifact_dir are refused (job error)' '
	deploy_job "$TMP/file.yaml" "    kernel: {url: file:///etc/passwd}" &&
	run_job "$TMP/file.yaml" 2 &&
	grep -q "incomplete (job): artifact URL check before the board was powered: kernel .file:///etc/passwd.: not below the lab.s artifact directory" "$TMP/run.out"
'

test_done
