#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# console-client.py -- a raw client of labd's console protocol (doc/console.md) for tests
#
#   console-client.py PORT BOARD [--token T] [--replay N] [--send TEXT]... [--for SECONDS]
#                     [--out FILE] [--until TEXT] [--no-read [--rcvbuf BYTES]]
#
# Upgrades GET /api/v1/devices/BOARD/console on 127.0.0.1:PORT, sends each
# --send as a 'd' frame (the keys typed), then reads frames: console bytes go
# to --out (or stdout), notices to stderr as "notice: TEXT".  It stops after
# --for seconds, once --until TEXT was seen in the console bytes, or when labd
# closes the connection (exit 3).  --no-read never reads (a stuck viewer,
# with a small receive buffer): it sleeps --for seconds (or until SIGUSR1), then
# reports whether labd closed the connection in the meantime ("closed" or "open").
import argparse
import signal
import socket
import struct
import sys
import time


def connect(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if args.no_read:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
    s.connect(("127.0.0.1", args.port))
    q = "" if args.replay is None else "?replay=%d" % args.replay
    head = ("GET /api/v1/devices/%s/console%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Connection: Upgrade\r\nUpgrade: labd-console\r\n" % (args.board, q))
    if args.token:
        head += "Authorization: Bearer %s\r\n" % args.token
    s.sendall((head + "\r\n").encode())
    return s


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            sys.exit("labd closed the connection before answering")
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    status = int(head.split()[1])
    if status != 101:
        print("status %d: %s" % (status, rest.decode(errors="replace")), file=sys.stderr)
        sys.exit(1)
    return rest


def frames(buf):
    """Complete frames of buf, and what is left."""
    out = []
    while len(buf) >= 3:
        kind, n = buf[0:1], struct.unpack(">H", buf[1:3])[0]
        if len(buf) < 3 + n:
            break
        out.append((kind, buf[3:3 + n]))
        buf = buf[3 + n:]
    return out, buf


class Wake(Exception):
    pass


def wake(signum, frame):
    raise Wake()


def stuck(s, args):
    try:
        time.sleep(args.seconds)
    except Wake:
        pass
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    s.setblocking(False)
    # a dropped viewer finds the end of the stream behind what labd had sent
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                print("closed")
                return 0
    except BlockingIOError:
        print("open")
        return 0
    except ConnectionError:
        print("closed")
        return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("board")
    p.add_argument("--token")
    p.add_argument("--replay", type=int)
    p.add_argument("--send", action="append", default=[])
    p.add_argument("--for", dest="seconds", type=float, default=2)
    p.add_argument("--out")
    p.add_argument("--until")
    p.add_argument("--no-read", action="store_true")
    p.add_argument("--rcvbuf", type=int, default=4096)
    args = p.parse_args()

    if args.no_read:
        signal.signal(signal.SIGUSR1, wake)
    s = connect(args)
    if args.no_read:
        return stuck(s, args)
    buf = read_head(s)
    for text in args.send:
        data = text.encode().decode("unicode_escape").encode("latin-1")
        s.sendall(b"d" + struct.pack(">H", len(data)) + data)
    out = open(args.out, "wb") if args.out else sys.stdout.buffer
    seen = b""
    end = time.time() + args.seconds
    s.settimeout(0.1)
    while time.time() < end:
        got, buf = frames(buf)
        for kind, payload in got:
            if kind == b"d":
                out.write(payload)
                seen = (seen + payload)[-65536:]
            elif kind == b"n":
                print("notice: " + payload.decode(errors="replace"), file=sys.stderr)
        out.flush()
        if args.until and args.until.encode() in seen:
            return 0
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        if not d:
            got, buf = frames(buf)
            for kind, payload in got:
                if kind == b"d":
                    out.write(payload)
                elif kind == b"n":
                    print("notice: " + payload.decode(errors="replace"), file=sys.stderr)
            out.flush()
            print("closed by labd", file=sys.stderr)
            return 3
        buf += d
    return 2 if args.until else 0


if __name__ == "__main__":
    sys.exit(main())
