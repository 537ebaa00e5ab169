#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# multihost-stats.py -- bench-multihost's jobs: submit them, then measure.
#
#   multihost-stats.py submit N URL... -- N jobs (job file on stdin) spread over
#       the URLs, 16 at a time; prints the wall time of the submissions
#   multihost-stats.py stats JOURNAL STATE_DIR... -- URL... : from the first
#       host's API (every host shows the lab's jobs) and the jobs' logs in the
#       hosts' state directories: claims per second, latency from submit to
#       the claim (the job's start) and to the board's power-on (the power
#       command done; p50, p99), jobs lost, duplicate runs (the boards'
#       own journal), as "key value" lines
import datetime
import json
import os
import sys
import threading
import time
import urllib.request
from collections import Counter


def iso(t):
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


def submit(n, urls, job):
    errors, lock = [], threading.Lock()

    def worker(k):
        for i in range(k, n, 16):
            req = urllib.request.Request(urls[i % len(urls)] + "/api/v1/jobs", method="POST",
                                         data=job.replace(b"JOBNUM", b"%d" % i))
            for _ in range(20):
                try:
                    urllib.request.urlopen(req, timeout=60).read()
                    break
                except Exception as e:  # noqa: BLE001 -- retried, then reported
                    err = e
                    time.sleep(0.5)
            else:
                with lock:
                    errors.append(str(err))
    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("submit_s %.2f" % (time.time() - t0))
    if errors:
        sys.exit("%d submissions failed: %s" % (len(errors), errors[0]))


def jobs_of(url):
    jobs, before = [], 0
    while True:
        page = json.load(urllib.request.urlopen(
            url + "/api/v1/jobs?limit=1000" + ("&before=%d" % before if before else ""),
            timeout=60))
        jobs += page
        if len(page) < 1000:
            return jobs
        before = min(j["id"] for j in page)


def power_on(state_dirs, jid):
    for d in state_dirs:
        try:
            with open(os.path.join(d, "jobs", str(jid), "labd.log")) as f:
                for line in f:
                    if " phase " in line and "power-on" in line:
                        return iso(line.split()[0])
        except OSError:
            continue
    return None


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


def stats(journal, state_dirs, urls):
    jobs = jobs_of(urls[0])
    lat, claim, first_sub, last_on = [], [], None, None
    for j in jobs:
        sub = iso(j["submitted"])
        if j.get("started"):
            claim.append(iso(j["started"]) - sub)
        on = power_on(state_dirs, j["id"])
        first_sub = sub if first_sub is None else min(first_sub, sub)
        if on is not None:
            lat.append(on - sub)
            last_on = on if last_on is None else max(last_on, on)
    runs = Counter(line.split()[1] for line in open(journal) if " RUN-" in line)
    finished = sum(1 for j in jobs if j["state"] == "finished" and j.get("health") == "complete")
    print("jobs %d" % len(jobs))
    print("complete %d" % finished)
    print("lost %d" % (len(jobs) - finished))
    print("duplicates %d" % sum(c - 1 for c in runs.values() if c > 1))
    print("claims_per_s %.1f" % (len(lat) / (last_on - first_sub) if lat else 0))
    print("claim_p50_ms %.0f" % (pct(claim, 50) * 1000))
    print("claim_p99_ms %.0f" % (pct(claim, 99) * 1000))
    print("latency_p50_ms %.0f" % (pct(lat, 50) * 1000))
    print("latency_p99_ms %.0f" % (pct(lat, 99) * 1000))


if __name__ == "__main__":
    if sys.argv[1] == "submit":
        submit(int(sys.argv[2]), sys.argv[3:], sys.stdin.buffer.read())
    else:
        i = sys.argv.index("--")
        stats(sys.argv[2], sys.argv[3:i], sys.argv[i + 1:])
