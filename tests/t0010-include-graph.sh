#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t0010-include-graph.sh -- the folders of dispatcher/ and drivers/ include each other
# without circles, private headers stay in their folder, nothing below the daemon
# calls daemon_*(), and doc/architecture.md (the map) names every folder (tests/include-graph.py).
exec python3 "$(dirname "$0")/include-graph.py"
