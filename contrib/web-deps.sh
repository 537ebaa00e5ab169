#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# web-deps.sh -- the dashboard's xterm.js, kept in the tree in web/vendor/xterm/:
# the released files of npm's @xterm/xterm (xterm.js, xterm.css, LICENSE: MIT),
# unmodified.  Run by `make deps`: nothing to do while web/vendor/xterm/VERSION
# names $XTERM.  To move to another release, change XTERM and XTERM_SHA512 (npm
# view @xterm/xterm@X dist.integrity), run this script and commit web/vendor/xterm/.
#
# Why vendored rather than Debian's or fetched at build time: Debian 12's
# libjs-xterm (3.8.1) ships a 288-byte CommonJS stub (require("./public/Terminal")),
# not a file a browser can load; and a package build (debian/, a buildd) or a lab
# host without npm must still build the dashboard with its console.  The minified
# xterm.js is built from the TypeScript of xterm.js's tag 5.5.0, which the same
# npm tarball carries in src/ (debian/README.source).  Chart.js is Debian's
# (libjs-chart.js, served from /usr/share/javascript).
set -e
XTERM=@xterm/xterm@5.5.0
XTERM_SHA512=hqJHYaQb5OptNunnyAnkHyM8aCjZ1MEIDTQu1iIbbTD/xops91NB5yq1ZK/dC2JDbVWtF23zUtl9JE2NqwT87A==
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$top/web/vendor/xterm
[ -f "$dest/xterm.js" ] && [ "$(head -n 1 "$dest/VERSION" 2>/dev/null)" = "$XTERM" ] && exit 0
command -v npm >/dev/null || "$top/tests/deps.sh" npm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "web-deps: $XTERM from npm"
(cd "$tmp" && npm pack --silent --loglevel=error "$XTERM" >/dev/null)
tgz=$(ls "$tmp"/*.tgz)
want=$(echo "$XTERM_SHA512" | base64 -d | od -An -v -tx1 | tr -d ' \n')
sum=$(sha512sum "$tgz" | cut -d' ' -f1)
if [ "$sum" != "$want" ]; then
	echo "web-deps: $XTERM: sha512 $sum, not $want (npm's integrity): not installed" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$tmp" package/lib/xterm.js package/css/xterm.css package/LICENSE
mkdir -p "$dest"
cp "$tmp/package/lib/xterm.js" "$tmp/package/css/xterm.css" "$tmp/package/LICENSE" "$dest/"
printf '%s\nsha512-%s\n' "$XTERM" "$XTERM_SHA512" >"$dest/VERSION"
