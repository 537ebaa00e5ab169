# SPDX-License-Identifier: GPL-2.0-or-later
# tests/backend-lib.sh -- helpers for the results backend tests (t7xxx): a recording
# HTTP receiver, jobs submitted through the API, waiting for deliveries.
#
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/backend-lib.sh"
#   recorder_start rec            # $REC_PORT, records in $TMP/rec.jsonl, mode file $TMP/rec.mode
#   recorder_mode rec 500         # ok | 500 | 404 | slow
#   recorder_stop rec             # kill it (the port stays reserved for recorder_start)

RECORDER=$TOP/tests/helper/recorder.py
STREAM_CHECK=$TOP/tests/helper/stream-check.py
KCIDB_VALIDATE=$TOP/tests/helper/kcidb-validate.py

# recorder_start NAME [PORT]: start (or restart on its old port) recorder NAME.
recorder_start() {
	local name=$1 port=${2:-}
	local var=REC_PORT_$name
	[ -n "$port" ] || port=${!var:-$(free_port)}
	printf -v "$var" %s "$port"
	[ "$name" = rec ] && REC_PORT=$port
	[ -f "$TMP/$name.mode" ] || echo ok >"$TMP/$name.mode"
	$PY "$RECORDER" --port "$port" --out "$TMP/$name.jsonl" --control "$TMP/$name.mode" \
		2>>"$TMP/$name.err" &
	printf -v "REC_PID_$name" %s $!
	at_exit "kill $! 2>/dev/null"
	wait_for "curl -s --max-time 5 http://127.0.0.1:$port/health" 10
}

recorder_stop() {
	local var=REC_PID_$1
	kill "${!var}" 2>/dev/null
	wait "${!var}" 2>/dev/null || true
}

recorder_mode() {
	echo "$2" >"$TMP/$1.mode"
}

job_state() {
	curl -sf "$LABD_URL/api/v1/jobs/$1" | $PY -c 'import json, sys; print(json.load(sys.stdin)["state"])'
}

# wait_job ID [TIMEOUT_S]: until the job finished.
wait_job() {
	wait_for "[ \"\$(job_state $1)\" = finished ]" "${2:-120}"
}

# delivered NAME JOB [KIND]: whether recorder NAME accepted event KIND (finished) of JOB.
delivered() {
	$PY - "$TMP/$1.jsonl" "$2" "${3:-finished}" <<'PY'
import json, sys
path, job, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for line in open(path):
    r = json.loads(line)
    if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
        continue
    try:
        items = json.loads(r["body"]).get("items", [])
    except ValueError:
        continue
    for it in items:
        if it.get("job") == job and it.get("type") == "event" and it.get("kind") == kind:
            sys.exit(0)
sys.exit(1)
PY
}

# wait_delivered NAME JOB [TIMEOUT_S]: until the job's "finished" event reached NAME.
wait_delivered() {
	wait_for "delivered $1 $2" "${3:-60}"
}

# refused_once NAME: no item refused by NAME (4xx) was ever sent again.
refused_once() {
	$PY - "$TMP/$1.jsonl" <<'PY'
import json, sys
seen = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["method"] != "POST" or "body" not in r:
        continue
    for it in json.loads(r["body"]).get("items", []):
        key = (it["type"], it["job"], it["seq"])
        if key in seen and seen[key] == 404:
            sys.exit("item %s sent again after a 404" % (key,))
        seen[key] = r["status"]
PY
}

# count_requests NAME STATUS: requests NAME answered with STATUS.
count_requests() {
	grep -c "\"status\": $2," "$TMP/$1.jsonl" 2>/dev/null || true
}

# sim_job FILE: a minimal boot and a few shell commands: $SPEW bytes of noise, sleep $SLEEP.
sim_job() {
	write_job "$1" <<JOB
job_name: backend test
device_type: sim-uboot
timeouts: {job: {minutes: 3}}
actions:
$(sim_minimal_boot)
- test:
    interactive:
    - name: smoke
      prompts: ['root@sim:~# ']
      script:
      - command: spew ${SPEW:-3000}
        name: noise
      - command: uname -r
        name: kernel-release
        successes: [{message: '6.1.0-sim'}]
      - command: sleep ${SLEEP:-0}
JOB
}

# rich_job FILE: results of every kind: LAVA test cases (pass, fail, skip, a
# measurement), KTAP (nested, a failure), a kernel warning; KCIDB metadata.
rich_job() {
	write_job "$1" <<'JOB'
job_name: rich results
device_type: sim-uboot
timeouts: {job: {minutes: 3}}
metadata:
  kcidb:
    checkout: {id: 'mainline-7dc6fd0f', tree_name: mainline,
               git_repository_url: 'https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git',
               git_commit_hash: 7dc6fd0f3b8404d2c45a2a2b7d2c4c4c3b2a1f0e, git_repository_branch: master}
    build: {id: 'build-1234', architecture: arm64, compiler: gcc-12, config_name: defconfig}
    compatible: ['simboard,sim', 'arm,armv8']
actions:
- boot:
    method: minimal
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    definitions:
    - from: inline
      name: smoke
      path: inline/smoke.yaml
      repository:
        metadata:
          format: Lava-Test Test Definition 1.0
          name: smoke
          description: results of every kind
        run:
          steps:
          - lava-test-case pass-case --result pass
          - lava-test-case fail-case --result fail
          - lava-test-case speed --result pass --measurement 12.5 --units MB/s
          - lava-test-case in-set --result skip
          - ktap
          - warn
JOB
}

# events_delivered REC_JSONL JOB SEQS: the receiver recording REC_JSONL got the
# events of job JOB whose numbers the JSON list in file SEQS holds, and no
# other; an event it got twice (a replay) got twice the same
events_delivered() {
	$PY - "$@" <<'PY'
import json, sys
path, job, stored = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
seen = {}
for line in open(path):
    r = json.loads(line)
    if r["method"] != "POST" or r["status"] != 200 or "body" not in r:
        continue
    for it in json.loads(r["body"]).get("items", []):
        if it.get("job") != job or it.get("type") != "event":
            continue
        if it["seq"] in seen and seen[it["seq"]] != it:
            sys.exit("event %d delivered twice, differently" % it["seq"])
        seen[it["seq"]] = it
if sorted(seen) != sorted(stored):
    sys.exit("job %d: events delivered %s, the store has %s" % (job, sorted(seen), sorted(stored)))
print("job %d: %d events delivered" % (job, len(seen)))
PY
}
