#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t0200-install.sh -- `make install` into a staging directory: the programs,
# the man pages of labd(8), labctl(1) and labd.conf(5) that man renders, and the
# dashboard with xterm.js (web/vendor/xterm/: a clear error without it).
. "$(dirname "$0")/lib.sh"

ROOT=$TMP/root
# make install builds what is out of date: with the build's own flags (an
# unsanitized relink of build-san/labd fails and removes it under the other tests).
SAN=$(case $BUILD in *-san) echo 1 ;; esac)

if ! command -v scdoc >/dev/null; then
	test_skip 'make install puts the programs and the man pages in place' 'scdoc not installed (make deps)'
	test_done
	exit
fi

test_expect_success 'make install puts the programs and the man pages in place' '
	make -s -C "$TOP" install DESTDIR="$ROOT" BUILD="$BUILD" SANITIZE=$SAN >"$TMP/install.log" 2>&1 &&
	[ -x "$ROOT/usr/bin/labd" ] && [ -x "$ROOT/usr/bin/labctl" ] &&
	[ -f "$ROOT/usr/share/man/man8/labd.8" ] &&
	[ -f "$ROOT/usr/share/man/man1/labctl.1" ] &&
	[ -f "$ROOT/usr/share/man/man5/labd.conf.5" ]
'

if [ -f "$TOP/web/vendor/xterm/xterm.js" ]; then
	test_expect_success 'the dashboard is installed, with xterm.js' '
		[ -f "$ROOT/usr/share/labd/web/index.html" ] &&
		for f in xterm.js xterm.css LICENSE; do
			cmp "$TOP/web/vendor/xterm/$f" "$ROOT/usr/share/labd/web/vendor/xterm/$f" || exit 1
		done
	'
else
	test_skip 'the dashboard is installed, with xterm.js' 'web/vendor/xterm/ not fetched (make deps)'
fi

test_expect_success 'without xterm.js, make install says to run make deps' '
	! make -s -C "$TOP" install DESTDIR="$TMP/root2" BUILD="$BUILD" SANITIZE=$SAN XTERM_DIR="$TMP/none" \
		>"$TMP/install2.log" 2>&1 &&
	grep -q "$TMP/none/xterm.js is missing: run .make deps. first" "$TMP/install2.log" &&
	[ ! -e "$TMP/root2/usr/bin/labd" ]
'

test_expect_success 'man renders them, with what each is about' '
	MANWIDTH=80 man -l "$ROOT/usr/share/man/man1/labctl.1" >"$TMP/labctl.txt" 2>&1 &&
	grep -q "labctl - the client of labd" "$TMP/labctl.txt" &&
	grep -q "~/.config/labctl/config" "$TMP/labctl.txt" &&
	MANWIDTH=80 man -l "$ROOT/usr/share/man/man8/labd.8" | grep -q "check-config" &&
	MANWIDTH=80 man -l "$ROOT/usr/share/man/man5/labd.conf.5" | grep -q "devices_dir"
'

test_expect_success 'every labctl command is in its man page' '
	for c in $("$ROOT/usr/bin/labctl" --help | sed -n "s/^  \([a-z-]*\) .*/\1/p" | grep -v "^-"); do
		grep -q "\*$c\*" "$TOP/doc/man/labctl.1.scd" || { echo "labctl.1 lacks $c"; exit 1; }
	done
'

# the unit and the multi-host drop-in as systemd reads them (the programs from the staging root)
if command -v systemd-analyze >/dev/null; then
	test_expect_success 'systemd-analyze verify: the unit and its multi-host drop-in' '
		mkdir -p "$TMP/units/labd.service.d" &&
		sed "s|/usr/bin/|$ROOT/usr/bin/|g" "$ROOT/lib/systemd/system/labd.service" \
			>"$TMP/units/labd.service" &&
		cp "$ROOT/usr/share/doc/labd/examples/systemd/multi-host.conf" "$TMP/units/labd.service.d/" &&
		SYSTEMD_UNIT_PATH="$TMP/units:" systemd-analyze verify "$TMP/units/labd.service" \
			>"$TMP/verify.log" 2>&1 || { cat "$TMP/verify.log"; exit 1; }
		cat "$TMP/verify.log"
		# a key systemd does not know is only warned about: the drop-in has none
		! grep -i "unknown\|ignoring\|invalid" "$TMP/verify.log"
	'
else
	test_skip 'systemd-analyze verify: the unit and its multi-host drop-in' 'no systemd-analyze on this machine'
fi

test_done
