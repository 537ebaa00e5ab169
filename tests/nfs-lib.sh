# SPDX-License-Identifier: GPL-2.0-or-later
# tests/nfs-lib.sh -- an NFS server and NFS-root fixtures for the scenario tests
# and benchmarks, sourced after tests/lib.sh (and tests/qemu/lib.sh for
# nfs_lab, tests/ci/lib.sh for nfs_testdef_repo):
#
#   nfs_fixtures arm64 x86_64 || { test_skip 'NFS boots' "$NFS_SKIP"; test_done; exit; }
#   nfs_server "$LAB/nfs" || { test_skip ... "$NFS_SKIP"; ...; }
#   nfs_lab_conf "$LAB/nfs" >>"$LAB/labd.conf"   # labd.conf's nfs group for it
#
# nfs_fixtures runs tests/nfs/prepare.sh (Debian kernels, the NFS initramfs,
# Debian 12 roots, cached) and sets NFS_FIX.  nfs_server starts Debian's
# nfs-ganesha (VFS back end, NFSv3 over TCP, NLM off) on 127.0.0.1, exporting
# one directory, on free ports: NFS_PORT (NFS) and NFS_MOUNT_PORT (its mount
# daemon).  Boards on QEMU's user network reach it at 10.0.2.2 and must be
# told the ports (nfsroot's port= and mountport=, in NFS_MOUNT_OPTIONS), so
# that they never ask a portmapper.  It is stopped when the script ends.
#
# Why root: ganesha's VFS back end opens files by handle (open_by_handle_at
# needs CAP_DAC_READ_SEARCH) and keeps the owners the boards write, and its
# NFSv3 programs must be registered with rpcbind at start, which rpcbind
# refuses to other users; without root the tests skip, saying so.
#
# rpcbind: ganesha exits at start when it cannot register NFSv3 with a
# portmapper, yet nothing asks the portmapper afterwards (the ports are
# given).  So when none runs, nfs_server starts Debian's rpcbind only for
# ganesha's start, and stops it at once; a lock keeps two tests from doing it
# at the same time.

NFS_PREPARE=$TOP/tests/nfs/prepare.sh

# nfs_fixtures ARCH...: fetch, build or reuse the NFS fixtures; sets NFS_FIX, or
# NFS_SKIP (why not) and fails.
nfs_fixtures() {
	local rc=0
	NFS_FIX=$("$NFS_PREPARE" "$@" 2>"$TMP/nfs-prepare.err") || rc=$?
	[ $rc = 0 ] && return 0
	NFS_SKIP=$(tail -1 "$TMP/nfs-prepare.err")
	[ -n "$NFS_SKIP" ] || NFS_SKIP="tests/nfs/prepare.sh failed with status $rc"
	return 1
}

