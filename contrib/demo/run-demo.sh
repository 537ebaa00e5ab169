#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-demo.sh -- labd on a simulated lab: three simulated arm64 boards with
# U-Boot on pseudo-terminals, powered through a control socket, an artifact
# server, and labd.  Submits jobs/sim-uboot.yaml, follows its console live and
# prints the outcome.  Everything runs as the current user on loopback and is
# stopped at the end; the state stays in $DEMO (default /tmp/labd-demo).
# KEEP=1 (`make demo KEEP=1`) leaves the lab running to explore (the dashboard,
# labctl, lavacli) until Ctrl-C.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
DEMO=${DEMO:-/tmp/labd-demo}
PORT=${LABD_DEMO_PORT:-8640}
ART_PORT=8642
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

port_busy() {
	/usr/bin/python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$1))!=0)"
}
for p in $PORT $ART_PORT; do
	if port_busy "$p"; then
		echo "demo: port $p on 127.0.0.1 is in use (set LABD_DEMO_PORT for labd's)" >&2
		exit 1
	fi
done

rm -rf "$DEMO"
mkdir -p "$DEMO/sim" "$DEMO/devices"
echo "== simulated lab in $DEMO: 3 boards, sim-01, sim-02 and sim-03 (simulated on pseudo-terminals)"
"$BUILD/simboard" --dir "$DEMO/sim" --count 3 >"$DEMO/simboard.log" 2>&1 &
pids+=($!)
/usr/bin/python3 -m http.server "$ART_PORT" --bind 127.0.0.1 \
	--directory "$top/contrib/lab/artifacts" >"$DEMO/artifacts.log" 2>&1 &
pids+=($!)

cp "$top/devices/sim.conf" "$DEMO/devices/00-sim-types.conf"
for i in 0 1 2; do
	cat >"$DEMO/devices/10-sim-0$((i + 1)).conf" <<CONF
device = {
	name = "sim-0$((i + 1))";
	type = "sim-uboot";
	description = "simulated arm64 board $i";
	tags = [ "sim", "arm64" ];
	console = { driver = "pty"; path = "$DEMO/sim/sim$i.pty"; };
	power = {
		driver = "command";
		on = "$BUILD/simboard ctl $DEMO/sim power sim$i on";
		off = "$BUILD/simboard ctl $DEMO/sim power sim$i off";
	};
};
CONF
done
cat >"$DEMO/labd.conf" <<CONF
lab_name = "demo";
state_dir = "state";
devices_dir = "devices";
server_ip = "10.0.2.2";
http = { listen = "127.0.0.1:$PORT"; };
CONF

for i in $(seq 100); do
	[ -e "$DEMO/sim/sim2.pty" ] && port_busy "$ART_PORT" && break
	sleep 0.05
done
"$BUILD/labd" check-config -c "$DEMO/labd.conf"
"$BUILD/labd" -c "$DEMO/labd.conf" >"$DEMO/labd.log" 2>&1 &
pids+=($!)
export LABD_URL=http://127.0.0.1:$PORT
for i in $(seq 100); do
	"$BUILD/labctl" devices >/dev/null 2>&1 && break
	sleep 0.1
done
echo "== labd is up at $LABD_URL (log: $DEMO/labd.log)"
"$BUILD/labctl" devices
echo
echo "== labctl submit jobs/sim-uboot.yaml --follow"
status=0
"$BUILD/labctl" submit "$top/jobs/sim-uboot.yaml" --follow || status=$?
echo
echo "== labctl jobs"
"$BUILD/labctl" jobs
echo
echo "== the board is off again:"
"$BUILD/labctl" devices
echo
echo "demo finished with status $status (0 = complete). State, logs and database: $DEMO/state"
if [ -n "${KEEP:-}" ] && [ "$KEEP" != 0 ]; then
	cat <<EXPLORE

== the lab stays up (KEEP=$KEEP); Ctrl-C stops it
   dashboard:  $LABD_URL/  (no token needed on loopback)
   labctl:     export LABD_URL=$LABD_URL
               $BUILD/labctl devices
               $BUILD/labctl submit $top/jobs/sim-uboot.yaml --follow
               $BUILD/labctl reserve sim-01 && $BUILD/labctl console sim-01
   lavacli:    lavacli --uri $LABD_URL/RPC2 devices list
   labd's log: $DEMO/labd.log
EXPLORE
	trap 'echo; echo "== stopping the demo lab"; exit $status' INT TERM
	wait "${pids[2]}" || true
	echo "labd stopped"
fi
exit $status
