#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/nfs/prepare.sh [ARCH...] -- what a board needs to boot with its root on
# NFS, as KernelCI and LKFT deploy it, for the NFS tests and benchmark
#
# Prints the fixture directory on stdout; for each ARCH (x86_64 and/or arm64,
# default both) it holds:
#
#   ARCH/bzImage (x86_64) or ARCH/Image (arm64)   Debian's kernel as shipped
#                                (cloud-amd64 / arm64: NFS and virtio-net are modules)
#   ARCH/initrd.cpio.gz          busybox initramfs: loads the modules of the
#                                network card, NFS and a scratch disk (virtio_blk,
#                                ext4), DHCP, mounts root=/dev/nfs nfsroot=...
#                                and switch_roots (below)
#   ARCH/modules.tar.xz          the same modules as LAVA's `modules` artifact
#                                (lib/modules/<version>/...)
#   ARCH/rootfs.tar.xz           Debian 12 minbase made by mmdebstrap: a getty
#                                asks for a login on the console ("login:", root,
#                                no password), Debian's prompt "root@debian-nfs:~# "
#   ARCH/rootfs-autologin.tar.xz the same root logged in at once, prompt "~ # "
#   ARCH/kernel-version          e.g. 6.1.0-57-arm64
#   ARCH/rootfs-bytes            the root's size unpacked (du -sb)
#
# The root's /sbin/init (no systemd: a board reaches its shell in seconds under
# TCG) mounts /proc, /sys, /dev, /dev/pts, /run, brings lo up, prints
# "ROOT-INIT: Debian <version> up <uptime>s" and keeps a getty on the console.
#
# The initramfs's /init reads the kernel command line as the kernel's own
# nfsroot does:
#   root=/dev/nfs nfsroot=[SERVER:]PATH[,OPTIONS] ip=dhcp|CLIENT:SERVER:GW:MASK:HOST:DEV:...
#   rw|ro, init=PATH (default /sbin/init)
# OPTIONS are nfs(5)'s (vers=3 default, tcp, hard, port=, mountport=, wsize=...),
# always with nolock, as the kernel's nfsroot mounts; with port= and mountport=
# no portmapper is asked.  SERVER defaults to the DHCP server.  It prints
# "nfsroot: mounted SERVER:PATH (OPTIONS) at <uptime>s", and on any error
# "nfsroot: error: <why>" then powers the board off.
#
# Cache: $LABD_TEST_CACHE (else $XDG_CACHE_HOME/labd-tests, else
# ~/.cache/labd-tests)/nfs/<key>, where <key> is a hash of this script and of
# tests/qemu/debian-lib.sh: a change of recipe builds again (and removes the
# fixtures of older recipes).  Building needs root (mmdebstrap keeps owners, mknod),
# Debian's archive ($LABD_DEBIAN_MIRROR, default http://deb.debian.org/debian),
# mmdebstrap, and for arm64 on another architecture qemu-user-static with
# binfmt_misc (mounted and enabled here when missing).  Under TCG on 2 cores:
# about 30 s for amd64's root, 3 min for arm64's, 1 min each to compress.
#
# Exit status: 0 ready; 77 the fixtures cannot be made here (the reason on
# stderr: tests skip with it); anything else is a bug.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${LABD_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/labd-tests}
KEY=$(cat "$here/prepare.sh" "$here/../qemu/debian-lib.sh" | sha256sum | cut -c1-12)
FIX=$CACHE/nfs/$KEY
WORK=$CACHE/nfs/work
LOG=$CACHE/nfs/prepare.log
ARCHS=${*:-x86_64 arm64}
MIRROR=${LABD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the test definitions of the NFS tests use beside minbase's bash,
# coreutils, tar, grep, sed, util-linux (agetty) and login: wget and xz for
# kselftest's tarball, mkfs.ext4 for LKFT's scratch disk, rt-tests for its
# signaltest.
ROOT_PACKAGES=iproute2,procps,wget,xz-utils,e2fsprogs,rt-tests

skip() {
	echo "NFS fixtures unavailable: $*" >&2
	exit 77
}

. "$here/../qemu/debian-lib.sh"

# complete ARCH: the fixtures of ARCH are all there.
complete() {
	local d=$FIX/$1 f
	for f in initrd.cpio.gz modules.tar.xz rootfs.tar.xz rootfs-autologin.tar.xz \
		 kernel-version rootfs-bytes; do
		[ -s "$d/$f" ] || return 1
	done
	case $1 in x86_64) [ -s "$d/bzImage" ] ;; arm64) [ -s "$d/Image" ] ;; esac
}

