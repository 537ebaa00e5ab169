#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# jobs-real-report.py REAL OUT [--json] -- what `labctl check` said about the real jobs
#
# REAL is ../shared/jobs-real; OUT holds <set>.out, the output of one
# `labctl check` of every job of REAL/<set>/ ("FILE: ok", or "FILE:LINE:
# cause" lines), <set> being kernelci or lkft.  A KernelCI file stands for as many
# (job, platform) pairs as the number at the front of its name says; an LKFT
# file for one job.  Prints, per set: accepted and refused (weighted), the
# share of the refusals that need containers or host commands (LAVA's
# downloads/docker/flasher/command, waiting for the container runner), and
# every refusal reason, generalised (lines, indexes and quoted values
# removed), with the weight of the jobs refused for it.  With --json, the
# figures as JSON on the last line.
import collections
import json
import os
import re
import sys

# Reasons that need a container engine or host commands.
CONTAINER = re.compile(r"deploy method '(downloads|download|flasher)'|'docker'|"
                       r"downloads://|action 'command'|reboot_to_fastboot|"
                       r"postprocess|invalid image label 'partition:")


def weight(setname, name):
    if setname == "kernelci":
        m = re.match(r"(\d+)_", name)
        return int(m.group(1)) if m else 1
    return 1


def general(line):
    line = re.sub(r"^.*?\.yaml:\d+: ", "", line)
    line = re.sub(r"\[\d+\]", "[N]", line)
    line = re.sub(r"'[^']*'", lambda m: m.group(0) if len(m.group(0)) < 40 else "'...'", line)
    return line[:200]


def main():
    real, top = sys.argv[1], sys.argv[2]
    want_json = "--json" in sys.argv
    figures = {}
    for setname in ("kernelci", "lkft"):
        d = os.path.join(real, setname)
        files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs
                       if f.endswith(".yaml"))
        out = open(os.path.join(top, setname + ".out"), errors="replace").read().splitlines()
        said = collections.defaultdict(list)
        for l in out:
            for f in files:
                if l.startswith(f + ":"):
                    said[f].append(l)
        total = ok = container = 0
        reasons = collections.Counter()
        for f in files:
            w = weight(setname, os.path.basename(f))
            total += w
            if f + ": ok" in said[f]:
                ok += w
                continue
            errs = [l for l in said[f] if re.search(r"\.yaml:\d+: ", l) and
                    not re.search(r": (warning|note): ", l)]
            if any(CONTAINER.search(l) for l in errs):
                container += w
            for r in sorted(set(general(l) for l in errs)) or ["(no reason given) " + " ".join(said[f])[:150]]:
                reasons[r] += w
        pct = 100.0 * ok / total if total else 0
        print("%s: %d of %d accepted (%.1f %%); %d refused, %d of them need containers or host commands"
              % (setname, ok, total, pct, total - ok, container))
        for r, n in reasons.most_common():
            print("  %5d  %s" % (n, r))
        figures[setname] = {"total": total, "accepted": ok, "container": container}
    if want_json:
        print(json.dumps(figures))


main()
