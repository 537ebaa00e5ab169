#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# recorder.py -- an HTTP receiver for the results backend tests and benchmarks
#
#   recorder.py --port PORT --out FILE.jsonl [--mode ok|500|404|slow] [--control FILE]
#
# Answers every request on 127.0.0.1:PORT and appends one JSON line per
# request to FILE: {"t": arrival time (CLOCK_REALTIME ns, taken when the whole
# body is in), "method", "path", "headers", "status" (what it answered),
# "body" (the body as text, or "body_b64" when it is not UTF-8)}.
#
# Answers, by mode (the first line of --control FILE, when it exists, wins over
# --mode, so a test can change it while the recorder runs):
#   ok     POST: 200 {"status": "ok", "id": "<n>"}; GET /status: 200
#          {"id": ..., "status": "processed"}; other GETs 200 {}
#   500    500 {"error": "down for maintenance"} (not recorded as delivered)
#   404    404 {"error": "no such stream"}
#   slow   as ok, after 2 s
# The line is flushed before the answer is sent, so a client that got an
# answer finds its request in FILE.
import argparse
import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
counter = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The answer goes out in two writes (headers, body): with Nagle's algorithm
    # the second waits for the client's delayed ACK, 40 ms per request.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def mode(self):
        try:
            with open(self.server.control) as f:
                m = f.readline().strip()
                if m:
                    return m
        except (OSError, TypeError):
            pass
        return self.server.mode

    def answer(self, mode):
        if mode == "500":
            return 500, {"error": "down for maintenance"}
        if mode == "404":
            return 404, {"error": "no such stream"}
        if self.command == "GET" and self.path.startswith("/status"):
            q = self.path.partition("id=")[2]
            return 200, {"id": q, "status": "processed"}
        if self.command == "POST":
            with lock:
                counter[0] += 1
                n = counter[0]
            return 200, {"status": "ok", "id": "%032d" % n}
        return 200, {}

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        t = time.clock_gettime_ns(time.CLOCK_REALTIME)
        mode = self.mode()
        if mode == "slow":
            time.sleep(2)
        status, reply = self.answer(mode)
        rec = {"t": t, "method": self.command, "path": self.path,
               "headers": {k: v for k, v in self.headers.items()}, "status": status}
        try:
            rec["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            rec["body_b64"] = base64.b64encode(body).decode()
        line = json.dumps(rec) + "\n"
        with lock:
            self.server.out.write(line)
            self.server.out.flush()
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = handle_any
    do_GET = handle_any
    do_PUT = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--control")
    a = ap.parse_args()
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.out = open(a.out, "a")
    srv.mode = a.mode
    srv.control = a.control
    print("recorder listening on port %d" % a.port, file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
