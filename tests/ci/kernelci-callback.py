#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# kernelci-callback.py RECORDED.jsonl PATH TOKEN [--incomplete TYPE] [SUITE...] -- read a notify callback as
# KernelCI's handler (kernelci-pipeline's lava_callback.py, kernelci-core's
# runtime/lava.py Callback) reads LAVA's, and check every field it uses.
#
# The request recorded for PATH (tests/helper/recorder.py) must: be a POST of
# JSON with header Authorization = TOKEN; carry the job's definition verbatim
# enough for yaml.safe_load(definition)["metadata"] to give api_config_name and
# storage_config_name; status 2 (complete) and actual_device_id; a log that is
# LAVA's YAML (a list of {dt, lvl, msg}) with target lines; results mapping
# suites "<n>_<name>" and "lava" to YAML lists of test dicts whose metadata is a
# mapping, the lava suite holding job, a login case and one case per suite.
# With --incomplete TYPE the job must have ended incomplete before its board
# was powered: status 3, the lava suite's job case failed with error_type TYPE
# and an error_msg, and no case of what never ran (no login case, no case of a
# test definition) -- KernelCI would otherwise record a login failure.
# Each SUITE named is one of labd's own (ktap: the KTAP a kselftest printed on
# the console), allowed without the prefix and the lava case: KernelCI cuts
# suite names at their first "_" (doc/lava-compat.md), so it sees it unnamed.
# Prints what it found; exits 1 on the first problem.
import json
import sys

import yaml


def fail(msg):
    print("kernelci-callback: " + msg)
    sys.exit(1)


def main():
    path, want_path, token, labd_suites = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    incomplete = None
    if labd_suites[:1] == ["--incomplete"] and len(labd_suites) > 1:
        incomplete, labd_suites = labd_suites[1], labd_suites[2:]
    reqs = [json.loads(l) for l in open(path) if l.strip()]
    reqs = [r for r in reqs if r["path"] == want_path]
    if len(reqs) != 1:
        fail("%d requests for %s, expected 1" % (len(reqs), want_path))
    r = reqs[0]
    headers = {k.lower(): v for k, v in r["headers"].items()}
    if r["method"] != "POST":
        fail("method " + r["method"])
    if headers.get("authorization") != token:
        fail("Authorization header %r" % headers.get("authorization"))
    if not headers.get("content-type", "").startswith("application/json"):
        fail("content-type %r" % headers.get("content-type"))
    data = json.loads(r["body"])
    meta = yaml.safe_load(data["definition"])["metadata"]
    for k in ("api_config_name", "storage_config_name"):
        if k not in meta:
            fail("definition metadata lacks " + k)
    want = (3, "incomplete", "Incomplete") if incomplete else (2, "complete", "Complete")
    if data["status"] != want[0] or data["status_string"] != want[1]:
        fail("status %r %r" % (data["status"], data["status_string"]))
    if data["state_string"] != "Finished" or data["health_string"] != want[2]:
        fail("state/health %r %r" % (data["state_string"], data["health_string"]))
    for k in ("id", "actual_device_id", "submit_time", "start_time", "end_time",
              "metadata", "health", "state"):
        if k not in data:
            fail("no " + k)
    if data["metadata"] != meta:
        fail("metadata %r differs from the definition's" % data["metadata"])
    log = yaml.safe_load(data["log"])
    target = [l["msg"] for l in log if l["lvl"] == "target"]
    if (not target and not incomplete) or not all(set(l) >= {"dt", "lvl", "msg"} for l in log):
        fail("log is not LAVA's YAML log")
    results = {}
    for suite, text in data["results"].items():
        tests = yaml.safe_load(text)
        for t in tests:
            if not isinstance(t["metadata"], dict):
                fail("metadata of %s.%s is not a mapping" % (suite, t["name"]))
            t["metadata"].get("set")
        results[suite] = {t["name"]: t["result"] for t in tests}
    lava = results.get("lava")
    if incomplete:
        job = [t for t in yaml.safe_load(data["results"]["lava"]) if t["name"] == "job"]
        meta = job[0]["metadata"] if job else {}
        if lava.get("job") != "fail" or meta.get("error_type") != incomplete or \
                not meta.get("error_msg"):
            fail("lava job case %r %r" % (lava, meta))
        ran = sorted(n for n in lava if n in ("auto-login-action", "login-action") or
                     n.partition("_")[0].isdigit())
        if ran:
            fail("cases of what never ran: %r" % ran)
        print("callback of job %s: incomplete (%s: %s), lava suite %s" %
              (data["id"], meta["error_type"], meta["error_msg"], sorted(lava)))
        return
    if not lava or lava.get("job") != "pass":
        fail("lava suite %r" % lava)
    if "pass" not in (lava.get("login-action"), lava.get("auto-login-action")):
        fail("no login case passed in the lava suite")
    for suite in results:
        if suite == "lava" or suite in labd_suites:
            continue
        name = suite.partition("_")[2]
        if not name:
            fail("suite %r has no <index>_ prefix" % suite)
        if lava.get(suite) != "pass":
            fail("lava suite has no passing case %r" % suite)
    print("callback of job %s from %s: %d log lines, suites %s" %
          (data["id"], data["actual_device_id"], len(log), sorted(results)))
    for suite in sorted(results):
        print("  %s: %s" % (suite, json.dumps(results[suite], sort_keys=True)))


main()
