#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# expect.py -- drive a simboard console: send text, wait for regexes, check timings.
"""Usage: expect.py [--timeout SECS] [--log FILE] PTY STEP...

Opens PTY (a simboard DIR/<name>.pty symlink) raw and runs the steps in order.
Exits 0 when all pass; otherwise prints the failed step and the tail of the
output to stderr and exits 1.

Steps:
  send:TEXT            write TEXT; \\r \\n \\t \\xNN and \\\\ escapes are understood
  expect:REGEX         wait until REGEX matches output after the previous match
  expect~SECS:REGEX    the same with its own timeout
  absent:SECS:REGEX    read for SECS seconds; REGEX must not show up
  notseen:REGEX        REGEX does not match anything received so far
  ctl:WORDS            run "$SIMBOARD ctl $SIMDIR WORDS", which must say ok
  sleep:SECS           read (and keep) output for SECS seconds
  mark                 remember the time
  elapsed:MIN:MAX      seconds since the last mark are within [MIN, MAX]
  garbage:MIN          at least MIN received bytes are neither printable ASCII nor
                       ordinary terminal control (\\r \\n \\t \\b ESC)
  streamcheck:NAME:MIN  the SIMSTREAM lines of board NAME received since the last
                       match count at least MIN, number 1, 2, 3... and carry
                       CLOCK_REALTIME stamps from the last 10 seconds
  hup                  the console goes away: EOF, EIO or POLLHUP on the old fd
  reopen               wait for the symlink to point at a new pty and use it
                       (the old one stays open, so its number is not reused)
"""
import errno
import os
import re
import select
import subprocess
import sys
import termios
import time
import tty


class Failed(Exception):
    pass


class Console:
    def __init__(self, path, timeout, log):
        self.path = path
        self.timeout = timeout
        self.log = log
        self.buf = b''
        self.pos = 0
        self.mark = time.monotonic()
        self.old_fds = []
        self.target = os.path.realpath(path)
        self.fd = self.open()

    def open(self):
        fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(fd, termios.TCSANOW)
        return fd

    def read_some(self, deadline):
        """Read what arrives before deadline; False once the console is gone."""
        left = max(0.0, deadline - time.monotonic())
        r, _, _ = select.select([self.fd], [], [], left)
        if not r:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError as e:
            if e.errno == errno.EAGAIN:
                return True
            if e.errno == errno.EIO:
                return False
            raise
        if not data:
            return False
        self.buf += data
        if self.log:
            self.log.write(data)
            self.log.flush()
        return True

    def expect(self, regex, timeout):
        pat = re.compile(regex.encode(), re.S)
        deadline = time.monotonic() + timeout
        while True:
            m = pat.search(self.buf, self.pos)
            if m:
                self.pos = m.end()
                return
            if time.monotonic() >= deadline:
                raise Failed('timed out after %gs' % timeout)
            if not self.read_some(deadline):
                raise Failed('console went away')

    def absent(self, secs, regex):
        pat = re.compile(regex.encode(), re.S)
        start = len(self.buf)
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            if not self.read_some(deadline):
                break
        m = pat.search(self.buf, start)
        if m:
            raise Failed('unexpected %r' % m.group(0))

    def hup(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = select.poll()
            p.register(self.fd, select.POLLIN)
            ev = p.poll(50)
            if ev and ev[0][1] & (select.POLLHUP | select.POLLERR):
                return
            if ev and not self.read_some(deadline):
                return
        raise Failed('console still there after %gs' % timeout)

    def reopen(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                target = os.path.realpath(self.path, strict=True)
            except OSError:
                target = None
            if target and target != self.target:
                self.old_fds.append(self.fd)
                self.target = target
                self.fd = self.open()
                self.buf, self.pos = b'', 0
                return
            time.sleep(0.05)
        raise Failed('symlink did not change')


def unescape(text):
    return text.encode('latin-1').decode('unicode_escape').encode('latin-1')


def garbage_count(data):
    ok = set(range(0x20, 0x7f)) | {0x0d, 0x0a, 0x09, 0x08, 0x1b}
    return sum(1 for c in data if c not in ok)


def stream_check(data, name, least):
    now = time.time_ns()
    lines = re.findall(rb'SIMSTREAM (\S+) (\d+) (\d+)\r\n', data)
    if len(lines) < least:
        raise Failed('%d stream lines, wanted %d' % (len(lines), least))
    for i, (board, seq, stamp) in enumerate(lines):
        if board.decode() != name or int(seq) != i + 1:
            raise Failed('line %d is %r %r' % (i + 1, board, seq))
        if not now - 10 * 10**9 < int(stamp) <= now:
            raise Failed('line %d: stamp %s is not recent' % (i + 1, stamp))


def ctl(words):
    cmd = [os.environ['SIMBOARD'], 'ctl', os.environ['SIMDIR']] + words.split()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failed('ctl %s: exit %d: %s%s' % (words, r.returncode, r.stdout, r.stderr))


def run_step(con, step):
    kind, _, arg = step.partition(':')
    if kind == 'send':
        os.write(con.fd, unescape(arg))
    elif kind == 'expect':
        con.expect(arg, con.timeout)
    elif kind.startswith('expect~'):
        con.expect(arg, float(kind[7:]))
    elif kind == 'absent':
        secs, _, regex = arg.partition(':')
        con.absent(float(secs), regex)
    elif kind == 'notseen':
        m = re.search(arg.encode(), con.buf, re.S)
        if m:
            raise Failed('seen %r' % m.group(0))
    elif kind == 'ctl':
        ctl(arg)
    elif kind == 'sleep':
        con.absent(float(arg), r'(?!)')
    elif kind == 'mark':
        con.mark = time.monotonic()
    elif kind == 'elapsed':
        lo, hi = (float(x) for x in arg.split(':'))
        el = time.monotonic() - con.mark
        if not lo <= el <= hi:
            raise Failed('%.2fs elapsed, wanted %g..%g' % (el, lo, hi))
    elif kind == 'garbage':
        n = garbage_count(con.buf)
        if n < int(arg):
            raise Failed('only %d garbage bytes' % n)
    elif kind == 'streamcheck':
        name, _, least = arg.partition(':')
        stream_check(con.buf[con.pos:], name, int(least))
    elif kind == 'hup':
        con.hup(con.timeout)
    elif kind == 'reopen':
        con.reopen(con.timeout)
    else:
        raise Failed('unknown step')


def main(argv):
    timeout, log = 10.0, None
    while argv and argv[0].startswith('--'):
        if argv[0] == '--timeout':
            timeout = float(argv[1])
        elif argv[0] == '--log':
            log = open(argv[1], 'ab')
        else:
            sys.exit(__doc__)
        argv = argv[2:]
    if not argv:
        sys.exit(__doc__)
    con = Console(argv[0], timeout, log)
    for step in argv[1:]:
        try:
            run_step(con, step)
        except Failed as e:
            sys.stderr.write('%s: step %r failed: %s\n' % (argv[0], step, e))
            sys.stderr.write('--- last output ---\n%r\n' % con.buf[-1500:])
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
