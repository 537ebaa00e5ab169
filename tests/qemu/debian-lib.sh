# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/debian-lib.sh -- Debian packages for the QEMU fixtures, sourced by
# tests/qemu/prepare.sh and tests/nfs/prepare.sh.  The caller sets:
#
#   WORK    scratch directory: private apt state in WORK/apt/<debarch>,
#           downloaded .debs in WORK/debs/<debarch>, work trees in WORK/tmp
#   LOG     where apt's and the tools' output goes
#   skip()  prints why the fixtures cannot be made here and exits 77
#
# Each Debian architecture gets its own apt state under WORK, so the system's
# apt and dpkg state is never touched.

# apt_for DEBARCH ARGS...: apt-get with the private state of DEBARCH.
apt_for() {
	local a=$1 st=$WORK/apt/$1; shift
	mkdir -p "$st/lists/partial" "$st/cache/archives/partial"
	[ -e "$st/status" ] || : >"$st/status"
	apt-get -q -oAPT::Architecture="$a" -oAPT::Architectures="$a" \
		-oDir::State::Lists="$st/lists" -oDir::State::Status="$st/status" \
		-oDir::Cache="$st/cache" -oDebug::NoLocking=1 "$@"
}

apt_cache_for() {
	local a=$1 st=$WORK/apt/$1; shift
	apt-cache -oAPT::Architecture="$a" -oAPT::Architectures="$a" \
		-oDir::State::Lists="$st/lists" -oDir::State::Status="$st/status" \
		-oDir::Cache="$st/cache" "$@"
}

# fetch DEBARCH PKG...: download the .debs into $WORK/debs/DEBARCH.
fetch() {
	local a=$1; shift
	mkdir -p "$WORK/debs/$a"
	(cd "$WORK/debs/$a" && apt_for "$a" download "$@") >>"$LOG" 2>&1 ||
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
	ls "$WORK/debs/$1/$2"_*_"$1".deb 2>/dev/null | tail -1
}

# extract_kernel DEB OUT: take ./boot/vmlinuz-* out of DEB.
extract_kernel() {
	local t=$WORK/tmp/kx
	rm -rf "$t" && mkdir -p "$t"
	dpkg-deb --fsys-tarfile "$1" | tar -x -C "$t" --wildcards './boot/vmlinuz-*'
	mv "$t"/boot/vmlinuz-* "$2"
	rm -rf "$t"
}

# modules_tree DEB KVER ROOT MODULE...: the .ko of each MODULE (and of what it
# depends on) from the kernel package DEB into ROOT/lib/modules/KVER/, with a
# modules.dep made by busybox's depmod.  A MODULE built into the kernel
# (modules.builtin) is left out.
modules_tree() {
	local deb=$1 kver=$2 root=$3 x=$WORK/tmp/modx m ko todo done=" "; shift 3
	rm -rf "$x" && mkdir -p "$x" "$root"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$x" --wildcards "./lib/modules/$kver/kernel/*" "./lib/modules/$kver/modules.builtin"
	todo="$*"
	while [ -n "$todo" ]; do
		m=${todo%% *}
		todo=$(echo "${todo#"$m"}" | sed 's/^ *//')
		case $done in *" $m "*) continue ;; esac
		done="$done$m "
		ko=$(find "$x" -name "$m.ko*" | head -1)
		if [ -z "$ko" ]; then
			grep -q "/$m.ko\$" "$x/lib/modules/$kver/modules.builtin" && continue
			skip "no module $m in $deb"
		fi
		mkdir -p "$root/$(dirname "${ko#$x/}")"
		cp "$ko" "$root/${ko#$x/}"
		todo="$todo $(tr '\0' '\n' <"$ko" | sed -n 's/^depends=//p' | tr , ' ')"
		todo=$(echo "$todo" | sed 's/^ *//; s/ *$//')
	done
	/bin/busybox depmod -b "$root" "$kver" || skip "busybox depmod failed for $kver"
	rm -rf "$x"
}

# modules_tarball DEB KVER OUT MODULE...: modules_tree as a tar.xz of
# lib/modules/KVER/, laid out as LAVA's `modules` deploy artifact.
modules_tarball() {
	local deb=$1 kver=$2 out=$3 t=$WORK/tmp/mods; shift 3
	rm -rf "$t"
	modules_tree "$deb" "$kver" "$t" "$@"
	tar -C "$t" -cJf "$out.tmp" --owner=0 --group=0 lib
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

file_is_static() {
	! LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
}

# busybox_root BUSYBOX ROOT: a fresh initramfs tree ROOT with BUSYBOX (static,
# any architecture) as /bin/busybox, a link for each applet and the device
# nodes the kernel needs before devtmpfs is mounted.  Needs root (mknod).
busybox_root() {
	local bb=$1 root=$2 a
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
}

# cpio_gz ROOT OUT: ROOT as a gzip'd newc cpio archive, owned by root.
cpio_gz() {
	(cd "$1" && find . | cpio -o -H newc --quiet -R 0:0) | gzip -9 >"$2.tmp"
	mv "$2.tmp" "$2"
}
