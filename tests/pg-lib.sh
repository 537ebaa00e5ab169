# SPDX-License-Identifier: GPL-2.0-or-later
# tests/pg-lib.sh -- a PostgreSQL server of the test's own, for the tests of
# the postgresql store (sourced after lib.sh).
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/pg-lib.sh"
#   pg_start || { test_skip ...; test_done; exit; }
#   # $PG_CONNINFO: the database "labd" as role "labd", over TCP on loopback
#   pg_stop; pg_start_again      # the same cluster, stopped and started
#
# Debian's server binaries (/usr/lib/postgresql/<version>/bin): initdb in
# $TMP/pg, pg_ctl on 127.0.0.1:<free port> and a Unix socket in the same
# directory; never the system's service (its cluster, port or socket).
# PostgreSQL refuses to run as root: when root, the cluster belongs to a
# dedicated unprivileged user (labd-test, created once, no login) or to
# nobody.  fsync is off: a test cluster does not need to survive power cuts.

PG_BIN=
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
	[ -x "$d/initdb" ] && { PG_BIN=$d; break; }
done
PG_DIR=$TMP/pg
PG_USER=

# _pg_as CMD...: run CMD as the cluster's owner.
_pg_as() {
	if [ -n "$PG_USER" ]; then
		runuser -u "$PG_USER" -- "$@"
	else
		"$@"
	fi
}

# _pg_owner: the unprivileged user that runs the server when we are root.
_pg_owner() {
	[ "$(id -u)" = 0 ] || return 0
	if ! id -u labd-test >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin labd-test \
			>/dev/null 2>&1 || true
	fi
	if id -u labd-test >/dev/null 2>&1; then
		PG_USER=labd-test
	else
		PG_USER=nobody
	fi
}

# pg_start: a new cluster, started; sets PG_PORT, PG_HOST (the socket
# directory) and PG_CONNINFO; fails (with the reason) when PostgreSQL's
# server is not installed.
pg_start() {
	[ -n "$PG_BIN" ] || { echo "PostgreSQL's server is not installed (make deps)"; return 1; }
	_pg_owner
	mkdir -p "$PG_DIR"
	chmod 755 "$TMP" "$PG_DIR"
	[ -z "$PG_USER" ] || chown "$PG_USER" "$PG_DIR"
	_pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U labd --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
		>"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log"; return 1; }
	PG_PORT=$(free_port)
	PG_HOST=$PG_DIR
	at_exit "pg_stop_now"
	pg_start_again || return 1
	_pg_as "$PG_BIN/psql" -h "$PG_HOST" -p "$PG_PORT" -U labd -d postgres -q \
		-c "CREATE DATABASE labd" >/dev/null || return 1
	PG_CONNINFO="host=127.0.0.1 port=$PG_PORT user=labd dbname=labd connect_timeout=5"
	export PG_CONNINFO PG_PORT PG_HOST
}

# pg_start_again: start the (stopped) cluster on the same port.
pg_start_again() {
	_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
		-o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off \
		-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${PG_EXTRA_OPTS:-}" \
		start >/dev/null || { tail -20 "$PG_DIR/server.log"; return 1; }
}

# pg_stop: a fast shutdown (sessions cut, nothing lost), waiting for it.
pg_stop() {
	_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop >/dev/null
}

# pg_stop_now: at exit, whatever state the server is in.
pg_stop_now() {
	[ -f "$PG_DIR/data/postmaster.pid" ] &&
		_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 10 stop
	true
}

# pg_sql SQL [DB]: run SQL on the test server, unaligned tuples only, as labd.
pg_sql() {
	_pg_as "$PG_BIN/psql" -h "$PG_HOST" -p "$PG_PORT" -U labd -d "${2:-labd}" -X -q -A -t \
		-v ON_ERROR_STOP=1 -c "$1"
}

# pg_createdb NAME: a new empty database on the test server.
pg_createdb() {
	pg_sql "CREATE DATABASE \"$1\"" postgres >/dev/null
}

# pg_host_lab [--type TYPE] [--sim ARGS] [--lease S] [--conf TEXT] NAME PREFIX N
#             [STORE KEYS]: a labd host in $TMP/NAME, its labd.conf on the test's
# PostgreSQL as host NAME (host_lease S, default 3; STORE KEYS added to the
# `store` group, TEXT to labd.conf) with N simulated boards (simboard ARGS)
# PREFIX-01 .. of device type TYPE (default sim-uboot); leaves LAB=$TMP/NAME.
# Every multi-host test makes its hosts so.
pg_host_lab() {
	local type=sim-uboot sim= lease=3 conf= i
	while :; do
		case $1 in
		--type) type=$2 ;;
		--sim) sim=$2 ;;
		--lease) lease=$2 ;;
		--conf) conf=$2 ;;
		*) break ;;
		esac
		shift 2
	done
	LAB=$TMP/$1
	# shellcheck disable=SC2086 # ARGS are words
	sim_start "$3" $sim
	write_lab_conf "store = { driver = \"postgresql\"; conninfo = \"$PG_CONNINFO\"; host = \"$1\"; host_lease = $lease; timeout = 5; ${4:-} };
$conf"
	for i in $(seq 0 $(($3 - 1))); do
		sim_device "$(printf '%s-%02d' "$2" $((i + 1)))" "$i" "$type"
	done
}

# pg_host_start NAME [ARGS]: labd of $TMP/NAME in the background, its URL in
# URL_<NAME> and its port in PORT_<NAME>, its pid in $TMP/NAME.pid; waits
# until it answers.
pg_host_start() {
	local port name=$1
	shift
	port=$(free_port)
	"$LABD" -c "$TMP/$name/labd.conf" --listen "127.0.0.1:$port" "$@" \
		>>"$TMP/$name/labd.log" 2>&1 </dev/null &
	echo $! >"$TMP/$name.pid"
	echo "$!" >>"$TMP/labd.pids"
	at_exit "kill -9 $!"
	eval "URL_$name=http://127.0.0.1:$port PORT_$name=$port"
	wait_for "curl -sf http://127.0.0.1:$port/api/v1/health" 30
}

# pg_require WHAT: start the test's server (pg_start), or skip the whole
# test (WHAT: what it tests) and exit when PostgreSQL is not installed.
pg_require() {
	pg_start >"$TMP/pg-start.log" 2>&1 && return 0
	test_skip "$1" "no PostgreSQL server: $(tail -1 "$TMP/pg-start.log")"
	test_done
	exit
}

# pg_ticks_job FILE N: a job that boots a simulated board, then prints
# "tick-1" .. "tick-N" half a second apart on its console.
pg_ticks_job() {
	{
		cat <<JOB
job_name: ticks
device_type: sim-uboot
timeouts: {job: {minutes: 3}, action: {minutes: 2}, connection: {seconds: 20}}
actions:
$(sim_uboot_boot)
- test:
    definitions:
    - from: inline
      name: ticks
      path: inline/ticks.yaml
      repository:
        metadata: {format: Lava-Test Test Definition 1.0, name: ticks}
        run:
          steps:
JOB
		for i in $(seq 1 "$2"); do
			echo "          - echo tick-$i"
			echo "          - sleep 0.5"
		done
	} >"$1"
}
