#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# ws-check.py -- open a WebSocket on labd (127.0.0.1:PORT PATH), check the
# handshake (101, Sec-WebSocket-Accept of our key) and read frames until
# their payloads hold TEXT (exit 0) or 10 s pass (exit 1).  For the tests
# of the browser console (doc/console.md) through another host.
import base64
import hashlib
import os
import socket
import sys
import time

port, path, want = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
key = base64.b64encode(os.urandom(16)).decode()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
           "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n\r\n"
           % (path, key)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    d = s.recv(4096)
    if not d:
        sys.exit("closed before the answer: %r" % buf)
    buf += d
head, buf = buf.split(b"\r\n\r\n", 1)
print(head.decode(errors="replace"))
accept = base64.b64encode(hashlib.sha1(
    (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
if not head.startswith(b"HTTP/1.1 101") or accept.encode() not in head:
    sys.exit("no switch, or a wrong Sec-WebSocket-Accept")
data, end = b"", time.time() + 10
while time.time() < end and want not in data:
    while len(buf) >= 2:
        n, off = buf[1] & 0x7f, 2
        if n == 126:
            n, off = int.from_bytes(buf[2:4], "big"), 4
        elif n == 127:
            n, off = int.from_bytes(buf[2:10], "big"), 10
        if len(buf) < off + n:
            break
        data += buf[off:off + n]
        buf = buf[off + n:]
    if want in data:
        break
    d = s.recv(65536)
    if not d:
        break
    buf += d
sys.exit(0 if want in data else "not seen in %d bytes" % len(data))
