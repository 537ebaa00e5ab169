#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/qemu/cortex-m-image.sh -- the Cortex-M3 test image (lm3s6965evb) built
# from tests/qemu/cortex-m/zephyr-standin.c with Debian's arm-none-eabi
# toolchain and picolibc; prints the path of the raw binary (flash from
# address 0, as QEMU's -kernel loads it).
#
# Cached in $LABD_TEST_CACHE (else $XDG_CACHE_HOME/labd-tests, else
# ~/.cache/labd-tests)/cortex-m/, named by the hash of the source and the
# build command: a changed program is built again, in about a second.
# Exit status 77 (the reason on stderr) when the toolchain is not installed.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${LABD_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/labd-tests}/cortex-m
SRC=$TOP/tests/qemu/cortex-m/zephyr-standin.c
# the LM3S6965: 256 KiB of flash at 0, 64 KiB of RAM at 0x20000000
CFLAGS="-mcpu=cortex-m3 -mthumb -Os -Wall -Werror --specs=picolibc.specs"
LDFLAGS="-Wl,--defsym=__flash=0x0 -Wl,--defsym=__flash_size=0x40000
	-Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x10000
	-Wl,--defsym=__stack_size=0x1000"

command -v arm-none-eabi-gcc >/dev/null ||
	{ echo "no arm-none-eabi-gcc (apt-get install gcc-arm-none-eabi)" >&2; exit 77; }
arm-none-eabi-gcc -print-file-name=picolibc.specs | grep -q / ||
	{ echo "no picolibc for arm-none-eabi (apt-get install picolibc-arm-none-eabi)" >&2; exit 77; }
key=$({ cat "$SRC"; echo "$CFLAGS $LDFLAGS"; arm-none-eabi-gcc --version | head -1; } |
	sha256sum | cut -c1-16)
out=$CACHE/zephyr-standin-$key.bin
if [ ! -s "$out" ]; then
	mkdir -p "$CACHE"
	# shellcheck disable=SC2086
	arm-none-eabi-gcc $CFLAGS $LDFLAGS -o "$out.elf" "$SRC"
	arm-none-eabi-objcopy -O binary "$out.elf" "$out.tmp"
	rm -f "$out.elf"
	mv "$out.tmp" "$out"
fi
echo "$out"
