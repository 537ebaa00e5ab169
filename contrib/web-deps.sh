#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# web-deps.sh -- the dashboard's xterm.js from the npm registry, into web/vendor/
# (ignored by git, installed by `make install`).  Run by `make deps`.
#
# Debian 12's libjs-xterm ships a CommonJS stub (require("./public/Terminal")),
# not a file a browser can load, so xterm.js comes from npm at a fixed version.
# Chart.js is Debian's (libjs-chart.js, served from /usr/share/javascript).
set -e
XTERM=@xterm/xterm@5.5.0
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$top/web/vendor/xterm
[ -f "$dest/xterm.js" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$XTERM" ] && exit 0
command -v npm >/dev/null || "$top/tests/deps.sh" npm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "web-deps: $XTERM from npm"
npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
	--prefix "$tmp" "$XTERM" >/dev/null
mkdir -p "$dest"
cp "$tmp/node_modules/@xterm/xterm/lib/xterm.js" "$tmp/node_modules/@xterm/xterm/css/xterm.css" \
	"$tmp/node_modules/@xterm/xterm/LICENSE" "$dest/"
echo "$XTERM" >"$dest/VERSION"
