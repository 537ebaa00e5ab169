# SPDX-License-Identifier: GPL-2.0-or-later
# peers.sh -- sourced by bench-scale.sh when PEERS=1 (make bench PEERS=1): Debian's
# LAVA dispatcher (lava-run) and labgrid, installed with apt-get, run the job labd
# just ran on the same simulated board, and their figures are printed beside labd's.
#
# How the peers run (as in shared/notes/peer-measurements.md):
# - LAVA: lava-run standalone (no server, no worker) with a device dictionary
#   rendered from lava-server's 2023.01 base.jinja2 (fetched with apt-get
#   download, unpacked, never installed): console `socat` on the board's pty,
#   power through `simboard ctl`; the job is labd's own job file (LAVA's
#   syntax): a minimal boot with auto-login, an interactive test of two commands.
# - labgrid: the library (Debian ships no coordinator): RawSerialPort on the pty,
#   SerialDriver and ExternalPowerDriver; power cycle, log in, the two commands,
#   each matched with SerialDriver's expect().  labgrid's ShellDriver is not
#   used: it defines a shell function on the target, which the simulated
#   board's shell lacks.
# Each peer runs $BENCH_PEER_RUNS times (default 3) under GNU time; its figures
# are medians: wall, CPU (the peer and the children it reaps: socat, the power
# commands) and max RSS (its largest process).  A peer that cannot be installed
# or run is reported with the reason, and the benchmark carries on.

PEER_RUNS=${BENCH_PEER_RUNS:-3}
PEER_DIR=$BUILD/peers	# the lava-server package and its templates, kept between runs
PEER_PROMPT='root@sim:~# '

# peer_sudo CMD...: CMD as root (sudo when not root, never asking for a password).
peer_sudo() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

