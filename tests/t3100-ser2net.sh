#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t3100-ser2net.sh -- the telnet and tcp console drivers against a real ser2net on a pty board
#
# A python "board" owns a pty (link $tmp/ttyA, $tmp/ttyB); ser2net 4.3.11 serves
# ttyA on a telnet(rfc2217) port and ttyB on a raw tcp port; labd's console
# code (build/tests/helper/console-tool) connects to both.
set -u
top=${LABD_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
tool=$BUILD/tests/helper/console-tool
SER2NET=/usr/sbin/ser2net
PY=/usr/bin/python3
NTESTS=7

skip_all() {
	echo "1..$NTESTS"
	for i in $(seq 1 $NTESTS); do
		echo "ok $i - ser2net console # SKIP $1"
	done
	exit 0
}

[ -x "$SER2NET" ] || skip_all "$SER2NET not installed (make deps installs ser2net)"
[ -x "$PY" ] || skip_all "$PY not installed"
[ -x "$tool" ] || skip_all "$tool not built (make tests)"
command -v ss >/dev/null || skip_all "ss (iproute2) not installed"

tmp=$(mktemp -d /tmp/t3100.XXXXXX)
pids=()
s2n_pid=
cleanup() {
	[ -n "$s2n_pid" ] && kill "$s2n_pid" 2>/dev/null
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# free_ports N: N distinct free TCP ports on 127.0.0.1
free_ports() {
	$PY -c 'import socket, sys
socks = [socket.socket() for i in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

# The board: prints a payload with 0xFF bytes whenever it reads "ping\n";
# records everything it reads in $tmp/recv<NAME>.
cat >"$tmp/board.py" <<'EOF'
import os, select, signal, sys, tty
link, recv = sys.argv[1], sys.argv[2]
master, slave = os.openpty()
tty.setraw(slave)
os.symlink(os.ttyname(slave), link)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
pending = b""
try:
    with open(recv, "wb", buffering=0) as out:
        while True:
            select.select([master], [], [])
            data = os.read(master, 4096)
            out.write(data)
            pending += data
            while b"ping\n" in pending:
                pending = pending.split(b"ping\n", 1)[1]
                os.write(master, b"PAYLOAD:\xff\xfe\xff\xff\x00:END\r\n")
finally:
    os.unlink(link)
EOF
for b in A B; do
	$PY "$tmp/board.py" "$tmp/tty$b" "$tmp/recv$b" &
	pids+=($!)
done
wait_for 5 test -L "$tmp/ttyA" -a -L "$tmp/ttyB" || skip_all "the python pty board did not start"
printf 'PAYLOAD:\377\376\377\377\000:END\r\n' >"$tmp/payload"

read -r port_telnet port_tcp < <(free_ports 2)
cat >"$tmp/ser2net.yaml" <<EOF
%YAML 1.1
---
connection: &board-a
  accepter: telnet(rfc2217),tcp,127.0.0.1,$port_telnet
  connector: serialdev,$tmp/ttyA,115200n81,local
  options:
    max-connections: 2

connection: &board-b
  accepter: tcp,127.0.0.1,$port_tcp
  connector: serialdev,$tmp/ttyB,115200n81,local
EOF

start_ser2net() {
	"$SER2NET" -n -u -c "$tmp/ser2net.yaml" >>"$tmp/ser2net.log" 2>&1 &
	s2n_pid=$!
	wait_for 10 listening "$port_telnet" && wait_for 5 listening "$port_tcp"
}

stop_ser2net() {
	kill "$s2n_pid"
	wait "$s2n_pid" 2>/dev/null
	s2n_pid=
}

echo "1..$NTESTS"
if ! start_ser2net; then
	cat "$tmp/ser2net.log" | sed 's/^/# /'
	skip_all "ser2net did not listen on 127.0.0.1:$port_telnet"
fi

telnet="driver = \"telnet\"; host = \"127.0.0.1\"; port = $port_telnet;"

# 1, 2: both directions through the telnet port, 0xFF included
"$tool" -t 10 -e ':END\r\n' -s 'ping\n\xff!' -o "$tmp/out1" "$telnet" 2>"$tmp/log1"
rc=$?
sed 's/^/# /' "$tmp/log1"
check "telnet: board bytes with 0xFF reach labd (rc $rc)" cmp -s "$tmp/payload" "$tmp/out1"
printf 'ping\n\377!' >"$tmp/expect2"
wait_for 2 cmp -s "$tmp/expect2" "$tmp/recvA"
check "telnet: labd bytes with 0xFF reach the board" cmp -s "$tmp/expect2" "$tmp/recvA"

# 3: RFC 2217 SET-BAUDRATE changes the pty's speed while connected
speed_is() { [ "$(stty -F "$tmp/ttyA" speed 2>/dev/null)" = "$1" ]; }
: >"$tmp/log3"
"$tool" -v -t 4 -o /dev/null "$telnet rfc2217 = true; baud = 9600;" 2>"$tmp/log3" &
tool_pid=$!
pids+=($tool_pid)
wait_for 5 grep -q 'server set the baud rate to 9600' "$tmp/log3" && wait_for 2 speed_is 9600
speed=$(stty -F "$tmp/ttyA" speed 2>/dev/null)
wait "$tool_pid"
sed 's/^/# /' "$tmp/log3"
check "telnet: rfc2217 baud = 9600 sets the board's pty to $speed" test "$speed" = 9600

# 4, 5: ser2net goes away and comes back
: >"$tmp/log4"
"$tool" -t 20 -u 2 -o /dev/null "$telnet" 2>"$tmp/log4" &
tool_pid=$!
pids+=($tool_pid)
wait_for 5 grep -q 'console-tool: up' "$tmp/log4"
stop_ser2net
wait_for 5 grep -q 'console-tool: down: ' "$tmp/log4"
check "telnet: killing ser2net takes the console down with a reason" \
	grep -q 'console-tool: down: ..*' "$tmp/log4"
start_ser2net
wait "$tool_pid"
rc=$?
sed 's/^/# /' "$tmp/log4"
check "telnet: restarting ser2net brings the console back (rc $rc)" \
	test "$rc" = 0 -a "$(grep -c 'console-tool: up' "$tmp/log4")" = 2 -a \
	"$(grep -c 'console-tool: down' "$tmp/log4")" = 1

# 6, 7: the raw tcp accepter passes 0xFF through unchanged
tcp="driver = \"tcp\"; host = \"127.0.0.1\"; port = $port_tcp;"
"$tool" -t 10 -e ':END\r\n' -s 'ping\n\xff\xff' -o "$tmp/out6" "$tcp" 2>"$tmp/log6"
rc=$?
sed 's/^/# /' "$tmp/log6"
check "tcp: board bytes with 0xFF reach labd (rc $rc)" cmp -s "$tmp/payload" "$tmp/out6"
printf 'ping\n\377\377' >"$tmp/expect7"
wait_for 2 cmp -s "$tmp/expect7" "$tmp/recvB"
check "tcp: labd bytes with 0xFF reach the board" cmp -s "$tmp/expect7" "$tmp/recvB"
