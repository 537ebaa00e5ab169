#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/ci-images.sh FIXTURES OUT -- stand-ins for the images KernelCI's and
# LKFT's QEMU jobs boot, made from the x86_64 fixtures of prepare.sh (its
# "x86_64-disk" set) and the host's busybox-static, in OUT:
#
#   kernelci-initrd.cpio.gz  for KernelCI's buildroot initrd.cpio.gz: a busybox
#                            ramdisk whose console is a root shell with
#                            buildroot's prompt ("/ # ")
#   lkft-rootfs.ext4.gz      for LKFT's OpenEmbedded ext4 root file system: a
#                            busybox root (real /lib, /tmp) with init, a getty on
#                            ttyS0 ("lkft login: "), root without a password and
#                            the prompt "root@lkft:~# ", gzip'd as LKFT's is
#   lkft-modules.tar         for LKFT's modules tarball: lib/modules/<ver>/ (the
#                            disk modules of the fixtures)
#   disk-initrd.cpio.gz      not LKFT's: the lab's initramfs.  LKFT's kernels
#                            have their disk drivers built in, Debian's cloud
#                            kernel standing in for them does not (its ext4 is):
#                            this loads ata_piix and sd_mod, waits for root= and
#                            switch_roots to it.  The test lab's device type
#                            passes it to QEMU itself.
# Built in about a second: nothing is cached.
set -eu
FIX=$1 OUT=$2
BB=/bin/busybox
KVER=$(cat "$FIX/x86_64/kernel-version")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"

# busybox_root DIR: busybox and its applets, /dev/console and /dev/null.
busybox_root() {
	local r=$1 a
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,root,etc,tmp,lib,mnt}
	cp "$BB" "$r/bin/busybox"
	for a in $("$BB" --list-full); do
		[ -e "$r/$a" ] || ln -s /bin/busybox "$r/$a"
	done
	mknod -m 600 "$r/dev/console" c 5 1
	mknod -m 666 "$r/dev/null" c 1 3
	chmod 1777 "$r/tmp"
}

# cpio_gz DIR OUT
cpio_gz() {
	(cd "$1" && find . | cpio -o -H newc --quiet -R 0:0) | gzip -6 >"$2"
}

# KernelCI's ramdisk: a root shell on the console, buildroot's prompt.
busybox_root "$W/kci"
cat >"$W/kci/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root PS1='\w # '
cd /
echo "Welcome to the KernelCI buildroot stand-in"
while :; do
	setsid cttyhack sh
done
INIT
chmod 755 "$W/kci/init"
cpio_gz "$W/kci" "$OUT/kernelci-initrd.cpio.gz"

# LKFT's root file system: init, a getty, a login without password.
busybox_root "$W/lkft"
cat >"$W/lkft/etc/inittab" <<'TAB'
::sysinit:/etc/rcS
ttyS0::respawn:/sbin/getty -L 115200 ttyS0 vt100
::ctrlaltdel:/sbin/reboot
TAB
cat >"$W/lkft/etc/rcS" <<'RC'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
hostname lkft
echo "LKFT stand-in root up: $(uname -r)"
RC
chmod 755 "$W/lkft/etc/rcS"
echo 'root::0:0:root:/root:/bin/sh' >"$W/lkft/etc/passwd"
echo 'root:x:0:' >"$W/lkft/etc/group"
cat >"$W/lkft/etc/profile" <<'PROFILE'
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
export PS1='root@lkft:\w# '
cd /root
PROFILE
echo lkft >"$W/lkft/etc/hostname"
ln -s /bin/busybox "$W/lkft/init"
mke2fs -q -t ext4 -L rootfs -d "$W/lkft" "$W/rootfs.ext4" 48M >/dev/null
gzip -6 <"$W/rootfs.ext4" >"$OUT/lkft-rootfs.ext4.gz"

# LKFT's modules tarball: lib/modules/<ver>/, uncompressed.
xz -dc "$FIX/x86_64/disk-modules.tar.xz" >"$OUT/lkft-modules.tar"

# The lab's disk initramfs: ata_piix and sd_mod, then root=.
busybox_root "$W/disk"
tar -C "$W/disk" -xJf "$FIX/x86_64/disk-modules.tar.xz"
cat >"$W/disk/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
modprobe ata_piix
modprobe sd_mod
root=
for arg in $(cat /proc/cmdline); do
	case $arg in root=*) root=${arg#root=} ;; esac
done
n=0
while [ ! -b "$root" ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
mkdir -p /newroot
mount -t ext4 -o rw "$root" /newroot || { echo "disk-initrd: cannot mount '$root'"; exec sh; }
umount /sys /proc
mount --move /dev /newroot/dev 2>/dev/null || umount /dev
exec switch_root /newroot /sbin/init
INIT
chmod 755 "$W/disk/init"
cpio_gz "$W/disk" "$OUT/disk-initrd.cpio.gz"
echo "$KVER" >"$OUT/kernel-version"