# nfs_can_serve: whether nfs-ganesha can run here; sets NFS_SKIP and fails when not.
nfs_can_serve() {
	if [ "$(id -u)" != 0 ]; then
		NFS_SKIP="nfs-ganesha's VFS back end needs root (open by handle, owners; rpcbind registration)"
		return 1
	fi
	if ! command -v ganesha.nfsd >/dev/null || ! command -v rpcbind >/dev/null ||
	   ! ls /usr/lib/*/ganesha/libfsalvfs.so >/dev/null 2>&1; then
		NFS_SKIP="no nfs-ganesha (apt-get install nfs-ganesha nfs-ganesha-vfs rpcbind)"
		return 1
	fi
}

# nfs_ganesha_conf DIR: ganesha's configuration exporting DIR, on stdout.
nfs_ganesha_conf() {
	cat <<CONF
# nfs-ganesha for one test: NFSv3 over TCP on loopback, no locks, no quotas
NFS_CORE_PARAM {
	Protocols = 3;
	Bind_addr = 127.0.0.1;
	NFS_Port = $NFS_PORT;
	MNT_Port = $NFS_MOUNT_PORT;
	Enable_UDP = false;
	Enable_NLM = false;
	Enable_RQUOTA = false;
}
NFS_KRB5 { Active_krb5 = false; }
NFSV4 { Graceless = true; RecoveryRoot = "$TMP/ganesha/recovery"; }
EXPORT_DEFAULTS { Transports = TCP; SecType = sys; }
EXPORT {
	Export_Id = 1;
	Path = "$1";
	Pseudo = "$1";
	Access_Type = RW;
	Squash = No_Root_Squash;
	Protocols = 3;
	FSAL { Name = VFS; }
}
CONF
}

# _nfs_start_ganesha: ganesha in the foreground (its pid is ours to stop),
# ready when it says so; fails with the end of its log otherwise.
_nfs_start_ganesha() {
	local d=$TMP/ganesha
	: >"$d/ganesha.log"
	ganesha.nfsd -F -f "$d/ganesha.conf" -L "$d/ganesha.log" -p "$d/ganesha.pid" \
		>"$d/ganesha.out" 2>&1 &
	NFS_PID=$!
	wait_for "grep -q 'NFS SERVER INITIALIZED' '$d/ganesha.log' || ! kill -0 $NFS_PID" 30
	grep -q 'NFS SERVER INITIALIZED' "$d/ganesha.log" && return 0
	kill "$NFS_PID" 2>/dev/null
	wait "$NFS_PID" 2>/dev/null
	return 1
}

# nfs_server DIR: nfs-ganesha exporting DIR (made if missing) on 127.0.0.1;
# sets NFS_PORT, NFS_MOUNT_PORT, NFS_PID, NFS_MOUNT_OPTIONS, or NFS_SKIP and fails.
nfs_server() {
	local dir=$1 d=$TMP/ganesha rpcbind_pid= rc=0
	nfs_can_serve || return 1
	mkdir -p "$dir" "$d/recovery"
	NFS_PORT=$(free_port)
	NFS_MOUNT_PORT=$(free_port)
	NFS_MOUNT_OPTIONS="port=$NFS_PORT,mountport=$NFS_MOUNT_PORT,mountproto=tcp,nolock"
	nfs_ganesha_conf "$(cd "$dir" && pwd)" >"$d/ganesha.conf"
	exec 8>"${TMPDIR:-/tmp}/labd-test-rpcbind.lock"
	flock 8
	if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
		rpcbind -f >"$d/rpcbind.log" 2>&1 &
		rpcbind_pid=$!
		wait_for "rpcinfo -p 127.0.0.1" 10 || rc=1
	fi
	[ $rc = 0 ] && _nfs_start_ganesha || rc=1
	if [ -n "$rpcbind_pid" ]; then
		kill "$rpcbind_pid" 2>/dev/null
		wait "$rpcbind_pid" 2>/dev/null
	fi
	flock -u 8
	exec 8>&-
	# the export answers a client given the ports, with no portmapper (libnfs)
	if [ $rc = 0 ] && command -v nfs-ls >/dev/null &&
	   ! nfs-ls "$(nfs_url "$(cd "$dir" && pwd)")" >"$d/nfs-ls.out" 2>&1; then
		echo "nfs-ls: $(tail -1 "$d/nfs-ls.out")" >>"$d/ganesha.log"
		nfs_server_stop
		rc=1
	fi
	if [ $rc != 0 ]; then
		NFS_SKIP="nfs-ganesha did not start: $(grep -v DBUS "$d/ganesha.log" "$d/rpcbind.log" 2>/dev/null | tail -1)"
		return 1
	fi
	at_exit nfs_server_stop
}

# nfs_server_stop: SIGTERM, then SIGKILL what is left after 10 s.
nfs_server_stop() {
	[ -n "${NFS_PID:-}" ] || return 0
	kill "$NFS_PID" 2>/dev/null
	wait_for "! kill -0 $NFS_PID" 10 || kill -9 "$NFS_PID" 2>/dev/null
	wait "$NFS_PID" 2>/dev/null
	NFS_PID=
}

# nfs_url PATH: a libnfs URL of PATH (under the export) on our server.
nfs_url() {
	echo "nfs://127.0.0.1$1?version=3&nfsport=$NFS_PORT&mountport=$NFS_MOUNT_PORT"
}

# nfs_lab_conf DIR: labd.conf's nfs group for the server of nfs_server DIR, on stdout.
nfs_lab_conf() {
	cat <<CONF
nfs = {
	export_dir = "$(cd "$1" && pwd)";
	server_ip = "10.0.2.2";
	mount_options = "$NFS_MOUNT_OPTIONS";
};
CONF
}

# nfs_lab: the QEMU lab of tests/qemu/lib.sh (qemu_lab) with its boards' roots on
# NFS: nfs-ganesha exporting $LAB/nfs (nfs_server), labd.conf's nfs group for
# it, and the artifact server serving $TMP/art, where each architecture of
# $NFS_FIX is linked (ARCH/...: add files there).  Sets NFS_SKIP and fails
# when the server cannot run.
nfs_lab() {
	local a
	nfs_server "$LAB/nfs" || return 1
	mkdir -p "$TMP/art"
	for a in "$NFS_FIX"/*/; do
		a=${a%/}
		ln -s "$a" "$TMP/art/${a##*/}"
	done
	qemu_lab "$TMP/art"
	nfs_lab_conf "$LAB/nfs" >>"$LAB/labd.conf"
}

