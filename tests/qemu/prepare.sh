#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/prepare.sh [ARCH...] -- real kernels and tiny initramfs images for the QEMU tests
#
# Fetches the current Debian kernels and busybox-static, builds a busybox
# initramfs per architecture and prints the fixture directory on stdout:
#
#   $CACHE/x86_64/vmlinux        PVH ELF extracted from the cloud kernel's bzImage
#                                (the bzImage itself when the payload cannot be extracted)
#   $CACHE/x86_64/bzImage        the cloud kernel as shipped (firmware boots: iPXE, GRUB)
#   $CACHE/x86_64/initrd.cpio.gz
#   $CACHE/arm64/Image           Debian's arm64 vmlinuz (a raw Image, booti takes it as is)
#   $CACHE/arm64/initrd.cpio.gz
#   $CACHE/arm64/modules.tar.xz  the kernel's virtio network modules (virtio_mmio,
#                                virtio_net and what they need) with modules.dep, laid
#                                out as LAVA's `modules` deploy artifact: lib/modules/<ver>/
#   $CACHE/armhf/zImage          Debian's armmp vmlinuz (bootz)
#   $CACHE/armhf/initrd.cpio.gz
#   $CACHE/<arch>/kernel-version  e.g. 6.1.0-57-cloud-amd64
#   $CACHE/x86_64/disk-modules.tar.xz  (arch x86_64-disk) the cloud kernel's IDE disk
#                                modules (ata_piix, sd_mod and what they need),
#                                lib/modules/<ver>/: its ext4 is built in, its disks
#                                are not, so a root on -hda needs them from an initramfs
#
# ARCH is x86_64, arm64, armhf (default: these three) and/or x86_64-disk.  The kernel ABI is
# resolved through the meta packages (linux-image-cloud-amd64,
# linux-image-arm64, linux-image-armmp), never hard-coded.  Every architecture, amd64 included, uses its own private apt
# state under the cache, so the system's apt and dpkg state is never touched.
# Only the kernel file is taken out of each .deb, not its modules, and the
# .debs and package lists are deleted once the fixtures are built.
#
# The cache lives outside the build tree and survives `make clean` and fresh
# clones: $LABD_TEST_CACHE, else $XDG_CACHE_HOME/labd-tests, else
# ~/.cache/labd-tests.  When it is complete for the architectures asked for,
# this script touches no network and returns at once.
#
# Exit status: 0 ready; 77 the fixtures cannot be fetched here (the reason is on
# stderr: tests skip with it); anything else is a bug.
#
# The initramfs /init (#!/bin/busybox sh) mounts proc, sys and devtmpfs,
# prints "BOOT-INIT: Linux <release> <machine> up <uptime>s", then reads the
# kernel command line:
#   initrd.login=1    print "guest login: ", read a name, print "Welcome, <name>"
#   initrd.cmd=poweroff  power off at once
# and prints "BOOT-READY" before a root shell loop with the prompt
# "root@guest:<cwd># ".  /bin/ktap-demo prints a small KTAP document (nested
# suite, a skip, a failure, kernel-style timestamps) for the KTAP parser tests.
set -eu
CACHE=${LABD_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/labd-tests}
ARCHS=${*:-x86_64 arm64 armhf}
LOG=$CACHE/prepare.log

skip() {
	echo "qemu fixtures unavailable: $*" >&2
	exit 77
}

# complete ARCH: the fixtures of ARCH are all there.
complete() {
	local d=$CACHE/$1
	case $1 in
	x86_64) [ -s "$d/vmlinux" ] && [ -s "$d/bzImage" ] ;;
	arm64) [ -s "$d/Image" ] && [ -s "$d/modules.tar.xz" ] ;;
	armhf) [ -s "$d/zImage" ] ;;
	x86_64-disk) complete x86_64 && [ -s "$CACHE/x86_64/disk-modules.tar.xz" ]; return ;;
	*) return 1 ;;
	esac && [ -s "$d/initrd.cpio.gz" ] && [ -s "$d/kernel-version" ]
}

# apt_for DEBARCH ARGS...: apt-get with the private state of DEBARCH.
apt_for() {
	local a=$1 st=$CACHE/apt/$1; shift
	mkdir -p "$st/lists/partial" "$st/cache/archives/partial"
	[ -e "$st/status" ] || : >"$st/status"
	apt-get -q -oAPT::Architecture="$a" -oAPT::Architectures="$a" \
		-oDir::State::Lists="$st/lists" -oDir::State::Status="$st/status" \
		-oDir::Cache="$st/cache" -oDebug::NoLocking=1 "$@"
}

apt_cache_for() {
	local a=$1 st=$CACHE/apt/$1; shift
	apt-cache -oAPT::Architecture="$a" -oAPT::Architectures="$a" \
		-oDir::State::Lists="$st/lists" -oDir::State::Status="$st/status" \
		-oDir::Cache="$st/cache" "$@"
}

# fetch DEBARCH PKG...: download the .debs into $CACHE/debs/DEBARCH (kept).
fetch() {
	local a=$1; shift
	mkdir -p "$CACHE/debs/$a"
	(cd "$CACHE/debs/$a" && apt_for "$a" download "$@") >>"$LOG" 2>&1 ||
		skip "cannot download $* for $a (see $LOG)"
}

