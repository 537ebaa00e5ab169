#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""include-graph.py -- the folders of dispatcher/ and drivers/ depend on each other without circles.

Reads every #include "..." of dispatcher/ and drivers/ (a labd header is
always named by its folder: "store/store.h", "drivers/power.h") and checks:

  1. no circle between folders: the folder graph (an edge A -> B when a file
     of A includes a header of B) has no cycle.  Each folder of dispatcher/
     is a node (run/actions apart from run); the top of dispatcher/ (main.c,
     daemon.c: the composition root) is one; drivers/ is one, subfolders
     included (drivers/power.c lists the drivers of drivers/power/, which
     implement drivers/power.h: one layer);
  2. a folder's private headers (*_internal.h, *_priv.h) are included only
     from inside that folder (tests/unit may include them);
  3. nothing below the daemon calls daemon_*(): only the top of dispatcher/
     names it;
  4. doc/architecture.md names every folder of dispatcher/ ("`dispatcher/store/`"), so
     the map stays true when a folder is added.

Prints TAP.  With --graph, prints the folder graph instead (A -> B, ...).
"""
import os
import re
import sys

top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
os.chdir(top)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DAEMON_CALL = re.compile(r'\bdaemon_[a-z_]+\s*\(')


def sources():
    for root in ('dispatcher', 'drivers'):
        for d, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.join(d, f)


def folder(path):
    """dispatcher/store/sqlite.c -> store; dispatcher/daemon.c -> daemon; drivers/power/qemu.c -> drivers."""
    parts = path.split('/')
    if parts[0] == 'dispatcher':
        return '/'.join(parts[1:-1]) or 'daemon'
    return parts[0]


def resolve(includer, name):
    for d in (os.path.dirname(includer), 'dispatcher', '.'):
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None


def build():
    edges, problems = {}, []
    for src in sources():
        text = open(src, encoding='utf-8').read()
        a = folder(src)
        for name in INCLUDE.findall(text):
            target = resolve(src, name)
            if target is None or not target.startswith(('dispatcher/', 'drivers/')):
                continue
            b = folder(target)
            base = os.path.basename(target)
            if (base.endswith('_internal.h') or base.endswith('_priv.h')) and a != b:
                problems.append(f'{src} includes the private header {target}')
            if a != b:
                edges.setdefault(a, {}).setdefault(b, []).append(f'{src} -> {target}')
        if a != 'daemon':
            for m in DAEMON_CALL.finditer(text):
                problems.append(f'{src} calls {m.group(0).rstrip("( ")}()')
    return edges, problems


def cycles(edges):
    """Strongly connected components of more than one folder (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
        if v not in index:
            visit(v)
    return out


def undocumented():
    """Folders of dispatcher/ that doc/architecture.md does not name as `dispatcher/folder/`."""
    doc = open('doc/architecture.md', encoding='utf-8').read()
    folders = sorted({folder(p) for p in sources() if p.startswith('dispatcher/')} - {'daemon'})
    return [f for f in folders if f'`dispatcher/{f}/`' not in doc]


def main():
    edges, problems = build()
    if '--graph' in sys.argv:
        for a in sorted(edges):
            print(f'{a} -> {", ".join(sorted(edges[a]))}')
        return 0
    comps = cycles(edges)
    print('1..3')
    for comp in comps:
        print(f'# circle between folders: {" ".join(comp)}')
        for a in comp:
            for b in comp:
                for why in edges.get(a, {}).get(b, [])[:3]:
                    print(f'#   {why}')
    print(f'{"not " if comps else ""}ok 1 - no circle between the folders of dispatcher/ and drivers/')
    for p in problems:
        print(f'# {p}')
    print(f'{"not " if problems else ""}ok 2 - private headers stay in their folder; only the daemon calls daemon_*()')
    missing = undocumented()
    for f in missing:
        print(f'# doc/architecture.md does not name dispatcher/{f}/')
    print(f'{"not " if missing else ""}ok 3 - doc/architecture.md names every folder of dispatcher/')
    return 1 if comps or problems or missing else 0


if __name__ == '__main__':
    sys.exit(main())
