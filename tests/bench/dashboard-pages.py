#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# dashboard-pages.py -- bench-dashboard's open browser tabs: what web/app.js asks labd for
#
#   dashboard-pages.py URL TOKEN KIND...   until SIGTERM; then prints what it asked for
#
# Each KIND is one tab, doing what app.js does on that page, with its delays:
#   boards  GET /, app.js, style.css, /whoami, /health, /devices?recent=20, /queue, and
#           the event stream; every job event reloads /queue (debounced 500 ms)
#   jobs    the job list: /jobs?limit=50, reloaded 1 s after the last job event
#           queued, started, finished or requeued
#   job     a running job's page: /jobs/N, /jobs/N/results, /jobs/N/log?tail=500, then
#           the log followed live (?follow=1&offset=END); its events reload /jobs/N
#           (debounced 300 ms) and its results; when the job ends the tab reloads the
#           job and, 1 s later, opens the newest running job (a person watching jobs)
# Every tab keeps one event stream open and sends TOKEN (logged in, like app.js: a
# connection with a valid token is not held to the limits of anonymous clients).
# Connections are kept alive like a browser's.
import http.client
import json
import resource
import signal
import sys
import threading
import time
import urllib.parse

API = "/api/v1"
stop = threading.Event()
lock = threading.Lock()
stats = {"requests": 0, "errors": 0, "bytes": 0, "events": 0, "log_bytes": 0,
         "jobs_followed": 0}


def count(key, n=1):
    with lock:
        stats[key] += n


class Tab:
    def __init__(self, url, token, kind):
        u = urllib.parse.urlsplit(url)
        self.headers = {"Authorization": "Bearer " + token}
        self.host, self.port, self.kind = u.hostname, u.port, kind
        self.conn = None
        self.cv = threading.Condition()
        self.due = {}		# action -> monotonic time it runs (debounced)
        self.job = 0
        self.following = None

    def connect(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=600)

    def get(self, path, raw=False):
        """One GET on the tab's keep-alive connection; the body, parsed unless @raw."""
        for attempt in (0, 1):
            try:
                if not self.conn:
                    self.conn = self.connect()
                self.conn.request("GET", path, headers=self.headers)
                resp = self.conn.getresponse()
                data = resp.read()
                break
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt or stop.is_set():
                    return None, None
        count("requests")
        count("bytes", len(data))
        if resp.status >= 400:
            count("errors")
        if raw:
            return resp, data
        try:
            return resp, json.loads(data) if data else None
        except ValueError:
            return resp, None

    def debounce(self, action, delay):
        with self.cv:
            self.due[action] = time.monotonic() + delay
            self.cv.notify()

    # ---- the event stream ----

    def stream(self):
        conn = self.connect()
        conn.request("GET", API + "/stream", headers=self.headers)
        resp = conn.getresponse()
        if resp.status != 200:
            count("errors")
        event = "message"
        while not stop.is_set():
            line = resp.readline()
            if not line:
                break
            line = line.rstrip(b"\n")
            if line.startswith(b"event: "):
                event = line[7:].decode()
            elif line.startswith(b"data: "):
                count("events")
                self.on_event(event, json.loads(line[6:]))
            elif not line:
                event = "message"

    def on_event(self, event, doc):
        if event != "job":
            return
        if self.kind == "boards":
            self.debounce("queue", 0.5)
        elif self.kind == "jobs" and doc.get("kind") in ("queued", "started", "finished",
                                                         "requeued"):
            self.debounce("jobs", 1.0)
        elif self.kind == "job" and doc.get("job") == self.job:
            if doc.get("kind") in ("result", "finished"):
                self.debounce("results", 0)
            if doc.get("kind") != "result":
                self.debounce("job", 0.3)

    # ---- a job page ----

    def open_job(self):
        _, jobs = self.get(API + "/jobs?state=running&limit=1")
        if not jobs:
            self.debounce("open", 2.0)
            return
        self.job = jobs[0]["id"]
        count("jobs_followed")
        self.get(f"{API}/jobs/{self.job}")
        self.get(f"{API}/jobs/{self.job}/results")
        resp, _ = self.get(f"{API}/jobs/{self.job}/log?tail=500", raw=True)
        size = int(resp.getheader("X-Log-Size") or 0) if resp else 0
        threading.Thread(target=self.follow, args=(self.job, size), daemon=True).start()

    def follow(self, job, offset):
        conn = self.connect()
        conn.request("GET", f"{API}/jobs/{job}/log?follow=1&offset={offset}",
                     headers=self.headers)
        resp = conn.getresponse()
        if resp.status != 200:
            count("errors")
        while not stop.is_set():
            data = resp.read1(65536)
            if not data:
                break
            count("log_bytes", len(data))
        conn.close()
        if job == self.job:
            self.debounce("job", 0)
            self.debounce("results", 0)
            self.debounce("open", 1.0)

    # ---- the tab ----

    def load(self):
        for path in ("/", "/static/app.js", "/static/style.css"):
            self.get(path, raw=True)
        self.get(API + "/whoami")
        self.get(API + "/health")
        if self.kind == "boards":
            self.get(API + "/devices?recent=20")
            self.get(API + "/queue")
        elif self.kind == "jobs":
            self.get(API + "/jobs?limit=50")
        else:
            self.open_job()

    def run(self):
        self.load()
        threading.Thread(target=self.stream, daemon=True).start()
        actions = {
            "queue": lambda: self.get(API + "/queue"),
            "jobs": lambda: self.get(API + "/jobs?limit=50"),
            "job": lambda: self.get(f"{API}/jobs/{self.job}"),
            "results": lambda: self.get(f"{API}/jobs/{self.job}/results"),
            "open": self.open_job,
        }
        while not stop.is_set():
            with self.cv:
                now = time.monotonic()
                ready = [a for a, t in self.due.items() if t <= now]
                for a in ready:
                    del self.due[a]
                if not ready:
                    wait = min(self.due.values(), default=now + 1) - now
                    self.cv.wait(min(wait, 1.0))
                    continue
            for a in ready:
                actions[a]()


def main():
    url, token, kinds = sys.argv[1], sys.argv[2], sys.argv[3:]
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for kind in kinds:
        threading.Thread(target=Tab(url, token, kind).run, daemon=True).start()
    while not stop.is_set():
        stop.wait(1)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    with lock:
        stats["cpu"] = f"{ru.ru_utime + ru.ru_stime:.2f}"
        print(" ".join(f"{k}={v}" for k, v in stats.items()), flush=True)


main()