# update DEBARCH: the package lists of the private state.
update() {
	apt_for "$1" update >>"$LOG" 2>&1 || skip "apt-get update for $1 failed (no network? see $LOG)"
}

# kernel_pkg DEBARCH META: the linux-image package the meta package depends on.
kernel_pkg() {
	apt_cache_for "$1" depends "$2" 2>>"$LOG" |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

# deb_file DEBARCH PKG: the downloaded .deb of PKG.
deb_file() {
	ls "$CACHE/debs/$1/$2"_*_"$1".deb 2>/dev/null | tail -1
}

# extract_kernel DEB OUT: take ./boot/vmlinuz-* out of DEB.
extract_kernel() {
	local t=$CACHE/tmp/kx
	rm -rf "$t" && mkdir -p "$t"
	dpkg-deb --fsys-tarfile "$1" | tar -x -C "$t" --wildcards './boot/vmlinuz-*'
	mv "$t"/boot/vmlinuz-* "$2"
	rm -rf "$t"
}

# modules_tarball DEB KVER OUT MODULE...: the .ko of each MODULE (and what it
# depends on) from DEB, with a modules.dep made by busybox's depmod, as a tar.xz
# of lib/modules/KVER/.
modules_tarball() {
	local deb=$1 kver=$2 out=$3 t=$CACHE/tmp/mods m ko todo done=" "; shift 3
	rm -rf "$t" && mkdir -p "$t/x" "$t/root"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$t/x" --wildcards "./lib/modules/$kver/kernel/*"
	todo="$*"
	while [ -n "$todo" ]; do
		m=${todo%% *}
		todo=$(echo "${todo#"$m"}" | sed 's/^ *//')
		case $done in *" $m "*) continue ;; esac
		done="$done$m "
		ko=$(find "$t/x" -name "$m.ko*" | head -1)
		[ -n "$ko" ] || skip "no module $m in $deb"
		mkdir -p "$t/root/$(dirname "${ko#$t/x/}")"
		cp "$ko" "$t/root/${ko#$t/x/}"
		todo="$todo $(tr '\0' '\n' <"$ko" | sed -n 's/^depends=//p' | tr , ' ')"
		todo=$(echo "$todo" | sed 's/^ *//; s/ *$//')
	done
	/bin/busybox depmod -b "$t/root" "$kver" || skip "busybox depmod failed for $kver"
	tar -C "$t/root" -cJf "$out.tmp" --owner=0 --group=0 lib
	mv "$out.tmp" "$out"
	rm -rf "$t"
}

# pvh_vmlinux BZIMAGE OUT: the ELF payload of an x86 bzImage (PVH entry), if any.
pvh_vmlinux() {
	local bz=$1 out=$2 off magic tool
	for m in 'lz4:\x02\x21\x4c\x18' 'xz:\xfd\x37\x7a\x58\x5a\x00' 'zstd:\x28\xb5\x2f\xfd' \
		 'gzip:\x1f\x8b\x08'; do
		tool=${m%%:*} magic=${m#*:}
		command -v "$tool" >/dev/null || continue
		for off in $(LC_ALL=C grep -obUaP "$magic" "$bz" | cut -d: -f1); do
			tail -c +$((off + 1)) "$bz" | "$tool" -dc >"$out.tmp" 2>/dev/null || true
			if [ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
				mv "$out.tmp" "$out"
				return 0
			fi
		done
	done
	rm -f "$out.tmp"
	return 1
}

write_init() {
	cat >"$1/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev 2>/dev/null
export PATH=/bin:/sbin HOME=/root PS1='root@guest:\w# '
cd /root
echo "BOOT-INIT: Linux $(uname -r) $(uname -m) up $(cut -d' ' -f1 /proc/uptime)s"
echo "BOOT-CONSOLE: $(cat /sys/class/tty/console/active 2>/dev/null)"
for arg in $(cat /proc/cmdline); do
	case $arg in
	initrd.login=1)
		printf 'guest login: '
		read name
		echo "Welcome, $name" ;;
	initrd.cmd=poweroff)
		poweroff -f ;;
	esac
done
echo BOOT-READY
while :; do
	setsid cttyhack sh -l
done
INIT
	chmod 755 "$1/init"
	cat >"$1/bin/ktap-demo" <<'KTAP'
#!/bin/sh
# A KTAP document as KUnit prints it, with the kernel's timestamps.
t() { echo "[    $(cut -d' ' -f1 /proc/uptime)] $*"; }
t "KTAP version 1"
t "1..2"
t "    KTAP version 1"
t "    # Subtest: demo-math"
t "    1..3"
t "    ok 1 add"
t "    ok 2 multiply"
t "    ok 3 divide # SKIP no FPU in this guest"
t "# demo-math: pass:2 fail:0 skip:1 total:3"
t "ok 1 demo-math"
t "    KTAP version 1"
t "    # Subtest: demo-strings"
t "    1..2"
t "    ok 1 concat"
t "    not ok 2 reverse"
t "# demo-strings: pass:1 fail:1 skip:0 total:2"
t "not ok 2 demo-strings"
KTAP
	chmod 755 "$1/bin/ktap-demo"
}

# initramfs BUSYBOX OUT: a gz cpio with BUSYBOX (static, any arch) and /init.
initramfs() {
	local bb=$1 out=$2 root=$CACHE/tmp/root a
	[ "$(id -u)" = 0 ] || skip "building the initramfs needs root (mknod of /dev/console)"
	rm -rf "$root" && mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,root,etc,tmp}
	cp "$bb" "$root/bin/busybox"
	chmod 755 "$root/bin/busybox"
	# The applet list comes from the host's busybox: the guest's may be foreign.
	for a in $(/bin/busybox --list-full); do
		[ -e "$root/$a" ] || ln -s /bin/busybox "$root/$a"
	done
	mknod -m 600 "$root/dev/console" c 5 1
	mknod -m 666 "$root/dev/null" c 1 3
	write_init "$root"
	(cd "$root" && find . | cpio -o -H newc --quiet -R 0:0) | gzip -9 >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$root"
}

