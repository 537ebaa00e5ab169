#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# qemu-expect.py PROMPT_REGEX [--delay MS] [--chat REGEX TEXT]... -- QEMU ARGS...: the
# baseline of bench-qemu-boot.sh and bench-qemu-firmware.sh.
#
# Starts QEMU with its first serial port on a socketpair, as labd does
# (`-chardev socket,id=...,fd={FD}`: {FD} in ARGS is the fd number), reads the
# console until PROMPT_REGEX matches, kills QEMU and prints the seconds from
# starting QEMU to the prompt.  Each --chat pair, in order, first: wait for
# REGEX, then send TEXT (\n, \xNN escapes), the way one drives a bootloader by
# hand, its characters MS milliseconds apart (--delay, default 0).  The
# smallest console reader there is: no logging, no matching beyond one regex
# at a time, no event loop beyond select().
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time

TIMEOUT = 120.0


def main():
    prompt = re.compile(sys.argv[1].encode())
    args, chat, delay = sys.argv[2:], [], 0.0
    if args and args[0] == "--delay":
        delay = float(args[1]) / 1000
        args = args[2:]
    while args and args[0] == "--chat":
        chat.append((re.compile(args[1].encode()),
                     args[2].encode().decode("unicode_escape").encode("latin1")))
        args = args[3:]
    ours, theirs = socket.socketpair()
    argv = [a.replace("{FD}", str(theirs.fileno())) for a in args[1:]]
    t0 = time.monotonic()
    qemu = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    theirs.close()
    buf = b""
    took = None
    while time.monotonic() - t0 < TIMEOUT:
        ready, _, _ = select.select([ours], [], [], 1.0)
        if not ready:
            if qemu.poll() is not None:
                break
            continue
        data = ours.recv(65536)
        if not data:
            break
        buf = (buf + data)[-4096:]
        while chat:
            m = chat[0][0].search(buf)
            if not m:
                break
            text = chat[0][1]
            if delay:
                for i in range(len(text)):
                    ours.sendall(text[i:i + 1])
                    time.sleep(delay)
            else:
                ours.sendall(text)
            buf = buf[m.end():]
            chat.pop(0)
        if not chat and prompt.search(buf):
            took = time.monotonic() - t0
            break
    qemu.send_signal(signal.SIGKILL)
    qemu.wait()
    if took is None:
        print("no prompt", file=sys.stderr)
        return 1
    print("%.3f" % took)
    return 0


if __name__ == "__main__":
    sys.exit(main())
