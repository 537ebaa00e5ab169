#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""submit-burst.py -- N jobs submitted at the same instant through labd's hosts.

  submit-burst.py [--stop PID,...] N JOB.yaml URL...

Job i (named burst-i) goes to URL number i % len(URLs), through labd's API
(POST /api/v1/jobs), LAVA's REST API (POST /api/v0.2/jobs/) or LAVA's
XML-RPC (scheduler.jobs.submit), in turn.  Every client connects and sends
its request but for the last byte; once all are there, all send their last
byte together, so that each labd gets its share of the burst in one go.
With --stop, the labd processes PID,... are stopped (SIGSTOP) meanwhile and
continued once every last byte is sent: each finds all its requests
complete at once.  A 503 (the store away) is tried again, alone.  Prints one line
"burst-i ID" per job; exits 1 with the reason when one was not queued.
"""
import json
import os
import signal
import socket
import sys
import threading
import time
import xmlrpc.client
from urllib.parse import urlsplit

TIMEOUT = 120


def request(kind, host, text):
    """The HTTP request that submits @text, as bytes."""
    if kind == 'api':
        path, ctype, body = '/api/v1/jobs', 'application/yaml', text.encode()
    elif kind == 'rest':
        path, ctype = '/api/v0.2/jobs/', 'application/json'
        body = json.dumps({'definition': text}).encode()
    else:
        path, ctype = '/RPC2', 'text/xml'
        body = xmlrpc.client.dumps((text,), 'scheduler.jobs.submit').encode()
    head = ('POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n'
            'Connection: close\r\n\r\n' % (path, host, ctype, len(body)))
    return head.encode() + body


def answer(sock):
    """(status, body) of the answer on @sock, read to its end."""
    data = b''
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b'\r\n\r\n')
    return int(head.split(b' ', 2)[1]), body


def job_id(kind, body):
    if kind == 'api':
        return json.loads(body)['id']
    if kind == 'rest':
        return json.loads(body)['job_ids'][0]
    return xmlrpc.client.loads(body.decode())[0][0]


def submit(i, kind, url, text, barriers, out):
    u = urlsplit(url)
    req = request(kind, u.netloc, text)
    status, body = 0, b''
    for attempt in range(40):
        sock = socket.create_connection((u.hostname, u.port), timeout=TIMEOUT)
        sock.sendall(req[:-1])
        if attempt == 0:
            barriers[0].wait()
        sock.sendall(req[-1:])
        if attempt == 0:
            barriers[1].wait()
        status, body = answer(sock)
        sock.close()
        if status != 503:
            break
        time.sleep(0.5)
    try:
        out[i] = job_id(kind, body) if status in (200, 201) else None
    except (ValueError, KeyError, IndexError, xmlrpc.client.Fault):
        out[i] = None
    if out[i] is None:
        out[i] = 'failed %s %d %s' % (kind, status, body[:200])


def main():
    args, pids = sys.argv[1:], []
    if args[0] == '--stop':
        pids, args = [int(p) for p in args[1].split(',')], args[2:]
    n, template, urls = int(args[0]), open(args[1]).read(), args[2:]
    kinds = ('api', 'rest', 'rpc')

    def signal_all(sig):
        time.sleep(0.5 if sig == signal.SIGSTOP else 0)  # what was sent is read meanwhile
        for pid in pids:
            os.kill(pid, sig)
    barriers = (threading.Barrier(n, action=lambda: signal_all(signal.SIGSTOP)),
                threading.Barrier(n, action=lambda: signal_all(signal.SIGCONT)))
    out = [None] * n
    threads = [threading.Thread(target=submit,
                                args=(i, kinds[i % 3], urls[i % len(urls)],
                                      template.replace('@NAME@', 'burst-%d' % i), barriers, out))
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [o for o in out if not isinstance(o, int)]
    for i, o in enumerate(out):
        print('burst-%d %s' % (i, o))
    if bad:
        print('%d of %d not queued, the first: %s' % (len(bad), n, bad[0]), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
