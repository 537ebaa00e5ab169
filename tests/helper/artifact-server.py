#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""artifact-server.py -- an artifact server that misbehaves on request, for the
URL checks labd makes before a board is touched (tests/t1210-whose-fault.sh).

    artifact-server.py PORT DIR

Serves the files of DIR, one thread per request, and logs each request as
"METHOD PATH STATUS" on stdout.  Paths that choose an answer:
    /status/NNN/...   answers NNN (HEAD and GET)
    /slow/S/FILE      waits S seconds, then serves FILE
    /nohead/FILE      HEAD is 501 (a server without HEAD); GET serves FILE
"""
import http.server
import os
import sys
import time


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def answer(self, head):
        parts = self.path.strip("/").split("/")
        if parts[0] == "status":
            self.send_response(int(parts[1]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return int(parts[1])
        if parts[0] == "slow":
            time.sleep(float(parts[1]))
            self.path = "/" + "/".join(parts[2:])
        elif parts[0] == "nohead":
            if head:
                self.send_response(501)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return 501
            self.path = "/" + "/".join(parts[1:])
        f = super().send_head()
        if f:
            if not head:
                self.copyfile(f, self.wfile)
            f.close()
            return 200
        return 404

    def do_HEAD(self):
        status = self.answer(True)
        print("HEAD %s %d" % (self.path, status), flush=True)

    def do_GET(self):
        status = self.answer(False)
        print("GET %s %d" % (self.path, status), flush=True)


def main():
    port, root = int(sys.argv[1]), sys.argv[2]
    os.chdir(root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
