#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2610-nfs-real-jobs.sh -- real NFS jobs of KernelCI and LKFT, as their
# schedulers render them (../shared/jobs-real/), edited only in their URLs, run
# to completion on QEMU stand-ins of the boards they name:
#   KernelCI's kselftest job for a BeagleBone Black (u-boot, `commands: nfs`,
#   a kselftest tarball the board downloads, a git test definition from Linaro's
#   test-definitions, a notify callback) on an arm64 U-Boot QEMU board of type
#   beaglebone-black; its results and callback as KernelCI reads them.
#   LKFT's signaltest job for its x86 boards (ipxe, `commands: nfs`, modules
#   unpacked at /, a scratch file system made on the disk lava-target-storage
#   names, rt-tests' signaltest for a minute) on an iPXE QEMU board of type x86
#   with a virtio disk as its SATA storage_info.
# What stands in for the Internet (tests/linaro-lib.sh, tests/nfs/prepare.sh):
# storage.kernelci.org and LKFT's storage are the loopback artifact server
# (Debian's arm64 and x86_64 kernels, the NFS initramfs, Debian 12 roots, QEMU's
# device tree as board.dtb, a kselftest tarball whose acct test checks
# acct(2)); LKFT's kernels have NFS built in, Debian's need the NFS initramfs,
# which the x86 stand-in's command set loads; github.com/linaro's
# test-definitions is a local repository served by `git daemon`, reached
# through git's insteadOf (the job keeps its URL); the callback goes to a
# local recorder.
# test-serial: tests/run runs it alone (QEMU's emulation takes the CPUs)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"
. "$TOP/tests/ci/lib.sh"
. "$TOP/tests/nfs-lib.sh"
. "$TOP/tests/linaro-lib.sh"

REAL=${JOBS_REAL:-$TOP/../shared/jobs-real}
[ -d "$REAL" ] || [ -n "${JOBS_REAL:-}" ] || REAL=$TOP/../../shared/jobs-real	# a worktree
KCI_KSELFTEST=$REAL/kernelci/0152_generic_kselftest_nfs_u-boot.yaml
LKFT_SIGNALTEST=$REAL/lkft/x86/signaltest.yaml

skip_all() {
	test_skip 'real KernelCI and LKFT NFS jobs on QEMU stand-ins' "$1"
	test_done
	exit
}
[ -f "$KCI_KSELFTEST" ] && [ -f "$LKFT_SIGNALTEST" ] ||
	skip_all "no real jobs at $REAL (JOBS_REAL= names them elsewhere)"
qemu_fixtures arm64 x86_64 || skip_all "$QEMU_SKIP"
qemu_firmware ipxe || skip_all "$QEMU_SKIP"
nfs_fixtures arm64 x86_64 || skip_all "$NFS_SKIP"
nfs_lab || skip_all "$NFS_SKIP"

# storage.kernelci.org, as the job's URLs name its files
k=$TMP/art/kernelci
mkdir -p "$k/x" "$k/images/rootfs/debian/trixie/arm64"
ln -s "$NFS_FIX/arm64/Image" "$k/x/Image"
ln -s "$NFS_FIX/arm64/modules.tar.xz" "$k/x/modules.tar.xz"
ln -s "$NFS_FIX/arm64/rootfs-autologin.tar.xz" "$k/images/rootfs/debian/trixie/arm64/full.rootfs.tar.xz"
ln -s "$NFS_FIX/arm64/initrd.cpio.gz" "$k/images/rootfs/debian/trixie/arm64/initrd.cpio.gz"
kselftest_tarball "$k/x/kselftest.tar.xz"
# the board's device tree: the one QEMU makes for the board's machine, with
# U-Boot as its firmware (which owns the GPIO controller: a tree without
# -bios names it and the kernel faults reading it)
qemu-system-aarch64 -M virt,dumpdtb="$k/x/board.dtb" -cpu cortex-a57 -m 512 -nodefaults \
	-bios /usr/lib/u-boot/qemu_arm64/u-boot.bin \
	-netdev user,id=net0 -device virtio-net-device,netdev=net0 >/dev/null 2>&1

