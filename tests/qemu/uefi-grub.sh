#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/uefi-grub.sh TFTP_ROOT [FIXTURES] -- the network bootloader of the
# qemu-x86_64-uefi board (devices/qemu.conf): a standalone GRUB EFI image at
# TFTP_ROOT/labd-grub/grubx64.efi (the type's UEFI_BOOTFILE, which OVMF's PXE
# loads from QEMU's TFTP server), made by grub-mkstandalone with only the
# modules a network boot needs (1 MB instead of 10 MB).  Its menu has one entry
# that boots the lab's own Debian kernel and initramfs, copied next to it from
# FIXTURES (tests/qemu/prepare.sh's cache by default), after 2 s unless a key
# stops the menu: the grub-efi method types 'c' there, the uefi-menu method
# lets it boot.  Needs grub-efi-amd64-bin; takes a tenth of a second.
set -eu
root=${1:?usage: uefi-grub.sh TFTP_ROOT [FIXTURES]}
fix=${2:-$("$(dirname "$0")/prepare.sh" x86_64)}
d=$root/labd-grub
mkdir -p "$d"
cp "$fix/x86_64/bzImage" "$d/bzImage"
cp "$fix/x86_64/initrd.cpio.gz" "$d/initrd.cpio.gz"
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<'CFG'
set timeout=2
menuentry 'Debian (the lab image)' {
	linux (tftp)/labd-grub/bzImage console=ttyS0 panic=-1 no_timer_check
	initrd (tftp)/labd-grub/initrd.cpio.gz
}
CFG
grub-mkstandalone -O x86_64-efi -o "$d/grubx64.efi" --locales= --fonts= --themes= \
	--modules="tftp efinet linux normal echo" \
	--install-modules="tftp efinet net linux normal echo ls cat test gzio boot configfile" \
	"boot/grub/grub.cfg=$cfg"