# The initramfs's /init (busybox sh).
write_init() {
	cat >"$1/init" <<'INIT'
#!/bin/busybox sh
# /init: root=/dev/nfs when the network card and NFS are modules
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mkdir -p /run /newroot

up() { cut -d' ' -f1 /proc/uptime; }
die() {
	echo "nfsroot: error: $*"
	sleep 1
	poweroff -f
}

root= nfsroot= ip=dhcp init=/sbin/init mode=rw
for arg in $(cat /proc/cmdline); do
	case $arg in
	root=*) root=${arg#root=} ;;
	nfsroot=*) nfsroot=${arg#nfsroot=} ;;
	ip=*) ip=${arg#ip=} ;;
	init=*) init=${arg#init=} ;;
	rw|ro) mode=$arg ;;
	esac
done
[ "$root" = /dev/nfs ] || die "root=$root: this initramfs mounts root=/dev/nfs only"
[ -n "$nfsroot" ] || die "root=/dev/nfs without nfsroot="

for m in $(cat /etc/nfsroot-modules); do
	modprobe "$m" || die "cannot load module $m"
done

# the interface: ip='s 6th field, else the first that is not lo
want=$(echo "$ip" | cut -s -d: -f6)
i=0
while :; do
	dev=${want:-$(ls /sys/class/net | grep -vx lo | head -1)}
	[ -n "$dev" ] && [ -e "/sys/class/net/$dev" ] && break
	i=$((i + 1))
	[ $i -le 100 ] || die "no network interface ${want:-at all} after 10 s"
	sleep 0.1
done
ip link set lo up
ip link set "$dev" up
case $ip in
dhcp|on|any|both|bootp|dhcp6|'')
	udhcpc -i "$dev" -f -q -n -t 10 -T 1 -s /etc/udhcpc.script >/run/udhcpc.log 2>&1 ||
		die "no DHCP answer on $dev: $(tail -1 /run/udhcpc.log)"
	. /run/dhcp.env ;;
off|none)
	die "ip=$ip: an NFS root needs the network" ;;
*)
	IFS=: read client server gw mask host _ <<EOF
$ip
EOF
	ifconfig "$dev" "$client" netmask "${mask:-255.255.255.0}" up || die "ip=$ip: cannot set $client"
	[ -z "$gw" ] || route add default gw "$gw" || die "ip=$ip: no route through $gw"
	dhcp_server=$server ;;
esac
echo "nfsroot: $dev is $(ip -4 -o addr show dev "$dev" | awk '{ print $4 }') at $(up)s"

