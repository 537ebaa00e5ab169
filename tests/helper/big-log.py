#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""big-log.py DIR MB -- a job log of about MB MiB in DIR, as labd writes one
(journal/joblog.h): console.log with kernel-like lines (a non-ASCII character
and an escape sequence in each), console.idx, and a labd.log line every 1000
console lines.  For the tests and benchmarks of big logs."""
import os
import struct
import sys

d, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
con, idx, labd = bytearray(), bytearray(), []
line, ts = 0, 1_700_000_000_000_000
while len(con) < mb << 20:
    idx += struct.pack("<QQ", len(con), ts + line * 1000)
    con += (b"[%8d.000000] a line of console output, number %d, for the reader "
            b"\xe2\x9c\x93 \x1b[0m\r\n" % (line, line))
    line += 1
    if line % 1000 == 0:
        labd.append("2023-11-14T22:13:20.000000Z info L%d at line %d\n" % (line, line))
open(d + "/console.log", "wb").write(con)
open(d + "/console.idx", "wb").write(idx)
open(d + "/labd.log", "w").write("".join(labd))
