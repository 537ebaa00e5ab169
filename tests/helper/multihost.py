#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# multihost.py -- the jobs of the multi-host scenarios (t8010) and their checks.
#
#   multihost.py submit OUT URL,TYPE,N [URL,TYPE,N]...
#       N jobs of TYPE through each URL, 8 at a time; each job is named mh-<k>
#       (k unique over all) and runs `journal RUN-mh-<k>` on its board, then
#       one test case; "id name type" lines go to OUT.
#   multihost.py check SUBMITTED JOURNAL URL...
#       every job finished, once: each host's API shows the same jobs; every
#       job has its result and its log (read through every host); the boards'
#       own journal has one RUN line per job run, two at most for a job that
#       was requeued (attempt 2), never two on one board.  Prints figures.
import json
import sys
import threading
import urllib.request
from collections import Counter, defaultdict

JOB = """job_name: mh-{k}
device_type: {type}
timeouts: {{job: {{minutes: 3}}}}
actions:
- boot:
    method: minimal
    auto_login: {{login_prompt: 'login:', username: root}}
    prompts: ['root@sim:~# ']
- test:
    definitions:
    - from: inline
      name: mh
      path: inline/mh.yaml
      repository:
        metadata: {{format: Lava-Test Test Definition 1.0, name: mh}}
        run:
          steps:
          - journal RUN-mh-{k}
          - sleep 0.5
          - lava-test-case ran --result pass
"""


def get(url, raw=False):
    with urllib.request.urlopen(url, timeout=30) as r:
        data = r.read()
    return data if raw else json.loads(data)


def submit(out, specs):
    work, k = [], 0
    for spec in specs:
        url, typ, n = spec.split(",")
        for _ in range(int(n)):
            k += 1
            work.append((url, typ, k))
    lock, lines, errors = threading.Lock(), [], []

    def worker(items):
        for url, typ, k in items:
            req = urllib.request.Request(url + "/api/v1/jobs", method="POST",
                                         data=JOB.format(k=k, type=typ).encode())
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    jid = json.loads(r.read())["id"]
            except Exception as e:  # noqa: BLE001 -- reported, the test fails
                with lock:
                    errors.append("mh-%d: %s" % (k, e))
                continue
            with lock:
                lines.append("%d mh-%d %s" % (jid, k, typ))
    threads = [threading.Thread(target=worker, args=(work[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(out, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    if errors:
        sys.exit("submissions failed: " + "; ".join(errors[:5]))


def all_jobs(url):
    jobs, before = {}, 0
    while True:
        page = get(url + "/api/v1/jobs?limit=1000" + ("&before=%d" % before if before else ""))
        for j in page:
            jobs[j["id"]] = j
        if len(page) < 1000:
            return jobs
        before = min(j["id"] for j in page)


def check(submitted, journal, urls):
    subs = [line.split() for line in open(submitted)]
    ids = {int(i): name for i, name, _ in subs}
    views = [all_jobs(u) for u in urls]
    bad = []
    for u, v in zip(urls[1:], views[1:]):
        a = {i: (j["state"], j.get("health"), j.get("device")) for i, j in views[0].items()}
        b = {i: (j["state"], j.get("health"), j.get("device")) for i, j in v.items()}
        if a != b:
            bad.append("host %s shows other jobs than %s" % (u, urls[0]))
    jobs = views[0]
    runs = defaultdict(list)
    for line in open(journal):
        board, word = line.split()[:2]
        if word.startswith("RUN-"):
            runs[word[4:]].append(board)
    attempts = Counter()
    for i, name in ids.items():
        j = jobs.get(i)
        if not j:
            bad.append("job %d (%s) lost" % (i, name))
            continue
        full = get("%s/api/v1/jobs/%d" % (urls[i % len(urls)], i))
        attempts[full.get("attempt", 1)] += 1
        if j["state"] != "finished" or j.get("health") != "complete":
            bad.append("job %d: %s %s" % (i, j["state"], j.get("health")))
        boards = runs.get(name, [])
        limit = full.get("attempt", 1)
        if not boards or len(boards) > limit or len(set(boards)) != len(boards):
            bad.append("job %d (%s, attempt %s) ran on %s" % (i, name, limit, boards))
        if len(boards) > 1 or i % 10 == 0:  # the log and results through another host
            other = urls[(i + 1) % len(urls)]
            log = get("%s/api/v1/jobs/%d/log" % (other, i), raw=True)
            res = get("%s/api/v1/jobs/%d/results" % (other, i))
            if ("RUN-" + name).encode() not in log:
                bad.append("job %d: its log through %s lacks its run" % (i, other))
            if not any(r.get("name") == "ran" and r.get("result") == "pass" for r in res):
                bad.append("job %d: no result 'ran' through %s" % (i, other))
    extra = set(runs) - set(ids.values())
    if extra:
        bad.append("boards ran jobs never submitted: %s" % sorted(extra)[:5])
    print("# %d jobs, %d runs on the boards, attempts %s" %
          (len(ids), sum(len(b) for b in runs.values()), dict(attempts)))
    for b in bad[:20]:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "submit":
        submit(sys.argv[2], sys.argv[3:])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4:])