# peers_install: lava-dispatcher, labgrid and lava-server's device-type templates.
# Prints why and returns 1 for each part that is missing afterwards.
peers_install() {
	local pkgs=() r=0
	[ -x /usr/bin/lava-run ] || pkgs+=(lava-dispatcher)
	/usr/bin/python3 -c 'import labgrid' 2>/dev/null || pkgs+=(labgrid python3-labgrid)
	if [ ${#pkgs[@]} -gt 0 ]; then
		echo "peers: installing ${pkgs[*]} (apt-get, no recommends)"
		peer_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${pkgs[@]}" >"$TMP/peers-apt.log" 2>&1 ||
			echo "peers: apt-get install ${pkgs[*]} failed: $(tail -1 "$TMP/peers-apt.log")"
	fi
	mkdir -p "$PEER_DIR"
	if [ ! -f "$PEER_DIR/templates/base.jinja2" ]; then
		( cd "$PEER_DIR" && rm -f lava-server_*.deb && apt-get download lava-server &&
		  dpkg -x lava-server_*.deb x &&
		  ln -sfn x/usr/share/lava-server/device-types templates ) >"$TMP/peers-dl.log" 2>&1 ||
			echo "peers: cannot fetch lava-server's device-type templates: $(tail -1 "$TMP/peers-dl.log")"
	fi
}

# peer_time OUT CMD...: CMD under GNU time; appends "wall cpu rss_mb" to OUT; CMD's status.
peer_time() {
	local out=$1 rc=0; shift
	/usr/bin/time -f '%e %U %S %M' -o "$TMP/peer-time" "$@" || rc=$?
	awk '{ printf "%s %.3f %.1f\n", $1, $2 + $3, $4 / 1024 }' "$TMP/peer-time" >>"$out"
	return $rc
}

# peer_lava_setup SIMDIR BOARD JOB: device dictionary and job in $TMP/lava.
peer_lava_setup() {
	local dir=$1 board=$2 ctl="$SIMBOARD ctl $1"
	mkdir -p "$TMP/lava/dd"
	cat >"$TMP/lava/dd/simboard.jinja2" <<EOF
{% extends 'base.jinja2' %}
{% set connection_command = 'socat -,raw,echo=0 $dir/$board.pty,raw,echo=0' %}
{% set hard_reset_command = '$ctl power $board reset' %}
{% set power_on_command = '$ctl power $board on' %}
{% set power_off_command = '$ctl power $board off' %}
{% block body %}
actions:
  deploy:
    methods:
      tftp:
  boot:
    connections:
      serial:
    methods:
      minimal:
{% endblock body %}
EOF
	/usr/bin/python3 - "$TMP/lava/dd" "$PEER_DIR/templates" >"$TMP/lava/device.yaml" <<'EOF' || return 1
import sys, jinja2, yaml
env = jinja2.Environment(loader=jinja2.FileSystemLoader(sys.argv[1:]), trim_blocks=True,
                         autoescape=False)
out = env.get_template("simboard.jinja2").render()
yaml.safe_load(out)
print(out)
EOF
	# labd's job file is LAVA's syntax: only the device type and what LAVA requires differ
	sed 's/^device_type: .*/device_type: simboard/' "$3" >"$TMP/lava/job.yaml" &&
	printf 'priority: medium\nvisibility: public\n' >>"$TMP/lava/job.yaml"
}

# peer_lava SIMDIR BOARD JOB: lava-run $PEER_RUNS times; figures in $TMP/lava.runs.
peer_lava() {
	local i out
	[ -x /usr/bin/lava-run ] || { echo "peers: LAVA: lava-run is not installed"; return 1; }
	[ -f "$PEER_DIR/templates/base.jinja2" ] ||
		{ echo "peers: LAVA: no device-type templates (lava-server package)"; return 1; }
	peer_lava_setup "$1" "$2" "$3" || { echo "peers: LAVA: cannot render the device dictionary"; return 1; }
	: >"$TMP/lava.runs"
	for i in $(seq "$PEER_RUNS"); do
		out=$TMP/lava/run-$i
		sim_ctl power "$2" off >/dev/null	# a silent board, no stale output
		peer_time "$TMP/lava.runs" /usr/bin/lava-run --job-id "bench$i" --output-dir "$out" \
			--device "$TMP/lava/device.yaml" "$TMP/lava/job.yaml" >"$out.log" 2>&1
		grep -q '"case": "job", "definition": "lava", "result": "pass"' "$out.log" || {
			echo "peers: LAVA: job $i did not pass: $(grep -o '"error_msg": "[^"]*"' "$out.log" | tail -1)"
			return 1
		}
	done
}

# peer_labgrid SIMDIR BOARD: labgrid $PEER_RUNS times; figures in $TMP/labgrid.runs.
peer_labgrid() {
	local dir=$1 board=$2 ctl="$SIMBOARD ctl $1" i
	/usr/bin/python3 -c 'import labgrid' 2>/dev/null ||
		{ echo "peers: labgrid: python3-labgrid is not installed"; return 1; }
	mkdir -p "$TMP/labgrid"
	cat >"$TMP/labgrid/env.yaml" <<EOF
targets:
  main:
    resources:
      RawSerialPort: {port: '$dir/$board.pty', speed: 115200}
    drivers:
      ExternalPowerDriver: {cmd_on: '$ctl power $board on', cmd_off: '$ctl power $board off',
                            cmd_cycle: '$ctl power $board reset'}
      SerialDriver: {txdelay: 0.0}
EOF
	cat >"$TMP/labgrid/job.py" <<'EOF'
# labd's bench job through labgrid's drivers: power cycle, log in, two commands.
import re, sys
from labgrid import Environment

PROMPT = re.escape(sys.argv[2])
target = Environment(sys.argv[1]).get_target("main")
power = target.get_driver("ExternalPowerDriver")
console = target.get_driver("SerialDriver")
power.off()
power.cycle()
console.expect(r" login: ", timeout=60)
console.sendline("root")
console.expect(PROMPT, timeout=30)
for cmd, want in (("uname -a", b"Linux sim"), ("cat /proc/version", b"Linux version")):
    console.sendline(cmd)
    _, before, _, _ = console.expect(PROMPT, timeout=30)
    if want not in before:
        sys.exit(f"{cmd}: no {want!r} in {before!r}")
power.off()
EOF
	: >"$TMP/labgrid.runs"
	for i in $(seq "$PEER_RUNS"); do
		peer_time "$TMP/labgrid.runs" /usr/bin/python3 "$TMP/labgrid/job.py" \
			"$TMP/labgrid/env.yaml" "$PEER_PROMPT" >"$TMP/labgrid/run-$i.log" 2>&1 || {
			echo "peers: labgrid: run $i failed: $(tail -1 "$TMP/labgrid/run-$i.log")"
			return 1
		}
	done
}

# peer_print NAME RUNS LABD_CPU LABD_RSS LABD_WALL: medians and labd's ratios.
peer_print() {
	local wall cpu rss
	wall=$(cut -d" " -f1 "$2" | median) cpu=$(cut -d" " -f2 "$2" | median)
	rss=$(cut -d" " -f3 "$2" | median)
	awk -v name="$1" -v n="$(wc -l <"$2")" -v pw="$wall" -v pc="$cpu" -v pr="$rss" \
	    -v c="$3" -v r="$4" -v w="$5" 'BEGIN {
		printf "bench-scale: %s, same board and job, medians of %d: wall %.2f s, CPU %.3f s, RSS %.1f MB; labd: wall %.2f s, CPU %.3f s, RSS %.1f MB: labd uses %.0fx less CPU and %.1fx less memory per job\n",
			name, n, pw, pc, pr, w, c, r, pc / c, pr / r }'
}

# peers_run SIMDIR BOARD JOB LABD_CPU LABD_RSS LABD_WALL: both peers on BOARD (labd stopped).
peers_run() {
	echo "bench-scale: peers measured live on board $2 (PEERS=1)"
	peers_install
	if peer_lava "$1" "$2" "$3"; then
		peer_print "LAVA $(dpkg-query -W -f '${Version}' lava-dispatcher) lava-run" \
			"$TMP/lava.runs" "$4" "$5" "$6"
	fi
	if peer_labgrid "$1" "$2"; then
		peer_print "labgrid $(dpkg-query -W -f '${Version}' python3-labgrid)" \
			"$TMP/labgrid.runs" "$4" "$5" "$6"
	fi
	echo "bench-scale: peers' console latency: not measured (labd's is bench-streaming's)"
}
