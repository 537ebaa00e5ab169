#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# mkpcap.py -- write a synthetic usbmon capture (pcap, DLT 220) for umockdev replay
"""Usage: mkpcap.py SPEC OUT.pcap

umockdev-run --pcap SYSFS=OUT.pcap replays a device from a usbmon capture,
strictly in order: every URB the program submits must match the next
submission of the capture (type, endpoint, length and, going out, the data),
and completes with what the capture says.  This writes such a capture from a
readable SPEC, one transfer per line ('#' starts a comment):

  device BUS DEV                 address of the replayed device (default 1 2)
  ctrl TYPE REQ VALUE INDEX LENGTH [data=HEX|text=STR] [reply=HEX|rtext=STR]
                                 a control transfer; TYPE, REQ, VALUE, INDEX
                                 in hex (bmRequestType 0x80 set = IN)
  bulk EP LENGTH [data=...|file=PATH:OFF:LEN] [reply=...]
  intr EP LENGTH [data=...] [reply=...]
                                 EP in hex, 0x80 set = IN; LENGTH is the
                                 buffer the program submits (for OUT: the
                                 data's length when omitted as '-')
Options of every transfer:
  pad=N        zero-pad data= (OUT) and reply= (IN) to N bytes (64-byte HID reports)
  status=N     completion status (negative errno: -32 stall, -71 protocol...)
  actual=N     completed length, for a short transfer
  noreply      submit only, never complete: the program's timeout fires
"""
import shlex
import struct
import sys

DLT_USB_LINUX_MMAPPED = 220
SNAPLEN = 262144  # libpcap refuses larger records: keep transfers below it
XFER = {"intr": 1, "ctrl": 2, "bulk": 3}


class Capture:
    def __init__(self):
        self.records = []
        self.urb_id = 0x1000
        self.t = 1700000000 * 1000000
        self.bus, self.dev = 1, 2

    def packet(self, kind, xfer, ep, urb_len, data=b"", setup=None, status=0, urb_id=0):
        self.t += 1000
        flag_setup = 0 if setup is not None else ord("-")
        flag_data = 0 if data else ord("<" if ep & 0x80 else ">")
        hdr = struct.pack("<QBBBBHbbqiiII8siiII", urb_id, ord(kind), xfer, ep, self.dev,
                          self.bus, flag_setup, flag_data, self.t // 1000000,
                          self.t % 1000000, status, urb_len, len(data),
                          setup if setup is not None else bytes(8), 0, 0, 0, 0)
        assert len(hdr) == 64
        self.records.append(hdr + data)

    def transfer(self, xfer, ep, urb_len, out, reply, setup, opts):
        self.urb_id += 1
        self.packet("S", xfer, ep, urb_len, out, setup, -115, self.urb_id)  # -EINPROGRESS
        if "noreply" in opts:
            return
        status = int(opts.get("status", 0))
        if ep & 0x80:
            data = reply
            actual = int(opts.get("actual", len(reply)))
            data = data[:actual]
        else:
            data = b""
            actual = int(opts.get("actual", len(out)))
        self.packet("C", xfer, ep, actual, data, None, status, self.urb_id)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN,
                                DLT_USB_LINUX_MMAPPED))
            for i, rec in enumerate(self.records):
                ts = 1700000000 + i
                f.write(struct.pack("<IIII", ts, 0, len(rec), len(rec)))
                f.write(rec)


def payload(opts, hexkey, textkey):
    data = b""
    if hexkey in opts:
        data = bytes.fromhex(opts[hexkey])
    elif textkey in opts:
        data = opts[textkey].encode()
    elif "file" in opts and hexkey == "data":
        path, off, n = opts["file"].rsplit(":", 2)
        with open(path, "rb") as f:
            f.seek(int(off))
            data = f.read(int(n))
    if data and "pad" in opts:
        data = data.ljust(int(opts["pad"]), b"\0")
    return data


def parse_line(cap, words, where):
    kind, args = words[0], [w for w in words[1:] if "=" not in w and w != "noreply"]
    opts = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    if "noreply" in words:
        opts["noreply"] = True
    if kind == "device":
        cap.bus, cap.dev = int(args[0]), int(args[1])
        return
    if kind not in XFER:
        raise ValueError(f"{where}: unknown transfer '{kind}'")
    out = payload(opts, "data", "text")
    reply = payload(opts, "reply", "rtext")
    if kind == "ctrl":
        rtype, req, value, index, length = (int(a, 16) for a in args[:5])
        setup = struct.pack("<BBHHH", rtype, req, value, index, length)
        ep = 0x80 if rtype & 0x80 else 0x00
        cap.transfer(XFER[kind], ep, length, out, reply, setup, opts)
        return
    ep = int(args[0], 16)
    length = len(out) if args[1] == "-" else int(args[1])
    cap.transfer(XFER[kind], ep, length, out, reply, None, opts)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cap = Capture()
    with open(sys.argv[1]) as f:
        for n, line in enumerate(f, 1):
            words = shlex.split(line, comments=True)
            if words:
                parse_line(cap, words, f"{sys.argv[1]}:{n}")
    cap.write(sys.argv[2])


if __name__ == "__main__":
    main()
