#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# multihost-stats.py -- bench-multihost's figures, once its jobs (sent by
# tests/helper/submit-jobs) are done.
#
#   multihost-stats.py stats SUBMITTED STATE_DIR... -- SIM_DIR... -- URL... :
#       from the first host's API (every host shows the lab's jobs), the
#       jobs' logs in the hosts' state directories and the simulated boards'
#       own journals: claims per second, latency from the submission (the
#       client sending it) to the claim (the job's first line in its log on
#       the host that ran it) and to the board's power-on (the simulator's
#       record of its power-on command, the job the one the board ran next;
#       p50, p99), jobs lost, duplicate runs, the wall time from the first
#       submission to the last job's end, as "key value" lines.  Every
#       time is CLOCK_REALTIME of this machine, in microseconds or better.
#       Also the latency from the job's "submitted" time (labd's clock as it
#       queued the job) to the power-on: the HTTP request's wait left out.
import datetime
import json
import os
import sys
import urllib.request


def iso(t):
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


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


def job_start(state_dirs, jid):
    """The first line of job @jid's log on the host that ran it: its claim done."""
    for d in state_dirs:
        try:
            with open(os.path.join(d, "jobs", str(jid), "labd.log")) as f:
                return iso(f.readline().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return None


def board_runs(sim_dirs):
    """{k: [power-on time of the board before its run of RUN-mh-k, ...]} from the journals."""
    runs = {}
    for d in sim_dirs:
        power = {}
        try:
            lines = open(os.path.join(d, "journal")).read().splitlines()
        except OSError:
            continue
        for line in lines:
            w = line.split()
            if len(w) == 3 and w[1] == "power-on":
                power[w[0]] = int(w[2]) / 1e6
            elif len(w) >= 2 and w[1].startswith("RUN-mh-"):
                runs.setdefault(int(w[1][7:]), []).append(power.get(w[0]))
    return runs


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


def stats(submitted, state_dirs, sim_dirs, urls):
    subs = [line.split() for line in open(submitted)]
    ids = {int(s[1]) for s in subs}
    jobs = [j for j in jobs_of(urls[0]) if j["id"] in ids]
    runs = board_runs(sim_dirs)
    runs = {k: runs.get(k, []) for k in (int(s[0]) for s in subs)}
    queued_at = {j["id"]: iso(j["submitted"]) for j in jobs if j.get("submitted")}
    lat, claim, answer, boot, queued, first, last = [], [], [], [], [], None, None
    for k, jid, sent, answered in subs:
        k, jid, sent, answered = int(k), int(jid), float(sent), float(answered)
        answer.append(answered - sent)
        first = sent if first is None else min(first, sent)
        started = job_start(state_dirs, jid)
        if started is not None:
            claim.append(started - sent)
        on = (runs.get(k) or [None])[0]
        if on is not None:
            lat.append(on - sent)
            if jid in queued_at:
                queued.append(on - queued_at[jid])
            last = on if last is None else max(last, on)
            if started is not None:
                boot.append(on - started)
    finished = sum(1 for j in jobs if j["state"] == "finished" and j.get("health") == "complete")
    ends = [iso(j["ended"]) for j in jobs if j.get("ended")]
    print("wall_s %.2f" % (max(ends) - first if ends and first is not None else 0))
    print("jobs %d" % len(jobs))
    print("complete %d" % finished)
    print("lost %d" % (len(subs) - finished))
    print("duplicates %d" % sum(len(r) - 1 for r in runs.values() if len(r) > 1))
    print("claims_per_s %.1f" % (len(lat) / (last - first) if lat and last > first else 0))
    for key, v in (("answer", answer), ("claim", claim), ("latency", lat), ("power", boot),
                   ("queued", queued)):
        print("%s_p50_ms %.0f" % (key, pct(v, 50) * 1000))
        print("%s_p99_ms %.0f" % (key, pct(v, 99) * 1000))
        print("%s_max_ms %.0f" % (key, max(v or [float("nan")]) * 1000))


if __name__ == "__main__":
    i = sys.argv.index("--")
    j = sys.argv.index("--", i + 1)
    stats(sys.argv[2], sys.argv[3:i], sys.argv[i + 1:j], sys.argv[j + 1:])
