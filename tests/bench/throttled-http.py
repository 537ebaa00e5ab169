#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# throttled-http.py PORT DIR RATE -- serve the files of DIR on 127.0.0.1:PORT
# (GET, HEAD), each response at most RATE bytes per second (0: as fast as
# loopback goes): an artifact server at the speed of a lab's network, for
# the benchmarks.  One thread per connection.
import http.server
import os
import sys
import time

CHUNK = 64 * 1024


class Handler(http.server.SimpleHTTPRequestHandler):
    rate = 0

    def copyfile(self, source, outputfile):
        t0, sent = time.monotonic(), 0
        while True:
            buf = source.read(CHUNK)
            if not buf:
                return
            outputfile.write(buf)
            sent += len(buf)
            if self.rate:
                ahead = sent / self.rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)

    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))


def main():
    port, root, rate = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    os.chdir(root)
    Handler.rate = rate
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
