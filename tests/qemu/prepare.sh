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

WORK=$CACHE

skip() {
	echo "qemu fixtures unavailable: $*" >&2
	exit 77
}

. "$(dirname "$0")/debian-lib.sh"

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
	local root=$WORK/tmp/root
	busybox_root "$1" "$root"
	write_init "$root"
	cpio_gz "$root" "$2"
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