# nfs_testdef_repo DIR: a git repository shaped like Linaro's test-definitions
# with automated/linux/nfs-root/nfs-root.yaml: with parameter PROOF, its script
# reports whether / is an NFS mount (root-on-nfs), whether the deploy's modules
# are in the kernel's directory with /lib still Debian's symlink into /usr
# (modules-in-root), then writes "PROOF <machine> <root's source>" as
# /root/labd-proof (owned by 4321:4321, renamed into place whole) for the lab
# to read in the export (nfs_watch_proof), and waits 3 s for it.
nfs_testdef_repo() {
	local d=$1 t=$1/automated/linux/nfs-root
	mkdir -p "$t"
	git_init "$d"
	cat >"$t/nfs-root.yaml" <<'YAML'
metadata:
  format: Lava-Test Test Definition 1.0
  name: nfs-root
  description: "The board's root is the lab's NFS tree: checks, then a file the lab reads"
params:
  PROOF: "none"
run:
  steps:
    - ./automated/linux/nfs-root/nfs-root.sh "${PROOF}"
YAML
	cat >"$t/nfs-root.sh" <<'SH'
#!/bin/sh
# nfs-root.sh PROOF
root=$(awk '$2 == "/" { s = $1 " " $3 } END { print s }' /proc/mounts)
echo "root: $root"
case $root in
*:/*" nfs") lava-test-case root-on-nfs --result pass ;;
*) lava-test-case root-on-nfs --result fail ;;
esac
if [ -L /lib ] && [ -d "/lib/modules/$(uname -r)/kernel" ]; then
	lava-test-case modules-in-root --result pass
else
	ls -ld /lib "/lib/modules/$(uname -r)"
	lava-test-case modules-in-root --result fail
fi
echo "$1 $(uname -m) ${root% *}" >/root/labd-proof.tmp
chown 4321:4321 /root/labd-proof.tmp
mv /root/labd-proof.tmp /root/labd-proof
sync
lava-test-case proof-written --result pass
sleep 3
SH
	chmod +x "$t/nfs-root.sh"
	git -C "$d" add -A
	git -C "$d" commit -q -m "nfs-root: what a board sees of its NFS root"
}

# nfs_watch_proof: in the background until the script ends, copy each
# /root/labd-proof of the trees in $LAB/nfs as soon as it appears (a tree goes
# when its job ends) to $TMP/proof/<tree>: "UID:GID" of the file on the host,
# then its text.
nfs_watch_proof() {
	mkdir -p "$TMP/proof"
	(
		while :; do
			for f in "$LAB"/nfs/*/root/labd-proof; do
				[ -f "$f" ] || continue
				t=${f%/root/labd-proof}
				out=$TMP/proof/${t##*/}
				[ ! -s "$out" ] || continue
				{ stat -c %u:%g "$f" && cat "$f"; } >"$out.tmp" 2>/dev/null &&
					mv "$out.tmp" "$out"
			done
			sleep 0.1
		done
	) &
	at_exit "kill $!"
}