prepare_x86_64() {
	local d=$CACHE/x86_64 pkg deb
	update amd64
	pkg=$(kernel_pkg amd64 linux-image-cloud-amd64)
	[ -n "$pkg" ] || skip "cannot resolve linux-image-cloud-amd64: no package lists (no network? see $LOG)"
	fetch amd64 "$pkg"
	deb=$(deb_file amd64 "$pkg")
	mkdir -p "$d"
	extract_kernel "$deb" "$d/bzImage"
	pvh_vmlinux "$d/bzImage" "$d/vmlinux" || cp "$d/bzImage" "$d/vmlinux"
	[ -x /bin/busybox ] && file_is_static /bin/busybox ||
		skip "no static /bin/busybox (apt-get install busybox-static)"
	initramfs /bin/busybox "$d/initrd.cpio.gz"
	echo "${pkg#linux-image-}" >"$d/kernel-version"
}

# x86_64-disk: the x86_64 fixtures and the modules a root on an IDE disk needs.
prepare_x86_64-disk() {
	local d=$CACHE/x86_64 pkg deb
	complete x86_64 || prepare_x86_64
	update amd64
	pkg=$(kernel_pkg amd64 linux-image-cloud-amd64)
	[ -n "$pkg" ] || skip "cannot resolve linux-image-cloud-amd64: no package lists (no network? see $LOG)"
	[ "${pkg#linux-image-}" = "$(cat "$d/kernel-version")" ] ||
		skip "the cached x86_64 kernel is not the current one: remove $d"
	fetch amd64 "$pkg"
	deb=$(deb_file amd64 "$pkg")
	modules_tarball "$deb" "${pkg#linux-image-}" "$d/disk-modules.tar.xz" ata_piix sd_mod
}

file_is_static() {
	! LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
}

# prepare_arm DEBARCH META KERNEL-FILE: a Debian arm kernel as is, and an initramfs.
prepare_arm() {
	local a=$1 d=$CACHE/$1 pkg deb bb=$CACHE/tmp/bb
	update "$a"
	pkg=$(kernel_pkg "$a" "$2")
	[ -n "$pkg" ] || skip "cannot resolve $2: no package lists (no network? see $LOG)"
	fetch "$a" "$pkg" busybox-static
	deb=$(deb_file "$a" "$pkg")
	mkdir -p "$d"
	extract_kernel "$deb" "$d/$3"
	rm -rf "$bb" && mkdir -p "$bb"
	dpkg-deb --fsys-tarfile "$(deb_file "$a" busybox-static)" | tar -x -C "$bb" ./bin/busybox
	initramfs "$bb/bin/busybox" "$d/initrd.cpio.gz"
	[ "$a" != arm64 ] ||
		modules_tarball "$deb" "${pkg#linux-image-}" "$d/modules.tar.xz" virtio_mmio virtio_net
	rm -rf "$bb"
	echo "${pkg#linux-image-}" >"$d/kernel-version"
}

prepare_arm64() {
	prepare_arm arm64 linux-image-arm64 Image
}

prepare_armhf() {
	prepare_arm armhf linux-image-armmp zImage
}

main() {
	local a todo=
	for a in $ARCHS; do
		case $a in
		x86_64|arm64|armhf|x86_64-disk) complete "$a" || todo="$todo $a" ;;
		*) echo "unknown architecture '$a' (known: x86_64, arm64, armhf, x86_64-disk)" >&2; exit 2 ;;
		esac
	done
	if [ -n "$todo" ]; then
		command -v apt-get >/dev/null || skip "no apt-get on this machine"
		command -v cpio >/dev/null || skip "no cpio (apt-get install cpio)"
		mkdir -p "$CACHE/tmp"
		exec 9>"$CACHE/.lock"
		flock 9
		for a in $todo; do
			complete "$a" || "prepare_$a"
		done
		# Only the fixtures are kept: the .debs and package lists are ~120 MB.
		rm -rf "$CACHE/tmp" "$CACHE/debs" "$CACHE/apt"
	fi
	echo "$CACHE"
}

main
