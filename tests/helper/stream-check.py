#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# stream-check.py RECORD.jsonl STATE_DIR [--job ID]... [--path P] [--min-items N] [--max-bytes N]
#                 [--max-item-bytes N] [--no-duplicates]
#
# Checks what labd's http backend delivered (the recorder's JSONL) against
# labd's own data (STATE_DIR: labd.db and jobs/<id>/console.log):
#   - every accepted request (2xx) is a JSON batch with version, lab, items;
#   - per job (only those given with --job, when given: another job may have
#     had items refused), events arrive with seq 1, 2, 3 ... and log items with
#     seq 1, 2, 3 ... and contiguous offsets, after dropping replays (an item
#     whose seq was already seen must be identical);
#   - the log bytes put together (base64 when given, else the text) equal
#     console.log byte for byte, and the events equal the store's;
#   - batches hold at most --max-bytes of body (when given), no item is larger
#     than --max-item-bytes as compact JSON (when given: a backend's spool must
#     be able to take any item) and, with --min-items, some batch carries at
#     least that many items.
# Prints a summary ("jobs=.. events=.. log_items=.. batches=.. duplicates=..")
# and exits 1 with the first problem.
import argparse
import base64
import json
import os
import sqlite3
import sys


def fail(msg):
    print("stream-check: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("state")
    ap.add_argument("--job", type=int, action="append", default=[])
    ap.add_argument("--max-bytes", type=int)
    ap.add_argument("--min-items", type=int)
    ap.add_argument("--max-item-bytes", type=int)
    ap.add_argument("--no-duplicates", action="store_true")
    ap.add_argument("--path", default="/ingest", help="the http backend's URL path")
    a = ap.parse_args()

    events, logs = {}, {}
    batches = dups = max_items = 0
    for line in open(a.record):
        rec = json.loads(line)
        if rec["method"] != "POST" or not 200 <= rec["status"] < 300 or rec["path"] != a.path:
            continue
        if "body" not in rec:
            fail("a batch is not UTF-8")
        if not rec["headers"].get("Authorization", "").startswith("Bearer "):
            fail("a batch without a bearer token")
        if a.max_bytes and len(rec["body"].encode()) > a.max_bytes:
            fail("a batch of %d bytes" % len(rec["body"].encode()))
        doc = json.loads(rec["body"])
        if doc.get("version") != 1 or "lab" not in doc or "items" not in doc:
            fail("not a labd batch: %s" % rec["body"][:200])
        batches += 1
        max_items = max(max_items, len(doc["items"]))
        for it in doc["items"]:
            if a.job and it["job"] not in a.job:
                continue
            size = len(json.dumps(it, separators=(",", ":"), ensure_ascii=False).encode())
            if a.max_item_bytes and size > a.max_item_bytes:
                fail("job %d: %s item %d has %d bytes" % (it["job"], it["type"], it["seq"], size))
            table = events if it["type"] == "event" else logs
            seen = table.setdefault(it["job"], {})
            if it["seq"] in seen:
                if seen[it["seq"]] != it:
                    fail("job %d: %s seq %d replayed with other content" %
                         (it["job"], it["type"], it["seq"]))
                dups += 1
                continue
            if it["seq"] != len(seen) + 1:
                fail("job %d: %s seq %d after %d (gap or disorder)" %
                     (it["job"], it["type"], it["seq"], len(seen)))
            seen[it["seq"]] = it
    if a.no_duplicates and dups:
        fail("%d duplicates" % dups)
    if a.min_items and max_items < a.min_items:
        fail("no batch with %d items (at most %d)" % (a.min_items, max_items))

    db = sqlite3.connect(os.path.join(a.state, "labd.db"))
    jobs = a.job or sorted(set(events) | set(logs))
    nlog = nev = 0
    for job in jobs:
        got = [(e["seq"], e["kind"]) for e in events.get(job, {}).values()]
        want = [(s, k) for s, k in db.execute(
            "SELECT seq, kind FROM events WHERE job_id = ? ORDER BY seq", (job,))]
        if got != want[:len(got)] or len(got) != len(want):
            fail("job %d: events %s, store has %s" % (job, got[-5:], want[-5:]))
        data, off = b"", 0
        for it in logs.get(job, {}).values():
            if it["offset"] != off:
                fail("job %d: log item %d at offset %d, expected %d" %
                     (job, it["seq"], it["offset"], off))
            raw = base64.b64decode(it["base64"]) if "base64" in it else it["text"].encode()
            if len(raw) != it["length"]:
                fail("job %d: log item %d has %d bytes, says %d" %
                     (job, it["seq"], len(raw), it["length"]))
            data += raw
            off += len(raw)
        console = os.path.join(a.state, "jobs", str(job), "console.log")
        want_log = open(console, "rb").read() if os.path.exists(console) else b""
        if data != want_log:
            fail("job %d: %d log bytes delivered, console.log has %d%s" %
                 (job, len(data), len(want_log), " (different bytes)"
                  if len(data) == len(want_log) else ""))
        nlog += len(logs.get(job, {}))
        nev += len(got)
    print("jobs=%d events=%d log_items=%d batches=%d duplicates=%d max_items=%d" %
          (len(jobs), nev, nlog, batches, dups, max_items))


if __name__ == "__main__":
    main()