case $nfsroot in
*:/*) server=${nfsroot%%:/*}; rest=/${nfsroot#*:/} ;;
*) server=$dhcp_server; rest=$nfsroot ;;
esac
[ -n "$server" ] || die "nfsroot=$nfsroot names no server and DHCP gave none"
path=${rest%%,*}
opts=vers=3,tcp,nolock
[ "$rest" = "$path" ] || opts=$opts,${rest#*,}
case ,$opts, in
*,vers=4*|*,nfsvers=4*) die "nfsroot=$nfsroot: NFSv4 is not supported here, use vers=3" ;;
esac
mount -t nfs -o "$mode,$opts" "$server:$path" /newroot ||
	die "cannot mount $server:$path ($opts)"
echo "nfsroot: mounted $server:$path ($opts) at $(up)s"

for d in dev proc sys; do
	mount -o move "/$d" "/newroot/$d" || die "no /$d in the root"
done
exec switch_root /newroot "$init"
INIT
	chmod 755 "$1/init"
	cat >"$1/etc/udhcpc.script" <<'SCRIPT'
#!/bin/sh
# udhcpc's hook: the lease on the interface, and the server for nfsroot
case $1 in
bound|renew)
	ip addr flush dev "$interface"
	ip addr add "$ip/${mask:-24}" dev "$interface"
	[ -z "$router" ] || ip route add default via "${router%% *}" dev "$interface"
	echo "dhcp_server=${siaddr:-$serverid}" >/run/dhcp.env ;;
esac
SCRIPT
	chmod 755 "$1/etc/udhcpc.script"
}

# The root's /sbin/init (dash: it waits for any child, so orphans are reaped).
write_root_init() {
	cat >"$1/usr/sbin/init" <<'INIT'
#!/bin/sh
# init of the lab's test root: a getty on the console, again whenever it ends.
# /etc/labd-console says "autologin" (root logged in at once) or "login".
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
cat /etc/hostname >/proc/sys/kernel/hostname
ip link set lo up
echo "ROOT-INIT: Debian $(cat /etc/debian_version) up $(cut -d' ' -f1 /proc/uptime)s"
tty=$(sed 's/.* //' /sys/class/tty/console/active)
login=
[ "$(cat /etc/labd-console)" = autologin ] && login="--autologin root"
while :; do
	setsid agetty $login --noclear -L "$tty" 115200 vt100
	sleep 1
done
INIT
	chmod 755 "$1/usr/sbin/init"
}

# binfmt DEBARCH: foreign binaries of DEBARCH run here (mmdebstrap's chroot).
binfmt() {
	local q=$2
	arch-test "$1" >/dev/null 2>&1 && return 0
	[ -e "/usr/libexec/qemu-binfmt/$q-binfmt-P" ] || [ -x "/usr/bin/qemu-$q-static" ] ||
		skip "cannot run $1 programs: apt-get install qemu-user-static binfmt-support"
	if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc >>"$LOG" 2>&1 ||
			skip "cannot run $1 programs: binfmt_misc cannot be mounted here"
	fi
	update-binfmts --enable "qemu-$q" >>"$LOG" 2>&1 || true
	arch-test "$1" >>"$LOG" 2>&1 ||
		skip "cannot run $1 programs through qemu-$q and binfmt_misc (see $LOG)"
}

# debian_root DEBARCH DIR: Debian 12 minbase and the lab's init in DIR.
debian_root() {
	local t0=$SECONDS
	rm -rf "$2"
	mmdebstrap --variant=minbase --arch="$1" --include="$ROOT_PACKAGES" \
		--customize-hook='echo debian-nfs >"$1/etc/hostname"' \
		--customize-hook='printf "127.0.0.1\tlocalhost\n127.0.1.1\tdebian-nfs\n" >"$1/etc/hosts"' \
		--customize-hook='sed -i "s/^root:[^:]*:/root::/" "$1/etc/shadow"' \
		bookworm "$2" "$MIRROR" >>"$LOG" 2>&1 ||
		skip "mmdebstrap of a $1 root failed (no network? see $LOG)"
	write_root_init "$2"
	echo "mmdebstrap $1: $((SECONDS - t0)) s" >>"$LOG"
}

# root_tarball DIR CONSOLE OUT: DIR as a tar.xz with /etc/labd-console CONSOLE
# (and root's prompt "~ # " when it is autologin), owners by number, extended
# attributes kept.
root_tarball() {
	local t0=$SECONDS prompt=$1/etc/profile.d/labd-prompt.sh
	echo "$2" >"$1/etc/labd-console"
	rm -f "$prompt"
	[ "$2" != autologin ] || echo "PS1='\w # '" >"$prompt"
	tar --numeric-owner --xattrs --xattrs-include='*' -C "$1" -cf - . |
		xz -T2 -6 >"$3.tmp"
	mv "$3.tmp" "$3"
	echo "$(basename "$3"): $((SECONDS - t0)) s" >>"$LOG"
}

# prepare ARCH DEBARCH META KERNEL-FILE QEMU-ARCH NIC-MODULES...
prepare() {
	local arch=$1 a=$2 meta=$3 kfile=$4 q=$5 d=$FIX/$1 pkg deb kver t=$WORK/tmp/$1
	shift 5
	update "$a"
	pkg=$(kernel_pkg "$a" "$meta")
	[ -n "$pkg" ] || skip "cannot resolve $meta: no package lists (no network? see $LOG)"
	kver=${pkg#linux-image-}
	fetch "$a" "$pkg" busybox-static
	deb=$(deb_file "$a" "$pkg")
	rm -rf "$d" "$t" && mkdir -p "$d" "$t"
	extract_kernel "$deb" "$d/$kfile"
	dpkg-deb --fsys-tarfile "$(deb_file "$a" busybox-static)" | tar -x -C "$t" ./bin/busybox
	busybox_root "$t/bin/busybox" "$t/initrd"
	modules_tree "$deb" "$kver" "$t/initrd" "$@" nfsv3
	for m in "$@" nfsv3; do	# those built into the kernel are not loaded
		[ -z "$(find "$t/initrd/lib/modules" -name "$m.ko*")" ] || echo "$m"
	done >"$t/initrd/etc/nfsroot-modules"
	write_init "$t/initrd"
	cpio_gz "$t/initrd" "$d/initrd.cpio.gz"
	tar -C "$t/initrd" -cJf "$d/modules.tar.xz" --owner=0 --group=0 lib/modules
	[ "$arch" = "$(uname -m)" ] || binfmt "$a" "$q"
	debian_root "$a" "$t/root"
	du -sb "$t/root" | cut -f1 >"$d/rootfs-bytes"
	root_tarball "$t/root" login "$d/rootfs.tar.xz"
	root_tarball "$t/root" autologin "$d/rootfs-autologin.tar.xz"
	rm -rf "$t"
	echo "$kver" >"$d/kernel-version"
}

main() {
	local a todo=
	for a in $ARCHS; do
		case $a in
		x86_64|arm64) complete "$a" || todo="$todo $a" ;;
		*) echo "unknown architecture '$a' (known: x86_64, arm64)" >&2; exit 2 ;;
		esac
	done
	if [ -n "$todo" ]; then
		[ "$(id -u)" = 0 ] || skip "building Debian roots needs root (mmdebstrap keeps owners)"
		for c in apt-get mmdebstrap cpio xz arch-test; do
			command -v "$c" >/dev/null ||
				skip "no $c (apt-get install mmdebstrap arch-test cpio xz-utils)"
		done
		mkdir -p "$CACHE/nfs"
		exec 9>"$CACHE/nfs/.lock"
		flock 9
		for a in $todo; do
			complete "$a" && continue
			case $a in
			x86_64) prepare x86_64 amd64 linux-image-cloud-amd64 bzImage x86_64 \
					virtio_pci virtio_net virtio_blk ext4 ;;
			arm64) prepare arm64 arm64 linux-image-arm64 Image aarch64 \
					virtio_mmio virtio_net virtio_blk ext4 ;;
			esac
		done
		# Only the fixtures of this recipe are kept.
		rm -rf "$WORK"
		for a in "$CACHE"/nfs/*/; do
			[ "$a" = "$FIX/" ] || rm -rf "$a"
		done
	fi
	echo "$FIX"
}

main
