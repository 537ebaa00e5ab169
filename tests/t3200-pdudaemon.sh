#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t3200-pdudaemon.sh -- the "pdudaemon" power driver against the real pdudaemon (Debian package)
#
# Starts /usr/sbin/pdudaemon on 127.0.0.1 and a free port, with a generated
# config whose PDU uses pdudaemon's `localcmdline` driver: switching outlet N
# appends "N on" or "N off" to a file.  tests/helper/power-tool then runs
# labd's driver (event loop + libcurl) against it.
set -u
top=${LABD_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
tool=$BUILD/tests/helper/power-tool
pdudaemon=/usr/sbin/pdudaemon

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
check() { # check DESC COMMAND...: one TAP line from the command's status
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

skip_all() {
	echo "1..1"
	echo "ok 1 - pdudaemon power driver # SKIP $1"
	exit 0
}
[ -x "$pdudaemon" ] || skip_all "$pdudaemon is not installed (make deps installs it)"
/usr/bin/python3 -c 'import aiohttp, pdudaemon' 2>/dev/null ||
	skip_all "pdudaemon's python modules do not import (reinstall pdudaemon)"
[ -x "$tool" ] || skip_all "$tool is not built (make tests)"

tmp=$(mktemp -d /tmp/t3200.XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}
port=$(free_port)
dead_port=$(free_port)
url="http://127.0.0.1:$port"
outlets=$tmp/outlets

cat >"$tmp/pdudaemon.conf" <<EOF
{
    "daemon": {"hostname": "127.0.0.1", "port": $port, "logging_level": "DEBUG",
               "listener": "http"},
    "pdus": {
        "pdu01": {"driver": "localcmdline",
                  "cmd_on": "echo '%s on' >> $outlets",
                  "cmd_off": "echo '%s off' >> $outlets"}
    },
    "aliases": {"board1": {"hostname": "pdu01", "port": 4}}
}
EOF

echo "1..11"
echo "# $pdudaemon --conf $tmp/pdudaemon.conf --logfile $tmp/pdudaemon.log --loglevel DEBUG"
"$pdudaemon" --conf "$tmp/pdudaemon.conf" --logfile "$tmp/pdudaemon.log" --loglevel DEBUG \
	>"$tmp/pdudaemon.out" 2>&1 &
pid=$!

# Wait until it accepts connections (up to 20 s), or until it died.
listening() {
	local i
	for i in $(seq 400); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
if ! listening; then
	not_ok "pdudaemon listens on 127.0.0.1:$port"
	sed 's/^/# /' "$tmp/pdudaemon.out" "$tmp/pdudaemon.log" 2>/dev/null
	exit 1
fi
ok "pdudaemon listens on 127.0.0.1:$port"

# power OP SETTINGS: run power-tool, output in $out, exit status in $rc.
power() {
	local op=$1
	shift
	out=$("$tool" -n sim-01 -t 20 "$*" "$op" 2>&1)
	rc=$?
	echo "# power-tool '$*' $op -> $rc: $out"
}
# expect RC OUTPUT [OUTLET-LINE...]: the last power-tool run and, if given, the
# whole outlet file, in order.
expect() {
	local want_rc=$1 want_out=$2 want got
	shift 2
	if [ "$rc" != "$want_rc" ] || [ "$out" != "$want_out" ]; then
		echo "# expected $want_rc: $want_out"
		return 1
	fi
	[ $# -eq 0 ] && return 0
	want=$(printf '%s\n' "$@")
	got=$(cat "$outlets" 2>/dev/null)
	[ "$got" = "$want" ] && return 0
	echo "# outlets: $(echo "$got" | tr '\n' '|'), expected: $(echo "$want" | tr '\n' '|')"
	return 1
}

pdu="driver = \"pdudaemon\"; url = \"$url\"; hostname = \"pdu01\"; port = 3;"

power on "$pdu"
check "power on switches outlet 3 on" expect 0 ok "3 on"

power off "$pdu"
check "power off switches outlet 3 off" expect 0 ok "3 on" "3 off"

start=$(date +%s.%N)
power cycle "$pdu delay = 1;"
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
check "power cycle is one reboot: off, then on" expect 0 ok "3 on" "3 off" "3 off" "3 on"
check "the reboot waited delay = 1 s (took $elapsed s)" \
	awk -v e="$elapsed" 'BEGIN { exit !(e >= 1) }'

power on "driver = \"pdudaemon\"; url = \"$url\"; alias = \"board1\";"
check "an alias names the PDU and outlet" expect 0 ok "3 on" "3 off" "3 off" "3 on" "4 on"

power off "driver = \"pdudaemon\"; url = \"$url/\"; hostname = \"pdu01\"; port = \"5\";"
check "a string port and a trailing slash in the url work" \
	expect 0 ok "3 on" "3 off" "3 off" "3 on" "4 on" "5 off"

power on "driver = \"pdudaemon\"; url = \"$url\"; hostname = \"nosuch\"; port = 3;"
want="error: pdudaemon refused 'on' for nosuch port 3: HTTP 500: Invalid request"
check "an unknown PDU fails with pdudaemon's answer" expect 1 "$want"

power cycle "driver = \"pdudaemon\"; url = \"http://127.0.0.1:$dead_port\"; alias = \"board1\";"
want="error: cannot reach pdudaemon at 'http://127.0.0.1:$dead_port': Connection refused"
check "a dead daemon fails with 'cannot reach'" expect 1 "$want"

power on "driver = \"pdudaemon\"; url = \"$url\"; alias = \"board1\"; port = 3;"
want="<command line>:1: 'alias' cannot be combined with 'hostname' or 'port'"
check "alias with port is a configuration error (exit 2, file:line)" expect 2 "$want"

check "no request reached a PDU after the errors" \
	expect 2 "$want" "3 on" "3 off" "3 off" "3 on" "4 on" "5 off"

exit $failed
