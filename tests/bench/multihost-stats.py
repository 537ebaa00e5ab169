#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# multihost-stats.py -- bench-multihost's jobs: submit them, then measure.
#
#   multihost-stats.py submit N FIRST OUT [--rate R] URL... -- N jobs (job
#       file on stdin, JOBNUM their numbers k, FIRST to FIRST + N - 1) spread
#       over the URLs, by 16 client processes at once (each with a keep-alive
#       connection to each host, started and connected before the first
#       submission), or with --rate one every 1/R s whatever
#       the answers (a lab with room for them: the claim's own latency); OUT
#       gets a line "k id sent answered" per job, the client's clock
#       (CLOCK_REALTIME, s) as it sent the request and as it had the answer;
#       prints the wall time and the clients' CPU time
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
import datetime
import http.client
import json
import multiprocessing
import os
import resource
import sys
import threading
import time
import urllib.parse
import urllib.request


def iso(t):
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


def post_job(conn, body):
    """POST @body to /api/v1/jobs on the keep-alive @conn: (job id, sent, answered)."""
    t = time.time()
    conn.request("POST", "/api/v1/jobs", body=body)
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 201 and resp.status != 200:
        raise RuntimeError("HTTP %d: %s" % (resp.status, data[:200]))
    return json.loads(data)["id"], t, time.time()


def post_retrying(conn, body):
    """post_job(), tried 20 times (the connection opened again) before its error is raised."""
    for _ in range(20):
        try:
            return post_job(conn, body)
        except Exception as e:  # noqa: BLE001 -- retried, then reported
            err = e
            conn.close()
            time.sleep(0.5)
    raise err


def connection(url):
    return http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=60)


def submit_worker(k, n, first, urls, job, ready, results):
    """Client @k of 16, a process of its own (no GIL shared with the others), one
    keep-alive connection per host, opened before the burst (@ready, a barrier
    of all clients and the parent: the burst measures labd, not 16 clients
    starting): its jobs k, k + 16, ... (@results gets its (sent, errors))."""
    conns = [connection(u) for u in urls]
    for c in conns:
        c.connect()
    sent, errors = {}, []
    ready.wait()
    for i in range(k, n, 16):
        try:
            sent[first + i] = post_retrying(conns[i % len(urls)],
                                            job.replace(b"JOBNUM", b"%d" % (first + i)))
        except Exception as e:  # noqa: BLE001 -- reported
            errors.append(str(e))
    results.put((sent, errors))


def submit_one(url, job, i, first, sent, errors, lock):
    """Job @i on a connection of its own (the steady phase: a thread per job)."""
    try:
        r = post_retrying(connection(url), job.replace(b"JOBNUM", b"%d" % (first + i)))
        with lock:
            sent[first + i] = r
    except Exception as e:  # noqa: BLE001 -- reported
        with lock:
            errors.append(str(e))


def submit(n, first, out, urls, job, rate=None):
    errors, lock, sent = [], threading.Lock(), {}

    if not rate:
        ready, results = multiprocessing.Barrier(17), multiprocessing.Queue()
        clients = [multiprocessing.Process(target=submit_worker, args=(
            k, n, first, urls, job, ready, results)) for k in range(16)]
        for c in clients:
            c.start()
        ready.wait()
    t0 = time.time()
    if rate:
        threads = []
        for i in range(n):
            time.sleep(max(0, t0 + i / rate - time.time()))
            threads.append(threading.Thread(target=submit_one, args=(
                urls[i % len(urls)], job, i, first, sent, errors, lock)))
            threads[-1].start()
        for t in threads:
            t.join()
    else:
        for _ in clients:
            s, e = results.get()
            sent.update(s)
            errors += e
        for c in clients:
            c.join()
    print("submit_s %.2f" % (time.time() - t0))
    cpu = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    print("client_cpu_s %.2f" % sum(r.ru_utime + r.ru_stime for r in cpu))
    with open(out, "w") as f:
        for k in sorted(sent):
            f.write("%d %d %.6f %.6f\n" % ((k,) + sent[k]))
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
    if sys.argv[1] == "submit":
        rate = None
        urls = sys.argv[5:]
        if urls[0] == "--rate":
            rate, urls = float(urls[1]), urls[2:]
        submit(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], urls,
               sys.stdin.buffer.read(), rate)
    else:
        i = sys.argv.index("--")
        j = sys.argv.index("--", i + 1)
        stats(sys.argv[2], sys.argv[3:i], sys.argv[i + 1:j], sys.argv[j + 1:])
