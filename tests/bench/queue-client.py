#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# queue-client.py -- bench-queue's HTTP client: one keep-alive connection to labd
#
#   queue-client.py URL submit JOB_FILE N          submit N jobs; prints "seconds"
#   queue-client.py URL states STATE BOARD...      set each board's admin state
#   queue-client.py URL wait-idle TIMEOUT          until no job runs
#   queue-client.py URL wait-done TOTAL N TIMEOUT  until N of TOTAL submitted jobs
#                                                  finished (TOTAL - queued - running)
#   queue-client.py URL latency PATH N             GET PATH N times; prints "p50_ms p99_ms"
#   queue-client.py URL healths                    finished jobs by health, every page:
#                                                  prints "complete=N incomplete=M ..."
import http.client
import json
import sys
import time
import urllib.parse


class Client:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)

    def call(self, method, path, body=None, ctype=None):
        headers = {"Content-Type": ctype} if ctype else {}
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise SystemExit(f"{method} {path}: {resp.status} {data[:200]!r}")
        return json.loads(data) if data else None

    def health(self):
        return self.call("GET", "/api/v1/health")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    c = Client(sys.argv[1])
    cmd, args = sys.argv[2], sys.argv[3:]
    if cmd == "submit":
        body = open(args[0], "rb").read()
        n = int(args[1])
        t0 = time.monotonic()
        for _ in range(n):
            c.call("POST", "/api/v1/jobs", body, "application/yaml")
        print(f"{time.monotonic() - t0:.3f}")
    elif cmd == "states":
        for board in args[1:]:
            c.call("POST", f"/api/v1/devices/{board}/state",
                   json.dumps({"state": args[0], "reason": "bench"}), "application/json")
    elif cmd == "wait-idle":
        deadline = time.monotonic() + float(args[0])
        while c.health()["running"]:
            if time.monotonic() > deadline:
                raise SystemExit("jobs still running")
            time.sleep(0.1)
    elif cmd == "wait-done":
        total, n, deadline = int(args[0]), int(args[1]), time.monotonic() + float(args[2])
        while True:
            h = c.health()
            if total - h["queued"] - h["running"] >= n:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"only {total - h['queued'] - h['running']} jobs finished")
            time.sleep(0.05)
    elif cmd == "healths":
        counts, before = {}, ""
        while True:
            page = c.call("GET", f"/api/v1/jobs?state=finished&limit=1000{before}")
            for j in page:
                counts[j["health"]] = counts.get(j["health"], 0) + 1
            if len(page) < 1000:
                break
            before = f"&before={page[-1]['id']}"
        print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none=0")
    elif cmd == "latency":
        times = []
        for _ in range(int(args[1])):
            t0 = time.monotonic()
            c.call("GET", args[0])
            times.append((time.monotonic() - t0) * 1000)
        print(f"{percentile(times, 50):.2f} {percentile(times, 99):.2f}")
    else:
        raise SystemExit(f"unknown command {cmd}")


main()