# storage.example.org, LKFT's: its x86 kernel has NFS built in, Debian's
# stand-in needs the NFS initramfs, which the stand-in board's command set
# loads from the lab's TFTP directory (labd-nfs/), as the job brings none
l=$TMP/art/lkft
mkdir -p "$l" "$LAB/state/tftp/labd-nfs"
ln -s "$NFS_FIX/x86_64/bzImage" "$l/kernel"
ln -s "$NFS_FIX/x86_64/modules.tar.xz" "$l/modules"
ln -s "$NFS_FIX/x86_64/rootfs.tar.xz" "$l/rootfs"
ln -s "$k/x/board.dtb" "$l/dtb"
cp "$NFS_FIX/x86_64/initrd.cpio.gz" "$LAB/state/tftp/labd-nfs/"

linaro_testdefs "$TMP/git/linaro/test-definitions.git"
ln -s linaro "$TMP/git/Linaro"
git_daemon "$TMP/git"
linaro_git_mirror https://github.com/linaro/test-definitions.git \
		  https://github.com/Linaro/test-definitions.git
callback_recorder
cat >>"$LAB/labd.conf" <<CONF
git_allow = [ "https://github.com/linaro/", "https://github.com/Linaro/" ];
notify = { tokens = { kernelci-callback = "$CB_TOKEN"; }; retry_max_ms = 3000; };
CONF
# the boards the jobs name, stood in for by QEMU boards; LKFT's x86 has a
# SATA disk for scratch space (a virtio disk here, its storage_info)
nfsroot='root=/dev/nfs rw nfsroot={NFS_SERVER_IP}:{NFSROOTFS},tcp,hard,vers=3,nolock{NFS_MOUNT_OPTIONS}{EXTRA_NFSROOT_ARGS} ip=dhcp'
cat >"$LAB/devices/20-real-boards.conf" <<CONF
device_types = (
	{ name = "beaglebone-black"; extends = "qemu-arm64"; },
	{
		name = "x86";
		extends = "qemu-x86_64-ipxe";
		context_allowed = [ "extra_kernel_args", "test_character_delay" ];
		qemu = {
			args = [ "-accel", "tcg", "-m", "{MEMORY}", "-nodefaults", "-no-reboot",
				 "-machine", "graphics=off",
				 "-netdev", "user,id=net0,tftp={TFTP_ROOT}",
				 "-device", "virtio-net-pci,netdev=net0", "-boot", "n",
				 "-drive", "file={BOARD_DIR}/scratch.img,format=raw,if=virtio" ];
		};
		ipxe = {
			commands = {
				nfs = (
					"dhcp",
					"kernel tftp://{SERVER_IP}/{KERNEL} console={CONSOLE} panic=-1 no_timer_check $nfsroot {EXTRA_KERNEL_ARGS}",
					"initrd tftp://{SERVER_IP}/labd-nfs/initrd.cpio.gz",
					"boot"
				);
			};
		};
	}
);
devices = (
	{ name = "bbb-01"; type = "beaglebone-black"; console = { driver = "qemu"; };
	  power = { driver = "qemu"; }; },
	{ name = "x86-01"; type = "x86"; console = { driver = "qemu"; };
	  power = { driver = "qemu"; }; storage_info = { SATA = "/dev/vda"; }; }
);
CONF
mkdir -p "$LAB/state/boards/x86-01"
truncate -s 64M "$LAB/state/boards/x86-01/scratch.img"
labd_start
at_exit labd_stop

# The URLs: the kselftest tarball is fetched by the board (through QEMU's
# network, the host is 10.0.2.2), everything else by labd.
sed -e "s|'https://storage.kernelci.org/x/kselftest.tar.xz'|'$ART_GUEST_URL/kernelci/x/kselftest.tar.xz'|" \
    -e "s|https://storage.kernelci.org/|$ART_URL/kernelci/|g" \
    -e "s|https://kernelci.example.org/|http://127.0.0.1:$CB_PORT/|" \
	"$KCI_KSELFTEST" >"$TMP/kci-kselftest.yaml"

