#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# telnet-client.py -- a raw client of a labd telnet port for tests
#
#   telnet-client.py PORT [--send TEXT] [--until TEXT] [--until-closed] [--for SECONDS]
#
# Connects to 127.0.0.1:PORT, waits for the first bytes (labd's greeting),
# sends --send (Python escapes: "\r"), and prints what it reads (telnet
# commands, IAC ..., left out) until --until TEXT was read (exit 0), or with
# --until-closed until labd closes the connection (exit 0).  Exit 1 when
# --for seconds pass first, 2 when the connection is refused, 3 when labd
# closes it before --until TEXT.
import argparse
import socket
import sys
import time

IAC, SB, SE = 255, 250, 240


def strip_telnet(data):
    out, i = bytearray(), 0
    while i < len(data):
        b = data[i]
        if b != IAC:
            out.append(b)
            i += 1
        elif i + 1 < len(data) and data[i + 1] == IAC:
            out.append(IAC)
            i += 2
        elif i + 1 < len(data) and data[i + 1] == SB:
            end = data.find(bytes([IAC, SE]), i)
            i = len(data) if end < 0 else end + 2
        else:
            i += 3 if i + 1 < len(data) and 251 <= data[i + 1] <= 254 else 2
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--send")
    ap.add_argument("--until")
    ap.add_argument("--until-closed", action="store_true")
    ap.add_argument("--for", dest="secs", type=float, default=10)
    args = ap.parse_args()
    try:
        s = socket.create_connection(("127.0.0.1", args.port), timeout=args.secs)
    except OSError as e:
        print("refused: %s" % e, file=sys.stderr)
        return 2
    end, seen, sent = time.time() + args.secs, b"", args.send is None
    while time.time() < end:
        s.settimeout(max(0.1, end - time.time()))
        try:
            d = s.recv(4096)
        except socket.timeout:
            break
        except OSError:
            d = b""
        if not d:
            sys.stdout.flush()
            return 0 if args.until_closed else 3
        text = strip_telnet(d)
        sys.stdout.buffer.write(text)
        sys.stdout.flush()
        seen += text
        if not sent:
            s.sendall(args.send.encode().decode("unicode_escape").encode("latin-1"))
            sent = True
        if args.until and args.until.encode() in seen:
            return 0
    return 1


sys.exit(main())