test_expect_success 'the KernelCI job differs from the real one in its URLs only' '
	diff "$KCI_KSELFTEST" "$TMP/kci-kselftest.yaml" >"$TMP/kci.diff" || true
	cat "$TMP/kci.diff"
	! grep "^[<>]" "$TMP/kci.diff" | grep -v "url: \|TESTPROG_URL: "
'

test_expect_success "KernelCI's kselftest job (beaglebone-black, u-boot, nfs) completes" '
	submit_follow "$TMP/kci-kselftest.yaml" 0 &&
	id=$(job_id) &&
	labctl results "$id" >"$TMP/kci.results" &&
	cat "$TMP/kci.results" &&
	grep -q "kselftest-acct.acct_acct_syscall .*pass" "$TMP/kci.results" &&
	grep -q "nfsroot: mounted 10.0.2.2:$LAB/nfs/" "$LAB/state/jobs/$id/console.log" &&
	grep -q "ok 1 acct(2) recorded a process" "$LAB/state/jobs/$id/console.log"
'

test_expect_success 'the board fetched the kselftest tarball, labd the rest' '
	grep -q "GET /kernelci/x/kselftest.tar.xz HTTP/1.1\" 200" "$TMP/artifacts.log" &&
	grep -q "GET /kernelci/images/rootfs/debian/trixie/arm64/full.rootfs.tar.xz" "$TMP/artifacts.log"
'

# labd's ktap suite (the kselftest runner's TAP, parsed from the console) is
# in the callback too: KernelCI sees it unnamed (doc/lava-compat.md).
test_expect_success 'the callback has what KernelCI reads: kselftest-acct passed' '
	wait_for "grep -q /node/6543abc $TMP/callbacks.jsonl" 20 &&
	$PY "$TOP/tests/ci/kernelci-callback.py" "$TMP/callbacks.jsonl" "/node/6543abc" \
		"$CB_TOKEN" ktap >"$TMP/kernelci.out" &&
	cat "$TMP/kernelci.out" &&
	grep -q "1_kselftest-acct: {\"acct_acct_syscall\": \"pass\"}" "$TMP/kernelci.out" &&
	grep -q "ktap: {.*\"selftests.acct.acct_syscall\": \"pass\"" "$TMP/kernelci.out"
'

sed -e "s|https://storage.example.org/lkft/|$ART_URL/lkft/|" \
	"$LKFT_SIGNALTEST" >"$TMP/lkft-signaltest.yaml"

test_expect_success "LKFT's signaltest job (x86, ipxe, nfs, modules at /) completes" '
	submit_follow "$TMP/lkft-signaltest.yaml" 0 &&
	id=$(job_id) && echo "$id" >"$TMP/lkft.id" &&
	labctl results "$id" >"$TMP/lkft.results" &&
	cat "$TMP/lkft.results" &&
	grep -q "job $id: complete" "$TMP/follow.out" &&
	grep -q "1_signaltest.t0-max-latency .*pass .* us" "$TMP/lkft.results" &&
	grep -q "1_signaltest.t1-avg-latency .*pass .* us" "$TMP/lkft.results" &&
	grep -q "1_signaltest.signaltest .*pass" "$TMP/lkft.results"
'

test_expect_success 'LKFT: the modules unpacked at /, its scratch disk found by lava-target-storage' '
	console=$LAB/state/jobs/$(cat "$TMP/lkft.id")/console.log &&
	grep -q "NFS root: unpacking the modules (.*) into /\$" "${console%/*}/labd.log" &&
	grep -q "^mounted" "$console" &&
	grep -q "^/dev/vda .* /scratch" "$console" &&
	grep -q "^/dev/vda on /scratch type ext4" "$console" &&
	grep -q "nfsroot: mounted 10.0.2.2:$LAB/nfs/" "$console"
'

test_done
